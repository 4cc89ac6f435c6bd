#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
module: firmware_burn
short_description: Burn a firmware image on an NVIDIA/Mellanox adapter when its version differs
version_added: 0.1.0
description:
  - Burns a firmware image file, already on the managed node, on one adapter card with C(flint) (NVIDIA MFT) or C(mstflint)
    (mstflint), only when the card does not already have that version.
  - Queries the card and the image first (C(flint -d <device> q), C(flint -i <image> q)). The card's version is the one on
    its flash, the one it runs after its next activation; when it equals the image's, nothing is burnt, and RV(pending) tells
    whether that version still waits for an activation.
  - Refuses, before anything is written, an image whose PSID differs from the card's, unless O(allow_psid_change=true).
  - Burns with C(-y) (C(flint -d <device> -i <image> -y burn)), then queries the card again and fails unless its flash holds
    the image's version. A burn that fails leaves the card with the image it had (the tools burn the other flash bank and
    switch only at the end); running the task again retries it.
  - Never activates the new firmware; no reset and no reboot. RV(activation) says what does.
author:
  - fabric.infiniband developers (@fabric-infiniband)
extends_documentation_fragment:
  - fabric.infiniband.attributes
  - fabric.infiniband.flint_tool
  - fabric.infiniband.sysfs
attributes:
  check_mode:
    support: full
    details:
      - Queries the card and the image and reports whether it would burn, with the same refusals, without burning.
  diff_mode:
    support: full
    details:
      - The diff shows the firmware version and PSID on the card's flash before and after (V(current -> target)).
