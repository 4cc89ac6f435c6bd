# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

import os

import pytest

from ansible_collections.fabric.infiniband.plugins.module_utils import sysfs
from ansible_collections.fabric.infiniband.tests.unit.conftest import read_fixture


# ---------------------------------------------------------------- parsers

@pytest.mark.parametrize("text, expected", [
    ("4: ACTIVE", (4, "ACTIVE")),
    ("4: ACTIVE\n", (4, "ACTIVE")),
    ("  4:   ACTIVE  ", (4, "ACTIVE")),
    ("1: DOWN", (1, "DOWN")),
    ("5: ACTIVE_DEFER", (5, "ACTIVE_DEFER")),
    ("5: LinkUp", (5, "LinkUp")),
    ("7: Phy Test", (7, "Phy Test")),
    ("7:  Phy   Test ", (7, "Phy Test")),
    ("4:PortConfigurationTraining", (4, "PortConfigurationTraining")),
    ("ACTIVE", (None, "ACTIVE")),
    ("", (None, None)),
    (None, (None, None)),
])
def test_parse_state(text, expected):
    assert sysfs.parse_state(text) == expected


@pytest.mark.parametrize("text, expected", [
    ("0x30", 48), ("0xffff", 65535), ("0x0", 0), (" 0x7 \n", 7), ("30", 48), ("0XFFFF", 65535),
    ("", None), (None, None), ("zz", None),
])
def test_parse_hex_int(text, expected):
    assert sysfs.parse_hex_int(text) == expected


@pytest.mark.parametrize("text, expected", [
    ("0", 0), (" 16\n", 16), ("-1", -1), ("0x10", 16), ("", None), (None, None), ("abc", None),
])
def test_parse_int(text, expected):
    assert sysfs.parse_int(text) == expected


@pytest.mark.parametrize("text, expected", [
    ("1", True), ("0", False), ("Y", True), ("N", False), (" y\n", True), ("maybe", None), (None, None),
])
def test_parse_bool(text, expected):
    assert sysfs.parse_bool(text) == expected


@pytest.mark.parametrize("text, rate, gbps", [
    ("200 Gb/sec (4X HDR)", "200 Gb/sec (4X HDR)", 200),
    ("100 Gb/sec (4X EDR)", "100 Gb/sec (4X EDR)", 100),
    ("400 Gb/sec (4X NDR)", "400 Gb/sec (4X NDR)", 400),
    ("56 Gb/sec (4X FDR)", "56 Gb/sec (4X FDR)", 56),
    ("10 Gb/sec (4X)", "10 Gb/sec (4X)", 10),
    ("2.5 Gb/sec (1X)", "2.5 Gb/sec (1X)", 2.5),
    ("  200  Gb/sec   (4X HDR)\n", "200 Gb/sec (4X HDR)", 200),
    ("weird", "weird", None),
    ("", None, None),
    (None, None, None),
])
def test_parse_rate(text, rate, gbps):
    got = sysfs.parse_rate(text)
    assert got == (rate, gbps)
    assert type(got[1]) is type(gbps)


@pytest.mark.parametrize("text, expected", [
    ("c470:bd03:00cf:4964", "0xc470bd0300cf4964"),
    ("C470:BD03:00CF:4964\n", "0xc470bd0300cf4964"),
    ("c470:bd03:cf:4964", "0xc470bd0300cf4964"),
    ("0xc470bd0300cf4964", "0xc470bd0300cf4964"),
    ("0x70bd0300cf4964", "0x0070bd0300cf4964"),
    ("02:00:00:00:00:00:00:01", "0x0200000000000001"),
    ("0000:0000:0000:0000", "0x0000000000000000"),
    ("c470:bd03:00cf", None),
    ("0xnothex", None),
    ("", None),
    (None, None),
])
def test_format_guid(text, expected):
    assert sysfs.format_guid(text) == expected


@pytest.mark.parametrize("text, expected", [
    ("fe80:0000:0000:0000:c470:bd03:00cf:4964", "0xc470bd0300cf4964"),
    ("fe80::c470:bd03:cf:4964", "0xc470bd0300cf4964"),
    (" fe80:0000:0000:0000:0c42:a103:00aa:0010 \n", "0x0c42a10300aa0010"),
    ("0000:0000:0000:0000:0000:0000:0000:0000", "0x0000000000000000"),
    ("not a gid", None),
    (None, None),
])
def test_guid_from_gid(text, expected):
    assert sysfs.guid_from_gid(text) == expected


