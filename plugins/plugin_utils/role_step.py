# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""One controller step per role: the base of the roles' action plugins (``plugins/action/<role>.py``).

A role's work on the controller (its unknown and refused settings, whether a node fact is current for this run,
the plan, the facts it publishes) and the modules it runs on the node happen in one task, as ansible.builtin
``template`` renders and then calls ``copy``. Every task costs a worker fork and templating per host, skipped or
not; one task per role keeps a no-op near one module run per node.

A role's action is a subclass of :class:`RoleAction` that names its role (``ROLE``) and implements
:meth:`RoleAction.step`. Inside it:

- ``self.settings`` holds the role's options as the task sees them (templated; role defaults included), after the
  unknown-settings check of ``preflight_vars`` for the role;
- :meth:`RoleAction.fact` reads a node fact as this step sees it (the host's, updated by the modules the step ran);
- :meth:`RoleAction.current` says whether a fact may decide a change in this run (``node_state.is_current``);
- :meth:`RoleAction.hca` returns the fact ``infiniband_hca``, reading the node (``hca_info``) only when it is not
  current;
- :meth:`RoleAction.module` runs one module of the collection on the node, in the task's check and diff mode, and
  gathers its ``changed``, ``diff`` and facts into the task's result; a failure stops the step with the module's
  message, prefixed with what the step was doing;
- :meth:`RoleAction.refuse` stops the step with the problems found (a message that names the user's variables).

The task's option ``preflight: true`` asks for the checks alone: the step reads (never writes) and refuses what it
would refuse, so that ``playbooks/preflight.yml`` runs every role's own checks through the same code before any
change on any node. Where a role's check goes: its ``check()`` (pure, unit-tested) in ``plugin_utils/<role>.py``,
called from its action's ``step``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

import yaml

from ansible.errors import AnsibleError
from ansible.plugins.action import ActionBase
from ansible.template import trust_as_template

from ansible_collections.fabric.infiniband.plugins.action import preflight_vars
from ansible_collections.fabric.infiniband.plugins.plugin_utils import node_state

COLLECTION = "fabric.infiniband"
ROLES_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "roles")
_DEFAULTS = {}


# Taken as they are from another host's variables, never templated: the node's facts are data that modules returned (the
# templating engine leaves them as they are), and walking a bench node's 26 KB of facts through it costs 22 ms; done for
# every other host on every host (sriov's fleet GUIDs, firmware's unmatched rules), that made a fleet run quadratic: over
# 1 CPU-s per host and read at 50 hosts.
UNTEMPLATED = frozenset(("ansible_facts",))
# The fact of the readings the run's preflight keeps for a role's step later in the run (RoleAction.kept_read), and what of a
# module's answer it leaves out (Ansible's keys of a result, the module's facts: the preflight published them).
KEPT_READS = "infiniband_preflight_reads"
KEPT_DROP = frozenset(("ansible_facts", "invocation", "diff", "_ansible_no_log", "_ansible_parsed", "_ansible_verbose_override",
                       "warnings", "deprecations"))


def other_host_values(task_vars, templar, host, names):
    """Some variables of another host as this host's task sees them (hostvars), in one reading of its variables: the
    inventory's values templated in that host's context (as ``hostvars[host][name]``), ``ansible_facts`` as it is
    (UNTEMPLATED); missing or unreadable ones left out, and ``{}`` for a host the inventory does not have."""
    hostvars = task_vars.get("hostvars") or {}
    if host not in hostvars:
        return {}
    raw_get = getattr(hostvars, "raw_get", None)
    try:
        data = raw_get(host) if raw_get is not None else hostvars[host]
    except AnsibleError:
        return {}
    if not isinstance(data, Mapping):  # an undefined host
        return {}
    context = None
    out = {}
    for name in names:
        try:
            if name not in data:
                continue
            value = data[name]
            if raw_get is not None and name not in UNTEMPLATED:
                if context is None:
                    context = templar.copy_with_new_env(available_variables=data)
                value = context.template(value)
        except AnsibleError:
            continue
        out[name] = value
    return out


def role_defaults(role, roles_dir=ROLES_DIR):
    """The role's ``defaults/main.yml`` (read once per process), for a step run outside its role (the preflight play)."""
    key = (roles_dir, role)
    if key not in _DEFAULTS:
        path = os.path.join(roles_dir, role, "defaults", "main.yml")
        try:
            with open(path) as handle:
                _DEFAULTS[key] = yaml.load(handle, Loader=preflight_vars._Loader) or {}  # pylint: disable=protected-access
        except (IOError, OSError):
            _DEFAULTS[key] = {}
    return _DEFAULTS[key]


def warm(roles_dir=ROLES_DIR):
    """Read every role's argument specs and defaults into this process's caches. The callback fabric.infiniband.preload
    calls it in ansible-playbook before the workers fork, so that each worker inherits them instead of parsing the
    files again in every task (each role step checks the settings against every role's argument specs)."""
    for role in preflight_vars.role_options(roles_dir):
        role_defaults(role, roles_dir)


class StepFailed(Exception):
    """Stops a role's step; its message goes to the user as the task's ``msg``."""


def _diffs(value):
    if not value:
        return []
    return list(value) if isinstance(value, (list, tuple)) else [value]


def _truthy(value):
    if isinstance(value, bool):
        return value
    return str(value).strip().lower() in ("1", "true", "yes", "on", "y")


class RoleAction(ActionBase):
    """Base of a role's action plugin: one task does a role's controller work and runs its modules."""

    ROLE = None
    # Options of the action besides the role's settings (which it reads from the task's variables).
    OPTIONS = ("preflight",)
    # Judge the settings against the role's argument specs (entry point main) before the step; a step that names each
    # problem by the variable the user set (node_reboot: the playbooks' infiniband_* names) does it itself.
    VALIDATE_SPECS = True
    TRANSFERS_FILES = False

    @property
    def _VALID_ARGS(self):  # noqa: N802 - ActionBase's name
        return frozenset(self.OPTIONS)

    # --- the step, for a subclass --------------------------------------------------------------------------------

    def step(self):
        """The role's work; raise :class:`StepFailed` to stop with a message."""
        raise NotImplementedError

    # --- helpers -------------------------------------------------------------------------------------------------

    @property
    def preflight(self):
        """True when the task asks for the checks alone (nothing is written, modules run in check mode)."""
        return _truthy(self._task.args.get("preflight", False))

    @property
    def host(self):
        return self._vars.get("inventory_hostname")

    def arg(self, name, default=None):
        """An option of the task (templated by Ansible), ``default`` when not given."""
        value = self._task.args.get(name)
        return default if value is None else value

    def var(self, name, default=None):
        """A variable of the task (a role default, the inventory's value, another role's fact), templated."""
        if name not in self._vars:
            return default
        return self._templar.template(self._vars[name])

    def hostvar(self, host, name, default=None):
        """A variable of another host as this host's task sees it (hostvars; see :func:`other_host_values`); ``default``
        when unknown."""
        return other_host_values(self._vars, self._templar, host, (name,)).get(name, default)

    def hostvalues(self, host, names):
        """Some variables of another host, in one reading of its variables (see :func:`other_host_values`)."""
        return other_host_values(self._vars, self._templar, host, names)

    def fact(self, name, default=None):
        """The node fact ``name`` (without ``ansible_``) as this step sees it: the host's, or what a module of the step
        returned since."""
        if name in self._facts:
            return self._facts[name]
        return default

    def current(self, name):
        """Whether the fact ``name`` may decide a change in this run (read in this run, not marked stale since)."""
        return node_state.is_current(self.fact(name), bool(self.fact(name + "_stale", False)), run=self.run_id)

    def hca(self, pending=False, what="read the adapters", writable=False):
        """The fact infiniband_hca (and infiniband_pending with ``pending``), read from the node only when not current.

        ``writable`` (with ``pending``): the read also proves that the node's pending-action record can be written
        (hca_info's ``pending_writable``), so that a role that records what waits for a reboot stops before its first change
        where nothing could record it. A reading current for this run is not read again.

        In the run's preflight the record is always read with the adapters (proved writable where firmware or link_type
        asks): one read before any change serves every step of the run after it, each of which reads again only where a
        module has marked the fact stale since. A reading proved writable says so (``writable`` in the fact
        infiniband_pending), so that a step that asks for it does not read again."""
        if self.preflight:
            pending = True
        record = self.fact("infiniband_pending")
        proved = isinstance(record, Mapping) and record.get("writable") is True
        if (not self.current("infiniband_hca") or (pending and not self.current("infiniband_pending"))
                or (pending and writable and not proved)):
            args = {"run_id": self.run_id}
            if pending:
                args["pending"] = True
                if writable:
                    args["pending_writable"] = True
            # a read: the same in check mode
            self.module("hca_info", args, what=what, check_mode=False)
        return self.fact("infiniband_hca")

    def kept_read(self, key, match, read, what):
        """The answer of ``read()``, a module run that only reads, kept from the run's preflight where it can be.

        In the run's preflight the answer is kept in the fact infiniband_preflight_reads (stamped with the run, under the
        role's name and ``key``, with ``match``: the options it was read with). The role's own step later in the same run
        takes it instead of reading the node again, once, when ``match`` is the same; otherwise, and outside a preflight's
        run (the role alone), it reads. Only for a reading nothing but this role's step changes on the node in between
        (rdma_stack: the installed packages, its kernel modules' check-mode run)."""
        kept = self.fact(KEPT_READS)
        reads = dict(kept.get("reads") or {}) if isinstance(kept, Mapping) and kept.get("run_id") == self.run_id else {}
        name = "%s:%s" % (self.ROLE, key)
        match = plain(match)
        if not self.preflight:
            entry = reads.pop(name, None)
            if isinstance(entry, Mapping) and entry.get("match") == match and isinstance(entry.get("result"), Mapping):
                self.publish(**{KEPT_READS: dict(run_id=self.run_id, reads=reads)})
                self._ran.append(dict(module="(the preflight's reading)", label=what, changed=False, failed=False))
                return dict(entry["result"])
            return read()
        result = read()
        reads[name] = dict(match=match, result=plain(dict((k, v) for k, v in result.items() if k not in KEPT_DROP)))
        self.publish(**{KEPT_READS: dict(run_id=self.run_id, reads=reads)})
        return result

    def module(self, name, args, what=None, check_mode=None, label=None):
        """Run a module of the collection (or a FQCN) on the node with ``args``; its changed, diff and facts go into the
        task's result. ``check_mode=False`` runs a read-only module for real in check mode too. Returns its result; a
        failed module stops the step with ``what`` and its message."""
        fqcn = name if "." in name else "%s.%s" % (COLLECTION, name)
        saved = self._task.check_mode
        if check_mode is not None:
            self._task.check_mode = check_mode
        try:
            result = self._execute_module(module_name=fqcn, module_args=dict(args), task_vars=self._vars)
        finally:
            self._task.check_mode = saved
        self._ran.append(dict(module=fqcn, label=label or what or name, changed=bool(result.get("changed")),
                              failed=bool(result.get("failed"))))
        facts = result.get("ansible_facts") or {}
        self._facts.update(facts)
        self._out_facts.update(facts)
        if result.get("changed"):
            self._changed = True
        if self._task.diff:
            self._diff.extend(_diffs(result.get("diff")))
        for key in ("warnings", "deprecations"):
            self._notes[key].extend(result.get(key) or [])
        if result.get("failed") or result.get("unreachable"):
            message = result.get("msg") or "%s failed" % fqcn
            raise StepFailed("%s: %s" % (what, message) if what else message)
        return result

    def run_action(self, name, args, what, variables=None):
        """An action of Ansible's (``ansible.legacy.template``, ``ansible.legacy.package``) as a task of its own would run it:
        the task's check and diff mode, the role's templates/, ``variables`` added to the task's. Its changed and diff go into
        the task's result; a failure stops the step with ``what``."""
        task = self._task.copy()
        task.args = dict(args)
        action = self._shared_loader_obj.action_loader.get(
            name, task=task, connection=self._connection, play_context=self._play_context, loader=self._loader,
            templar=self._templar, shared_loader_obj=self._shared_loader_obj)
        result = action.run(task_vars=dict(self._vars, **(variables or {})))
        self._ran.append(dict(module=name.replace("ansible.legacy.", "ansible.builtin."), label=what,
                              changed=bool(result.get("changed")), failed=bool(result.get("failed"))))
        if result.get("failed") or result.get("unreachable"):
            raise StepFailed("%s: %s" % (what, result.get("msg") or "%s failed" % name))
        if result.get("changed"):
            self.changed()
            if self._task.diff and result.get("diff"):
                diff = result["diff"]
                self._diff.extend(diff if isinstance(diff, list) else [diff])
        return result

    def publish(self, **facts):
        """Facts for the host, as ``set_fact`` with ``cacheable: true`` (a fact cache keeps them)."""
        self._facts.update(facts)
        self._out_facts.update(facts)

    def changed(self, why=None):
        """Mark the task changed (work done on the controller's side, a file the step wrote)."""
        self._changed = True

    def warn(self, message):
        self._notes["warnings"].append(message)

    def refuse(self, problems, suffix="Nothing was changed."):
        """Stop the step with the problems (strings), when there are any."""
        problems = [p for p in problems if p]
        if problems:
            raise StepFailed(" ".join([("%s" % p).rstrip(".") + "." for p in problems] + ([suffix] if suffix else [])))

    def returns(self, **values):
        """Values of the task's result (for ``register`` and -v)."""
        self._returns.update(values)

    # --- the task -----------------------------------------------------------------------------------------------

    def _unknown(self):
        options = preflight_vars.role_options()
        allow = self._templar.template(self._vars.get(preflight_vars.ALLOW_VAR)) or []
        if isinstance(allow, str) or not isinstance(allow, (list, tuple)):
            allow = []
        unknown = preflight_vars.unknown_vars(self._vars, options, [self.ROLE], allow)
        if unknown:
            raise StepFailed(preflight_vars.message(unknown))
        return sorted(options.get(self.ROLE) or ())

    def run(self, tmp=None, task_vars=None):
        task_vars = task_vars or {}
        result = super(RoleAction, self).run(tmp, task_vars)
        self._vars = task_vars
        self._facts = dict(task_vars.get("ansible_facts") or {})
        self._out_facts = {}
        self._changed = False
        self._diff = []
        self._ran = []
        self._returns = {}
        self._notes = {"warnings": [], "deprecations": []}
        self.run_id = node_state.run_id()
        try:
            names = self._unknown()
            # outside the role (the preflight play runs every role's step) its defaults are not variables of the task
            defaults = role_defaults(self.ROLE)
            self.settings = {}
            # a default may refer to another (rdma_stack_doca_key_url to rdma_stack_doca_repo_url), as in the role
            templar = None
            for name in names:
                if name in task_vars:
                    self.settings[name] = self.var(name)
                elif name in defaults:
                    value = defaults[name]
                    if isinstance(value, str):
                        if templar is None:
                            templar = self._templar.copy_with_new_env(available_variables=dict(
                                dict((key, trust_as_template(val) if isinstance(val, str) else val) for key, val in defaults.items()),
                                **task_vars))
                        value = templar.template(trust_as_template(value))
                    self.settings[name] = value
            # the role's argument specs (entry point main), as Ansible's own validation would judge them: a playbook that
            # imports the role with rolespec_validate: false (nodes.yml) pays no task for it
            if self.VALIDATE_SPECS:
                self.refuse(preflight_vars.spec_problems(self.settings, preflight_vars.main_specs(), [self.ROLE]))
            self.step()
        except StepFailed as exc:
            result.update(failed=True, msg=str(exc))
        except AnsibleError as exc:
            # a plan's refusal (the roles' plan functions raise Ansible's errors with the variable's name)
            result.update(failed=True, msg=exc.message if hasattr(exc, "message") else str(exc))
        result["changed"] = self._changed
        result["ran"] = self._ran
        result.update(plain(self._returns))
        facts = plain(self._out_facts)
        if facts:
            # host facts, kept in a fact cache where one is configured (a module's facts are, too); what is only this
            # run's goes into the task's result, for the role's tasks after it (register)
            result["ansible_facts"] = facts
        if self._diff:
            result["diff"] = self._diff
        for key, values in self._notes.items():
            if values:
                result[key] = values
        return result


def plain(value):
    """``value`` with Ansible's data tags dropped (a templated value carries where it came from): a step's facts and results
    are data, and every tag is serialized with them, to the controller's main process and into a fact cache, and
    deserialized again on every read of a host's variables (at 10 hosts, 26 ms per read, most of the controller's time)."""
    if isinstance(value, Mapping):
        return {plain(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [plain(v) for v in value]
    if isinstance(value, bool):
        return bool(value)
    for native in (str, int, float):
        if isinstance(value, native):
            return native(value)
    return value


def mapping(value, name):
    """``value`` as a dict, or :class:`StepFailed` naming ``name``."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise StepFailed("%s must be a mapping, got %r" % (name, value))
    return dict(value)
