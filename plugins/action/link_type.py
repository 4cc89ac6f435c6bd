# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The link_type role's one step: plan, write LINK_TYPE_Pn, judge, record what waits (docs: plugins/modules/link_type.py).

Where a firmware write is decided: ``plugin_utils/link_type.py`` (the plan, and the judgement of what the firmware
tool answered); this file only runs the modules in that order.
"""

from __future__ import annotations

from ansible_collections.fabric.infiniband.plugins.plugin_utils import link_type, node_state
from ansible_collections.fabric.infiniband.plugins.plugin_utils.role_step import RoleAction

FW_RESET_TOOL = {"auto": "auto", "mlxconfig": "mlxfwreset", "mstconfig": "mstfwreset"}


class ActionModule(RoleAction):
    ROLE = "link_type"

    def _write(self, plan, tool):
        """One mlxconfig run per card the plan queries: writes where the firmware differs, reads otherwise."""
        results = []
        for item in plan:
            if not item["query"]:
                continue
            result = self.module("mlxconfig", dict(device=item["device"], params=item["params"], tool=tool,
                                                   allow_unsupported=item["source"] == "default"),
                                 what="LINK_TYPE of %s (%s)" % (item["device"], item["model"]))
            results.append(dict(result, item=item))
        return results

    def _record(self, status):
        """pending_action's arguments: the link types that wait for a reboot, or none any more."""
        stuck = ("Rebooting again will not help: check the card's firmware version and the mlxconfig query of the device, or "
                 "power the node off and on by hand.")
        return dict(name="link_type", state="present" if status["pending"] else "absent",
                    action="power_cycle" if status["power_cycle"] else "reboot", escalate_to="power_cycle",
                    reason=status["reason"], details=dict(devices=status["pending"]), run_id=self.run_id, stuck_msg=stuck)

    def step(self):
        s = self.settings
        default = None if s.get("link_type_default") == "keep" else s.get("link_type_default")
        # with the node's record (proved writable) when the adapters are read anyway: link_type records what waits for a
        # reboot, so a node where nothing could record it stops here, before the firmware is set
        hca = self.hca(pending=not self.current("infiniband_hca"), writable=True)
        plan = link_type.plan(hca, default, s.get("link_type_adapters") or [])
        self.returns(plan=plan)
        if self.preflight:
            return
        tool = s.get("link_type_tool", "auto")
        results = self._write(plan, tool)
        status = link_type.status(results, hca)
        if s.get("link_type_allow_fw_reset") and status["pending"]:
            # mlxfwreset loads the new firmware configuration without a reboot (the cards' ports go down)
            for device in status["pending"]:
                self.module("fw_reset", dict(device=device, tool=FW_RESET_TOOL[tool]), what="firmware reset of %s" % device)
            results = self._write(plan, tool)
            hca = self.module("hca_info", dict(run_id=self.run_id), what="read the adapters after the reset",
                              check_mode=False)["ansible_facts"]["infiniband_hca"]
            status = link_type.status(results, hca)
        self.publish(link_type_waiting=status["pending"])
        self.returns(status=status)
        entry = self.fact("infiniband_pending")
        if status["pending"] or node_state.may_hold(entry, "link_type", self.fact("infiniband_pending_stale", False), self.run_id):
            self.module("pending_action", self._record(status), what="record what waits for a reboot")
        if status["mismatches"]:
            self.refuse(["; ".join(status["mismatches"]) + ". The driver has not picked the firmware's link type up: reload "
                         "mlx5_core or reboot the node"], suffix=None)
        unsupported = status["unsupported"] + ["%s (%s)" % (item["device"], item["model"]) for item in plan if not item["query"]]
        if unsupported:
            self.returns(msg="No LINK_TYPE parameters (Ethernet-only): %s" % ", ".join(unsupported))
