# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The PCIe tree of a node: root ports, switches, GPUs and the adapters placed under them.

A state may describe a PCIe topology (``pcie.bridges``, ``gpus``, and ``parent`` on adapters; see
lab/README.md).  This module normalises that description, derives the tree (port types, bus numbers,
NUMA nodes, the ``/sys/devices`` path of each function) and builds each function's binary config space
(type-0/type-1 header, PCI Power Management and PCI Express capabilities, AER and ACS extended
capabilities) as the kernel's ``config`` attribute returns it.  It also holds the one config-space write
the simulator models: the ACS Control register of a bridge (runtime state, back to the BIOS default at
power-on).  Adapters without ``parent`` keep the one-root-port model of ``sysfs.py``.

Register layouts follow the PCI Express Base Specification (type-1 header, PCIe capability ID 0x10,
AER extended capability 0x0001, ACS extended capability 0x000d).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

from fabricsim import catalog
from fabricsim import state as sim_state

CONFIG_SIZE = 4096
# ACS Control bits in the order ``lspci -vvv`` prints them (ACSCap:/ACSCtl:).
ACS_BITS = (("SrcValid", 0x01), ("TransBlk", 0x02), ("ReqRedir", 0x04), ("CmpltRedir", 0x08),
            ("UpstreamFwd", 0x10), ("EgressCtrl", 0x20), ("DirectTrans", 0x40))
# PCI Express capability: Device/Port Type field values.
PORT_TYPES = {"endpoint": 0x0, "root_port": 0x4, "upstream": 0x5, "downstream": 0x6}
CAP_PM, CAP_PCIE = 0x40, 0x60          # capability offsets (standard list)
ECAP_AER, ECAP_ACS = 0x100, 0x148      # extended capability offsets; AER of a root port is 0x48 long
ACS_CAP_REG, ACS_CTL_REG = ECAP_ACS + 4, ECAP_ACS + 6
IOMMU_TYPES = ("DMA", "DMA-FQ", "identity", "blocked")
IOMMU_UNITS = {"intel": "dmar", "amd": "ivhd"}  # /sys/class/iommu/<prefix><n>, one unit per host bridge
LINK_SPEEDS = {1: "2.5 GT/s PCIe", 2: "5.0 GT/s PCIe", 3: "8.0 GT/s PCIe", 4: "16.0 GT/s PCIe", 5: "32.0 GT/s PCIe"}


@dataclass
class Node:
    """One PCI function of the tree.  ``kind``: root_port, upstream, downstream (bridges), gpu, hca."""

    bdf: str
    kind: str
    parent: str | None
    model: catalog.PciModel | None = None
    numa_node: int = 0
    secondary: int = 0
    subordinate: int = 0
    children: list = field(default_factory=list)
    acs_default: int = 0
    path: str = ""

    @property
    def bridge(self):
        return self.kind in ("root_port", "upstream", "downstream")

    @property
    def bus(self):
        return sim_state.parse_bdf(self.bdf)[1]


# --------------------------------------------------------------------------------------
# Description -> normalised state
# --------------------------------------------------------------------------------------
def parse_acs(value, cap=0x7F, where="acs_ctl"):
    """An ACS Control value from a number, a hex string, a list of bit names, or lspci's ``ReqRedir+ CmpltRedir+``."""
    if value is None:
        return 0
    if isinstance(value, bool):
        raise sim_state.StateError("%s: not a number or a list of ACS bits" % where)
    if isinstance(value, int):
        bits = value
    elif isinstance(value, str) and sim_state.parse_number(value) is not None:
        bits = sim_state.parse_number(value)
    else:
        words = value.split() if isinstance(value, str) else list(value)
        names = dict(ACS_BITS)
        bits = 0
        for word in words:
            name, on = (word[:-1], word.endswith("+")) if word[-1:] in "+-" else (word, True)
            if name not in names:
                raise sim_state.StateError("%s: unknown ACS bit %r (known: %s)" % (where, name, ", ".join(names)))
            if on:
                bits |= names[name]
    if bits & ~cap & 0xFFFF:
        raise sim_state.StateError("%s: 0x%04x sets bits the port's ACS capability 0x%04x lacks" % (where, bits, cap))
    return bits