@pytest.mark.parametrize("text, expected", [
    ("0xffff", "0xffff"), ("0x8001", "0x8001"), ("0x7fff", "0x7fff"), ("0x0005", "0x0005"), ("0x5", "0x0005"),
    ("0x0000", None), ("0x8000", None), ("", None), (None, None),
])
def test_parse_pkey(text, expected):
    assert sysfs.parse_pkey(text) == expected


@pytest.mark.parametrize("text, expected", [
    ("[none] integrity confidentiality", "none"),
    ("none [integrity] confidentiality\n", "integrity"),
    ("none integrity [confidentiality]", "confidentiality"),
    ("none", "none"),
    ("", None),
    (None, None),
])
def test_parse_lockdown(text, expected):
    assert sysfs.parse_lockdown(text) == expected


@pytest.mark.parametrize("text, expected", [
    ("Y", "shared"), ("N", "exclusive"), ("Y\n", "shared"), ("1", "shared"), ("0", "exclusive"), ("", None), (None, None),
])
def test_parse_netns_mode(text, expected):
    assert sysfs.parse_netns_mode(text) == expected


@pytest.mark.parametrize("bdf, card, short", [
    ("0000:3b:00.0", "0000:3b:00", "3b:00.0"),
    ("0000:3B:00.1", "0000:3b:00", "3b:00.1"),
    ("3b:00.0", None, None),
    ("mlx5_0", None, None),
    (None, None, None),
])
def test_pci_address_helpers(bdf, card, short):
    assert sysfs.card_address(bdf) == card
    assert sysfs.short_bdf(bdf) == short


@pytest.mark.parametrize("vendor, device, expected", [
    ("0x15b3", "0x101b", ("ConnectX-6", False)),
    ("0x15b3\n", "0x101B", ("ConnectX-6", False)),
    ("0x15b3", "0x1021", ("ConnectX-7", False)),
    ("0x15b3", "0x1023", ("ConnectX-8", False)),
    ("0x15b3", "0x1003", ("ConnectX-3", False)),
    ("0x15b3", "0x1017", ("ConnectX-5", False)),
    ("0x15b3", "0xa2d6", ("BlueField-2", False)),
    ("0x15b3", "0xa2dc", ("BlueField-3", False)),
    ("0x15b3", "0x1018", ("ConnectX-5 Virtual Function", True)),
    ("0x15b3", "0x101e", ("ConnectX Family mlx5Gen Virtual Function", True)),
    ("0x15b3", "0x9999", (None, None)),
    ("0x8086", "0x101b", (None, None)),
])
def test_pci_model(vendor, device, expected):
    assert sysfs.pci_model(vendor, device) == expected


def test_pci_model_table_is_consistent():
    for device_id, (model, is_vf) in sysfs.PCI_MODELS.items():
        assert device_id == sysfs.normalize_hex_id(device_id)
        assert ("Virtual Function" in model) == is_vf


def test_recorded_ibstatus_values_parse():
    """Every value ibstatus prints is a raw sysfs attribute."""
    values = {}
    for line in read_fixture("ibstatus_cx7.txt").splitlines()[1:]:
        key, value = line.split(":", 1)
        values[key.strip()] = value
    assert sysfs.guid_from_gid(values["default gid"]) == "0xc470bd0300cf4964"
    assert sysfs.parse_hex_int(values["base lid"]) == 48
    assert sysfs.parse_hex_int(values["sm lid"]) == 48
    assert sysfs.parse_state(values["state"]) == (4, "ACTIVE")
    assert sysfs.parse_state(values["phys state"]) == (5, "LinkUp")
    assert sysfs.parse_rate(values["rate"]) == ("200 Gb/sec (4X HDR)", 200)


# ---------------------------------------------------------------- tree

def test_missing_root_is_tolerated(tmp_path):
    tree = sysfs.Sysfs(str(tmp_path / "nothing"))
    assert not tree.is_dir()
    assert tree.ib_devices() == []
    assert tree.pci_functions() == []
    assert tree.lockdown() is None
    assert tree.ib_core_netns_mode() is None
    assert tree.ib_pci_address("mlx5_0") is None
    assert tree.ib_ports("mlx5_0", "0000:3b:00.0") == []
    assert tree.pci_sriov("0000:3b:00.0") is None


