# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""firmware_info and firmware_burn end to end through AnsibleModule, run_command mocked with the exact
argv expected and outputs in the layout of lab/tests/fixtures (ref_* real, src_* from mstflint's source)."""

from __future__ import annotations

import os

import pytest

from ansible_collections.fabric.infiniband.plugins.modules import firmware_burn, firmware_info
from ansible_collections.fabric.infiniband.tests.unit.conftest import run_module


FIXDIR = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..",
                                       "lab", "tests", "fixtures"))
MSTFLINT = {"mstflint": "/usr/bin/mstflint"}
MFT = {"flint": "/usr/bin/flint"}
DEV = "0000:3b:00.0"
SYSFS = {
    "lockdown": "[none] integrity confidentiality",
    "pci": {
        "0000:3b:00.0": {"device": "0x101b", "driver": "mlx5_core", "infiniband": {"mlx5_0": {"node_type": "1: CA"}}},
        "0000:3b:00.1": {"device": "0x101b", "driver": "mlx5_core", "infiniband": {"mlx5_1": {"node_type": "1: CA"}}},
        "0000:86:00.0": {"device": "0x1017", "driver": "mlx5_core", "infiniband": {"mlx5_2": {"node_type": "1: CA"}}},
    },
}


def fx(name):
    with open(os.path.join(FIXDIR, name)) as handle:
        return handle.read()


def query(version, running=None, psid="MT_0000000223", tool="mstflint", dev=DEV):
    text = "Image type:            FS4\nFW Version:            %s\n" % version
    if running:
        text += "FW Version(Running):   %s\n" % running
    text += ("Product Version:       %s\nDescription:           UID                GuidsNumber\n"
             "Base GUID:             b8cef60300a1b2c4        8\nImage VSD:             N/A\nDevice VSD:            N/A\n"
             "PSID:                  %s\nSecurity Attributes:   N/A\n" % (version, psid))
    return {"argv": ["/usr/bin/%s" % tool, "-d", dev, "q"], "out": text}


def image_query(path, version="20.40.1000", psid="MT_0000000223", tool="mstflint"):
    text = ("Image type:            FS4\nFW Version:            %s\nProduct Version:       %s\n"
            "Description:           UID                GuidsNumber\nBase GUID:             N/A                     4\n"
            "PSID:                  %s\nSecurity Attributes:   N/A\nSecurity Ver:          0\n" % (version, version, psid))
    return {"argv": ["/usr/bin/%s" % tool, "-i", path, "q"], "out": text}


def burn_call(path, allow=False, out=None, rc=0, tool="mstflint"):
    argv = ["/usr/bin/%s" % tool, "-d", DEV, "-i", path, "-y"] + (["--allow_psid_change"] if allow else []) + ["burn"]
    return {"argv": argv, "rc": rc, "out": fx("src_flint_burn_y_fs3.txt") if out is None else out}


@pytest.fixture
def img(tmp_path):
    path = tmp_path / "fw-ConnectX6.bin"
    path.write_text("binary")
    return str(path)


# ------------------------------------------------------------------ firmware_info

def test_info_one_query_per_card(mocker, capsys, make_sysfs):
    params = {"sysfs_root": make_sysfs(SYSFS)}
    calls = [dict(query("20.40.1000", running="20.39.1002")),
             dict(query("16.35.3006", psid="MT_0000000008", dev="0000:86:00.0"))]
    result, ran = run_module(mocker, capsys, firmware_info.main, params, MSTFLINT, calls)
    assert len(ran) == 2 and result["changed"] is False and result["tool"] == "mstflint"
    first, second = result["devices"]
    assert (first["pci_address"], first["rdma_devices"], first["running_version"], first["pending_version"],
            first["pending"]) == (DEV, ["mlx5_0", "mlx5_1"], "20.39.1002", "20.40.1000", True)
    assert (second["device"], second["running_version"], second["pending"], second["psid"]) == \
        ("0000:86:00.0", "16.35.3006", False, "MT_0000000008")


