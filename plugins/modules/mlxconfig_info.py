#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
module: mlxconfig_info
short_description: Read the firmware configuration of NVIDIA/Mellanox adapters
version_added: 0.1.0
description:
  - Reads the firmware (NV) configuration of one adapter, or of every adapter of the host, with C(mlxconfig) (NVIDIA MFT) or
    C(mstconfig) (mstflint), and returns each parameter's Default, Current and Next Boot value.
  - Current is what the firmware runs now; Next Boot what it will run after the next reboot (or power cycle). A parameter whose
    two values differ is waiting for a reboot.
  - Reads every output format these tools have printed (mstflint and MFT up to 4.21, 4.22-4.24, 4.25, 4.26-4.30.0, MFT 4.30.1
    and mstflint 4.31 to 4.35, and 4.36 or later), including tables whose blanks were squeezed or indented, and the device
    header of the releases before 2018 (up to 4.8), which print C(PCI device:) where later ones print C(Device:).
  - Never changes anything.
author:
  - fabric.infiniband developers (@fabric-infiniband)
extends_documentation_fragment:
  - fabric.infiniband.attributes
  - fabric.infiniband.attributes.info_module
  - fabric.infiniband.mlxconfig_tool
  - fabric.infiniband.sysfs
options:
  device:
    description:
      - The adapter to query, as a PCI address (V(0000:3b:00.0) or V(3b:00.0)), an MST device path (V(/dev/mst/mt4123_pciconf0),
        MFT only, after C(mst start)), or an RDMA device name (V(mlx5_0)).
      - An RDMA device name that sysfs knows is passed to the tool as its PCI address, which every tool version accepts.
        Anything else is passed as given; the tool decides whether the device exists.
      - Without it, every physical function of an NVIDIA/Mellanox adapter found in sysfs is queried, one query each.
    type: str
  params:
    description:
      - Query only these parameters, for example V(LINK_TYPE_P1) or an array's elements V(ESWITCH_HAIRPIN_DESCRIPTORS[0..7]).
      - Without it, every parameter the device supports is returned.
      - A parameter the device does not support makes the tool fail for that device.
    type: list
    elements: str
seealso:
  - module: fabric.infiniband.mlxconfig
  - module: fabric.infiniband.hca_info
"""

EXAMPLES = r"""
- name: Read the firmware configuration of one adapter
  fabric.infiniband.mlxconfig_info:
    device: "0000:3b:00.0"
  register: __fw

- name: Show the link type of port 1 now and after the next reboot
  ansible.builtin.debug:
    msg: >-
      {{ __fw.devices[0].params.LINK_TYPE_P1.current_name }} now,
      {{ __fw.devices[0].params.LINK_TYPE_P1.next_boot_name }} after the next reboot

- name: Only the SR-IOV parameters of every adapter
  fabric.infiniband.mlxconfig_info:
    params: [SRIOV_EN, NUM_OF_VFS]
  register: __sriov

- name: Adapters with a configuration change waiting for a reboot
  ansible.builtin.debug:
    msg: "{{ __sriov.devices | selectattr('params.NUM_OF_VFS.pending', 'defined') | selectattr('params.NUM_OF_VFS.pending')
      | map(attribute='pci_address') | list }}"

- name: Through an RDMA device name, with mstflint even if MFT is installed too
  fabric.infiniband.mlxconfig_info:
    device: mlx5_1
    tool: mstconfig
