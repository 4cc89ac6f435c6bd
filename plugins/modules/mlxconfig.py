#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
module: mlxconfig
short_description: Set firmware parameters of an NVIDIA/Mellanox adapter idempotently
version_added: 0.1.0
description:
  - Sets firmware (NV) configuration parameters of one adapter with C(mlxconfig) (NVIDIA MFT) or C(mstconfig) (mstflint), for
    example the link type of VPI ports (C(LINK_TYPE_P1=IB)) or SR-IOV (C(SRIOV_EN), C(NUM_OF_VFS)).
  - Reads the device once (C(-e q)) and decides per parameter from its Current and Next Boot values. A value not in Next Boot is
    written; a value in Next Boot but not yet in Current needs only a reboot; a value in both needs nothing.
  - Writes every changed parameter in one C(set) call, then reads the device again and fails unless Next Boot holds the values.
    C(mlxconfig set) itself is not idempotent (it writes even equal values), this module is.
  - Never reboots and never resets the firmware; it returns RV(reboot_required) and RV(power_cycle_required) for the play to act on.
  - Fails before any write, naming the device and the parameter, when the device cannot be opened (also under kernel lockdown),
    is a BlueField in DPU mode, or when a parameter is unknown, not supported by the device, read-only, or given a value it cannot take.
author:
  - fabric.infiniband developers (@fabric-infiniband)
extends_documentation_fragment:
  - fabric.infiniband.attributes
  - fabric.infiniband.mlxconfig_tool
  - fabric.infiniband.sysfs
attributes:
  check_mode:
    support: full
    details:
      - Queries the device, and reports what it would write and whether a reboot would be needed, without running C(set).
      - RV(power_cycle_required) is only known from the tool's answer to a real C(set), so it is V(false) in check mode.
  diff_mode:
    support: full
    details:
      - The diff shows the Current and Next Boot values of the parameters in O(params) before and after.
options:
  device:
    description:
      - The adapter, as a PCI address (V(0000:3b:00.0) or V(3b:00.0)), an MST device path (V(/dev/mst/mt4123_pciconf0),
        MFT only, after C(mst start)), or an RDMA device name (V(mlx5_0)).
      - An RDMA device name that sysfs knows is passed to the tool as its PCI address, which every tool version accepts.
        Anything else is passed as given; the tool decides whether the device exists.
      - Parameters kept once per card (C(SRIOV_EN), C(NUM_OF_VFS), C(NUM_OF_PF) and every parameter that names its port,
        such as C(LINK_TYPE_P1) and C(LINK_TYPE_P2)) are read and written through function 0 of the card when O(device) names
        another function (C(0000:3b:00.1) becomes C(0000:3b:00.0), C(/dev/mst/mt4123_pciconf0.1) becomes C(/dev/mst/mt4123_pciconf0)),
        so a dual-port card is written once, not once per port. Mixing such parameters with per-function ones in one task on
        a function other than 0 fails; use two tasks.
      - SR-IOV virtual functions are refused; configure their physical function.
    type: str
    required: true
  params:
    description:
      - "Parameter names and desired values, for example V({LINK_TYPE_P1: IB, SRIOV_EN: true, NUM_OF_VFS: 8})."
      - Names are matched without regard to case against the parameters the device reports.
      - Values are compared by name or by number, without regard to case. Enumerations take a value name (V(IB), V(eth)),
        its number (V(1)) or the printed form (V(IB(1))); booleans a YAML boolean, V(true)/V(false), V(yes)/V(no), V(1)/V(0)
        or V(True(1)); numbers an integer or a string of digits.
      - Arrays and array elements (V(NAME[0])) are not supported.
    type: dict
    required: true
  allow_unsupported:
    description:
      - What to do with a parameter that the device does not report (not supported by the card, or unknown to the tool).
      - V(false) fails before any write. V(true) skips it with a warning, reports its RV(params) action as V(unsupported), and sets the others.
    type: bool
    default: false
