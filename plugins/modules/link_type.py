#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

# The documentation of the action plugin plugins/action/link_type.py, the one task of the role fabric.infiniband.link_type.

from __future__ import annotations

DOCUMENTATION = r"""
module: link_type
short_description: The link_type role's step, plan, firmware writes and record, in one task
version_added: 0.3.0
description:
  - The one task of the role P(fabric.infiniband.link_type#role), which reads its settings (C(link_type_default),
    C(link_type_adapters), C(link_type_tool), C(link_type_allow_fw_reset)) from the task's variables.
  - Plans the link type of every port of every card from the fact C(infiniband_hca) (read with M(fabric.infiniband.hca_info) when
    this run has no current reading), refusing an adapter selector that matches no card of the host.
  - Runs M(fabric.infiniband.mlxconfig) once per card whose firmware it asks, writing C(LINK_TYPE_Pn) only where it differs; with
    C(link_type_allow_fw_reset), resets the firmware of the cards that wait (M(fabric.infiniband.fw_reset)) and reads them again.
  - Records what waits for a reboot with M(fabric.infiniband.pending_action) (entry C(link_type)), or removes the entry once the
    firmware runs the link types; fails when a port's link layer differs from what its firmware runs.
  - Never reboots.
author:
  - fabric.infiniband developers (@fabric-infiniband)
extends_documentation_fragment:
  - fabric.infiniband.role_step
seealso:
  - module: fabric.infiniband.mlxconfig
  - module: fabric.infiniband.pending_action
"""

EXAMPLES = r"""
- name: Set the link types (the role's task; use the role)
  fabric.infiniband.link_type:
  vars:
    link_type_default: ib
    link_type_tool: auto
    link_type_allow_fw_reset: false
    link_type_adapters: []
"""

RETURN = r"""
plan:
  description: One entry per card, with the link types and the parameters asked of it.
  returned: always
  type: list
  elements: dict
  sample: [{card: "0000:3b:00", device: "0000:3b:00.0", model: ConnectX-6, params: {LINK_TYPE_P1: IB}, query: true}]
status:
  description: The cards that run their link types (C(live)), wait for a reboot (C(pending)) or have none (C(unsupported)).
  returned: when not O(preflight)
  type: dict
  sample: {live: ["0000:3b:00.0"], pending: [], unsupported: [], power_cycle: false, mismatches: [], reason: ""}
ran:
  description: The modules the step ran on the node, in order, with a label and whether each changed something.
  returned: always
  type: list
  elements: dict
  sample: [{module: fabric.infiniband.mlxconfig, label: LINK_TYPE of 0000:3b:00.0 (ConnectX-6), changed: false, failed: false}]
ansible_facts:
  description: C(link_type_waiting), the cards whose link types wait for a reboot, and the facts of the modules it ran.
  returned: when not O(preflight)
  type: dict
  sample: {link_type_waiting: []}
"""
