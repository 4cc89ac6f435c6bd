# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""plugins/action/gpudirect.py: which modules the role's one step runs on the node, in which order, for a first run, a run
that changes nothing, check mode and the preflight; the node is replaced (its answers are given, every run recorded)."""

from __future__ import annotations

import json

import pytest

from ansible_collections.fabric.infiniband.plugins.action import gpudirect as action_mod
from ansible_collections.fabric.infiniband.plugins.plugin_utils import gpudirect as gd
from ansible_collections.fabric.infiniband.plugins.plugin_utils.role_step import StepFailed
from ansible_collections.fabric.infiniband.tests.unit.plugins.action.step_harness import bare_step

BRIDGE = "0000:4a:03.0"
RUN = "ctl:1:1"


def _info(redirect=True, peermem_loaded=False, mode="passthrough"):
    reasons = ["GPU 0000:4e:00.0 and HCA 0000:4d:00.0 (mlx5_3): ACS ReqRedir+ CmpltRedir+ on bridge %s ..." % BRIDGE]
    return {
        "gpus": [{"pci_address": "0000:4e:00.0", "numa_node": 0, "path": ["0000:48:01.0", BRIDGE]}],
        "hcas": [{"pci_address": "0000:4d:00.0", "numa_node": 0, "rdma_device": "mlx5_3", "netdev": "ibp77s0",
                  "path": ["0000:48:01.0", "0000:4a:02.0"]}],
        "bridges": [{"pci_address": a} for a in ("0000:48:01.0", BRIDGE, "0000:4a:02.0")],
        "pairs": [{"gpu": "0000:4e:00.0", "hca": "0000:4d:00.0", "relation": "PIX", "common_bridge": "0000:48:01.0",
                   "acs_redirect": [BRIDGE] if redirect else [], "ok": not redirect, "reasons": reasons if redirect else []}],
        "iommu": {"enabled": True, "mode": mode},
        "peermem": {"installed": True, "loaded": peermem_loaded, "refcnt": 1 if peermem_loaded else None},
        "dmabuf": {"kernel": True, "driver": False, "usable": False},
        "nvidia_loaded": True,
        "reasons": reasons if redirect else [],
    }


UNIT, PROGRAM, MODULES_LOAD = "text of unit", "text of program", "# Ansible managed\nnvidia_peermem\n"


def _file(text, mode="0644"):
    return {"exists": True, "mode": mode, "uid": 0, "gid": 0, "content": text}


def _files(conf=None, unit=False, modules_load=False, pending=None, setpci=True):
    """The role's files as gpudirect_info reads them: the boot-time list ``conf`` (text), the unit and its program as the
    role writes them, the boot file of nvidia_peermem, the pending record's entries."""
    files = dict((path, {"exists": False}) for path in gd.FILES)
    if conf is not None:
        files[gd.ACS_CONF_PATH] = _file(conf)
    if unit:
        files[gd.ACS_UNIT_PATH] = _file(UNIT)
        files[gd.ACS_PROGRAM_PATH] = _file(PROGRAM, "0755")
        files[gd.ACS_UNIT_LINK] = {"exists": True, "mode": "0777", "uid": 0, "gid": 0, "content": None}
    if modules_load:
        files[gd.MODULES_LOAD_PATH] = _file(MODULES_LOAD)
    if pending is not None:
        files[gd.PENDING_PATH] = _file(json.dumps({"version": 1, "entries": pending}))
    if setpci:
        files["/usr/bin/setpci"] = _file(None, "0755")
    return files


def _step(settings, info, files=None, preflight=False, check_mode=False):
    """The step with ``settings`` on a node that answers ``info`` (gpudirect_info, its files ``files``). Returns the module
    runs (name, the argument of interest) and the action."""
    action = bare_step(action_mod.ActionModule, {"inventory_hostname": "node01"}, preflight=preflight, check_mode=check_mode,
                       run_id=RUN)
    action.settings = dict(settings)
    ran = []

    def module(name, args, **kwargs):
        ran.append((name, args.get("state") or args.get("argv") or args.get("path")))
        if name == "gpudirect_info":
            assert args == {"files": list(gd.FILES)}
            return dict(info, files=files if files is not None else _files())
        if name == "pending_action":
            return {"changed": True, "stuck": False}
        return {"changed": True}

    def act(name, args, what, variables=None):
        ran.append((name, args.get("dest") or args.get("name")))
        return {"changed": True}

    def render(name, variables):
        if name == "gpudirect-acs.conf.j2":
            return "".join("%s %s\n" % (bridge, gd.ACS_VALUE) for bridge in variables["__gpudirect_acs_boot"])
        return MODULES_LOAD if name == "modules-load.conf.j2" else "grub text"

    action.module = module
    action.run_action = act
    action._render = render
    action._file = lambda name: UNIT if name == gd.ACS_UNIT else PROGRAM
    # the variable of the host, as set_fact made it (outside a task here)
    action.register_host_variables = lambda variables, layer: action._returns.update(registered=variables)
    action.step()
    return ran, action