def test_info_rdma_name_and_full_query_with_flint(mocker, capsys, make_sysfs):
    params = {"sysfs_root": make_sysfs(SYSFS), "device": "mlx5_0", "full": True}
    calls = [{"argv": ["/usr/bin/flint", "-d", DEV, "q", "full"], "out": fx("src_flint_query_full_cx6_pending.txt")}]
    result, _ran = run_module(mocker, capsys, firmware_info.main, params, dict(MFT, **MSTFLINT), calls, check_mode=True)
    dev = result["devices"][0]
    assert result["tool"] == "flint"
    assert (dev["part_number"], dev["running_version"], dev["flash_version"]) == \
        ("MCX653106A-HDA_Ax", "20.39.1002", "20.40.1000")
    assert dev["description"].startswith("ConnectX-6 VPI adapter card")


@pytest.mark.parametrize("name", ["ref_flint_query_cx4_fs3.txt", "ref_flint_query_full_cx3_fs2_running.txt",
                                  "ref_flint_query_bf2_secure_fw.txt", "ref_mstflint_query_fs4_running.txt"])
def test_info_reads_recorded_outputs(name, mocker, capsys, make_sysfs):
    params = {"sysfs_root": make_sysfs({}), "device": DEV}
    calls = [{"argv": ["/usr/bin/mstflint", "-d", DEV, "q"], "out": fx(name)}]
    result, _ran = run_module(mocker, capsys, firmware_info.main, params, MSTFLINT, calls)
    dev = result["devices"][0]
    assert dev["running_version"] and dev["psid"]
    assert dev["pending"] is ("Running" in fx(name))


def test_info_lockdown_names_the_cause(mocker, capsys, make_sysfs):
    params = {"sysfs_root": make_sysfs(dict(SYSFS, lockdown="none [integrity] confidentiality")), "device": DEV}
    calls = [{"argv": ["/usr/bin/mstflint", "-d", DEV, "q"], "rc": 1,
              "out": "-E- Cannot open Device: 0000:3b:00.0. Operation not permitted. MFE_CR_ERROR\n"}]
    result, _ran = run_module(mocker, capsys, firmware_info.main, params, MSTFLINT, calls)
    assert result["failed"] and "locked down (integrity)" in result["msg"]


def test_info_one_card_failing_of_several_warns(mocker, capsys, make_sysfs):
    params = {"sysfs_root": make_sysfs(SYSFS)}
    calls = [dict(query("20.39.1002")), {"argv": ["/usr/bin/mstflint", "-d", "0000:86:00.0", "q"], "rc": 1,
                                         "out": fx("ref_mstflint_cannot_open_device.txt")}]
    result, _ran = run_module(mocker, capsys, firmware_info.main, params, MSTFLINT, calls)
    assert not result.get("failed")
    assert result["devices"][1]["error"].startswith("mstflint cannot open device 0000:86:00.0")
    assert result["devices"][1]["running_version"] is None
    assert len(result["_test_warnings"]) == 1


def test_info_without_a_tool_names_both_packages(mocker, capsys, make_sysfs):
    result, ran = run_module(mocker, capsys, firmware_info.main, {"sysfs_root": make_sysfs({})}, {}, [])
    assert result["failed"] and ran == []
    assert "neither flint (NVIDIA MFT" in result["msg"] and "mstflint (mstflint)" in result["msg"]


def test_info_argument_spec():
    assert firmware_info.argument_spec() == {
        "sysfs_root": {"type": "path", "default": "/sys"},
        "tool": {"type": "str", "default": "auto", "choices": ["auto", "flint", "mstflint"]},
        "device": {"type": "str"},
        "devices": {"type": "list", "elements": "str"},
        "images": {"type": "list", "elements": "path", "default": []},
        "full": {"type": "bool", "default": False},
    }


# ------------------------------------------------------------------ firmware_burn