notes:
  - A BlueField in DPU mode (C(INTERNAL_CPU_OFFLOAD_ENGINE) V(ENABLED), or V(ECPF) in C(INTERNAL_CPU_PAGE_SUPPLIER),
    C(INTERNAL_CPU_ESWITCH_MANAGER) or C(INTERNAL_CPU_IB_VPORT0)) is refused, as is one in separated-host or an unknown mode;
    its Arm side owns the NIC firmware and a host reboot does not reload it.
  - After a write, C(mlxconfig) answers either C(Please reboot machine) or, when the firmware could not prepare a warm reboot,
    C(Please power cycle machine); the latter sets RV(power_cycle_required).
seealso:
  - module: fabric.infiniband.mlxconfig_info
  - name: mlxconfig user manual
    description: NVIDIA Firmware Tools (MFT) documentation of the mlxconfig tool.
    link: https://docs.nvidia.com/networking/display/mftv4300/mlxconfig+%E2%80%93+changing+device+configuration+tool
"""

EXAMPLES = r"""
- name: Put both ports of a VPI card into InfiniBand mode
  fabric.infiniband.mlxconfig:
    device: "0000:3b:00.0"
    params:
      LINK_TYPE_P1: IB
      LINK_TYPE_P2: IB
  register: __link_type

- name: Reboot when the firmware change is not live yet
  ansible.builtin.reboot:
  when: __link_type.reboot_required and not __link_type.power_cycle_required

- name: Enable SR-IOV with 8 VFs, through the RDMA device of the second port (written through function 0)
  fabric.infiniband.mlxconfig:
    device: mlx5_1
    params:
      SRIOV_EN: true
      NUM_OF_VFS: 8

- name: Same setting on a mix of cards, skipping the parameters a card does not have
  fabric.infiniband.mlxconfig:
    device: "{{ item }}"
    params:
      LINK_TYPE_P1: IB
      SRIOV_EN: true
    allow_unsupported: true
  loop: ["0000:3b:00.0", "0000:86:00.0"]
"""

RETURN = r"""
changed:
  description: Whether a C(set) ran (in check mode, would run).
  returned: always
  type: bool
reboot_required:
  description:
    - Whether a parameter is not yet live, because it was written now (and differed from Current) or was already waiting in Next Boot.
  returned: always
  type: bool
  sample: true
power_cycle_required:
  description:
    - Whether the tool answered the C(set) with C(Please power cycle machine); a warm reboot will not load the new values
      (use a cold power cycle, or a firmware reset with C(mlxfwreset)). Known only after a real C(set).
  returned: always
  type: bool
  sample: false
device:
  description: O(device) as given.
  returned: always
  type: str
  sample: mlx5_1
target_device:
  description: The device the tool was given, function 0 for per-card parameters on another function.
  returned: always
  type: str
  sample: "0000:3b:00.0"
pci_address:
  description: PCI address of RV(target_device), V(null) when unknown (an MST device path).
  returned: always
  type: str
  sample: "0000:3b:00.0"
device_type:
  description: Device type as the tool prints it.
  returned: success
  type: str
  sample: ConnectX6
params:
  description: Per parameter of O(params), under the name the device reports.
  returned: success
  type: dict
  sample:
    LINK_TYPE_P1:
      desired: IB(1)
      before: {current: ETH(2), next_boot: ETH(2)}
      after: {current: ETH(2), next_boot: IB(1)}
      action: write
      reboot_required: true
  contains:
    desired:
      description: The desired value as the tool prints it.
      type: str
    before:
      description: V(current) and V(next_boot) as the tool printed them before.
      type: dict
    after:
      description: V(current) and V(next_boot) after the write, as read back (in check mode, as they would be).
      type: dict
    action:
      description:
        - V(write) (not in Next Boot, written), V(pending_reboot) (in Next Boot, not in Current), V(none) (in both), or
          V(unsupported) (not reported by the device, skipped with O(allow_unsupported)).
      type: str
    reboot_required:
      description: Whether this parameter waits for a reboot.
      type: bool
