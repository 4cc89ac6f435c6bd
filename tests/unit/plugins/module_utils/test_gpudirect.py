# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""gpudirect: pairing, ACS, IOMMU, nvidia-peermem and DMA-BUF, over recorded and synthetic trees."""

from __future__ import annotations

import os

import pytest

from ansible_collections.fabric.infiniband.plugins.module_utils import gpudirect
from ansible_collections.fabric.infiniband.tests.unit.plugins.module_utils import pcie_tree


HGX = "synthetic_hgx_8gpu_8hca.yml"
LENOVO = "lenovo_sd665n_v3_h100.yml"
ASUS = "asus_esc8000a_e12_rtx6000ada.yml"
KERNEL = "6.8.0-45-generic"


make_node = pcie_tree.make_node
_write = pcie_tree.write_text


def report_of(tmp_path, fixture, installed=True, kernel=KERNEL, require_pairs=True, **kwargs):
    root, proc = make_node(tmp_path, fixture, **kwargs)
    return gpudirect.GpuDirect(root, proc).report(peermem_installed=installed, kernel_release=kernel, require_pairs=require_pairs)


def _pairs(report):
    return [dict((k, p[k]) for k in ("gpu", "hca", "relation", "common_bridge")) for p in report["pairs"]]


# ---------------------------------------------------------------- recorded topologies

def test_recorded_lenovo_h100_pairs_each_gpu_with_the_connectx7_in_front_of_it(tmp_path):
    """Each H100 hangs below the ConnectX-7's own PCIe switch and one more switch: PXB."""
    spec = pcie_tree.load_spec(LENOVO)
    report = report_of(tmp_path, LENOVO)
    assert [g["pci_address"] for g in report["gpus"]] == spec["expect"]["gpus"]
    assert [h["pci_address"] for h in report["hcas"]] == spec["expect"]["hcas"]
    assert _pairs(report) == spec["expect"]["pairs"]
    assert all(p["ok"] and p["acs_redirect"] == [] for p in report["pairs"])
    gpu = report["gpus"][0]
    assert gpu == {
        "pci_address": "0000:06:00.0", "vendor_id": "10de", "device_id": "2330", "numa_node": 0, "driver": "nvidia",
        "path": spec["expect"]["gpu_paths"]["0000:06:00.0"], "iommu_group": gpu["iommu_group"],
    }
    assert report["hcas"][0]["device_id"] == "1021"
    # bridges: those on a GPU or HCA path only, sorted
    bridges = [b["pci_address"] for b in report["bridges"]]
    assert bridges == sorted(bridges)
    assert "0000:00:01.1" in bridges and "0000:40:01.3" in bridges and "0000:00:07.1" not in bridges
    assert report["ready"] is True, report["reasons"]
    assert report["reasons"] == []
    assert report["gpudirect_path"] == "peermem"


def test_recorded_asus_without_switches_is_not_ready(tmp_path):
    """GPUs and ConnectX-7 on different root complexes of the same socket: NODE, one reason per GPU."""
    spec = pcie_tree.load_spec(ASUS)
    report = report_of(tmp_path, ASUS)
    assert [g["pci_address"] for g in report["gpus"]] == spec["expect"]["gpus"]
    assert [h["pci_address"] for h in report["hcas"]] == spec["expect"]["hcas"]
    assert _pairs(report) == spec["expect"]["pairs"]
    assert report["ready"] is False
    assert len(report["reasons"]) == 4
    assert report["reasons"][0] == (
        "GPU 0000:01:00.0: no HCA under the same PCIe switch; the closest, HCA 0000:21:00.0, is NODE (across PCIe host bridges "
        "of one NUMA node), so GPUDirect RDMA traffic goes through the CPU; put an HCA under the GPU's PCIe switch")
    assert all(not p["ok"] for p in report["pairs"])


def test_recorded_asus_with_require_pairs_false_is_ready(tmp_path):
    report = report_of(tmp_path, ASUS, require_pairs=False)
    assert report["ready"] is True
    assert all(not p["ok"] and p["reasons"] for p in report["pairs"])


