# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The PCI subsystem as sysfs shows it: functions, their bridge paths and config space.

``Pcie(root)`` reads ``<root>/bus/pci/devices/<bdf>``. The symlink's resolved target
(``devices/pci0000:16/0000:16:01.0/0000:17:00.0/...``) is the PCIe path of the function
from its host bridge down, which is how the bridges above a GPU or an HCA are found.
The binary ``config`` file is parsed for the PCI Express capability (port type) and the
ACS extended capability (ID 0x000d) with its control bits.

Like ``sysfs.Sysfs``, nothing here raises for a missing or unreadable file: values are
None. A config space shorter than the extended area (256 bytes: what an unprivileged
reader gets) leaves ACS unknown (None), not absent.
"""

from __future__ import annotations

import os
import struct

from ansible_collections.fabric.infiniband.plugins.module_utils import pci
from ansible_collections.fabric.infiniband.plugins.module_utils import sysfs


DEFAULT_ROOT = sysfs.DEFAULT_ROOT
NVIDIA_VENDOR_ID = "0x10de"
MELLANOX_VENDOR_ID = sysfs.MELLANOX_VENDOR_ID

# class code >> 8 (base class and subclass)
GPU_CLASSES = (0x0300, 0x0302)  # VGA compatible controller, 3D controller
HCA_CLASSES = (0x0207, 0x0200)  # InfiniBand controller, Ethernet controller
BRIDGE_CLASS = 0x0604  # PCI-to-PCI bridge

# PCI Express capability, Device/Port Type field (flags bits 7:4)
PORT_TYPES = {
    0x0: "endpoint",
    0x1: "legacy_endpoint",
    0x4: "root_port",
    0x5: "upstream",
    0x6: "downstream",
    0x7: "pcie_to_pci",
    0x8: "pci_to_pcie",
    0x9: "rc_endpoint",
    0xA: "rc_event_collector",
}

CAP_ID_PCIE = 0x10
EXT_CAP_ID_ACS = 0x000D
EXT_CAP_START = 0x100
# ACS Capability and Control registers share this bit layout; names as lspci -vvv prints them.
ACS_BITS = (
    ("src_valid", "SrcValid"),
    ("trans_blk", "TransBlk"),
    ("req_redir", "ReqRedir"),
    ("cmplt_redir", "CmpltRedir"),
    ("upstream_fwd", "UpstreamFwd"),
    ("egress_ctrl", "EgressCtrl"),
    ("direct_trans", "DirectTrans"),
)
# The bits that send peer-to-peer requests or completions up to the root complex.
ACS_REDIRECT = ("req_redir", "cmplt_redir")

_MAX_CAPS = 64  # guards against loops in a corrupt capability list


# ---------------------------------------------------------------- config space

def _u8(data, offset):
    return data[offset] if offset < len(data) else None


def _u16(data, offset):
    if offset + 2 > len(data):
        return None
    return struct.unpack_from("<H", data, offset)[0]


def _u32(data, offset):
    if offset + 4 > len(data):
        return None
    return struct.unpack_from("<I", data, offset)[0]


def capabilities(data):
    """Standard capability list: ``{cap_id: offset}`` (first occurrence of each)."""
    found = {}
    status = _u16(data, 0x06)
    if status is None or not status & 0x10:  # Status: Capabilities List
        return found
    ptr = _u8(data, 0x34)
    seen = 0
    while ptr and seen < _MAX_CAPS:
        ptr &= 0xFC
        cap_id = _u8(data, ptr)
        nxt = _u8(data, ptr + 1)
        if cap_id is None or nxt is None:
            break
        found.setdefault(cap_id, ptr)
        ptr = nxt
        seen += 1
    return found


def extended_capabilities(data):
    """Extended capability list: ``{cap_id: offset}``; None when the config space
    read stops before the extended area (so the list is unknown, not empty)."""
    if len(data) < EXT_CAP_START + 4:
        return None
    found = {}
    ptr = EXT_CAP_START
    seen = 0
    while ptr and seen < _MAX_CAPS:
        header = _u32(data, ptr)
        if header is None:
            return None
        if header in (0, 0xFFFFFFFF):
            break
        found.setdefault(header & 0xFFFF, ptr)
        ptr = (header >> 20) & 0xFFC
        if ptr and ptr < EXT_CAP_START:
            break
        seen += 1
    return found


def port_type(data):
    """``root_port``, ``upstream``, ``downstream``, ``endpoint``... from the PCI Express
    capability; None without one (or with too short a read)."""
    offset = capabilities(data).get(CAP_ID_PCIE)
    if offset is None:
        return None
    flags = _u16(data, offset + 2)
    if flags is None:
        return None
    return PORT_TYPES.get((flags >> 4) & 0xF, "type_%d" % ((flags >> 4) & 0xF))


def acs_bits(value):
    """ACS register value -> ``{src_valid: bool, ...}``."""
    return dict((name, bool(value & (1 << bit))) for bit, (name, _label) in enumerate(ACS_BITS))


def parse_acs(data):
    """ACS of a function from its config space.

    None when unknown (short read); ``{capable: False, <all bits False>}`` when the
    function has no ACS capability; else ``capable: True`` and the Control register's bits.
    """
    ext = extended_capabilities(data)
    if ext is None:
        return None
    offset = ext.get(EXT_CAP_ID_ACS)
    if offset is None:
        acs = acs_bits(0)
        acs["capable"] = False
        return _acs_ordered(acs)
    control = _u16(data, offset + 6)
    if control is None:
        return None
    acs = acs_bits(control)
    acs["capable"] = True
    return _acs_ordered(acs)


def _acs_ordered(acs):
    out = {"capable": acs["capable"]}
    for name, _label in ACS_BITS:
        out[name] = acs[name]
    return out


def acs_redirects(acs):
    """The redirect bits set in an ACS dict, as lspci names them (``['ReqRedir', 'CmpltRedir']``)."""
    if not acs:
        return []
    labels = dict(ACS_BITS)
    return [labels[name] for name in ACS_REDIRECT if acs.get(name)]


def format_acs(acs):
    """``ReqRedir+ CmpltRedir+`` style text of the redirect bits that are set."""
    return " ".join("%s+" % label for label in acs_redirects(acs))


# ---------------------------------------------------------------- helpers

def short_id(text):
    """``0x10DE`` -> ``10de``; None when not a hex number."""
    value = sysfs.normalize_hex_id(text)
    return value[2:] if value else None


def class_code(text):
    """``0x030200`` -> 0x030200; None when not a hex number."""
    return sysfs.parse_hex_int(text)


def is_gpu(fn):
    return fn["vendor_id"] == NVIDIA_VENDOR_ID and fn["class"] is not None and (fn["class"] >> 8) in GPU_CLASSES


def is_hca(fn):
    return fn["vendor_id"] == MELLANOX_VENDOR_ID and fn["class"] is not None and (fn["class"] >> 8) in HCA_CLASSES


def is_bridge(fn):
    return fn["class"] is not None and (fn["class"] >> 8) == BRIDGE_CLASS


# ---------------------------------------------------------------- tree

class Pcie(object):
    """Reader for the PCI functions of a sysfs tree rooted at ``root``."""

    def __init__(self, root=DEFAULT_ROOT):
        self.sysfs = sysfs.Sysfs(root)
        self.root = self.sysfs.root

    def functions(self):
        """Addresses of every PCI function, sorted."""
        return sorted(bdf.lower() for bdf in self.sysfs.listdir("bus", "pci", "devices") if sysfs.is_bdf(bdf))

    def resolve(self, bdf):
        """``(host_bridge, [bridge bdfs from the root port down])`` from the resolved
        ``bus/pci/devices/<bdf>`` symlink; ``(None, [])`` when it does not resolve."""
        link = self.sysfs.path("bus", "pci", "devices", bdf)
        if not os.path.lexists(link):
            return None, []
        parts = os.path.realpath(link).split(os.sep)
        start = None
        for index, part in enumerate(parts):
            if pci.host_bridge(part):
                start = index
        if start is None:
            return None, []
        host_bridge = pci.host_bridge(parts[start])
        chain = []
        for part in parts[start + 1:]:
            if not sysfs.is_bdf(part):
                break
            chain.append(part.lower())
        if not chain or chain[-1] != bdf.lower():
            return host_bridge, chain
        return host_bridge, chain[:-1]

    def config(self, bdf):
        """Raw config space bytes; None when unreadable."""
        try:
            with open(self.sysfs.path("bus", "pci", "devices", bdf, "config"), "rb") as handle:
                return handle.read()
        except (IOError, OSError):
            return None

    def function(self, bdf):
        """One function as a dict (ids, class, NUMA node, driver, IOMMU group, path)."""
        base = ("bus", "pci", "devices", bdf)
        read = self.sysfs.read
        numa = sysfs.parse_int(read(*(base + ("numa_node",))))
        group = self.sysfs.link_name(*(base + ("iommu_group",)))
        host_bridge, path = self.resolve(bdf)
        vendor_id = sysfs.normalize_hex_id(read(*(base + ("vendor",))))
        device_id = sysfs.normalize_hex_id(read(*(base + ("device",))))
        _model, table_vf = sysfs.pci_model(vendor_id, device_id)
        return {
            "pci_address": bdf,
            "vendor_id": vendor_id,
            "device_id": device_id,
            "class": class_code(read(*(base + ("class",)))),
            "numa_node": numa if numa is not None and numa >= 0 else None,
            "driver": self.sysfs.link_name(*(base + ("driver",))),
            "iommu_group": group,
            "is_vf": self.sysfs.exists(*(base + ("physfn",))) or bool(table_vf),
            "host_bridge": host_bridge,
            "path": path,
        }

    def bridge(self, bdf):
        """A bridge on some path: its port type and ACS (None when config is unreadable or short)."""
        data = self.config(bdf)
        if data is None:
            return {"pci_address": bdf, "port_type": None, "acs": None}
        return {"pci_address": bdf, "port_type": port_type(data), "acs": parse_acs(data)}

    def rdma_devices(self, bdf):
        return self.sysfs.listdir("bus", "pci", "devices", bdf, "infiniband")

    def netdevs(self, bdf):
        """Netdevs of a function, IPoIB child interfaces left out."""
        base = ("bus", "pci", "devices", bdf, "net")
        return [name for name in self.sysfs.listdir(*base) if not self.sysfs.exists(*(base + (name, "parent")))]
