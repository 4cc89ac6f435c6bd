# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Refuse the role-prefixed variables that are no setting of this collection's roles.

Runs on the controller, per host, on the host's variables as the task sees them. The
decision is ``unknown_vars()``, a pure function (unit-tested); the roles' options are read
from the ``meta/argument_specs.yml`` of the roles beside this plugin in the collection.
Documentation: plugins/modules/preflight_vars.py.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Mapping

import yaml

from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from ansible.module_utils.parsing.convert_bool import boolean
from ansible.plugins.action import ActionBase
from ansible.plugins.loader import action_loader
from ansible.template import trust_as_template

from ansible_collections.fabric.infiniband.plugins.action import run_lock
from ansible_collections.fabric.infiniband.plugins.plugin_utils import node_python, node_state, run_roles

try:
    _Loader = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - PyYAML without libyaml
    _Loader = yaml.SafeLoader

ROLES_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "roles")

# Facts the roles publish (set_fact): role-prefixed, not options, and legitimately present on a host (also
# from a fact cache). tests/unit/plugins/action/test_preflight_vars.py fails when a role sets another one.
# A role's step (plugins/action/<role>.py) publishes host facts, let through as facts (ansible_facts); this lists only
# what the roles without a step publish with set_fact.
PUBLISHED = {
    "gpudirect": ("gpudirect_report",),
    "ipoib": ("ipoib_interfaces",),
    "sriov": ("sriov_vf_guids", "sriov_state"),
}
# The inventory variable that lists more names to let through (a user's own verify_ssl, say).
ALLOW_VAR = "infiniband_preflight_allow"
# A registered task result is a mapping with one of these keys; it is a result, not a setting.
_RESULT_KEYS = ("changed", "failed", "skipped", "results", "unreachable")


_SPECS = {}


def _argument_specs(roles_dir=ROLES_DIR):
    """``{role: its argument_specs (entry point to spec)}`` for every role of the collection (read once per process)."""
    if roles_dir in _SPECS:
        return _SPECS[roles_dir]
    out = {}
    for role in sorted(os.listdir(roles_dir)):
        path = os.path.join(roles_dir, role, "meta", "argument_specs.yml")
        if role.startswith(("_", ".")) or not os.path.isfile(path):
            continue
        with open(path) as handle:
            out[role] = (yaml.load(handle, Loader=_Loader) or {}).get("argument_specs") or {}
    _SPECS[roles_dir] = out
    return out


def role_options(roles_dir=ROLES_DIR):
    """``{role: set of its options}`` for every role of the collection (every entry point's options)."""
    out = {}
    for role, specs in _argument_specs(roles_dir).items():
        names = set()
        for entry in specs.values():
            names.update((entry or {}).get("options") or {})
        out[role] = names
    return out


def main_specs(roles_dir=ROLES_DIR):
    """``{role: options of its entry point main}`` for every role of the collection."""
    return dict((role, ((specs.get("main") or {}).get("options")) or {}) for role, specs in _argument_specs(roles_dir).items())


def spec_problems(values, specs, roles):
    """``["<role>: <problem>"]`` for the values that the entry point ``main`` of each role in ``roles`` refuses, as
    the role's own argument validation would refuse them when it runs; options not set keep their defaults."""
    problems = []
    for role in roles:
        options = specs.get(role) or {}
        given = dict((name, values[name]) for name in options if name in values)
        # options that must be given are the role's own business when it runs; here only what is set is judged
        spec = dict((name, dict((k, v) for k, v in option.items() if k != "required")) for name, option in options.items())
        result = ArgumentSpecValidator(spec).validate(given)
        hints = _string_hints(given, spec, result.error_messages)
        # with a hint, Ansible's messages that name no option ("dictionary requested, could not parse JSON or key=value") go
        problems.extend("%s: %s" % (role, message) for message in result.error_messages
                        if not hints or any(name in message for name in given))
        problems.extend("%s: %s" % (role, hint) for hint in hints)
    return problems


# The playbooks' settings of the run lock (nodes.yml and reboot.yml take it): judged here too, so that a bad one stops the run
# in its preflight, not at the lock task after the preflight passed.
RUN_LOCK_SETTINGS = ("infiniband_run_lock_max_age", "infiniband_break_lock")


