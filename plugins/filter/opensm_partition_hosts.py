# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
name: opensm_partition_hosts
short_description: Validate OpenSM partitions from inventory and list the hosts their members name
version_added: 0.1.0
author: fabric.infiniband developers (@fabric-infiniband)
description:
  - Checks C(opensm_partitions) and C(opensm_default_partition) as the filter C(fabric.infiniband.opensm_partitions) does,
    without the port GUIDs, and returns the inventory hosts (sorted) whose port GUIDs the members need, directly or
    through a group.
  - Fails on invalid input with a message that names the entry and the accepted values.
options:
  _input:
    description: The partitions (C(opensm_partitions)).
    type: list
    elements: dict
    required: true
  groups:
    description: The inventory groups (C(groups)).
    type: dict
    default: {}
  hosts:
    description: The inventory hosts (C(groups.all)).
    type: list
    elements: str
    default: []
  default:
    description: The Default partition's settings (C(opensm_default_partition)).
    type: dict
    default: {}
  allow_both_pkeys:
    description: Whether OpenSM runs with C(allow_both_pkeys), which membership V(both) needs.
    type: bool
    default: false
"""

EXAMPLES = r"""
- name: Check the partitions and find the hosts to discover
  ansible.builtin.set_fact:
    __hosts: "{{ opensm_partitions | fabric.infiniband.opensm_partition_hosts(groups=groups, hosts=groups['all']) }}"
"""

RETURN = r"""
_value:
  description: Inventory hosts named by the members, directly or through a group, sorted.
  type: list
  elements: str
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.fabric.infiniband.plugins.module_utils import opensm


def opensm_partition_hosts(partitions, groups=None, hosts=None, default=None, allow_both_pkeys=False):
    try:
        return opensm.check_partitions(partitions, groups=groups, hosts=hosts, default=default, allow_both=allow_both_pkeys)
    except ValueError as exc:
        raise AnsibleFilterError(str(exc)) from None


class FilterModule:
    def filters(self):
        return {"opensm_partition_hosts": opensm_partition_hosts}