def normalize(st):
    """Normalise ``pcie``, ``gpus`` and the adapters' ``parent`` in place (called by ``state.normalize``)."""
    iommu = st.get("iommu")
    if iommu is not None:
        iommu.setdefault("enabled", True)
        iommu.setdefault("type", "DMA-FQ")
        iommu.setdefault("vendor", "intel")
        if iommu["type"] not in IOMMU_TYPES or iommu["vendor"] not in IOMMU_UNITS:
            raise sim_state.StateError("iommu.type must be one of %s, iommu.vendor intel or amd" % ", ".join(IOMMU_TYPES))
    pcie = st.get("pcie")
    gpus = st.setdefault("gpus", []) if pcie is not None or st.get("gpus") else None
    if pcie is None:
        if gpus or any(ad.get("parent") for ad in st.get("adapters", [])):
            raise sim_state.StateError("gpus and adapters' parent need a pcie description")
        return
    bridges = pcie.setdefault("bridges", [])
    for br in bridges:
        br["bdf"] = _bdf(br.get("bdf"), "pcie bridge")
        if br.get("parent"):
            br["parent"] = _bdf(br["parent"], "parent of %s" % br["bdf"])
        else:
            br["parent"] = None
    kinds = _kinds(bridges)
    for br in bridges:
        kind = kinds[br["bdf"]]
        br.setdefault("model", "root_port" if kind == "root_port" else "PEX890xx")
        model = catalog.get_bridge_model(br["model"])
        cap = model.acs_cap if kind != "upstream" else None
        if br.get("acs_ctl") and cap is None:
            raise sim_state.StateError("bridge %s (%s) has no ACS capability" % (br["bdf"], kind))
        br["acs_ctl"] = parse_acs(br.get("acs_ctl"), cap or 0, "acs_ctl of %s" % br["bdf"])
        if kind == "root_port":
            br.setdefault("numa_node", 0)
        if isinstance(br.get("secondary_bus"), str):
            br["secondary_bus"] = int(br["secondary_bus"], 16)  # written as hex, like a BDF's bus
    for gpu in gpus:
        catalog.get_gpu_model(gpu.setdefault("model", "H100 SXM5"))
        gpu["pci_address"] = _bdf(gpu.get("pci_address"), "gpu")
        gpu["parent"] = _bdf(gpu.get("parent"), "parent of GPU %s" % gpu["pci_address"])
    for ad in st.get("adapters", []):
        if ad.get("parent"):
            ad["parent"] = _bdf(ad["parent"], "parent of adapter %s" % ad.get("pci_address"))
    numa = {br["bdf"]: _root_of(bridges, br)["numa_node"] for br in bridges}
    for dev in gpus + [ad for ad in st.get("adapters", []) if ad.get("parent")]:
        if dev["parent"] not in kinds:
            raise sim_state.StateError("%s: parent %s is not a bridge of pcie.bridges" % (dev["pci_address"], dev["parent"]))
        if kinds[dev["parent"]] == "upstream":
            raise sim_state.StateError("%s: an endpoint sits under a root port or a switch downstream port, not under "
                                       "the upstream port %s" % (dev["pci_address"], dev["parent"]))
        dev.setdefault("numa_node", numa[dev["parent"]])
    topology(st)  # validates the bus numbering


def _bdf(text, what):
    bdf = sim_state.normalize_bdf(text or "")
    if not bdf:
        raise sim_state.StateError("%s: %r is not a PCI address" % (what, text))
    return bdf


