#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

# The documentation of the action plugin plugins/action/ipoib.py, the one task of the role fabric.infiniband.ipoib.

from __future__ import annotations

DOCUMENTATION = r"""
module: ipoib
short_description: The ipoib role's step, checks, plan, network stack files and interfaces brought up, in one task
version_added: 0.3.0
description:
  - The one task of the role P(fabric.infiniband.ipoib#role), which reads its settings (C(ipoib_config), C(ipoib_mtu),
    C(ipoib_mode), C(ipoib_network_stack), C(ipoib_take_over), C(ipoib_apply_now)) from the task's variables.
  - Refuses, naming the variable, what the role's checks refuse before anything is read or written (keys, P_Keys, MTUs,
    addresses, overlapping subnets, an address inside the range a NetworkAttachmentDefinition hands to pods on the same
    partition).
  - Reads the adapters with M(fabric.infiniband.hca_info) unless this run has a current reading, resolves each port to its
    netdev and refuses an address that another interface uses, of this host, of the other hosts of the play or of the
    inventory's other hosts (by their published C(ipoib_interfaces), else their inventory's C(ipoib_config)); publishes
    C(ipoib_interfaces).
  - Finds the network stack (C(ipoib_network_stack)), refuses another configuration of the same interfaces unless
    C(ipoib_take_over), writes the stack's files where they differ from what the role renders and removes the role's files
    that no interface needs (tag C(ipoib_persist)).
  - With C(ipoib_apply_now), brings the interfaces up through the stack, then applies with C(ip) what is still missing (tag
    C(ipoib_runtime)). C(--tags ipoib_plan) only checks, plans and publishes.
author:
  - fabric.infiniband developers (@fabric-infiniband)
extends_documentation_fragment:
  - fabric.infiniband.role_step
seealso:
  - module: fabric.infiniband.hca_info
"""

EXAMPLES = r"""
- name: The IPoIB interfaces (the role's task; use the role)
  fabric.infiniband.ipoib:
  vars:
    ipoib_config:
      - device: "0000:3b:00.0"
        addresses: ["10.10.0.5/24"]

- name: Only the checks of the settings (the whole-run preflight)
  fabric.infiniband.ipoib:
    preflight: true
"""

RETURN = r"""
plan:
  description: The interfaces, one entry per port with its netdev, MTU, mode, addresses and PKey children.
  returned: when not O(preflight)
  type: list
  elements: dict
stack:
  description: The network stack that persists the interfaces.
  returned: when ipoib_config lists ports and the files or the interfaces are in the run's tags
  type: str
  sample: networkd
ran:
  description: The modules the step ran on the node, in order, with a label and whether each changed something.
  returned: always
  type: list
  elements: dict
  sample: [{module: fabric.infiniband.hca_info, label: read the adapters, changed: false, failed: false}]
ansible_facts:
  description: The interfaces, for the NetworkAttachmentDefinitions and later runs' checks.
  returned: when not O(preflight)
  type: dict
  contains:
    ipoib_interfaces:
      description:
        - One entry per port with C(pci_address), C(rdma_device), C(port), C(netdev), C(addresses) and C(children)
          (C(pkey), C(name), C(addresses)).
      type: list
      elements: dict
"""
