# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""pending_info end to end through AnsibleModule, on record files under tmp_path."""

from __future__ import annotations

import json
import os

import pytest

from ansible.module_utils.testing import patch_module_args

from ansible_collections.fabric.infiniband.plugins.module_utils import pending
from ansible_collections.fabric.infiniband.plugins.modules import pending_info


def run(capsys, monkeypatch, boot="boot-b:7", check=False, **params):
    monkeypatch.setattr(pending, "boot_identity", lambda proc="/proc": boot)
    args = dict(params)
    if check:
        args["_ansible_check_mode"] = True
    with patch_module_args(args):
        with pytest.raises(SystemExit):
            pending_info.main()
    return json.loads(capsys.readouterr().out)


def write(path, entries):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as handle:
        json.dump({"version": 1, "entries": entries}, handle)


def entry(action, boot="boot-b:7", reason="why"):
    return {"action": action, "reason": reason, "details": {}, "since": 1700000000, "boot": boot}


@pytest.fixture
def path(tmp_path):
    return str(tmp_path / "state" / "pending.json")


def test_no_record_is_nothing_pending(capsys, monkeypatch, path):
    result = run(capsys, monkeypatch, path=path)
    assert result["changed"] is False
    assert result["entries"] == {} and result["action"] is None and result["next_action"] is None
    assert result["actionable"] == [] and result["tried"] == [] and result["fw_reset_sufficient"] is False
    assert not os.path.exists(path)


def test_entries_of_this_boot_decide_the_strongest_action(capsys, monkeypatch, path):
    write(path, {"link_type": entry("reboot", reason="P1 IB at next boot"), "sriov": entry("power_cycle"), "x": entry("fw_reset")})
    result = run(capsys, monkeypatch, path=path)
    assert result["action"] == "power_cycle" and result["next_action"] == "power_cycle"
    assert result["actionable"] == ["link_type", "sriov", "x"] and result["tried"] == []
    link = result["entries"]["link_type"]
    assert link["action"] == "reboot" and link["reason"] == "P1 IB at next boot" and link["booted_since"] is False
    assert result["boot"] == "boot-b:7"


def test_an_entry_recorded_before_this_boot_is_never_a_reason_to_act_again(capsys, monkeypatch, path):
    # link_type's reboot happened (another boot); rdma_netns was recorded in this boot.
    write(path, {"link_type": entry("power_cycle", boot="boot-a:1"), "rdma_netns": entry("reboot")})
    result = run(capsys, monkeypatch, path=path)
    assert result["entries"]["link_type"]["booted_since"] is True
    assert result["action"] == "power_cycle"
    assert result["next_action"] == "reboot"
    assert result["actionable"] == ["rdma_netns"] and result["tried"] == ["link_type"]


def test_only_tried_entries_leave_nothing_to_do(capsys, monkeypatch, path):
    write(path, {"sriov": entry("reboot", boot="boot-a:1")})
    result = run(capsys, monkeypatch, path=path)
    assert result["next_action"] is None and result["actionable"] == [] and result["tried"] == ["sriov"]


def test_a_firmware_reset_is_sufficient_only_when_every_entry_asks_for_one(capsys, monkeypatch, path):
    write(path, {"link_type": entry("fw_reset"), "other": entry("fw_reset")})
    assert run(capsys, monkeypatch, path=path)["fw_reset_sufficient"] is True
    write(path, {"link_type": entry("fw_reset"), "rdma_netns": entry("reboot")})
    result = run(capsys, monkeypatch, path=path)
    assert result["fw_reset_sufficient"] is False and result["next_action"] == "reboot"


def test_check_mode_reads_the_same_and_writes_nothing(capsys, monkeypatch, path):
    write(path, {"link_type": entry("reboot")})
    before = open(path).read()
    result = run(capsys, monkeypatch, check=True, path=path)
    assert result["changed"] is False and result["next_action"] == "reboot"
    assert open(path).read() == before


def test_a_damaged_record_fails_with_what_to_do(capsys, monkeypatch, path):
    os.makedirs(os.path.dirname(path))
    with open(path, "w") as handle:
        handle.write('{"entries": []}')
    result = run(capsys, monkeypatch, path=path)
    assert result["failed"] is True and "Move it away" in result["msg"]
