# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The gpudirect role's one step: read the node, load nvidia_peermem, clear ACS redirect, iommu=pt, the readiness report
(docs: plugins/modules/gpudirect.py).

Where a change is decided and how the report reads: ``plugin_utils/gpudirect.py``; this file runs the modules in that order.
One gpudirect_info run reads the topology and the role's own files (the boot file of nvidia_peermem, the boot-time unit, its
list and program, the GRUB drop-in, setpci, the pending record): a file is written or removed only where it differs from what
the role wants, so a run that changes nothing runs gpudirect_info alone (pending_action too, while iommu=pt waits for its
reboot).
"""

from __future__ import annotations

from ansible.template import trust_as_template
try:
    from ansible.plugins.action import VariableLayer
except ImportError:  # ansible-core before 2.21: the fact alone
    VariableLayer = None
from ansible.utils.display import Display

from ansible_collections.fabric.infiniband.plugins.plugin_utils import gpudirect as gd
from ansible_collections.fabric.infiniband.plugins.plugin_utils import node_state
from ansible_collections.fabric.infiniband.plugins.plugin_utils.role_step import RoleAction

display = Display()


class ActionModule(RoleAction):
    ROLE = gd.ROLE

    def _file(self, name):
        """A file of the role's files/, as it is."""
        with open(self._find_needle("files", name)) as handle:
            return handle.read()

    def _render(self, name, variables):
        """A template of the role's templates/, rendered as the template lookup renders it (ansible_managed included)."""
        templar = self._templar.copy_with_new_env(available_variables=dict(self._vars, **variables))
        return templar.template(trust_as_template("{{ lookup('ansible.builtin.template', '%s') }}" % name))

    def _command(self, argv, what):
        """A command that changes the node; in check mode only announced."""
        self.changed()
        if self._task.check_mode:
            return
        self.module("ansible.builtin.command", dict(argv=argv), what=what)

    # --- the parts of the step -----------------------------------------------------------------------------------

    def _read(self):
        """The node's GPUDirect topology and state, and the role's own files (one gpudirect_info run)."""
        info = self.module("gpudirect_info", dict(files=list(gd.FILES)), what="read the GPUs, HCAs, PCIe paths, ACS and IOMMU",
                           check_mode=False)
        return info, info.get("files") or {}

    def _pciutils(self, files):
        """pciutils (setpci), installed when setpci is missing."""
        if not gd.setpci_installed(files):
            self.run_action("ansible.legacy.package", dict(name=[gd.PACKAGE], state="present"), "install pciutils, for setpci")

    def _peermem(self, plan, files):
        """nvidia_peermem now (only when it is the path and not loaded) and at every boot; never unloaded. The files are written
        or removed only where they differ from what the role wants (the read says)."""
        if plan["peermem_load"]:
            self._command(["modprobe", "nvidia_peermem"], "load nvidia_peermem")
        if plan["peermem_boot"]:
            if gd.current(files, gd.MODULES_LOAD_PATH, self._render("modules-load.conf.j2", {}), "0644"):
                return False
            self.run_action("ansible.legacy.template", dict(src="modules-load.conf.j2", dest=gd.MODULES_LOAD_PATH, owner="root",
                                                            group="root", mode="0644"), "load nvidia_peermem at every boot")
            return False
        if not gd.exists(files, gd.MODULES_LOAD_PATH):
            return False
        result = self.module("ansible.builtin.file", dict(path=gd.MODULES_LOAD_PATH, state="absent"),
                             what="stop loading nvidia_peermem at boot")
        return bool(result.get("changed"))

    def _acs(self, plan, files):
        """ACS redirect cleared now on the bridges of the pairs (setpci keeps the bits outside the mask), and at every boot
        by the role's unit; or the unit, its program and its list removed. Whether they were removed."""
        for bridge in plan["acs_clear_now"]:
            self._command(["setpci", "-s", bridge, "ECAP_ACS+0x6.w=%s" % gd.ACS_VALUE],
                          "clear ACS ReqRedir and CmpltRedir on %s" % bridge)
        if plan["acs_boot"]:
            # one module run installs the unit, its program and its list of bridges and enables it; it never starts the unit
            bridges = self._render("gpudirect-acs.conf.j2", dict(__gpudirect_acs_boot=plan["acs_boot"],
                                                                 __gpudirect_acs_value=gd.ACS_VALUE))
            unit, program = self._file(gd.ACS_UNIT), self._file("gpudirect-acs")
            if gd.unit_current(files, unit, bridges, program):
                return False
            self.module("boot_unit", dict(
                name=gd.ACS_UNIT, unit=unit,
                files=[dict(path=gd.ACS_CONF_PATH, mode="0644", content=bridges),
                       dict(path=gd.ACS_PROGRAM_PATH, mode="0755", content=program)]),
                what="clear ACS redirect at every boot (the unit runs at the next boot; ACS is cleared already)")
            return False
        if gd.unit_gone(files):
            return False
        result = self.module("boot_unit", dict(name=gd.ACS_UNIT, state="absent",
                                               files=[dict(path=gd.ACS_PROGRAM_PATH), dict(path=gd.ACS_CONF_PATH)]),
                             what="remove the boot-time unit, its program and its list of bridges")
        return bool(result.get("changed"))

    def _iommu(self, plan, files):
        """iommu=pt in a GRUB drop-in (where allowed and needed), or the drop-in removed; the GRUB configuration regenerated
        after a change. Returns (written, removed)."""
        written = removed = False
        if plan["grub_wanted"]:
            if gd.current(files, gd.GRUB_PATH, self._render("grub.cfg.j2", {}), "0644"):
                return written, removed
            # update-grub reads the directory when it exists; a fresh Debian install may not have it yet
            self.module("ansible.builtin.file", dict(path=gd.GRUB_PATH.rsplit("/", 1)[0], state="directory", owner="root",
                                                     group="root", mode="0755"), what="create the GRUB drop-in directory")
            written = bool(self.run_action("ansible.legacy.template", dict(src="grub.cfg.j2", dest=gd.GRUB_PATH, owner="root",
                                                                           group="root", mode="0644"),
                                           "put iommu=pt on the kernel command line (GRUB)").get("changed"))
        elif gd.exists(files, gd.GRUB_PATH):
            removed = bool(self.module("ansible.builtin.file", dict(path=gd.GRUB_PATH, state="absent"),
                                       what="remove iommu=pt from the kernel command line (it leaves at the next boot)"
                                       ).get("changed"))
        if (written or removed) and not self._task.check_mode:
            self._regenerate_grub()
        return written, removed

    def _regenerate_grub(self):
        """The GRUB configuration, with the tool the distribution has (Debian and Ubuntu: update-grub, which reads
        /etc/default/grub.d; EL: grub2-mkconfig), and none where neither exists."""
        for tool in gd.GRUB_TOOLS:
            stat = self.module("ansible.builtin.stat", dict(path=tool, get_checksum=False),
                               what="find the GRUB configuration tool", check_mode=False)
            if (stat.get("stat") or {}).get("exists"):
                argv = [tool] if tool.endswith("update-grub") else [tool, "-o", "/boot/grub2/grub.cfg"]
                self.module("ansible.builtin.command", dict(argv=argv), what="regenerate the GRUB configuration")
                return

    def _pending(self, plan, files):
        """The reboot iommu=pt waits for, recorded (entry gpudirect) while it is wanted, removed otherwise (where the node may
        hold the entry: the record read with the topology, or this run's fact, says). Returns (changed, stuck)."""
        wanted = plan["reboot_wanted"]
        if not wanted and (not gd.pending_may_hold(files) or not node_state.may_hold(
                self.fact("infiniband_pending"), gd.ROLE, bool(self.fact("infiniband_pending_stale")), self.run_id)):
            return False, False
        result = self.module("pending_action", dict(
            name=gd.ROLE, state="present" if wanted else "absent", action="reboot", reason=gd.PENDING_REASON,
            details=dict(kernel_args=["iommu=pt"]), run_id=self.run_id),
            what="record that iommu=pt waits for a reboot, or that nothing of this role does")
        return bool(result.get("changed")), bool(wanted and result.get("stuck"))

    # --- the step ------------------------------------------------------------------------------------------------

    def step(self):
        s = gd.settings(self.settings)
        if self.preflight:
            # the settings alone (the unknown ones and the argument specs, judged by the base): the rest is the node's
            # readiness, which the role reports after its changes
            return
        info, files = self._read()
        recorded = gd.recorded_bridges(gd.content(files, gd.ACS_CONF_PATH), info) if s["gpudirect_allow_acs_change"] else []
        plan = gd.plan(s, info, recorded, gd.exists(files, gd.GRUB_PATH))
        self.returns(plan=plan)
        if gd.needs_setpci(plan):
            self._pciutils(files)
        outcome = {}
        outcome["modules_load_removed"] = self._peermem(plan, files)
        outcome["acs_removed"] = self._acs(plan, files)
        outcome["grub_written"], outcome["grub_removed"] = self._iommu(plan, files)
        outcome["pending_changed"], outcome["stuck"] = self._pending(plan, files)
        report = gd.report(info, plan, outcome)
        report["text"] = gd.report_text(report, self.host, bool(self._task.check_mode))
        # a host fact (ansible_facts.gpudirect_report, kept by a fact cache) and, as set_fact made it before, a variable of the
        # host (gpudirect_report without the deprecated injection of facts as variables), where ansible-core can say so
        self.publish(gpudirect_report=report)
        if VariableLayer is not None and hasattr(self, "register_host_variables"):
            self.register_host_variables({"gpudirect_report": report}, VariableLayer.EPHEMERAL_FACT)
        display.display(report["text"])
        self.returns(msg=report["text"])
        self.refuse([gd.not_ready(report, self.host, s)], suffix=None)
