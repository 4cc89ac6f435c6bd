# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""A role's step (plugin_utils/role_step.RoleAction) made without Ansible's task machinery, for the unit tests that run a
step with the node replaced: the state RoleAction.run sets before it calls ``step()``, with a task that has only
``preflight``, check mode and diff, and a templar that returns what it is given."""

from __future__ import annotations

RUN = "ctl:1:1"


class Task:
    def __init__(self, preflight=False, check_mode=False):
        self.args = {"preflight": preflight}
        self.check_mode = check_mode
        self.diff = False


class Templar:
    @staticmethod
    def template(value):
        return value


def bare_step(cls, variables, facts=None, preflight=False, check_mode=False, run_id=RUN):
    """An instance of the RoleAction subclass ``cls`` with the task's ``variables``, the host's ``facts`` and nothing run
    yet; a test sets ``settings`` and replaces what reaches the node (``module``, ``_execute_module``)."""
    action = cls.__new__(cls)
    action._task = Task(preflight, check_mode)
    action._templar = Templar()
    action._vars = dict(variables)
    action._facts = dict(facts or {})
    action._out_facts, action._returns, action._ran, action._diff = {}, {}, [], []
    action._notes = {"warnings": [], "deprecations": []}
    action._changed = False
    action.run_id = run_id
    return action
