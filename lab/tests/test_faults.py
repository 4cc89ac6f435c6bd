# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Injected faults (the ``faults`` section of a state, ``fabricsim fault``): the robustness suite's levers."""

import io
import json

import pytest
from conftest import node_file

from fabricsim import cli
from fabricsim import state as sim_state

SET = ["-y", "-d", "0000:3b:00.0", "set", "LINK_TYPE_P1=IB"]


def call(tool, *argv):
    out, err = io.StringIO(), io.StringIO()
    rc = cli.main(tool, list(argv), stdout=out, stderr=err)
    return rc, out.getvalue(), err.getvalue()


def write_node(sim_env, faults=None):
    desc = node_file("cx6-vpi-eth-p1.json")
    if faults is not None:
        desc["faults"] = faults
    (sim_env / "state.json").write_text(json.dumps(desc))


def log_lines(sim_env):
    return [json.loads(line) for line in (sim_env / "calls.jsonl").read_text().splitlines()]


def test_firmware_set_fails_as_often_as_asked_and_writes_nothing(sim_env):
    write_node(sim_env, {"firmware_set": 2})
    for left in (1, 0):
        rc, out, _err = call("mstconfig", *SET)
        assert rc == 3
        assert out.endswith("Applying... Failed!\n-E- Failed to set configuration: the device did not complete the command "
                            "(injected fault)\n")
        st = sim_state.load()
        assert st["adapters"][0]["params"]["LINK_TYPE_P1"]["next"] == 2  # still ETH
        assert st.get("faults", {}).get("firmware_set", 0) == left
    assert "faults" not in sim_state.load()
    rc, out, _err = call("mstconfig", *SET)
    assert rc == 0 and "Done!" in out
    assert sim_state.load()["adapters"][0]["params"]["LINK_TYPE_P1"]["next"] == 1
    # the failed attempts are logged as writes that failed (rc 3), the last one succeeded
    assert [(x["kind"], x["rc"]) for x in log_lines(sim_env)] == [("write", 3), ("write", 3), ("write", 0)]


def test_queries_do_not_consume_the_fault(sim_env):
    write_node(sim_env, {"firmware_set": 1})
    rc, _out, _err = call("mstconfig", "-d", "0000:3b:00.0", "q", "LINK_TYPE_P1")
    assert rc == 0
    assert sim_state.load()["faults"] == {"firmware_set": 1}


def test_admin_command_sets_and_clears_a_fault(sim_env):
    write_node(sim_env)
    assert call("fabricsim", "fault", "firmware_set", "1") == (0, "", "")
    assert sim_state.load()["faults"] == {"firmware_set": 1}
    assert log_lines(sim_env)[-1]["kind"] == "fault"
    assert call("fabricsim", "fault", "firmware_set", "0") == (0, "", "")
    assert "faults" not in sim_state.load()


@pytest.mark.parametrize("argv, says", [
    (["fault", "disk_full", "1"], "faults.disk_full is unknown; known: firmware_burn, firmware_set"),
    (["fault", "firmware_set", "-1"], "faults.firmware_set must be a count (0 or more)"),
    (["fault", "firmware_set", "many"], "invalid literal"),
    (["fault", "firmware_set"], "usage: fabricsim fault <name> <count>"),
])
def test_admin_command_refuses_bad_faults(sim_env, argv, says):
    write_node(sim_env)
    rc, _out, err = call("fabricsim", *argv)
    assert rc == 2 and says in err
    assert "faults" not in sim_state.load()


@pytest.mark.parametrize("faults, says", [
    ([], "faults must be an object"),
    ({"firmware_set": True}, "faults.firmware_set must be a count"),
    ({"lockdown": 1}, "faults.lockdown is unknown"),
])
def test_state_refuses_bad_faults(faults, says):
    desc = node_file("cx6-vpi-eth-p1.json")
    desc["faults"] = faults
    with pytest.raises(sim_state.StateError, match=says):
        sim_state.normalize(desc)


def test_admin_command_switches_a_tool_layout_and_back(sim_env):
    """``fabricsim tool flint_query running_only``: the query of old MFT builds at run time (issue 33); ``standard``
    puts the state back as it was, byte for byte (the robustness suite's snapshot compares it)."""
    write_node(sim_env)
    assert call("fabricsim", "boot") == (0, "", "")
    before = (sim_env / "state.json").read_text()
    assert call("fabricsim", "tool", "flint_query", "running_only") == (0, "", "")
    assert sim_state.load()["tools"]["flint_query"] == "running_only"
    rc, out, _err = call("mstflint", "-d", "0000:3b:00.0", "q")
    assert rc == 0 and "FW Version(Running):" in out and "FW Version:" not in out
    assert log_lines(sim_env)[-2]["kind"] == "fault"
    assert call("fabricsim", "tool", "flint_query", "standard") == (0, "", "")
    assert (sim_env / "state.json").read_text() == before
    assert call("fabricsim", "tool", "flint_query", "running_only") == (0, "", "")
    assert call("fabricsim", "tool", "flint_query", "default") == (0, "", "")
    assert (sim_env / "state.json").read_text() == before


@pytest.mark.parametrize("argv, says", [
    (["tool", "flint_query", "newest"], "tools.flint_query must be one of standard, running_only"),
    (["tool", "firmware", "mft"], "tools.firmware is no layout; known: flint_query"),
    (["tool", "flint_query"], "usage: fabricsim tool <name> <value>"),
])
def test_admin_command_refuses_bad_layouts(sim_env, argv, says):
    write_node(sim_env)
    rc, _out, err = call("fabricsim", *argv)
    assert rc == 2 and says in err
    assert "flint_query" not in sim_state.load()["tools"]
