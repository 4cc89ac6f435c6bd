# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
name: firmware_wanted
short_description: Publish a role's firmware parameters per card, for one write per card in a run
version_added: 0.2.0
author: fabric.infiniband developers (@fabric-infiniband)
description:
  - A role that plans firmware parameters (P(fabric.infiniband.sriov#role)) publishes them with this filter in the fact
    C(infiniband_firmware_wanted), stamped with the current run (P(fabric.infiniband.run_id#lookup)). The role that writes a card's
    firmware first in the run (P(fabric.infiniband.link_type#role)) takes every other role's parameters for that card into the same
    C(set) (P(fabric.infiniband.firmware_others#filter)), so that a card gets one write per converge.
  - Takes the current fact (or nothing) and returns it with O(role)'s parameters replaced by O(params). A fact from another run is
    dropped, never merged.
options:
  _input:
    description: The fact C(infiniband_firmware_wanted), or nothing.
    type: raw
    required: true
  role:
    description: The role whose parameters these are.
    type: str
    required: true
  params:
    description: Parameters per card, by the PCI address of the card's first function, for example C(0000:3b:00.0) with C(NUM_OF_VFS) V(8).
    type: dict
    required: true
"""

EXAMPLES = r"""
- name: Publish SR-IOV's firmware parameters for the card's one write
  ansible.builtin.set_fact:
    infiniband_firmware_wanted: >-
      {{ infiniband_firmware_wanted | default(none)
         | fabric.infiniband.firmware_wanted('sriov', {'0000:3b:00.0': {'SRIOV_EN': 'True', 'NUM_OF_VFS': 8}}) }}
"""

RETURN = r"""
_value:
  description: The fact, V({run_id, roles}), C(roles) by role name, each a dict of card to parameters.
  type: dict
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.fabric.infiniband.plugins.plugin_utils import node_state


def firmware_wanted(fact, role, params):
    if not isinstance(params, dict):
        raise AnsibleFilterError("firmware_wanted: params must be a dict of card to parameters, got %s" % type(params).__name__)
    roles = dict(fact.get("roles") or {}) if node_state.is_current(fact) else {}
    roles[role] = dict((str(device), dict(values or {})) for device, values in params.items())
    return {"run_id": node_state.run_id(), "roles": roles}


class FilterModule:
    def filters(self):
        return {"firmware_wanted": firmware_wanted}
