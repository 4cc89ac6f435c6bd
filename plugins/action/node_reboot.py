# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The node_reboot role's checks in one task (docs: plugins/modules/node_reboot.py): its unknown settings, the reboot
settings under the name the user set (the playbooks' infiniband_* or the role's own), and the batch controls set where
reboot.yml's play cannot see them. With ``pending: true`` (reboot.yml's first task) the same task also returns what the node
waits for (the current fact infiniband_pending, else the node's record read by ``pending_info``), so that the play groups
the waiting nodes without a task of its own for the read. The reboot itself stays the role's tasks (tasks/decide.yml,
tasks/act.yml): whether a node reboots is decided there, from what the node's record waits for.
"""

from __future__ import annotations

import re

from ansible_collections.fabric.infiniband.plugins.filter.reboot_settings import reboot_settings
from ansible_collections.fabric.infiniband.plugins.plugin_utils.role_step import RoleAction

# The playbooks' names of the reboot settings (their values reach the role through its defaults).
PLAYBOOK_NAMES = re.compile(r"^infiniband_(allow_reboot|allow_fw_reset|reboot_method|reboot_command|power_cycle_command|"
                            r"reboot_wait_delay|reboot_timeout|bmc_[a-z_]+|drain|k8s_node_name|drain_timeout|"
                            r"reboot_fail_on_tried|reboot_serial|reboot_max_fail_percentage)$")
# Play keywords of reboot.yml: set for a host, the play cannot see them.
PLAY_KEYWORDS = ("infiniband_reboot_serial", "infiniband_reboot_max_fail_percentage", "infiniband_reboot_hosts")
ROLE_NAMES = ("node_reboot_allow", "node_reboot_allow_fw_reset", "node_reboot_method", "node_reboot_command",
              "node_reboot_power_cycle_command", "node_reboot_wait_delay", "node_reboot_timeout",
              "node_reboot_bmc_validate_certs", "node_reboot_drain", "node_reboot_drain_timeout", "node_reboot_fail_on_tried")


class ActionModule(RoleAction):
    ROLE = "node_reboot"
    # reboot_settings judges every value under the name the user set (infiniband_allow_reboot, not node_reboot_allow)
    VALIDATE_SPECS = False
    OPTIONS = ("preflight", "pending")

    def step(self):
        settings = dict((name, self.var(name)) for name in sorted(self._vars) if isinstance(name, str) and PLAYBOOK_NAMES.match(name))
        settings.update((name, self.settings[name]) for name in ROLE_NAMES if name in self.settings)
        own = (self._vars.get("hostvars") or {}).get(self.host) or {}
        host_vars = {}
        for name in PLAY_KEYWORDS:
            try:
                if name in own:
                    host_vars[name] = self._templar.template(own[name])
            # a value that cannot be templated is judged as it is written
            except Exception:  # pylint: disable=broad-except
                host_vars[name] = own[name]
        problems = reboot_settings(settings, host_vars=host_vars)
        self.returns(problems=problems)
        if problems:
            self.refuse(["%s: %s" % (self.host, "; ".join(problems))], suffix=None)
        if self.preflight or not _truthy(self._task.args.get("pending", False)):
            return
        if not self.current("infiniband_pending"):
            # a read: the same in check mode
            self.module("pending_info", {"run_id": self.run_id}, what="read the node's pending-action record", check_mode=False)
        record = self.fact("infiniband_pending") or {}
        self.returns(next_action=record.get("next_action"), tried=list(record.get("tried") or []),
                     waiting=record.get("next_action") is not None or bool(record.get("tried")))


def _truthy(value):
    return value is True or str(value).strip().lower() in ("true", "yes", "on", "1")
