# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
name: sriov_plan
short_description: Decide the VFs, VF GUIDs and SR-IOV firmware settings of a host
version_added: 0.1.0
author: fabric.infiniband developers (@fabric-infiniband)
description:
  - Takes the result of M(fabric.infiniband.hca_info) and the P(fabric.infiniband.sriov#role) role's C(sriov_pfs), and returns
    what the role writes, per PF (VF count, GUIDs, link state) and per card (the firmware's C(SRIOV_EN) and C(NUM_OF_VFS)).
  - C(NUM_OF_VFS) is one value per card, applied to each of its PFs, so it is the largest VF count any PF of the card asks
    for (or O(firmware_num_vfs) when that is larger). A card is left out of C(cards) when the firmware it runs already allows
    that many (C(sriov_totalvfs) in sysfs), since lowering C(NUM_OF_VFS) would cost a reboot and gain nothing.
  - GUIDs come from the PF's C(guids) list when given, else from the scheme C(<prefix 2 bytes><host id 4 bytes><PF index>
    <VF index>) with O(guid_mode=scheme), else none (O(guid_mode=none), for sites where ib-kubernetes or the CNI sets them).
    The PF index is the PF's position among the host's NVIDIA/Mellanox PFs in PCI order.
  - Bad input fails with a message that names the variable and what it accepts.
options:
  _input:
    description: The registered result of M(fabric.infiniband.hca_info).
    type: dict
    required: true
  pfs:
    description: The role's C(sriov_pfs).
    type: list
    elements: dict
    required: true
  guid_mode:
    description: V(scheme) or V(none).
    type: str
    default: scheme
  guid_prefix:
    description: The scheme's 2-byte prefix, locally administered.
    type: str
    default: "0x02fa"
  host_id:
    description: The scheme's host id (0 to 4294967295); derived from O(host_name) when V(null).
    type: int
  host_name:
    description: The inventory name, from which the host id is derived.
    type: str
    required: true
  link_state:
    description: The link state of VFs whose PF entry does not give one (V(auto), V(enable), V(disable)).
    type: str
    default: auto
  firmware_num_vfs:
    description: A floor for C(NUM_OF_VFS) of every card with a PF in O(pfs) (0 for none).
    type: int
    default: 0
  allow_vf_recreate:
    description:
      - The role's C(sriov_allow_vf_recreate). Without it, a PF that has VFs now and is asked for another non-zero count is
        refused here, before any firmware write or reboot, since the kernel changes the count only through 0, which destroys every
        VF of the PF (M(fabric.infiniband.sriov_vfs) refuses the same change when its turn comes).
    type: bool
    default: true
"""

EXAMPLES = r"""
- name: Plan the VFs of this host
  ansible.builtin.set_fact:
    __plan: "{{ __hca | fabric.infiniband.sriov_plan([{'pf': '0000:3b:00.0', 'num_vfs': 4}], host_name=inventory_hostname) }}"
"""

RETURN = r"""
_value:
  description: The plan.
  type: dict
  contains:
    pfs:
      description:
        - One entry per PF in O(pfs) with C(pf) (PCI address), C(card), C(pf_index), C(rdma_device), C(netdev), C(num_vfs),
          C(link_state), C(total_vfs) (what sysfs allows now, V(null) while SR-IOV is off), C(ready_now) (whether the
          firmware allows the VFs now) and C(vfs) (the module's C(vfs)).
      type: list
      elements: dict
    cards:
      description:
        - One entry per card whose firmware must change, with C(device), C(card), C(model), C(total_vfs) (what it runs now)
          and C(params) for M(fabric.infiniband.mlxconfig).
      type: list
      elements: dict
    guids:
      description: Every VF GUID of the host, V(0x) and 16 hex digits, in PF and VF order.
      type: list
      elements: str
    boot:
      description: What the role's boot-time unit reads, C(pfs) with C(pf), C(num_vfs), C(link_state) and C(vfs) per PF.
      type: dict
    operator_pool:
      description: The entries of sriov-network-operator's static GUID pool file, C(pci_address) and C(guids) per PF.
      type: list
      elements: dict
"""

from ansible.errors import AnsibleFilterError
from ansible.module_utils.parsing.convert_bool import boolean

from ansible_collections.fabric.infiniband.plugins.module_utils import guid
from ansible_collections.fabric.infiniband.plugins.module_utils import pci
from ansible_collections.fabric.infiniband.plugins.module_utils import sriov

LINK_STATES = ("auto", "enable", "disable")
PF_KEYS = ("pf", "num_vfs", "link_state", "guids")
MAX_VFS = 127  # the largest NUM_OF_VFS of any ConnectX (mlxconfig rejects more)


def _pfs_of_host(hca):
    """The host's NVIDIA/Mellanox PFs in PCI order, each with the names it can be given by."""
    out = []
    for entry in hca.get("hcas") or []:
        if entry.get("is_vf") or not entry.get("pci_address") or not entry.get("model"):
            continue
        out.append(entry)
    out.sort(key=lambda e: e["pci_address"])
    return out


def _find(pfs, name, where):
    try:
        text = pci.selector(name, where).lower()
    except pci.PciAddressError as exc:
        raise AnsibleFilterError(str(exc)) from None
    for index, entry in enumerate(pfs):
        names = {entry["pci_address"].lower(), str(entry.get("rdma_device") or "").lower()}
        names.update(n.lower() for n in entry.get("netdevs") or [])
        if text in names:
            return index, entry
    return None, None


def _check_int(value, where, low, high):
    if isinstance(value, bool) or not isinstance(value, int):
        try:
            value = int(str(value), 10)
        except ValueError:
            raise AnsibleFilterError("%s must be a whole number from %d to %d, got %r" % (where, low, high, value)) from None
    if not low <= value <= high:
        raise AnsibleFilterError("%s must be from %d to %d, got %d" % (where, low, high, value))
    return value


def _recreate_problem(where, entry, num):
    """The refusal of a change between two non-zero VF counts without consent (module_utils/sriov.py decides), or None."""
    current = (entry.get("sriov") or {}).get("num_vfs") or 0
    _writes, why = sriov.count_writes(current, num, None, False)
    if not why:
        return None
    return ("%s.num_vfs is %d, but PF %s (%s) has %d VFs now: the kernel changes a VF count only through 0, which destroys every "
            "VF of the PF and takes them from the pods using them. Accepted: num_vfs %d (as now) or 0 (remove them); any other "
            "count with sriov_allow_vf_recreate: true, after draining the node. Nothing was changed."
            % (where, num, entry["pci_address"], entry.get("rdma_device"), current, current))


def sriov_plan(hca, pfs, host_name, guid_mode="scheme", guid_prefix="0x02fa", host_id=None, link_state="auto",
               firmware_num_vfs=0, allow_vf_recreate=True):
    if not isinstance(hca, dict) or "hcas" not in hca:
        raise AnsibleFilterError("sriov_plan expects the registered result of fabric.infiniband.hca_info")
    if not isinstance(pfs, list):
        raise AnsibleFilterError("sriov_pfs must be a list of mappings with pf and num_vfs, got %s" % type(pfs).__name__)
    if guid_mode not in ("scheme", "none"):
        raise AnsibleFilterError("sriov_guid_mode must be scheme or none, got %r" % (guid_mode,))
    if link_state not in LINK_STATES:
        raise AnsibleFilterError("sriov_link_state must be one of %s, got %r" % (", ".join(LINK_STATES), link_state))
    floor = _check_int(firmware_num_vfs, "sriov_firmware_num_vfs", 0, MAX_VFS)
    prefix = None
    if guid_mode == "scheme":
        try:
            prefix = sriov.parse_prefix(guid_prefix, "sriov_guid_prefix")
        except guid.GuidError as exc:
            raise AnsibleFilterError(str(exc)) from None
        host = sriov.host_id(host_name) if host_id is None else _check_int(host_id, "sriov_guid_host_id", 0, 0xFFFFFFFF)
    host_pfs = _pfs_of_host(hca)
    plan = {"pfs": [], "cards": [], "guids": []}
    cards = {}
    seen = {}
    for pos, item in enumerate(pfs):
        where = "sriov_pfs[%d]" % pos
        if not isinstance(item, dict):
            raise AnsibleFilterError("%s must be a mapping with pf and num_vfs" % where)
        unknown = sorted(set(item) - set(PF_KEYS))
        if unknown:
            raise AnsibleFilterError("%s has unknown keys %s; accepted: %s" % (where, ", ".join(unknown), ", ".join(PF_KEYS)))
        if "pf" not in item or "num_vfs" not in item:
            raise AnsibleFilterError("%s needs pf (PCI address, RDMA device or netdev) and num_vfs" % where)
        num = _check_int(item["num_vfs"], where + ".num_vfs", 0, MAX_VFS)
        index, entry = _find(host_pfs, item["pf"], where + ".pf")
        if entry is None:
            raise AnsibleFilterError("%s.pf %s is not a PF of this host; its PFs: %s" % (
                where, item["pf"], ", ".join("%s (%s)" % (e["pci_address"], e.get("rdma_device")) for e in host_pfs) or "none"))
        if entry["pci_address"] in seen:
            raise AnsibleFilterError("%s.pf %s is the same PF as sriov_pfs[%d]" % (where, item["pf"], seen[entry["pci_address"]]))
        seen[entry["pci_address"]] = pos
        if not boolean(allow_vf_recreate, strict=False):
            why = _recreate_problem(where, entry, num)
            if why:
                raise AnsibleFilterError(why)
        state = item.get("link_state", link_state)
        if state not in LINK_STATES:
            raise AnsibleFilterError("%s.link_state must be one of %s, got %r" % (where, ", ".join(LINK_STATES), state))
        ports = entry.get("ports") or []
        ib = bool(ports) and ports[0].get("link_layer") == "InfiniBand"
        guids = []
        if item.get("guids") is not None:
            given = item["guids"]
            if not isinstance(given, list) or len(given) < num:
                raise AnsibleFilterError("%s.guids must list at least num_vfs (%d) GUIDs, one per VF" % (where, num))
            # every GUID listed is checked, also those beyond num_vfs (kept for later): a typo fails now
            try:
                checked = [guid.require(value, "%s.guids[%d]" % (where, vf)) for vf, value in enumerate(given)]
            except guid.GuidError as exc:
                raise AnsibleFilterError(str(exc)) from None
            guids = checked[:num]
        elif guid_mode == "scheme" and ib:
            guids = [sriov.format_guid(sriov.scheme_guid(prefix, host, index, vf)) for vf in range(num)]
        if guids and not ib:
            raise AnsibleFilterError("%s.guids: %s is not an InfiniBand port (%s); VF GUIDs exist on InfiniBand ports only"
                                     % (where, entry["pci_address"], ports[0].get("link_layer") if ports else "no port"))
        sriov_files = entry.get("sriov") or {}
        plan["pfs"].append({
            "pf": entry["pci_address"], "card": entry["card_address"], "pf_index": index,
            "rdma_device": entry.get("rdma_device"), "netdev": (ports[0].get("netdev") if ports else None),
            "num_vfs": num, "link_state": state, "total_vfs": sriov_files.get("total_vfs"),
            "ready_now": num == 0 or (sriov_files.get("total_vfs") or 0) >= num,
            "vfs": [{"index": vf, "guid": value} for vf, value in enumerate(guids)],
        })
        plan["guids"].extend(guids)
        card = cards.setdefault(entry["card_address"], {"card": entry["card_address"], "model": entry["model"],
                                                        "device": None, "num_vfs": floor})
        card["num_vfs"] = max(card["num_vfs"], num)
    for address in sorted(cards):
        card = cards[address]
        functions = [e for e in host_pfs if e["card_address"] == address]
        # the card's first function carries its firmware configuration
        card["device"] = functions[0]["pci_address"]
        # sriov_totalvfs is the NUM_OF_VFS the firmware runs (no file while SRIOV_EN is off); enough is
        # enough: a firmware that allows more VFs than asked for is left alone, rather than a reboot to lower it
        totals = [(e.get("sriov") or {}).get("total_vfs") for e in functions]
        card["total_vfs"] = None if None in totals else min(totals)
        card["params"] = {"SRIOV_EN": "True", "NUM_OF_VFS": card["num_vfs"]}
        if card["num_vfs"] and (card["total_vfs"] or 0) < card["num_vfs"]:
            plan["cards"].append(card)
    plan["boot"] = {"pfs": [{key: pf[key] for key in ("pf", "num_vfs", "link_state", "vfs")} for pf in plan["pfs"]]}
    plan["operator_pool"] = [{"pci_address": pf["pf"], "guids": [guid.colon_form(vf["guid"]) for vf in pf["vfs"]]}
                             for pf in plan["pfs"] if pf["vfs"]]
    dupes = sorted({g for g in plan["guids"] if plan["guids"].count(g) > 1})
    if dupes:
        raise AnsibleFilterError("sriov_pfs: the GUIDs %s are given to more than one VF of this host" % ", ".join(dupes))
    return plan


class FilterModule:
    def filters(self):
        return {"sriov_plan": sriov_plan}
