# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
name: firmware_others
short_description: The firmware parameters other roles published for this run, per card
version_added: 0.2.0
author: fabric.infiniband developers (@fabric-infiniband)
description:
  - Takes the fact C(infiniband_firmware_wanted) (P(fabric.infiniband.firmware_wanted#filter)) and returns the parameters every role
    but O(role) published for each card, merged, when the fact belongs to the current run; V({}) otherwise.
  - The P(fabric.infiniband.link_type#role) role writes them in the same C(set) as the link types.
options:
  _input:
    description: The fact, or nothing.
    type: raw
    required: true
  role:
    description: The role asking, whose own parameters are left out.
    type: str
    required: true
"""

EXAMPLES = r"""
- name: Write the link types with the other roles' parameters for the same card
  fabric.infiniband.mlxconfig:
    device: 0000:3b:00.0
    params: "{{ {'LINK_TYPE_P1': 'IB'} | combine(__others['0000:3b:00.0'] | default({})) }}"
  vars:
    __others: "{{ infiniband_firmware_wanted | default(none) | fabric.infiniband.firmware_others('link_type') }}"
"""

RETURN = r"""
_value:
  description: Card (PCI address of its first function) to parameters.
  type: dict
"""

from ansible_collections.fabric.infiniband.plugins.plugin_utils import node_state


def firmware_others(fact, role):
    if not node_state.is_current(fact):
        return {}
    merged = {}
    for name in sorted(fact.get("roles") or {}):
        if name == role:
            continue
        for device, params in (fact["roles"][name] or {}).items():
            merged.setdefault(device, {}).update(params or {})
    return merged


class FilterModule:
    def filters(self):
        return {"firmware_others": firmware_others}