def test_default_root():
    assert sysfs.Sysfs().root == "/sys"
    assert sysfs.Sysfs(None).root == "/sys"


def test_single_cx7_tree(make_sysfs):
    tree = sysfs.Sysfs(make_sysfs("sysfs_cx7_single.yml"))
    assert tree.ib_devices() == ["mlx5_0"]
    assert tree.lockdown() == "none"
    assert tree.ib_core_netns_mode() == "shared"
    device = tree.ib_device("mlx5_0")
    assert device == {
        "rdma_device": "mlx5_0",
        "pci_address": "0000:c1:00.0",
        "node_type": "CA",
        "firmware_version": "28.40.1000",
        "psid": "MT_0000000834",
        "hca_type": "MT4129",
        "node_guid": "0xc470bd0300cf4964",
        "sys_image_guid": "0xc470bd0300cf4964",
    }
    assert tree.ib_ports("mlx5_0", "0000:c1:00.0") == [{
        "port": 1,
        "state": "ACTIVE",
        "state_num": 4,
        "physical_state": "LinkUp",
        "physical_state_num": 5,
        "link_layer": "InfiniBand",
        "lid": 48,
        "sm_lid": 48,
        "lmc": 0,
        "rate": "200 Gb/sec (4X HDR)",
        "rate_gbps": 200,
        "port_guid": "0xc470bd0300cf4964",
        "pkeys": ["0xffff"],
        "netdev": "ibp193s0",
    }]
    fn = tree.pci_function("0000:c1:00.0")
    assert fn == {
        "pci_address": "0000:c1:00.0",
        "card_address": "0000:c1:00",
        "vendor_id": "0x15b3",
        "device_id": "0x1021",
        "pci_class": "0x020700",
        "model": "ConnectX-7",
        "driver": "mlx5_core",
        "is_vf": False,
        "physfn": None,
        "numa_node": 1,
        "sriov": {"total_vfs": 16, "num_vfs": 0, "drivers_autoprobe": True, "vfs": []},
        "netdevs": ["ibp193s0"],
    }


def test_dual_port_card_with_vfs(make_sysfs):
    tree = sysfs.Sysfs(make_sysfs("sysfs_cx6_dual_sriov.yml"))
    assert tree.ib_devices() == ["mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3"]
    assert tree.pci_functions() == ["0000:3b:00.0", "0000:3b:00.1", "0000:3b:00.2", "0000:3b:00.3", "0000:af:00.0"]
    assert tree.pci_functions("0x8086") == ["0000:00:1f.0"]
    assert tree.lockdown() == "integrity"
    assert tree.ib_core_netns_mode() == "exclusive"

    pf0 = tree.pci_function("0000:3b:00.0")
    assert pf0["sriov"] == {"total_vfs": 8, "num_vfs": 2, "drivers_autoprobe": False, "vfs": ["0000:3b:00.2", "0000:3b:00.3"]}
    pf1 = tree.pci_function("0000:3b:00.1")
    assert pf1["sriov"] is None
    assert pf1["card_address"] == pf0["card_address"] == "0000:3b:00"
    assert pf1["netdevs"] == ["ibp59s0f1", "ibp59s0f1.8001"]

    vf = tree.pci_function("0000:3b:00.3")
    assert (vf["is_vf"], vf["physfn"], vf["sriov"], vf["numa_node"], vf["model"]) == (True, "0000:3b:00.0", None, None, "ConnectX-6 Virtual Function")
    assert tree.ib_device("mlx5_3")["node_guid"] == "0x0000000000000000"

    unbound = tree.pci_function("0000:af:00.0")
    assert (unbound["driver"], unbound["model"], unbound["netdevs"], unbound["sriov"]) == (None, "ConnectX-7", [], None)

    # whitespace in state, phys_state and rate files
    port = tree.ib_ports("mlx5_0", "0000:3b:00.0")[0]
    assert (port["state"], port["state_num"], port["physical_state"], port["rate"], port["rate_gbps"]) == (
        "ACTIVE", 4, "LinkUp", "200 Gb/sec (4X HDR)", 200)
    assert (port["lid"], port["sm_lid"], port["netdev"]) == (7, 1, "ibp59s0f0")

    # down port, no SM yet, partition 0x8001 and an IPoIB child that is not the port's netdev
    port = tree.ib_ports("mlx5_1", "0000:3b:00.1")[0]
    assert (port["state"], port["physical_state"], port["lid"], port["sm_lid"]) == ("DOWN", "Polling", 65535, 0)
    assert (port["rate"], port["rate_gbps"]) == ("10 Gb/sec (4X)", 10)
    assert port["pkeys"] == ["0xffff", "0x8001"]
    assert port["netdev"] == "ibp59s0f1"

    # VF with no netdev and an empty P_Key table
    port = tree.ib_ports("mlx5_3", "0000:3b:00.3")[0]
    assert (port["state"], port["port_guid"], port["pkeys"], port["netdev"]) == ("INIT", "0x0000000000000000", [], None)


