#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
module: fw_reset
short_description: Reset the firmware of an NVIDIA/Mellanox adapter to load its new configuration (disruptive)
version_added: 0.1.0
description:
  - B(This module is disruptive.) Every call that is not in check mode resets the firmware of a whole adapter card with
    C(mlxfwreset) (NVIDIA MFT) or C(mstfwreset) (mstflint). The driver is unloaded from every function of the card
    (unless O(skip_driver)), the card's PCI link is reset and the driver is loaded again. For the duration of the reset, tens of seconds, every port of
    the card is down. Every netdev, IPoIB interface and RDMA device of the card disappears and comes back, and the
    connections, mounts and jobs that use them break.
  - The reset loads the firmware configuration staged with M(fabric.infiniband.mlxconfig) (Next Boot becomes Current)
    without rebooting the host. Use it instead of a reboot when M(fabric.infiniband.mlxconfig) returns C(reboot_required).
  - The module never runs on its own initiative. Roles of this collection call it only when an explicit consent variable
    allows a firmware reset, as they do for reboots, and fail with what to set otherwise.
  - It is not idempotent, by design. There is no state to compare, because a card whose configuration is already live looks
    the same before and after a reset. Every call that is not in check mode runs exactly one reset. The caller decides
    whether a reset is needed, from RV(fabric.infiniband.mlxconfig#module:reboot_required).
  - Before the reset, the module queries the reset levels the card supports (C(q)). It fails, and resets nothing, when the
    level is not supported or when a function of the card has SR-IOV VFs. It also fails on a BlueField, and when the tool
    cannot open the device (for example under kernel lockdown). The failure message names the device and what to do.
author:
  - fabric.infiniband developers (@fabric-infiniband)
extends_documentation_fragment:
  - fabric.infiniband.attributes
  - fabric.infiniband.sysfs
attributes:
  check_mode:
    support: full
    details:
      - Runs the checks and the query of the supported reset levels, resets nothing, and reports V(changed=true) with the
        command it would run in RV(reset_cmd).
  diff_mode:
    support: none
    details:
      - A reset has no before and after state to show.
options:
  device:
    description:
      - The adapter, as a PCI address (V(0000:3b:00.0) or V(3b:00.0)), an MST device path (V(/dev/mst/mt4123_pciconf0),
        MFT only, after C(mst start)), or an RDMA device name (V(mlx5_0)).
      - A reset acts on the whole card, so the module always gives the tool function 0 of the card. V(0000:3b:00.1), or the
        RDMA device of the second port, becomes V(0000:3b:00.0), and V(/dev/mst/mt4123_pciconf0.1) becomes
        V(/dev/mst/mt4123_pciconf0). An RDMA device name that sysfs knows is passed as its PCI address.
      - SR-IOV virtual functions are refused.
    type: str
    required: true
  level:
    description:
      - The reset level, passed as C(-l).
      - V(3) (C(Driver restart and PCI reset)) is the only level that both loads the new firmware configuration and lets
        the module report the outcome.
      - Level 0 (C(live-Patch)) keeps the link up and does not load a new configuration. Level 1 resets only the Arm side of
        a BlueField.
      - Level 4 (C(Warm Reboot)) makes the tool reboot the host from inside the task, so Ansible would lose the
        connection and could not report the outcome. Use M(ansible.builtin.reboot) instead.
    type: int
    choices: [3]
    default: 3
  tool:
    description:
      - Which firmware reset tool to run. Both print the same output and take the same arguments.
      - V(mlxfwreset) is NVIDIA MFT's tool (also shipped by DOCA-OFED). It also opens MST device paths after C(mst start).
      - V(mstfwreset) is the open-source mstflint's tool, packaged by the distributions.
      - V(auto) takes C(mlxfwreset) when it is installed and C(mstfwreset) otherwise.
      - The configuration tool of the same package (C(mlxconfig) or C(mstconfig)) reads the BlueField mode when sysfs
        does not rule out a BlueField.
    type: str
    choices: [auto, mlxfwreset, mstfwreset]
    default: auto
  skip_driver:
    description:
      - Pass C(--skip_driver). The tool then neither stops nor starts the driver around the PCI reset.
      - Use it when C(mlx5_core) is not bound to the functions of the card. Also use it when the tool asks for it
        (C(Please make sure the driver is down, and re-run the tool with --skip_driver)).
      - The sriov-network-operator passes it to shorten the reset, on drivers that take part in the reset themselves.
    type: bool
    default: false
requirements:
  - C(mlxfwreset) from NVIDIA MFT or DOCA-OFED, or C(mstfwreset) from mstflint, on the managed node (root)
notes:
  - B(Disruptive.) Do not reset the card that carries the connection Ansible uses to reach the host. Drain the node of
    workloads first, as for a reboot.
  - VFs must be removed first. The tool fails while a function of the card has SR-IOV VFs (sriov-network-operator PR 904),
    so the module checks C(sriov_numvfs) of every physical function of the card in sysfs, and fails before anything
    when one is not 0. Set them to 0 first, then create the VFs again after the reset. When sysfs does not show the card
    (an MST device path, or O(sysfs_root) without it), the module warns and leaves the check to the tool.
  - Every BlueField is refused. In DPU mode its Arm side owns the NIC firmware, and the tools cannot reset it from the
    host (mstflint issue 830); a power cycle of the host loads the configuration. In NIC mode a firmware reset switches
    it back to DPU mode (nic-configuration-operator PR 86); reboot the host instead. The module identifies a BlueField by
    its PCI device id in sysfs, and reads the mode with C(mlxconfig)/C(mstconfig) (C(INTERNAL_CPU_*) parameters).
  - The tools access the adapter's PCI configuration space and reset its PCI link through sysfs. Under kernel lockdown
    (Secure Boot) they cannot open the device, or refuse to run. The module then fails and suggests a reboot instead.
  - Multi-host and Socket Direct cards are reset by the tool together with their other hosts or sockets. The module does
    not coordinate them.
seealso:
  - module: fabric.infiniband.mlxconfig
  - module: fabric.infiniband.mlxconfig_info
  - module: ansible.builtin.reboot
  - name: mlxfwreset user manual
    description: NVIDIA Firmware Tools (MFT) documentation of the mlxfwreset tool.
    link: https://docs.nvidia.com/networking/display/mftv4300/mlxfwreset+%E2%80%93+loading+firmware+on+5th+generation+devices+tool
"""

EXAMPLES = r"""
- name: Stage InfiniBand on port 1
  fabric.infiniband.mlxconfig:
    device: "0000:3b:00.0"
    params:
      LINK_TYPE_P1: IB
  register: __link_type

# Only with the operator's consent, and only when the change is not live yet
- name: Load the staged configuration with a firmware reset instead of a reboot
  fabric.infiniband.fw_reset:
    device: "0000:3b:00.0"
  when:
    - link_type_allow_fw_reset | bool
    - __link_type.reboot_required
    - not __link_type.power_cycle_required

- name: Reset through the RDMA device of the second port (function 0 of the card is reset), with mstflint
  fabric.infiniband.fw_reset:
    device: mlx5_1
    tool: mstfwreset
"""

RETURN = r"""
ansible_facts:
  description:
    - V(infiniband_hca_stale=true) when the module changed the node (not in check mode), so that the roles read the adapters again with
      M(fabric.infiniband.hca_info) before they decide anything from the fact C(infiniband_hca).
  returned: when changed
  type: dict
  sample: {infiniband_hca_stale: true}
changed:
  description: Whether a reset ran (in check mode, would run). After a failed reset, whether a step of it was done.
  returned: always
  type: bool
  sample: true
device:
  description: O(device) as given.
  returned: always
  type: str
  sample: mlx5_1
target_device:
  description: The device the tool was given, function 0 of the card.
  returned: when the device was resolved
  type: str
  sample: "0000:3b:00.0"
pci_address:
  description: PCI address of RV(target_device), V(null) when unknown (an MST device path).
  returned: when the device was resolved
  type: str
  sample: "0000:3b:00.0"
tool:
  description: The reset tool that ran.
  returned: when a tool was found
  type: str
  sample: mstfwreset
level:
  description: The reset level requested (O(level)).
  returned: always
  type: int
  sample: 3
supported_levels:
  description: The reset levels the tool's query marks as C(Supported), in its order.
  returned: after the query
  type: list
  elements: int
  sample: [0, 3, 4]
reset_levels:
  description: Every row of the query's C(Reset-levels) block.
  returned: after the query
  type: list
  elements: dict
  sample:
    - {level: 3, description: Driver restart and PCI reset, supported: true, default: true, reason: null}
  contains:
    level:
      description: The level number.
      type: int
    description:
      description: The tool's description of the level.
      type: str
    supported:
      description: V(true) for C(-Supported), V(false) for C(-Not Supported), V(null) when the row has no status.
      type: bool
    default:
      description: Whether the tool marks the level C((default)), the level it takes without C(-l).
      type: bool
    reason:
      description: The C((Reason ...)) that some releases print after C(Not Supported).
      type: str
steps:
  description:
    - The steps the tool reported (C(-I- <step> -Done)), in order. Empty in check mode.
  returned: always
  type: list
  elements: dict
  sample:
    - {step: Sending Reset Command To Fw, result: Done}
    - {step: Stopping Driver, result: Done}
    - {step: Resetting PCI, result: Done}
    - {step: Starting Driver, result: Done}
    - {step: Restarting MST, result: Skipped}
  contains:
    step:
      description: The step as the tool names it; V(null) for a C(Failed) the tool printed between two steps.
      type: str
    result:
      description: V(Done), V(Skipped), V(Failed), or V(null) when the tool stopped before printing one.
      type: str
fw_loaded:
  description: Whether the tool printed C(FW was loaded successfully). V(null) in check mode.
  returned: always
  type: bool
  sample: true
reset_cmd:
  description: The reset command that ran (in check mode, would run).
  returned: when the checks passed
  type: list
  elements: str
  sample: ["/usr/bin/mstfwreset", "-d", "0000:3b:00.0", "-l", "3", "-y", "reset"]
cmd:
  description: The last command run.
  returned: always
  type: list
  elements: str
  sample: ["/usr/bin/mstfwreset", "-d", "0000:3b:00.0", "-l", "3", "-y", "reset"]
cmds:
  description: Every command run, in order. These are the query, the configuration query when the BlueField mode was read,
    and the reset.
  returned: always
  type: list
  elements: list
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.fabric.infiniband.plugins.module_utils import common
from ansible_collections.fabric.infiniband.plugins.module_utils import mlxconfig as mlxcfg
from ansible_collections.fabric.infiniband.plugins.module_utils import mlxfwreset
from ansible_collections.fabric.infiniband.plugins.module_utils import pci
from ansible_collections.fabric.infiniband.plugins.module_utils import sysfs
from ansible_collections.fabric.infiniband.plugins.module_utils._runner import Runner, ToolModule, find_tool


BLUEFIELD_HELP = {
    "dpu": ("it is a BlueField in DPU mode (%s): its Arm side owns the NIC firmware, which the host's firmware reset tools "
            "cannot reset, and a host-side reset would not load the configuration. Power-cycle the host to load it (or "
            "configure the card from the DPU's Arm side)"),
    "nic": ("it is a BlueField in NIC mode (%s): a firmware reset switches a BlueField in NIC mode back to DPU mode, which "
            "changes what the host sees. Reboot the host instead to load the configuration"),
    "separated_host": ("it is a BlueField in separated-host mode (%s): its Arm side shares the NIC firmware with the host. "
                       "Reboot the host instead to load the configuration"),
    "unknown": ("it is a BlueField whose mode could not be read (%s): a firmware reset acts differently in DPU and NIC mode. "
                "Reboot the host instead to load the configuration"),
}
LEVEL_4_NOTE = ("level 4 (Warm Reboot) makes the tool reboot the host from inside the task, which this module does not do: "
                "reboot the host with ansible.builtin.reboot instead")


def argument_spec():
    spec = common.merge_specs(common.SYSFS_ARG_SPEC)
    spec.update(
        device=dict(type="str", required=True),
        level=dict(type="int", default=3, choices=[3]),
        tool=dict(type="str", default="auto", choices=["auto"] + list(mlxcfg.RESET_TOOLS)),
        skip_driver=dict(type="bool", default=False),
    )
    return spec


class FwReset(ToolModule):

    def __init__(self, module):
        self.module = module
        self.tree = sysfs.Sysfs(module.params["sysfs_root"])
        self.device = module.params["device"]
        self.level = module.params["level"]
        self.result = dict(changed=False, device=self.device, level=self.level, steps=[], fw_loaded=None, cmd=[], cmds=[])
        self.runner = None
        self.tool = None
        self.target = None
        self.pci_address = None

    # ------------------------------------------------------------ helpers
    def refuse(self, why, res=None):
        self.fail("nothing reset on %s: %s" % (self.target or self.device, why), res)

    # ------------------------------------------------------------ checks
    def check_options(self):
        problem = mlxcfg.device_problem(self.device)
        if problem:
            self.fail("%s (nothing reset)" % problem)

    def select_tool(self):
        name, _path, problem = mlxcfg.select_tool(self.module, self.module.params["tool"], self.device, names=mlxcfg.RESET_TOOLS)
        if problem:
            self.fail("%s (nothing reset on %s)" % (problem, self.device))
        self.tool = self.result["tool"] = name
        self.runner = Runner(self.module, name)

    def resolve(self):
        info = mlxcfg.resolve_device(self.device, self.tree)
        if info["physfn"]:
            self.fail("%s is an SR-IOV virtual function of %s: a firmware reset acts on the whole card, through its physical "
                      "function, and fails while VFs exist; remove the VFs and use device: %s (nothing reset)"
                      % (self.device, info["physfn"], info["physfn"]))
        target, pci_address = info["target"], info["pci_address"]
        first = mlxcfg.first_function(target, pci_address)
        if first:
            target = first
            pci_address = mlxcfg.normalize_pci_address(first) or pci.first_function(pci_address)
        self.target, self.pci_address = target, pci_address
        self.result.update(target_device=target, pci_address=pci_address)

    def check_vfs(self):
        """Every physical function of the card must have sriov_numvfs 0 (the tool fails otherwise)."""
        known = self.pci_address is not None and self.pci_address in self.tree.pci_functions()
        if not known:
            self.module.warn("cannot check the SR-IOV VFs of %s: sysfs under %s does not show it; the reset fails if a "
                             "function of the card has VFs" % (self.target, self.tree.root))
            return
        functions = mlxfwreset.card_functions(self.tree, self.pci_address)
        busy = mlxfwreset.functions_with_vfs(self.tree, functions)
        if busy:
            listed = ", ".join("%s has %d" % (bdf, count) for bdf, count in busy)
            paths = " and ".join("/sys/bus/pci/devices/%s/sriov_numvfs" % bdf for bdf, _count in busy)
            self.refuse("SR-IOV VFs are enabled (%s); the firmware reset fails while a function of the card has VFs. "
                        "Set them to 0 first (write 0 to %s; the VFs and whatever uses them go away), and create them "
                        "again after the reset" % (listed, paths))

    def query(self):
        res = self.run(mlxfwreset.query_args(self.target))
        parsed = mlxfwreset.parse_query(res.stdout, res.stderr)
        if res.rc != 0 or parsed["errors"] or not parsed["levels"]:
            if res.rc == 0 and not parsed["errors"]:
                msg = "no Reset-levels block in the output of '%s q' for %s" % (self.tool, self.target)
            else:
                functions = mlxcfg.sysfs_functions(self.tree) if self.tree.is_dir() else None
                msg = mlxfwreset.explain_failure(self.tool, self.target, parsed, res.rc, res.stdout,
                                                 lockdown=self.tree.lockdown(), functions=functions)
            self.fail("%s (nothing reset)" % msg, res)
        self.result["reset_levels"] = parsed["levels"]
        self.result["supported_levels"] = mlxfwreset.supported_levels(parsed)
        return parsed

    def check_bluefield(self):
        """Refuse any BlueField: read the mode with the configuration tool unless sysfs rules a BlueField out."""
        in_sysfs = mlxfwreset.is_bluefield(self.tree, self.pci_address) if self.pci_address else None
        if in_sysfs is False:
            return
        config = mlxfwreset.CONFIG_TOOL_OF[self.tool]
        if not find_tool(self.module, config):
            if in_sysfs:
                self.refuse(BLUEFIELD_HELP["unknown"] % ("%s is not installed" % config))
            self.module.warn("cannot tell whether %s is a BlueField (whose firmware must not be reset): sysfs does not "
                             "show its PCI device id and %s is not installed" % (self.target, config))
            return
        res = self.run(mlxcfg.query_args(self.target), runner=Runner(self.module, config))
        parsed = mlxcfg.parse_query(res.stdout, res.stderr)
        devices = [dev for dev in parsed["devices"] if dev["params"]]
        if res.rc != 0 or mlxcfg.all_errors(parsed) or not devices:
            why = mlxcfg.explain_failure(config, self.target, parsed, res.rc, res.stdout, lockdown=self.tree.lockdown())
            if in_sysfs:
                self.refuse(BLUEFIELD_HELP["unknown"] % why, res)
            self.refuse("cannot tell whether it is a BlueField (whose firmware must not be reset): %s" % why, res)
        params = devices[0]["params"]
        modes = [mlxcfg.bluefield_mode(params, column) for column in ("current", "next_boot")]
        if modes[0] is None and not in_sysfs:
            return
        mode = "unknown"
        for candidate in ("dpu", "separated_host", "unknown", "nic"):
            if candidate in modes:
                mode = candidate
                break
        evidence = mlxcfg.bluefield_evidence(params) or "no INTERNAL_CPU_* parameter in the query"
        self.refuse(BLUEFIELD_HELP[mode] % evidence, res)

    def check_level(self, parsed):
        supported = self.result["supported_levels"]
        if self.level in supported:
            return
        entry = mlxfwreset.level_entry(parsed, self.level)
        name = (entry and entry["description"]) or mlxfwreset.LEVEL_NAMES.get(self.level, "?")
        if entry is None:
            said = "the tool does not list it"
        elif entry["supported"] is None:
            said = "the tool prints no status for it"
        else:
            said = "the tool marks it Not Supported" + (" (Reason: %s)" % entry["reason"] if entry["reason"] else "")
        others = mlxfwreset.describe_levels(parsed) or "none"
        advice = LEVEL_4_NOTE if 4 in supported else "reboot the host instead to load the new firmware configuration"
        self.refuse("device does not support reset level %d (%s): %s; supported levels: %s. %s"
                    % (self.level, name, said, others, advice[0].upper() + advice[1:]))

    # ------------------------------------------------------------ reset
    def reset(self, args):
        res = self.run(args, mutating=True)
        parsed = mlxfwreset.parse_reset(res.stdout, res.stderr)
        self.result["steps"] = parsed["steps"]
        self.result["fw_loaded"] = parsed["loaded"]
        for warning in parsed["warnings"]:
            self.module.warn("%s on %s: %s" % (self.tool, self.target, warning))
        bad_steps = mlxfwreset.failed_steps(parsed)
        if res.rc != 0 or parsed["errors"] or bad_steps:
            self.result["changed"] = any(step["result"] == "Done" for step in parsed["steps"])
            why = mlxfwreset.explain_failure(self.tool, self.target, parsed, res.rc, res.stdout, lockdown=self.tree.lockdown(),
                                             during_reset=True)
            self.fail("firmware reset of %s (level %d) failed: %s; steps: %s"
                      % (self.target, self.level, why, mlxfwreset.describe_steps(parsed["steps"])), res)
        if not parsed["loaded"]:
            self.module.warn("%s did not print 'FW was loaded successfully' for %s; check the card with "
                             "fabric.infiniband.mlxconfig_info" % (self.tool, self.target))

    # ------------------------------------------------------------ main
    def apply(self):
        self.check_options()
        self.select_tool()
        self.resolve()
        self.check_vfs()
        parsed = self.query()
        self.check_bluefield()
        self.check_level(parsed)
        args = mlxfwreset.reset_args(self.target, self.level, self.module.params["skip_driver"])
        self.result["reset_cmd"] = self.runner.argv(args)
        self.result["changed"] = True
        if not self.module.check_mode:
            self.reset(args)
        return self.result


def main():
    module = AnsibleModule(argument_spec=argument_spec(), supports_check_mode=True)
    module.exit_json(**common.mark_stale(module, FwReset(module).apply(), "hca"))


if __name__ == "__main__":
    main()