"""

RETURN = r"""
devices:
  description:
    - One entry per queried device, in PCI address order when every adapter is queried.
  returned: always
  type: list
  elements: dict
  contains:
    device:
      description: The device as the tool was given it (a PCI address, or the MST path or name given in O(device)).
      type: str
      sample: "0000:3b:00.0"
    pci_address:
      description: Full PCI address of the function, V(null) when neither the device argument nor sysfs tells it (an MST path).
      type: str
      sample: "0000:3b:00.0"
    rdma_devices:
      description: RDMA devices of the function according to sysfs.
      type: list
      elements: str
      sample: ["mlx5_0"]
    device_type:
      description: Device type as the tool prints it.
      type: str
      sample: ConnectX6
    name:
      description: Part number (board name), V(null) when the tool does not print it or prints V(N/A).
      type: str
      sample: MCX653106A-HDA_Ax
    description:
      description: Description of the card, V(null) when the tool does not print it or prints V(N/A).
      type: str
      sample: ConnectX-6 VPI adapter card; HDR IB (200Gb/s) and 200GbE; dual-port QSFP56; PCIe4.0 x16; tall bracket; ROHS R6
    layout:
      description:
        - Output format generation of the tool, told by its column widths; V(null) when they do not tell (squeezed output).
        - V(G1) up to 4.21 (the releases up to 4.8 too, with their C(PCI device:) header), V(G2) 4.22-4.24, V(G3) 4.25,
          V(G4) 4.26 to 4.30.0, V(G5) MFT 4.30.1 and mstflint 4.31 to 4.35 (MFT 4.30.1 already prints the G5 widths, which
          mstflint took over in 4.31), V(G6) 4.36 or later.
      type: str
      sample: G1
    bluefield_mode:
      description:
        - For a BlueField, V(dpu), V(nic), V(separated_host) or V(unknown), from the C(INTERNAL_CPU_*) parameters' Current values;
          V(null) for other adapters (or when those parameters were not queried).
      type: str
      sample: null
    error:
      description: Only when every adapter is queried, the reason one device could not be queried; its RV(devices[].params) is empty.
      type: str
      returned: on failure of one device
    params:
      description:
        - Mapping of parameter name to a dictionary with the keys below, in the tool's order.
        - V(default), V(current) and V(next_boot) are exactly as the tool prints them (V(IB(1)), V(True(1)), V(8), V(Array[0..7])).
      type: dict
      sample:
        LINK_TYPE_P1:
          default: IB(1)
          current: ETH(2)
          next_boot: IB(1)
          read_only: false
          modified: true
          type: enum
          default_name: IB
          current_name: ETH
          next_boot_name: IB
          default_number: 1
          current_number: 2
          next_boot_number: 1
          pending: true
      contains:
        default:
          description: Factory default; V(null) when the tool printed only Next Boot.
          type: str
        current:
          description: Value the firmware runs now; V(null) when the tool printed only Next Boot.
          type: str
        next_boot:
          description: Value the firmware takes at the next reboot (or power cycle).
          type: str
        read_only:
          description:
            - Whether the tool marks the parameter read-only (C(RO)).
            - V(null) when the tool's format has no such column (before 4.25) and the parameter is not marked.
          type: bool
        modified:
          description: Whether the tool marks the parameter with C(*) (Next Boot differs from Default or Current); V(null) without those columns.
          type: bool
        type:
          description: V(bool), V(enum), V(number), V(array) or V(string), from the printed values.
          type: str
        default_name:
          description: Value name of V(default) (V(IB) for V(IB(1)), V(True) for V(True(1))); V(null) for numbers and arrays.
          type: str
        current_name:
          description: Value name of V(current).
          type: str
        next_boot_name:
          description: Value name of V(next_boot).
          type: str
        default_number:
          description: Number of V(default) (V(1) for V(IB(1)), V(8) for V(8)); V(null) for arrays.
          type: int
        current_number:
          description: Number of V(current).
          type: int
        next_boot_number:
          description: Number of V(next_boot).
          type: int
        length:
          description: Number of elements of an array parameter.
          type: int
          returned: for arrays
        pending:
          description: Whether Next Boot differs from Current (a reboot will change the value); V(null) without a Current value.
          type: bool
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
  description: Every command run, in order.
  returned: always
  type: list
  elements: list
  sample: [["/usr/bin/mstconfig", "-d", "0000:3b:00.0", "-e", "q"]]
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.fabric.infiniband.plugins.module_utils import common
from ansible_collections.fabric.infiniband.plugins.module_utils import mlxconfig as mlxcfg
from ansible_collections.fabric.infiniband.plugins.module_utils import sysfs
from ansible_collections.fabric.infiniband.plugins.module_utils._runner import Runner, ToolModule


