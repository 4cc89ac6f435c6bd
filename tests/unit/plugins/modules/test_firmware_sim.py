# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""firmware_info and firmware_burn against the lab simulator's flint/mstflint (lab/fabricsim/flint.py): the module
runs its commands, the simulator answers them, so both sides' formats have to agree. A burn, its pending state,
the activation by a power-on, a burn failing half-way and its rerun, and the call counts of a no-op."""

from __future__ import annotations

import io
import json
import os
import sys

import pytest
from ansible.module_utils import basic
from ansible.module_utils.testing import patch_module_args

from ansible_collections.fabric.infiniband.plugins.modules import firmware_burn, firmware_info


LAB = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..", "lab"))
DEV = "0000:3b:00.0"
NODE = {
    "hostname": "node01",
    "tools": {"firmware": "mstflint", "firmware_version": "4.21.0", "iproute2": "6.1.0", "ofed": False},
    "kernel": {"lockdown": "none", "netns_mode": "shared"},
    "fabric": {"switch": "Switch1", "ports": {DEV: 1, "0000:3b:00.1": 2}},
    "adapters": [{"model": "ConnectX-6 VPI", "pci_address": DEV, "node_guid": "0x0c42a10300aa0010"}],
}


@pytest.fixture
def sim(tmp_path, monkeypatch):
    if LAB not in sys.path:
        sys.path.insert(0, LAB)
    from fabricsim import cli, state  # pylint: disable=import-outside-toplevel
    (tmp_path / "root" / "etc" / "modprobe.d").mkdir(parents=True)
    (tmp_path / "root" / "run" / "netns").mkdir(parents=True)
    monkeypatch.setenv("FABRICSIM_ROOT", str(tmp_path / "root"))
    monkeypatch.setenv("FABRICSIM_STATE", str(tmp_path / "state.json"))
    monkeypatch.setenv("FABRICSIM_LOG", str(tmp_path / "calls.jsonl"))
    (tmp_path / "state.json").write_text(json.dumps(NODE))
    image = tmp_path / "fw.bin"
    image.write_text(json.dumps({"fabricsim_firmware_image": 1, "psid": "MT_0000000223", "version": "20.40.1000",
                                 "device_id": 0x101B}))
    return {"cli": cli, "state": state, "image": str(image), "log": tmp_path / "calls.jsonl", "dir": tmp_path}


def run(mocker, capsys, sim, main, params, check_mode=False):
    def get_bin_path(self, arg, required=False, opt_dirs=None):
        return "/usr/bin/" + arg if arg in ("mstflint",) else None

    def run_command(self, args, **kwargs):
        assert isinstance(args, list) and kwargs.get("environ_update") == {"LC_ALL": "C", "LANGUAGE": "C"}
        out, err = io.StringIO(), io.StringIO()
        rc = sim["cli"].main(os.path.basename(args[0]), args[1:], stdout=out, stderr=err)
        return rc, out.getvalue(), err.getvalue()

    mocker.patch.object(basic.AnsibleModule, "get_bin_path", get_bin_path)
    mocker.patch.object(basic.AnsibleModule, "run_command", run_command)
    args = dict(params, sysfs_root=str(sim["dir"] / "no-sysfs"))
    if check_mode:
        args["_ansible_check_mode"] = True
    with patch_module_args(args):
        with pytest.raises(SystemExit):
            main()
    return json.loads(capsys.readouterr().out)


def calls(sim):
    if not sim["log"].exists():
        return []
    return [(c["kind"], c["rc"]) for c in map(json.loads, sim["log"].read_text().splitlines()) if c["tool"] == "mstflint"]


def test_burn_pending_activation_and_noop(mocker, capsys, sim):
    params = {"device": DEV, "image": sim["image"]}
    result = run(mocker, capsys, sim, firmware_burn.main, params, check_mode=True)
    assert result["changed"] is True and calls(sim) == [("query", 0), ("read", 0)]
    result = run(mocker, capsys, sim, firmware_burn.main, params)
    assert (result["changed"], result["previous_version"], result["version"], result["activation"]) == \
        (True, "20.39.1002", "20.40.1000", "firmware reset")
    assert calls(sim)[2:] == [("query", 0), ("read", 0), ("write", 0), ("query", 0)]
    info = run(mocker, capsys, sim, firmware_info.main, {"device": DEV})["devices"][0]
    assert (info["running_version"], info["pending_version"], info["pending"]) == ("20.39.1002", "20.40.1000", True)
    # the same image again: no burn, still pending
    result = run(mocker, capsys, sim, firmware_burn.main, params)
    assert result["changed"] is False and result["pending"] is True
    # a power-on activates it; then a no-op is two queries and no write
    st = sim["state"].load()
    sim["state"].power_on(st)
    sim["state"].save(st)
    before = len(calls(sim))
    result = run(mocker, capsys, sim, firmware_burn.main, params)
    assert (result["changed"], result["pending"], result["activation"]) == (False, False, None)
    assert calls(sim)[before:] == [("query", 0), ("read", 0)]


def test_burn_failing_half_way_then_rerun(mocker, capsys, sim):
    st = sim["state"].load()
    sim["state"].set_fault(st, "firmware_burn", 1)
    sim["state"].save(st)
    params = {"device": DEV, "image": sim["image"]}
    result = run(mocker, capsys, sim, firmware_burn.main, params)
    assert result.get("failed") and "the flash keeps the image it had" in result["msg"]
    info = run(mocker, capsys, sim, firmware_info.main, {"device": DEV})["devices"][0]
    assert (info["flash_version"], info["pending"]) == ("20.39.1002", False)
    result = run(mocker, capsys, sim, firmware_burn.main, params)
    assert result["changed"] is True and result["pending"] is True


def test_psid_mismatch_and_lockdown(mocker, capsys, sim):
    other = sim["dir"] / "dell.bin"
    other.write_text(json.dumps({"fabricsim_firmware_image": 1, "psid": "DEL0000000016", "version": "20.40.1000"}))
    result = run(mocker, capsys, sim, firmware_burn.main, {"device": DEV, "image": str(other)})
    assert result.get("failed") and "allow_psid_change=true" in result["msg"]
    assert ("write", 0) not in calls(sim) and ("write", 1) not in calls(sim)
    result = run(mocker, capsys, sim, firmware_burn.main, {"device": DEV, "image": str(other), "allow_psid_change": True})
    assert result["changed"] is True and result["psid_changed"] is True
    desc = dict(NODE, kernel={"lockdown": "integrity", "netns_mode": "shared"})
    (sim["dir"] / "state.json").write_text(json.dumps(desc))
    result = run(mocker, capsys, sim, firmware_info.main, {"device": DEV})
    assert result.get("failed") and "cannot open device 0000:3b:00.0" in result["msg"]


def test_old_mft_query_with_the_running_version_alone(mocker, capsys, sim):
    """Issue 33, class 8: old MFT builds print only ``FW Version(Running):``; the version is read, no failed
    query, and a burn of the same version is a no-op."""
    desc = dict(NODE, tools=dict(NODE["tools"], flint_query="running_only"))
    (sim["dir"] / "state.json").write_text(json.dumps(desc))
    result = run(mocker, capsys, sim, firmware_info.main, {"device": DEV})
    assert not result.get("failed"), result.get("msg")
    info = result["devices"][0]
    assert (info["running_version"], info["flash_version"], info["pending"]) == ("20.39.1002", "20.39.1002", False)
    same = sim["dir"] / "same.bin"
    same.write_text(json.dumps({"fabricsim_firmware_image": 1, "psid": "MT_0000000223", "version": "20.39.1002"}))
    result = run(mocker, capsys, sim, firmware_burn.main, {"device": DEV, "image": str(same)})
    assert (result.get("failed"), result["changed"]) == (None, False)
