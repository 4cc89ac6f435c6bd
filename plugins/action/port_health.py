# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The verify role's port health check of one node (docs: plugins/modules/port_health.py): port_health_info on the
node, the judgement of ``plugin_utils/health.py``, the run-stamped fact ``infiniband_health``."""

from __future__ import annotations

from ansible_collections.fabric.infiniband.plugins.plugin_utils import health
from ansible_collections.fabric.infiniband.plugins.plugin_utils.role_step import RoleAction


def settings_of(action):
    """The verify_health_* settings: the role's (its argument specs), else the task's variables, else the defaults."""
    out = {}
    for name, default in health.SETTINGS.items():
        if name in action.settings:
            out[name] = action.settings[name]
        else:
            out[name] = action.var(name, default)
    return out


def judge_node(action, s):
    """port_health_info on the node of ``action`` (a RoleAction), judged; publishes and returns the fact
    infiniband_health (the verify action calls this too)."""
    read = action.module("port_health_info", dict(interval=float(s["verify_health_interval"]),
                                                  state_path=s["verify_health_state_path"]),
                         what="read the ports' health")
    judged = health.judge(read.get("ports"), s)
    fact = health.fact(action.run_id, judged)
    action.publish(infiniband_health=fact)
    return fact


class ActionModule(RoleAction):
    ROLE = "verify"

    def step(self):
        s = settings_of(self)
        self.refuse(health.check_settings(s))
        if not s["verify_health"] or self.preflight:
            return
        fact = judge_node(self, s)
        self.returns(passed=fact["passed"], rows=fact["rows"], failures=fact["failures"],
                     reasons=[f["reason"] for f in fact["failures"]])
