#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
module: firmware_info
short_description: Read the firmware version and PSID of NVIDIA/Mellanox adapters
version_added: 0.1.0
description:
  - Reads, per adapter card, the firmware version it runs, the version waiting on its flash for the next activation (after a
    burn), its PSID (the board's firmware identity) and image type, with C(flint) (NVIDIA MFT) or C(mstflint) (mstflint).
  - Runs one query per card (C(flint -d <device> q)); firmware is per card, so a dual-port card is queried once, through
    its first physical function.
  - Reads the output of every release of these tools, with C(FW Version(Running)) (printed only while a burnt image waits)
    or without, and blanks that publishers or terminals changed (TABs, squeezed padding, CRLF).
  - Never changes anything.
author:
  - fabric.infiniband developers (@fabric-infiniband)
extends_documentation_fragment:
  - fabric.infiniband.attributes
  - fabric.infiniband.attributes.info_module
  - fabric.infiniband.flint_tool
  - fabric.infiniband.sysfs
options:
  device:
    description:
      - The adapter to query, as a PCI address (V(0000:3b:00.0) or V(3b:00.0)), an MST device path (V(/dev/mst/mt4123_pciconf0),
        MFT only, after C(mst start)), or an RDMA device name (V(mlx5_0)).
      - An RDMA device name that sysfs knows is passed to the tool as its PCI address. Anything else is passed as given; the
        tool decides whether the device exists.
      - Without it, every NVIDIA/Mellanox adapter card found in sysfs is queried, once, through its lowest physical function.
    type: str
  devices:
    description:
      - The adapters to query, each written as O(device) is; one query per card, however many of its functions are listed.
      - A card that cannot be queried gets RV(devices[].error) instead of failing the task, unless none can be.
      - Mutually exclusive with O(device). Without both, every NVIDIA/Mellanox adapter card found in sysfs is queried.
    type: list
    elements: str
  images:
    description:
      - Firmware image files on the node to read (C(flint -i <image> q), one query per file), so that each card lists the images it
        could take, those with its PSID (RV(devices[].images)). RV(images) has what each file holds.
    type: list
    elements: path
    default: []
  full:
    description:
      - Run the full query (C(q full)), which adds the part number and the card's description to the result.
    type: bool
    default: false
seealso:
  - module: fabric.infiniband.firmware_burn
  - module: fabric.infiniband.hca_info
"""

EXAMPLES = r"""
- name: Read the firmware of every adapter card
  fabric.infiniband.firmware_info:
  register: __fw

- name: Cards where a burnt firmware waits for a reboot or a firmware reset
  ansible.builtin.debug:
    msg: "{{ __fw.devices | selectattr('pending') | map(attribute='pci_address') | list }}"

- name: The images in the node's cache that each card could take (those with its PSID)
  fabric.infiniband.firmware_info:
    images:
      - /var/lib/fabric-infiniband/firmware/fw-ConnectX6-rel-20_40_1000-MCX653106A-HDA_Ax.bin
      - /var/lib/fabric-infiniband/firmware/fw-ConnectX7-rel-28_39_1002-MCX75310AAS-NEA_Ax.bin
  register: __fw_images

- name: One card, with its part number and description, through mstflint
  fabric.infiniband.firmware_info:
    device: mlx5_0
    full: true
    tool: mstflint
"""

RETURN = r"""
devices:
  description:
    - One entry per queried card, in PCI address order when every card is queried.
  returned: always
  type: list
  elements: dict
  contains:
    device:
      description: The device as the tool was given it.
      type: str
      sample: "0000:3b:00.0"
    pci_address:
      description: Full PCI address of the function queried, V(null) when neither the device argument nor sysfs tells it.
      type: str
      sample: "0000:3b:00.0"
    rdma_devices:
      description: RDMA devices of the card's physical functions according to sysfs.
      type: list
      elements: str
      sample: ["mlx5_0", "mlx5_1"]
    running_version:
      description: The firmware version the card runs now.
      type: str
      sample: "20.39.1002"
    flash_version:
      description: The firmware version on the card's flash (C(FW Version)), the one it runs after its next activation.
      type: str
      sample: "20.40.1000"
    pending_version:
      description: The version on the flash when it differs from the running one (a burnt image waits for activation), else V(null).
      type: str
      sample: "20.40.1000"
    pending:
      description: Whether a burnt image waits for a reboot, a firmware reset or a power cycle.
      type: bool
      sample: true
    psid:
      description: The PSID (board firmware identity) on the flash, for example V(MT_0000000223); OEM cards have their vendor's.
      type: str
      sample: MT_0000000223
    orig_psid:
      description: The original PSID when the tool prints one that differs (a card flashed with another PSID), else V(null).
      type: str
      sample: null
    image_type:
      description: The firmware image format, V(FS2) (ConnectX-3), V(FS3) (ConnectX-4), V(FS4) or V(FS5).
      type: str
      sample: FS4
    product_version:
      description: The product version the tool prints, V(null) when it prints none.
      type: str
      sample: "20.40.1000"
    part_number:
      description: The card's part number, only with O(full=true) (V(null) otherwise).
      type: str
      sample: MCX653106A-HDA_Ax
    description:
      description: The card's description, only with O(full=true) (V(null) otherwise).
      type: str
      sample: ConnectX-6 VPI adapter card; HDR IB (200Gb/s) and 200GbE; dual-port QSFP56; PCIe4.0 x16; tall bracket; ROHS R6
    security_attributes:
      description: The security attributes the tool prints (V(secure-fw), V(signed-fw), V(dev), V(debug)); empty for V(N/A).
      type: list
      elements: str
      sample: ["secure-fw"]
    images:
      description:
        - The files of O(images) the card could take, those with its PSID, newest version first, each with its C(path) and
          C(version); V(true) in C(newer) when that version is newer than the one on the card's flash.
      type: list
      elements: dict
      sample: [{"path": "/var/lib/fabric-infiniband/firmware/fw-ConnectX6-rel-20_40_1000.bin", "version": "20.40.1000", "newer": true}]
    error:
      description: Only when every card is queried, the reason one card could not be queried; its versions are V(null).
      type: str
      returned: on failure of one card
images:
  description: What each file of O(images) holds, in the order given; C(error) says why a file could not be read.
  returned: always
  type: list
  elements: dict
  sample: [{"path": "/var/lib/fabric-infiniband/firmware/fw-ConnectX6-rel-20_40_1000.bin", "version": "20.40.1000",
            "psid": "MT_0000000223", "image_type": "FS4", "error": null}]
tool:
  description: The tool that ran.
  returned: always
  type: str
  sample: mstflint
cmd:
  description: The last command run.
  returned: always
  type: list
  elements: str
  sample: ["/usr/bin/mstflint", "-d", "0000:3b:00.0", "q"]
cmds:
  description: Every command run, in order.
  returned: always
  type: list
  elements: list
  sample: [["/usr/bin/mstflint", "-d", "0000:3b:00.0", "q"]]
"""

import os

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.fabric.infiniband.plugins.module_utils import common
from ansible_collections.fabric.infiniband.plugins.module_utils import flint
from ansible_collections.fabric.infiniband.plugins.module_utils import mlxconfig as mlxcfg
from ansible_collections.fabric.infiniband.plugins.module_utils import pci
from ansible_collections.fabric.infiniband.plugins.module_utils import sysfs
from ansible_collections.fabric.infiniband.plugins.module_utils._runner import Runner, ToolModule


FIELDS = ("running_version", "flash_version", "pending_version", "psid", "orig_psid", "image_type", "product_version",
          "part_number", "description", "security_attributes")


def argument_spec():
    spec = common.merge_specs(common.SYSFS_ARG_SPEC, flint.TOOL_ARG_SPEC)
    spec.update(
        device=dict(type="str"),
        devices=dict(type="list", elements="str"),
        images=dict(type="list", elements="path", default=[]),
        full=dict(type="bool", default=False),
    )
    return spec


def cards(functions):
    """One ``{pci_address, rdma_devices}`` per card: its lowest function, with the RDMA devices of all of them."""
    out = {}
    for fn in sorted(functions, key=lambda item: item["pci_address"]):
        key = pci.card(fn["pci_address"]) or fn["pci_address"]
        if key not in out:
            out[key] = {"pci_address": fn["pci_address"], "rdma_devices": []}
        out[key]["rdma_devices"].extend(fn["rdma_devices"])
    return [out[key] for key in sorted(out)]


def device_entry(target, info, parsed):
    entry = {"device": target, "pci_address": info.get("pci_address"), "rdma_devices": sorted(info.get("rdma_devices") or [])}
    for key in FIELDS:
        entry[key] = (parsed or {}).get(key)
    entry["security_attributes"] = entry["security_attributes"] or []
    entry["pending"] = bool(entry["pending_version"])
    return entry


class FirmwareInfo(ToolModule):

    def __init__(self, module):
        self.module = module
        self.tree = sysfs.Sysfs(module.params["sysfs_root"])
        self.device = module.params["device"]
        self.result = dict(changed=False, devices=[], images=[], tool=None, cmd=[], cmds=[])
        self.runner = None

    def query(self, target):
        """``(res, parsed, why not)``: one query of one card."""
        res = self.run(flint.query_args(target, full=self.module.params["full"]))
        parsed = flint.parse_query(res.stdout, res.stderr)
        if res.rc != 0 or parsed["errors"] or not flint.version_tuple(parsed["flash_version"] or ""):
            errors = parsed["errors"] or ([] if res.rc != 0 else ["no firmware version in the output"])
            why = flint.explain_failure(self.result["tool"], target, errors, res.rc, res.stdout, lockdown=self.tree.lockdown())
            return res, parsed, why
        return res, parsed, None

    def read_images(self):
        """What each file of ``images`` holds, one query per file."""
        for path in self.module.params["images"]:
            entry = {"path": path, "version": None, "psid": None, "image_type": None, "error": None}
            if not os.path.isfile(path):
                entry["error"] = "not a file on the node"
            else:
                res = self.run(flint.image_query_args(path))
                img = flint.parse_query(res.stdout, res.stderr)
                entry["error"] = flint.image_error(res.rc, img)
                if not entry["error"]:
                    entry.update(version=img["flash_version"], psid=img["psid"], image_type=img["image_type"])
            self.result["images"].append(entry)
        for device in self.result["devices"]:
            psid = str(device.get("psid") or "").upper()
            fits = [i for i in self.result["images"] if i["psid"] and psid and i["psid"].upper() == psid]
            fits.sort(key=lambda i: flint.version_tuple(i["version"]), reverse=True)
            device["images"] = [{"path": i["path"], "version": i["version"],
                                 "newer": bool(device.get("flash_version")) and flint.compare_versions(i["version"], device["flash_version"]) > 0}
                                for i in fits]
        return self.result

    def gather(self):
        self.cards()
        return self.read_images()

    def cards(self):
        problem = mlxcfg.device_problem(self.device) if self.device is not None else None
        if problem:
            self.fail(problem)
        name, _path, problem = flint.select_tool(self.module, self.module.params["tool"], self.device)
        if problem:
            self.fail(problem)
        self.result["tool"] = name
        self.runner = Runner(self.module, name)
        if self.device is not None:
            info = mlxcfg.resolve_device(self.device, self.tree)
            res, parsed, why = self.query(info["target"])
            if why:
                self.fail(why, res)
            self.result["devices"].append(device_entry(info["target"], info, parsed))
            return self.result
        if self.module.params["devices"] is not None:
            listed = []
            for device in self.module.params["devices"]:
                problem = mlxcfg.device_problem(device)
                if problem:
                    self.fail("devices: %s" % problem)
                info = mlxcfg.resolve_device(device, self.tree)
                listed.append({"pci_address": info["pci_address"] or info["target"], "rdma_devices": info.get("rdma_devices") or []})
            todo = cards(listed)
        else:
            todo = cards(mlxcfg.sysfs_functions(self.tree))
        failures = []
        for card in todo:
            res, parsed, why = self.query(card["pci_address"])
            entry = device_entry(card["pci_address"], card, None if why else parsed)
            if why:
                entry["error"] = why
                failures.append((why, res))
                self.module.warn(why)
            self.result["devices"].append(entry)
        if failures and len(failures) == len(self.result["devices"]):
            self.fail(failures[0][0], failures[0][1])
        return self.result


def main():
    module = AnsibleModule(argument_spec=argument_spec(), supports_check_mode=True, mutually_exclusive=[("device", "devices")])
    module.exit_json(**FirmwareInfo(module).gather())


if __name__ == "__main__":
    main()
