# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The flint/mstflint and mlxfwmanager parsers on the recorded outputs of lab/tests/fixtures (see its
README.md for the source of each), with whitespace changed the way publishers change it; argv
builders, error kinds and the version and PSID checks."""

from __future__ import annotations

import os

import pytest

from ansible_collections.fabric.infiniband.plugins.module_utils import flint as f
from ansible_collections.fabric.infiniband.plugins.module_utils import mlxfwmanager


FIXDIR = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..",
                                       "lab", "tests", "fixtures"))
NAMES = sorted(os.listdir(FIXDIR)) if os.path.isdir(FIXDIR) else []
QUERIES = [n for n in NAMES if ("flint_query" in n or "flint_image_query" in n)]
BURNS = [n for n in NAMES if "flint_burn" in n]
MANAGER = [n for n in NAMES if "mlxfwmanager_query" in n]


def fx(name):
    with open(os.path.join(FIXDIR, name)) as handle:
        return handle.read()


def mangle(text):
    """What publishers and terminals do: CRLF, TABs for runs of blanks, trailing blanks, squeezed padding."""
    out = []
    for number, line in enumerate(text.split("\n")):
        if number % 3 == 0:
            line = line.replace("   ", "\t")
        elif number % 3 == 1:
            line = " ".join(line.split(" ")) + "   "
        else:
            while "  " in line and ":" in line:
                line = line.replace("  ", " ")
        out.append(line)
    return "\r\n".join(out)


def test_every_fixture_family_is_present():
    assert len(QUERIES) >= 8 and len(BURNS) >= 8 and len(MANAGER) >= 3


# name -> (image type, running, pending, psid, security attributes)
EXPECTED = {
    "ref_flint_query_cx4_fs3.txt": ("FS3", "12.28.2006", None, "LNV2180110032", []),
    "ref_flint_query_cx5_fs4.txt": ("FS4", "16.28.2006", None, "MT_0000000158", []),
    "ref_flint_query_bf2_secure_fw.txt": ("FS4", "24.33.1048", None, "MT_0000000723", ["secure-fw"]),
    "ref_flint_query_full_cx3_fs2_running.txt": ("FS2", "2.35.5100", "2.42.5000", "MT_1170110023", []),
    "ref_mstflint_query_fs4_running.txt": ("FS4", "20.34.1002", "20.35.1012", "MT_0000000228", []),
    "ref_mstflint_image_query_fs4.txt": ("FS4", "20.36.1012", None, "MT_0000000228", []),
    "src_flint_query_full_cx6_pending.txt": ("FS4", "20.39.1002", "20.40.1000", "MT_0000000223", []),
    "src_flint_image_query_fs5_cx7.txt": ("FS5", "28.41.1000", None, "MT_0000000834", ["secure-fw"]),
}


@pytest.mark.parametrize("name", QUERIES)
def test_query_fixture_parses(name):
    parsed = f.parse_query(fx(name))
    assert parsed["errors"] == []
    assert (parsed["image_type"], parsed["running_version"], parsed["pending_version"], parsed["psid"],
            parsed["security_attributes"]) == EXPECTED[name]
    assert f.version_tuple(parsed["flash_version"])
    if parsed["pending_version"]:
        assert parsed["flash_version"] == parsed["pending_version"] != parsed["running_version"]


@pytest.mark.parametrize("name", QUERIES)
def test_query_whitespace_does_not_matter(name):
    plain, mangled = f.parse_query(fx(name)), f.parse_query(mangle(fx(name)))
    plain.pop("fields")
    mangled.pop("fields")
    assert mangled == plain


# Issue 33, class 8: old MFT builds print "FW Version(Running):" and no "FW Version:" line
OLD_MFT_QUERY = """Image type:            FS3
FW Version(Running):   12.28.2006
FW Release Date:       15.9.2020
Product Version:       12.28.2006
Description:           UID                GuidsNumber
Base GUID:             ec0d9a030076eae2        4
Base MAC:              ec0d9a76eae2            4
Image VSD:             N/A
Device VSD:            N/A
PSID:                  LNV2180110032
"""


@pytest.mark.parametrize("text", [
    OLD_MFT_QUERY,
    mangle(OLD_MFT_QUERY),
    OLD_MFT_QUERY.replace("FW Version(Running):   ", "FW Version(Running):\t"),
    OLD_MFT_QUERY.replace("FW Version(Running):   ", "FW Version (Running): "),
    OLD_MFT_QUERY.replace("FW Version(Running):   ", "FW Version( Running ) :  "),
    OLD_MFT_QUERY.replace("FW Version(Running):   ", "FW Version(Running):").replace(":  ", ": "),
    "\n\n  " + OLD_MFT_QUERY.replace("\n", "  \r\n"),
])
def test_old_mft_query_with_the_running_version_alone(text):
    parsed = f.parse_query(text)
    assert parsed["errors"] == []
    assert (parsed["running_version"], parsed["flash_version"], parsed["pending_version"], parsed["psid"]) == \
        ("12.28.2006", "12.28.2006", None, "LNV2180110032")
    assert f.version_tuple(parsed["flash_version"])


@pytest.mark.parametrize("name", QUERIES)
def test_running_key_with_a_blank_before_the_parenthesis(name):
    plain = f.parse_query(fx(name))
    spaced = f.parse_query(fx(name).replace("FW Version(Running):", "FW Version (Running):"))
    plain.pop("fields")
    spaced.pop("fields")
    assert spaced == plain


def test_full_query_description_is_the_card_not_the_guid_table():
    parsed = f.parse_query(fx("src_flint_query_full_cx6_pending.txt"))
    assert parsed["description"].startswith("ConnectX-6 VPI adapter card; HDR IB")
    assert parsed["part_number"] == "MCX653106A-HDA_Ax"
    assert f.parse_query(fx("ref_flint_query_cx4_fs3.txt"))["description"] is None


def test_image_query_security_version_and_rom_continuation():
    assert f.parse_query(fx("ref_mstflint_image_query_fs4.txt"))["security_version"] == "0"
    fields = f.parse_query(fx("ref_flint_query_bf2_secure_fw.txt"))["fields"]
    assert fields["Rom Info"].count("\n") == 3 and fields["Rom Info"].endswith("type=PXE version=3.6.502 cpu=AMD64")


# name -> (current, new, done, activation, error kinds)
BURN_EXPECTED = {
    "ref_flint_burn_cx3_fs2.txt": ("2.35.5100", "2.42.5000", True, None, []),
    "ref_mstflint_burn_connectib.txt": ("10.16.1020", "10.16.1200", True, "firmware reset", []),
    "src_flint_burn_y_fs3.txt": ("16.35.3006", "16.35.4030", True, "firmware reset", []),
    "src_flint_burn_y_fs4_fw_ctrl.txt": ("20.39.1002", "20.40.1000", True, "reboot", []),
    "src_flint_burn_allow_psid_change.txt": ("16.35.3006", "16.35.4030", True, "firmware reset", []),
    "src_flint_burn_psid_mismatch_v4.35.txt": ("16.35.3006", "16.35.4030", False, None, ["psid_mismatch"]),
    "src_flint_burn_psid_mismatch_v4.36.txt": ("16.35.3006", "16.35.4030", False, None, ["psid_mismatch"]),
    "src_flint_burn_failed.txt": ("16.35.3006", "16.35.4030", False, None, ["burn_failed"]),
}


@pytest.mark.parametrize("name", BURNS)
def test_burn_fixture_parses(name):
    for text in (fx(name), mangle(fx(name))):
        parsed = f.parse_burn(text)
        kinds = [f.classify_error(err) for err in parsed["errors"]]
        assert (parsed["current_version"], parsed["new_version"], parsed["done"], parsed["activation"], kinds) \
            == BURN_EXPECTED[name]


def test_open_error_is_classified():
    parsed = f.parse_query(fx("ref_mstflint_cannot_open_device.txt"))
    assert [f.classify_error(e) for e in parsed["errors"]] == ["open"]
    assert parsed["running_version"] is None
    assert "cannot open device 0031:01:00.0" in f.explain_failure("mstflint", "0031:01:00.0", parsed["errors"], 1)
    locked = f.explain_failure("mstflint", "0000:3b:00.0", parsed["errors"], 1, lockdown="integrity")
    assert "locked down (integrity)" in locked and "flint and mstflint" in locked


@pytest.mark.parametrize("message, kind", [
    ("-E- Cannot open Image: /tmp/x.bin. No such file or directory", "image_open"),
    ("Failed to open the device", "open"),
    ("PSID header mismatch. Device header (DEL) differs from image header (MT_). Cannot change PSID across headers.",
     "psid_mismatch"),
    ("Minor PSID is locked. Image PSID (MT_0002001590) does not match the locked PSID (MT_0000001590).",
     "psid_mismatch"),
    ("Aborted by user", "aborted"),
    ("something new", "other"),
])
def test_classify_error(message, kind):
    assert f.classify_error(message) == kind


@pytest.mark.parametrize("name, devices, first", [
    ("ref_mlxfwmanager_query_cx6lx.txt", 1, ("MT_0000000575", "26.33.1048", "26.43.1014", "0002:01:00.0",
                                             "Update required")),
    ("ref_mlxfwmanager_query_cx5_no_image.txt", 1, ("MT_0000000158", "16.24.4020", None, None,
                                                    "No matching image found")),
    ("src_mlxfwmanager_query_cx7.txt", 1, ("MT_0000000834", "28.40.1000", "28.41.1000", "0000:3b:00.0",
                                           "Update required")),
])
def test_mlxfwmanager_query(name, devices, first):
    for text in (fx(name), mangle(fx(name))):
        parsed = mlxfwmanager.parse_query(text)
        assert len(parsed["devices"]) == devices
        dev = parsed["devices"][0]
        assert (dev["psid"], dev["flash_version"], dev["available_version"], dev["pci_address"], dev["status"]) == first


def test_argv():
    assert f.query_args("0000:3b:00.0") == ["-d", "0000:3b:00.0", "q"]
    assert f.query_args("mlx5_0", full=True) == ["-d", "mlx5_0", "q", "full"]
    assert f.image_query_args("/opt/fw/a.bin") == ["-i", "/opt/fw/a.bin", "q"]
    assert f.burn_args("0000:3b:00.0", "/opt/fw/a.bin") == ["-d", "0000:3b:00.0", "-i", "/opt/fw/a.bin", "-y", "burn"]
    assert f.burn_args("0000:3b:00.0", "/a.bin", allow_psid_change=True)[-2:] == ["--allow_psid_change", "burn"]
    # only a real True consents
    assert "--allow_psid_change" not in f.burn_args("0000:3b:00.0", "/a.bin", allow_psid_change="yes")


@pytest.mark.parametrize("left, right, result", [
    ("16.35.3006", "16.35.3006", 0),
    ("16.35.3006", "16.9.9999", 1),
    ("16.35.3006", "16.35.4030", -1),
    ("2.42.5000", "12.28.2006", -1),
])
def test_compare_versions(left, right, result):
    assert f.compare_versions(left, right) == result


def test_compare_versions_refuses_non_versions():
    with pytest.raises(ValueError):
        f.compare_versions("16.35", "16.35.3006")


@pytest.mark.parametrize("value", ["16.35", 16.35, "latest", "16.35.3006.1", "v16.35.3006", None, 16])
def test_version_problem_names_the_variable(value):
    message = f.version_problem(value, "firmware_versions.MT_0000000008")
    assert message.startswith("firmware_versions.MT_0000000008: ")
    assert "not a firmware version" in message


def test_version_problem_accepts_versions():
    assert f.version_problem("16.35.3006", "x") is None
    assert f.version_problem(" 2.42.5000 ", "x") is None


def test_psid_problem():
    assert f.psid_problem("MT_0000000223", "psid") is None
    assert f.psid_problem("DEL0000000004", "psid") is None
    assert f.psid_problem("MT 0000000223", "firmware_psid").startswith("firmware_psid: ")
    assert f.psid_problem(None, "psid")
    assert f.psid_problem("MT_0000000223000", "psid") is None  # 16 characters
    assert f.psid_problem("MT_00000002230000", "psid")  # 17 characters


def test_activation_from_message():
    assert f.activation_from_message("To load new FW, issue system-level reset.") == "reboot"
    assert f.activation_from_message("To load new FW run mstfwreset or reboot machine.") == "firmware reset"
    assert f.activation_from_message("Please power cycle machine to load new FW.") == "power cycle"
