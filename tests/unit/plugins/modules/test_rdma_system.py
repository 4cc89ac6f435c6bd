# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""rdma_system end to end through AnsibleModule: run_command mocked with the exact argv
expected and recorded rdma outputs, a fake sysfs tree, and fake /proc and /run/netns
trees for the search of the namespaces that block a change (cases in
test_rdma_system.yaml, the bad inputs in test_rdma_system_bad_inputs.yaml). The
helpers come from test_mlxconfig_module.py."""

from __future__ import annotations

import pytest

from ansible_collections.fabric.infiniband.plugins.module_utils import rdma
from ansible_collections.fabric.infiniband.plugins.modules import rdma_system
from ansible_collections.fabric.infiniband.tests.unit.conftest import read_fixture
from ansible_collections.fabric.infiniband.tests.unit.plugins.module_utils.test_rdma_netns import build_proc
from ansible_collections.fabric.infiniband.tests.unit.plugins.modules.test_mlxconfig_module import (
    case_ids, load_cases, run_case, run_module,
)


RDMA = {"rdma": "/usr/sbin/rdma"}
SHOW = ["/usr/sbin/rdma", "-j", "system", "show"]
CASES = load_cases("test_rdma_system.yaml")
BAD = load_cases("test_rdma_system_bad_inputs.yaml")


def patch_roots(mocker, roots):
    mocker.patch.object(rdma, "PROC_ROOT", roots["proc"])
    mocker.patch.object(rdma, "NETNS_RUN_DIR", roots["run"])


@pytest.fixture(autouse=True)
def fake_roots(tmp_path, mocker):
    """Never the test machine's /proc and /run/netns: empty trees unless a case fills them."""
    roots = {"proc": str(tmp_path / "proc"), "run": str(tmp_path / "run-netns")}
    patch_roots(mocker, roots)
    return roots


def run_again(mocker, roots):
    """Undo the patches of a first run_module (it patches AnsibleModule) before a second one."""
    mocker.stopall()
    patch_roots(mocker, roots)


def sets(ran):
    return [argv for argv in ran if argv[1:3] == ["system", "set"]]


def run_rdma_case(case, mocker, capsys, make_sysfs, roots):
    build_proc(roots["proc"], case.get("proc"), case.get("run_netns"), roots["run"])
    case = dict(case)
    case.setdefault("tools", RDMA)
    result, ran = run_case(case, mocker, capsys, make_sysfs, rdma_system.main)
    for part in case.get("reason") or []:
        assert part in (result.get("reason") or ""), "%r not in reason %r" % (part, result.get("reason"))
    return result, ran


@pytest.mark.parametrize("case", CASES, ids=case_ids(CASES))
def test_case(case, mocker, capsys, make_sysfs, fake_roots):
    result, ran = run_rdma_case(case, mocker, capsys, make_sysfs, fake_roots)
    flags = case.get("flags") or {}
    assert not result.get("failed"), result
    assert result["cmds"] == ran
    # at most one set, never in check mode; a read-back after every set that worked
    assert len(sets(ran)) <= 1
    if flags.get("check"):
        assert sets(ran) == []
    if result["changed"] and not flags.get("check"):
        assert ran[-1] == ran[0] and len(ran) == 3
    if not flags.get("diff"):
        assert "diff" not in result
    # the outcome fields are consistent with each other
    assert result["applied"] == (result["netns"]["after"] == case["params"]["netns"])
    assert (result["reason"] is None) == result["applied"]
    if result["reboot_required"]:
        assert case["params"].get("persistent_in_place") and not result["applied"]


def test_bad_input_table_is_large_enough():
    assert len(BAD) >= 15


@pytest.mark.parametrize("case", BAD, ids=case_ids(BAD))
def test_bad_input(case, mocker, capsys, make_sysfs, fake_roots):
    """Every bad input fails; no `rdma system set` runs unless the case allows one."""
    case = dict(case, failed=True)
    result, ran = run_rdma_case(case, mocker, capsys, make_sysfs, fake_roots)
    assert len(sets(ran)) == case.get("sets", 0), "sets run: %r" % (sets(ran),)
    if not sets(ran):
        assert result.get("changed", False) is False