def _kinds(bridges):
    """Port type of each bridge: no parent -> root port; under a root or downstream port -> a switch's upstream
    port; under an upstream port -> one of its downstream ports."""
    by_bdf = {br["bdf"]: br for br in bridges}
    kinds = {}

    def kind(bdf, depth=0):
        if bdf in kinds:
            return kinds[bdf]
        if depth > 32:
            raise sim_state.StateError("pcie.bridges: a loop through %s" % bdf)
        parent = by_bdf[bdf]["parent"]
        if parent is None:
            result = "root_port"
        elif parent not in by_bdf:
            raise sim_state.StateError("bridge %s: parent %s is not in pcie.bridges" % (bdf, parent))
        else:
            result = "downstream" if kind(parent, depth + 1) == "upstream" else "upstream"
        kinds[bdf] = result
        return result

    for br in bridges:
        kind(br["bdf"])
    return kinds


def _root_of(bridges, br):
    by_bdf = {b["bdf"]: b for b in bridges}
    while br["parent"] is not None:
        br = by_bdf[br["parent"]]
    return br


# --------------------------------------------------------------------------------------
# The tree
# --------------------------------------------------------------------------------------
def topology(state):
    """``{bdf: Node}`` for every bridge, GPU and placed adapter function (PFs; VFs live in their PF's directory)."""
    pcie = state.get("pcie")
    if pcie is None:
        return {}
    bridges = pcie.get("bridges", [])
    kinds = _kinds(bridges)
    nodes = {}
    for br in bridges:
        model = catalog.get_bridge_model(br["model"])
        nodes[br["bdf"]] = Node(br["bdf"], kinds[br["bdf"]], br["parent"], model, numa_node=br.get("numa_node") or 0,
                                acs_default=br.get("acs_ctl", 0))
        nodes[br["bdf"]].secondary = br.get("secondary_bus") or 0
    for gpu in state.get("gpus", []):
        nodes[gpu["pci_address"]] = Node(gpu["pci_address"], "gpu", gpu["parent"], catalog.get_gpu_model(gpu["model"]),
                                         numa_node=gpu.get("numa_node", 0))
    for ad in state.get("adapters", []):
        if ad.get("parent"):
            for bdf in sim_state.pf_bdfs(ad):
                if bdf in nodes:
                    raise sim_state.StateError("PCI function %s used twice" % bdf)
                nodes[bdf] = Node(bdf, "hca", ad["parent"], numa_node=ad.get("numa_node", 0))
    for node in nodes.values():
        if node.parent:
            nodes[node.parent].children.append(node.bdf)
    for node in sorted(nodes.values(), key=lambda n: n.bdf):
        if node.kind == "root_port":
            _number(nodes, node, None)
    return nodes


def _number(nodes, node, numa):
    """Bus numbers (secondary = the bus the children sit on, subordinate = the highest bus below), NUMA node
    and sysfs path, depth first as firmware enumerates."""
    domain = sim_state.parse_bdf(node.bdf)[0]
    if node.kind == "root_port":
        node.path = "/devices/pci%04x:%02x/%s" % (domain, node.bus, node.bdf)
        numa = node.numa_node
    else:
        node.path = "%s/%s" % (nodes[node.parent].path, node.bdf)
        if node.bridge:
            node.numa_node = numa
    if not node.bridge:
        return node.bus
    node.children.sort()
    buses = {nodes[c].bus for c in node.children}
    if len(buses) > 1:
        raise sim_state.StateError("bridge %s: its children sit on different buses (%s)"
                                   % (node.bdf, ", ".join("%02x" % b for b in sorted(buses))))
    if buses:
        node.secondary = buses.pop()
    if node.secondary <= node.bus:
        raise sim_state.StateError("bridge %s: secondary bus %02x must be above its own bus (set secondary_bus for a "
                                   "port with nothing below)" % (node.bdf, node.secondary))
    highest = node.secondary
    below = node.secondary
    for child in node.children:
        top = _number(nodes, nodes[child], numa)
        first = nodes[child].secondary if nodes[child].bridge else top
        if nodes[child].bridge and first <= below:
            raise sim_state.StateError("bridge %s: its bus range %02x-%02x and a sibling's overlap (firmware numbers "
                                       "depth first)" % (child, first, top))
        below = max(below, top)
        highest = max(highest, top)
    node.subordinate = highest
    if node.kind == "upstream" and any(nodes[c].kind != "downstream" for c in node.children):
        raise sim_state.StateError("switch upstream port %s: only downstream ports sit below it" % node.bdf)
    return highest


