# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The simulated sysfs as a pure function of the state, and the kernel's write rules.

``tree(state)`` maps absolute paths under ``/sys`` *without* the ``/sys`` prefix
(``/class/infiniband/mlx5_0/fw_ver``) to entries:

* ``Dir()`` -- a directory; every parent of every entry is present as a ``Dir``;
* ``File(content, writable=False)`` -- an attribute; ``content`` is the full text a read returns
  (newline included); ``writable`` files accept ``write()``;
* ``Link(target)`` -- a symlink; ``target`` is relative, as the kernel makes them.

``write(state, path, data)`` applies a write to a simulated attribute to the state (in place)
and raises ``OSError(errno.X, ...)`` where the kernel would fail the write(2).
"""

from __future__ import annotations

import errno
import json
import os
import posixpath
import re
from typing import NamedTuple

from fabricsim import catalog, pci, porthealth
from fabricsim import state as sim_state
from fabricsim.verbs import cap_mask, carrier, fw_version

GID_TABLE_LEN = 8
PKEY_TABLE_LEN = 8
ZERO_GID = ":".join(["0000"] * 8)
IPOIB_BROADCAST = "00:ff:ff:ff:ff:12:40:1b:ff:ff:00:00:00:00:00:00:ff:ff:ff:ff"
KERNEL_PHYS_STATES = {1: "Sleep", 2: "Polling", 3: "Disabled", 4: "PortConfigurationTraining", 5: "LinkUp",
                      6: "LinkErrorRecovery", 7: "Phy Test"}
PCIE_LINK = {"ConnectX-4 VPI": ("8.0 GT/s PCIe", 16), "ConnectX-4 Lx EN": ("8.0 GT/s PCIe", 8),
             "ConnectX-5 VPI": ("8.0 GT/s PCIe", 16), "ConnectX-6 VPI": ("16.0 GT/s PCIe", 16),
             "ConnectX-7": ("32.0 GT/s PCIe", 16), "BlueField-2": ("16.0 GT/s PCIe", 16)}
_BDF_COMPONENT = re.compile(r"^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$")


class Dir(NamedTuple):
    """A directory.  An ``opaque`` one hides the real sysfs directory of the same path (the node's own
    IOMMU groups, not the host's)."""

    opaque: bool = False


class File(NamedTuple):
    """An attribute file: ``content`` is what a read returns (``str``, or ``bytes`` for a binary attribute such as
    ``config``); ``writable`` files take ``write()``."""

    content: str
    writable: bool = False


class Link(NamedTuple):
    """A symbolic link with a relative ``target``."""

    target: str


class _Tree:
    def __init__(self):
        self.entries = {}

    def _parents(self, path):
        parent = posixpath.dirname(path)
        while parent not in ("/", "") and parent not in self.entries:
            self.entries[parent] = Dir()
            parent = posixpath.dirname(parent)

    def dir(self, path, opaque=False):
        self._parents(path)
        if opaque:
            self.entries[path] = Dir(True)
        else:
            self.entries.setdefault(path, Dir())

    def file(self, path, content, writable=False):
        self._parents(path)
        self.entries[path] = File(content, writable)

    def link(self, path, target):
        self._parents(path)
        self.entries[path] = Link(target)


def _rel(from_dir, to_path):
    """A symlink target the way kernfs writes it: up from the link's directory to the lowest
    ancestor of the target's parent, then down to the target (``../../../0000:3b:00.0``)."""
    target_parent = posixpath.dirname(to_path)
    base, ups = from_dir, 0
    while base != "/" and not (target_parent == base or target_parent.startswith(base + "/")):
        base = posixpath.dirname(base)
        ups += 1
    rest = to_path[len(base):].lstrip("/") if base != "/" else to_path.lstrip("/")
    return "../" * ups + rest


def _bridges(state):
    """PCI function or PF BDF -> (root complex dir, bridge BDF) for each adapter."""
    taken = {bdf for ad in state.get("adapters", []) for bdf in sim_state.pf_bdfs(ad)}
    out = {}
    for ad in sorted(state.get("adapters", []), key=lambda a: a["pci_address"]):
        domain, bus = sim_state.parse_bdf(ad["pci_address"])[:2]
        parent = bus - 1 if bus > 0 else 0
        slot = 0 if bus > 0 else 1
        bridge = sim_state.format_bdf(domain, parent, slot, 0)
        while bridge in taken:
            slot += 1
            bridge = sim_state.format_bdf(domain, parent, slot, 0)
        out[ad["pci_address"]] = ("/devices/pci%04x:%02x" % (domain, parent), bridge)
    return out


def device_path(state, bdf, bridges=None):
    """``/devices/pci0000:3a/0000:3a:00.0/0000:3b:00.0`` for a simulated function (adapter, GPU or bridge)."""
    topo = pci.topology(state)
    if bdf in topo:
        return topo[bdf].path
    f = sim_state.find_function(state, bdf)
    return _function_dir(f, bridges or _bridges(state), topo)


def _function_dir(f, bridges, topo):
    """An adapter function's directory: under its ``parent`` port in the PCIe tree (a VF beside its PF), or in the
    one-root-port model."""
    pf = topo.get(f.parent or f.bdf)
    if pf is not None:
        return "%s/%s" % (posixpath.dirname(pf.path), f.bdf)
    root, bridge = bridges[f.adapter["pci_address"]]
    return "%s/%s/%s" % (root, bridge, f.bdf)


def _modalias(func):
    cls = "bc02sc%02x" % (0x07 if func.ib else 0x00)
    ids = (catalog.VENDOR_ID, func.device_id, catalog.VENDOR_ID, func.model.subsystem_device, cls)
    return "pci:v%08Xd%08Xsv%08Xsd%08X%si00" % ids


def _ipoib_address(func):
    guid = sim_state.guid_bytes(func.port_guid)
    return "00:00:10:49:fe:80:00:00:00:00:00:00:" + guid


def _gid(prefix, iface_id):
    h = "%016x%016x" % (prefix, iface_id)
    return ":".join(h[i:i + 4] for i in range(0, 32, 4))


def _build(state):
    t = _Tree()
    bridges = _bridges(state)
    funcs = sim_state.functions(state)
    rt = state.get("runtime", {}).get("functions", {})
    ofed = bool(state.get("tools", {}).get("ofed"))
    for d in ("/class/infiniband", "/class/infiniband_mad", "/class/infiniband_verbs", "/class/net",
              "/bus/pci/devices", "/bus/pci/drivers/mlx5_core"):
        t.dir(d)
    drv = "/bus/pci/drivers/mlx5_core"
    for name in ("bind", "unbind", "new_id", "remove_id"):
        t.file("%s/%s" % (drv, name), "", True)
    t.file(drv + "/uevent", "", True)
    t.link(drv + "/module", _rel(drv, "/module/mlx5_core"))
    # Loaded modules only (state.BOOT_MODULES at power-on, then modprobe and modules-load.d).
    loaded = sim_state.loaded_modules(state)
    for mod in loaded:
        t.file("/module/%s/initstate" % mod, "live\n")
        t.file("/module/%s/refcnt" % mod, "%d\n" % sim_state.module_refcnt(state, mod))
        t.dir("/module/%s/holders" % mod)
        for holder in sim_state.module_holders(state, mod):
            t.link("/module/%s/holders/%s" % (mod, holder), "../../" + holder)
    _nvidia_modules(t, state, loaded)
    t.link("/module/mlx5_core/drivers/pci:mlx5_core", _rel("/module/mlx5_core/drivers", drv))
    if "ib_core" in loaded:
        t.file("/module/ib_core/parameters/netns_mode", "Y\n" if sim_state.netns_mode(state) == "shared" else "N\n")
    t.file("/class/infiniband_mad/abi_version", "5\n")
    t.file("/class/infiniband_verbs/abi_version", "6\n")
    level = sim_state.lockdown(state)
    t.file("/kernel/security/lockdown",
           " ".join("[%s]" % lv if lv == level else lv for lv in sim_state.LOCKDOWN_LEVELS) + "\n", True)

    topo = pci.topology(state)
    paths = _pcie_tree(t, state, topo, loaded)
    for f in funcs:
        dev = _function_dir(f, bridges, topo)
        t.dir(posixpath.dirname(dev))
        paths[f.bdf] = dev
        _pci_function(t, f, dev, rt, ofed)
        t.link("/bus/pci/devices/%s" % f.bdf, _rel("/bus/pci/devices", dev))
        if f.bound:
            t.link("%s/driver" % dev, _rel(dev, drv))
            t.link("%s/%s" % (drv, f.bdf), _rel(drv, dev))
            if f.rdma:
                _rdma_device(t, state, f, dev)
            if f.netdev:
                _netdev(t, state, f, dev)
    _iommu(t, state, paths)
    return t.entries


def _resource(count):
    """``resource``: one ``start end flags`` line per BAR/window; all unassigned (the simulator maps no memory)."""
    return "0x0000000000000000 0x0000000000000000 0x0000000000000000\n" * count


def _pcie_tree(t, state, topo, loaded):
    """Bridges (driver pcieport) and GPUs (driver nvidia while the module is loaded) of the PCIe tree; returns
    ``{bdf: device dir}``."""
    paths = {}
    if topo:
        t.dir("/bus/pci/drivers/pcieport")
    if "nvidia" in loaded:
        drv = "/bus/pci/drivers/nvidia"
        for name in ("bind", "unbind", "new_id", "remove_id", "uevent"):
            t.file("%s/%s" % (drv, name), "", True)
        t.link(drv + "/module", _rel(drv, "/module/nvidia"))
        t.link("/module/nvidia/drivers/pci:nvidia", _rel("/module/nvidia/drivers", drv))
    for node in sorted(topo.values(), key=lambda n: n.bdf):
        if node.kind == "hca":
            continue  # the adapter's own files come from _pci_function
        dev = paths[node.bdf] = node.path
        model = node.model
        t.file(dev + "/vendor", "0x%04x\n" % model.vendor_id)
        t.file(dev + "/device", "0x%04x\n" % model.device_id)
        t.file(dev + "/subsystem_vendor", "0x%04x\n" % model.subsystem_vendor)
        t.file(dev + "/subsystem_device", "0x%04x\n" % model.subsystem_device)
        t.file(dev + "/class", "0x%06x\n" % model.class_code)
        t.file(dev + "/revision", "0x%02x\n" % model.revision)
        t.file(dev + "/numa_node", "%d\n" % node.numa_node)
        t.file(dev + "/enable", "1\n", True)
        t.file(dev + "/irq", "0\n")
        t.file(dev + "/resource", _resource(17 if node.bridge else 13))
        t.file(dev + "/config", pci.config_space(state, node), True)
        modalias = "pci:v%08Xd%08Xsv%08Xsd%08Xbc%02Xsc%02Xi%02X" % (
            model.vendor_id, model.device_id, model.subsystem_vendor, model.subsystem_device,
            model.class_code >> 16, (model.class_code >> 8) & 0xFF, model.class_code & 0xFF)
        t.file(dev + "/modalias", modalias + "\n")
        t.link(dev + "/subsystem", _rel(dev, "/bus/pci"))
        gen, width = model.link
        for prefix in ("current", "max"):
            t.file("%s/%s_link_speed" % (dev, prefix), pci.link_speed(gen) + "\n")
            t.file("%s/%s_link_width" % (dev, prefix), "%d\n" % width)
        driver = None
        if node.bridge:
            driver = "pcieport"
            t.file(dev + "/secondary_bus_number", "%d\n" % node.secondary)
            t.file(dev + "/subordinate_bus_number", "%d\n" % node.subordinate)
            domain = sim_state.parse_bdf(node.bdf)[0]
            t.dir("%s/pci_bus/%04x:%02x" % (dev, domain, node.secondary))
        elif "nvidia" in loaded:
            driver = "nvidia"
        uevent = "DRIVER=%s\n" % driver if driver else ""
        uevent += "PCI_CLASS=%X\nPCI_ID=%04X:%04X\nPCI_SUBSYS_ID=%04X:%04X\nPCI_SLOT_NAME=%s\nMODALIAS=%s\n" % (
            model.class_code, model.vendor_id, model.device_id, model.subsystem_vendor, model.subsystem_device,
            node.bdf, modalias)
        t.file(dev + "/uevent", uevent, True)
        if driver:
            drv = "/bus/pci/drivers/" + driver
            t.link(dev + "/driver", _rel(dev, drv))
            t.link("%s/%s" % (drv, node.bdf), _rel(drv, dev))
        t.link("/bus/pci/devices/%s" % node.bdf, _rel("/bus/pci/devices", dev))
    return paths


def _nvidia_modules(t, state, loaded):
    """What ``/sys/module`` shows of the NVIDIA driver's modules.  ``version`` comes from MODULE_VERSION; the
    ``taint`` flags are the kernel's (P: proprietary licence, O: out of tree, E: unsigned): the open kernel module
    (Dual MIT/GPL) is told from the proprietary one by the missing P, as on a real host."""
    nv = state.get("nvidia") or {}
    taint = "OE" if nv.get("flavour") == "open" else "POE"
    if "nvidia" in loaded:
        t.file("/module/nvidia/version", nv.get("version", "") + "\n")
        t.file("/module/nvidia/taint", taint + "\n")
    if "nvidia_peermem" in loaded:
        t.file("/module/nvidia_peermem/taint", taint + "\n")


def _iommu(t, state, paths):
    """``/sys/class/iommu/<unit>`` (one DMAR/IVHD unit per host bridge), ``/sys/kernel/iommu_groups/<N>`` (one group
    per function, numbered in PCI order; VFs after the rest) and each function's ``iommu``/``iommu_group`` links.
    Only for a state with ``iommu``; its directories then hide whatever the real sysfs underneath has."""
    iommu = state.get("iommu")
    if iommu is None:
        return
    t.dir("/class/iommu", opaque=True)
    t.dir("/kernel/iommu_groups", opaque=True)
    t.dir("/devices/virtual/iommu", opaque=True)
    if not iommu.get("enabled"):
        return
    prefix = pci.IOMMU_UNITS[iommu.get("vendor", "intel")]
    hosts = sorted({path.split("/")[2] for path in paths.values()})
    units = {host: "%s%d" % (prefix, i) for i, host in enumerate(hosts)}
    for i, unit in enumerate(units.values()):
        udir = "/devices/virtual/iommu/" + unit
        t.link("/class/iommu/" + unit, _rel("/class/iommu", udir))
        t.dir(udir + "/devices")
        if prefix == "dmar":
            t.file(udir + "/intel-iommu/version", "1:0\n")
            t.file(udir + "/intel-iommu/address", "%x\n" % (0xC5FFC000 - 0x2000 * i))
            t.file(udir + "/intel-iommu/cap", "d2008c40660462\n")
            t.file(udir + "/intel-iommu/ecap", "f050da\n")
        t.file(udir + "/uevent", "")
    vfs = {f.bdf for f in sim_state.functions(state) if f.is_vf}
    order = sorted(b for b in paths if b not in vfs) + sorted(b for b in paths if b in vfs)
    for group, bdf in enumerate(order):
        dev = paths[bdf]
        gdir = "/kernel/iommu_groups/%d" % group
        t.file(gdir + "/type", iommu.get("type", "DMA-FQ") + "\n")
        t.file(gdir + "/reserved_regions", "0x00000000fee00000 0x00000000feefffff msi\n")
        t.link("%s/devices/%s" % (gdir, bdf), _rel(gdir + "/devices", dev))
        t.link(dev + "/iommu_group", _rel(dev, gdir))
        udir = "/devices/virtual/iommu/" + units[dev.split("/")[2]]
        t.link(dev + "/iommu", _rel(dev, udir))
        t.link("%s/devices/%s" % (udir, bdf), _rel(udir + "/devices", dev))


def _pci_function(t, f, dev, rt, ofed):
    t.file(dev + "/vendor", "0x%04x\n" % catalog.VENDOR_ID)
    t.file(dev + "/device", "0x%04x\n" % f.device_id)
    t.file(dev + "/subsystem_vendor", "0x%04x\n" % catalog.VENDOR_ID)
    t.file(dev + "/subsystem_device", "0x%04x\n" % f.model.subsystem_device)
    t.file(dev + "/class", "0x020700\n" if f.ib else "0x020000\n")
    t.file(dev + "/revision", "0x%02x\n" % f.model.chip_rev)
    t.file(dev + "/numa_node", "%d\n" % f.adapter.get("numa_node", 0))
    t.file(dev + "/enable", "1\n", True)
    t.file(dev + "/modalias", _modalias(f) + "\n")
    uevent = ""
    if f.bound:
        uevent += "DRIVER=mlx5_core\n"
    uevent += "PCI_CLASS=%X\nPCI_ID=15B3:%04X\nPCI_SUBSYS_ID=15B3:%04X\nPCI_SLOT_NAME=%s\nMODALIAS=%s\n" % (
        0x20700 if f.ib else 0x20000, f.device_id, f.model.subsystem_device, f.bdf, _modalias(f))
    t.file(dev + "/uevent", uevent, True)
    t.link(dev + "/subsystem", _rel(dev, "/bus/pci"))
    speed, width = PCIE_LINK.get(f.model.key, ("8.0 GT/s PCIe", 16))
    t.file(dev + "/irq", "0\n")
    t.file(dev + "/resource", _resource(13))
    t.file(dev + "/config", pci.endpoint_config(
        catalog.VENDOR_ID, f.device_id, 0x020700 if f.ib else 0x020000, f.model.chip_rev, catalog.VENDOR_ID,
        f.model.subsystem_device, (pci.gen_of(speed), width), multifunction=f.model.ports > 1 and not f.is_vf), True)
    for prefix in ("current", "max"):
        t.file("%s/%s_link_speed" % (dev, prefix), speed + "\n")
        t.file("%s/%s_link_width" % (dev, prefix), "%d\n" % width)
    if f.is_vf:
        t.link(dev + "/physfn", "../" + f.parent)
        return
    r = rt.get(f.bdf, {})
    if sim_state.sriov_enabled(f.adapter):
        numvfs = r.get("sriov_numvfs", 0)
        t.file(dev + "/sriov_totalvfs", "%d\n" % sim_state.total_vfs(f.adapter))
        t.file(dev + "/sriov_numvfs", "%d\n" % numvfs, True)
        t.file(dev + "/sriov_drivers_autoprobe", "%d\n" % r.get("sriov_drivers_autoprobe", 1), True)
        t.file(dev + "/sriov_offset", "%d\n" % sim_state.sriov_offset(f.adapter, f.pf))
        t.file(dev + "/sriov_stride", "1\n")
        t.file(dev + "/sriov_vf_device", "%x\n" % f.model.vf_device_id)
        for vf in range(numvfs):
            vbdf = sim_state.vf_bdf(f.adapter, f.pf, vf)
            t.link("%s/virtfn%d" % (dev, vf), "../" + vbdf)
            if ofed:
                vr = rt.get(vbdf, {})
                base = "%s/sriov/%d" % (dev, vf)
                t.file(base + "/node", _colon_guid(vr.get("node_guid", "0")) + "\n", True)
                t.file(base + "/port", _colon_guid(vr.get("port_guid", "0")) + "\n", True)
                t.file(base + "/policy", vr.get("policy", "Down") + "\n", True)
        if ofed:
            t.file(dev + "/mlx5_num_vfs", "%d\n" % numvfs, True)
            t.dir(dev + "/sriov")


def _colon_guid(value):
    return sim_state.guid_bytes(sim_state.parse_guid(value))


def _rdma_device(t, state, f, dev):
    ib = "%s/infiniband/%s" % (dev, f.rdma)
    t.link("/class/infiniband/%s" % f.rdma, _rel("/class/infiniband", ib))
    t.file(ib + "/node_type", "1: CA\n")
    t.file(ib + "/node_guid", sim_state.guid_colon(f.node_guid) + "\n")
    t.file(ib + "/sys_image_guid", sim_state.guid_colon(f.sys_image_guid) + "\n")
    t.file(ib + "/fw_ver", fw_version(f) + "\n")
    t.file(ib + "/hw_rev", "%x\n" % f.model.chip_rev)
    t.file(ib + "/hca_type", "MT%d\n" % f.device_id)
    t.file(ib + "/board_id", f.adapter.get("psid", f.model.psid) + "\n")
    t.file(ib + "/node_desc", sim_state.node_desc(state, f) + "\n", True)
    t.file(ib + "/uevent", "NAME=%s\n" % f.rdma)
    t.link(ib + "/device", _rel(ib, dev))
    t.link(ib + "/subsystem", _rel(ib, "/class/infiniband"))
    ps = sim_state.port_status(state, f)
    port = ib + "/ports/1"
    t.file(port + "/state", "%d: %s\n" % (ps["state"], catalog.PORT_STATES.get(ps["state"], "UNKNOWN")))
    t.file(port + "/phys_state", "%d: %s\n" % (ps["phys_state"], KERNEL_PHYS_STATES.get(ps["phys_state"], "<unknown>")))
    t.file(port + "/rate", ps["rate"] + "\n")
    t.file(port + "/lid", "0x%x\n" % ps["lid"])
    t.file(port + "/sm_lid", "0x%x\n" % ps["sm_lid"])
    t.file(port + "/lid_mask_count", "%d\n" % ps["lmc"])
    t.file(port + "/sm_sl", "%d\n" % ps["sm_sl"])
    t.file(port + "/cap_mask", "0x%08x\n" % cap_mask(f, ps))
    t.file(port + "/link_layer", f.link_layer + "\n")
    for i in range(GID_TABLE_LEN):
        gid = ZERO_GID
        if i == 0 or (i == 1 and not f.ib):
            gid = _gid(0xFE80000000000000, f.port_guid)
        t.file("%s/gids/%d" % (port, i), gid + "\n")
    t.dir(port + "/gid_attrs/types")
    t.dir(port + "/gid_attrs/ndevs")
    if f.ib:
        t.file(port + "/gid_attrs/types/0", "IB/RoCE v1\n")
    else:
        for i, kind in ((0, "IB/RoCE v1"), (1, "RoCE v2")):
            t.file("%s/gid_attrs/types/%d" % (port, i), kind + "\n")
            t.file("%s/gid_attrs/ndevs/%d" % (port, i), "%s\n" % (f.netdev or ""))
    keys = sim_state.pkeys(state, f)
    for i in range(max(PKEY_TABLE_LEN, len(keys))):
        t.file("%s/pkeys/%d" % (port, i), "0x%04x\n" % (keys[i] if i < len(keys) else 0))
    health = state.get("port_health", {}).get(f.bdf)
    for counter in porthealth.COUNTERS:
        t.file("%s/counters/%s" % (port, counter), porthealth.counter_content(health, counter))
    num = int(f.rdma.rsplit("_", 1)[1])
    for cls, name, minor in (("infiniband_mad", "umad%d" % num, num), ("infiniband_mad", "issm%d" % num, 64 + num),
                             ("infiniband_verbs", "uverbs%d" % num, 192 + num)):
        base = "%s/%s/%s" % (dev, cls, name)
        t.file(base + "/ibdev", f.rdma + "\n")
        t.file(base + "/dev", "231:%d\n" % minor)
        if cls == "infiniband_mad":
            t.file(base + "/port", "1\n")
        else:
            t.file(base + "/abi_version", "1\n")
        t.link(base + "/device", _rel(base, dev))
        t.link("/class/%s/%s" % (cls, name), _rel("/class/" + cls, base))


def _netdev(t, state, f, dev):
    net = "%s/net/%s" % (dev, f.netdev)
    t.link("/class/net/%s" % f.netdev, _rel("/class/net", net))
    up = carrier(state, f)
    t.file(net + "/ifindex", "%d\n" % f.ifindex)
    t.file(net + "/iflink", "%d\n" % f.ifindex)
    t.file(net + "/carrier", "1\n" if up else "0\n")
    t.file(net + "/operstate", "up\n" if up else "down\n")
    t.file(net + "/flags", "0x1003\n", True)
    t.file(net + "/dev_id", "0x0\n")
    t.file(net + "/dev_port", "0\n")
    t.file(net + "/uevent", "INTERFACE=%s\nIFINDEX=%d\n" % (f.netdev, f.ifindex))
    t.link(net + "/device", _rel(net, dev))
    t.link(net + "/subsystem", _rel(net, "/class/net"))
    if f.ib:
        t.file(net + "/type", "32\n")
        t.file(net + "/addr_len", "20\n")
        t.file(net + "/address", _ipoib_address(f) + "\n")
        t.file(net + "/broadcast", IPOIB_BROADCAST + "\n")
        t.file(net + "/mtu", "2044\n", True)
        t.file(net + "/pkey", "0xffff\n")
        t.file(net + "/mode", "datagram\n", True)
        t.file(net + "/umcast", "0\n", True)
        t.file(net + "/create_child", "", True)
        t.file(net + "/delete_child", "", True)
    else:
        t.file(net + "/type", "1\n")
        t.file(net + "/addr_len", "6\n")
        t.file(net + "/address", f.mac + "\n")
        t.file(net + "/broadcast", "ff:ff:ff:ff:ff:ff\n")
        t.file(net + "/mtu", "1500\n", True)
        t.file(net + "/speed", "%d\n" % (int(float(sim_state.port_status(state, f)["rate"].split()[0]) * 1000)))
        if not f.is_vf:
            t.file(net + "/phys_port_name", "p%d\n" % f.pf)


_CACHE = {}


def tree(state):
    """The simulated sysfs for ``state`` (cached on the state's content)."""
    key = json.dumps(state, sort_keys=True)
    hit = _CACHE.get(key)
    if hit is None:
        if len(_CACHE) > 8:
            _CACHE.clear()
        hit = _CACHE[key] = _build(state)
    return hit


_FILE_CACHE = {}


def tree_for_file(path):
    """``tree()`` of a state file, cached on (path, mtime, size, inode)."""
    st = os.stat(path)
    key = (path, st.st_mtime_ns, st.st_size, st.st_ino)
    hit = _FILE_CACHE.get(path)
    if hit is None or hit[0] != key:
        hit = (key, tree(sim_state.load(path)))
        _FILE_CACHE[path] = hit
    return hit[1]


def resolve(entries, path, follow_last=True):
    """Canonical path: follows simulated symlinks in every component (and the last one when asked)."""
    parts = [p for p in path.split("/") if p]
    cur = ""
    for _step in range(64):
        if not parts:
            break
        cur = cur + "/" + parts.pop(0)
        entry = entries.get(cur)
        if isinstance(entry, Link) and (parts or follow_last):
            target = posixpath.normpath(posixpath.join(posixpath.dirname(cur), entry.target))
            parts = [p for p in target.split("/") if p] + parts
            cur = ""
    return cur or "/"


def _oserror(code):
    return OSError(code, os.strerror(code))


def _kstrtoint(text):
    """kstrtou16-ish: optional ``+``, base 0, one trailing newline; EINVAL otherwise, ERANGE when too big."""
    if text.endswith("\n"):
        text = text[:-1]
    m = re.fullmatch(r"\+?(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)", text)
    if not m:
        raise _oserror(errno.EINVAL)
    value = int(m.group(1), 0)
    if value > 0xFFFF:
        raise _oserror(errno.ERANGE)
    return value


def _kstrtobool(text):
    t = text[:1].lower()
    if t in ("y", "1"):
        return True
    if t in ("n", "0"):
        return False
    if text[:2].lower() == "on":
        return True
    if text[:3].lower() == "off":
        return False
    raise _oserror(errno.EINVAL)


def _function_of(path):
    """The last PCI-function component of a canonical path."""
    for part in reversed(path.split("/")):
        if _BDF_COMPONENT.match(part):
            return part
    return None


def write(state, path, data, offset=0):
    """Apply ``data`` written at ``offset`` to the simulated attribute ``path`` (``/sys``-relative, may go through
    links).

    Mutates ``state``; raises OSError with the errno the kernel returns.  Returns the byte count the write(2) reports
    when it is not all of ``data`` (binary attributes), else None.
    """
    entries = tree(state)
    canon = resolve(entries, path)
    entry = entries.get(canon)
    if entry is None:
        raise _oserror(errno.ENOENT)
    if isinstance(entry, Dir):
        raise _oserror(errno.EISDIR)
    if isinstance(entry, Link):
        raise _oserror(errno.ENOENT)
    if not entry.writable:
        raise _oserror(errno.EACCES)
    if isinstance(data, str):
        data = data.encode()
    text = data.decode("utf-8", errors="replace")
    name = posixpath.basename(canon)
    parent = posixpath.dirname(canon)
    bdf = _function_of(canon)
    if name == "config" and isinstance(entry.content, bytes):
        # pci_write_config(): refused under kernel lockdown (LOCKDOWN_PCI_ACCESS), else passed to the device.
        if sim_state.lockdown(state) != "none":
            raise _oserror(errno.EPERM)
        return pci.write_config(state, pci.topology(state).get(bdf), offset, data)
    if canon == "/kernel/security/lockdown":
        sim_state.set_lockdown(state, text.strip())
    elif parent == "/bus/pci/drivers/mlx5_core":
        if name == "bind":
            sim_state.bind(state, text.strip())
        elif name == "unbind":
            sim_state.unbind(state, text.strip())
    elif name in ("sriov_numvfs", "mlx5_num_vfs"):
        sim_state.set_numvfs(state, bdf, _kstrtoint(text))
    elif name == "sriov_drivers_autoprobe":
        sim_state.set_autoprobe(state, bdf, _kstrtobool(text))
    elif name == "node_desc" and "/infiniband/" in canon:
        sim_state.set_node_desc(state, bdf, text)
    elif "/sriov/" in canon and name in ("node", "port", "policy"):
        _write_ofed_sriov(state, canon, name, text)
    elif name in ("create_child", "delete_child") and "/net/" in canon:
        _write_ipoib_child(state, canon, name, text)
    # Other writable attributes (enable, uevent, mtu, new_id ...) are accepted and not modelled.


def _write_ofed_sriov(state, canon, name, text):
    m = re.search(r"/([0-9a-f:.]+)/sriov/(\d+)/" + name + "$", canon)
    pf = sim_state.find_function(state, m.group(1))
    vbdf = sim_state.vf_bdf(pf.adapter, pf.pf, int(m.group(2)))
    value = text.strip()
    if name == "policy":
        if value not in ("Down", "Up", "Follow"):
            raise _oserror(errno.EINVAL)
        sim_state.set_vf_guid(state, vbdf, policy=value)
        return
    if not re.fullmatch(r"([0-9a-fA-F]{1,2}:){7}[0-9a-fA-F]{1,2}", value):
        raise _oserror(errno.EINVAL)
    guid = int("".join("%02x" % int(x, 16) for x in value.split(":")), 16)
    if name == "node":
        sim_state.set_vf_guid(state, vbdf, node_guid=guid)
    else:
        sim_state.set_vf_guid(state, vbdf, port_guid=guid)


def _write_ipoib_child(state, canon, name, text):
    """ipoib's create_child/delete_child: a PKey (the full-membership bit 0x8000 is always set) names the child
    ``<parent>.<pkey 4 hex>``. With ``kernel.ipoib_standin`` a real ifb of that name is made or removed;
    otherwise the write is accepted and not modelled."""
    pkey = _kstrtoint(text)
    if pkey in (0, 0x8000):
        raise _oserror(errno.EINVAL)
    child = "%s.%04x" % (posixpath.basename(posixpath.dirname(canon)), pkey | 0x8000)
    if not state.get("kernel", {}).get("ipoib_standin"):
        return
    from fabricsim import iproute  # pylint: disable=import-outside-toplevel

    exists = iproute.real_netdev(child)
    if (name == "create_child") == exists:
        raise _oserror(errno.EEXIST if exists else errno.ENODEV)
    iproute.standin_link(child, name == "create_child")
