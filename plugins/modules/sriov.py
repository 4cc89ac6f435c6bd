#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

# The documentation of the action plugin plugins/action/sriov.py, the one task of the role fabric.infiniband.sriov.

from __future__ import annotations

DOCUMENTATION = r"""
module: sriov
short_description: The sriov role's step, plan, GUID checks, firmware, record, VFs and boot unit, in one task
version_added: 0.3.0
description:
  - The one task of the role P(fabric.infiniband.sriov#role), which reads its settings (C(sriov_pfs), C(sriov_guid_mode),
    C(sriov_guid_prefix), C(sriov_guid_host_id), C(sriov_link_state), C(sriov_firmware), C(sriov_firmware_num_vfs), C(sriov_tool),
    C(sriov_allow_vf_recreate), C(sriov_allow_guid_change), C(sriov_rebind), C(sriov_persist)) from the task's variables.
  - Plans the VFs of each PF, their GUIDs and each card's C(SRIOV_EN) and C(NUM_OF_VFS) from the fact C(infiniband_hca) (read with
    M(fabric.infiniband.hca_info) when this run has no current reading), refusing bad settings with the variable's name.
  - Refuses, before anything is written, a VF GUID used twice on the fabric, whatever consent is given, against every other
    host of the inventory, also outside the play (C(--limit), a job slice), by its plan from its settings (with its reading of
    the adapters where the scheme needs one, this run's or a fact cache's), the C(sriov_vf_guids) it published (this run or a
    fact cache), and every known physical port GUID.
  - Refuses to change the GUIDs existing VFs carry without C(sriov_allow_guid_change), and, with it too, while hosts of the
    inventory cannot be seen (their GUIDs need a reading of their adapters that this run lacks, and they published none),
    naming them.
  - Publishes C(sriov_vf_guids) and C(sriov_state) (also with O(preflight)).
  - Runs M(fabric.infiniband.mlxconfig) once per card whose firmware allows fewer VFs than asked, and records what waits for a
    reboot with M(fabric.infiniband.pending_action) (entry C(sriov)), or removes the entry once nothing does.
  - Makes the VFs of each PF whose firmware allows them now (M(fabric.infiniband.sriov_vfs)) and installs the boot-time unit
    C(fabric-infiniband-sriov.service), or removes it when no PF is listed or C(sriov_persist=false); the unit goes with the
    last PF's run (O(fabric.infiniband.sriov_vfs#module:boot_unit)), so a node with one PF runs one module for both, and
    with M(fabric.infiniband.boot_unit) alone when no PF gets its VFs now. Fails when a PF's firmware allows fewer VFs than
    asked and no firmware change waits.
  - Never reboots.
options:
  firmware_only:
    description:
      - Stop after the firmware and its record (the role's entry point C(firmware)); no VF is made and the unit is left as it is.
    type: bool
    default: false
author:
  - fabric.infiniband developers (@fabric-infiniband)
extends_documentation_fragment:
  - fabric.infiniband.role_step
seealso:
  - module: fabric.infiniband.mlxconfig
  - module: fabric.infiniband.sriov_vfs
  - module: fabric.infiniband.boot_unit
  - module: fabric.infiniband.pending_action
"""

EXAMPLES = r"""
- name: Make the VFs (the role's task; use the role)
  fabric.infiniband.sriov:
  vars:
    sriov_pfs:
      - {pf: "0000:3b:00.0", num_vfs: 8}

- name: Only the checks and the plan, on every node before any change
  fabric.infiniband.sriov:
    preflight: true
"""

RETURN = r"""
plan:
  description:
    - The plan (P(fabric.infiniband.sriov_plan#filter)), with C(pfs), C(cards) (the cards whose firmware changes), C(guids),
      C(boot) (what the boot-time unit reads) and C(operator_pool) (sriov-network-operator's GUID pool).
  returned: always
  type: dict
  sample: {pfs: [], cards: [], guids: [], boot: {pfs: []}, operator_pool: []}
firmware:
  description: The cards whose SR-IOV settings wait for a reboot (C(waiting), C(cards)), whether one needs a power cycle.
  returned: when the firmware step ran
  type: dict
  sample: {waiting: ["0000:3b:00.0"], cards: ["0000:3b:00"], power_cycle: false, reason: "", stuck_msg: ""}
fleet_unseen:
  description:
    - The hosts of the inventory whose VF GUIDs this run cannot know (outside the play with no reading of their adapters and
      nothing published, or with a GUID setting this run's extra vars give); a GUID change is refused while there is one.
  returned: when the plan gives VF GUIDs
  type: list
  elements: str
  sample: [node07]
ran:
  description: The modules the step ran on the node, in order, with a label and whether each changed something.
  returned: always
  type: list
  elements: dict
  sample: [{module: fabric.infiniband.sriov_vfs, label: VFs of 0000:3b:00.0 (4), changed: false, failed: false}]
ansible_facts:
  description: C(sriov_vf_guids) (every VF GUID of the host) and C(sriov_state) (per PF, its VFs), and the facts of the modules it ran.
  returned: always
  type: dict
  sample: {sriov_vf_guids: ["0x02fa0a0b0c0d0000"], sriov_state: []}
"""