options:
  device:
    description:
      - The adapter card, as a PCI address (V(0000:3b:00.0) or V(3b:00.0)), an MST device path (V(/dev/mst/mt4123_pciconf0),
        MFT only, after C(mst start)), or an RDMA device name (V(mlx5_0)). Any physical function of the card names it.
      - An RDMA device name that sysfs knows is passed to the tool as its PCI address.
    type: str
    required: true
  image:
    description:
      - Path of the firmware image file on the managed node (a C(.bin) image of the card's model).
    type: path
    required: true
  image_version:
    description:
      - The version the image must hold, as the inventory names it. An image whose query shows another version is refused before
        anything is written (a file that is not the one meant).
      - In check mode, when O(image) is not on the node yet (the same run copies it there), O(image_version) and O(image_psid)
        stand for the image's query.
    type: str
  image_psid:
    description:
      - The PSID the image must hold, as the inventory names it; an image with another PSID is refused before anything is written.
      - See O(image_version) for check mode.
    type: str
  allow_psid_change:
    description:
      - Burn an image whose PSID differs from the card's (C(--allow_psid_change)). This is the only way past a PSID mismatch.
      - The PSID names the board the firmware was built for. Burning another one cross-flashes the card; an OEM card (Dell, HPE,
        Lenovo...) then runs the firmware of another board, which may not match its hardware (ports, power and thermal limits),
        may leave it unusable, and loses its vendor's support. Leave it V(false) unless the vendor documents that change.
    type: bool
    default: false
notes:
  - The new firmware runs after a reboot, a firmware reset (C(mlxfwreset)/C(mstfwreset), see M(fabric.infiniband.fw_reset))
    where the card supports one, or a power cycle where warm reboots do not reload it. RV(activation) is what the tool named.
seealso:
  - module: fabric.infiniband.firmware_info
  - module: fabric.infiniband.fw_reset
"""

EXAMPLES = r"""
- name: Burn the pinned firmware on the first card
  fabric.infiniband.firmware_burn:
    device: "0000:3b:00.0"
    image: /var/lib/firmware-images/fw-ConnectX6-rel-20_40_1000-MCX653106A-HDA_Ax.bin
  register: __burn

- name: Say what activates it
  ansible.builtin.debug:
    msg: "{{ __burn.previous_version }} -> {{ __burn.version }}, runs after a {{ __burn.activation }}"
  when: __burn.pending

- name: Cross-flash a card to another PSID, with the vendor's blessing
  fabric.infiniband.firmware_burn:
    device: mlx5_2
    image: /var/lib/firmware-images/fw-ConnectX5-rel-16_35_4030-MCX556A-ECA_Ax.bin
    allow_psid_change: true
    tool: mstflint
"""

RETURN = r"""
changed:
  description: Whether an image was burnt (or, in check mode, would be).
  returned: always
  type: bool
  sample: true
device:
  description: The device as the tool was given it.
  returned: always
  type: str
  sample: "0000:3b:00.0"
pci_address:
  description: Full PCI address of the function, V(null) when neither the device argument nor sysfs tells it.
  returned: always
  type: str
  sample: "0000:3b:00.0"
running_version:
  description: The firmware version the card runs now (a burn does not change it).
  returned: always
  type: str
  sample: "20.39.1002"
previous_version:
  description: The version on the card's flash before the task.
  returned: always
  type: str
  sample: "20.39.1002"
version:
  description: The image's version, on the card's flash after the task (in check mode, after a burn).
  returned: always
  type: str
  sample: "20.40.1000"
psid:
  description: The PSID on the card's flash before the task.
  returned: always
  type: str
  sample: MT_0000000223
image_psid:
  description: The PSID of the image.
  returned: always
  type: str
  sample: MT_0000000223
psid_changed:
  description: Whether the burn replaced the card's PSID (only with O(allow_psid_change=true)).
  returned: always
  type: bool
  sample: false
pending:
  description: Whether the image's version waits for an activation (the card does not run it yet).
  returned: always
  type: bool
  sample: true
activation:
  description:
    - What activates the waiting version, V(null) when nothing waits.
    - V(firmware reset) when the tool names C(mlxfwreset)/C(mstfwreset) (a reboot works too), V(reboot) when it asks for a
      system-level reset, V(power cycle) when it asks for one. Without a burn in this run (check mode, or a version that
      already waited), V(reboot).
  returned: always
  type: str
  sample: firmware reset
activation_message:
  description: The tool's own words after the burn (C(To load new FW, ...)), V(null) without a burn.
  returned: always
  type: str
  sample: To load new FW, issue system-level reset or use mlxfwreset where applicable.
burn_cmd:
  description: The burn command, run or (in check mode) that would run; V(null) when nothing is to burn.
  returned: always
  type: list
  elements: str
  sample: ["/usr/bin/mstflint", "-d", "0000:3b:00.0", "-i", "/var/lib/fw.bin", "-y", "burn"]
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
  sample: [["/usr/bin/mstflint", "-d", "0000:3b:00.0", "q"], ["/usr/bin/mstflint", "-i", "/var/lib/fw.bin", "q"]]
diff:
  description: With C(--diff), the version and PSID on the card's flash before and after.
  returned: when diff mode is on
  type: dict
  sample:
    before: {version: "20.39.1002", psid: MT_0000000223}
    after: {version: "20.40.1000", psid: MT_0000000223}
"""

import os

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.fabric.infiniband.plugins.module_utils import common
from ansible_collections.fabric.infiniband.plugins.module_utils import flint
from ansible_collections.fabric.infiniband.plugins.module_utils import mlxconfig as mlxcfg
from ansible_collections.fabric.infiniband.plugins.module_utils import sysfs
from ansible_collections.fabric.infiniband.plugins.module_utils._runner import Runner, ToolModule


def argument_spec():
    spec = common.merge_specs(common.SYSFS_ARG_SPEC, flint.TOOL_ARG_SPEC)
    spec.update(
        device=dict(type="str", required=True),
        image=dict(type="path", required=True),
        image_version=dict(type="str"),
        image_psid=dict(type="str"),
        allow_psid_change=dict(type="bool", default=False),
    )
    return spec


class FirmwareBurn(ToolModule):

    def __init__(self, module):
        self.module = module
        self.tree = sysfs.Sysfs(module.params["sysfs_root"])
        self.device = module.params["device"]
        self.image = module.params["image"]
        self.target = None
        self.result = dict(changed=False, device=None, pci_address=None, running_version=None, previous_version=None,
                           version=None, psid=None, image_psid=None, psid_changed=False, pending=False, activation=None,
                           activation_message=None, burn_cmd=None, tool=None, cmd=[], cmds=[])
        self.runner = None

    def why(self, errors, res):
        return flint.explain_failure(self.result["tool"], self.target, errors, res.rc, res.stdout,
                                     lockdown=self.tree.lockdown(), image=self.image)

    def query_card(self):
        res = self.run(flint.query_args(self.target))
        card = flint.parse_query(res.stdout, res.stderr)
        if res.rc != 0 or card["errors"] or not flint.version_tuple(card["flash_version"] or ""):
            self.fail(self.why(card["errors"] or ["no firmware version in the output"], res), res)
        return card

    def query_image(self):
        version, psid = self.module.params["image_version"], self.module.params["image_psid"]
        if not os.path.isfile(self.image) and self.module.check_mode and version and psid:
            return {"flash_version": version, "psid": psid}  # copied by the same run: what it will be
        if not os.path.isfile(self.image):
            self.fail("image: %s is not a file on the node: copy the firmware image there first" % self.image)
        res = self.run(flint.image_query_args(self.image))
        img = flint.parse_query(res.stdout, res.stderr)
        said = flint.image_error(res.rc, img)
        if said:
            self.fail("image: %s cannot read %s as a firmware image (%s)" % (self.result["tool"], self.image, said), res)
        for what, wanted, found in flint.image_mismatches(img, version=version, psid=psid):
            self.fail("image: %s holds %s %s, but image_%s says %s: not burnt; check the file and the entry that names it" % (
                self.image, what, found, what, wanted))
        return img

    def burn(self):
        res = self.run(flint.burn_args(self.target, self.image, self.module.params["allow_psid_change"]), mutating=True)
        done = flint.parse_burn(res.stdout, res.stderr)
        if res.rc != 0 or done["errors"] or not done["done"]:
            self.fail("burn failed: %s" % self.why(done["errors"] or ["the tool did not report the image written"], res), res)
        return done

    def apply(self):
        problem = mlxcfg.device_problem(self.device)
        if problem:
            self.fail(problem)
        name, _path, problem = flint.select_tool(self.module, self.module.params["tool"], self.device)
        if problem:
            self.fail(problem)
        self.result["tool"] = name
        self.runner = Runner(self.module, name)
        info = mlxcfg.resolve_device(self.device, self.tree)
        self.target = info["target"]
        self.result.update(device=self.target, pci_address=info["pci_address"])

        card = self.query_card()
        img = self.query_image()
        target = img["flash_version"]
        self.result.update(running_version=card["running_version"], previous_version=card["flash_version"],
                           version=target, psid=card["psid"], image_psid=img["psid"])
        psid_change = bool(card["psid"] and img["psid"] != card["psid"])
        if psid_change and not self.module.params["allow_psid_change"]:
            self.fail("image %s has PSID %s, card %s has PSID %s: not burnt. Only allow_psid_change=true burns an image of "
                      "another PSID, and %s" % (self.image, img["psid"], self.target, card["psid"], flint.PSID_RISK))
        burn = card["flash_version"] != target or psid_change
        if burn:
            self.result["burn_cmd"] = self.runner.argv(flint.burn_args(self.target, self.image,
                                                                       self.module.params["allow_psid_change"]))
        activation = None
        if burn and not self.module.check_mode:
            done = self.burn()
            activation = done["activation"] or "reboot"
            self.result["activation_message"] = done["activation_message"]
            after = self.query_card()
            if after["flash_version"] != target:
                self.fail("the burn on %s did not take: after it, the flash holds %s, expected %s"
                          % (self.target, after["flash_version"], target))
        pending = card["running_version"] != target
        self.result.update(changed=burn, pending=pending, psid_changed=burn and psid_change,
                           activation=(activation or "reboot") if pending else None)
        if self.module._diff:
            self.result["diff"] = {
                "before": {"version": card["flash_version"], "psid": card["psid"]},
                "after": {"version": target, "psid": img["psid"] if burn else card["psid"]},
                "before_header": "%s firmware on flash" % self.target,
                "after_header": "%s firmware on flash" % self.target,
            }
        return self.result


def main():
    module = AnsibleModule(argument_spec=argument_spec(), supports_check_mode=True)
    module.exit_json(**FirmwareBurn(module).apply())


if __name__ == "__main__":
    main()