def run_lock_problems(values):
    """``["run lock: <problem>"]`` for the run lock's settings in ``values``, named as the user set them."""
    problems = []
    if values.get("infiniband_run_lock_max_age") is not None:
        problem = run_lock.max_age_problem(values["infiniband_run_lock_max_age"], {"max_age": "infiniband_run_lock_max_age"})
        if problem:
            problems.append("run lock: %s" % problem)
    if values.get("infiniband_break_lock") is not None:
        try:
            boolean(values["infiniband_break_lock"], strict=True)
        except TypeError:
            problems.append("run lock: infiniband_break_lock must be true or false (true takes the lock a run left behind, "
                            "after you checked that no other run is going), got %r" % (values["infiniband_break_lock"],))
    return problems


def _string_hints(given, spec, messages):
    """What to do where a text was given for a list or a dict option that was refused: ``-e name=value`` (and an AWX
    extra variable typed as text) always gives a string, which Ansible cannot read as key=value or JSON."""
    hints = []
    for name in sorted(given):
        wanted = (spec.get(name) or {}).get("type")
        if wanted not in ("list", "dict") or not isinstance(given[name], str):
            continue
        if not any(name in message for message in messages):
            continue
        hints.append("%s: %r is a string, and a %s is expected. `-e %s=...` always gives a string: pass it as JSON or YAML, "
                     "-e '{\"%s\": %s}' or -e @vars.yml" % (name, given[name][:60], wanted, name, name,
                                                            "[...]" if wanted == "list" else "{...}"))
    return hints


def role_names(value, option, known):
    """The role names of the option ``roles`` or ``specs``: a list of names (or one name, or names joined by commas, as
    Ansible's list options take them); ``ValueError`` with a message that names the option and the roles otherwise."""
    accepted = "accepted: a list of roles of fabric.infiniband by short name (%s)" % ", ".join(sorted(known))
    if isinstance(value, str):
        value = value.split(",")
    if not isinstance(value, (list, tuple)):
        kind = ("mapping" if isinstance(value, Mapping) else "boolean" if isinstance(value, bool)
                else "number" if isinstance(value, (int, float)) else type(value).__name__)
        raise ValueError("%s: %r is not accepted (a %s); %s" % (option, value, kind, accepted))
    names = []
    for index, item in enumerate(value):
        if not isinstance(item, str) or not item.strip():
            raise ValueError("%s[%d]: %r is not a role name; %s" % (option, index, item, accepted))
        names.append(item.strip())
    strange = [name for name in names if name not in known]
    if strange:
        hints = []
        for name in strange:
            close = name.rsplit(".", 1)[-1] if name.startswith("fabric.infiniband.") else None
            close = close if close in known else (difflib.get_close_matches(name, sorted(known), n=1, cutoff=0.6) or [None])[0]
            hints.append("%s (did you mean %s?)" % (name, close) if close else name)
        raise ValueError("%s: %s %s no role of fabric.infiniband; %s" % (
            option, ", ".join(hints), "is" if len(strange) == 1 else "are", accepted))
    return names


def _role_of(name, roles):
    """The role whose prefix ``<role>_`` starts ``name`` (the longest, should one prefix another)."""
    found = [role for role in roles if name.startswith(role + "_")]
    return max(found, key=len) if found else None


def _is_result(value):
    return isinstance(value, Mapping) and any(key in value for key in _RESULT_KEYS)