@pytest.mark.parametrize("fixture", [LENOVO, ASUS, HGX])
def test_relations_are_symmetric_and_consistent(tmp_path, fixture):
    root, proc = make_node(tmp_path, fixture)
    reader = gpudirect.GpuDirect(root, proc)
    gpus, hcas = reader.inventory()
    for gpu in gpus:
        for hca in hcas:
            forward = gpudirect.relation(gpu, hca)
            backward = gpudirect.relation(hca, gpu)
            assert forward[0] == backward[0] and forward[1] == backward[1]


# ---------------------------------------------------------------- synthetic: the good case

def test_synthetic_hgx_is_ready(tmp_path):
    spec = pcie_tree.load_spec(HGX)
    report = report_of(tmp_path, HGX)
    assert _pairs(report) == spec["expect"]["pairs"]
    assert report["hcas"][0]["rdma_device"] == "mlx5_0"
    assert report["ready"] is True
    assert report["iommu"] == {"enabled": False, "mode": "off", "cmdline": [], "units": []}
    assert report["peermem"] == {"installed": True, "loaded": True, "refcnt": 0, "holders": []}


# ---------------------------------------------------------------- ACS

def test_acs_redirect_on_one_downstream_port(tmp_path):
    report = report_of(tmp_path, HGX, acs={"0000:17:01.0": ["SrcValid", "ReqRedir", "CmpltRedir", "UpstreamFwd"]})
    bad = report["pairs"][0]
    assert bad["ok"] is False
    assert bad["acs_redirect"] == ["0000:17:01.0"]
    assert bad["reasons"] == [
        "GPU 0000:18:00.0 and HCA 0000:19:00.0 (mlx5_0): ACS ReqRedir+ CmpltRedir+ on bridge 0000:17:01.0 sends their "
        "peer-to-peer traffic through the root complex; clear it (gpudirect_allow_acs_change)"]
    assert all(p["ok"] for p in report["pairs"][1:])
    assert report["ready"] is False
    assert report["reasons"] == bad["reasons"]
    bridge = [b for b in report["bridges"] if b["pci_address"] == "0000:17:01.0"][0]
    assert bridge["port_type"] == "downstream"
    assert bridge["acs"]["req_redir"] and bridge["acs"]["cmplt_redir"] and bridge["acs"]["capable"]


def test_acs_redirect_only_on_completions_counts(tmp_path):
    report = report_of(tmp_path, HGX, acs={"0000:17:00.0": ["CmpltRedir"]})
    assert report["pairs"][0]["acs_redirect"] == ["0000:17:00.0"]
    assert "ACS CmpltRedir+ on bridge 0000:17:00.0" in report["pairs"][0]["reasons"][0]


def test_acs_above_the_common_switch_does_not_matter(tmp_path):
    """Redirect on the root port and the upstream port: the pair's traffic turns around below them."""
    report = report_of(tmp_path, HGX, acs={"0000:15:01.0": ["ReqRedir", "CmpltRedir"], "0000:16:00.0": ["ReqRedir"]})
    assert report["pairs"][0]["ok"] is True
    assert report["ready"] is True


def test_acs_other_bits_do_not_matter(tmp_path):
    report = report_of(tmp_path, HGX, acs_default=["SrcValid", "TransBlk", "UpstreamFwd", "EgressCtrl", "DirectTrans"])
    assert report["ready"] is True


def test_bridges_without_acs_capability(tmp_path):
    report = report_of(tmp_path, HGX, acs_default=None)
    assert report["ready"] is True
    assert all(b["acs"]["capable"] is False for b in report["bridges"])


def test_unprivileged_config_read_leaves_acs_unknown(tmp_path):
    """64-byte config space (not root): ACS null, pair not condemned, bridge listed in acs_unknown."""
    report = report_of(tmp_path, HGX, config_size={"0000:17:00.0": 64, "0000:17:01.0": 64},
                       acs={"0000:17:00.0": ["ReqRedir"]})
    bridges = dict((b["pci_address"], b) for b in report["bridges"])
    assert bridges["0000:17:00.0"] == {"pci_address": "0000:17:00.0", "port_type": None, "acs": None}
    assert report["pairs"][0]["ok"] is True
    assert report["acs_unknown"] == ["0000:17:00.0", "0000:17:01.0"]
    assert report["ready"] is True


# ---------------------------------------------------------------- pairing