# --------------------------------------------------------------------------------------
# ACS Control: BIOS default from the state, runtime value until the next power-on
# --------------------------------------------------------------------------------------
def acs_control(state, node):
    rt = state.get("runtime", {}).get("acs_ctl", {})
    return rt.get(node.bdf, node.acs_default)


def acs_capable(node):
    return node.bridge and node.kind != "upstream" and node.model.acs_cap is not None


def acs_text(bits):
    """lspci's rendering: ``SrcValid+ TransBlk- ...``."""
    return " ".join("%s%s" % (name, "+" if bits & bit else "-") for name, bit in ACS_BITS)


def write_config(state, node, offset, data):
    """A write(2) to ``config`` at ``offset``; returns the byte count the kernel reports.

    Only the ACS Control register of an ACS-capable port is modelled (the runtime value changes; bits the port's
    ACS Capability lacks stay 0, as the spec makes them hardwired).  Every other byte is dropped silently: the
    kernel passes the write to the device, and a device ignores writes to read-only registers (the RW ones it does
    not model -- Command, Device Control... -- are not simulated).  Beyond 4096 bytes nothing is written (0).
    """
    if offset >= CONFIG_SIZE:
        return 0
    data = bytes(data[:CONFIG_SIZE - offset])
    if node is not None and acs_capable(node):
        current = struct.pack("<H", acs_control(state, node))
        reg = bytearray(current)
        for i, byte in enumerate(data):
            pos = offset + i
            if ACS_CTL_REG <= pos < ACS_CTL_REG + 2:
                reg[pos - ACS_CTL_REG] = byte
        if bytes(reg) != current:
            value = struct.unpack("<H", bytes(reg))[0] & node.model.acs_cap & 0x7F
            state.setdefault("runtime", {}).setdefault("acs_ctl", {})[node.bdf] = value
    return len(data)


# --------------------------------------------------------------------------------------
# Config space bytes
# --------------------------------------------------------------------------------------
class _Space:
    def __init__(self):
        self.buf = bytearray(CONFIG_SIZE)

    def put(self, fmt, offset, *values):
        struct.pack_into("<" + fmt, self.buf, offset, *values)


def _header(space, vendor, device, class_code, revision, header_type, command):
    space.put("HHHH", 0x00, vendor, device, command, 0x0010)  # status: capabilities list
    space.put("I", 0x08, (class_code << 8) | revision)
    space.put("BBBB", 0x0C, 0x10, 0x00, header_type, 0x00)     # cache line 64 bytes, latency, header type, BIST
    space.put("B", 0x34, CAP_PM)
    space.put("BB", 0x3C, 0xFF, 0x00)                         # interrupt line unset, no INTx pin (MSI/MSI-X)