def unknown_vars(variables, options, roles=None, allow=()):
    """``[{name, role, did_you_mean}]`` for every variable named ``<role>_*`` (for a role in ``roles``, default all)
    that is neither an option of that role, nor a fact a role publishes, nor in ``allow``, nor a registered result;
    and for every ``infiniband_*`` variable that is none of the collection's own names (plugin_utils/playbook_vars.py:
    the playbooks' settings, read by node_reboot and the playbooks, whatever ``roles`` says), with the closest one."""
    from ansible_collections.fabric.infiniband.plugins.plugin_utils import playbook_vars  # pylint: disable=import-outside-toplevel

    roles = sorted(options) if roles is None else roles
    known = set(allow)
    # a host fact is no setting: what a role's step or a module published (as a fact cache keeps it)
    facts = variables.get("ansible_facts")
    if isinstance(facts, Mapping):
        known.update(name for name in facts if isinstance(name, str))
    for role, names in options.items():
        known.update(names)
        known.update(PUBLISHED.get(role, ()))
    known.update(playbook_vars.KNOWN)
    out = []
    for name in sorted(variables):
        if not isinstance(name, str) or name.startswith("_") or name in known:
            continue
        if name.startswith(playbook_vars.PREFIX):
            if not _is_result(variables[name]):
                close = difflib.get_close_matches(name, playbook_vars.SETTINGS, n=1, cutoff=0.75)
                # node_reboot reads the playbooks' infiniband_* settings (its defaults); its documentation lists them
                out.append({"name": name, "role": "node_reboot", "did_you_mean": close[0] if close else None})
            continue
        role = _role_of(name, options)
        if role is None or role not in roles or _is_result(variables[name]):
            continue
        # the closest option of the same role, else of any role (sriov_pf -> sriov_pfs)
        close = (difflib.get_close_matches(name, sorted(options[role]), n=1, cutoff=0.75)
                 or difflib.get_close_matches(name, sorted(set().union(*options.values())), n=1, cutoff=0.75))
        out.append({"name": name, "role": role, "did_you_mean": close[0] if close else None})
    return out


def message(unknown):
    """The failure message for ``unknown_vars()``'s answer."""
    def named(item):
        hint = " (did you mean %s?)" % item["did_you_mean"] if item["did_you_mean"] else ""
        return "%s%s" % (item["name"], hint)

    playbook = [item for item in unknown if item["name"].startswith("infiniband_")]
    roles_unknown = [item for item in unknown if not item["name"].startswith("infiniband_")]
    parts = []
    if roles_unknown:
        roles = sorted(set(item["role"] for item in roles_unknown))
        one = len(roles_unknown) == 1
        parts.append("unknown setting%s %s: %s no option of the role%s %s, whose default would apply instead (the options: "
                     "ansible-doc -t role fabric.infiniband.%s)" % (
                         "" if one else "s", "; ".join(named(item) for item in roles_unknown), "it is" if one else "they are",
                         "" if len(roles) == 1 else "s", ", ".join(roles), roles[0] if len(roles) == 1 else "<role>"))
    if playbook:
        one = len(playbook) == 1
        parts.append("unknown setting%s %s: %s no setting of the collection's playbooks, whose default would apply instead "
                     "(the settings: docs/docsite/rst/variables.rst)" % (
                         "" if one else "s", "; ".join(named(item) for item in playbook), "it is" if one else "they are"))
    one = len(unknown) == 1
    return ("%s. Rename %s in the inventory, group_vars, host_vars or -e, or list %s in %s if %s not meant for this collection. "
            "Nothing was changed." % ("; ".join(parts), "it" if one else "them", "it" if one else "them", ALLOW_VAR,
                                      "it is" if one else "they are"))