def test_preflight_runs_nothing_on_the_node():
    ran, action = _step({"gpudirect_allow_acs_change": True}, _info(), preflight=True)
    assert ran == [] and action._out_facts == {}


def test_without_consent():
    ran, action = _step({}, _info(), _files(pending={}))
    assert ran == [
        ("gpudirect_info", None),
        ("ansible.builtin.command", ["modprobe", "nvidia_peermem"]),
        ("ansible.legacy.template", gd.MODULES_LOAD_PATH),
    ]
    report = action._out_facts["gpudirect_report"]
    assert not report["ready"] and report["changes"] == ["loaded nvidia_peermem"]
    assert report["text"].startswith("GPUDirect RDMA on node01: NOT READY")
    assert action._returns["msg"] == report["text"]
    assert action._returns["registered"] == {"gpudirect_report": report}


def test_consent_taken_back_removes_what_is_there():
    files = _files(conf="%s 0000:000c\n" % BRIDGE, unit=True, modules_load=True, pending={"gpudirect": {}})
    files[gd.GRUB_PATH] = _file("grub text")
    ran, action = _step({"gpudirect_path": "none"}, _info(peermem_loaded=True), files)
    assert ran == [
        ("gpudirect_info", None),
        ("ansible.builtin.file", "absent"),
        ("boot_unit", "absent"),
        ("ansible.builtin.file", "absent"),
        # neither GRUB tool found (the replaced node answers no stat): nothing regenerated
        ("ansible.builtin.stat", "/usr/sbin/update-grub"),
        ("ansible.builtin.stat", "/usr/sbin/grub2-mkconfig"),
        ("pending_action", "absent"),
    ]
    notes = action._out_facts["gpudirect_report"]["notes"]
    assert notes == [gd.NOTE_PEERMEM % 1, gd.NOTE_ACS, gd.NOTE_GRUB]


def test_first_run_with_acs_consent():
    ran, action = _step({"gpudirect_allow_acs_change": True}, _info(), _files(setpci=False))
    assert ran == [
        ("gpudirect_info", None),
        ("ansible.legacy.package", ["pciutils"]),
        ("ansible.builtin.command", ["modprobe", "nvidia_peermem"]),
        ("ansible.legacy.template", gd.MODULES_LOAD_PATH),
        ("ansible.builtin.command", ["setpci", "-s", BRIDGE, "ECAP_ACS+0x6.w=0000:000c"]),
        ("boot_unit", None),
    ]
    assert action._out_facts["gpudirect_report"]["ready"]
    assert action._changed


def test_noop_with_acs_consent_runs_gpudirect_info_alone():
    files = _files(conf="%s 0000:000c\n" % BRIDGE, unit=True, modules_load=True, pending={"sriov": {}})
    ran, action = _step({"gpudirect_allow_acs_change": True}, _info(redirect=False, peermem_loaded=True), files)
    assert ran == [("gpudirect_info", None)]
    report = action._out_facts["gpudirect_report"]
    assert report["ready"] and report["changes"] == [] and report["acs"]["cleared_at_boot"] == [BRIDGE]
    assert not action._changed


def test_noop_without_consent_runs_gpudirect_info_alone():
    ran, action = _step({}, _info(peermem_loaded=True), _files(modules_load=True))
    assert ran == [("gpudirect_info", None)]
    assert not action._changed


def test_a_file_that_differs_is_written_again():
    files = _files(conf="%s 0000:000c\n" % BRIDGE, unit=True, modules_load=True)
    files[gd.ACS_PROGRAM_PATH]["mode"] = "0644"
    files[gd.MODULES_LOAD_PATH]["content"] = "nvidia_peermem\n"
    ran, _action = _step({"gpudirect_allow_acs_change": True}, _info(redirect=False, peermem_loaded=True), files)
    assert ran == [("gpudirect_info", None), ("ansible.legacy.template", gd.MODULES_LOAD_PATH), ("boot_unit", None)]


def test_check_mode_runs_no_command():
    ran, action = _step({"gpudirect_allow_acs_change": True}, _info(), check_mode=True)
    assert not [name for name, arg in ran if name == "ansible.builtin.command"]
    assert action._changed
    assert "(check mode: would be)" in action._out_facts["gpudirect_report"]["text"]


def test_kernel_args_with_consent_write_the_drop_in_and_record_the_reboot():
    ran, action = _step({"gpudirect_allow_kernel_args": True}, _info(redirect=False, peermem_loaded=True, mode="translated"))
    assert ("ansible.builtin.file", "directory") in ran
    assert ("ansible.legacy.template", gd.GRUB_PATH) in ran
    assert ran[-1] == ("pending_action", "present")
    report = action._out_facts["gpudirect_report"]
    assert report["reboot_pending"] and report["changes"] == [gd.CHANGE_IOMMU]


def test_required_fails_a_node_that_is_not_ready_after_publishing_its_report():
    with pytest.raises(StepFailed, match="node01 is not ready for GPUDirect RDMA: GPU 0000:4e:00.0"):
        _step({"gpudirect_required": True}, _info())
