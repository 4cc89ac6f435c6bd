# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""pending_action end to end through AnsibleModule, on a record file under tmp_path."""

from __future__ import annotations

import json

import pytest

from ansible.module_utils.testing import patch_module_args

from ansible_collections.fabric.infiniband.plugins.module_utils import pending
from ansible_collections.fabric.infiniband.plugins.modules import pending_action


def run(capsys, monkeypatch, boot="boot-a:1", check=False, diff=False, **params):
    monkeypatch.setattr(pending, "boot_identity", lambda proc="/proc": boot)
    args = dict(params)
    if check:
        args["_ansible_check_mode"] = True
    if diff:
        args["_ansible_diff"] = True
    with patch_module_args(args):
        with pytest.raises(SystemExit):
            pending_action.main()
    return json.loads(capsys.readouterr().out)


@pytest.fixture
def path(tmp_path):
    return str(tmp_path / "state" / "pending.json")


def test_records_once_then_reports_no_change(capsys, monkeypatch, path):
    first = run(capsys, monkeypatch, name="link_type", reason="P1 IB at next boot", details={"devices": ["0000:3b:00.0"]}, path=path)
    assert first["changed"] is True
    assert first["action"] == "reboot"
    entry = first["entries"]["link_type"]
    assert entry["boot"] == "boot-a:1" and entry["booted_since"] is False and entry["details"] == {"devices": ["0000:3b:00.0"]}
    with open(path) as handle:
        assert json.load(handle)["entries"]["link_type"]["reason"] == "P1 IB at next boot"
    again = run(capsys, monkeypatch, name="link_type", reason="P1 IB at next boot", details={"devices": ["0000:3b:00.0"]}, path=path)
    assert again["changed"] is False


def test_after_a_boot_the_entry_keeps_its_first_boot(capsys, monkeypatch, path):
    run(capsys, monkeypatch, name="sriov", reason="first", path=path)
    later = run(capsys, monkeypatch, boot="boot-b:7", name="sriov", reason="still", path=path)
    entry = later["entries"]["sriov"]
    assert later["changed"] is True and entry["reason"] == "still"
    assert entry["boot"] == "boot-a:1" and entry["booted_since"] is True


def test_a_stronger_action_restarts_the_clock(capsys, monkeypatch, path):
    run(capsys, monkeypatch, name="link_type", path=path)
    escalated = run(capsys, monkeypatch, boot="boot-b:7", name="link_type", action="power_cycle", path=path)
    entry = escalated["entries"]["link_type"]
    assert escalated["changed"] is True and entry["action"] == "power_cycle"
    assert entry["boot"] == "boot-b:7" and entry["booted_since"] is False


def test_an_action_is_never_weakened(capsys, monkeypatch, path):
    run(capsys, monkeypatch, name="link_type", action="power_cycle", path=path)
    again = run(capsys, monkeypatch, name="link_type", action="reboot", path=path)
    assert again["changed"] is False and again["entries"]["link_type"]["action"] == "power_cycle"


def test_strongest_action_over_entries(capsys, monkeypatch, path):
    run(capsys, monkeypatch, name="a", action="fw_reset", path=path)
    run(capsys, monkeypatch, name="b", action="reboot", path=path)
    assert run(capsys, monkeypatch, name="c", action="fw_reset", path=path)["action"] == "reboot"


def test_absent_removes_only_its_entry(capsys, monkeypatch, path):
    run(capsys, monkeypatch, name="a", path=path)
    run(capsys, monkeypatch, name="b", path=path)
    result = run(capsys, monkeypatch, name="a", state="absent", path=path)
    assert result["changed"] is True and list(result["entries"]) == ["b"]
    assert run(capsys, monkeypatch, name="a", state="absent", path=path)["changed"] is False


def test_check_mode_writes_nothing_and_diff_shows_the_change(capsys, monkeypatch, path):
    result = run(capsys, monkeypatch, check=True, diff=True, name="link_type", path=path)
    assert result["changed"] is True
    assert result["diff"]["before"] == {"entries": {}}
    assert list(result["diff"]["after"]["entries"]) == ["link_type"]
    with pytest.raises(FileNotFoundError):
        open(path)


def test_damaged_record_fails_with_what_to_do(capsys, monkeypatch, tmp_path):
    broken = tmp_path / "pending.json"
    broken.write_text('["not a record"]')
    result = run(capsys, monkeypatch, name="x", path=str(broken))
    assert result["failed"] is True and "Move it away" in result["msg"] and str(broken) in result["msg"]


