# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""fw_reset end to end through AnsibleModule: run_command mocked with the exact argv
expected and recorded tool outputs (cases in test_fw_reset.yaml, the bad inputs in
test_fw_reset_bad_inputs.yaml). The helpers come from test_mlxconfig_module.py."""

from __future__ import annotations

import pytest

from ansible_collections.fabric.infiniband.plugins.modules import fw_reset
from ansible_collections.fabric.infiniband.tests.unit.plugins.modules.test_mlxconfig_module import (
    MSTFLINT, case_ids, load_cases, run_case, run_module,
)


CASES = load_cases("test_fw_reset.yaml")
BAD = load_cases("test_fw_reset_bad_inputs.yaml")


def resets(ran):
    """The reset commands among the commands run (any tool, any argument order)."""
    return [argv for argv in ran if argv[0].endswith("fwreset") and ("reset" in argv or "r" in argv)]


def queries(ran):
    return [argv for argv in ran if argv[0].endswith("fwreset") and "q" in argv]


@pytest.mark.parametrize("case", CASES, ids=case_ids(CASES))
def test_case(case, mocker, capsys, make_sysfs):
    result, ran = run_case(case, mocker, capsys, make_sysfs, fw_reset.main)
    check = (case.get("flags") or {}).get("check", False)
    # one query of the levels, then exactly one reset (none in check mode)
    assert len(queries(ran)) == 1
    assert len(resets(ran)) == (0 if check else 1)
    assert "diff" not in result
    assert result["cmds"] == ran
    if check:
        assert result["changed"] is True and result["steps"] == [] and result["fw_loaded"] is None
    if not result.get("failed"):
        assert result["changed"] is True
        assert result["reset_cmd"][-2:] == ["-y", "reset"] or result["reset_cmd"][-3:] == ["-y", "reset", "--skip_driver"]
        assert result["reset_cmd"][1:5] == ["-d", result["target_device"], "-l", "3"]


def test_bad_input_table_is_large_enough():
    assert len(BAD) >= 15


@pytest.mark.parametrize("case", BAD, ids=case_ids(BAD))
def test_bad_input(case, mocker, capsys, make_sysfs):
    """Every bad input fails before any reset, and says which device and why."""
    case = dict(case, failed=True)
    result, ran = run_case(case, mocker, capsys, make_sysfs, fw_reset.main)
    assert resets(ran) == [], "a reset ran: %r" % (ran,)
    assert len(queries(ran)) <= 1
    assert result.get("changed", False) is False
    assert "reset_cmd" not in result


def test_check_mode_runs_no_reset_even_when_all_is_fine(mocker, capsys, make_sysfs):
    params = {"device": "0000:3b:00.0", "sysfs_root": make_sysfs({"pci": {"0000:3b:00.0": {"device": "0x101b"}}})}
    result, ran = run_module(mocker, capsys, fw_reset.main, params, MSTFLINT, [
        {"argv": ["/usr/bin/mstfwreset", "-d", "0000:3b:00.0", "q"], "out_fixture": "mlxfwreset/sim_query_cx6.txt"}],
        check_mode=True)
    assert ran == [["/usr/bin/mstfwreset", "-d", "0000:3b:00.0", "q"]]
    assert result["changed"] is True and result["reset_cmd"] == [
        "/usr/bin/mstfwreset", "-d", "0000:3b:00.0", "-l", "3", "-y", "reset"]


def test_argument_spec_is_a_fresh_copy():
    spec = fw_reset.argument_spec()
    assert spec == {
        "sysfs_root": {"type": "path", "default": "/sys"},
        "device": {"type": "str", "required": True},
        "level": {"type": "int", "default": 3, "choices": [3]},
        "tool": {"type": "str", "default": "auto", "choices": ["auto", "mlxfwreset", "mstfwreset"]},
        "skip_driver": {"type": "bool", "default": False},
    }
    spec["sysfs_root"]["default"] = "/host/sys"
    assert fw_reset.argument_spec()["sysfs_root"]["default"] == "/sys"
