# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""GPUDirect RDMA readiness: which GPU goes with which HCA, and what stands in the way.

The reading is done by ``GpuDirect(root, proc_root)``: GPUs and HCAs from sysfs
(``pcie.Pcie``), their bridges and ACS, the IOMMU, ``nvidia-peermem`` and the
DMA-BUF prerequisites. The decisions are pure functions on plain dicts:

- ``relation(a, b)``: the ``nvidia-smi topo -m`` name of the path between two
  functions (PIX, PXB, PHB, NODE, SYS);
- ``pair(gpus, hcas)``: one HCA per GPU, one-to-one when there are enough HCAs;
- ``readiness(report)``: ready or not, with one sentence per thing to change.
"""

from __future__ import annotations

import os
import re

from ansible_collections.fabric.infiniband.plugins.module_utils import pcie
from ansible_collections.fabric.infiniband.plugins.module_utils import sysfs


DEFAULT_PROC_ROOT = "/proc"

# Closest first. PIX: one PCIe switch between the two; PXB: several switches, no host
# bridge; PHB: through a host bridge (root port); NODE: across host bridges of one NUMA
# node; SYS: across NUMA nodes. Only PIX and PXB keep GPUDirect traffic off the CPU.
RELATIONS = ("PIX", "PXB", "PHB", "NODE", "SYS")
GOOD_RELATIONS = ("PIX", "PXB")
_RELATION_TEXT = {
    "PHB": "through the PCIe host bridge",
    "NODE": "across PCIe host bridges of one NUMA node",
    "SYS": "across NUMA nodes",
}

ACS_CONSENT = "gpudirect_allow_acs_change"
KERNEL_ARGS_CONSENT = "gpudirect_allow_kernel_args"

DMABUF_MIN_KERNEL = (5, 12)
DMABUF_MIN_DRIVER = 515
# /sys/module/nvidia/taint: the proprietary driver taints the kernel with P, the open kernel module (Dual MIT/GPL)
# does not (both are out of tree, O, and often unsigned, E).
PROPRIETARY_TAINT = "P"

_IOMMU_ARG_RE = re.compile(r"^(intel_iommu|amd_iommu|iommu|iommu\.passthrough|iommu\.strict)=")
_VERSION_RE = re.compile(r"^(\d+)\.(\d+)")


# ---------------------------------------------------------------- pure functions

def relation(a, b):
    """``(relation, common_bridge, bridges below the common bridge)`` between two
    functions given as dicts with ``host_bridge``, ``path`` and ``numa_node``."""
    if not a["host_bridge"] or a["host_bridge"] != b["host_bridge"]:
        if a["numa_node"] == b["numa_node"]:
            return "NODE", None, []
        return "SYS", None, []
    common = []
    for left, right in zip(a["path"], b["path"]):
        if left != right:
            break
        common.append(left)
    if not common:
        # different root ports of one host bridge
        return "PHB", None, []
    below = a["path"][len(common):] + b["path"][len(common):]
    if len(common) == 1:
        # the shared bridge is the root port itself
        return "PHB", common[-1], below
    tails = (len(a["path"]) - len(common), len(b["path"]) - len(common))
    # each device right below a port of the common switch: one switch; else several
    return ("PIX" if tails == (1, 1) else "PXB"), common[-1], below


def _rank(rel):
    return RELATIONS.index(rel)


def pair(gpus, hcas):
    """One pair per GPU: ``[(gpu, hca, relation, common_bridge, below)]`` in GPU order.

    With at least as many HCAs as GPUs the pairing is one-to-one, greedy: the closest
    relation first, then BDF order. With fewer HCAs each GPU takes its closest HCA.
    """
    if not gpus or not hcas:
        return []
    table = {}
    for gpu in gpus:
        for hca in hcas:
            table[(gpu["pci_address"], hca["pci_address"])] = relation(gpu, hca)
    chosen = {}
    if len(hcas) >= len(gpus):
        used = set()
        order = sorted(table, key=lambda key: (_rank(table[key][0]), key))
        for gpu_bdf, hca_bdf in order:
            if gpu_bdf in chosen or hca_bdf in used:
                continue
            chosen[gpu_bdf] = hca_bdf
            used.add(hca_bdf)
    else:
        for gpu in gpus:
            best = min(hcas, key=lambda hca, g=gpu: (_rank(table[(g["pci_address"], hca["pci_address"])][0]), hca["pci_address"]))
            chosen[gpu["pci_address"]] = best["pci_address"]
    by_bdf = dict((hca["pci_address"], hca) for hca in hcas)
    out = []
    for gpu in gpus:
        hca = by_bdf[chosen[gpu["pci_address"]]]
        rel, common, below = table[(gpu["pci_address"], hca["pci_address"])]
        out.append((gpu, hca, rel, common, below))
    return out


def _hca_name(hca):
    if hca.get("rdma_device"):
        return "HCA %s (%s)" % (hca["pci_address"], hca["rdma_device"])
    return "HCA %s" % hca["pci_address"]


def pair_entry(gpu, hca, rel, common, below, bridges):
    """The result entry of one pair, with its ``ok`` and reasons."""
    redirect = []
    reasons = []
    if rel in GOOD_RELATIONS:
        for bdf in below:
            acs = (bridges.get(bdf) or {}).get("acs")
            if pcie.acs_redirects(acs):
                redirect.append(bdf)
                reasons.append(
                    "GPU %s and %s: ACS %s on bridge %s sends their peer-to-peer traffic through the root complex; "
                    "clear it (%s)" % (gpu["pci_address"], _hca_name(hca), pcie.format_acs(acs), bdf, ACS_CONSENT))
    else:
        reasons.append(
            "GPU %s: no HCA under the same PCIe switch; the closest, %s, is %s (%s), so GPUDirect RDMA traffic goes "
            "through the CPU; put an HCA under the GPU's PCIe switch" % (gpu["pci_address"], _hca_name(hca), rel, _RELATION_TEXT[rel]))
    return {
        "gpu": gpu["pci_address"],
        "hca": hca["pci_address"],
        "relation": rel,
        "common_bridge": common,
        "acs_redirect": redirect,
        "ok": not reasons,
        "reasons": reasons,
    }


def kernel_version(release):
    """``6.8.0-45-generic`` -> ``(6, 8)``; None when unparsable."""
    match = _VERSION_RE.match(release or "")
    if not match:
        return None
    return int(match.group(1)), int(match.group(2))


def driver_major(version):
    """``550.54.15`` -> 550; None when unparsable."""
    match = re.match(r"^(\d+)", version or "")
    return int(match.group(1)) if match else None


def dmabuf_state(kernel_release, driver_version, taint):
    """Whether the DMA-BUF path can replace nvidia-peermem: kernel >= 5.12 and the
    open NVIDIA kernel module >= 515."""
    kver = kernel_version(kernel_release)
    kernel = kver is not None and kver >= DMABUF_MIN_KERNEL
    if taint is None:
        open_module = None
    else:
        open_module = PROPRIETARY_TAINT not in taint.strip()
    major = driver_major(driver_version)
    driver = bool(open_module) and major is not None and major >= DMABUF_MIN_DRIVER
    return {
        "kernel": kernel,
        "driver": driver,
        "driver_version": driver_version,
        "open_kernel_module": open_module,
        "usable": kernel and driver,
    }


def iommu_cmdline(cmdline):
    """The IOMMU arguments of a kernel command line, in order."""
    return [arg for arg in (cmdline or "").split() if _IOMMU_ARG_RE.match(arg)]


def iommu_mode(units, group_types, cmdline_args):
    """``off``, ``passthrough``, ``translated`` or ``unknown``.

    ``group_types`` are the ``type`` files of the GPUs' and HCAs' IOMMU groups (kernel
    5.11+); without them the command line decides (``iommu=pt``).
    """
    if not units:
        return "off"
    types = [t for t in group_types if t]
    if types:
        if any(t.startswith("DMA") for t in types):
            return "translated"
        if all(t == "identity" for t in types):
            return "passthrough"
        return "unknown"
    if "iommu=pt" in cmdline_args or "iommu.passthrough=1" in cmdline_args:
        return "passthrough"
    return "unknown"


def gpudirect_path(peermem, dmabuf):
    """``peermem`` when nvidia-peermem is loaded, else ``dmabuf`` when usable, else None."""
    if peermem["loaded"]:
        return "peermem"
    if dmabuf["usable"]:
        return "dmabuf"
    return None


def _path_reason(report):
    peermem, dmabuf = report["peermem"], report["dmabuf"]
    if not report.get("nvidia_loaded"):
        return "the NVIDIA GPU driver (kernel module nvidia) is not loaded, so neither nvidia-peermem nor DMA-BUF can serve GPUDirect RDMA; install and load it"
    why = []
    if not dmabuf["kernel"]:
        why.append("the kernel is older than 5.12")
    if dmabuf["open_kernel_module"] is False:
        why.append("the NVIDIA driver is the proprietary kernel module, not the open one")
    elif dmabuf["open_kernel_module"] is None:
        why.append("the NVIDIA kernel module flavour is unknown")
    major = driver_major(dmabuf["driver_version"])
    if major is not None and major < DMABUF_MIN_DRIVER:
        why.append("the NVIDIA driver %s is older than %d" % (dmabuf["driver_version"], DMABUF_MIN_DRIVER))
    action = "load it (modprobe nvidia-peermem)" if peermem["installed"] else "install it (it ships with the NVIDIA driver) and load it"
    return "nvidia-peermem is not loaded and DMA-BUF is not usable (%s); %s" % ("; ".join(why) or "unknown why", action)


def readiness(report, require_pairs=True):
    """``(ready, reasons)`` for a report with gpus, hcas, pairs, iommu, peermem and dmabuf."""
    reasons = []
    if not report["gpus"]:
        reasons.append("no NVIDIA GPU found on the PCI bus")
    if not report["hcas"]:
        reasons.append("no NVIDIA/Mellanox HCA (InfiniBand or Ethernet physical function) found on the PCI bus")
    for entry in report["pairs"]:
        for reason in entry["reasons"]:
            if entry["relation"] in GOOD_RELATIONS or require_pairs:
                reasons.append(reason)
    if report["iommu"]["mode"] == "translated":
        reasons.append(
            "the IOMMU translates DMA for the GPUs and HCAs (IOMMU groups of type DMA), which breaks or slows GPUDirect RDMA; "
            "add iommu=pt to the kernel command line and reboot (%s)" % KERNEL_ARGS_CONSENT)
    if report["gpus"] and gpudirect_path(report["peermem"], report["dmabuf"]) is None:
        reasons.append(_path_reason(report))
    return not reasons, reasons


def unknown_acs(report):
    """Bridges on a good pair's path whose ACS could not be read (config space too short)."""
    bridges = dict((b["pci_address"], b) for b in report["bridges"])
    out = []
    for entry in report["pairs"]:
        if entry["relation"] not in GOOD_RELATIONS:
            continue
        for bdf in entry.get("_below", []):
            if bridges.get(bdf, {}).get("acs") is None and bdf not in out:
                out.append(bdf)
    return out