class ActionModule(ActionBase):

    TRANSFERS_FILES = False
    _VALID_ARGS = frozenset(("roles", "specs", "checks", "run"))

    def _checks(self, roles, task_vars, result):
        """Run each role's own step (plugins/action/<role>.py) in preflight mode: its checks, reads only. Returns the
        problems, one per role that refused; the facts its reads published go into ``result``."""
        problems = []
        if not roles:
            return problems
        # The node's Python first, without Python (a raw command): a Python the modules cannot run on fails every module with
        # a syntax error that names nothing the user can act on.
        interpreter = self._templar.template(task_vars.get("ansible_python_interpreter")) or "python3"
        interpreter = "python3" if str(interpreter).startswith("auto") else str(interpreter)
        probe = self._low_level_execute_command(node_python.probe(interpreter), sudoable=True)
        problem = node_python.python_problem(probe.get("stdout", ""), interpreter, host=task_vars.get("inventory_hostname"))
        if problem:
            return [problem]
        facts = dict(task_vars.get("ansible_facts") or {})
        for role in roles:
            task = self._task.copy()
            task.args = {"preflight": True}
            action = action_loader.get("fabric.infiniband.%s" % role, task=task, connection=self._connection,
                                       play_context=self._play_context, loader=self._loader, templar=self._templar,
                                       shared_loader_obj=self._shared_loader_obj)
            if action is None:
                continue  # a role without a step of its own: its argument specs (specs) are its checks
            step_vars = dict(task_vars, ansible_facts=facts)
            answer = action.run(task_vars=step_vars)
            facts.update(answer.get("ansible_facts") or {})
            result.setdefault("ansible_facts", {}).update(answer.get("ansible_facts") or {})
            result.setdefault("checked", []).append(role)
            if answer.get("failed"):
                problems.append("%s: %s" % (role, answer.get("msg")))
        return problems

    def run(self, tmp=None, task_vars=None):
        task_vars = task_vars or {}
        result = super(ActionModule, self).run(tmp, task_vars)
        options = role_options()
        # The options are checked here rather than by Ansible's argument validation, whose messages name its own types
        # (_AnsibleTaggedDict) and refuse null for a list that has a default. null means the default: every role for
        # roles, none for specs (what a playbook's expression may give for a host in no group).
        args = self._task.args
        try:
            roles = None if args.get("roles") is None else role_names(args["roles"], "roles", options)
            spec_roles = [] if args.get("specs") is None else role_names(args["specs"], "specs", options)
            check_roles = [] if args.get("checks") is None else role_names(args["checks"], "checks", options)
            run = boolean(args.get("run") or False, strict=True)
        except (TypeError, ValueError) as exc:
            result.update(failed=True, changed=False, msg="%s. Nothing was checked or changed." % exc)
            return result
        if run:
            # the roles the run's plays run on this host (plugin_utils/run_roles.py), in the order they run: their specs and checks
            here = [role for role in run_roles.run_roles(task_vars.get("inventory_hostname"), task_vars.get("groups") or {},
                                                         template=lambda text: self._templar.template(trust_as_template(text)))
                    if role in options]
            spec_roles = here + [role for role in spec_roles if role not in here]
            check_roles = here + [role for role in check_roles if role not in here]
        allow = self._templar.template(task_vars.get(ALLOW_VAR)) or []
        if isinstance(allow, str) or not isinstance(allow, (list, tuple)) or not all(isinstance(n, str) for n in allow):
            result.update(failed=True, msg="%s must be a list of variable names, got %r" % (ALLOW_VAR, allow))
            return result
        unknown = unknown_vars(task_vars, options, roles, allow)
        result.update(changed=False, unknown=unknown, roles=sorted(options) if roles is None else sorted(roles))
        if unknown:
            result.update(failed=True, msg=message(unknown))
            return result
        # Once per run: site.yml imports the preflight twice (nodes.yml, fabric_cluster.yml); the second asks no more
        # than the first checked on this host in this run (the fact infiniband_preflight, stamped with the run).
        done = (task_vars.get("ansible_facts") or {}).get("infiniband_preflight")
        if (isinstance(done, Mapping) and done.get("run_id") == node_state.run_id() and roles is None
                and set(spec_roles) <= set(done.get("specs") or ()) and set(check_roles) <= set(done.get("checks") or ())):
            result.update(problems=[], msg="checked earlier in this run: %s" % ", ".join(done.get("checks") or done.get("specs") or ()))
            return result
        specs = main_specs()
        values = dict((name, self._templar.template(task_vars[name])) for role in spec_roles
                      for name in specs.get(role, {}) if name in task_vars)
        problems = spec_problems(values, specs, spec_roles)
        if spec_roles or check_roles:
            problems.extend(run_lock_problems(dict((name, self._templar.template(task_vars[name]))
                                                   for name in RUN_LOCK_SETTINGS if name in task_vars)))
        if not problems:
            # a role whose values its specs refuse is not planned from them
            problems = self._checks([role for role in check_roles if role in spec_roles or not spec_roles], task_vars, result)
        result["problems"] = problems
        if problems:
            result.update(failed=True, msg="Refused before any change on any node: %s" % "; ".join(problems))
        elif roles is None and (spec_roles or check_roles):
            result.setdefault("ansible_facts", {})["infiniband_preflight"] = {
                "run_id": node_state.run_id(), "specs": sorted(spec_roles), "checks": sorted(check_roles)}
        return result
