# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""pcie: config space parsing, and the reader over fake trees built from recorded lspci -tv."""

from __future__ import annotations

import os
import struct

import pytest

from ansible_collections.fabric.infiniband.plugins.module_utils import pcie
from ansible_collections.fabric.infiniband.tests.unit.plugins.module_utils import pcie_tree


NO_BITS = dict((name, False) for name, _label in pcie.ACS_BITS)


def _spec(name, **extra):
    spec = pcie_tree.load_spec(name)
    spec.update(extra)
    return spec


# ---------------------------------------------------------------- config space

@pytest.mark.parametrize("kind", ["root_port", "upstream", "downstream"])
def test_port_type(kind):
    data = pcie_tree.config_space(0x1000, 0xC010, 0x060400, kind, [])
    assert pcie.port_type(data) == kind


def test_capabilities_walk_the_list():
    data = pcie_tree.config_space(0x1000, 0xC010, 0x060400, "downstream", [])
    assert pcie.capabilities(data) == {0x01: 0x40, 0x10: 0x60}
    assert pcie.extended_capabilities(data) == {0x0001: 0x100, 0x000D: 0x148}


def test_endpoint_without_capability_list():
    data = pcie_tree.config_space(0x10DE, 0x2330, 0x030200)
    assert pcie.capabilities(data) == {}
    assert pcie.port_type(data) is None


@pytest.mark.parametrize("bits, expected", [
    ([], {}),
    (["ReqRedir", "CmpltRedir"], {"req_redir": True, "cmplt_redir": True}),
    (list(pcie_tree.ACS_LINUX_DEFAULT), {"src_valid": True, "req_redir": True, "cmplt_redir": True, "upstream_fwd": True}),
    (["DirectTrans", "EgressCtrl", "TransBlk"], {"direct_trans": True, "egress_ctrl": True, "trans_blk": True}),
])
def test_acs_control_bits(bits, expected):
    data = pcie_tree.config_space(0x10B5, 0x8796, 0x060400, "downstream", bits)
    acs = pcie.parse_acs(data)
    want = dict(NO_BITS, capable=True)
    want.update(expected)
    assert acs == want
    assert list(acs) == ["capable"] + [name for name, _label in pcie.ACS_BITS]


def test_acs_redirect_text():
    acs = pcie.parse_acs(pcie_tree.config_space(0x10B5, 0x8796, 0x060400, "downstream", ["CmpltRedir", "ReqRedir", "SrcValid"]))
    assert pcie.acs_redirects(acs) == ["ReqRedir", "CmpltRedir"]
    assert pcie.format_acs(acs) == "ReqRedir+ CmpltRedir+"
    assert pcie.acs_redirects(None) == []


def test_no_acs_capability_is_not_unknown():
    data = pcie_tree.config_space(0x1022, 0x14AB, 0x060400, "root_port", None)
    assert pcie.parse_acs(data) == dict(NO_BITS, capable=False)


@pytest.mark.parametrize("size", [0, 64, 255, 256, 259])
def test_short_config_space_leaves_acs_unknown(size):
    """An unprivileged read returns 64 bytes; anything short of the first extended header is unknown."""
    data = pcie_tree.config_space(0x1000, 0xC010, 0x060400, "downstream", ["ReqRedir"])[:size]
    assert pcie.parse_acs(data) is None
    # the PCI Express capability of these images lies at 0x60: out of reach of a 64-byte read
    assert pcie.port_type(data) == ("downstream" if size > 0x64 else None)


def test_acs_register_cut_off_is_unknown():
    data = pcie_tree.config_space(0x1000, 0xC010, 0x060400, "downstream", ["ReqRedir"])[:0x14C]
    assert pcie.parse_acs(data) is None


def test_all_ones_extended_header_ends_the_list():
    data = bytearray(pcie_tree.config_space(0x1000, 0xC010, 0x060400, "downstream", None))
    struct.pack_into("<I", data, 0x100, 0xFFFFFFFF)
    assert pcie.parse_acs(bytes(data)) == dict(NO_BITS, capable=False)


def test_capability_loops_end():
    data = bytearray(pcie_tree.config_space(0x1000, 0xC010, 0x060400, "downstream", None))
    data[0x61] = 0x40  # PCIe capability points back to power management
    struct.pack_into("<I", data, 0x100, 0x0001 | (1 << 16) | (0x100 << 20))  # extended list points at itself
    assert pcie.port_type(bytes(data)) == "downstream"
    assert pcie.parse_acs(bytes(data)) == dict(NO_BITS, capable=False)


