# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The cross-field checks of the roles that have no step of their own (ipoib, k8s_network), on the controller.

Each of those roles keeps its tasks; what it must refuse before any change and that its argument specifications cannot
say (a value valid alone but wrong beside another host's) is a pure function ``check(ctx)`` in
``plugin_utils/<role>.py``, which returns sentences naming the user's variables. Two callers, one code path:

- the role's first task, ``fabric.infiniband.preflight_vars`` with ``checks: [<role>]``;
- the run's preflight (playbooks/preflight.yml), which names the role in ``specs``: its checks run there too, on every
  host of the run, before any change on any node.

:class:`Context` is what a check sees: the host's settings (the task's variables, else the role's defaults), the other
hosts' variables and facts (hostvars: the inventory, this run's facts, Ansible's fact cache), and the run's identity.
No node is contacted.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

import yaml

from ansible.errors import AnsibleError
from ansible.template import trust_as_template

from ansible_collections.fabric.infiniband.plugins.plugin_utils import node_state

ROLES_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "roles")
NOTHING_CHANGED = "Nothing was changed."
_DEFAULTS = {}


def _role_defaults(role):
    if role not in _DEFAULTS:
        try:
            with open(os.path.join(ROLES_DIR, role, "defaults", "main.yml")) as handle:
                _DEFAULTS[role] = yaml.safe_load(handle) or {}
        except (IOError, OSError):
            _DEFAULTS[role] = {}
    return _DEFAULTS[role]


class Context:
    """What a role's controller check sees of the run (see the module's documentation)."""

    def __init__(self, role, task_vars, templar, run_id=None):
        self.role = role
        self._vars = task_vars or {}
        self._templar = templar
        self.host = self._vars.get("inventory_hostname")
        self.run_id = run_id or node_state.run_id()

    def _template(self, value):
        return self._templar.template(value) if self._templar is not None else value

    def var(self, name, default=None):
        """The host's setting ``name``: the task's variable, else the role's default (the preflight play loads no role)."""
        if name in self._vars:
            return self._template(self._vars[name])
        defaults = _role_defaults(self.role)
        if name not in defaults:
            return default
        value = defaults[name]
        if isinstance(value, str) and self._templar is not None:
            value = self._templar.template(trust_as_template(value))
        return value

    @property
    def groups(self):
        return self._template(self._vars.get("groups")) or {}

    @property
    def play_hosts(self):
        return list(self._template(self._vars.get("ansible_play_hosts")) or [self.host])

    def others(self):
        """Every other host of the inventory (whatever --limit or job slice this run has)."""
        return [h for h in self.groups.get("all") or [] if h != self.host]

    def hostvar(self, host, name, default=None):
        """A variable of another host as this task sees it (inventory, facts, set_fact), templated; ``default`` when unknown."""
        hostvars = self._vars.get("hostvars") or {}
        try:
            if host not in hostvars:
                return default
            values = hostvars[host]
            if name not in values:
                return default
            return self._template(values[name])
        except AnsibleError:
            return default

    def fact(self, host, name):
        """The fact ``name`` of ``host`` (this host's own included), None when it has none."""
        facts = self._vars.get("ansible_facts") if host == self.host else self.hostvar(host, "ansible_facts", {})
        facts = self._template(facts) if host == self.host else facts
        return facts.get(name) if isinstance(facts, Mapping) else None

    def current(self, fact):
        """Whether a node fact was read in this run (node_state)."""
        return node_state.is_current(fact, run=self.run_id)


def checks(role):
    """The check function of ``role``, or None when it has none here."""
    # imported here: each role's checks import what they need (netaddr for ipoib and k8s_network) only when run
    if role == "ipoib":
        from ansible_collections.fabric.infiniband.plugins.plugin_utils import ipoib  # pylint: disable=import-outside-toplevel
        return ipoib.check
    if role == "k8s_network":
        from ansible_collections.fabric.infiniband.plugins.plugin_utils import k8s_network  # pylint: disable=import-outside-toplevel
        return k8s_network.check
    return None


# k8s_network: its step (plugins/action/k8s_network.py) runs its checks, with preflight: true in the run's preflight
# opensm: its step (plugins/action/opensm.py) runs its checks, with preflight: true in the run's preflight
# ipoib: its step (plugins/action/ipoib.py) runs its checks, with preflight: true in the run's preflight
ROLES = ()


def run(roles, task_vars, templar):
    """``["<role>: <problems> Nothing was changed."]`` for each role of ``roles`` with controller checks that refuse."""
    out = []
    run_id = node_state.run_id()
    for role in roles:
        check = checks(role) if role in ROLES else None
        if check is None:
            continue
        problems = [p for p in check(Context(role, task_vars, templar, run_id)) if p]
        if problems:
            out.append("%s: %s %s" % (role, " ".join(("%s" % p).rstrip(".") + "." for p in problems), NOTHING_CHANGED))
    return out
