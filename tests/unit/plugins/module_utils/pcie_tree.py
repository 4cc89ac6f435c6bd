# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Test helper: a recorded ``lspci -tv`` tree -> a fake sysfs tree the real readers walk.

``parse_lspci_tree(text)`` reads the tree (``-[0000:00]-+-01.1-[01]----00.0  Name``)
into nodes with their parent bridge; ``build_pcie_sysfs(root, spec)`` lays them out
the way the kernel does: ``devices/pci<domain>:<bus>/<root port>/.../<bdf>/`` with
``class``, ``vendor``, ``device``, ``numa_node``, binary ``config``, ``driver`` and
``iommu_group`` links, and ``bus/pci/devices/<bdf>`` symlinks into it. Bridges get a
config space with a PCI Express capability (port type from their place in the tree)
and, unless told otherwise, an ACS capability whose control bits the test picks.
``make_node`` adds what the GPUDirect reader needs besides: kernel modules, the IOMMU
and ``/proc/cmdline``.
"""

from __future__ import annotations

import os
import re
import struct

from ansible_collections.fabric.infiniband.tests.unit.conftest import load_yaml_fixture, read_fixture


_DESC_RE = re.compile(r"(?<=[0-9a-f]\.[0-7])  (\S.*)$")
_TOKEN_RE = re.compile(
    r"(?:(?P<conn>[+\\])-|(?P<chain>-{2,4})|^(?P<lead>-))"
    r"(?P<tok>\[[0-9a-f]{4}:[0-9a-f]{2}\]|[0-9a-f]{2}\.[0-7])"
    r"(?:-\[(?P<sec>[0-9a-f]{2})(?:-[0-9a-f]{2})?\])?"
)

PORT_TYPE_CODES = {"root_port": 4, "upstream": 5, "downstream": 6}
ACS_CTL_BITS = {"SrcValid": 0, "TransBlk": 1, "ReqRedir": 2, "CmpltRedir": 3, "UpstreamFwd": 4, "EgressCtrl": 5, "DirectTrans": 6}
# What Linux sets on a downstream port with ACS when the IOMMU is on (SrcValid ReqRedir CmpltRedir UpstreamFwd)
ACS_LINUX_DEFAULT = ("SrcValid", "ReqRedir", "CmpltRedir", "UpstreamFwd")


def parse_lspci_tree(text):
    """``{bdf: {"parent": bdf|None, "host_bridge": "dddd:bb", "name": str|None, "bridge": bool}}``."""
    nodes = {}
    children_at = {}  # column of a +-/\- connector -> (parent bdf or host bridge, domain, bus)
    for raw in text.splitlines():
        line = raw.rstrip()
        if not line.strip():
            continue
        name = None
        match = _DESC_RE.search(line)
        if match:
            name = match.group(1).strip()
            line = line[:match.start()]
        previous = None  # (bdf, domain, secondary bus) of the last bridge on this line
        last = None
        for tok in _TOKEN_RE.finditer(line):
            token = tok.group("tok")
            end = tok.end()
            if token.startswith("["):
                domain, bus = token[1:-1].split(":")
                host = "%s:%s" % (domain, bus)
                follow = line[end:end + 3]
                if follow in ("-+-", "-\\-"):
                    children_at[end + 1] = (None, host, domain, bus)
                elif line[end:end + 5] == "-----" or line[end:end + 4] == "----":
                    previous = (None, host, domain, bus)
                continue
            if tok.group("conn"):
                col = tok.start("conn")
                parent, host, domain, bus = children_at[col]
            else:
                parent, host, domain, bus = previous
            bdf = "%s:%s:%s" % (domain, bus, token)
            nodes[bdf] = {"parent": parent, "host_bridge": host, "name": None, "bridge": False}
            last = bdf
            sec = tok.group("sec")
            if sec:
                nodes[bdf]["bridge"] = True
                if line[end:end + 3] in ("--+", "--\\"):
                    children_at[end + 2] = (bdf, host, domain, sec)
                previous = (bdf, host, domain, sec)
        if last and name:
            nodes[last]["name"] = name
    return nodes


def port_types(nodes):
    """Port type of every bridge from its place: root port under the host bridge,
    upstream below a root or downstream port, downstream below an upstream port."""
    out = {}

    def kind(bdf):
        if bdf in out:
            return out[bdf]
        parent = nodes[bdf]["parent"]
        if parent is None:
            value = "root_port"
        elif kind(parent) == "upstream":
            value = "downstream"
        else:
            value = "upstream"
        out[bdf] = value
        return value

    for bdf, node in nodes.items():
        if node["bridge"]:
            kind(bdf)
    return out


def config_space(vendor, device, class_code, port_type=None, acs=None, size=4096):
    """A config space image. ``acs``: None for no ACS capability, else a list of
    control bit names (lspci's, e.g. ``["ReqRedir", "CmpltRedir"]``)."""
    data = bytearray(size)
    struct.pack_into("<HH", data, 0, vendor, device)
    data[0x09:0x0C] = struct.pack("<I", class_code)[:3]
    if port_type is not None:
        struct.pack_into("<H", data, 0x06, 0x0010)  # Status: capability list
        data[0x0E] = 0x01  # header type 1 (bridge)
        data[0x34] = 0x40
        # power management at 0x40 -> PCI Express at 0x60 (a walk over two entries)
        data[0x40], data[0x41] = 0x01, 0x60
        data[0x60], data[0x61] = 0x10, 0x00
        struct.pack_into("<H", data, 0x62, 0x0002 | (PORT_TYPE_CODES[port_type] << 4))
    if size >= 0x108:
        # AER first, then ACS, as many switches order them
        if acs is None:
            struct.pack_into("<I", data, 0x100, 0x0001 | (1 << 16))
        else:
            struct.pack_into("<I", data, 0x100, 0x0001 | (1 << 16) | (0x148 << 20))
            control = 0
            for name in acs:
                control |= 1 << ACS_CTL_BITS[name]
            struct.pack_into("<IHH", data, 0x148, 0x000D | (1 << 16), 0x007F, control)
    return bytes(data)


def _write(path, value, raw=False):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb" if raw else "w") as handle:
        handle.write(value)


def _link(path, target):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if os.path.lexists(path):
        os.unlink(path)
    os.symlink(target, path)


def identify(name, ids):
    """``(vendor, device, class)`` ints for a device name: the first ``ids`` entry whose
    ``match`` is a substring of it; None when no entry matches."""
    for entry in ids:
        if name and entry["match"] in name:
            return int(entry["vendor"], 16), int(entry["device"], 16), int(entry["class"], 16)
    return None


def build_pcie_sysfs(root, spec):
    """Create the tree of ``spec`` under ``root``; return the parsed nodes.

    spec keys: ``lspci_tv`` (text), ``ids`` (list of {match, vendor, device, class}),
    ``numa`` (host bridge -> node), and optional ``acs`` (bdf -> list of control bit
    names, or None for a bridge without ACS; default ``acs_default`` or no bit set),
    ``config_size`` (bdf -> bytes of config space the reader sees), ``drivers``
    (``{"gpu": "nvidia", "hca": "mlx5_core"}``), ``vfs`` (bdf -> physfn bdf),
    ``rdma`` (bdf -> mlx5_N), ``iommu_groups`` (bool, default True).
    """
    nodes = parse_lspci_tree(spec["lspci_tv"])
    kinds = port_types(nodes)
    acs_spec = spec.get("acs") or {}
    default_acs = spec.get("acs_default", [])
    sizes = spec.get("config_size") or {}
    drivers = spec.get("drivers", {"gpu": "nvidia", "hca": "mlx5_core"})
    vfs = spec.get("vfs") or {}
    rdma = spec.get("rdma") or {}
    numa = spec.get("numa") or {}
    dirs = {}

    def ddir(bdf):
        if bdf not in dirs:
            node = nodes[bdf]
            parent = node["parent"]
            base = ddir(parent) if parent else os.path.join("devices", "pci" + node["host_bridge"])
            dirs[bdf] = os.path.join(base, bdf)
        return dirs[bdf]

    for index, bdf in enumerate(sorted(nodes)):
        node = nodes[bdf]
        rel = ddir(bdf)
        full = os.path.join(root, rel)
        os.makedirs(full, exist_ok=True)
        if node["bridge"]:
            vendor, device, klass = 0x1000, 0xC010, 0x060400
            ident = identify(node["name"], spec.get("ids") or [])
            if ident and ident[2] >> 8 == 0x0604:
                vendor, device, _k = ident
            acs = acs_spec[bdf] if bdf in acs_spec else default_acs
            config = config_space(vendor, device, klass, kinds[bdf], acs)
            driver = "pcieport"
        else:
            ident = identify(node["name"], spec.get("ids") or [])
            vendor, device, klass = ident or (0x1022, 0x14AC, 0x130000)
            config = config_space(vendor, device, klass)
            driver = None
            if vendor == 0x10DE and klass >> 8 in (0x0300, 0x0302):
                driver = drivers.get("gpu")
            elif vendor == 0x15B3 and klass >> 8 in (0x0200, 0x0207):
                driver = drivers.get("hca")
        if bdf in sizes:
            config = config[:sizes[bdf]]
        _write(os.path.join(full, "vendor"), "0x%04x\n" % vendor)
        _write(os.path.join(full, "device"), "0x%04x\n" % device)
        _write(os.path.join(full, "class"), "0x%06x\n" % klass)
        _write(os.path.join(full, "numa_node"), "%s\n" % numa.get(node["host_bridge"], -1))
        _write(os.path.join(full, "config"), config, raw=True)
        up = os.path.join(*([".."] * len(rel.split(os.sep))))
        if driver:
            os.makedirs(os.path.join(root, "bus", "pci", "drivers", driver), exist_ok=True)
            _link(os.path.join(full, "driver"), os.path.join(up, "bus", "pci", "drivers", driver))
        if spec.get("iommu_groups", True):
            group = str(index)
            os.makedirs(os.path.join(root, "kernel", "iommu_groups", group, "devices"), exist_ok=True)
            _link(os.path.join(full, "iommu_group"), os.path.join(up, "kernel", "iommu_groups", group))
        if bdf in vfs:
            _link(os.path.join(full, "physfn"), os.path.join("..", vfs[bdf]))
        if bdf in rdma:
            os.makedirs(os.path.join(full, "infiniband", rdma[bdf]), exist_ok=True)
        _link(os.path.join(root, "bus", "pci", "devices", bdf), os.path.join("..", "..", "..", rel))
    os.makedirs(os.path.join(root, "bus", "pci", "devices"), exist_ok=True)
    return nodes


def load_spec(name):
    """A fixture of ``fixtures/pcie/`` with its ``lspci_tv_file`` (recorded trees, kept as
    text because their lines are long) read into ``lspci_tv``, comment lines left out."""
    spec = load_yaml_fixture(os.path.join("pcie", name))
    if "lspci_tv_file" in spec:
        text = read_fixture(os.path.join("pcie", spec.pop("lspci_tv_file")))
        spec["lspci_tv"] = "".join(line for line in text.splitlines(True) if not line.startswith("#"))
    return spec


def write_text(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as handle:
        handle.write(text)


def make_node(tmp_path, fixture, modules=("nvidia", "nvidia_peermem"), nvidia_version="550.54.15",
              taint="POE", iommu=None, cmdline="BOOT_IMAGE=/boot/vmlinuz root=/dev/sda1 ro quiet", **spec_extra):
    """A fake host: sysfs from a fixture tree plus modules and IOMMU, and a /proc with cmdline.

    ``iommu``: None (off) or the ``type`` every IOMMU group gets (``identity``, ``DMA-FQ``...).
    """
    spec = load_spec(fixture) if isinstance(fixture, str) else dict(fixture)
    spec.update(spec_extra)
    root = str(tmp_path / "sys")
    proc = str(tmp_path / "proc")
    build_pcie_sysfs(root, spec)
    for name in modules:
        os.makedirs(os.path.join(root, "module", name), exist_ok=True)
    if "nvidia" in modules:
        if nvidia_version is not None:
            write_text(os.path.join(root, "module", "nvidia", "version"), nvidia_version + "\n")
        if taint is not None:
            write_text(os.path.join(root, "module", "nvidia", "taint"), taint + "\n")
    if "nvidia_peermem" in modules:
        write_text(os.path.join(root, "module", "nvidia_peermem", "refcnt"), "0\n")
        os.makedirs(os.path.join(root, "module", "nvidia_peermem", "holders"), exist_ok=True)
    if iommu is not None:
        os.makedirs(os.path.join(root, "class", "iommu", "dmar0"), exist_ok=True)
        groups = os.path.join(root, "kernel", "iommu_groups")
        for group in os.listdir(groups) if os.path.isdir(groups) else []:
            if iommu:
                write_text(os.path.join(groups, group, "type"), iommu + "\n")
    write_text(os.path.join(proc, "cmdline"), cmdline + "\n")
    return root, proc