def test_short_id_and_class():
    assert pcie.short_id("0x10DE\n") == "10de"
    assert pcie.short_id("zz") is None
    assert pcie.class_code(" 0x030200 ") == 0x030200


# ---------------------------------------------------------------- the lspci -tv helper

def test_helper_parses_the_recorded_lenovo_tree():
    nodes = pcie_tree.parse_lspci_tree(_spec("lenovo_sd665n_v3_h100.yml")["lspci_tv"])
    assert nodes["0000:06:00.0"]["parent"] == "0000:05:00.0"
    assert nodes["0000:05:00.0"]["parent"] == "0000:04:00.0"
    assert nodes["0000:04:00.0"]["parent"] == "0000:02:02.0"
    assert nodes["0000:03:00.0"]["parent"] == "0000:02:00.0"
    assert nodes["0000:02:00.0"]["parent"] == nodes["0000:02:02.0"]["parent"] == "0000:01:00.0"
    assert nodes["0000:01:00.0"]["parent"] == "0000:00:01.1"
    assert nodes["0000:00:01.1"]["parent"] is None
    assert nodes["0000:c6:00.0"]["host_bridge"] == "0000:c0"
    assert nodes["0000:06:00.0"]["name"] == "NVIDIA Corporation GH100 [H100 SXM5 80GB]"
    assert nodes["0000:64:00.0"]["parent"] == "0000:63:00.0"


def test_helper_parses_the_recorded_asus_tree():
    nodes = pcie_tree.parse_lspci_tree(_spec("asus_esc8000a_e12_rtx6000ada.yml")["lspci_tv"])
    assert nodes["0000:64:1c.0"]["parent"] == "0000:63:00.0"
    assert nodes["0000:6a:0c.0"]["parent"] == "0000:69:00.0"
    assert nodes["0000:69:00.0"]["parent"] == "0000:62:04.0"
    assert nodes["0000:21:00.1"]["parent"] == "0000:20:03.1"
    assert nodes["0000:e1:00.1"]["name"] == "NVIDIA Corporation AD102 High Definition Audio Controller"


# ---------------------------------------------------------------- the reader

def test_functions_and_paths_of_the_recorded_lenovo_tree(tmp_path):
    spec = _spec("lenovo_sd665n_v3_h100.yml")
    pcie_tree.build_pcie_sysfs(str(tmp_path), spec)
    reader = pcie.Pcie(str(tmp_path))
    assert len(reader.functions()) == 163
    gpu = reader.function("0000:06:00.0")
    assert gpu["vendor_id"] == "0x10de"
    assert gpu["device_id"] == "0x2330"
    assert gpu["class"] == 0x030200
    assert gpu["numa_node"] == 0
    assert gpu["driver"] == "nvidia"
    assert gpu["iommu_group"] is not None
    assert gpu["host_bridge"] == "0000:00"
    assert gpu["path"] == spec["expect"]["gpu_paths"]["0000:06:00.0"]
    assert gpu["is_vf"] is False
    assert pcie.is_gpu(gpu) and not pcie.is_hca(gpu)
    hca = reader.function("0000:c3:00.0")
    assert hca["numa_node"] == 1
    assert hca["path"] == ["0000:c0:01.1", "0000:c1:00.0", "0000:c2:00.0"]
    assert pcie.is_hca(hca)
    for bdf, kind in spec["expect"]["port_types"].items():
        bridge = reader.bridge(bdf)
        assert bridge["port_type"] == kind
        assert bridge["acs"] == dict(NO_BITS, capable=True)
    # The ASPEED VGA controller is not an NVIDIA GPU; the I210 is not an HCA
    assert not pcie.is_gpu(reader.function("0000:64:00.0"))
    assert not pcie.is_hca(reader.function("0000:07:00.0"))


def test_audio_function_of_a_gpu_is_not_a_gpu(tmp_path):
    pcie_tree.build_pcie_sysfs(str(tmp_path), _spec("asus_esc8000a_e12_rtx6000ada.yml"))
    reader = pcie.Pcie(str(tmp_path))
    assert pcie.is_gpu(reader.function("0000:01:00.0"))
    assert not pcie.is_gpu(reader.function("0000:01:00.1"))
    assert reader.function("0000:01:00.0")["path"] == ["0000:00:01.1"]