writes:
  description: What C(set) was given (or would be in check mode), name to value.
  returned: success
  type: dict
  sample: {LINK_TYPE_P1: IB}
set_cmd:
  description: The C(set) command that ran (or would run in check mode); V(null) when nothing is written.
  returned: success
  type: list
  elements: str
  sample: ["/usr/bin/mstconfig", "-d", "0000:3b:00.0", "-y", "set", "LINK_TYPE_P1=IB"]
tool:
  description: The tool that ran.
  returned: always
  type: str
  sample: mstconfig
cmd:
  description: The last command run.
  returned: always
  type: list
  elements: str
  sample: ["/usr/bin/mstconfig", "-d", "0000:3b:00.0", "-e", "q"]
cmds:
  description: Every command run, in order (query, then C(set) and the query that checks it).
  returned: always
  type: list
  elements: list
diff:
  description: With C(--diff), the Current and Next Boot values of the parameters before and after.
  returned: when diff mode is on
  type: dict
  sample:
    before: {LINK_TYPE_P1: {current: ETH(2), next_boot: ETH(2)}}
    after: {LINK_TYPE_P1: {current: ETH(2), next_boot: IB(1)}}
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.fabric.infiniband.plugins.module_utils import common
from ansible_collections.fabric.infiniband.plugins.module_utils import mlxconfig as mlxcfg
from ansible_collections.fabric.infiniband.plugins.module_utils import pci
from ansible_collections.fabric.infiniband.plugins.module_utils import sysfs
from ansible_collections.fabric.infiniband.plugins.module_utils._runner import Runner, ToolModule


BLUEFIELD_HELP = (
    "%s is a BlueField in %s mode (%s): its Arm side owns the NIC firmware and a host reboot does not reload it, so the change "
    "would never become live. Configure it from the DPU's Arm side, or switch it to NIC mode first (mlxconfig set "
    "INTERNAL_CPU_OFFLOAD_ENGINE=DISABLED, then a power cycle)"
)


def argument_spec():
    spec = common.merge_specs(common.SYSFS_ARG_SPEC, common.MLXCONFIG_TOOL_ARG_SPEC)
    spec.update(
        device=dict(type="str", required=True),
        params=dict(type="dict", required=True),
        allow_unsupported=dict(type="bool", default=False),
    )
    return spec