def test_gpu_without_an_hca_in_its_switch(tmp_path):
    """Remove the HCA of the first switch: its GPU pairs with the other HCA of its host bridge (PHB)."""
    spec = pcie_tree.load_spec(HGX)
    spec["lspci_tv"] = spec["lspci_tv"].replace(
        " |           |                               \\-01.0-[19]----00.0  Mellanox Technologies MT2910 Family [ConnectX-7]\n", "")
    report = report_of(tmp_path, spec)
    first = report["pairs"][0]
    assert (first["gpu"], first["hca"], first["relation"], first["common_bridge"]) == ("0000:18:00.0", "0000:1e:00.0", "PHB", None)
    assert first["reasons"] == [
        "GPU 0000:18:00.0: no HCA under the same PCIe switch; the closest, HCA 0000:1e:00.0 (mlx5_1), is PHB (through the PCIe "
        "host bridge), so GPUDirect RDMA traffic goes through the CPU; put an HCA under the GPU's PCIe switch"]
    # fewer HCAs than GPUs: the second GPU keeps its own HCA
    assert report["pairs"][1]["hca"] == "0000:1e:00.0" and report["pairs"][1]["relation"] == "PIX"
    assert report["ready"] is False


def test_sys_and_node_relations(tmp_path):
    """Only the NUMA-1 HCAs are left: NUMA-0 GPUs reach them across sockets."""
    spec = pcie_tree.load_spec(HGX)
    spec["ids"] = [spec["ids"][0], {"match": "ConnectX-7]", "vendor": "15b3", "device": "1021", "class": "020700"}]
    lines = spec["lspci_tv"].splitlines(True)
    spec["lspci_tv"] = "".join(line.replace("Mellanox Technologies MT2910 Family [ConnectX-7]", "Other")
                               if any(bus in line for bus in ("-[19]", "-[1e]", "-[3b]", "-[40]")) else line for line in lines)
    report = report_of(tmp_path, spec, require_pairs=True)
    relations = [p["relation"] for p in report["pairs"]]
    assert relations[:4] == ["SYS"] * 4
    assert relations[4:] == ["PIX"] * 4
    assert "is SYS (across NUMA nodes)" in report["pairs"][0]["reasons"][0]


def test_pairing_is_one_to_one_greedy_by_relation_then_address():
    def fn(bdf, host, path, numa=0):
        return {"pci_address": bdf, "host_bridge": host, "path": path, "numa_node": numa}

    gpus = [fn("0000:03:00.0", "0000:00", ["0000:00:01.0", "0000:01:00.0", "0000:02:00.0"]),
            fn("0000:05:00.0", "0000:00", ["0000:00:01.0", "0000:01:00.0", "0000:02:01.0"])]
    hcas = [fn("0000:06:00.0", "0000:00", ["0000:00:01.0", "0000:01:00.0", "0000:02:02.0"]),
            fn("0000:81:00.0", "0000:80", ["0000:80:01.0"], numa=1)]
    pairs = gpudirect.pair(gpus, hcas)
    assert [(g["pci_address"], h["pci_address"], rel) for g, h, rel, _c, _b in pairs] == [
        ("0000:03:00.0", "0000:06:00.0", "PIX"), ("0000:05:00.0", "0000:81:00.0", "SYS")]
    # with one HCA both GPUs share it
    pairs = gpudirect.pair(gpus, hcas[:1])
    assert [h["pci_address"] for _g, h, _r, _c, _b in pairs] == ["0000:06:00.0", "0000:06:00.0"]
    assert gpudirect.pair([], hcas) == [] and gpudirect.pair(gpus, []) == []


@pytest.mark.parametrize("a_path, b_path, expected", [
    (["rp", "up", "d1"], ["rp", "up", "d2"], ("PIX", "up")),
    (["rp", "up", "d1", "up2", "d3"], ["rp", "up", "d2"], ("PXB", "up")),
    (["rp"], ["rp2"], ("PHB", None)),
    (["rp", "up", "d1"], ["rp"], ("PHB", "rp")),
])
def test_relation_in_one_host_bridge(a_path, b_path, expected):
    a = {"host_bridge": "0000:00", "path": a_path, "numa_node": 0}
    b = {"host_bridge": "0000:00", "path": b_path, "numa_node": 0}
    assert gpudirect.relation(a, b)[:2] == expected