def argument_spec():
    spec = common.merge_specs(common.SYSFS_ARG_SPEC, common.MLXCONFIG_TOOL_ARG_SPEC)
    spec.update(
        device=dict(type="str"),
        params=dict(type="list", elements="str"),
    )
    return spec


def device_entry(target, info, parsed_device):
    """One RV(devices) item from the parsed block of one device."""
    dev = parsed_device or {}
    params = dev.get("params") or {}
    return {
        "device": dev.get("device") or target,
        "pci_address": info.get("pci_address") or mlxcfg.normalize_pci_address(dev.get("device")),
        "rdma_devices": info.get("rdma_devices") or [],
        "device_type": dev.get("device_type"),
        "name": dev.get("name"),
        "description": dev.get("description"),
        "layout": dev.get("layout"),
        "bluefield_mode": mlxcfg.bluefield_mode(params),
        "params": params,
    }


class MlxconfigInfo(ToolModule):

    def __init__(self, module):
        self.module = module
        self.tree = sysfs.Sysfs(module.params["sysfs_root"])
        self.device = module.params["device"]
        self.params = module.params["params"] or []
        self.result = dict(changed=False, devices=[], tool=None, cmd=[], cmds=[])
        self.runner = None

    def check_options(self):
        problem = mlxcfg.device_problem(self.device) if self.device is not None else None
        if problem:
            self.fail(problem)
        bad = [name for name in self.params if not mlxcfg.is_param_name(name)]
        if bad:
            self.fail("params: %s %s not a parameter name (letters, digits and '_', optionally an index such as [0..7])"
                      % (", ".join(repr(name) for name in bad), "is" if len(bad) == 1 else "are"))

    def query(self, target):
        res = self.run(mlxcfg.query_args(target, self.params))
        parsed = mlxcfg.parse_query(res.stdout, res.stderr)
        errors = mlxcfg.all_errors(parsed)
        devices = [dev for dev in parsed["devices"] if dev["params"] or dev["device_type"]]
        if res.rc != 0 or errors or not devices or not devices[0]["params"]:
            if res.rc == 0 and not errors:
                errors = ["no configuration table in the output"]
                parsed["errors"].append(errors[0])
            return res, parsed, None
        return res, parsed, devices[0]

    def explain(self, target, parsed, res, physfn=None, functions=None):
        return mlxcfg.explain_failure(self.result["tool"], target, parsed, res.rc, res.stdout, lockdown=self.tree.lockdown(),
                                      functions=functions, physfn=physfn)

    def gather(self):
        self.check_options()
        name, path, problem = mlxcfg.select_tool(self.module, self.module.params["tool"], self.device)
        if problem:
            self.fail(problem)
        self.result["tool"] = name
        self.runner = Runner(self.module, name)
        if self.device is not None:
            info = mlxcfg.resolve_device(self.device, self.tree)
            res, parsed, dev = self.query(info["target"])
            if dev is None:
                functions = mlxcfg.sysfs_functions(self.tree) if self.tree.is_dir() else None
                self.fail(self.explain(info["target"], parsed, res, info["physfn"], functions), res)
            self.result["devices"].append(device_entry(info["target"], info, dev))
            return self.result
        failures = []
        for function in mlxcfg.sysfs_functions(self.tree):
            info = dict(function, target=function["pci_address"])
            res, parsed, dev = self.query(info["target"])
            entry = device_entry(info["target"], info, dev)
            if dev is None:
                entry["error"] = self.explain(info["target"], parsed, res)
                failures.append((entry["error"], res))
                self.module.warn(entry["error"])
            self.result["devices"].append(entry)
        if failures and len(failures) == len(self.result["devices"]):
            self.fail(failures[0][0], failures[0][1])
        return self.result


def main():
    module = AnsibleModule(argument_spec=argument_spec(), supports_check_mode=True)
    module.exit_json(**MlxconfigInfo(module).gather())


if __name__ == "__main__":
    main()