def test_unknown_action_is_refused_before_anything(capsys, monkeypatch, path):
    result = run(capsys, monkeypatch, name="x", action="kexec", path=path)
    assert result["failed"] is True and "action" in result["msg"] and "power_cycle" in result["msg"]


def test_boot_identity_changes_with_pid1_start(tmp_path):
    (tmp_path / "sys" / "kernel" / "random").mkdir(parents=True)
    (tmp_path / "sys" / "kernel" / "random" / "boot_id").write_text("8c7e0d5e\n")
    (tmp_path / "1").mkdir()
    fields = ["S"] + ["0"] * 18 + ["4242"] + ["0"] * 10
    (tmp_path / "1" / "stat").write_text("1 (systemd init) " + " ".join(fields) + "\n")
    assert pending.boot_identity(str(tmp_path)) == "8c7e0d5e:4242"
    fields[19] = "9999"
    (tmp_path / "1" / "stat").write_text("1 (systemd init) " + " ".join(fields) + "\n")
    assert pending.boot_identity(str(tmp_path)) == "8c7e0d5e:9999"


def test_escalates_once_a_boot_did_not_apply_the_change_then_gets_stuck(capsys, monkeypatch, path):
    first = run(capsys, monkeypatch, name="link_type", escalate_to="power_cycle", path=path)
    assert first["stuck"] is False and first["entries"]["link_type"]["action"] == "reboot"
    same_boot = run(capsys, monkeypatch, name="link_type", escalate_to="power_cycle", path=path)
    assert same_boot["changed"] is False and same_boot["stuck"] is False
    after_reboot = run(capsys, monkeypatch, boot="boot-b:7", name="link_type", escalate_to="power_cycle", path=path)
    entry = after_reboot["entries"]["link_type"]
    assert after_reboot["changed"] is True and entry["action"] == "power_cycle" and entry["boot"] == "boot-b:7"
    assert after_reboot["stuck"] is False
    after_cycle = run(capsys, monkeypatch, boot="boot-c:9", name="link_type", escalate_to="power_cycle", path=path)
    assert after_cycle["changed"] is False and after_cycle["stuck"] is True


def test_without_escalation_a_boot_that_did_not_help_is_stuck(capsys, monkeypatch, path):
    run(capsys, monkeypatch, name="rdma_netns", path=path)
    again = run(capsys, monkeypatch, boot="boot-b:7", name="rdma_netns", path=path)
    assert again["stuck"] is True and again["entries"]["rdma_netns"]["action"] == "reboot"


def test_one_call_records_fails_when_stuck_and_clears(capsys, monkeypatch, path):
    """stuck_msg: the roles' single pending task records, fails on a boot that did not apply, and clears."""
    first = run(capsys, monkeypatch, name="rdma_netns", reason="mode exclusive at next boot", stuck_msg="Check the initramfs.",
                run_id="ctl:1:2", path=path)
    assert first["changed"] is True and "failed" not in first
    fact = first["ansible_facts"]["infiniband_pending"]
    assert fact["run_id"] == "ctl:1:2" and fact["next_action"] == "reboot" and fact["actionable"] == ["rdma_netns"]
    assert first["ansible_facts"]["infiniband_pending_stale"] is False
    stuck = run(capsys, monkeypatch, boot="boot-b:7", name="rdma_netns", reason="mode exclusive at next boot",
                stuck_msg="Check the initramfs.", path=path)
    assert stuck["failed"] is True and stuck["stuck"] is True
    assert stuck["msg"] == ("rdma_netns: the node has booted since this was recorded, by a reboot, and it still waits "
                            "(mode exclusive at next boot). Check the initramfs.")
    assert stuck["ansible_facts"]["infiniband_pending"]["tried"] == ["rdma_netns"]
    cleared = run(capsys, monkeypatch, boot="boot-b:7", name="rdma_netns", state="absent", stuck_msg="Check the initramfs.", path=path)
    assert cleared["changed"] is True and "failed" not in cleared
    assert cleared["ansible_facts"]["infiniband_pending"]["entries"] == {}


def test_check_mode_fact_is_the_record_as_it_would_be(capsys, monkeypatch, path):
    result = run(capsys, monkeypatch, check=True, name="sriov", path=path)
    assert result["changed"] is True
    assert list(result["ansible_facts"]["infiniband_pending"]["entries"]) == ["sriov"]
    with pytest.raises(IOError):
        open(path)