def test_mlx4_two_ports_roce_vf_and_soft_roce(make_sysfs):
    tree = sysfs.Sysfs(make_sysfs("sysfs_mixed.yml"))
    assert tree.lockdown() is None
    assert tree.ib_core_netns_mode() is None
    ports = tree.ib_ports("mlx4_0", "0000:81:00.0")
    assert [(p["port"], p["netdev"], p["state"], p["physical_state"]) for p in ports] == [
        (1, "ib0", "ACTIVE", "LinkUp"), (2, "ib1", "DOWN", "Disabled")]
    assert [p["port_guid"] for p in ports] == ["0x7cfe900300c40491", "0x7cfe900300c40492"]

    vf = tree.pci_function("0001:00:02.0")
    assert (vf["is_vf"], vf["physfn"], vf["card_address"]) == (True, None, "0001:00:02")
    roce = tree.ib_ports("rdma0", "0001:00:02.0")[0]
    assert (roce["link_layer"], roce["netdev"], roce["lid"]) == ("Ethernet", "enP1s2", 0)

    assert tree.ib_pci_address("rxe0") is None
    soft = tree.ib_ports("rxe0")[0]
    assert (soft["netdev"], soft["rate_gbps"]) == ("ens3", 2.5)


def test_port_netdev_ambiguous_or_unknown(make_sysfs):
    root = make_sysfs({"pci": {"0000:01:00.0": {
        "device": "0x1017",
        "net": {"eth0": {"dev_port": "0"}, "eth1": {"dev_port": "0"}, "eth2": {}},
        "infiniband": {"mlx5_0": {"ports": {"1": {"state": "4: ACTIVE"}, "2": {"state": "4: ACTIVE"}, "x": {}}}},
    }}})
    tree = sysfs.Sysfs(root)
    ports = tree.ib_ports("mlx5_0", "0000:01:00.0")
    # eth2 has no dev_port (taken as 0): three candidates for port 1, none for port 2
    assert [(p["port"], p["netdev"]) for p in ports] == [(1, None), (2, None)]
    assert ports[0]["rate"] is None and ports[0]["lid"] is None and ports[0]["pkeys"] == []


def test_vf_in_another_slot_belongs_to_its_pf_card(make_sysfs):
    root = make_sysfs({"pci": {
        "0000:5e:00.0": {"device": "0x1021", "sriov_totalvfs": "16", "sriov_numvfs": "1"},
        "0000:5e:01.2": {"device": "0x101e", "physfn": "0000:5e:00.0", "vf_index": 0},
    }})
    tree = sysfs.Sysfs(root)
    vf = tree.pci_function("0000:5e:01.2")
    assert (vf["card_address"], vf["physfn"], vf["is_vf"]) == ("0000:5e:00", "0000:5e:00.0", True)
    assert tree.pci_function("0000:5e:00.0")["sriov"]["vfs"] == ["0000:5e:01.2"]


def test_unreadable_file_is_none(make_sysfs):
    root = make_sysfs("sysfs_cx7_single.yml")
    rate = os.path.join(root, "class", "infiniband", "mlx5_0", "ports", "1", "rate")
    os.unlink(rate)
    os.mkdir(rate)  # reading a directory fails like an EINVAL attribute does
    tree = sysfs.Sysfs(root)
    port = tree.ib_ports("mlx5_0", "0000:c1:00.0")[0]
    assert (port["rate"], port["rate_gbps"], port["state"]) == (None, None, "ACTIVE")


def test_non_pci_device_link_is_ignored(make_sysfs):
    root = make_sysfs({"virtual_infiniband": {"siw0": {"ports": {"1": {}}}},
                       "links": {"devices/virtual/infiniband/siw0/device": "../../../virtual/net/eth0"}})
    assert sysfs.Sysfs(root).ib_pci_address("siw0") is None
