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
  - With O(known) and O(hca), also against what the other hosts of the inventory are known to use, whatever C(--limit) or job slice
    this run has, so that a GUID is unique on the fabric and not only in the play.
options:
  _input:
    description: Host name to list of GUIDs.
    type: dict
    required: true
  known:
    description:
      - Host name to the VF GUIDs the host published earlier (its fact C(sriov_vf_guids), from this run or Ansible's fact cache), for
        the hosts that are not in O(_input).
    type: dict
    default: {}
  hca:
    description:
      - Host name to its fact C(infiniband_hca) (from M(fabric.infiniband.hca_info), this run or a fact cache). The port GUIDs and node
        GUIDs of its physical functions count as used by C(<host> PF), so that no VF gets a GUID of a physical port of any host.
    type: dict
    default: {}
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
  description:
    - One C(<guid> on <host>, <host>) message per shared GUID, sorted; empty when every GUID is used once. A physical function's GUID
      is named C(<host> PF).
  type: list
  elements: str
"""


def _pf_guids(hca):
    """The node and port GUIDs of the physical functions in a hca_info fact."""
    guids = set()
    for entry in (hca or {}).get("hcas") or []:
        if not isinstance(entry, dict) or entry.get("is_vf"):
            continue
        guids.add(entry.get("node_guid"))
        guids.update(port.get("port_guid") for port in entry.get("ports") or [] if isinstance(port, dict))
    guids.discard(None)
    guids.discard("0x0000000000000000")
    return guids


def sriov_duplicate_guids(guids_by_host, known=None, hca=None):
    owners = {}
    vf_hosts = dict(known or {})
    vf_hosts.update(guids_by_host or {})
    for host in sorted(vf_hosts):
        for guid in vf_hosts[host] or []:
            owners.setdefault(str(guid).lower(), []).append(host)
    # A PF GUID counts once per host however many ports show it; only a VF GUID can make it a duplicate.
    for host in sorted(hca or {}):
        for guid in sorted(_pf_guids(hca[host])):
            if str(guid).lower() in owners:
                owners[str(guid).lower()].append("%s PF" % host)
    return ["%s on %s" % (guid, ", ".join(hosts)) for guid, hosts in sorted(owners.items()) if len(set(hosts)) > 1]


class FilterModule:
    def filters(self):
        return {"sriov_duplicate_guids": sriov_duplicate_guids}