@pytest.mark.parametrize("numa_a, numa_b, expected", [(0, 0, "NODE"), (0, 1, "SYS"), (None, None, "NODE"), (None, 1, "SYS")])
def test_relation_across_host_bridges(numa_a, numa_b, expected):
    a = {"host_bridge": "0000:00", "path": ["rp"], "numa_node": numa_a}
    b = {"host_bridge": "0000:80", "path": ["rp"], "numa_node": numa_b}
    assert gpudirect.relation(a, b) == (expected, None, [])


def test_virtual_functions_are_ignored(tmp_path):
    tree = (
        "-[0000:00]-+-01.0-[01-04]----00.0-[02-04]--+-00.0-[03]----00.0  NVIDIA Corporation GH100 [H100 SXM5 80GB]\n"
        "           |                               \\-01.0-[04]--+-00.0  Mellanox Technologies MT2910 Family [ConnectX-7]\n"
        "           |                                            +-00.1  Mellanox Technologies MT2910 Family [ConnectX-7]\n"
        "           |                                            \\-00.2  Mellanox Technologies ConnectX Family mlx5Gen Virtual Function\n"
        "           \\-02.0-[05]----00.0  NVIDIA Corporation GH100 [H100 SXM5 80GB]\n"
    )
    ids = [{"match": "GH100", "vendor": "10de", "device": "2330", "class": "030200"},
           {"match": "[ConnectX-7]", "vendor": "15b3", "device": "1021", "class": "020700"},
           {"match": "Virtual Function", "vendor": "15b3", "device": "101e", "class": "020700"}]
    # 00.1 is a VF by its physfn link although its device id is the PF's
    report = report_of(tmp_path, {"lspci_tv": tree, "ids": ids, "vfs": {"0000:04:00.1": "0000:04:00.0"}})
    assert [h["pci_address"] for h in report["hcas"]] == ["0000:04:00.0"]
    assert [(p["gpu"], p["hca"], p["relation"]) for p in report["pairs"]] == [
        ("0000:03:00.0", "0000:04:00.0", "PIX"), ("0000:05:00.0", "0000:04:00.0", "PHB")]


# ---------------------------------------------------------------- inventory edge cases

def test_no_gpu(tmp_path):
    spec = pcie_tree.load_spec(HGX)
    spec["ids"] = spec["ids"][1:]
    report = report_of(tmp_path, spec)
    assert report["gpus"] == [] and report["pairs"] == []
    assert report["ready"] is False
    assert report["reasons"] == ["no NVIDIA GPU found on the PCI bus"]


def test_no_hca(tmp_path):
    spec = pcie_tree.load_spec(HGX)
    spec["ids"] = spec["ids"][:1]
    report = report_of(tmp_path, spec)
    assert report["pairs"] == []
    assert report["reasons"] == ["no NVIDIA/Mellanox HCA (InfiniBand or Ethernet physical function) found on the PCI bus"]


def test_empty_sysfs(tmp_path):
    report = gpudirect.GpuDirect(str(tmp_path / "none"), str(tmp_path / "none")).report(kernel_release=KERNEL)
    assert report["ready"] is False
    assert len(report["reasons"]) == 2
    assert report["iommu"]["mode"] == "off"


# ---------------------------------------------------------------- IOMMU

@pytest.mark.parametrize("group_type", ["DMA", "DMA-FQ"])
def test_translated_iommu_is_not_ready(tmp_path, group_type):
    report = report_of(tmp_path, HGX, iommu=group_type, cmdline="root=/dev/sda1 intel_iommu=on")
    assert report["iommu"] == {"enabled": True, "mode": "translated", "cmdline": ["intel_iommu=on"], "units": ["dmar0"]}
    assert report["ready"] is False
    assert report["reasons"] == [
        "the IOMMU translates DMA for the GPUs and HCAs (IOMMU groups of type DMA), which breaks or slows GPUDirect RDMA; "
        "add iommu=pt to the kernel command line and reboot (gpudirect_allow_kernel_args)"]


def test_passthrough_iommu_is_ready(tmp_path):
    report = report_of(tmp_path, HGX, iommu="identity", cmdline="root=/dev/sda1 amd_iommu=on iommu=pt")
    assert report["iommu"]["mode"] == "passthrough"
    assert report["iommu"]["cmdline"] == ["amd_iommu=on", "iommu=pt"]
    assert report["ready"] is True