def burn_params(make_sysfs, img, **extra):
    return dict({"sysfs_root": make_sysfs(SYSFS), "device": DEV, "image": img}, **extra)


def test_burn_when_the_version_differs(mocker, capsys, make_sysfs, img):
    calls = [query("20.39.1002"), image_query(img), burn_call(img), query("20.40.1000", running="20.39.1002")]
    result, ran = run_module(mocker, capsys, firmware_burn.main, burn_params(make_sysfs, img), MSTFLINT, calls, diff=True)
    assert result["changed"] is True and len(ran) == 4
    assert (result["previous_version"], result["version"], result["running_version"]) == \
        ("20.39.1002", "20.40.1000", "20.39.1002")
    assert result["pending"] is True and result["activation"] == "firmware reset"
    assert result["activation_message"].startswith("To load new FW")
    assert result["diff"]["before"] == {"version": "20.39.1002", "psid": "MT_0000000223"}
    assert result["diff"]["after"] == {"version": "20.40.1000", "psid": "MT_0000000223"}
    assert "--allow_psid_change" not in result["burn_cmd"]


def test_fw_ctrl_burn_names_a_reboot(mocker, capsys, make_sysfs, img):
    calls = [query("20.39.1002"), image_query(img), burn_call(img, out=fx("src_flint_burn_y_fs4_fw_ctrl.txt")),
             query("20.40.1000", running="20.39.1002")]
    result, _ran = run_module(mocker, capsys, firmware_burn.main, burn_params(make_sysfs, img), MSTFLINT, calls)
    assert result["activation"] == "reboot"


def test_burn_check_mode_reports_without_burning(mocker, capsys, make_sysfs, img):
    calls = [query("20.39.1002"), image_query(img)]
    result, ran = run_module(mocker, capsys, firmware_burn.main, burn_params(make_sysfs, img), MSTFLINT, calls,
                             check_mode=True, diff=True)
    assert result["changed"] is True and all("burn" not in argv for argv in ran)
    assert result["burn_cmd"] == ["/usr/bin/mstflint", "-d", DEV, "-i", img, "-y", "burn"]
    assert result["diff"]["after"]["version"] == "20.40.1000" and result["activation"] == "reboot"


def test_no_burn_when_the_version_is_on_the_flash(mocker, capsys, make_sysfs, img):
    calls = [query("20.40.1000"), image_query(img)]
    result, ran = run_module(mocker, capsys, firmware_burn.main, burn_params(make_sysfs, img), MSTFLINT, calls)
    assert result["changed"] is False and len(ran) == 2
    assert result["pending"] is False and result["activation"] is None and result["burn_cmd"] is None


def test_no_burn_when_the_version_already_waits(mocker, capsys, make_sysfs, img):
    calls = [query("20.40.1000", running="20.39.1002"), image_query(img)]
    result, _ran = run_module(mocker, capsys, firmware_burn.main, burn_params(make_sysfs, img), MSTFLINT, calls)
    assert result["changed"] is False and result["pending"] is True and result["activation"] == "reboot"


def test_downgrade_burns_too(mocker, capsys, make_sysfs, img):
    calls = [query("20.41.1000"), image_query(img), burn_call(img), query("20.40.1000", running="20.41.1000")]
    result, _ran = run_module(mocker, capsys, firmware_burn.main, burn_params(make_sysfs, img), MSTFLINT, calls)
    assert result["changed"] is True and result["previous_version"] == "20.41.1000"


def test_psid_mismatch_is_refused_before_the_burn(mocker, capsys, make_sysfs, img):
    calls = [query("20.39.1002", psid="DEL0000000016"), image_query(img)]
    result, ran = run_module(mocker, capsys, firmware_burn.main, burn_params(make_sysfs, img), MSTFLINT, calls)
    assert result["failed"] and len(ran) == 2
    for part in ("PSID MT_0000000223", "PSID DEL0000000016", "allow_psid_change=true", "cross-flashes", "OEM"):
        assert part in result["msg"]