# ---------------------------------------------------------------- reading

class GpuDirect(object):
    """Reads everything the report needs from ``root`` (sysfs) and ``proc_root``."""

    def __init__(self, root=pcie.DEFAULT_ROOT, proc_root=DEFAULT_PROC_ROOT):
        self.pci = pcie.Pcie(root)
        self.sysfs = self.pci.sysfs
        self.proc_root = proc_root

    def _read_proc(self, *parts):
        try:
            with open(os.path.join(self.proc_root, *parts)) as handle:
                return handle.read()
        except (IOError, OSError):
            return None

    def inventory(self):
        """``(gpus, hcas)``: function dicts of the NVIDIA GPUs and the HCA physical functions."""
        gpus, hcas = [], []
        for bdf in self.pci.functions():
            fn = self.pci.function(bdf)
            if fn["is_vf"]:
                continue
            if pcie.is_gpu(fn):
                gpus.append(fn)
            elif pcie.is_hca(fn):
                rdma = self.pci.rdma_devices(bdf)
                netdevs = self.pci.netdevs(bdf)
                fn["rdma_device"] = rdma[0] if rdma else None
                fn["netdev"] = netdevs[0] if netdevs else None
                hcas.append(fn)
        return gpus, hcas

    def iommu(self, groups):
        units = self.sysfs.listdir("class", "iommu")
        types = [self.sysfs.read("kernel", "iommu_groups", group, "type") for group in groups if group]
        args = iommu_cmdline(self._read_proc("cmdline"))
        return {
            "enabled": bool(units),
            "mode": iommu_mode(units, types, args),
            "cmdline": args,
            "units": units,
        }

    def peermem(self, installed):
        base = ("module", "nvidia_peermem")
        loaded = self.sysfs.module_loaded("nvidia_peermem")
        return {
            "installed": bool(installed) or loaded,
            "loaded": loaded,
            "refcnt": sysfs.parse_int(self.sysfs.read(*(base + ("refcnt",)))) if loaded else None,
            "holders": self.sysfs.listdir(*(base + ("holders",))) if loaded else [],
        }

    def dmabuf(self, kernel_release):
        return dmabuf_state(kernel_release, self.sysfs.read("module", "nvidia", "version"),
                            self.sysfs.read("module", "nvidia", "taint"))

    def report(self, peermem_installed=False, kernel_release=None, require_pairs=True):
        """The whole report, in the module's return schema."""
        if kernel_release is None:
            kernel_release = os.uname()[2]
        gpus, hcas = self.inventory()
        bridge_bdfs = sorted(set(b for fn in gpus + hcas for b in fn["path"]))
        bridges = dict((bdf, self.pci.bridge(bdf)) for bdf in bridge_bdfs)
        pairs = []
        for gpu, hca, rel, common, below in pair(gpus, hcas):
            entry = pair_entry(gpu, hca, rel, common, below, bridges)
            entry["_below"] = below
            pairs.append(entry)
        report = {
            "gpus": [_gpu_entry(fn) for fn in gpus],
            "hcas": [_hca_entry(fn) for fn in hcas],
            "bridges": [bridges[bdf] for bdf in bridge_bdfs],
            "pairs": pairs,
            "iommu": self.iommu([fn["iommu_group"] for fn in gpus + hcas]),
            "peermem": self.peermem(peermem_installed),
            "dmabuf": self.dmabuf(kernel_release),
            "nvidia_loaded": self.sysfs.module_loaded("nvidia"),
        }
        report["gpudirect_path"] = gpudirect_path(report["peermem"], report["dmabuf"])
        report["acs_unknown"] = unknown_acs(report)
        for entry in pairs:
            del entry["_below"]
        report["ready"], report["reasons"] = readiness(report, require_pairs)
        return report


def _gpu_entry(fn):
    return {
        "pci_address": fn["pci_address"],
        "vendor_id": pcie.short_id(fn["vendor_id"]),
        "device_id": pcie.short_id(fn["device_id"]),
        "numa_node": fn["numa_node"],
        "driver": fn["driver"],
        "path": fn["path"],
        "iommu_group": fn["iommu_group"],
    }


def _hca_entry(fn):
    return {
        "pci_address": fn["pci_address"],
        "device_id": pcie.short_id(fn["device_id"]),
        "rdma_device": fn["rdma_device"],
        "netdev": fn["netdev"],
        "numa_node": fn["numa_node"],
        "driver": fn["driver"],
        "path": fn["path"],
        "iommu_group": fn["iommu_group"],
    }
