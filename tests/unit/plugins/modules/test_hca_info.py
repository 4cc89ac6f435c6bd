# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""hca_info end to end through AnsibleModule: a fake sysfs tree, the tools
found on PATH mocked through get_bin_path, run_command mocked with the exact
argv expected (cases in test_hca_info.yaml)."""

from __future__ import annotations

import os

import pytest
import yaml


from ansible_collections.fabric.infiniband.plugins.modules import hca_info
from ansible_collections.fabric.infiniband.tests.unit import conftest
from ansible_collections.fabric.infiniband.tests.unit.conftest import read_fixture


with open(os.path.join(os.path.dirname(__file__), "test_hca_info.yaml")) as _handle:
    CASES = yaml.safe_load(_handle)


def assert_subset(expected, actual, where="result"):
    """Dicts match on the expected keys; lists item by item with equal length."""
    if isinstance(expected, dict):
        assert isinstance(actual, dict), "%s: expected a dict, got %r" % (where, actual)
        for key, value in expected.items():
            assert key in actual, "%s: missing key %r" % (where, key)
            assert_subset(value, actual[key], "%s.%s" % (where, key))
    elif isinstance(expected, list):
        assert isinstance(actual, list), "%s: expected a list, got %r" % (where, actual)
        assert len(actual) == len(expected), "%s: %d items, expected %d: %r" % (where, len(actual), len(expected), actual)
        for index, (exp, act) in enumerate(zip(expected, actual)):
            assert_subset(exp, act, "%s[%d]" % (where, index))
    else:
        assert actual == expected and type(actual) is type(expected), "%s: %r != %r" % (where, actual, expected)


def run_module(mocker, capsys, params, tools, calls, check_mode=False):
    """Run hca_info.main() through the shared harness; return (result dict, commands run)."""
    return conftest.run_module(mocker, capsys, hca_info.main, params, tools, calls, check_mode=check_mode)


@pytest.mark.parametrize("case", CASES, ids=[case["id"] for case in CASES])
def test_case(case, mocker, capsys, make_sysfs):
    params = dict(case.get("params") or {})
    if case.get("sysfs") is not None:
        params.setdefault("sysfs_root", make_sysfs(case["sysfs"]))
    result, ran = run_module(mocker, capsys, params, case.get("tools") or {}, case.get("run_command") or [],
                             check_mode=(case.get("flags") or {}).get("check", False))
    assert bool(result.get("failed")) == bool(case.get("failed")), result
    assert len(ran) <= 1
    assert_subset(case["expect"], result)
    if "warnings" in case:
        assert result["_test_warnings"] == case["warnings"]


def test_argument_spec_is_a_fresh_copy():
    spec = hca_info.argument_spec()
    assert spec == {"sysfs_root": {"type": "path", "default": "/sys"}, "devices": {"type": "list", "elements": "str"},
                    "pending": {"type": "bool", "default": False},
                    "pending_path": {"type": "path", "default": "/var/lib/fabric-infiniband/pending.json"},
                    "pending_writable": {"type": "bool", "default": False},
                    "pending_fail_on_tried": {"type": "bool", "default": False},
                    "run_id": {"type": "str", "default": ""}}
    spec["sysfs_root"]["default"] = "/elsewhere"
    assert hca_info.argument_spec()["sysfs_root"]["default"] == "/sys"


def _ibstat(text):
    """Minimal reading of ibstat output for cross-checks: CA and port keys."""
    ca, ports, port = {}, {}, None
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("Port ") and stripped.endswith(":"):
            port = int(stripped[5:-1])
            ports[port] = {}
        elif ":" in stripped:
            key, value = [part.strip() for part in stripped.split(":", 1)]
            (ports[port] if port else ca)[key] = value
    return ca, ports


@pytest.mark.parametrize("tree, fixture, device", [
    ("sysfs_cx7_single.yml", "ibstat_cx7.txt", "mlx5_0"),
    ("sysfs_mixed.yml", "ibstat_cx3_port1.txt", "mlx4_0"),
    ("sysfs_mixed.yml", "ibstat_roce.txt", "rdma0"),
])
def test_agrees_with_recorded_ibstat(tree, fixture, device, mocker, capsys, make_sysfs):
    """GUIDs, LIDs, rates and states read the way ibstat shows them."""
    result, _ran = run_module(mocker, capsys, {"sysfs_root": make_sysfs(tree)}, {}, [])
    hca = [h for h in result["hcas"] if h["rdma_device"] == device][0]
    ca, ports = _ibstat(read_fixture(fixture))
    assert hca["hca_type"] == ca["CA type"]
    assert hca["firmware_version"] == ca["Firmware version"]
    assert hca["node_guid"] == ca["Node GUID"]
    assert hca["sys_image_guid"] == ca["System image GUID"]
    for number, stat in ports.items():
        port = [p for p in hca["ports"] if p["port"] == number][0]
        assert port["port_guid"] == stat["Port GUID"]
        assert port["lid"] == int(stat["Base lid"])
        assert port["sm_lid"] == int(stat["SM lid"])
        assert port["lmc"] == int(stat["LMC"])
        assert port["rate_gbps"] == int(stat["Rate"])
        assert port["link_layer"] == stat["Link layer"]
        assert port["physical_state"] == stat["Physical state"]
        assert port["state"].capitalize() == stat["State"]


def _rdma_call():
    return [{"argv": ["/usr/sbin/rdma", "-j", "system", "show"], "rc": 1, "err": "error: Protocol not supported\n"}]


def test_pending_is_read_in_the_same_run(mocker, capsys, make_sysfs, tmp_path, monkeypatch):
    """pending: true returns what pending_info returns for the same record, next to the adapters."""
    from ansible_collections.fabric.infiniband.plugins.module_utils import pending  # pylint: disable=import-outside-toplevel

    monkeypatch.setattr(pending, "boot_identity", lambda proc="/proc": "boot-b:7")
    record = tmp_path / "pending.json"
    record.write_text('{"version": 1, "entries": {"link_type": {"action": "reboot", "reason": "LINK_TYPE", "details": {},'
                      ' "since": 1700000000, "boot": "boot-a:3"}, "sriov": {"action": "power_cycle", "reason": "SR-IOV",'
                      ' "details": {}, "since": 1700000001, "boot": "boot-b:7"}}}')
    params = {"sysfs_root": make_sysfs({}), "pending": True, "pending_path": str(record)}
    result, ran = run_module(mocker, capsys, params, {"rdma": "/usr/sbin/rdma"}, _rdma_call())
    assert not result.get("failed") and len(ran) == 1 and result["hcas"] == []
    assert result["pending"] == {
        "entries": {
            "link_type": {"action": "reboot", "reason": "LINK_TYPE", "details": {}, "since": 1700000000, "boot": "boot-a:3",
                          "booted_since": True},
            "sriov": {"action": "power_cycle", "reason": "SR-IOV", "details": {}, "since": 1700000001, "boot": "boot-b:7",
                      "booted_since": False},
        },
        "action": "power_cycle", "next_action": "power_cycle", "actionable": ["sriov"], "tried": ["link_type"],
        "fw_reset_sufficient": False, "boot": "boot-b:7",
    }


TRIED = ('{"version": 1, "entries": {"link_type": {"action": "reboot", "reason": "LINK_TYPE_P1 IB(1)", "details": {},'
         ' "since": 1700000000, "boot": "boot-a:3"}, "sriov": {"action": "reboot", "reason": "SR-IOV",'
         ' "details": {}, "since": 1700000001, "boot": "boot-b:7"}}}')
THIS_BOOT = ('{"version": 1, "entries": {"sriov": {"action": "reboot", "reason": "SR-IOV", "details": {},'
             ' "since": 1700000001, "boot": "boot-b:7"}}}')


@pytest.mark.parametrize("record_text, fail_on_tried, fails", [(TRIED, True, True), (TRIED, False, False), (THIS_BOOT, True, False)])
def test_pending_fail_on_tried_names_each_entry_a_boot_did_not_apply(
        mocker, capsys, make_sysfs, tmp_path, monkeypatch, record_text, fail_on_tried, fails):
    """The boot-loop guard of report.yml: an entry recorded before this boot fails the read, with its reason; an
    entry of this boot does not, nor a read without the option."""
    from ansible_collections.fabric.infiniband.plugins.module_utils import pending  # pylint: disable=import-outside-toplevel

    monkeypatch.setattr(pending, "boot_identity", lambda proc="/proc": "boot-b:7")
    record = tmp_path / "pending.json"
    record.write_text(record_text)
    params = {"sysfs_root": make_sysfs({}), "pending": True, "pending_path": str(record), "pending_fail_on_tried": fail_on_tried}
    result, dummy = run_module(mocker, capsys, params, {"rdma": "/usr/sbin/rdma"}, _rdma_call())
    assert bool(result.get("failed")) is fails
    if fails:
        assert result["pending"]["tried"] == ["link_type"]
        assert "booted since" in result["msg"] and "link_type: LINK_TYPE_P1 IB(1)" in result["msg"]
        assert "SR-IOV" not in result["msg"] and "reboots.rst" in result["msg"]


def test_pending_absent_record_is_empty(mocker, capsys, make_sysfs, tmp_path):
    params = {"sysfs_root": make_sysfs({}), "pending": True, "pending_path": str(tmp_path / "none.json")}
    result, dummy = run_module(mocker, capsys, params, {"rdma": "/usr/sbin/rdma"}, _rdma_call())
    assert result["pending"]["entries"] == {} and result["pending"]["next_action"] is None


def test_pending_not_read_by_default(mocker, capsys, make_sysfs):
    result, dummy = run_module(mocker, capsys, {"sysfs_root": make_sysfs({})}, {"rdma": "/usr/sbin/rdma"}, _rdma_call())
    assert "pending" not in result


def test_pending_damaged_record_fails_naming_it(mocker, capsys, make_sysfs, tmp_path):
    record = tmp_path / "pending.json"
    record.write_text("[1, 2]")
    params = {"sysfs_root": make_sysfs({}), "pending": True, "pending_path": str(record)}
    result, dummy = run_module(mocker, capsys, params, {"rdma": "/usr/sbin/rdma"}, _rdma_call())
    assert result["failed"] and str(record) in result["msg"] and "Move it away" in result["msg"]


def test_pending_writable_fails_before_any_change_where_the_record_cannot_be_written(mocker, capsys, make_sysfs, tmp_path):
    """pending_writable: a file where the state directory should be (EEXIST/ENOTDIR for any user, root included)."""
    blocker = tmp_path / "state"
    blocker.write_text("not a directory")
    params = {"sysfs_root": make_sysfs({}), "pending": True, "pending_writable": True,
              "pending_path": str(blocker / "pending.json")}
    result, dummy = run_module(mocker, capsys, params, {"rdma": "/usr/sbin/rdma"}, _rdma_call())
    assert result["failed"] and "Cannot write the pending-action record %s" % (blocker / "pending.json") in result["msg"]
    assert blocker.read_text() == "not a directory"


def test_pending_writable_leaves_nothing_behind(mocker, capsys, make_sysfs, tmp_path):
    params = {"sysfs_root": make_sysfs({}), "pending": True, "pending_writable": True,
              "pending_path": str(tmp_path / "ok" / "pending.json")}
    result, dummy = run_module(mocker, capsys, params, {"rdma": "/usr/sbin/rdma"}, _rdma_call())
    assert not result.get("failed") and not (tmp_path / "ok").exists()


def test_facts_are_stamped_with_the_run_and_the_reading(mocker, capsys, make_sysfs, tmp_path):
    params = {"sysfs_root": make_sysfs({}), "pending": True, "pending_path": str(tmp_path / "none.json"), "run_id": "ctl:1:2"}
    result, dummy = run_module(mocker, capsys, params, {"rdma": "/usr/sbin/rdma"}, _rdma_call())
    facts = result["ansible_facts"]
    assert facts["infiniband_hca"]["run_id"] == "ctl:1:2" and facts["infiniband_hca"]["hcas"] == []
    assert isinstance(facts["infiniband_hca"]["read_at"], float) and facts["infiniband_hca"]["boot"]
    assert facts["infiniband_pending"]["run_id"] == "ctl:1:2" and facts["infiniband_pending"]["entries"] == {}
    assert facts["infiniband_hca_stale"] is False and facts["infiniband_pending_stale"] is False