def test_allow_psid_change_burns_with_the_flag(mocker, capsys, make_sysfs, img):
    calls = [query("20.40.1000", psid="DEL0000000016"), image_query(img),
             burn_call(img, allow=True, out=fx("src_flint_burn_allow_psid_change.txt")),
             query("20.40.1000")]
    result, _ran = run_module(mocker, capsys, firmware_burn.main, burn_params(make_sysfs, img, allow_psid_change=True),
                              MSTFLINT, calls)
    assert result["changed"] is True and result["psid_changed"] is True and result["pending"] is False


def test_tool_psid_refusal_is_reported(mocker, capsys, make_sysfs, img):
    """The module saw equal PSIDs, the tool did not (minor PSID rules of 4.36): its words reach the user."""
    calls = [query("20.39.1002"), image_query(img),
             burn_call(img, rc=1, out=fx("src_flint_burn_psid_mismatch_v4.36.txt"))]
    result, _ran = run_module(mocker, capsys, firmware_burn.main, burn_params(make_sysfs, img), MSTFLINT, calls)
    assert result["failed"] and "refused to burn" in result["msg"] and "Device PSID (DEL0000000004)" in result["msg"]


def test_burn_failing_half_way(mocker, capsys, make_sysfs, img):
    calls = [query("20.39.1002"), image_query(img), burn_call(img, rc=1, out=fx("src_flint_burn_failed.txt"))]
    result, _ran = run_module(mocker, capsys, firmware_burn.main, burn_params(make_sysfs, img), MSTFLINT, calls)
    assert result["failed"] and "the flash keeps the image it had" in result["msg"] and result["rc"] == 1


def test_burn_that_did_not_take(mocker, capsys, make_sysfs, img):
    calls = [query("20.39.1002"), image_query(img), burn_call(img), query("20.39.1002")]
    result, _ran = run_module(mocker, capsys, firmware_burn.main, burn_params(make_sysfs, img), MSTFLINT, calls)
    assert result["failed"] and "did not take" in result["msg"]


def test_missing_image_fails_before_any_tool_call_on_it(mocker, capsys, make_sysfs, tmp_path):
    path = str(tmp_path / "missing.bin")
    result, ran = run_module(mocker, capsys, firmware_burn.main, burn_params(make_sysfs, path), MSTFLINT,
                             [query("20.39.1002")])
    assert result["failed"] and "image: %s is not a file on the node" % path in result["msg"] and len(ran) == 1


def test_unreadable_image(mocker, capsys, make_sysfs, img):
    calls = [query("20.39.1002"), {"argv": ["/usr/bin/mstflint", "-i", img, "q"], "rc": 1,
                                   "out": "-E- Cannot open Image: %s. Invalid image format\n" % img}]
    result, _ran = run_module(mocker, capsys, firmware_burn.main, burn_params(make_sysfs, img), MSTFLINT, calls)
    assert result["failed"] and result["msg"].startswith("image: mstflint cannot read %s" % img)


@pytest.mark.parametrize("device", ["", "-d", "3b:00", 13800])
def test_bad_device_fails_before_any_command(device, mocker, capsys, make_sysfs, img):
    result, ran = run_module(mocker, capsys, firmware_burn.main, burn_params(make_sysfs, img, device=device), MSTFLINT, [])
    assert result["failed"] and ran == []


def test_mst_path_needs_flint(mocker, capsys, make_sysfs, img):
    params = burn_params(make_sysfs, img, device="/dev/mst/mt4123_pciconf0")
    result, ran = run_module(mocker, capsys, firmware_burn.main, params, MSTFLINT, [])
    assert result["failed"] and ran == [] and "only MFT's flint opens" in result["msg"]


def test_burn_argument_spec():
    spec = firmware_burn.argument_spec()
    assert spec["allow_psid_change"] == {"type": "bool", "default": False}
    assert spec["image"] == {"type": "path", "required": True}
    assert spec["image_version"] == spec["image_psid"] == {"type": "str"}
    assert spec["tool"]["choices"] == ["auto", "flint", "mstflint"]