class Mlxconfig(ToolModule):

    def __init__(self, module):
        self.module = module
        self.tree = sysfs.Sysfs(module.params["sysfs_root"])
        self.device = module.params["device"]
        self.wanted = list(module.params["params"].items())
        self.result = dict(changed=False, reboot_required=False, power_cycle_required=False, device=self.device,
                           target_device=None, pci_address=None, tool=None, cmd=[], cmds=[])
        self.runner = None
        self.target = None
        self.physfn = None

    # ------------------------------------------------------------ helpers
    def refuse(self, problems, dev=None):
        where = self.target or self.device
        if dev and dev.get("device_type"):
            where = "%s (%s)" % (where, dev["device_type"])
        self.fail("nothing written to %s: %s" % (where, "; ".join(problems)))

    # ------------------------------------------------------------ steps
    def check_options(self):
        """What can be told wrong without asking the tool."""
        device = self.device.strip()
        problem = mlxcfg.device_problem(self.device)
        if problem:
            self.fail(problem)
        if not self.wanted:
            self.fail("params is empty: name at least one parameter to set on %s" % device)
        problems = []
        seen = {}
        for name, value in self.wanted:
            if not mlxcfg.is_param_name(name):
                problems.append("%r is not a parameter name (letters, digits and '_')" % (name,))
            elif mlxcfg.is_array_element(name):
                problems.append("%s: array elements are not supported by this module" % name)
            elif name.upper() in seen:
                problems.append("%s is given twice (also as %s)" % (name, seen[name.upper()]))
            if value is None:
                problems.append("%s has no value" % name)
            seen.setdefault(str(name).upper(), name)
        if problems:
            self.target = device
            self.refuse(problems)

    def resolve(self):
        info = mlxcfg.resolve_device(self.device, self.tree)
        self.physfn = info["physfn"]
        if info["physfn"]:
            self.fail("%s is an SR-IOV virtual function of %s: firmware parameters are set through the physical function; "
                      "use device: %s" % (self.device, info["physfn"], info["physfn"]))
        target, pci_address = info["target"], info["pci_address"]
        first = mlxcfg.first_function(target, pci_address)
        per_card = [name for name, _value in self.wanted if mlxcfg.is_per_card(name)]
        if first and per_card:
            others = [name for name, _value in self.wanted if not mlxcfg.is_per_card(name)]
            if others:
                self.target = target
                self.refuse(["%s %s kept once per card and written through function 0 (%s), but %s %s per function: "
                             "set them in two tasks" % (", ".join(per_card), "is" if len(per_card) == 1 else "are", first,
                                                        ", ".join(others), "is" if len(others) == 1 else "are")])
            target = first
            pci_address = mlxcfg.normalize_pci_address(first) or pci.first_function(pci_address)
        self.target = target
        self.result.update(target_device=target, pci_address=pci_address)

    def query(self, before_write=True):
        res = self.run(mlxcfg.query_args(self.target))
        parsed = mlxcfg.parse_query(res.stdout, res.stderr)
        devices = [dev for dev in parsed["devices"] if dev["params"]]
        if res.rc != 0 or mlxcfg.all_errors(parsed) or not devices:
            if res.rc == 0 and not mlxcfg.all_errors(parsed):
                msg = "no configuration table in the output of %s for %s" % (self.result["tool"], self.target)
            else:
                functions = mlxcfg.sysfs_functions(self.tree) if self.tree.is_dir() else None
                msg = mlxcfg.explain_failure(self.result["tool"], self.target, parsed, res.rc, res.stdout,
                                             lockdown=self.tree.lockdown(), functions=functions, physfn=self.physfn)
            if before_write:
                msg += " (nothing written: %s)" % ", ".join("%s=%s" % (name, value) for name, value in self.wanted)
            self.fail(msg, res)
        return res, devices[0]

    def check_bluefield(self, dev):
        modes = [mlxcfg.bluefield_mode(dev["params"], col) for col in ("current", "next_boot")]
        if modes[0] is None or modes == ["nic", "nic"]:
            return
        mode = modes[0] if modes[0] != "nic" else modes[1]
        label = {"dpu": "DPU", "separated_host": "separated-host"}.get(mode, mode)
        names = ", ".join(name for name, _value in self.wanted)
        self.refuse(["%s: %s" % (names, BLUEFIELD_HELP % (self.target, label, mlxcfg.bluefield_evidence(dev["params"])))], dev)

    def plan(self, dev):
        """Per parameter: (name, entry, desired, action, reboot); fails with every problem at once."""
        index = dict((str(name).upper(), name) for name in dev["params"])
        problems = []
        plan = []
        for key, value in self.wanted:
            name = index.get(str(key).upper())
            if name is None:
                reason = mlxcfg.missing_param_reason(key, dev["params"], dev.get("device_type"))
                if self.module.params["allow_unsupported"]:
                    self.module.warn("%s on %s: %s; skipped (allow_unsupported)" % (key, self.target, reason))
                    plan.append((key, None, None, "unsupported", False))
                else:
                    problems.append("%s: %s" % (key, reason))
                continue
            entry = dev["params"][name]
            try:
                want = mlxcfg.desired_value(name, value, entry)
            except mlxcfg.ValueProblem as exc:
                problems.append("%s: %s; accepted: %s" % (name, exc, exc.accepted))
                continue
            action, reboot = mlxcfg.decide(name, entry, want)
            if action == "write" and entry.get("read_only"):
                problems.append("%s: read-only (RO) on this device, it cannot be changed from %s to %s"
                                % (name, entry.get("next_boot"), want["display"]))
                continue
            plan.append((name, entry, want, action, reboot))
        if problems:
            self.refuse(problems, dev)
        return plan

    def write(self, writes):
        res = self.run(mlxcfg.set_args(self.target, writes), mutating=True)
        parsed = mlxcfg.parse_set(res.stdout, res.stderr)
        if res.rc != 0 or mlxcfg.all_errors(parsed) or parsed["applied"] is False:
            why = mlxcfg.explain_failure(self.result["tool"], self.target, parsed, res.rc, res.stdout,
                                         lockdown=self.tree.lockdown())
            if parsed["applied"] is False:
                why += "; the tool said 'Applying... Failed!': check Next Boot with fabric.infiniband.mlxconfig_info"
            self.fail("set failed: %s" % why, res)
        return parsed

    def verify(self, plan):
        res, dev = self.query(before_write=False)
        wrong = []
        for name, _entry, want, action, _reboot in plan:
            if action != "write":
                continue
            after = dev["params"].get(name) or {}
            if not mlxcfg.value_matches(want, after.get("next_boot"), name):
                wrong.append("%s is %s, expected %s" % (name, after.get("next_boot"), want["display"]))
        if wrong:
            self.fail("the write to %s did not take: after the set, Next Boot of %s" % (self.target, "; ".join(wrong)), res)
        return dev

    # ------------------------------------------------------------ main
    def apply(self):
        self.check_options()
        name, _path, problem = mlxcfg.select_tool(self.module, self.module.params["tool"], self.device)
        if problem:
            self.fail(problem)
        self.result["tool"] = name
        self.runner = Runner(self.module, name)
        self.resolve()
        _res, dev = self.query()
        self.result["device_type"] = dev.get("device_type")
        self.check_bluefield(dev)
        plan = self.plan(dev)

        writes = [(name, want["arg"]) for name, _entry, want, action, _reboot in plan if action == "write"]
        self.result["writes"] = dict(writes)
        self.result["set_cmd"] = self.runner.argv(mlxcfg.set_args(self.target, writes)) if writes else None
        reboot = any(item[4] for item in plan)
        after_dev = None
        load = None
        if writes and not self.module.check_mode:
            load = self.write(writes)["load"]
            after_dev = self.verify(plan)

        params = {}
        before, after = {}, {}
        for name, entry, want, action, item_reboot in plan:
            if entry is None:
                params[name] = {"desired": None, "before": None, "after": None, "action": action, "reboot_required": False}
                continue
            was = {"current": entry.get("current"), "next_boot": entry.get("next_boot")}
            if after_dev is not None:
                now_entry = after_dev["params"].get(name) or {}
                now = {"current": now_entry.get("current"), "next_boot": now_entry.get("next_boot")}
            else:
                now = dict(was, next_boot=want["display"]) if action == "write" else dict(was)
            params[name] = {"desired": want["display"], "before": was, "after": now, "action": action,
                            "reboot_required": item_reboot}
            before[name], after[name] = was, now

        self.result.update(
            changed=bool(writes),
            reboot_required=reboot,
            power_cycle_required=bool(reboot and load == "power_cycle"),
            params=params,
        )
        if self.module._diff:
            self.result["diff"] = {
                "before": before, "after": after,
                "before_header": "%s firmware configuration (current, next_boot)" % self.target,
                "after_header": "%s firmware configuration (current, next_boot)" % self.target,
            }
        return self.result


def main():
    module = AnsibleModule(argument_spec=argument_spec(), supports_check_mode=True)
    module.exit_json(**Mlxconfig(module).apply())


if __name__ == "__main__":
    main()
