# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""node_facts end to end through AnsibleModule: dpkg-query and rpm mocked with the exact argv (the run_module
harness) and recorded outputs (module_utils/fixtures/pkgquery), the fact collectors replaced by the facts of a
platform (NODES) so that a case does not read the test machine. Cases in test_node_facts.yaml, bad inputs and
failed queries in test_node_facts_bad_inputs.yaml. test_facts_are_setups compares the real collectors, on the test
machine, with ansible.builtin.setup run there with the same subsets."""

from __future__ import annotations

import pytest

from ansible_collections.fabric.infiniband.plugins.modules import node_facts
from ansible_collections.fabric.infiniband.tests.unit.conftest import run_module
from ansible_collections.fabric.infiniband.tests.unit.plugins.modules.test_mlxconfig_module import assert_subset, case_ids, load_cases


TOOLS = {"dpkg-query": "/usr/bin/dpkg-query", "rpm": "/usr/bin/rpm"}
CASES = load_cases("test_node_facts.yaml")
BAD = load_cases("test_node_facts_bad_inputs.yaml")


def _distribution(name, version, release, family, path="/etc/os-release", variety=None):
    facts = {
        "ansible_distribution": name,
        "ansible_distribution_version": version,
        "ansible_distribution_major_version": version.split(".")[0],
        "ansible_distribution_release": release,
        "ansible_distribution_file_path": path,
        "ansible_distribution_file_variety": variety or name,
        "ansible_distribution_file_parsed": True,
        "ansible_os_family": family,
    }
    if "." in version:
        facts["ansible_distribution_minor_version"] = version.split(".")[1]
    return facts


def _platform(kernel, machine="x86_64"):
    return {
        "ansible_system": "Linux", "ansible_kernel": kernel, "ansible_kernel_version": "#1 SMP PREEMPT_DYNAMIC", "ansible_machine": machine,
        "ansible_architecture": machine, "ansible_userspace_architecture": machine, "ansible_userspace_bits": "64",
        "ansible_python_version": "3.11.2", "ansible_hostname": "node01", "ansible_nodename": "node01", "ansible_fqdn": "node01",
        "ansible_domain": "", "ansible_machine_id": "504a6b00c16e4135943e617ea47e00e4",
    }


# The facts of each subset, as setup returns them on each platform (the values the collectors give there).
NODES = {
    "debian12": {"distribution": _distribution("Debian", "12.11", "bookworm", "Debian"),
                 "platform": _platform("6.1.0-28-amd64"), "pkg_mgr": {"ansible_pkg_mgr": "apt"}},
    "debian13": {"distribution": _distribution("Debian", "13.2", "trixie", "Debian"),
                 "platform": _platform("6.12.57+deb13-amd64"), "pkg_mgr": {"ansible_pkg_mgr": "apt"}},
    "ubuntu2204": {"distribution": _distribution("Ubuntu", "22.04", "jammy", "Debian", variety="Debian"),
                   "platform": _platform("5.15.0-130-generic"), "pkg_mgr": {"ansible_pkg_mgr": "apt"}},
    "ubuntu2404": {"distribution": _distribution("Ubuntu", "24.04", "noble", "Debian", variety="Debian"),
                   "platform": _platform("6.8.0-51-generic"), "pkg_mgr": {"ansible_pkg_mgr": "apt"}},
    "ubuntu2404_arm": {"distribution": _distribution("Ubuntu", "24.04", "noble", "Debian", variety="Debian"),
                       "platform": _platform("6.8.0-1018-nvidia-64k", "aarch64"), "pkg_mgr": {"ansible_pkg_mgr": "apt"}},
    "rhel9": {"distribution": _distribution("RedHat", "9.6", "Plow", "RedHat", "/etc/redhat-release"),
              "platform": _platform("5.14.0-570.12.1.el9_6.x86_64"), "pkg_mgr": {"ansible_pkg_mgr": "dnf"}},
    "rocky8": {"distribution": _distribution("Rocky", "8.10", "Green Obsidian", "RedHat", "/etc/redhat-release", "RedHat"),
               "platform": _platform("4.18.0-553.el8_10.x86_64"), "pkg_mgr": {"ansible_pkg_mgr": "dnf"}},
    "sles15": {"distribution": _distribution("SLES", "15.6", "6", "Suse", variety="SUSE"),
               "platform": _platform("6.4.0-150600.23.25-default"), "pkg_mgr": {"ansible_pkg_mgr": "zypper"}},
    "gentoo": {"distribution": _distribution("Gentoo", "2.17", "n/a", "Gentoo", "/etc/gentoo-release"),
               "platform": _platform("6.6.62-gentoo"), "pkg_mgr": {"ansible_pkg_mgr": "portage"}},
}


@pytest.fixture
def collected(mocker):
    """The fake collectors: ``collected.node`` says which platform; ``collected.calls`` records the subsets asked."""
    class Collected(object):
        node = None
        calls = []

    def gather(module, subsets):
        Collected.calls.append(list(subsets))
        facts = {}
        for subset in subsets:
            facts.update(NODES[Collected.node][subset])
        return facts

    Collected.calls = []
    mocker.patch.object(node_facts, "gather", gather)
    return Collected


def run_case(case, mocker, capsys, collected):
    collected.node = case["node"]
    flags = case.get("flags") or {}
    result, ran = run_module(mocker, capsys, node_facts.main, case.get("params") or {}, case.get("tools", TOOLS),
                             case.get("run_command") or [], check_mode=flags.get("check", False))
    assert bool(result.get("failed")) == bool(case.get("failed")), result
    for part in case.get("msg") or []:
        assert part in result.get("msg", ""), "%r not in msg %r" % (part, result.get("msg"))
    if "expect" in case:
        assert_subset(case["expect"], result)
    for part in case.get("warnings") or []:
        assert any(part in warning for warning in result["_test_warnings"]), (part, result["_test_warnings"])
    if "warnings" not in case:
        assert result["_test_warnings"] == [], result["_test_warnings"]
    # the subsets collected: all three for the facts, the distribution alone to choose the tool, else none
    expected = [case["subsets"]] if case.get("subsets") else []
    assert collected.calls == expected
    return result, ran


@pytest.mark.parametrize("case", CASES, ids=case_ids(CASES))
def test_case(case, mocker, capsys, collected):
    result, ran = run_case(case, mocker, capsys, collected)
    params = case.get("params") or {}
    assert result["changed"] is False
    assert result["cmd"] == (ran[0] if ran else [])
    assert len(ran) <= 1
    if params.get("facts", True):
        # every fact of the three subsets, nothing else (not setup's gather_subset and module_setup)
        node = NODES[case["node"]]
        assert result["ansible_facts"] == dict(node["distribution"], **dict(node["platform"], **node["pkg_mgr"]))
    else:
        assert "ansible_facts" not in result
    asked = params.get("packages") or []
    assert set(result["packages"]) <= set(asked)
    assert list(result["packages"]) == [name for name in dict.fromkeys(asked) if name in result["packages"]]


def test_bad_input_table_is_large_enough():
    assert len(BAD) >= 12


@pytest.mark.parametrize("case", BAD, ids=case_ids(BAD))
def test_bad_input(case, mocker, capsys, collected):
    """Every bad input fails before any command and any fact collection; a failed query reports its command."""
    case = dict(case, failed=True)
    result, ran = run_case(case, mocker, capsys, collected)
    assert result.get("changed", False) is False
    assert "ansible_facts" not in result
    if ran:
        assert result["cmd"] == ran[0] and result["rc"] == case["run_command"][0].get("rc", 0)
        assert "stdout" in result and "stderr" in result


def test_facts_are_setups(mocker, capsys):
    """On the test machine, the real collectors give what setup gives with gather_subset [distribution, platform, pkg_mgr],
    less setup's gather_subset and module_setup."""
    from ansible.modules import setup

    ours, ran = run_module(mocker, capsys, node_facts.main, {}, {}, [])
    assert ran == [] and not ours.get("failed"), ours
    mocker.stopall()
    theirs, _ran = run_module(mocker, capsys, setup.main, {"gather_subset": ["!all", "!min", "distribution", "platform", "pkg_mgr"]}, {}, [])
    facts = dict(theirs["ansible_facts"])
    assert facts.pop("gather_subset") == ["!all", "!min", "distribution", "platform", "pkg_mgr"]
    assert facts.pop("module_setup") is True
    assert ours["ansible_facts"] == facts
    for key in ("distribution", "distribution_version", "distribution_major_version", "distribution_release", "os_family",
                "architecture", "kernel", "pkg_mgr"):
        assert "ansible_" + key in facts


def test_distribution_alone_chooses_the_tool(mocker, capsys):
    """facts: false collects the distribution subset only (the real collector), for os_family, and returns no facts."""
    gather = node_facts.gather
    seen = []

    def spy(module, subsets):
        facts = gather(module, subsets)
        seen.append((list(subsets), facts))
        return facts

    mocker.patch.object(node_facts, "gather", spy)
    # no tool on the (mocked) PATH: on the test machine's family the module stops there, on another it warns
    result, ran = run_module(mocker, capsys, node_facts.main, {"facts": False, "packages": ["rdma-core"]}, {}, [])
    assert ran == [] and "ansible_facts" not in result
    assert len(seen) == 1 and seen[0][0] == ["distribution"]
    assert "ansible_os_family" in seen[0][1] and "ansible_kernel" not in seen[0][1]


def test_argument_spec_is_a_fresh_copy():
    spec = node_facts.argument_spec()
    assert spec == {"facts": {"type": "bool", "default": True}, "packages": {"type": "list", "elements": "str", "default": []}}
    spec["packages"]["default"].append("x")
    assert node_facts.argument_spec()["packages"]["default"] == []
