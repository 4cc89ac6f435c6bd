# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
name: opensm_partitions
short_description: Validate OpenSM partitions from inventory and write them as partitions.conf
version_added: 0.1.0
author: fabric.infiniband developers (@fabric-infiniband)
description:
  - Takes the list of partitions of the opensm role (C(opensm_partitions)) and returns the content of OpenSM's
    C(partitions.conf), with the Default partition (P_Key 0x7fff) always first.
  - Each partition has a C(name) and a C(pkey) from 0x0001 to 0x7ffe, both unique, optional multicast group parameters for
    its IPoIB broadcast group (C(ipoib), C(mtu) in bytes, C(rate) in Gb/s, C(sl), C(scope)), an optional C(defmember) and
    C(members).
  - A member is a port GUID, an inventory host or group (resolved to the port GUIDs of its physical functions and, unless
    C(functions) says otherwise, its VF GUIDs), or one of the keywords C(ALL), C(ALL_CAS), C(ALL_SWITCHES), C(ALL_ROUTERS),
    C(SELF); as a dict it can carry C(membership) (V(full), V(limited), or V(both) with O(allow_both_pkeys)) and
    C(functions) (V(all), V(pf), V(vf)).
  - Fails on invalid input with a message that names the entry and the accepted values, and when a port would be in more
    than 128 partitions.
options:
  _input:
    description: The partitions (C(opensm_partitions)).
    type: list
    elements: dict
    required: true
  pf_guids:
    description: Inventory host to the port GUIDs of its physical functions (discovered), for every host the members name.
    type: dict
    default: {}
  vf_guids:
    description: Inventory host to its VF GUIDs (C(sriov_vf_guids), published by the sriov role).
    type: dict
    default: {}
  groups:
    description: The inventory groups (C(groups)).
    type: dict
    default: {}
  hosts:
    description: The inventory hosts; defaults to the keys of O(pf_guids).
    type: list
    elements: str
  default:
    description: The Default partition's settings (C(opensm_default_partition)).
    type: dict
    default: {}
  allow_both_pkeys:
    description: Whether OpenSM runs with C(allow_both_pkeys), which membership V(both) needs.
    type: bool
    default: false
  header:
    description: Comment lines put at the top of the file.
    type: str
"""

EXAMPLES = r"""
- name: Render the partitions
  ansible.builtin.set_fact:
    __partitions: >-
      {{ [{'name': 'storage', 'pkey': '0x0010', 'ipoib': true, 'members': ['node01', '0x0c42a10300aa0010']}]
         | fabric.infiniband.opensm_partitions(pf_guids={'node01': ['0x0c42a10300aa0011']}, groups=groups, hosts=groups['all']) }}
"""

RETURN = r"""
_value:
  description: The file and what it holds.
  type: dict
  contains:
    content:
      description: The text of C(partitions.conf).
      type: str
    partitions:
      description: Per partition C(name), C(pkey) (C(0x%04x)), the member C(guids), C(keywords) and C(flags).
      type: list
      elements: dict
    max_per_port:
      description: The largest number of partitions one port is in, the Default partition included.
      type: int
    warnings:
      description: Partitions left out because no member resolved to a GUID yet.
      type: list
      elements: str
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.fabric.infiniband.plugins.module_utils import opensm


def opensm_partitions(partitions, pf_guids=None, vf_guids=None, groups=None, hosts=None, default=None, allow_both_pkeys=False, header=None):
    try:
        return opensm.render_partitions(partitions, pf_guids=pf_guids, vf_guids=vf_guids, groups=groups, hosts=hosts, default=default,
                                        allow_both=allow_both_pkeys, header=header)
    except ValueError as exc:
        raise AnsibleFilterError(str(exc)) from None


class FilterModule:
    def filters(self):
        return {"opensm_partitions": opensm_partitions}