# ------------------------------------------------------------------ what the inventory says the image is

def test_info_queries_the_listed_cards_once_each(mocker, capsys, make_sysfs):
    params = {"sysfs_root": make_sysfs(SYSFS), "devices": ["0000:3b:00.1", "mlx5_0", "86:00.0"]}
    calls = [query("20.40.1000"), query("16.35.3006", psid="MT_0000000008", dev="0000:86:00.0")]
    result, ran = run_module(mocker, capsys, firmware_info.main, params, MSTFLINT, calls)
    assert [argv[2] for argv in ran] == [DEV, "0000:86:00.0"]
    assert [d["pci_address"] for d in result["devices"]] == [DEV, "0000:86:00.0"]


def test_an_image_with_another_version_than_its_entry_is_refused(mocker, capsys, make_sysfs, img):
    calls = [query("20.39.1002"), image_query(img, version="20.41.1000")]
    params = burn_params(make_sysfs, img, image_version="20.40.1000", image_psid="MT_0000000223")
    result, ran = run_module(mocker, capsys, firmware_burn.main, params, MSTFLINT, calls)
    assert result["failed"] and len(ran) == 2
    assert "holds version 20.41.1000, but image_version says 20.40.1000: not burnt" in result["msg"]


def test_an_image_with_another_psid_than_its_entry_is_refused(mocker, capsys, make_sysfs, img):
    calls = [query("20.39.1002"), image_query(img, psid="DEL0000000016")]
    params = burn_params(make_sysfs, img, image_version="20.40.1000", image_psid="MT_0000000223")
    result, ran = run_module(mocker, capsys, firmware_burn.main, params, MSTFLINT, calls)
    assert result["failed"] and "holds psid DEL0000000016, but image_psid says MT_0000000223" in result["msg"]


def test_check_mode_before_the_image_is_copied_takes_the_entry(mocker, capsys, make_sysfs, tmp_path):
    path = str(tmp_path / "not-copied-yet.bin")
    params = burn_params(make_sysfs, path, image_version="20.40.1000", image_psid="MT_0000000223")
    result, ran = run_module(mocker, capsys, firmware_burn.main, params, MSTFLINT, [query("20.39.1002")],
                             check_mode=True, diff=True)
    assert result["changed"] is True and len(ran) == 1
    assert result["diff"]["before"]["version"] == "20.39.1002" and result["diff"]["after"]["version"] == "20.40.1000"


def test_info_lists_the_images_each_card_could_take(mocker, capsys, make_sysfs, tmp_path):
    cx6_new, cx6_old, cx5 = (str(tmp_path / name) for name in ("cx6-new.bin", "cx6-old.bin", "cx5.bin"))
    for path in (cx6_new, cx6_old, cx5):
        with open(path, "w") as handle:
            handle.write("binary")
    missing = str(tmp_path / "missing.bin")
    params = {"sysfs_root": make_sysfs(SYSFS), "devices": [DEV], "images": [cx6_old, cx5, cx6_new, missing]}
    calls = [query("20.40.1000"), image_query(cx6_old, version="20.39.1002"),
             image_query(cx5, version="16.35.4030", psid="MT_0000000008"), image_query(cx6_new, version="20.41.1000")]
    result, ran = run_module(mocker, capsys, firmware_info.main, params, MSTFLINT, calls)
    assert len(ran) == 4 and result["changed"] is False
    assert [(i["version"], i["psid"], i["error"]) for i in result["images"]] == [
        ("20.39.1002", "MT_0000000223", None), ("16.35.4030", "MT_0000000008", None), ("20.41.1000", "MT_0000000223", None),
        (None, None, "not a file on the node")]
    assert result["devices"][0]["images"] == [{"path": cx6_new, "version": "20.41.1000", "newer": True},
                                              {"path": cx6_old, "version": "20.39.1002", "newer": False}]