GENERATIONS = [
    ("5.3", {}),
    ("5.14", {"copy_on_fork": True}),
    ("6.1", {"copy_on_fork": True}),
    ("6.7", {"privileged_qkey": False, "copy_on_fork": True}),
    ("6.13", {"privileged_qkey": False, "monitor": False, "copy_on_fork": True}),
]


@pytest.mark.parametrize("version, extra", GENERATIONS, ids=[gen[0] for gen in GENERATIONS])
@pytest.mark.parametrize("want, other", [("exclusive", "shared"), ("shared", "exclusive")])
def test_every_generation_sets_then_is_idempotent(version, extra, want, other, mocker, capsys, make_sysfs, fake_roots):
    """Whatever iproute2 prints, the first run sets and reads back, the second changes nothing."""
    sysfs_root = make_sysfs({"ib_core_netns_mode": "Y" if other == "shared" else "N"})
    params = {"netns": want, "sysfs_root": sysfs_root}
    first, ran = run_module(mocker, capsys, rdma_system.main, params, RDMA, [
        {"argv": SHOW, "out": read_fixture("rdma/sim_%s_show_%s.txt" % (version, other))},
        {"argv": ["/usr/sbin/rdma", "system", "set", "netns", want]},
        {"argv": SHOW, "out": read_fixture("rdma/sim_%s_show_%s.txt" % (version, want))},
    ])
    assert not first.get("failed"), first
    assert (first["changed"], first["applied"], first["reboot_required"]) == (True, True, False)
    assert first["netns"] == {"before": other, "after": want}
    assert first["rdma_system"] == dict(rdma.empty_settings(), netns_mode=want, source="rdma", **extra)
    assert first["cmds"] == ran and len(ran) == 3

    run_again(mocker, fake_roots)
    second, ran = run_module(mocker, capsys, rdma_system.main, params, RDMA, [
        {"argv": SHOW, "out": read_fixture("rdma/sim_%s_show_%s.txt" % (version, want))},
    ])
    assert (second["changed"], second["applied"], second["set_cmd"], ran) == (False, True, None, [SHOW])


def test_second_run_after_ebusy_is_still_unchanged(mocker, capsys, make_sysfs, fake_roots):
    """EBUSY, then the same task again before the reboot: changed false both times, reboot still required."""
    build_proc(fake_roots["proc"], {1: {"net": 4026531840}}, ["x"], fake_roots["run"])
    params = {"netns": "exclusive", "persistent_in_place": True, "sysfs_root": make_sysfs({"ib_core_netns_mode": "Y"})}
    calls = [
        {"argv": SHOW, "out": read_fixture("rdma/sim_6.1_show_shared.txt")},
        {"argv": ["/usr/sbin/rdma", "system", "set", "netns", "exclusive"], "rc": 1,
         "err": read_fixture("rdma/sim_6.1_set_exclusive_busy.stderr")},
    ]
    for run in range(2):
        if run:
            run_again(mocker, fake_roots)
        result, _ran = run_module(mocker, capsys, rdma_system.main, params, RDMA, calls)
        assert (result["changed"], result["applied"], result["reboot_required"]) == (False, False, True)
        assert result["_test_warnings"] == []


def test_argument_spec_is_a_fresh_copy():
    spec = rdma_system.argument_spec()
    assert spec == {
        "sysfs_root": {"type": "path", "default": "/sys"},
        "netns": {"type": "str", "required": True, "choices": ["shared", "exclusive"]},
        "runtime": {"type": "str", "default": "try", "choices": ["try", "require"]},
        "persistent_in_place": {"type": "bool", "default": False},
    }
    spec["netns"]["choices"].append("x")
    assert rdma_system.argument_spec()["netns"]["choices"] == ["shared", "exclusive"]


def test_sysfs_module_loaded(make_sysfs):
    from ansible_collections.fabric.infiniband.plugins.module_utils import sysfs

    assert sysfs.Sysfs(make_sysfs({"ib_core_netns_mode": "Y"})).module_loaded("ib_core")
    assert not sysfs.Sysfs(make_sysfs({})).module_loaded("ib_core")
