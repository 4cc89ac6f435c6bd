# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
name: sriov_duplicate_guids
short_description: Find VF GUIDs that more than one host would use
version_added: 0.1.0
author: fabric.infiniband developers (@fabric-infiniband)
description:
  - Takes a mapping of host name to the list of its VF GUIDs (the C(guids) of P(fabric.infiniband.sriov_plan#filter)) and
    returns one message per GUID that two or more hosts share, for the P(fabric.infiniband.sriov#role) role's check across
    the play before anything is written.
options:
  _input:
    description: Host name to list of GUIDs.
    type: dict
    required: true
"""

EXAMPLES = r"""
- name: Every VF GUID of the play is used once
  ansible.builtin.assert:
    that: __dupes | length == 0
    fail_msg: "VF GUIDs used by more than one host: {{ __dupes | join('; ') }}"
  vars:
    __dupes: "{{ {'node01': ['0x02fa000000010000'], 'node02': ['0x02fa000000010000']} | fabric.infiniband.sriov_duplicate_guids }}"
"""

RETURN = r"""
_value:
  description: One C(<guid> on <host>, <host>) message per shared GUID, sorted; empty when every GUID is used once.
  type: list
  elements: str
"""


def sriov_duplicate_guids(guids_by_host):
    owners = {}
    for host in sorted(guids_by_host or {}):
        for guid in guids_by_host[host] or []:
            owners.setdefault(str(guid).lower(), []).append(host)
    return ["%s on %s" % (guid, ", ".join(hosts)) for guid, hosts in sorted(owners.items()) if len(set(hosts)) > 1]


class FilterModule:
    def filters(self):
        return {"sriov_duplicate_guids": sriov_duplicate_guids}