def test_whitespace_and_case_in_attribute_files(tmp_path):
    pcie_tree.build_pcie_sysfs(str(tmp_path), _spec("synthetic_hgx_8gpu_8hca.yml"))
    base = os.path.join(str(tmp_path), "bus", "pci", "devices", "0000:18:00.0")
    for name, text in (("vendor", "0x10DE\n\n"), ("device", " 0x2330 "), ("class", "0x030200\r\n"), ("numa_node", "  1\n")):
        with open(os.path.join(base, name), "w") as handle:
            handle.write(text)
    fn = pcie.Pcie(str(tmp_path)).function("0000:18:00.0")
    assert (fn["vendor_id"], fn["device_id"], fn["class"], fn["numa_node"]) == ("0x10de", "0x2330", 0x030200, 1)
    assert pcie.is_gpu(fn)


def test_missing_files_are_none(tmp_path):
    pcie_tree.build_pcie_sysfs(str(tmp_path), _spec("synthetic_hgx_8gpu_8hca.yml", iommu_groups=False))
    base = os.path.join(str(tmp_path), "bus", "pci", "devices", "0000:18:00.0")
    for name in ("numa_node", "class", "driver"):
        os.unlink(os.path.join(base, name))
    reader = pcie.Pcie(str(tmp_path))
    fn = reader.function("0000:18:00.0")
    assert (fn["numa_node"], fn["class"], fn["driver"], fn["iommu_group"]) == (None, None, None, None)
    os.unlink(os.path.join(base, "config"))
    assert reader.bridge("0000:18:00.0") == {"pci_address": "0000:18:00.0", "port_type": None, "acs": None}
    assert reader.resolve("0000:ff:00.0") == (None, [])
    assert pcie.Pcie(str(tmp_path / "nothing")).functions() == []


def test_numa_node_minus_one_is_none(tmp_path):
    pcie_tree.build_pcie_sysfs(str(tmp_path), _spec("synthetic_hgx_8gpu_8hca.yml", numa={}))
    assert pcie.Pcie(str(tmp_path)).function("0000:18:00.0")["numa_node"] is None


def test_virtual_functions_are_flagged(tmp_path):
    tree = (
        "-[0000:00]-+-01.0-[01]--+-00.0  Mellanox Technologies MT27800 Family [ConnectX-5]\n"
        "           |            +-00.1  Mellanox Technologies MT27800 Family [ConnectX-5 Virtual Function]\n"
        "           |            \\-00.2  Mellanox Technologies MT27800 Family [ConnectX-5 Virtual Function]\n"
        "           \\-02.0-[02]----00.0  NVIDIA Corporation GV100GL [Tesla V100 PCIe 32GB]\n"
    )
    ids = [
        {"match": "[ConnectX-5 Virtual Function]", "vendor": "15b3", "device": "1018", "class": "020700"},
        {"match": "[ConnectX-5]", "vendor": "15b3", "device": "1017", "class": "020700"},
        {"match": "Tesla V100", "vendor": "10de", "device": "1db6", "class": "030200"},
    ]
    pcie_tree.build_pcie_sysfs(str(tmp_path), {"lspci_tv": tree, "ids": ids, "vfs": {"0000:01:00.1": "0000:01:00.0"}})
    reader = pcie.Pcie(str(tmp_path))
    assert reader.function("0000:01:00.0")["is_vf"] is False
    assert reader.function("0000:01:00.1")["is_vf"] is True  # physfn link
    assert reader.function("0000:01:00.2")["is_vf"] is True  # VF device id, even without physfn


def test_netdevs_leave_ipoib_children_out(tmp_path):
    pcie_tree.build_pcie_sysfs(str(tmp_path), _spec("synthetic_hgx_8gpu_8hca.yml"))
    net = os.path.join(str(tmp_path), "bus", "pci", "devices", "0000:19:00.0", "net")
    os.makedirs(os.path.join(net, "ibp25s0"))
    os.makedirs(os.path.join(net, "ibp25s0.8001"))
    with open(os.path.join(net, "ibp25s0.8001", "parent"), "w") as handle:
        handle.write("ibp25s0\n")
    reader = pcie.Pcie(str(tmp_path))
    assert reader.netdevs("0000:19:00.0") == ["ibp25s0"]
    assert reader.rdma_devices("0000:19:00.0") == ["mlx5_0"]
