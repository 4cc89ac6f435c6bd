# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""flint/mstflint: query of a card and of an image file, burn, its activation by reboot, firmware reset or
power cycle, a burn that fails half-way, PSID mismatch and lockdown (lab/README.md, "Firmware images")."""

import io
import json
import re

import pytest

from conftest import fixture_text, node_file

from fabricsim import cli
from fabricsim import state as sim_state

DEV = "0000:3b:00.0"


def call(tool, *argv):
    out, err = io.StringIO(), io.StringIO()
    rc = cli.main(tool, list(argv), stdout=out, stderr=err)
    return rc, out.getvalue(), err.getvalue()


def write_node(sim_env, name="cx6-vpi-eth-p1.json", **changes):
    desc = node_file(name)
    for key, value in changes.items():
        if key == "adapter":
            desc["adapters"][0].update(value)
        elif key == "tools":
            desc["tools"].update(value)
        else:
            desc[key] = value
    (sim_env / "state.json").write_text(json.dumps(desc))


def image(sim_env, version="20.40.1000", psid="MT_0000000223", device_id=0x101B, name="fw.bin", **extra):
    path = sim_env / name
    path.write_text(json.dumps(dict({"fabricsim_firmware_image": 1, "psid": psid, "version": version,
                                     "device_id": device_id}, **extra)))
    return str(path)


def keys(text):
    """``Key:`` -> value of a query, and the keys in order."""
    rows = [re.match(r"^(\S.*?):\s+(.*)$", line) for line in text.splitlines() if line and not line.startswith(" ")]
    return [(m.group(1), m.group(2)) for m in rows if m]


def log_lines(sim_env):
    return [json.loads(line) for line in (sim_env / "calls.jsonl").read_text().splitlines()]


def test_query_of_a_card_has_the_recorded_layout(sim_env):
    write_node(sim_env)
    rc, out, err = call("mstflint", "-d", DEV, "q")
    assert rc == 0 and err == ""
    ref = fixture_text("ref_mstflint_query_fs4_running.txt")
    # the same keys, in the same order, in the same column, as the recorded FS4 query (no ROM, no Running line)
    assert [k for k, _ in keys(out)] == [k for k, _ in keys(ref) if k not in ("FW Version(Running)", "FW Release Date",
                                                                            "Rom Info")]
    assert all(line.index(":") < 23 and line[23] != " " for line in out.splitlines())
    assert dict(keys(out))["FW Version"] == "20.39.1002"
    assert dict(keys(out))["PSID"] == "MT_0000000223"
    assert "FW Version(Running)" not in out
    assert log_lines(sim_env)[-1]["kind"] == "query" and log_lines(sim_env)[-1]["device"] == DEV


def test_full_query_adds_part_number_and_description(sim_env):
    write_node(sim_env)
    _rc, out, _err = call("mstflint", "-d", "mlx5_0", "q", "full")
    assert [k for k, _ in keys(out)][:5] == ["Image type", "FW Version", "Part Number", "Description", "Product Version"]
    assert dict(keys(out))["Part Number"] == "MCX653106A-HDA_Ax"


def test_tool_names_follow_the_flavour(sim_env):
    write_node(sim_env)
    assert call("flint", "-d", DEV, "q")[0] == 127
    write_node(sim_env, "cx5-vpi-mft.json")
    assert call("mstflint", "-d", DEV, "q")[0] == 127
    rc, out, _err = call("flint", "-d", "0000:86:00.0", "q")
    assert rc == 0 and "Image type:            FS4\n" in out


def test_image_query(sim_env):
    write_node(sim_env)
    rc, out, _err = call("mstflint", "-i", image(sim_env), "q")
    assert rc == 0
    fields = dict(keys(out))
    assert (fields["FW Version"], fields["PSID"], fields["Security Ver"]) == ("20.40.1000", "MT_0000000223", "0")
    assert (log_lines(sim_env)[-1]["kind"], log_lines(sim_env)[-1]["device"]) == ("read", None)
    ref = fixture_text("ref_mstflint_image_query_fs4.txt")
    assert [k for k, _ in keys(out)] == [k for k, _ in keys(ref) if k not in ("FW Release Date", "Rom Info")]
    rc, out, _err = call("mstflint", "-i", str(sim_env / "missing.bin"), "q")
    assert rc == 1 and out == "-E- Cannot open Image: %s. No such file or directory\n" % (sim_env / "missing.bin")
    (sim_env / "junk.bin").write_text("not an image")
    rc, out, _err = call("mstflint", "-i", str(sim_env / "junk.bin"), "q")
    assert rc == 1 and "Invalid image format" in out


def test_burn_waits_for_a_reboot(sim_env):
    write_node(sim_env)
    rc, out, _err = call("mstflint", "-d", DEV, "-i", image(sim_env), "-y", "burn")
    assert rc == 0
    assert out.startswith("\n    Current FW version on flash:  20.39.1002\n    New FW version:               20.40.1000\n")
    assert out.endswith("\rBurning FW image without signatures - OK  \n\rRestoring signature                     - OK\n"
                        "-I- To load new FW, issue system-level reset or use mstfwreset where applicable.\n")
    assert log_lines(sim_env)[-1]["kind"] == "write"
    _rc, out, _err = call("mstflint", "-d", DEV, "q")
    fields = dict(keys(out))
    assert (fields["FW Version"], fields["FW Version(Running)"]) == ("20.40.1000", "20.39.1002")
    # the kernel still sees the old firmware until the card restarts
    assert sim_state.load()["adapters"][0]["firmware_version"] == "20.39.1002"
    st = sim_state.load()
    sim_state.power_on(st)
    assert st["adapters"][0]["firmware_version"] == "20.40.1000" and "flash" not in st["adapters"][0]


def test_burn_activates_with_a_firmware_reset(sim_env, make_state):
    st = make_state()
    st["adapters"][0]["flash"] = {"version": "20.40.1000", "psid": "MT_0000000223"}
    sim_state.fw_reset(st, st["adapters"][0], level=3)
    assert st["adapters"][0]["firmware_version"] == "20.40.1000"


def test_burn_waits_for_a_power_cycle_where_warm_reboots_do_not_apply(sim_env, make_state):
    st = make_state(warm_reboot_applies=False)
    st["adapters"][0]["flash"] = {"version": "20.40.1000", "psid": "MT_0000000223"}
    sim_state.power_on(st)
    assert st["adapters"][0]["firmware_version"] == "20.39.1002"
    sim_state.power_cycle(st)
    assert st["adapters"][0]["firmware_version"] == "20.40.1000"


def test_burn_of_the_same_version_asks_and_y_answers(sim_env):
    write_node(sim_env)
    rc, out, _err = call("mstflint", "-d", DEV, "-i", image(sim_env, version="20.39.1002"), "burn")
    assert rc == 1 and out.endswith(" Do you want to continue ? (y/n) [n] : -E- Aborted by user\n")
    rc, out, _err = call("mstflint", "-d", DEV, "-i", image(sim_env, version="20.39.1002"), "-y", "burn")
    assert rc == 0 and "Note: The new FW version is the same as the current FW version on flash." in out
    assert "flash" not in sim_state.load()["adapters"][0]


def test_psid_mismatch_is_refused_in_each_wording(sim_env):
    write_node(sim_env)
    rc, out, _err = call("mstflint", "-d", DEV, "-i", image(sim_env, psid="DEL0000000016"), "-y", "burn")
    assert rc == 1
    assert out.endswith("\n\n\n-E- PSID mismatch. The PSID on flash (MT_0000000223) differs from the PSID in the given "
                        "image (DEL0000000016).\n")
    assert "flash" not in sim_state.load()["adapters"][0]
    write_node(sim_env, tools={"firmware_version": "4.36.0"})
    rc, out, _err = call("mstflint", "-d", DEV, "-i", image(sim_env, psid="DEL0000000016"), "-y", "burn")
    assert rc == 1 and out.endswith("-E- PSID mismatch. Device PSID (MT_0000000223) differs from image PSID "
                                    "(DEL0000000016).\n")


def test_allow_psid_change_cross_flashes(sim_env):
    write_node(sim_env)
    rc, out, _err = call("mstflint", "-d", DEV, "-i", image(sim_env, psid="DEL0000000016"), "-y",
                         "--allow_psid_change", "burn")
    assert rc == 0
    assert 'You are about to replace current PSID on flash - "MT_0000000223" with a different PSID - "DEL0000000016".' in out
    _rc, out, _err = call("mstflint", "-d", DEV, "q")
    assert dict(keys(out))["PSID"] == "DEL0000000016"  # the flash's PSID shows at once
    st = sim_state.load()
    sim_state.power_on(st)
    assert st["adapters"][0]["psid"] == "DEL0000000016"


def test_image_for_another_device_is_refused(sim_env):
    write_node(sim_env)
    rc, out, _err = call("mstflint", "-d", DEV, "-i", image(sim_env, device_id=0x1017), "-y", "burn")
    assert rc == 1 and "-E- The given device requires an FS4 image type" in out


def test_burn_that_fails_half_way_keeps_the_old_image(sim_env):
    write_node(sim_env, faults={"firmware_burn": 1})
    rc, out, _err = call("mstflint", "-d", DEV, "-i", image(sim_env), "-y", "burn")
    assert rc == 1
    assert out.endswith("\rBurning FW image without signatures -  37%-E- Burning FS4 image failed: Flash write failed "
                        "(injected fault)\n")
    st = sim_state.load()
    assert "flash" not in st["adapters"][0] and "faults" not in st
    _rc, out, _err = call("mstflint", "-d", DEV, "q")
    assert "FW Version:            20.39.1002\n" in out and "Running" not in out
    sim_state.power_on(st)
    assert st["adapters"][0]["firmware_version"] == "20.39.1002"
    # a rerun finishes it
    assert call("mstflint", "-d", DEV, "-i", image(sim_env), "-y", "burn")[0] == 0
    assert [(x["kind"], x["rc"]) for x in log_lines(sim_env) if x["tool"] == "mstflint"][-3:] == [
        ("write", 1), ("query", 0), ("write", 0)]


def test_lockdown_and_unknown_devices_cannot_be_opened(sim_env):
    write_node(sim_env, kernel={"lockdown": "integrity", "netns_mode": "shared"})
    rc, out, _err = call("mstflint", "-d", DEV, "q")
    assert rc == 1 and out == "-E- Cannot open Device: 0000:3b:00.0. Operation not permitted. MFE_CR_ERROR\n"
    rc, out, _err = call("mstflint", "-d", DEV, "-i", image(sim_env), "-y", "burn")
    assert rc == 1 and "Cannot open Device" in out
    write_node(sim_env)
    rc, out, _err = call("mstflint", "-d", "0000:5e:00.0", "q")
    assert rc == 1 and out.startswith("-E- Cannot open Device: 0000:5e:00.0.")
    # a VF is no card
    rc, out, _err = call("mstflint", "-d", "0000:3b:00.2", "q")
    assert rc == 1


def test_bluefield_in_dpu_mode_names_only_a_reboot(sim_env, make_state):
    desc = node_file("cx6-vpi-eth-p1.json")
    desc["adapters"][0] = {"model": "BlueField-2", "pci_address": DEV}
    (sim_env / "state.json").write_text(json.dumps(desc))
    rc, out, _err = call("mstflint", "-d", DEV, "-i", image(sim_env, psid="MT_0000000728", device_id=0xA2D6), "-y",
                         "burn")
    assert rc == 0 and out.endswith("-I- To load new FW, issue system-level reset.\n")
    _rc, out, _err = call("mstflint", "-d", DEV, "q")
    assert "Security Attributes:   secure-fw\n" in out


def test_old_mft_query_prints_the_running_version_alone(sim_env):
    """tools.flint_query running_only: the layout of old MFT builds (issue 33), which the collection's
    parser reads as the running and flash version."""
    write_node(sim_env, tools={"flint_query": "running_only"})
    rc, out, _err = call("mstflint", "-d", DEV, "q")
    assert rc == 0
    fields = dict(keys(out))
    assert fields["FW Version(Running)"] == "20.39.1002" and "FW Version" not in fields
    assert all(line.index(":") < 23 and line[23] != " " for line in out.splitlines())
    desc = node_file("cx6-vpi-eth-p1.json")
    desc["tools"]["flint_query"] = "newest"
    with pytest.raises(sim_state.StateError, match="tools.flint_query"):
        sim_state.normalize(desc)
