# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The mlxconfig/mstconfig parsers on recorded outputs (fixtures/mlxconfig, see its README.md):
every format generation, the real captures with their quirks, errors, JSON, and
whitespace changed the way publishers change it."""

from __future__ import annotations

import json
import os
import re

import pytest

from ansible_collections.fabric.infiniband.plugins.module_utils import mlxconfig as m
from ansible_collections.fabric.infiniband.tests.unit.conftest import fixture_path, read_fixture


FIXDIR = fixture_path("mlxconfig")
ALL_TXT = sorted(name for name in os.listdir(FIXDIR) if name.endswith(".txt"))
QUERIES = [name for name in ALL_TXT if "_query" in name]
SETS = [name for name in ALL_TXT if "_set" in name]
GENS = range(1, 7)


def fx(name):
    return read_fixture("mlxconfig/" + name)


def values(parsed, ro=True):
    """What must not depend on the format: per device, per parameter, the printed values and marks."""
    out = []
    for dev in parsed["devices"]:
        params = {}
        for name, entry in dev["params"].items():
            params[name] = dict((k, v) for k, v in entry.items() if k != "read_only")
            if ro:
                params[name]["ro"] = entry["read_only"] is True
        out.append((dev["device"], dev["device_type"], dev["name"], dev["description"], dev["errors"], params))
    return out


def test_every_fixture_is_known():
    """Each fixture file is listed in the README with its source."""
    readme = fx("README.md")
    for name in os.listdir(FIXDIR):
        if name != "README.md":
            assert name in readme, name


# ---------------------------------------------------------------- generations

CANONICAL = {
    "NUM_OF_VFS": ("8", "0", "8", True),
    "SRIOV_EN": ("False(0)", "False(0)", "True(1)", True),
    "LINK_TYPE_P1": ("IB(1)", "ETH(2)", "IB(1)", True),
    "LINK_TYPE_P2": ("IB(1)", "IB(1)", "IB(1)", False),
}


@pytest.mark.parametrize("name, layout", [("source_g1_query_e_cx6.txt", "G1"), ("source_g5_query_e_cx6.txt", "G5")])
def test_canonical_examples(name, layout):
    parsed = m.parse_query(fx(name))
    assert parsed["errors"] == [] and len(parsed["devices"]) == 1
    dev = parsed["devices"][0]
    assert (dev["index"], dev["device"], dev["device_type"], dev["name"]) == (1, "0000:3b:00.0", "ConnectX6", "MCX653106A-HDA_Ax")
    assert dev["description"].startswith("ConnectX-6 VPI adapter card; HDR IB") and dev["description"].endswith("ROHS R6")
    assert dev["layout"] == layout
    assert dev["columns"] == ["default", "current", "next_boot"]
    assert list(dev["params"]) == list(CANONICAL)
    for param, (default, current, next_boot, modified) in CANONICAL.items():
        entry = dev["params"][param]
        assert (entry["default"], entry["current"], entry["next_boot"], entry["modified"]) == (default, current, next_boot, modified)
        # G1 has no RO column: unknown; G5 has one and the row is not marked
        assert entry["read_only"] is (None if layout == "G1" else False)
    assert dev["params"]["LINK_TYPE_P1"]["current_name"] == "ETH" and dev["params"]["LINK_TYPE_P1"]["current_number"] == 2
    assert dev["params"]["LINK_TYPE_P1"]["pending"] is True and dev["params"]["LINK_TYPE_P2"]["pending"] is False
    assert dev["params"]["NUM_OF_VFS"]["type"] == "number" and dev["params"]["NUM_OF_VFS"]["next_boot_number"] == 8
    assert dev["params"]["SRIOV_EN"]["type"] == "bool" and dev["params"]["SRIOV_EN"]["next_boot_name"] == "True"


@pytest.mark.parametrize("gen", GENS)
def test_full_query_of_each_generation(gen):
    parsed = m.parse_query(fx("sim_g%d_query_e_cx6_all.txt" % gen))
    dev = parsed["devices"][0]
    assert dev["layout"] == "G%d" % gen
    assert len(dev["params"]) == 94 and dev["unparsed"] == [] and dev["errors"] == []
    ro = dev["params"]["LOG_DCR_HASH_TABLE_SIZE"]
    assert (ro["default"], ro["current"], ro["next_boot"]) == ("11", "11", "11")
    # the RO column exists from 4.25 (G3) on
    assert ro["read_only"] is (True if gen >= 3 else None)
    assert dev["params"]["NUM_OF_VFS"]["read_only"] is (False if gen >= 3 else None)
    wide = dev["params"]["PCI_ATOMIC_MODE"]
    assert wide["default"] == wide["current"] == "PCI_ATOMIC_DISABLED_EXT_ATOMIC_ENABLED(0)"
    assert wide["next_boot"] == "PCI_ATOMIC_ENABLED_EXT_ATOMIC_DISABLED(1)" and wide["modified"] is True
    array = dev["params"]["ESWITCH_HAIRPIN_DESCRIPTORS"]
    assert (array["type"], array["length"], array["next_boot"], array["modified"]) == ("array", 8, "Array[0..7]", False)
    for param, (default, current, next_boot, modified) in CANONICAL.items():
        entry = dev["params"][param]
        assert (entry["default"], entry["current"], entry["next_boot"], entry["modified"]) == (default, current, next_boot, modified)


def test_every_generation_reads_the_same():
    # (only the RO marks differ: G1 and G2 print none)
    first = values(m.parse_query(fx("sim_g1_query_e_cx6_all.txt")), ro=False)
    for gen in GENS:
        assert values(m.parse_query(fx("sim_g%d_query_e_cx6_all.txt" % gen)), ro=False) == first


@pytest.mark.parametrize("gen", GENS)
def test_next_boot_only_query_of_each_generation(gen):
    dev = m.parse_query(fx("sim_g%d_query_cx6_next_only.txt" % gen))["devices"][0]
    assert dev["layout"] == "G%d" % gen and dev["columns"] == ["next_boot"]
    assert list(dev["params"]) == ["LINK_TYPE_P1", "LINK_TYPE_P2", "SRIOV_EN", "NUM_OF_VFS", "LOG_DCR_HASH_TABLE_SIZE",
                                   "PCI_ATOMIC_MODE", "ESWITCH_HAIRPIN_DESCRIPTORS"]
    entry = dev["params"]["LINK_TYPE_P1"]
    assert (entry["default"], entry["current"], entry["next_boot"], entry["modified"], entry["pending"]) == (None, None, "IB(1)", None, None)
    assert dev["params"]["PCI_ATOMIC_MODE"]["next_boot"] == "PCI_ATOMIC_ENABLED_EXT_ATOMIC_DISABLED(1)"
    assert dev["params"]["LOG_DCR_HASH_TABLE_SIZE"]["read_only"] is (True if gen >= 3 else None)


@pytest.mark.parametrize("gen", GENS)
def test_set_of_each_generation(gen):
    parsed = m.parse_set(fx("sim_g%d_set_cx6.txt" % gen))
    dev = parsed["devices"][0]
    assert dev["layout"] == "G%d" % gen and dev["columns"] == ["next_boot", "new"]
    assert [(n, e["next_boot"], e["new"]) for n, e in dev["params"].items()] == [
        ("LINK_TYPE_P1", "ETH(2)", "IB(1)"), ("SRIOV_EN", "False(0)", "True(1)"), ("NUM_OF_VFS", "8", "8")]
    assert (parsed["applied"], parsed["load"], parsed["aborted"]) == (True, "reboot", False)
    assert parsed["infos"] == ["Please reboot machine to load new configurations."]


# ---------------------------------------------------------------- releases before 2018 ("PCI device:")
def test_pre2018_query_e_keeps_the_device():
    """mstflint/MFT up to 4.8 print "PCI device:" and no Name:/Description: (fixtures README: mstflint v4.8.0-2)."""
    parsed = m.parse_query(fx("source_pre2018_query_e_cx4.txt"))
    assert parsed["errors"] == [] and parsed["lines"] == [] and len(parsed["devices"]) == 1
    dev = parsed["devices"][0]
    assert (dev["index"], dev["device"], dev["device_type"], dev["name"], dev["description"]) == (
        1, "0000:03:00.0", "ConnectX4", None, None)
    assert dev["layout"] == "G1" and dev["columns"] == ["default", "current", "next_boot"]
    # "PCI" is not a parameter, and no row is left over
    assert list(dev["params"]) == ["SRIOV_EN", "NUM_OF_VFS", "LINK_TYPE_P1", "LINK_TYPE_P2"] and dev["unparsed"] == []
    entry = dev["params"]["LINK_TYPE_P1"]
    assert (entry["default"], entry["current"], entry["next_boot"], entry["pending"]) == ("IB(1)", "ETH(2)", "IB(1)", True)
    assert dev["params"]["NUM_OF_VFS"]["next_boot_number"] == 8 and dev["params"]["LINK_TYPE_P2"]["modified"] is False


def test_pre2018_query_next_boot_only():
    dev = m.parse_query(fx("source_pre2018_query_cx3pro.txt"))["devices"][0]
    assert (dev["device"], dev["device_type"], dev["layout"], dev["columns"]) == ("0000:04:00.0", "ConnectX3Pro", "G1", ["next_boot"])
    assert [(n, e["next_boot"]) for n, e in dev["params"].items()] == [
        ("SRIOV_EN", "True(1)"), ("NUM_OF_VFS", "16"), ("LINK_TYPE_P1", "VPI(3)"), ("LINK_TYPE_P2", "ETH(2)"), ("LOG_BAR_SIZE", "5")]
    assert dev["params"]["LINK_TYPE_P1"]["next_boot_name"] == "VPI" and dev["unparsed"] == []


def test_pre2018_query_e_without_default_and_current():
    """-e on firmware that cannot read them: a Next Boot table and a notice line, no error."""
    parsed = m.parse_query(fx("source_pre2018_query_e_cx3_no_default.txt"))
    dev = parsed["devices"][0]
    assert dev["device"] == "0000:04:00.0" and dev["columns"] == ["next_boot"] and len(dev["params"]) == 4
    assert parsed["errors"] == [] and parsed["lines"] == ["Device Firmware does not support reading default and current configurations"]


def test_pre2018_set_keeps_the_device():
    """The set table of old releases: "PCI device:" would else be a row "PCI" (next "device:", new the address)."""
    parsed = m.parse_set(fx("source_pre2018_set_cx3pro.txt"))
    dev = parsed["devices"][0]
    assert (dev["device"], dev["device_type"], dev["layout"], dev["columns"]) == ("0000:04:00.0", "ConnectX3Pro", "G1", ["next_boot", "new"])
    assert "PCI" not in dev["params"] and dev["unparsed"] == []
    assert [(n, e["next_boot"], e["new"]) for n, e in dev["params"].items()] == [
        ("LINK_TYPE_P1", "VPI(3)", "IB(1)"), ("SRIOV_EN", "True(1)", "True(1)"), ("NUM_OF_VFS", "16", "8")]
    # the old prompt doubles its question mark
    assert (parsed["applied"], parsed["load"], parsed["aborted"]) == (True, "reboot", False)


def test_pre2018_reads_like_the_later_label():
    """The same output with "Device:" parses to the same values: only the label changed."""
    text = fx("source_pre2018_query_e_cx4.txt")
    assert "PCI device:" in text
    assert values(m.parse_query(text)) == values(m.parse_query(text.replace("PCI device: ", "Device:     ")))


def test_unknown_header_label_is_not_a_row():
    text = ("Device #1:\n----------\n\nDevice type:    ConnectX4\nPSID:           MT_2190110032\nPCI device:     0000:03:00.0\n\n"
            "Configurations:                              Next Boot       New\n"
            "         SRIOV_EN                            False(0)        True(1)\n")
    parsed = m.parse_set(text)
    dev = parsed["devices"][0]
    assert list(dev["params"]) == ["SRIOV_EN"] and dev["device"] == "0000:03:00.0"
    assert parsed["lines"] == ["PSID:           MT_2190110032"]


@pytest.mark.parametrize("name", ["real_g5_set_link_type_proxmox.txt", "real_g5_set_sriov_en_proxmox.txt",
                                  "real_g5_set_num_of_vfs_proxmox.txt"])
def test_mft_4_30_1_prints_the_g5_header(name):
    """The Proxmox runbook ran MFT 4.30.1 (mft-4.30.1-1210): its set tables have the G5 widths, not G4 (mstflint 4.30.0)."""
    assert [dev["layout"] for dev in m.parse_set(fx(name))["devices"]] == ["G5"]


def test_g6_reference_lines():
    dev = m.parse_query(fx("source_g6_lines.txt"))["devices"][0]
    assert dev["layout"] == "G6"
    entry = dev["params"]["LINK_TYPE_P1"]
    assert (entry["default"], entry["current"], entry["next_boot"], entry["modified"]) == ("IB(1)", "ETH(2)", "IB(1)", True)


# ---------------------------------------------------------------- real captures

def test_real_g1_connectx5_excerpt():
    dev = m.parse_query(fx("real_g1_query_e_cx5_sriov_operator_48.txt"))["devices"][0]
    assert (dev["device"], dev["device_type"], dev["name"], dev["layout"]) == ("0000:02:00.1", "ConnectX5", "MCX556A-ECA_Ax", "G1")
    assert dev["params"]["MEMIC_SIZE_LIMIT"]["current"] == "_256KB(1)"
    assert dev["params"]["MEMIC_SIZE_LIMIT"]["current_name"] == "_256KB"
    assert dev["params"]["HOST_CHAINING_MODE"]["next_boot"] == "DISABLED(0)"


def test_real_indented_next_boot_only():
    dev = m.parse_query(fx("real_g5_query_cx4lx_indented.txt"))["devices"][0]
    assert (dev["index"], dev["device"], dev["device_type"], dev["layout"]) == (None, "01:00.0", "ConnectX4LX", "G5")
    assert len(dev["params"]) == 18 and "LINK_TYPE_P1" not in dev["params"]
    assert dev["params"]["NUM_OF_VFS"]["next_boot"] == "8" and dev["params"]["NUM_OF_VFS"]["default"] is None
    assert dev["params"]["SRIOV_EN"]["next_boot"] == "False(0)"


@pytest.mark.parametrize("name, expected", [
    ("real_g5_query_grep_link_type_proxmox.txt", {"LINK_TYPE_P1": "IB(1)", "LINK_TYPE_P2": "IB(1)"}),
    ("real_query_grep_link_type_spiderpool.txt", {"LINK_TYPE_P1": "IB(1)"}),
    ("real_g5_query_grep_sriov_dell_cx5.txt", {"NUM_OF_VFS": "8", "SRIOV_EN": "False(0)"}),
    ("real_query_talos_squeezed.txt", {"LINK_TYPE_P1": "ETH(2)"}),
])
def test_real_filtered_rows_without_headers(name, expected):
    parsed = m.parse_query(fx(name))
    assert len(parsed["devices"]) == 1
    dev = parsed["devices"][0]
    assert dict((k, v["next_boot"]) for k, v in dev["params"].items()) == expected
    assert all(v["default"] is None and v["current"] is None for v in dev["params"].values())


def test_real_talos_device_header_without_name():
    dev = m.parse_query(fx("real_query_talos_squeezed.txt"))["devices"][0]
    assert (dev["index"], dev["device"], dev["device_type"], dev["name"], dev["description"]) == (1, "0000:04:00.0", "ConnectX4", None, None)
    assert dev["layout"] is None


def test_real_header_below_the_row():
    dev = m.parse_query(fx("real_query_dgx_header_below.txt"))["devices"][0]
    entry = dev["params"]["NUM_OF_VFS"]
    assert (entry["default"], entry["current"], entry["next_boot"], entry["modified"], entry["pending"]) == ("16", "16", "8", True, True)


@pytest.mark.parametrize("name, current", [("real_query_grep_gid_routing_before.txt", "GID(1)"),
                                           ("real_query_grep_gid_routing_after.txt", "GID(0)")])
def test_real_gid_routing_rows(name, current):
    dev = m.parse_query(fx(name))["devices"][0]
    entry = dev["params"]["SRIOV_IB_ROUTING_MODE_P1"]
    assert (entry["default"], entry["current"], entry["next_boot"]) == ("LID(1)", current, "GID(0)")
    assert dev["layout"] == "G1"


def test_operator_fixture_values_without_numbers():
    text = fx("fixture_g4_sriov_operator_template.txt")
    dev = m.parse_query(text)["devices"][0]
    assert dev["layout"] == "G4" and dev["device"] == "19:00.0" and dev["name"] == "0R887V"
    # the template's second LINK_TYPE variant (IB) is the last one printed
    entry = dev["params"]["LINK_TYPE_P1"]
    assert (entry["current"], entry["next_boot"], entry["current_name"], entry["next_boot_number"]) == ("IB", "ETH", "IB", 2)
    assert dev["params"]["ROCE_CONTROL"]["current"] == "DEVICE_DEFAULT(0)"
    assert dev["params"]["LEGACY_BOOT_PROTOCOL"]["next_boot"] == "NONE(0)"
    # filled in the way the operator's test does
    filled = text.replace("%d", "8").replace("%s(0)", "False(0)").replace("%s(1)", "True(1)")
    entry = m.parse_query(filled)["devices"][0]["params"]["SRIOV_EN"]
    assert (entry["default"], entry["current"], entry["next_boot"]) == ("False(0)", "True(1)", "True(1)")


@pytest.mark.parametrize("name, device, rows", [
    ("real_g5_set_link_type_proxmox.txt", "/dev/mst/mt4123_pciconf0", [("LINK_TYPE_P1", "IB(1)", "ETH(2)"), ("LINK_TYPE_P2", "IB(1)", "ETH(2)")]),
    ("real_g5_set_sriov_en_proxmox.txt", None, [("SRIOV_EN", "False(0)", "True(1)")]),
    ("real_g5_set_num_of_vfs_proxmox.txt", None, [("NUM_OF_VFS", "0", "8")]),
    ("real_g5_set_dell_cx5_same_values.txt", "/dev/mst/mt4119_pciconf0", [("SRIOV_EN", "True(1)", "True(1)"), ("NUM_OF_VFS", "8", "8")]),
    ("real_g1_set_cx4_redacted.txt", "/dev/mst/mtxxxx_pciconf0", [("LINK_TYPE_P1", "IB(1)", "ETH(2)"), ("LINK_TYPE_P2", "IB(1)", "ETH(2)")]),
    ("real_g1_set_cx6_single_port.txt", "/dev/mst/mt4123_pciconf0", [("LINK_TYPE_P1", "IB(1)", "ETH(2)")]),
    ("real_g1_set_ib_sriov_cni_squeezed.txt", "0000:02:00.0", [("SRIOV_EN", "False(0)", "True(1)"), ("NUM_OF_VFS", "0", "8")]),
    ("real_set_talos_name_na.txt", "0000:04:00.0", [("LINK_TYPE_P1", "ETH(2)", "IB(1)")]),
    ("real_g1_set_cx6dx_roce_cc.txt", "3d:00.1", [("ROCE_CC_LEGACY_DCQCN", "True(1)", "False(0)")]),
    ("source_g5_set_cx6.txt", "0000:3b:00.0", [("LINK_TYPE_P1", "ETH(2)", "IB(1)"), ("SRIOV_EN", "False(0)", "True(1)"), ("NUM_OF_VFS", "0", "8")]),
])
def test_real_set_outputs(name, device, rows):
    parsed = m.parse_set(fx(name))
    dev = parsed["devices"][0]
    assert dev["device"] == device
    assert [(n, e["next_boot"], e["new"]) for n, e in dev["params"].items()] == rows
    assert (parsed["applied"], parsed["load"], parsed["errors"]) == (True, "reboot", [])
    assert "Apply new Configuration? (y/n) [n] : y" in parsed["lines"]


def test_real_set_name_not_available():
    dev = m.parse_set(fx("real_set_talos_name_na.txt"))["devices"][0]
    assert (dev["name"], dev["description"], dev["layout"]) == (None, None, None)


def test_raw_tlv_set_wording():
    parsed = m.parse_set(fx("real_set_raw_tlv.txt"))
    assert (parsed["devices"], parsed["applied"], parsed["load"]) == ([], True, "reboot")


def test_power_cycle_answer():
    parsed = m.parse_set(fx("sim_g4_cx7_set_power_cycle.txt"))
    assert (parsed["applied"], parsed["load"]) == (True, "power_cycle")
    assert parsed["devices"][0]["params"]["NUM_OF_VFS"]["new"] == "8"


def test_set_failed_after_the_prompt():
    parsed = m.parse_set(fx("sim_g1_set_read_only_failed.txt"))
    assert parsed["applied"] is False and parsed["load"] is None
    assert m.all_errors(parsed) == ["Operation is not supported (Read only TLV: nv_dcr_conf)"]
    assert m.classify_error(m.all_errors(parsed)[0]) == ("read_only", "nv_dcr_conf")


def test_set_refused_before_the_prompt():
    parsed = m.parse_set(fx("sim_g1_set_invalid_value.txt"))
    assert parsed["applied"] is None
    assert m.classify_error(m.all_errors(parsed)[0]) == ("invalid_value", "LINK_TYPE_P1")


def test_set_extra_answers():
    text = "Applying... Done!\n-I- Skipped reset preparation\n-I- Please reboot machine to load new configurations.\n"
    parsed = m.parse_set(text)
    assert (parsed["applied"], parsed["load"], parsed["skipped_reset_preparation"]) == (True, "reboot", True)
    parsed = m.parse_set("\n Apply new Configuration? (y/n) [n] : \n-E- Aborted by user.\n")
    assert (parsed["applied"], parsed["aborted"], parsed["load"]) == (None, True, None)


# ---------------------------------------------------------------- errors

@pytest.mark.parametrize("name, kind, param", [
    ("real_error_open_failed.txt", "open", None),
    ("real_error_cannot_open_mstflint_20.txt", "open", None),
    ("real_error_unsupported_device_mstflint_4.txt", "unsupported_device", None),
    ("real_error_unsupported_param.txt", "unsupported_param", "MPFS_UC_LOOPBACK_DISABLE_P1"),
    ("sim_g1_query_open_failed.txt", "open", None),
    ("sim_g1_query_lockdown.txt", "open", None),
    ("sim_g5_mft_no_devices.txt", "no_devices", None),
    ("sim_g1_usage_error.txt", "usage", None),
])
def test_errors_on_stdout(name, kind, param):
    parsed = m.parse_query(fx(name))
    assert parsed["devices"] == []
    assert m.classify_error(parsed["errors"][0]) == (kind, param)


def test_usage_text_after_an_error_is_not_a_table():
    parsed = m.parse_set(fx("sim_g1_usage_error.txt"))
    assert parsed["devices"] == [] and parsed["errors"] == ["Invalid Configuration argument LINK_TYPE_P1"]


def test_error_after_the_headers():
    parsed = m.parse_query(fx("sim_g5_query_error_after_headers.txt"))
    assert parsed["errors"] == []
    dev = parsed["devices"][0]
    assert (dev["device"], dev["device_type"], dev["params"]) == ("0000:01:00.0", "ConnectX4LX", {})
    assert dev["errors"] == ["The Device doesn't support LINK_TYPE_P1 parameter"]
    assert m.classify_error(dev["errors"][0]) == ("unsupported_param", "LINK_TYPE_P1")
    parsed = m.parse_query(fx("sim_g1_query_unknown_param.txt"))
    assert m.classify_error(m.all_errors(parsed)[0]) == ("unknown_param", "FOO_BAR")


def test_errors_on_stderr():
    parsed = m.parse_query("", "-E- The Device doesn't support MAX_ACC_OUT_READ parameter\n")
    assert parsed["errors"] == ["The Device doesn't support MAX_ACC_OUT_READ parameter"]
    parsed = m.parse_query("", "-W- Missing something\n-I- note\nplain text\n")
    assert (parsed["warnings"], parsed["infos"], parsed["lines"]) == (["Missing something"], ["note"], ["plain text"])


@pytest.mark.parametrize("message, kind, param", [
    ("-E- Failed to open the device", "open", None),
    ("Failed to identify the device", "identify", None),
    ("Device in Livefish mode is not supported", "livefish", None),
    ("Unknown Parameter FOO_BAR", "unknown_param", "FOO_BAR"),
    ("The Device doesn't support LINK_TYPE_P1 parameter", "unsupported_param", "LINK_TYPE_P1"),
    ("Operation is not supported (Read only TLV: nv_xxx)", "read_only", "nv_xxx"),
    ("Device doesn't support any configuration changes.", "no_config", None),
    ("MTUSB device is not supported.", "unsupported_device", None),
    ("Json format is only supported for query command.", "usage", None),
    ("missing device name", "usage", None),
    ("invalid argument: -x", "usage", None),
    ("Duplicate parameter, LINK_TYPE_P1.", "usage", None),
    ("Aborted by user.", "aborted", None),
    ("Error when trying to check if NV access registers are supported", "nv_access", None),
    ("Cannot set the value FOO for the parameter LINK_TYPE_P1: Unknown value FOO", "invalid_value", "LINK_TYPE_P1"),
    ("something new", "other", None),
])
def test_classify_error(message, kind, param):
    assert m.classify_error(message) == (kind, param)


# ---------------------------------------------------------------- every device

def test_query_of_every_device():
    parsed = m.parse_query(fx("sim_g5_query_all_devices.txt"))
    assert [(d["index"], d["device"], d["device_type"]) for d in parsed["devices"]] == [
        (1, "0000:01:00.0", "ConnectX4LX"), (2, "0000:01:00.1", "ConnectX4LX"), (3, "0000:3b:00.0", "ConnectX6"),
        (4, "0000:3b:00.1", "ConnectX6")]
    assert parsed["devices"][2]["params"]["SRIOV_EN"]["next_boot"] == "True(1)"
    assert all(list(d["params"]) == ["SRIOV_EN", "NUM_OF_VFS"] for d in parsed["devices"])


# ---------------------------------------------------------------- whitespace

def _squeeze(text):
    return "\n".join(re.sub(r" {2,}", " ", line) for line in text.split("\n"))


def _indent(text):
    return "\n".join(("        " + line) if line else line for line in text.split("\n"))


def _rstrip(text):
    return "\n".join(line.rstrip() for line in text.split("\n"))


def _tabs(text):
    return "\n".join(re.sub(r"^ {8}", "\t", line) for line in text.split("\n"))


def _crlf(text):
    return text.replace("\n", "\r\n")


def _no_trailing_newline(text):
    return text.rstrip("\n")


@pytest.mark.parametrize("change", [_squeeze, _indent, _rstrip, _tabs, _crlf, _no_trailing_newline])
@pytest.mark.parametrize("name", QUERIES + SETS)
def test_whitespace_does_not_change_the_values(name, change):
    parse = m.parse_set if name in SETS else m.parse_query
    text = fx(name)
    original = parse(text)
    changed = parse(change(text))
    assert values(changed) == values(original)
    assert changed["errors"] == original["errors"]
    # an RO mark survives whitespace changes
    for before, after in zip(original["devices"], changed["devices"]):
        for param, entry in before["params"].items():
            if entry["read_only"]:
                assert after["params"][param]["read_only"] is True
    if change in (_rstrip, _indent, _no_trailing_newline, _crlf):
        assert [d["layout"] for d in changed["devices"]] == [d["layout"] for d in original["devices"]]


def test_values_exactly_as_wide_as_their_column_are_split():
    """G1-G3 add a blank only after values wider than 16: a 16-character value touches the next one."""
    text = ("Configurations:                              Default         Current         Next Boot\n"
            "         INT_LOG_MAX_PAYLOAD_SIZE            AUTOMATIC_XYZ(0)AUTOMATIC_XYZ(0)_4KB(12)        \n"
            "         NUM_OF_VFS                          8               8               8               \n")
    dev = m.parse_query(text)["devices"][0]
    entry = dev["params"]["INT_LOG_MAX_PAYLOAD_SIZE"]
    assert (entry["default"], entry["current"], entry["next_boot"]) == ("AUTOMATIC_XYZ(0)", "AUTOMATIC_XYZ(0)", "_4KB(12)")
    assert dev["unparsed"] == [] and dev["layout"] == "G1"


def test_row_with_values_that_do_not_fit_the_columns():
    text = ("Configurations:                              Default         Current         Next Boot\n"
            "         NUM_OF_VFS                          8               8\n")
    dev = m.parse_query(text)["devices"][0]
    assert dev["params"] == {} and dev["unparsed"] == ["NUM_OF_VFS"]


def test_empty_output():
    assert m.parse_query("") == {"devices": [], "errors": [], "infos": [], "warnings": [], "lines": []}


# ---------------------------------------------------------------- JSON

def test_json_with_e_matches_the_text_table():
    parsed = m.parse_query_json(fx("sim_g6_query_e.json"))
    dev = parsed["devices"][0]
    assert (dev["index"], dev["device"], dev["device_type"], dev["layout"]) == (1, "0000:3b:00.0", "ConnectX6", "json")
    text = m.parse_query(fx("sim_g6_query_e_cx6_all.txt"))["devices"][0]["params"]
    for name, entry in dev["params"].items():
        for key in ("default", "current", "next_boot", "modified", "read_only", "type", "next_boot_name", "next_boot_number",
                    "pending"):
            assert entry[key] == text[name][key], (name, key)
    assert dev["params"]["LOG_DCR_HASH_TABLE_SIZE"]["read_only"] is True
    assert dev["params"]["NUM_OF_VFS"]["current"] == "0"


def test_json_without_e_has_next_boot_only():
    dev = m.parse_query_json(fx("sim_g6_query.json"))["devices"][0]
    entry = dev["params"]["LINK_TYPE_P1"]
    assert (entry["default"], entry["current"], entry["next_boot"], entry["modified"]) == (None, None, "IB(1)", None)
    assert dev["columns"] == ["next_boot"]


def test_json_keys_in_any_case():
    data = json.loads(fx("sim_g6_query_e.json"))
    dev = data["Device #1"]
    old = {"Device Type": dev["device_type"], "Name": dev["name"], "Description": dev["description"], "Device": dev["device"],
           "TLV Configuration": dict((k, dict((kk.title(), vv) for kk, vv in v.items())) for k, v in dev["tlv_configuration"].items())}
    parsed = m.parse_query_json(json.dumps({"Device #1": old}))
    assert values(parsed) == values(m.parse_query_json(fx("sim_g6_query_e.json")))


def test_json_not_an_object():
    with pytest.raises(ValueError):
        m.parse_query_json("[]")
