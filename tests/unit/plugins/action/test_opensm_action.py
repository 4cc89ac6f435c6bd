# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""plugins/action/opensm.py: what the role's step reads of the other hosts, which modules and actions it runs on the node, in
which order, for a first run, a run that changes nothing, check mode, the tags and the preflight; the node is replaced (its
answers are given, every run recorded)."""

from __future__ import annotations

import pytest

from ansible_collections.fabric.infiniband.plugins.action import opensm as action_mod
from ansible_collections.fabric.infiniband.plugins.plugin_utils.role_step import StepFailed
from ansible_collections.fabric.infiniband.tests.unit.plugins.action.step_harness import bare_step

RUN = "ctl:1:1"
SM1, SM2, C1, VF = "0xb8cef60300a10010", "0xb8cef60300a20020", "0xb8cef60300a30030", "0xb8cef60300a3f001"
GROUPS = {"all": ["sm1", "sm2", "c1"], "opensm": ["sm1", "sm2"], "compute": ["c1"]}
PARTITIONS = [{"name": "compute", "pkey": "0x0010", "members": ["compute"]},
              {"name": "storage", "pkey": "0x0020", "members": [{"host": "sm2", "membership": "full"}]}]


def hca(guid, run=RUN):
    return {"run_id": run, "hcas": [{"rdma_device": "mlx5_0", "is_vf": False,
                                     "ports": [{"port": 1, "link_layer": "InfiniBand", "port_guid": guid}]}]}


def _hostvars(sm2_hca=None, c1_hca=None):
    return {
        "sm1": {},
        "sm2": {"ansible_facts": {"infiniband_hca": sm2_hca} if sm2_hca else {}},
        "c1": {"ansible_facts": {"infiniband_hca": c1_hca} if c1_hca else {}, "sriov_vf_guids": [VF]},
    }


def _step(settings=None, own=None, hostvars=None, preflight=False, check_mode=False, written=(), installed=True, missing_dir=False,
          run_tags=None, skip_tags=None, ran=None):
    """The step on sm1 with ``settings`` (the role's defaults otherwise), its own reading ``own`` in the host's facts (read by
    the replaced hca_info otherwise), the other hosts' ``hostvars``; ``written``: the templates that change something.
    Returns the runs (name, the argument of interest) and the action."""
    action = bare_step(action_mod.ActionModule, {
        "inventory_hostname": "sm1", "groups": GROUPS, "hostvars": hostvars if hostvars is not None else _hostvars(),
        "ansible_run_tags": run_tags or ["all"], "ansible_skip_tags": skip_tags or []},
        facts={"infiniband_hca": own} if own else {}, preflight=preflight, check_mode=check_mode, run_id=RUN)
    action.settings = dict({"opensm_partitions": PARTITIONS}, **(settings or {}))
    ran = [] if ran is None else ran
    dirs = {"missing": missing_dir}

    def execute(module_name, module_args, task_vars):
        ran.append((module_name, module_args.get("packages") or module_args.get("name") or module_args.get("path")))
        if module_name == "fabric.infiniband.hca_info":
            assert module_args == {"run_id": RUN}
            return {"ansible_facts": {"infiniband_hca": hca(SM1)}}
        if module_name == "fabric.infiniband.node_facts":
            return {"packages": {"opensm": "3.3.23-2"} if installed else {}}
        if module_name == "ansible.builtin.file":
            dirs["missing"] = False
            return {"changed": True}
        return {"changed": module_name == "ansible.builtin.systemd_service" and not installed}

    def act(name, args, what, variables=None):
        ran.append((name, args.get("dest") or args.get("name")))
        action._ran.append(dict(module=name, label=what, changed=False, failed=False))
        if name == "ansible.legacy.template" and dirs["missing"]:
            raise StepFailed("%s: Destination directory /etc/opensm does not exist" % what)
        if name == "ansible.legacy.template":
            assert variables["__opensm_priority"] == 15 and variables["__opensm_guids"] == [SM1]
            assert "compute=0x0010 : %s, %s ;" % (C1, VF) in variables["__opensm_partitions"]["content"]
        changed = name == "ansible.legacy.package" or args.get("dest") in written
        if changed:
            action.changed()
        return {"changed": changed}

    action._execute_module = execute
    action.run_action = act
    action.step()
    return ran, action


def test_preflight_reads_nothing_and_names_the_members_to_read():
    ran, action = _step(preflight=True, hostvars=_hostvars(c1_hca=hca(C1)))
    assert ran == []
    assert action._returns == {"read": ["sm2"], "run_id": RUN, "members": ["c1", "sm2"]}
    # a reading of another run is no reading of this one
    ran, action = _step(preflight=True, hostvars=_hostvars(sm2_hca=hca(SM2), c1_hca=hca(C1, run="old:1:0")))
    assert action._returns["read"] == ["c1"]


def test_preflight_refuses_without_reading_the_node():
    with pytest.raises(StepFailed, match=r"^opensm_priority: 16 is not accepted; accepted: 0 to 15, or null\. .*"
                                         r"opensm_partitions\[0\] \(x\)\.pkey: '0x8001'.* Nothing was changed\.$"):
        _step({"opensm_priority": 16, "opensm_partitions": [{"name": "x", "pkey": "0x8001"}]}, preflight=True)


def test_noop_reads_checks_and_starts_nothing_new():
    ran, action = _step(hostvars=_hostvars(sm2_hca=hca(SM2), c1_hca=hca(C1)))
    assert ran == [
        ("fabric.infiniband.hca_info", None),
        ("ansible.legacy.template", "/etc/opensm/opensm.conf"),
        ("ansible.legacy.template", "/etc/default/opensm"),
        ("ansible.legacy.template", "/etc/opensm/partitions.conf"),
        ("fabric.infiniband.node_facts", ["opensm"]),
        ("ansible.builtin.systemd_service", "opensm"),
    ]
    assert not action._changed
    returned = action._returns
    assert (returned["guids"], returned["priority"], returned["restart"], returned["reload"]) == ([SM1], 15, False, False)
    assert returned["units"] == ["opensm@%s.service" % SM1] and returned["logs"] == ["/var/log/opensm.%s.log" % SM1]
    # node c1 publishes VF GUIDs: the distribution's OpenSM cannot bring them up
    assert action._notes["warnings"] == [
        "VF GUIDs are configured (sriov_vf_guids of c1), but the distribution's OpenSM has no SR-IOV virtualization "
        "(virt_enabled): InfiniBand VFs stay down until a subnet manager with virtualization runs (opensm_flavour: nvidia, or "
        "the switch's SM with virtualization on)."]


def test_a_current_reading_is_not_read_again():
    ran, _action = _step(own=hca(SM1), hostvars=_hostvars(sm2_hca=hca(SM2), c1_hca=hca(C1)))
    assert ("fabric.infiniband.hca_info", None) not in ran


def test_first_run_makes_the_directory_installs_and_restarts():
    ran, action = _step(hostvars=_hostvars(sm2_hca=hca(SM2), c1_hca=hca(C1)), installed=False, missing_dir=True,
                        written=("/etc/opensm/opensm.conf", "/etc/default/opensm", "/etc/opensm/partitions.conf"))
    assert ran == [
        ("fabric.infiniband.hca_info", None),
        ("ansible.legacy.template", "/etc/opensm/opensm.conf"),
        ("ansible.builtin.file", "/etc/opensm"),
        ("ansible.legacy.template", "/etc/opensm/opensm.conf"),
        ("ansible.legacy.template", "/etc/default/opensm"),
        ("ansible.legacy.template", "/etc/opensm/partitions.conf"),
        ("fabric.infiniband.node_facts", ["opensm"]),
        ("ansible.legacy.package", "opensm"),
        ("ansible.builtin.systemd_service", "opensm"),
    ]
    # the failed first write is no entry of what ran
    assert [r["module"] for r in action._ran].count("ansible.legacy.template") == 3
    assert action._changed and action._returns["restart"] and action._returns["reload"] and action._returns["package_changed"]


def test_partitions_alone_reload():
    _ran, action = _step(hostvars=_hostvars(sm2_hca=hca(SM2), c1_hca=hca(C1)), written=("/etc/opensm/partitions.conf",))
    assert (action._returns["restart"], action._returns["reload"]) == (False, True)


def test_check_mode_installs_in_check_mode_and_leaves_the_service():
    ran, action = _step(hostvars=_hostvars(sm2_hca=hca(SM2), c1_hca=hca(C1)), installed=False, check_mode=True)
    assert ran[-1] == ("ansible.legacy.package", "opensm")
    assert action._returns["package_changed"]


@pytest.mark.parametrize("run_tags, skip_tags, last", [
    (["opensm_preflight"], [], ("fabric.infiniband.hca_info", None)),
    (["opensm_configure"], [], ("ansible.legacy.template", "/etc/opensm/partitions.conf")),
    (["opensm_service"], [], ("ansible.builtin.systemd_service", "opensm")),
    (["all"], ["opensm_service"], ("fabric.infiniband.node_facts", ["opensm"])),
])
def test_tags_choose_the_parts(run_tags, skip_tags, last):
    ran, _action = _step(hostvars=_hostvars(sm2_hca=hca(SM2), c1_hca=hca(C1)), run_tags=run_tags, skip_tags=skip_tags)
    assert ran[-1] == last
    if run_tags == ["opensm_service"]:
        assert ran == [("fabric.infiniband.hca_info", None), ("ansible.builtin.systemd_service", "opensm")]


def test_a_member_without_a_reading_is_refused_before_any_write():
    with pytest.raises(StepFailed, match=r"the port GUIDs of c1 are not known \(not discovered\)\. Nothing was changed\.$"):
        _step(hostvars=_hostvars(sm2_hca=hca(SM2)))


def test_port_guid_of_another_host_refused_before_the_read():
    ran = []
    with pytest.raises(StepFailed, match=r"opensm_port_guids\[0\]: %s belongs to sm2 \(a port of its adapters, infiniband_hca\)" % SM2):
        _step({"opensm_port_guids": [SM2]}, hostvars=_hostvars(sm2_hca=hca(SM2, run="old:1:0"), c1_hca=hca(C1)), ran=ran)
    # the node was not read
    assert ran == []


def test_port_guid_that_is_no_port_of_this_host_refused_after_the_read():
    with pytest.raises(StepFailed, match=r"opensm_port_guids\[0\]: 0x0c42a10300cc0010 is no port of sm1 \(read in this run\); "
                                         r"accepted: port GUIDs of sm1's own InfiniBand ports \(%s\)" % SM1):
        _step({"opensm_port_guids": ["0x0c42a10300cc0010"]}, hostvars=_hostvars(sm2_hca=hca(SM2), c1_hca=hca(C1)))


def test_no_port_to_bind_is_refused():
    with pytest.raises(StepFailed, match=r"^no InfiniBand port found \(hca_info\); check the link type"):
        _step(own={"run_id": RUN, "hcas": []}, hostvars=_hostvars(sm2_hca=hca(SM2), c1_hca=hca(C1)))
