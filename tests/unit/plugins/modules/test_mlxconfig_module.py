# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""mlxconfig end to end through AnsibleModule: run_command mocked with the exact
argv expected and recorded tool outputs (cases in test_mlxconfig_module.yaml, the
bad inputs in test_mlxconfig_bad_inputs.yaml).

The helpers here are shared with test_mlxconfig_info.py.
"""

from __future__ import annotations

import os

import pytest
import yaml


from ansible_collections.fabric.infiniband.plugins.modules import mlxconfig
from ansible_collections.fabric.infiniband.tests.unit.conftest import read_fixture, run_module


HERE = os.path.dirname(__file__)
MSTFLINT = {"mstconfig": "/usr/bin/mstconfig", "mstfwreset": "/usr/bin/mstfwreset"}
MFT = {"mlxconfig": "/usr/bin/mlxconfig", "mlxfwreset": "/usr/bin/mlxfwreset", "mst": "/usr/bin/mst"}
TOOLS = {"mstflint": MSTFLINT, "mft": MFT, "both": dict(MFT, **MSTFLINT), "none": {}}


def load_cases(name):
    with open(os.path.join(HERE, name)) as handle:
        return yaml.safe_load(handle)


def case_ids(cases):
    return [case["id"] for case in cases]


def assert_subset(expected, actual, where="result"):
    """Dicts match on the expected keys; lists item by item with equal length."""
    if isinstance(expected, dict):
        assert isinstance(actual, dict), "%s: expected a dict, got %r" % (where, actual)
        for key, value in expected.items():
            assert key in actual, "%s: missing key %r in %r" % (where, key, sorted(actual))
            assert_subset(value, actual[key], "%s.%s" % (where, key))
    elif isinstance(expected, list):
        assert isinstance(actual, list), "%s: expected a list, got %r" % (where, actual)
        assert len(actual) == len(expected), "%s: %d items, expected %d: %r" % (where, len(actual), len(expected), actual)
        for index, (exp, act) in enumerate(zip(expected, actual)):
            assert_subset(exp, act, "%s[%d]" % (where, index))
    else:
        assert actual == expected and type(actual) is type(expected), "%s: %r != %r" % (where, actual, expected)


def run_case(case, mocker, capsys, make_sysfs, main):
    """Common part of the YAML cases of both modules; returns (result, commands run)."""
    params = dict(case.get("params") or {})
    sysfs_spec = case.get("sysfs")
    # never the test machine's /sys: an empty tree unless the case gives one
    params.setdefault("sysfs_root", make_sysfs(sysfs_spec if sysfs_spec is not None else {}))
    tools = case.get("tools", "mstflint")
    tools = TOOLS[tools] if isinstance(tools, str) else tools
    flags = case.get("flags") or {}
    result, ran = run_module(mocker, capsys, main, params, tools, case.get("run_command") or [],
                             check_mode=flags.get("check", False), diff=flags.get("diff", False))
    assert bool(result.get("failed")) == bool(case.get("failed")), result
    for part in case.get("msg") or []:
        assert part in result.get("msg", ""), "%r not in msg %r" % (part, result.get("msg"))
    if "expect" in case:
        assert_subset(case["expect"], result)
    for part in case.get("warnings") or []:
        assert any(part in warning for warning in result["_test_warnings"]), (part, result["_test_warnings"])
    if "warnings" not in case:
        assert result["_test_warnings"] == [], result["_test_warnings"]
    return result, ran


def sets(ran):
    return [argv for argv in ran if "set" in argv]


def queries(ran):
    return [argv for argv in ran if "q" in argv]


CASES = load_cases("test_mlxconfig_module.yaml")
BAD = load_cases("test_mlxconfig_bad_inputs.yaml")


@pytest.mark.parametrize("case", CASES, ids=case_ids(CASES))
def test_case(case, mocker, capsys, make_sysfs):
    result, ran = run_case(case, mocker, capsys, make_sysfs, mlxconfig.main)
    # one query before deciding, at most one set, one query after a set
    assert len(sets(ran)) <= 1
    assert len(queries(ran)) == (2 if sets(ran) else 1) or result.get("failed")
    if (case.get("flags") or {}).get("check"):
        assert sets(ran) == []
    if not (case.get("flags") or {}).get("diff"):
        assert "diff" not in result
    if not result.get("failed"):
        assert result["cmds"] == ran
        assert all("-y" in argv for argv in sets(ran))


def test_bad_input_table_is_large_enough():
    assert len(BAD) >= 15


@pytest.mark.parametrize("case", BAD, ids=case_ids(BAD))
def test_bad_input(case, mocker, capsys, make_sysfs):
    """Every bad input fails before any write, and says which device and parameter."""
    case = dict(case, failed=True)
    result, ran = run_case(case, mocker, capsys, make_sysfs, mlxconfig.main)
    assert sets(ran) == [], "a set ran: %r" % (ran,)
    assert len(queries(ran)) <= 1
    assert result["changed"] is False


def test_argument_spec_is_a_fresh_copy():
    spec = mlxconfig.argument_spec()
    assert spec["tool"] == {"type": "str", "default": "auto", "choices": ["auto", "mlxconfig", "mstconfig"]}
    assert spec["device"] == {"type": "str", "required": True}
    assert spec["params"] == {"type": "dict", "required": True}
    assert spec["allow_unsupported"] == {"type": "bool", "default": False}
    spec["tool"]["choices"].append("x")
    assert mlxconfig.argument_spec()["tool"]["choices"] == ["auto", "mlxconfig", "mstconfig"]


GEN_QUERIES = ["mlxconfig/sim_g%d_query_e_cx6_all.txt" % gen for gen in range(1, 7)]
GEN_QUERIES += ["mlxconfig/source_g1_query_e_cx6.txt", "mlxconfig/source_g5_query_e_cx6.txt"]


@pytest.mark.parametrize("fixture", GEN_QUERIES)
def test_same_decision_on_every_generation(fixture, mocker, capsys, make_sysfs):
    """Port 1 staged ETH -> IB and SR-IOV staged on: nothing to write, a reboot pending, whatever the format."""
    params = {"device": "0000:3b:00.0", "params": {"LINK_TYPE_P1": "ib", "SRIOV_EN": True, "NUM_OF_VFS": 8, "LINK_TYPE_P2": 1},
              "sysfs_root": make_sysfs({})}
    result, ran = run_module(mocker, capsys, mlxconfig.main, params, MFT, [
        {"argv": ["/usr/bin/mlxconfig", "-d", "0000:3b:00.0", "-e", "q"], "out": read_fixture(fixture)}])
    assert not result.get("failed"), result
    assert result["changed"] is False and result["reboot_required"] is True
    actions = dict((name, item["action"]) for name, item in result["params"].items())
    assert actions == {"LINK_TYPE_P1": "pending_reboot", "SRIOV_EN": "pending_reboot", "NUM_OF_VFS": "pending_reboot",
                       "LINK_TYPE_P2": "none"}
    assert result["params"]["LINK_TYPE_P1"]["before"] == {"current": "ETH(2)", "next_boot": "IB(1)"}