def _capabilities(space, port_type, link, port_number=0, dll_active=False, root=False):
    gen, width = link
    space.put("BBHH", CAP_PM, 0x01, CAP_PCIE, 0x0003, 0x0008)  # PM v1.2 -> PCIe; PMCSR: D0, NoSoftRst+
    space.put("BBH", CAP_PCIE, 0x10, 0x00, 0x0002 | (port_type << 4))
    space.put("I", CAP_PCIE + 0x04, 0x00008000 | (2 if port_type else 1))       # RBE+, MaxPayload 512 (ports) / 256
    space.put("HH", CAP_PCIE + 0x08, 0x2000 | 0x0020 | 0x0010, 0x0000)          # MaxReadReq 512, MaxPayload 256, RlxdOrd+
    lnkcap = gen | (width << 4) | (0x2 << 10) | (port_number << 24)
    if port_type in (PORT_TYPES["root_port"], PORT_TYPES["downstream"]):
        lnkcap |= 1 << 20                                                       # DLActive reporting capable
    space.put("I", CAP_PCIE + 0x0C, lnkcap)
    space.put("HH", CAP_PCIE + 0x10, 0x0000, gen | (width << 4) | (1 << 12) | ((1 << 13) if dll_active else 0))
    if root:
        space.put("HH", CAP_PCIE + 0x1C, 0x0000, 0x0000)                        # RootCtl, RootCap
    space.put("I", CAP_PCIE + 0x24, 0x0000001F | (0x20 if port_type else 0))    # DevCap2: timeouts; ARIFwd on ports
    space.put("I", CAP_PCIE + 0x2C, ((1 << gen) - 1) << 1)                      # LnkCap2: supported speeds vector
    space.put("HH", CAP_PCIE + 0x30, gen, 0x0000)                               # LnkCtl2: target speed


def _aer(space, next_offset):
    space.put("I", ECAP_AER, 0x0001 | (2 << 16) | (next_offset << 20))
    space.put("IIIIII", ECAP_AER + 0x04, 0, 0, 0x00462030, 0, 0x00002000, 0x000000A0)


def _acs(space, cap, ctl):
    space.put("IHH", ECAP_ACS, 0x000D | (1 << 16), cap, ctl)


def config_space(state, node):
    """The 4096 bytes of a bridge's or GPU's ``config``."""
    space = _Space()
    model = node.model
    if node.bridge:
        _header(space, model.vendor_id, model.device_id, model.class_code, model.revision, 0x01, 0x0407)
        space.put("BBBB", 0x18, node.bus, node.secondary, node.subordinate, 0x00)
        space.put("BBH", 0x1C, 0xF0, 0x00, 0x0000)               # I/O window closed (base > limit)
        space.put("HHHH", 0x20, 0xFFF0, 0x0000, 0xFFF1, 0x0001)   # memory and 64-bit prefetchable windows closed
        space.put("II", 0x28, 0xFFFFFFFF, 0x00000000)
        space.put("H", 0x3E, 0x0000)
        port_number = sim_state.parse_bdf(node.bdf)[2]
        _capabilities(space, PORT_TYPES[node.kind], model.link, port_number, dll_active=node.kind != "upstream",
                      root=node.kind == "root_port")
        if acs_capable(node):
            _aer(space, ECAP_ACS)
            _acs(space, model.acs_cap, acs_control(state, node))
        else:
            _aer(space, 0)
    else:
        _header(space, model.vendor_id, model.device_id, model.class_code, model.revision, 0x00, 0x0406)
        space.put("HH", 0x2C, model.subsystem_vendor, model.subsystem_device)
        _capabilities(space, PORT_TYPES["endpoint"], model.link)
        _aer(space, 0)
    return bytes(space.buf)


def endpoint_config(vendor, device, class_code, revision, subsystem_vendor, subsystem_device, link, multifunction=False):
    """The ``config`` of an adapter function (PF or VF): a type-0 header with PM, PCIe and AER."""
    space = _Space()
    _header(space, vendor, device, class_code, revision, 0x80 if multifunction else 0x00, 0x0406)
    space.put("HH", 0x2C, subsystem_vendor, subsystem_device)
    _capabilities(space, PORT_TYPES["endpoint"], link)
    _aer(space, 0)
    return bytes(space.buf)


def link_speed(gen):
    return LINK_SPEEDS.get(gen, "Unknown")


def gen_of(speed_text):
    for gen, text in LINK_SPEEDS.items():
        if text == speed_text:
            return gen
    return 3
