# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""What a role's cross-field checks on the controller see of the run: :class:`Context`.

The ipoib and k8s_network checks (``check(ctx)`` in ``plugin_utils/<role>.py``: values valid alone but wrong beside another
host's, sentences naming the user's variables) take one; their steps (plugins/action/<role>.py) build it, in the role's
task and, with ``preflight: true``, in the run's preflight. Every role's checks now run in its step: there is no list of
roles here any more.

:class:`Context` is what a check sees: the host's settings (the task's variables, else the role's defaults), the other
hosts' variables and facts (hostvars: the inventory, this run's facts, Ansible's fact cache), and the run's identity.
No node is contacted.
"""

from __future__ import annotations

from collections.abc import Mapping

from ansible.template import trust_as_template

from ansible_collections.fabric.infiniband.plugins.plugin_utils import node_state, role_step


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
        defaults = role_step.role_defaults(self.role)
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
        """A variable of another host as this task sees it (inventory, facts, set_fact), in that host's context; ``default``
        when unknown (role_step.other_host_values)."""
        return role_step.other_host_values(self._vars, self._templar, host, (name,)).get(name, default)

    def hostvalues(self, host, names):
        """Some variables of another host, in one reading of its variables (role_step.other_host_values)."""
        return role_step.other_host_values(self._vars, self._templar, host, names)

    def fact(self, host, name):
        """The fact ``name`` of ``host`` (this host's own included), None when it has none."""
        facts = self._vars.get("ansible_facts") if host == self.host else self.hostvar(host, "ansible_facts", {})
        facts = self._template(facts) if host == self.host else facts
        return facts.get(name) if isinstance(facts, Mapping) else None

    def current(self, fact):
        """Whether a node fact was read in this run (node_state)."""
        return node_state.is_current(fact, run=self.run_id)
