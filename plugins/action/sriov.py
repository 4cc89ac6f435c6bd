# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The sriov role's one step: plan, checks, firmware, record, VFs, boot unit (docs: plugins/modules/sriov.py).

Where a write is decided: ``plugin_utils/sriov.py`` (the plan, the GUID checks, the judgement of what the firmware tool
answered); this file reads the other hosts' GUIDs and runs the modules in that order.
"""

from __future__ import annotations

import os

from ansible.module_utils.parsing.convert_bool import boolean
from ansible.plugins.filter.core import to_nice_json

from ansible_collections.fabric.infiniband.plugins.plugin_utils import node_state
from ansible_collections.fabric.infiniband.plugins.plugin_utils import sriov
from ansible_collections.fabric.infiniband.plugins.plugin_utils.role_step import RoleAction, StepFailed

FILES = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "roles", "sriov", "files")
UNIT = "fabric-infiniband-sriov.service"
BOOT_JSON = "/etc/fabric-infiniband/sriov.json"
APPLY = "/usr/local/libexec/fabric-infiniband/sriov-apply"


def _file(name):
    with open(os.path.join(FILES, name)) as handle:
        return handle.read()


def _bool(value, default=False):
    return default if value is None else boolean(value, strict=False)


class ActionModule(RoleAction):
    ROLE = "sriov"
    OPTIONS = ("preflight", "firmware_only")

    # --- the other hosts ------------------------------------------------------------------------------------------

    def _values(self, host, names):
        """Some variables of another host (one reading of its hostvars), templated; missing ones left out."""
        return self.hostvalues(host, names)

    def _run_settings(self):
        """The GUID settings that this run's extra vars (-e, AWX's extra vars) set: for a host outside the play they are
        this run's values, not its own. Read as ansible-playbook read them; none when that cannot be told."""
        try:
            from ansible.parsing.dataloader import DataLoader  # pylint: disable=import-outside-toplevel
            from ansible.utils import vars as ansible_vars  # pylint: disable=import-outside-toplevel

            extra = getattr(ansible_vars.load_extra_vars, "extra_vars", None) or ansible_vars.load_extra_vars(DataLoader())
        except Exception:  # pylint: disable=broad-except
            return ()
        return tuple(name for name in sriov.GUID_SETTINGS if name in (extra or {}))

    def _fleet(self):
        """Before any write: what is known of the VF GUIDs of every other host of the inventory, whatever --limit or job
        slice this run has. A host is planned from its settings (hostvars), with its reading of the adapters where its
        GUIDs need one (this run's, an earlier play's, or a fact cache's); what it published (sriov_vf_guids) counts too;
        a host neither gives is named as not seen (plugin_utils/sriov.py: fleet)."""
        play = set(self.var("ansible_play_hosts") or [])
        from_run = self._run_settings()
        others = {}
        for host in (self.var("groups") or {}).get("all") or []:
            if host == self.host or host in others:
                continue
            values = self._values(host, ("ansible_facts", "sriov_vf_guids") + tuple(sriov.GUID_SETTINGS))
            facts = values.get("ansible_facts") or {}
            hca = facts.get("infiniband_hca")
            published = values.get("sriov_vf_guids")
            others[host] = dict(
                settings=dict((k, values[k]) for k in sriov.GUID_SETTINGS if k in values),
                hca=hca if isinstance(hca, dict) else None,
                current=node_state.is_current(hca, bool(facts.get("infiniband_hca_stale")), run=self.run_id),
                published=list(published) if isinstance(published, (list, tuple)) else None,
                from_run=() if host in play else from_run)
        return sriov.fleet(others, play=play, preflight=self.preflight)

    # --- the node --------------------------------------------------------------------------------------------------

    def _firmware(self, plan, tool):
        """SRIOV_EN and NUM_OF_VFS of each card that needs them; the record of what waits for a reboot."""
        results = []
        for card in plan["cards"]:
            result = self.module("mlxconfig", dict(device=card["device"], params=card["params"], tool=tool),
                                 what="SR-IOV of %s (%s) NUM_OF_VFS=%s" % (card["device"], card["model"], card["params"]["NUM_OF_VFS"]))
            results.append(dict(result, item=card))
        status = sriov.firmware_status(results)
        entry = self.fact("infiniband_pending")
        if status["waiting"] or sriov.may_hold(entry, "sriov", bool(self.fact("infiniband_pending_stale", False)), self.run_id):
            self.module("pending_action", dict(
                name="sriov", state="present" if status["waiting"] else "absent",
                action="power_cycle" if status["power_cycle"] else "reboot", escalate_to="power_cycle",
                reason=status["reason"], details=dict(devices=status["waiting"]), stuck_msg=status["stuck_msg"],
                run_id=self.run_id), what="record what waits for a reboot")
        return status

    def _vfs(self, plan, s):
        """The VFs of each PF whose firmware allows them now, and the unit that makes them again at every boot (never started
        here), or its removal: the unit goes with the last PF's run (one module run on a node with one PF), alone when no PF
        gets its VFs now."""
        persisted = _bool(s.get("sriov_persist"), True) and len(plan["pfs"]) > 0
        # state absent removes the unit and the files by their paths
        unit = dict(name=UNIT, state="present" if persisted else "absent", unit=_file(UNIT), files=[
            dict(path=BOOT_JSON, content=to_nice_json(plan["boot"], sort_keys=True) + "\n", mode="0644"),
            dict(path=APPLY, content=_file("sriov-apply"), mode="0644")])
        ready = [pf for pf in plan["pfs"] if pf["ready_now"]]
        for index, pf in enumerate(ready):
            args = dict(pf=pf["pf"], num_vfs=pf["num_vfs"], link_state=pf["link_state"], vfs=pf["vfs"],
                        allow_recreate=_bool(s.get("sriov_allow_vf_recreate")), rebind=_bool(s.get("sriov_rebind"), True))
            what = "VFs of %s (%d)" % (pf["pf"], pf["num_vfs"])
            if index == len(ready) - 1:
                args["boot_unit"] = unit
                what += " and the boot-time unit %s" % UNIT
            self.module("sriov_vfs", args, what=what)
        if not ready:
            self.module("boot_unit", unit, what="the boot-time unit %s" % UNIT)

    # --- the step --------------------------------------------------------------------------------------------------

    def step(self):
        s = self.settings
        pfs = s.get("sriov_pfs") or []
        if pfs:
            # with the node's record along when the adapters are read anyway (one module run): whether an entry of the
            # role may be there is then known
            hca = self.hca(pending=not self.current("infiniband_hca"))
        else:
            hca = {"hcas": []}  # a host with no PF listed needs no reading (the plan still checks the other settings)
        plan = sriov.plan(hca, pfs, host_name=self.host, guid_mode=s.get("sriov_guid_mode", "scheme"),
                          guid_prefix=s.get("sriov_guid_prefix", "0x02fa"), host_id=s.get("sriov_guid_host_id"),
                          link_state=s.get("sriov_link_state", "auto"), firmware_num_vfs=s.get("sriov_firmware_num_vfs", 0),
                          allow_vf_recreate=_bool(s.get("sriov_allow_vf_recreate")))
        self.returns(plan=plan)
        # Before anything is written: a VF that shows a GUID other than the plan's (read on the node, in this run's
        # infiniband_hca) would be unbound and bound again with the new one; this host's GUIDs against every other host
        # of the inventory. A host id of the scheme shared by two hosts (or a listed GUID inside another host's scheme) and
        # a GUID used twice are refused whatever consent is given; a GUID change needs the consent and a fleet that can be
        # seen whole.
        changes = []
        if pfs:
            changes = sriov.guid_changes(plan, hca, host_name=self.host, pfs=pfs, guid_prefix=s.get("sriov_guid_prefix", "0x02fa"),
                                         host_id=s.get("sriov_guid_host_id"), names=(self.var("groups") or {}).get("all"))
        if plan["guids"]:
            view = self._fleet()
            self.returns(fleet_unseen=sorted(view["unseen"]))
            clash = sriov.space_collisions(self.host, plan, pfs, s, view["space"])
            if clash:
                raise StepFailed(sriov.space_message(self.host, clash))
            planned = dict(view["planned"], **{self.host: plan["guids"]})
            dupes = sriov.duplicate_guids(planned, known=view["known"], hca=dict(view["hca"], **{self.host: hca}), host=self.host)
            if dupes:
                raise StepFailed(sriov.duplicate_message(dupes, sriov.guid_sources(plan, pfs)))
            allowed = _bool(s.get("sriov_allow_guid_change"))
            if changes and (view["unseen"] or not allowed):
                raise StepFailed(sriov.guid_change_message(self.host, changes, unseen=view["unseen"], allowed=allowed))
        # what other roles and plays read (OpenSM's partitions, the cluster play, the check above on the other hosts);
        # published in the preflight too, so that the hosts' later steps of the run check against this run's plans
        self.publish(sriov_vf_guids=plan["guids"], sriov_state=plan["pfs"])
        if self.preflight:
            return
        waiting = []
        if _bool(s.get("sriov_firmware"), True) and (plan["cards"] or sriov.may_hold(
                self.fact("infiniband_pending"), "sriov", bool(self.fact("infiniband_pending_stale", False)), self.run_id)):
            status = self._firmware(plan, s.get("sriov_tool") or "auto")
            waiting = status["cards"]
            self.returns(firmware=status)
        if _bool(self.arg("firmware_only")):
            return
        # A PF gets its VFs now when its card's firmware allows them; otherwise at the next boot, from the unit, once the
        # firmware change recorded above is live.
        short = sriov.short_pfs(plan, waiting)
        if short:
            raise StepFailed(sriov.short_message(short))
        self._vfs(plan, s)
