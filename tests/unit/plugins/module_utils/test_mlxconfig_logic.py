# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""module_utils/mlxconfig.py apart from the table parser: values and the
comparator, the three-way decision, BlueField mode, devices and functions,
tool choice, argv, and the failure explanations."""

from __future__ import annotations

import pytest

from ansible_collections.fabric.infiniband.plugins.module_utils import mlxconfig as m
from ansible_collections.fabric.infiniband.plugins.module_utils import sysfs
from ansible_collections.fabric.infiniband.tests.unit.conftest import read_fixture


def entry(default=None, current=None, next_boot=None, name="X"):
    return m.param_entry(name, {"default": default, "current": current, "next_boot": next_boot})


LINK = entry("IB(1)", "ETH(2)", "ETH(2)", "LINK_TYPE_P1")
SRIOV = entry("False(0)", "False(0)", "False(0)", "SRIOV_EN")
VFS = entry("8", "0", "0", "NUM_OF_VFS")
ROCE = entry("ROCE_ENABLE(2)", "DEVICE_DEFAULT(0)", "ROCE_ENABLE(2)", "ROCE_CONTROL")
ARRAY = entry("Array[0..7]", "Array[0..7]", "Array[0..7]", "ESWITCH_HAIRPIN_DESCRIPTORS")
PLAIN = entry(None, "ETH", "ETH", "LINK_TYPE_P1")


# ---------------------------------------------------------------- values

@pytest.mark.parametrize("text, expected", [
    ("IB(1)", {"type": "enum", "name": "IB", "number": 1}),
    ("True(1)", {"type": "bool", "name": "True", "number": 1}),
    ("False(0)", {"type": "bool", "name": "False", "number": 0}),
    ("_256KB(1)", {"type": "enum", "name": "_256KB", "number": 1}),
    ("8", {"type": "number", "name": None, "number": 8}),
    ("0x10", {"type": "number", "name": None, "number": 16}),
    ("Array[0..7]", {"type": "array", "name": None, "number": None, "length": 8}),
    ("ETH", {"type": "enum", "name": "ETH", "number": None}),
    ("True", {"type": "bool", "name": "True", "number": 1}),
    ("N/A", {"type": "string", "name": None, "number": None}),
    ("  GID(0) ", {"type": "enum", "name": "GID", "number": 0, "text": "GID(0)"}),
])
def test_parse_value(text, expected):
    parsed = m.parse_value(text)
    for key, value in expected.items():
        assert parsed[key] == value, (key, parsed)


def test_parse_value_none():
    assert m.parse_value(None) is None


def test_link_type_without_number_gets_it():
    assert (PLAIN["type"], PLAIN["current_name"], PLAIN["current_number"]) == ("enum", "ETH", 2)


@pytest.mark.parametrize("param, value, expected", [
    (LINK, "IB", ("IB", 1, "IB", "IB(1)")),
    (LINK, "ib", ("IB", 1, "IB", "IB(1)")),
    (LINK, 1, ("IB", 1, "IB", "IB(1)")),
    (LINK, "1", ("IB", 1, "IB", "IB(1)")),
    (LINK, "IB(1)", ("IB", 1, "IB", "IB(1)")),
    (LINK, "eth", ("ETH", 2, "ETH", "ETH(2)")),
    (PLAIN, "ib", ("IB", 1, "IB", "IB(1)")),
    (SRIOV, True, ("True", 1, "True", "True(1)")),
    (SRIOV, False, ("False", 0, "False", "False(0)")),
    (SRIOV, "yes", ("True", 1, "True", "True(1)")),
    (SRIOV, "OFF", ("False", 0, "False", "False(0)")),
    (SRIOV, 1, ("True", 1, "True", "True(1)")),
    (SRIOV, "1", ("True", 1, "True", "True(1)")),
    (SRIOV, "True(1)", ("True", 1, "True", "True(1)")),
    (VFS, 8, (None, 8, "8", "8")),
    (VFS, "16", (None, 16, "16", "16")),
    (VFS, "0x10", (None, 16, "16", "16")),
    (ROCE, "roce_enable", ("ROCE_ENABLE", 2, "ROCE_ENABLE", "ROCE_ENABLE(2)")),
    (ROCE, 0, ("DEVICE_DEFAULT", 0, "DEVICE_DEFAULT", "DEVICE_DEFAULT(0)")),
    # a name the query does not show is left to the tool
    (ROCE, "ROCE_DISABLE", ("ROCE_DISABLE", None, "ROCE_DISABLE", "ROCE_DISABLE")),
    (ROCE, 1, (None, 1, "1", "1")),
    (entry(None, None, "abc"), "abc", ("abc", None, "abc", "abc")),
    # a value form the module does not know: compared and passed on as text
    (entry(None, None, "N/A"), "x/y", ("x/y", None, "x/y", "x/y")),
    (entry(None, None, "N/A"), True, ("True", 1, "True", "True")),
])
def test_desired_value(param, value, expected):
    want = m.desired_value("LINK_TYPE_P1" if param in (LINK, PLAIN) else "P", value, param)
    assert (want["name"], want["number"], want["arg"], want["display"]) == expected


@pytest.mark.parametrize("name, param, value, why, accepted", [
    ("LINK_TYPE_P1", LINK, "FOO", "'FOO' is not one of the values of LINK_TYPE_P1", "IB (1), ETH (2)"),
    ("LINK_TYPE_P1", LINK, 3, "3 is not one of the values", "IB (1), ETH (2)"),
    ("LINK_TYPE_P1", LINK, "IB(2)", "'IB(2)' does not match: IB is IB(1)", "IB (1), ETH (2)"),
    ("LINK_TYPE_P1", LINK, True, "True is a boolean, but LINK_TYPE_P1 is an enumeration", "IB (1)"),
    ("LINK_TYPE_P1", LINK, "I B", "'I B' is neither a value name nor a number", "ETH (2)"),
    ("LINK_TYPE_P1", LINK, "-1", "'-1' is negative", "ETH (2)"),
    ("SRIOV_EN", SRIOV, "maybe", "'maybe' is not a boolean", "true or false"),
    ("SRIOV_EN", SRIOV, 2, "2 is not a boolean", "true or false"),
    ("SRIOV_EN", SRIOV, "True(0)", "'True(0)' is not a boolean", "true or false"),
    ("NUM_OF_VFS", VFS, "eight", "'eight' is not a non-negative integer", "a non-negative integer"),
    ("NUM_OF_VFS", VFS, -1, "-1 is not a non-negative integer", "a non-negative integer"),
    ("NUM_OF_VFS", VFS, True, "True is a boolean, but NUM_OF_VFS is a number", "a non-negative integer"),
    ("NUM_OF_VFS", VFS, 8.0, "8.0 is not a valid value", "a non-negative integer"),
    ("NUM_OF_VFS", VFS, [8], "[8] is not a valid value", "a non-negative integer"),
    ("NUM_OF_VFS", VFS, None, "None is not a valid value", "a non-negative integer"),
    ("ROCE_CONTROL", ROCE, "ROCE ENABLE", "is neither a value name nor a number", "the query shows ROCE_ENABLE (2), DEVICE_DEFAULT (0)"),
    ("ESWITCH_HAIRPIN_DESCRIPTORS", ARRAY, 1, "1 cannot be set: ESWITCH_HAIRPIN_DESCRIPTORS is an array (Array[0..7])",
     "arrays are not set by this module"),
    ("X", entry(None, None, "N/A"), "a b", "'a b' is not a valid value", "as the tool prints it"),
    ("X", entry(None, None, "N/A"), "a=b", "'a=b' is not a valid value", "as the tool prints it"),
])
def test_desired_value_refused(name, param, value, why, accepted):
    with pytest.raises(m.ValueProblem) as exc:
        m.desired_value(name, value, param)
    assert why in str(exc.value)
    assert accepted in exc.value.accepted


def test_link_type_vpi_accepted_where_the_query_shows_it():
    cx3 = entry("VPI(3)", "VPI(3)", "VPI(3)", "LINK_TYPE_P1")
    assert m.desired_value("LINK_TYPE_P1", "vpi", cx3)["display"] == "VPI(3)"
    assert m.describe_accepted("LINK_TYPE_P1", cx3) == "IB (1), ETH (2), VPI (3)"


@pytest.mark.parametrize("param, desired, printed, expected", [
    (LINK, "ib", "IB(1)", True),
    (LINK, 1, "IB(1)", True),
    (LINK, "eth", "IB(1)", False),
    (PLAIN, 2, "ETH", True),
    (SRIOV, True, "True(1)", True),
    (SRIOV, "no", "True(1)", False),
    (VFS, "8", "8", True),
    (VFS, 8, "0x8", True),
    (ROCE, "ROCE_DISABLE", "ROCE_ENABLE(2)", False),
    (ROCE, "ROCE_DISABLE", "ROCE_DISABLE(1)", True),
    (ROCE, 1, "ROCE_DISABLE(1)", True),
    (VFS, 8, None, None),
])
def test_value_matches(param, desired, printed, expected):
    name = "LINK_TYPE_P1" if param in (LINK, PLAIN) else "P"
    assert m.value_matches(m.desired_value(name, desired, param), printed, name) is expected


@pytest.mark.parametrize("current, next_boot, desired, expected", [
    ("ETH(2)", "ETH(2)", "IB", ("write", True)),          # not in Next Boot: write, reboot
    ("ETH(2)", "IB(1)", "IB", ("pending_reboot", True)),  # in Next Boot, not Current: reboot only
    ("IB(1)", "IB(1)", "IB", ("none", False)),            # everything current
    ("IB(1)", "ETH(2)", "IB", ("write", False)),          # undo someone's staged change: no reboot
    (None, "ETH(2)", "IB", ("write", True)),              # Current not printed
    (None, "IB(1)", "IB", ("none", False)),
])
def test_decide(current, next_boot, desired, expected):
    param = entry("IB(1)", current, next_boot, "LINK_TYPE_P1")
    assert m.decide("LINK_TYPE_P1", param, m.desired_value("LINK_TYPE_P1", desired, param)) == expected


# ---------------------------------------------------------------- BlueField

def _params(name):
    return m.parse_query(read_fixture("mlxconfig/" + name))["devices"][0]["params"]


def test_bluefield_modes_from_queries():
    assert m.bluefield_mode(_params("sim_g5_bf2_dpu_query.txt")) == "dpu"
    assert m.bluefield_mode(_params("sim_g5_bf2_nic_query.txt")) == "nic"
    assert m.bluefield_mode(_params("sim_g5_bf2_nic_query.txt"), "next_boot") == "nic"
    assert m.bluefield_mode(_params("sim_g1_cx6_ib_query.txt")) is None
    assert "INTERNAL_CPU_OFFLOAD_ENGINE ENABLED(0)" in m.bluefield_evidence(_params("sim_g5_bf2_dpu_query.txt"))


def _bf(**values):
    return dict((name, {"current": value, "next_boot": value}) for name, value in values.items())


@pytest.mark.parametrize("params, mode", [
    (_bf(INTERNAL_CPU_MODEL="EMBEDDED_CPU(1)", INTERNAL_CPU_OFFLOAD_ENGINE="ENABLED(0)"), "dpu"),
    (_bf(INTERNAL_CPU_MODEL="EMBEDDED_CPU(1)", INTERNAL_CPU_PAGE_SUPPLIER="ECPF(0)", INTERNAL_CPU_OFFLOAD_ENGINE="DISABLED(1)"), "dpu"),
    (_bf(INTERNAL_CPU_MODEL="EMBEDDED_CPU(1)", INTERNAL_CPU_ESWITCH_MANAGER="EXT_HOST_PF(1)", INTERNAL_CPU_OFFLOAD_ENGINE="DISABLED(1)"),
     "nic"),
    (_bf(INTERNAL_CPU_MODEL="SEPERATED_HOST(0)", INTERNAL_CPU_OFFLOAD_ENGINE="ENABLED(0)"), "separated_host"),
    (_bf(INTERNAL_CPU_MODEL="EMBEDDED_CPU(1)"), "unknown"),
    (_bf(INTERNAL_CPU_IB_VPORT0="ECPF"), "dpu"),
    ({}, None),
    ({"INTERNAL_CPU_OFFLOAD_ENGINE": {"current": None, "next_boot": "DISABLED(1)"}}, "nic"),
])
def test_bluefield_mode(params, mode):
    assert m.bluefield_mode(params) == mode


# ---------------------------------------------------------------- devices

@pytest.mark.parametrize("text, expected", [
    ("3b:00.0", "0000:3b:00.0"), ("0000:3B:00.1", "0000:3b:00.1"), ("0001:af:00.0", "0001:af:00.0"),
    ("mlx5_0", None), ("/dev/mst/mt4123_pciconf0", None), ("3b:00", None), ("", None), (None, None),
])
def test_normalize_pci_address(text, expected):
    assert m.normalize_pci_address(text) == expected


@pytest.mark.parametrize("device, pci_address, expected", [
    ("0000:3b:00.1", None, "0000:3b:00.0"),
    ("3b:00.1", None, "0000:3b:00.0"),
    ("0000:3b:00.0", None, None),
    ("mlx5_1", "0000:3b:00.1", "0000:3b:00.0"),
    ("mlx5_0", "0000:3b:00.0", None),
    ("mlx5_1", None, None),
    ("/dev/mst/mt4123_pciconf0.1", None, "/dev/mst/mt4123_pciconf0"),
    ("/dev/mst/mt4123_pciconf0", None, None),
    ("/dev/fwctl/fwctl1", None, None),
])
def test_first_function(device, pci_address, expected):
    assert m.first_function(device, pci_address) == expected


@pytest.mark.parametrize("name, expected", [
    ("NUM_OF_VFS", True), ("sriov_en", True), ("LINK_TYPE_P1", True), ("LINK_TYPE_P2", True), ("KEEP_IB_LINK_UP_P2", True),
    ("NUM_OF_PF", True), ("PF_LOG_BAR_SIZE", False), ("NUM_PF_MSIX", False), ("ROCE_CONTROL", False),
])
def test_is_per_card(name, expected):
    assert m.is_per_card(name) is expected


@pytest.mark.parametrize("name, expected", [
    ("LINK_TYPE_P1", True), ("link_type_p1", True), ("EXP_ROM_UEFI_x86_ENABLE", True), ("ARRAY[0..7]", True), ("ARRAY[3]", True),
    ("-y", False), ("LINK TYPE", False), ("A=B", False), ("", False), ("1ABC", False),
])
def test_is_param_name(name, expected):
    assert m.is_param_name(name) is expected


NODE = {
    "lockdown": "[none] integrity confidentiality",
    "pci": {
        "0000:3b:00.0": {"device": "0x101b", "driver": "mlx5_core", "infiniband": {"mlx5_0": {"node_type": "1: CA"}}},
        "0000:3b:00.1": {"device": "0x101b", "driver": "mlx5_core", "infiniband": {"mlx5_1": {"node_type": "1: CA"}}},
        "0000:3b:00.2": {"device": "0x101c", "physfn": "0000:3b:00.0", "vf_index": 0,
                         "infiniband": {"mlx5_2": {"node_type": "1: CA"}}},
        # a VF passed through without its PF (no physfn link): known by its device id
        "0000:5e:00.0": {"device": "0x101c"},
        "0000:af:00.0": {"device": "0x1021"},
        "0000:00:1f.6": {"vendor": "0x8086", "device": "0x15bb"},
    },
}


def test_sysfs_functions(make_sysfs):
    tree = sysfs.Sysfs(make_sysfs(NODE))
    assert m.sysfs_functions(tree) == [
        {"pci_address": "0000:3b:00.0", "rdma_devices": ["mlx5_0"]},
        {"pci_address": "0000:3b:00.1", "rdma_devices": ["mlx5_1"]},
        {"pci_address": "0000:af:00.0", "rdma_devices": []},
    ]
    assert m.describe_functions(m.sysfs_functions(tree)) == (
        "NVIDIA/Mellanox PCI functions in sysfs: 0000:3b:00.0 (mlx5_0), 0000:3b:00.1 (mlx5_1), 0000:af:00.0")
    assert m.describe_functions([]) == "sysfs shows no NVIDIA/Mellanox PCI function"


@pytest.mark.parametrize("device, expected", [
    ("3b:00.1", {"target": "0000:3b:00.1", "pci_address": "0000:3b:00.1", "rdma_devices": ["mlx5_1"], "physfn": None}),
    ("mlx5_0", {"target": "0000:3b:00.0", "pci_address": "0000:3b:00.0", "rdma_devices": ["mlx5_0"], "physfn": None}),
    ("mlx5_2", {"target": "0000:3b:00.2", "pci_address": "0000:3b:00.2", "physfn": "0000:3b:00.0"}),
    ("mlx5_9", {"target": "mlx5_9", "pci_address": None, "rdma_devices": []}),
    ("/dev/mst/mt4123_pciconf0", {"target": "/dev/mst/mt4123_pciconf0", "pci_address": None}),
    (" 0000:AF:00.0 ", {"device": "0000:AF:00.0", "target": "0000:af:00.0", "rdma_devices": []}),
    ("0000:3c:00.0", {"target": "0000:3c:00.0", "pci_address": "0000:3c:00.0", "physfn": None}),
])
def test_resolve_device(device, expected, make_sysfs):
    found = m.resolve_device(device, sysfs.Sysfs(make_sysfs(NODE)))
    for key, value in expected.items():
        assert found[key] == value, (key, found)


def test_resolve_device_without_sysfs():
    assert m.resolve_device("mlx5_0")["target"] == "mlx5_0"


# ---------------------------------------------------------------- tools and argv

@pytest.mark.parametrize("choice, installed, device, expected", [
    ("auto", {"mlxconfig": "/a", "mstconfig": "/b"}, None, "mlxconfig"),
    ("auto", {"mstconfig": "/b"}, None, "mstconfig"),
    ("auto", {"mlxconfig": "/a"}, "/dev/mst/mt4123_pciconf0", "mlxconfig"),
    ("mstconfig", {"mlxconfig": "/a", "mstconfig": "/b"}, None, "mstconfig"),
    ("mlxconfig", {"mlxconfig": "/a"}, None, "mlxconfig"),
    (None, {"mstconfig": "/b"}, "0000:3b:00.0", "mstconfig"),
])
def test_choose_tool(choice, installed, device, expected):
    assert m.choose_tool(choice, installed, device) == (expected, None)


@pytest.mark.parametrize("choice, installed, device, problem", [
    ("auto", {}, None, "neither mlxconfig"),
    ("mlxconfig", {"mstconfig": "/b"}, None, "tool=mlxconfig but mlxconfig is not installed"),
    ("mstconfig", {"mlxconfig": "/a"}, None, "package: mstflint"),
    ("auto", {"mstconfig": "/b"}, "/dev/mst/mt4123_pciconf0", "only MFT's mlxconfig opens"),
    ("mstconfig", {"mlxconfig": "/a", "mstconfig": "/b"}, "/dev/mst/x", "or use tool=mlxconfig"),
    ("flint", {"mlxconfig": "/a"}, None, "tool=flint is not one of auto, mlxconfig, mstconfig"),
])
def test_choose_tool_refused(choice, installed, device, problem):
    name, why = m.choose_tool(choice, installed, device)
    assert name is None and problem in why


def test_argv_builders():
    assert m.query_args("0000:3b:00.0") == ["-d", "0000:3b:00.0", "-e", "q"]
    assert m.query_args("mlx5_0", ["LINK_TYPE_P1", "X[0..3]"]) == ["-d", "mlx5_0", "-e", "q", "LINK_TYPE_P1", "X[0..3]"]
    assert m.query_args(None, verbose=False) == ["q"]
    assert m.set_args("0000:3b:00.0", [("LINK_TYPE_P1", "IB"), ("NUM_OF_VFS", "8")]) == [
        "-d", "0000:3b:00.0", "-y", "set", "LINK_TYPE_P1=IB", "NUM_OF_VFS=8"]


# ---------------------------------------------------------------- missing parameters and failures

EN_ONLY = {"SRIOV_EN": {}, "NUM_OF_VFS": {}, "ROCE_CC_PRIO_MASK_P1": {}, "ROCE_CC_PRIO_MASK_P2": {}}
SINGLE = {"LINK_TYPE_P1": {}, "SRIOV_EN": {}}


@pytest.mark.parametrize("name, params, device_type, reason", [
    ("LINK_TYPE_P1", EN_ONLY, "ConnectX4LX", "not supported: ConnectX4LX has no LINK_TYPE parameters (an Ethernet-only card"),
    ("link_type_p2", SINGLE, "ConnectX7", "not supported: ConnectX7 has no port 2 (it has LINK_TYPE_P1)"),
    ("LINK_TYP_P1", SINGLE, "ConnectX7", "unknown parameter: ConnectX7 does not report it (did you mean LINK_TYPE_P1?)"),
    ("SRIOV_ENABLE", SINGLE, None, "unknown parameter: the device does not report it (did you mean SRIOV_EN?)"),
    ("PF_TOTAL_SF", SINGLE, "ConnectX6", "not supported by ConnectX6"),
    ("XYZZY", SINGLE, "ConnectX6", "unknown parameter: ConnectX6 does not report it"),
])
def test_missing_param_reason(name, params, device_type, reason):
    assert m.missing_param_reason(name, params, device_type).startswith(reason)


def _parsed(text):
    return m.parse_query(text)


OPEN = _parsed("-E- Failed to open the device\n")


@pytest.mark.parametrize("kwargs, parts", [
    (dict(parsed=OPEN, lockdown="confidentiality"), ["the kernel is locked down (confidentiality)", "cannot open 0000:3b:00.0"]),
    (dict(parsed=_parsed(""), lockdown="integrity"), ["the kernel is locked down (integrity)"]),
    (dict(parsed=OPEN, lockdown="none", functions=[]), ["mstconfig cannot open device 0000:3b:00.0 (Failed to open the device): "
                                                        "sysfs shows no NVIDIA/Mellanox PCI function"]),
    (dict(parsed=OPEN, physfn="0000:3b:00.0"), ["SR-IOV virtual function of 0000:3b:00.0"]),
    (dict(parsed=_parsed("-E- Device in Livefish mode is not supported\n")), ["livefish (flash recovery) mode"]),
    (dict(parsed=_parsed("-E- Unknown Parameter FOO\n")), ["device 0000:3b:00.0: mstconfig does not know parameter FOO"]),
    (dict(parsed=_parsed("-E- Operation is not supported (Read only TLV: nv_x)\n")), ["read-only", "nv_x"]),
    (dict(parsed=_parsed("-E- Cannot set the value 9 for the parameter NUM_OF_VFS: too big\n")),
     ["mstconfig refused the value of NUM_OF_VFS"]),
    (dict(parsed=_parsed("-E- No devices found.\n")), ["found no device", "mst start"]),
    (dict(parsed=_parsed("-E- Failed to identify the device\n")), ["mstconfig cannot configure device 0000:3b:00.0"]),
    (dict(parsed=_parsed("-E- Something else\n")), ["mstconfig failed on device 0000:3b:00.0 (rc 3): Something else"]),
    (dict(parsed=_parsed(""), stdout="Segmentation fault\n"), ["(rc 3): Segmentation fault"]),
    (dict(parsed=_parsed("")), ["(rc 3): no output"]),
])
def test_explain_failure(kwargs, parts):
    msg = m.explain_failure("mstconfig", "0000:3b:00.0", rc=3, **kwargs)
    for part in parts:
        assert part in msg