@pytest.mark.parametrize("cmdline, mode", [("ro iommu=pt", "passthrough"), ("ro iommu.passthrough=1", "passthrough"), ("ro", "unknown")])
def test_iommu_mode_from_cmdline_without_group_types(tmp_path, cmdline, mode):
    report = report_of(tmp_path, HGX, iommu="", cmdline=cmdline)
    assert report["iommu"]["mode"] == mode
    assert report["ready"] is True


def test_iommu_mode_function():
    assert gpudirect.iommu_mode([], ["DMA"], []) == "off"
    assert gpudirect.iommu_mode(["dmar0"], ["identity", "DMA-FQ"], ["iommu=pt"]) == "translated"
    assert gpudirect.iommu_mode(["dmar0"], ["identity", None], []) == "passthrough"
    assert gpudirect.iommu_mode(["dmar0"], ["blocked"], []) == "unknown"


# ---------------------------------------------------------------- nvidia-peermem and DMA-BUF

def test_dmabuf_replaces_peermem(tmp_path):
    report = report_of(tmp_path, HGX, modules=("nvidia",), taint="OE", installed=False)
    assert report["peermem"] == {"installed": False, "loaded": False, "refcnt": None, "holders": []}
    assert report["dmabuf"] == {"kernel": True, "driver": True, "driver_version": "550.54.15", "open_kernel_module": True, "usable": True}
    assert report["gpudirect_path"] == "dmabuf"
    assert report["ready"] is True


def test_no_gpudirect_path_with_the_proprietary_driver(tmp_path):
    report = report_of(tmp_path, HGX, modules=("nvidia",), taint="POE", installed=True)
    assert report["dmabuf"]["usable"] is False and report["dmabuf"]["open_kernel_module"] is False
    assert report["gpudirect_path"] is None
    assert report["reasons"] == [
        "nvidia-peermem is not loaded and DMA-BUF is not usable (the NVIDIA driver is the proprietary kernel module, not the open one); "
        "load it (modprobe nvidia-peermem)"]


def test_no_gpudirect_path_old_kernel_and_driver_not_installed(tmp_path):
    report = report_of(tmp_path, HGX, modules=("nvidia",), taint="OE", nvidia_version="510.47.03",
                       installed=False, kernel="5.4.0-150-generic")
    assert report["reasons"] == [
        "nvidia-peermem is not loaded and DMA-BUF is not usable (the kernel is older than 5.12; the NVIDIA driver 510.47.03 is "
        "older than 515); install it (it ships with the NVIDIA driver) and load it"]


def test_no_nvidia_driver(tmp_path):
    report = report_of(tmp_path, HGX, modules=(), installed=False)
    assert report["nvidia_loaded"] is False
    assert report["dmabuf"]["driver_version"] is None and report["dmabuf"]["open_kernel_module"] is None
    assert report["reasons"] == [
        "the NVIDIA GPU driver (kernel module nvidia) is not loaded, so neither nvidia-peermem nor DMA-BUF can serve "
        "GPUDirect RDMA; install and load it"]


def test_peermem_in_use(tmp_path):
    root, proc = make_node(tmp_path, HGX)
    _write(os.path.join(root, "module", "nvidia_peermem", "refcnt"), " 2\n")
    os.makedirs(os.path.join(root, "module", "nvidia_peermem", "holders", "some_module"))
    report = gpudirect.GpuDirect(root, proc).report(peermem_installed=False, kernel_release=KERNEL)
    assert report["peermem"] == {"installed": True, "loaded": True, "refcnt": 2, "holders": ["some_module"]}


@pytest.mark.parametrize("release, version, taint, expected", [
    ("5.12.0", "515.43.04", "OE", True),
    ("5.11.22", "550.54.15", "OE", False),
    ("6.1.0-18-amd64", "470.223.02", "OE", False),
    ("6.1.0-18-amd64", "550.54.15", "POE", False),
    ("6.1.0-18-amd64", None, None, False),
    ("garbage", "550.54.15", "OE", False),
])
def test_dmabuf_state(release, version, taint, expected):
    assert gpudirect.dmabuf_state(release, version, taint)["usable"] is expected


def test_kernel_and_driver_versions():
    assert gpudirect.kernel_version("6.8.0-45-generic") == (6, 8)
    assert gpudirect.kernel_version("") is None
    assert gpudirect.driver_major("550.54.15") == 550
    assert gpudirect.driver_major(None) is None
