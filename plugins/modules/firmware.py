#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

# The documentation of the action plugin plugins/action/firmware.py, the step of the role fabric.infiniband.firmware.

from __future__ import annotations

DOCUMENTATION = r"""
module: firmware
short_description: The firmware role's step, checks, firmware query, plan, burns and record
version_added: 0.3.0
description:
  - The step of the role P(fabric.infiniband.firmware#role), which reads its settings (C(firmware_versions), C(firmware_images),
    C(firmware_image_dir), C(firmware_image_url), C(firmware_cache_dir), C(firmware_tool), C(firmware_image_query_tool),
    C(firmware_allow_psid_change)) from the task's variables.
  - Checks the rules and the image entries, where the images are, and the images the cards need (from the running version and PSID
    in the fact C(infiniband_hca), read with M(fabric.infiniband.hca_info) when this run has no current reading) against their
    sha256 in C(firmware_image_dir) on the controller, and, where the controller has C(mstflint) or C(flint)
    (C(firmware_image_query_tool)), against the PSID and version each file holds. Refuses, naming the variable, before anything
    is written.
  - Then reads the cards the rules name with M(fabric.infiniband.firmware_info), one query per card, and plans from what their
    flash holds. When no card needs a burn, records what waits for an activation with M(fabric.infiniband.pending_action) (entry
    C(firmware)), or removes the entry; else returns the plan (RV(burns), RV(images)) for the role's tasks that put the images on
    the node.
  - With O(plan), burns the plan's images with M(fabric.infiniband.firmware_burn) (from C(firmware_cache_dir) on the node) and
    records what waits. Never activates the new firmware and never reboots.
author:
  - fabric.infiniband developers (@fabric-infiniband)
options:
  plan:
    description:
      - The RV(plan) of the role's first task (the step without O(plan)), once the images are in C(firmware_cache_dir). It burns
        the plan's C(burns) and record what waits. Nothing is read or checked again.
    type: dict
extends_documentation_fragment:
  - fabric.infiniband.role_step
seealso:
  - module: fabric.infiniband.firmware_info
  - module: fabric.infiniband.firmware_burn
  - module: fabric.infiniband.pending_action
"""

EXAMPLES = r"""
- name: Check, read and plan (the role's first task; use the role)
  fabric.infiniband.firmware:
  register: __firmware_step
  vars:
    firmware_versions: [{psid: MT_0000000223, version: "20.40.1000"}]
    firmware_images:
      - {file: fw-ConnectX6-rel-20_40_1000-MCX653106A-HDA_Ax.bin, psid: MT_0000000223, version: "20.40.1000", sha256: "<64 hex>"}
    firmware_image_dir: /srv/firmware

- name: Burn and record, once the images are on the node (the role's last task)
  fabric.infiniband.firmware:
    plan: "{{ __firmware_step.plan }}"
  when: __firmware_step.burns | length > 0
"""

RETURN = r"""
plan:
  description:
    - What each card gets (C(cards)), with C(burns), C(waiting) and C(problems), as C(plan) of C(plugin_utils/firmware.py) returns
      it. In O(preflight), planned from the running version in sysfs.
    - Each card has C(card), C(device), C(model), C(psid), C(running), C(flash), C(rule), C(wanted), C(at_least), C(image) and
      C(action), one of V(ok), V(burn), V(waits) (its flash holds the version, an activation runs it) or V(unmatched).
  returned: without O(plan)
  type: dict
  sample: {cards: [], burns: [], waiting: [], problems: []}
burns:
  description: The cards to burn, each with its image (the entry of C(firmware_images), with its C(index)).
  returned: without O(plan)
  type: list
  elements: dict
  sample: []
images:
  description: The images the burns need, once each (what goes into C(firmware_cache_dir)).
  returned: without O(plan)
  type: list
  elements: dict
  sample: [{file: fw-ConnectX6-rel-20_40_1000-MCX653106A-HDA_Ax.bin, psid: MT_0000000223, version: "20.40.1000", index: 0}]
burnt:
  description: With O(plan), each burn's device, the version on its flash, whether it waits and what activates it.
  returned: with O(plan)
  type: list
  elements: dict
  sample: [{device: "0000:3b:00.0", version: "20.40.1000", pending: true, activation: firmware reset}]
unmatched_rules:
  description:
    - The rules of C(firmware_versions) that name no card of any host of the play (by PSID or model), each with C(rule) (its
      index), C(where), C(psid) or C(model), C(version) and C(at_least). Judged from every host's reading (this run's, or a
      fact cache's); when every host of the play has one, the step warns of them (a rule that matches nothing burns nothing).
    - The same goes into the fact C(infiniband_firmware_unmatched) (C(rules), C(seen) and C(unseen) hosts, C(run_id)), which
      the report can show.
  returned: without O(plan) and O(preflight), when C(firmware_versions) is not empty
  type: list
  elements: dict
  sample: [{rule: 1, where: "firmware_versions[1]", psid: MT_0000000233, version: "20.40.1000", at_least: false}]
ran:
  description: The modules the step ran on the node, in order, with a label and whether each changed something.
  returned: always
  type: list
  elements: dict
  sample: [{module: fabric.infiniband.firmware_info, label: read the firmware of the cards the rules name, changed: false,
            failed: false}]
ansible_facts:
  description:
    - The facts of the modules it ran (C(infiniband_hca), C(infiniband_pending)), and C(infiniband_firmware_unmatched) (see
      RV(unmatched_rules)).
  returned: when a module ran
  type: dict
  sample: {}
"""
