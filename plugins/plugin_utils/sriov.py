# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
name: sriov_guid_changes
short_description: The VFs of a host whose GUIDs the sriov plan would change, and where the old and new GUIDs come from
version_added: 0.1.0
author: fabric.infiniband developers (@fabric-infiniband)
description:
  - Takes the plan of P(fabric.infiniband.sriov_plan#filter) and the node's fact C(infiniband_hca) (read from sysfs by
    M(fabric.infiniband.hca_info) in this run), and returns one line per PF whose existing VFs show a GUID (not zero) other
    than the one the plan gives them, for the P(fabric.infiniband.sriov#role) role, which refuses such a change without
    its consent C(sriov_allow_guid_change), since the VFs are unbound and bound again (taken from the pods that use them), and
    OpenSM partitions and ib-kubernetes know them by their old GUIDs.
  - Says where the old and the new GUIDs come from. A GUID of the scheme C(<prefix><host id><PF index><VF index>) shows its
    host id, and the inventory name it is derived from when one of O(names) gives it (renaming a host in the inventory
    changes its derived host id, hence every VF GUID of the host); otherwise it is a list of C(sriov_pfs), another prefix,
    or GUIDs set outside this role.
  - When every old GUID of the host is of the scheme with one host id, the line says how to keep them (C(sriov_guid_host_id)).
  - VFs that do not exist yet, show the zero GUID (never set) or have no RDMA device (no GUID to read) are not changes.
options:
  _input:
    description: The plan of P(fabric.infiniband.sriov_plan#filter).
    type: dict
    required: true
  hca:
    description: The node's fact C(infiniband_hca).
    type: dict
    required: true
  host_name:
    description: The inventory name (C(inventory_hostname)).
    type: str
    required: true
  pfs:
    description: The role's C(sriov_pfs), in the order the plan lists the PFs.
    type: list
    elements: dict
    default: []
  guid_prefix:
    description: The role's C(sriov_guid_prefix).
    type: str
    default: "0x02fa"
  host_id:
    description: The role's C(sriov_guid_host_id) (V(null) when derived from O(host_name)).
    type: int
  names:
    description: The inventory's host names, to name the one an old host id is derived from.
    type: list
    elements: str
    default: []
"""

EXAMPLES = r"""
- name: Refuse to change VF GUIDs without consent
  ansible.builtin.assert:
    that: __changes | length == 0
    fail_msg: "{{ __changes | join('; ') }}"
  vars:
    __changes: >-
      {{ __plan | fabric.infiniband.sriov_guid_changes(ansible_facts.infiniband_hca, host_name=inventory_hostname,
         pfs=sriov_pfs, guid_prefix=sriov_guid_prefix, host_id=sriov_guid_host_id, names=groups['all']) }}
"""

RETURN = r"""
_value:
  description:
    - One line per PF with changes, naming the PF, the indexes of its VFs that change, the GUIDs they carry and where
      those come from, and the GUIDs this run gives them and where those come from; and, when the host's old GUIDs all
      have one scheme host id, a last line that says how to keep them. Empty when nothing existing changes.
  type: list
  elements: str
"""

from ansible_collections.fabric.infiniband.plugins.module_utils import guid, sriov


def _number(text):
    text = guid.normalize(text) if text else None
    number = None if text is None else int(text, 16)
    return number or None  # a VF without a GUID shows the zero GUID


def _scheme(number, prefix, pf_index, vf_index):
    """The host id of a GUID of the scheme at this PF and VF position, else None."""
    if number is None or prefix is None or number >> 48 != prefix:
        return None
    if (number >> 8) & 0xFF != pf_index & 0xFF or number & 0xFF != vf_index & 0xFF:
        return None
    return (number >> 16) & 0xFFFFFFFF


def _named(host, names):
    found = sorted(n for n in names or [] if sriov.host_id(str(n)) == host)
    return " (derived from the inventory name %s)" % ", ".join(found) if found else ""


def sriov_guid_changes(plan, hca, host_name, pfs=None, guid_prefix="0x02fa", host_id=None, names=None):
    try:
        prefix = sriov.parse_prefix(guid_prefix, "sriov_guid_prefix")
    except guid.GuidError:
        prefix = None  # the plan refuses it; no VF GUID then counts as derived by the scheme
    derived = sriov.host_id(host_name)
    by_address = {str(e.get("pci_address") or "").lower(): e for e in (hca or {}).get("hcas") or [] if isinstance(e, dict)}
    pfs = pfs or []
    lines, old_ids = [], set()
    for pos, pf in enumerate((plan or {}).get("pfs") or []):
        entry = by_address.get(str(pf.get("pf")).lower()) or {}
        vf_addresses = ((entry.get("sriov") or {}).get("vfs")) or []
        changed = []
        for vf in pf.get("vfs") or []:
            index, want = vf.get("index"), vf.get("guid")
            if not want or index is None or index >= len(vf_addresses):
                continue
            now = (by_address.get(str(vf_addresses[index]).lower()) or {}).get("node_guid")
            number = _number(now)
            if number is None or number == _number(want):
                continue
            changed.append((index, sriov.format_guid(number), str(want).lower(), _scheme(number, prefix, pf.get("pf_index", 0), index)))
        if not changed:
            continue
        item = pfs[pos] if pos < len(pfs) and isinstance(pfs[pos], dict) else {}
        if item.get("guids") is not None:
            new_from = "sriov_pfs[%d].guids" % pos
            old_ids.add(None)  # a host id would not keep a list's GUIDs
        elif host_id is not None:
            new_from = "the scheme with sriov_guid_host_id %d (0x%08x)" % (int(host_id), int(host_id))
        else:
            new_from = "the scheme with host id 0x%08x, derived from the inventory name %s" % (derived, host_name)
        ids = sorted({c[3] for c in changed if c[3] is not None})
        if len(ids) == len({c[3] for c in changed}) and ids:
            old_ids.update(ids)
            elsewhere = ", not derived from %s: the host was renamed in the inventory, or sriov_guid_host_id changed" % host_name
            old_from = "; ".join("the scheme with host id 0x%08x%s" % (i, _named(i, set(names or []) | {host_name}) or elsewhere)
                                 for i in ids)
        else:
            old_ids.add(None)
            old_from = "not this prefix's scheme at this position: a guids list of sriov_pfs, another sriov_guid_prefix, " \
                       "or set outside this role"
        lines.append("%s: VFs %s carry %s (%s); this run gives them %s (%s)" % (
            pf.get("pf"), ", ".join(str(c[0]) for c in changed), ", ".join(c[1] for c in changed), old_from,
            ", ".join(c[2] for c in changed), new_from))
    if lines and len(old_ids) == 1 and None not in old_ids:
        (old,) = old_ids
        lines.append("to keep the GUIDs the VFs carry, set sriov_guid_host_id: %d (0x%08x) for %s" % (old, old, host_name))
    return lines


class FilterModule:
    def filters(self):
        return {"sriov_guid_changes": sriov_guid_changes}
