# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""module_utils/mlxfwreset.py: parsers of the ``q`` and ``reset`` outputs on the recorded
outputs of tool-outputs.md section 3 (fixtures/mlxfwreset, see its README), with whitespace
variants; error classification and explanations; argv builders; the sysfs checks."""

from __future__ import annotations

import re

import pytest

from ansible_collections.fabric.infiniband.plugins.module_utils import mlxconfig as mlxcfg
from ansible_collections.fabric.infiniband.plugins.module_utils import mlxfwreset as m
from ansible_collections.fabric.infiniband.plugins.module_utils import sysfs
from ansible_collections.fabric.infiniband.tests.unit.conftest import read_fixture


def fixture(name):
    return read_fixture("mlxfwreset/" + name)


# Whitespace as publishers and terminals change it: squeezed, indented, trailing blanks
# trimmed or added, CRLF line ends, tabs instead of runs of blanks.
VARIANTS = {
    "as_recorded": lambda text: text,
    "squeezed": lambda text: re.sub(r"[ ]{2,}", " ", text),
    "indented": lambda text: "\n".join(("        " + line) if line else line for line in text.split("\n")),
    "trailing_blanks": lambda text: "\n".join(line + "   " for line in text.split("\n")),
    "trimmed": lambda text: "\n".join(line.rstrip() for line in text.split("\n")),
    "crlf": lambda text: text.replace("\n", "\r\n"),
    "tabs": lambda text: re.sub(r"[ ]{2,}", "\t", text),
}


def without_lines(parsed):
    return dict((key, value) for key, value in parsed.items() if key != "lines")


# ---------------------------------------------------------------- reset outputs

STEPS_MST_SKIPPED = [
    {"step": "Sending Reset Command To Fw", "result": "Done"},
    {"step": "Stopping Driver", "result": "Done"},
    {"step": "Resetting PCI", "result": "Done"},
    {"step": "Starting Driver", "result": "Done"},
    {"step": "Restarting MST", "result": "Skipped"},
]
STEPS_MST_DONE = STEPS_MST_SKIPPED[:4] + [{"step": "Restarting MST", "result": "Done"}]

RESETS = [
    # fixture, wording, device, steps
    ("real_reset_auto_cx4_container.txt", "minimal", "04:00.0", STEPS_MST_SKIPPED),
    ("real_reset_newer_cx7_mst.txt", "auto", "/dev/mst/mt4129_pciconf0", STEPS_MST_DONE),
    ("real_reset_requested_l3.txt", "requested", "3d:00.1", STEPS_MST_SKIPPED),
    ("sim_reset_l3_cx6.txt", "requested", "3b:00.0", STEPS_MST_SKIPPED),
    ("sim_mft_reset_l3_mst.txt", "requested", "/dev/mst/mt4123_pciconf0", STEPS_MST_DONE),
]


@pytest.mark.parametrize("variant", sorted(VARIANTS))
@pytest.mark.parametrize("name, wording, device, steps", RESETS, ids=[r[0] for r in RESETS])
def test_parse_reset_success(name, wording, device, steps, variant):
    parsed = m.parse_reset(VARIANTS[variant](fixture(name)))
    assert parsed["wording"] == wording
    assert parsed["device"] == device
    assert parsed["level"] == 3
    assert parsed["description"] == "Driver restart and PCI reset"
    assert parsed["confirmed"] is True
    assert parsed["steps"] == steps
    assert parsed["loaded"] is True
    assert parsed["errors"] == [] and parsed["warnings"] == []
    assert parsed["infos"] == ["FW was loaded successfully."]
    assert parsed["lines"] == []
    assert m.failed_steps(parsed) == []


def test_parse_reset_skip_driver():
    parsed = m.parse_reset(fixture("sim_reset_l3_skip_driver.txt"))
    assert [s["result"] for s in parsed["steps"]] == ["Done", "Skipped", "Done", "Skipped", "Skipped"]
    assert parsed["loaded"] is True


def test_parse_reset_newest_settings_and_warning():
    parsed = m.parse_reset(fixture("source_reset_newest_sync1.txt"))
    assert parsed["settings"] == {"level": 3, "type": 0, "sync": 1, "method": 0}
    assert parsed["warnings"] == ["PCI rescan is required after device reset."]
    assert parsed["steps"] == [{"step": "Sending Reset Command To Fw", "result": "Done"}]
    assert parsed["loaded"] is True and parsed["errors"] == []


@pytest.mark.parametrize("variant", sorted(VARIANTS))
@pytest.mark.parametrize("name, steps, errors, kinds", [
    ("sim_reset_vfs_failed.txt", [{"step": "Sending Reset Command To Fw", "result": "Failed"}],
     ["Firmware reset failed, retry operation or reboot machine."], ["reset_failed"]),
    ("source_reset_status_failed.txt", STEPS_MST_SKIPPED[:4],
     ["Firmware reset failed, retry operation or reboot machine."], ["reset_failed"]),
    ("source_reset_driver_status.txt",
     [{"step": "Sending Reset Command To Fw", "result": "Done"}, {"step": None, "result": "Failed"}],
     ["Failed to get the driver status: unknown driver mode",
      "Please make sure the driver is down, and re-run the tool with --skip_driver", "unknown driver mode."],
     ["driver", "driver", "other"]),
    ("source_reset_step_failed.txt",
     [{"step": "Sending Reset Command To Fw", "result": "Done"}, {"step": "Stopping Driver", "result": "Failed"}],
     ["Failed to unbind the driver."], ["other"]),
    ("sim_reset_aborted.txt", [], ["Aborted by user."], ["aborted"]),
    ("sim_reset_l3_unsupported.txt", [], ["Reset-level '3' is not supported for device, 3b:00.0."], ["level_unsupported"]),
    ("source_reset_level_unsupported.txt", [],
     ["Reset-level '3' is not supported in the current state of this device."], ["level_unsupported"]),
])
def test_parse_reset_failures(name, steps, errors, kinds, variant):
    parsed = m.parse_reset(VARIANTS[variant](fixture(name)))
    assert parsed["steps"] == steps
    assert parsed["errors"] == errors
    assert m.error_kinds(parsed) == kinds
    assert parsed["loaded"] is False
    assert parsed["lines"] == []


def test_parse_reset_aborted_prompt():
    parsed = m.parse_reset(fixture("sim_reset_aborted.txt"))
    assert parsed["confirmed"] is False
    assert parsed["wording"] == "requested" and parsed["level"] == 3


def test_parse_reset_failed_step_is_reported():
    parsed = m.parse_reset(fixture("source_reset_driver_status.txt"))
    assert m.failed_steps(parsed) == [{"step": None, "result": "Failed"}]
    assert m.describe_steps(parsed["steps"]) == "Sending Reset Command To Fw: Done, (between steps): Failed"


def test_parse_reset_incomplete_steps():
    out = ("\nRequested reset level for device, 3b:00.0:\n\n3: Driver restart and PCI reset\nContinue with reset?[y/N] y\n"
           "-I- Sending Reset Command To Fw             -Done\n"
           "-I- Stopping Driver                         -\n"
           "-I- Resetting PCI                           --E- PCI link did not come back.\n")
    parsed = m.parse_reset(out)
    assert parsed["steps"] == [{"step": "Sending Reset Command To Fw", "result": "Done"},
                               {"step": "Stopping Driver", "result": None}, {"step": "Resetting PCI", "result": None}]
    assert parsed["errors"] == ["PCI link did not come back."]
    assert len(m.failed_steps(parsed)) == 2
    assert m.describe_steps(parsed["steps"]).endswith("Stopping Driver: no result, Resetting PCI: no result")


def test_parse_reset_bluefield_notice_and_multihost_lines():
    out = ("\nMinimal reset level for device, ca:00.0:\n\n3: Driver restart and PCI reset\n"
           "Please be aware that resetting the Bluefield may take several minutes. Exiting the process in the middle of the "
           "waiting period will not halt the reset\nContinue with reset?[y/N] y\n"
           "Waiting for mlxfwreset to run on all other hosts, press 'ctrl+c' to abort\n"
           "-I- Sending Reset Command To Fw             -Done\n")
    parsed = m.parse_reset(out)
    assert parsed["level"] == 3 and parsed["confirmed"] is True
    assert len(parsed["lines"]) == 2
    assert parsed["steps"] == [{"step": "Sending Reset Command To Fw", "result": "Done"}]


def test_parse_reset_step_names_with_dashes():
    parsed = m.parse_reset("-I- Re-enabling PCI-e link - phase 2          -Done\n")
    assert parsed["steps"] == [{"step": "Re-enabling PCI-e link - phase 2", "result": "Done"}]


def test_parse_reset_empty_and_stderr():
    parsed = m.parse_reset("", "usage: mstfwreset ...\nmstfwreset: error: the following arguments are required: command\n")
    assert parsed["steps"] == [] and parsed["wording"] is None and parsed["confirmed"] is None
    assert parsed["lines"][-1] == "mstfwreset: error: the following arguments are required: command"
    assert m.parse_reset(None)["steps"] == []


# ---------------------------------------------------------------- query outputs

def levels(parsed):
    return [(r["level"], r["supported"], r["default"]) for r in parsed["levels"]]


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_parse_query_bf3_docs(variant):
    parsed = m.parse_query(VARIANTS[variant](fixture("real_query_bf3_docs.txt")))
    assert levels(parsed) == [(0, True, True), (1, False, False), (3, True, False), (4, True, False)]
    assert parsed["levels"][0]["description"] == 'Driver, PCI link, network link will remain up ("live-Patch")'
    assert parsed["levels"][1]["description"] == 'Only ARM side will not remain up ("Immediate reset").'
    assert [(r["number"], r["supported"]) for r in parsed["types"]] == [(0, True), (1, False), (2, False), (3, False), (4, False)]
    assert parsed["types"][1]["description"] == "Phy-less reset (keep network port active during reset)"
    # "-Not supported" in lower case, and a row whose status the publisher cut off
    assert [(r["number"], r["supported"]) for r in parsed["sync"]] == [(0, False), (1, None)]
    assert m.supported_levels(parsed) == [0, 3, 4]
    assert parsed["errors"] == [] and parsed["lines"] == [] and parsed["device"] is None


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_parse_query_fixture_with_reason(variant):
    parsed = m.parse_query(VARIANTS[variant](fixture("fixture_query_other_tool.txt")))
    assert levels(parsed) == [(0, False, False), (1, False, False), (3, True, False), (4, True, False)]
    assert parsed["levels"][0]["reason"] == "..."
    assert parsed["types"][1]["description"] == 'Phy-less reset ("port-alive" - network link will remain up)'
    assert [(r["number"], r["supported"]) for r in parsed["sync"]] == [(0, True), (1, True)]
    assert m.supported_levels(parsed) == [3, 4]


@pytest.mark.parametrize("variant", sorted(VARIANTS))
@pytest.mark.parametrize("name, device, expected, types, sync", [
    ("sim_query_cx6.txt", "3b:00.0", [(0, True, False), (1, False, False), (3, True, True), (4, True, False)], 5, 2),
    ("sim_mft_query_cx6.txt", "3b:00.0", [(0, True, False), (1, False, False), (3, True, True), (4, True, False)], 5, 2),
    ("sim_query_cx6_level4_only.txt", "3b:00.0",
     [(0, False, False), (1, False, False), (3, False, False), (4, True, False)], 5, 2),
    ("sim_mft_query_bf2_dpu.txt", "e1:00.0",
     [(0, False, False), (1, False, False), (3, False, False), (4, False, False)], 5, 2),
    ("sim_mft_query_bf2_nic.txt", "e1:00.0", [(0, True, False), (1, False, False), (3, True, True), (4, True, False)], 5, 2),
    ("source_query_mstflint_4_1x.txt", None, [(0, False, False), (3, True, True), (4, True, False), (5, False, False)], 2, 0),
])
def test_parse_query_generated(name, device, expected, types, sync, variant):
    parsed = m.parse_query(VARIANTS[variant](fixture(name)))
    assert parsed["device"] == device
    assert levels(parsed) == expected
    assert len(parsed["types"]) == types and len(parsed["sync"]) == sync
    assert parsed["errors"] == [] and parsed["lines"] == []


def test_level_helpers():
    parsed = m.parse_query(fixture("sim_query_cx6_level4_only.txt"))
    assert m.supported_levels(parsed) == [4]
    assert m.level_entry(parsed, 3)["supported"] is False
    assert m.level_entry(parsed, 7) is None
    assert m.describe_levels(parsed) == "4 (Warm Reboot)"
    assert m.describe_levels(m.parse_query(fixture("sim_mft_query_bf2_dpu.txt"))) == ""
    assert m.describe_levels({"levels": [{"level": 5, "description": None, "supported": True}]}) == "5 (Cold Reboot)"


@pytest.mark.parametrize("name, errors, kind", [
    ("sim_query_open_failed.txt", ["Failed to open device (0000:3c:00.0): No such file or directory."], "open"),
    ("sim_query_lockdown.txt", ["Failed to open device (0000:3b:00.0): Operation not permitted."], "open"),
    ("sim_query_unknown_rdma.txt", ["Failed to Identify Device: mlx5_9."], "identify"),
    ("source_secure_boot.txt", ["The tool is not supported on UEFI Secure Boot."], "secure_boot"),
    ("source_not_root.txt", ["Only root user can run this tool."], "not_root"),
])
def test_parse_query_errors(name, errors, kind):
    parsed = m.parse_query(fixture(name))
    assert parsed["errors"] == errors and parsed["levels"] == []
    assert m.error_kinds(parsed) == [kind]


def test_parse_query_stderr_and_rows_outside_blocks():
    parsed = m.parse_query("3: Driver restart and PCI reset  -Supported\n", "-E- Failed to open device (x): boom\nTraceback\n")
    assert parsed["levels"] == [] and parsed["lines"] == ["3: Driver restart and PCI reset  -Supported", "Traceback"]
    assert parsed["errors"] == ["Failed to open device (x): boom"]


@pytest.mark.parametrize("text, expected", [
    ("3: Driver restart and PCI reset -Supported (default)",
     {"number": 3, "description": "Driver restart and PCI reset", "supported": True, "default": True, "reason": None}),
    ("0:Driver, PCI link, network link will remain up (\"live-Patch\")-NOT SUPPORTED (Reason: FW too old)",
     {"number": 0, "description": 'Driver, PCI link, network link will remain up ("live-Patch")', "supported": False,
      "default": False, "reason": "FW too old"}),
    ("1: Driver is the owner", {"number": 1, "description": "Driver is the owner", "supported": None, "default": False,
                                "reason": None}),
    ("Reset-levels:", None),
    ("x: y", None),
])
def test_parse_level_row(text, expected):
    assert m.parse_level_row(text) == expected


# ---------------------------------------------------------------- errors and explanations

@pytest.mark.parametrize("message, kind", [
    ("-E- Failed to open device (0000:3b:00.0): Operation not permitted.", "open"),
    ("Cannot open Device 0000:3b:00.0", "open"),
    ("The tool is not supported on UEFI Secure Boot.", "secure_boot"),
    ("Failed to Identify Device: mlx5_9.", "identify"),
    ("Can not find path of the provided mst device: 3b:00.0.", "mst"),
    ("Failed to run: mst status -v.", "mst"),
    ("Firmware reset failed, retry operation or reboot machine.", "reset_failed"),
    ("Please make sure the driver is down, and re-run the tool with --skip_driver", "driver"),
    ("Reset-level '4' is not supported in the current state of this device.", "level_unsupported"),
    ("There is no supported reset-level.", "level_unsupported"),
    ("Reset-type '1' is not supported in the current state of this device.", "unsupported"),
    ("Command is not supported.", "unsupported"),
    ("Only root user can run this tool.", "not_root"),
    ("mstfwreset is not supported for device in Flash Recovery mode.", "livefish"),
    ("The tool is not supported on virtual machines.", "virtual_machine"),
    ("Unsupported device.", "unsupported_device"),
    ("fsm sync timed out.", "multihost"),
    ("Aborted by user.", "aborted"),
    ("Failed to reboot machine please reboot machine manually.", "reboot"),
    ("Something new.", "other"),
])
def test_classify_error(message, kind):
    assert m.classify_error(message) == kind


def test_explain_lockdown_and_open():
    parsed = m.parse_query(fixture("sim_query_lockdown.txt"))
    msg = m.explain_failure("mstfwreset", "0000:3b:00.0", parsed, 1, lockdown="integrity")
    assert msg.startswith("the kernel is locked down (integrity): Secure Boot lockdown blocks the direct PCI access that "
                          "mstfwreset needs, so it cannot open 0000:3b:00.0")
    assert "Reboot the host instead" in msg and "mokutil --disable-validation" in msg
    parsed = m.parse_query(fixture("sim_query_open_failed.txt"))
    functions = [{"pci_address": "0000:3b:00.0", "rdma_devices": ["mlx5_0"]}]
    msg = m.explain_failure("mstfwreset", "0000:3c:00.0", parsed, 1, lockdown="none", functions=functions)
    assert msg == ("mstfwreset cannot open device 0000:3c:00.0 (Failed to open device (0000:3c:00.0): No such file or "
                   "directory.): NVIDIA/Mellanox PCI functions in sysfs: 0000:3b:00.0 (mlx5_0)")
    msg = m.explain_failure("mlxfwreset", "/dev/mst/mt4123_pciconf0", {"errors": ["Failed to open device"]}, 1)
    assert "MST device paths exist only after 'mst start'" in msg
    # no error printed, but the kernel is locked down
    assert m.explain_failure("mstfwreset", "x", {"errors": []}, 1, lockdown="confidentiality").startswith(
        "the kernel is locked down (confidentiality)")


def test_explain_other_kinds():
    parsed = m.parse_query(fixture("source_secure_boot.txt"))
    assert m.explain_failure("mstfwreset", "0000:3b:00.0", parsed, 1).startswith(
        "mstfwreset refuses to run under UEFI Secure Boot (it resets the PCI link of 0000:3b:00.0")
    parsed = m.parse_reset(fixture("source_reset_driver_status.txt"))
    msg = m.explain_failure("mstfwreset", "0000:3b:00.0", parsed, 1)
    assert "unload mlx5_core from every function of the card and use skip_driver: true" in msg
    parsed = m.parse_reset(fixture("sim_reset_vfs_failed.txt"))
    msg = m.explain_failure("mstfwreset", "0000:3b:00.0", parsed, 1)
    assert msg.startswith("mstfwreset failed on device 0000:3b:00.0 (Firmware reset failed, retry operation or reboot "
                          "machine.): the tool says: retry, or reboot the host")
    assert m.explain_failure("mstfwreset", "d", {"errors": ["New error."]}, 1) == "mstfwreset failed on device d (rc 1): New error."
    assert m.explain_failure("mstfwreset", "d", {"errors": [], "lines": ["Traceback", "KeyError: 'x'"]}, 1).endswith(
        "KeyError: 'x'")
    assert m.explain_failure("mstfwreset", "d", {"errors": []}, 2, stdout="") == "mstfwreset failed on device d (rc 2): no output"
    # an error the tool does not explain, during a reset: how to recover
    msg = m.explain_failure("mstfwreset", "d", m.parse_reset(fixture("source_reset_step_failed.txt")), 1, during_reset=True)
    assert msg == ("mstfwreset failed on device d (rc 1): Failed to unbind the driver. (the card may be left half reset: "
                   "check that its RDMA devices and netdevs are back ('rdma link', 'ip link'), and reboot the host to recover)")


# ---------------------------------------------------------------- argv and tools

def test_argv_builders():
    assert m.query_args("0000:3b:00.0") == ["-d", "0000:3b:00.0", "q"]
    assert m.reset_args("0000:3b:00.0", 3) == ["-d", "0000:3b:00.0", "-l", "3", "-y", "reset"]
    assert m.reset_args("mlx5_0", "3", skip_driver=True) == ["-d", "mlx5_0", "-l", "3", "-y", "reset", "--skip_driver"]


@pytest.mark.parametrize("choice, installed, device, expected", [
    ("auto", {"mlxfwreset": "/a", "mstfwreset": "/b"}, None, ("mlxfwreset", None)),
    ("auto", {"mstfwreset": "/b"}, "0000:3b:00.0", ("mstfwreset", None)),
    ("mstfwreset", {"mlxfwreset": "/a", "mstfwreset": "/b"}, None, ("mstfwreset", None)),
    ("auto", {}, None, (None, "neither mlxfwreset (NVIDIA MFT (or the mft package of DOCA-OFED)) nor mstfwreset (mstflint) "
                              "is installed")),
    ("mlxfwreset", {"mstfwreset": "/b"}, None,
     (None, "tool=mlxfwreset but mlxfwreset is not installed (package: NVIDIA MFT (or the mft package of DOCA-OFED))")),
    ("auto", {"mstfwreset": "/b"}, "/dev/mst/mt4123_pciconf0",
     (None, "device /dev/mst/mt4123_pciconf0 is an MST device path, which only MFT's mlxfwreset opens (after 'mst start'); "
            "mstflint's mstfwreset is installed: give the PCI address instead")),
    ("mstfwreset", {"mstfwreset": "/b"}, "/dev/mst/x",
     (None, "device /dev/mst/x is an MST device path, which mstflint's mstfwreset cannot open: give the PCI address, or use "
            "tool=mlxfwreset (MFT, after 'mst start')")),
    ("mlxconfig", {"mlxconfig": "/a"}, None, (None, "tool=mlxconfig is not one of auto, mlxfwreset, mstfwreset")),
])
def test_choose_reset_tool(choice, installed, device, expected):
    assert mlxcfg.choose_tool(choice, installed, device, names=mlxcfg.RESET_TOOLS) == expected


def test_bluefield_device_ids():
    assert m.BLUEFIELD_DEVICE_IDS == frozenset(("0xa2d2", "0xa2d6", "0xa2dc"))
    assert m.CONFIG_TOOL_OF == {"mlxfwreset": "mlxconfig", "mstfwreset": "mstconfig"}


# ---------------------------------------------------------------- sysfs checks

CARDS = {
    "pci": {
        "0000:3b:00.0": {"device": "0x101b", "driver": "mlx5_core", "sriov_totalvfs": "8", "sriov_numvfs": "2"},
        "0000:3b:00.1": {"device": "0x101b", "driver": "mlx5_core", "sriov_totalvfs": "8", "sriov_numvfs": " 0 "},
        "0000:3b:00.2": {"device": "0x101c", "physfn": "0000:3b:00.0", "vf_index": 0},
        "0000:3b:00.3": {"device": "0x101c", "physfn": "0000:3b:00.0", "vf_index": 1},
        "0000:3c:00.0": {"device": "0x1021"},
        "0000:e1:00.0": {"device": "0xa2d6", "sriov_numvfs": "junk"},
        "0000:e1:00.1": {"device": "0xa2d6"},
        "0000:05:00.0": {"device": "0x1234", "vendor": "0x8086"},
    },
}


def test_card_functions_and_vfs(make_sysfs):
    tree = sysfs.Sysfs(make_sysfs(CARDS))
    functions = m.card_functions(tree, "0000:3b:00.0")
    assert functions == ["0000:3b:00.0", "0000:3b:00.1"]
    assert m.card_functions(tree, "0000:3b:00.1") == functions
    assert m.functions_with_vfs(tree, functions) == [("0000:3b:00.0", 2)]
    assert m.card_functions(tree, "0000:3c:00.0") == ["0000:3c:00.0"]
    assert m.functions_with_vfs(tree, ["0000:3c:00.0"]) == []
    assert m.functions_with_vfs(tree, m.card_functions(tree, "0000:e1:00.0")) == []
    assert m.card_functions(tree, "0000:99:00.0") == []
    assert m.card_functions(tree, "/dev/mst/mt4123_pciconf0") == []


def test_is_bluefield(make_sysfs):
    tree = sysfs.Sysfs(make_sysfs(CARDS))
    assert m.is_bluefield(tree, "0000:e1:00.0") is True
    assert m.is_bluefield(tree, "0000:3b:00.0") is False
    assert m.is_bluefield(tree, "0000:05:00.0") is None
    assert m.is_bluefield(tree, "0000:99:00.0") is None
