# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""SR-IOV of a PF: the kernel's rules for ``sriov_numvfs``, VF GUIDs, and the fleet's GUID scheme.

Pure functions, shared by the ``sriov_vfs`` module (what to write) and the ``sriov_guids``
filter (which GUIDs a host's VFs get). Reads and writes of sysfs are in ``sysfs.py``; the
``ip link`` argv and parser in ``iplink.py``.

GUID scheme (documented in the sriov role's README): a VF GUID is 8 bytes::

    <prefix: 2 bytes> <host id: 4 bytes> <PF index: 1 byte> <VF index: 1 byte>

The prefix must be locally administered (bit 0x02 of the first byte set), so no VF GUID can
equal a vendor-assigned PF GUID. The host id is given per host, or derived from the host's
inventory name (the first 4 bytes of its SHA-256); derived ids can collide, which the role's
uniqueness check across the play reports before anything is written.
"""

from __future__ import annotations

import hashlib

from ansible_collections.fabric.infiniband.plugins.module_utils import guid

MAX_PF_INDEX = 0xFF
MAX_VF_INDEX = 0xFF


def format_guid(number):
    """``0x`` and 16 lower-case hex digits (module_utils/guid.py)."""
    return guid.to_text(number)


# ------------------------------------------------------------------ the VF count

def count_writes(current, want, total, allow_recreate):
    """The writes to ``sriov_numvfs`` that take ``current`` VFs to ``want``, or (None, why).

    The kernel refuses a new non-zero count while VFs exist (EBUSY), so a change between two
    non-zero counts is 0 then ``want``: every VF is destroyed and made again, which takes them
    from the pods that use them; that needs ``allow_recreate``.
    """
    if want == current:
        return [], None
    if total is not None and want > total:
        return None, ("num_vfs %d is more than the PF allows: sriov_totalvfs is %d (the firmware's NUM_OF_VFS; "
                      "raise it with the sriov role or mlxconfig and reboot)" % (want, total))
    if want == 0 or current == 0:
        return [want], None
    if not allow_recreate:
        return None, ("the PF has %d VFs and num_vfs is %d: the kernel only changes the count through 0, which "
                      "destroys every VF and takes them from the pods using them; set allow_recreate "
                      "(the sriov role's sriov_allow_vf_recreate) to do that" % (current, want))
    return [0, want], None


# ------------------------------------------------------------------ per-VF settings

def desired_vfs(num_vfs, vfs, default_link_state=None):
    """The module's ``vfs`` list -> ({index: {node_guid, port_guid, link_state}}, errors).

    ``guid`` sets node and port GUID to the same value (what sriov-network-operator does);
    ``node_guid``/``port_guid`` set them apart. Fields left out are not managed.
    """
    errors = []
    out = {}
    for pos, item in enumerate(vfs or []):
        index = item.get("index")
        where = "vfs[%d]" % pos
        if index is None or index < 0 or index >= num_vfs:
            errors.append("%s.index %s is not a VF of this PF: accepted 0 to %d (num_vfs %d)"
                          % (where, index, num_vfs - 1, num_vfs) if num_vfs else
                          "%s: num_vfs is 0, so there is no VF to set" % where)
            continue
        if index in out:
            errors.append("%s.index %d appears twice in vfs" % (where, index))
            continue
        entry = {"node_guid": None, "port_guid": None, "link_state": item.get("link_state") or default_link_state}
        if item.get("guid") is not None and (item.get("node_guid") is not None or item.get("port_guid") is not None):
            errors.append("%s: give guid, or node_guid and port_guid, not both" % where)
            continue
        for key, src in (("node_guid", "guid"), ("port_guid", "guid"), ("node_guid", "node_guid"),
                         ("port_guid", "port_guid")):
            if item.get(src) is None:
                continue
            try:
                entry[key] = guid.require(item[src], "%s.%s" % (where, src))
            except guid.GuidError as exc:
                if str(exc) not in errors:  # guid is read twice, for the node and the port GUID
                    errors.append(str(exc))
        out[index] = entry
    if default_link_state:
        for index in range(num_vfs):
            out.setdefault(index, {"node_guid": None, "port_guid": None, "link_state": default_link_state})
    seen = {}
    for index, entry in sorted(out.items()):
        for key in ("node_guid", "port_guid"):
            value = entry[key]
            if value is None:
                continue
            other = seen.setdefault((key, value), index)
            if other != index:
                errors.append("vfs: %s %s is given to VF %d and VF %d; every VF needs its own" % (key, value, other, index))
    return out, errors


def vf_changes(have, want):
    """The fields of one VF to set: those ``want`` names that differ from ``have`` (admin values)."""
    return {key: value for key, value in want.items() if value is not None and have.get(key) != value}


def needs_rebind(vf, want):
    """Whether a bound VF's RDMA device still shows GUIDs other than the ones wanted: the
    driver reads them when it binds, so a rebind makes them take effect."""
    if not vf.get("driver") or not vf.get("rdma_device"):
        return False
    for key, active in (("node_guid", "active_node_guid"), ("port_guid", "active_port_guid")):
        if want.get(key) is not None and vf.get(active) not in (None, want[key]):
            return True
    return False


# ------------------------------------------------------------------ the fleet's GUID scheme

def parse_prefix(value, where):
    """``0x02fa``/``02:fa`` -> int, or ``guid.GuidError`` naming ``where``; must be locally administered."""
    number = guid.require_prefix(value, where)
    if not (number >> 8) & 0x02:
        raise guid.GuidError(
            "%s %r: its first byte 0x%02x is not locally administered (bit 0x02 unset), so VF GUIDs could equal "
            "vendor-assigned ones; use a first byte such as 0x02, 0x06, 0x0a or 0xfa" % (where, value, number >> 8))
    return number


def host_id(name):
    """The derived host id: the first 4 bytes of the SHA-256 of the inventory name."""
    return int(hashlib.sha256(name.encode("utf-8")).hexdigest()[:8], 16)


def scheme_guid(prefix, host, pf_index, vf_index):
    """``<prefix 2 bytes><host id 4 bytes><PF index 1 byte><VF index 1 byte>``."""
    return (prefix << 48) | ((host & 0xFFFFFFFF) << 16) | ((pf_index & 0xFF) << 8) | (vf_index & 0xFF)
