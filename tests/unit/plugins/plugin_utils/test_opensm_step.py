# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The opensm step's decisions (plugins/plugin_utils/opensm.py): the member hosts, the GUIDs the user gave, the ports, the
priority, partitions.conf, virtualization, the warnings, the units and logs the handlers watch, and the parts the tags ask
for. What the filters opensm_partition_hosts, opensm_partitions and opensm_port_guids did before (they served the role's task
chain only) is tested here."""

from __future__ import annotations

import pytest

from ansible_collections.fabric.infiniband.plugins.plugin_utils import opensm

GROUPS = {"all": ["sm1", "sm2", "c1", "c2"], "opensm": ["sm1", "sm2"], "compute": ["c1", "c2"]}
SM1, SM1_B, C1, C2, VF = "0xb8cef60300a10010", "0xb8cef60300a10011", "0xb8cef60300a30030", "0xb8cef60300a40040", "0xb8cef60300a3f001"


def hca(*guids, vf=None, ethernet=None):
    hcas = [{"rdma_device": "mlx5_0", "is_vf": False,
             "ports": [{"port": i + 1, "link_layer": "InfiniBand", "port_guid": g} for i, g in enumerate(guids)]}]
    if ethernet:
        hcas[0]["ports"].append({"port": 9, "link_layer": "Ethernet", "port_guid": ethernet})
    if vf:
        hcas.append({"rdma_device": "mlx5_2", "is_vf": True, "ports": [{"port": 1, "link_layer": "InfiniBand", "port_guid": vf}]})
    return {"hcas": hcas}


def plan(host="sm1", own=None, pf=None, vf=None, vf_hosts=(), **settings):
    return opensm.plan(settings, host, GROUPS, own if own is not None else hca(SM1), pf if pf is not None else {"c1": [C1], "c2": [C2]},
                       vf or {}, list(vf_hosts))


# ------------------------------------------------------------------ member hosts, GUIDs

def test_member_hosts_of_hosts_and_groups():
    partitions = [{"name": "a", "pkey": 1, "members": ["compute", "ALL_SWITCHES"]},
                  {"name": "b", "pkey": "0x0002", "members": [{"host": "sm2", "membership": "full"}, C1]}]
    assert opensm.member_hosts({"opensm_partitions": partitions}, GROUPS) == ["c1", "c2", "sm2"]
    assert opensm.member_hosts({}, GROUPS) == []


def test_member_hosts_refuses_bad_partitions():
    with pytest.raises(ValueError, match=r"opensm_partitions\[0\] \(a\)\.pkey: '0x8001' is not an accepted P_Key"):
        opensm.member_hosts({"opensm_partitions": [{"name": "a", "pkey": "0x8001"}]}, GROUPS)
    with pytest.raises(ValueError, match=r"node99"):
        opensm.member_hosts({"opensm_partitions": [{"name": "a", "pkey": "0x0010", "members": ["node99"]}]}, GROUPS)
    assert opensm.partition_problems({"opensm_partitions": [{"name": "a", "pkey": "0x8001"}]}, GROUPS)[0].startswith(
        "opensm_partitions[0] (a).pkey: '0x8001'")


def test_port_guids_given_by_the_user_one_grammar():
    """opensm_port_guids as written: the collection's GUID grammar, YAML numbers refused with what to write (issue 22)."""
    assert opensm.given_guids([]) == []
    assert opensm.given_guids(["0x0C42A10300AA0010", " 0c:42:a1:03:00:aa:00:11 "]) == ["0x0c42a10300aa0010", "0x0c42a10300aa0011"]
    with pytest.raises(ValueError, match=r"^opensm_port_guids\[1\] '0x12' has 2 hex digits after 0x; a GUID has 16"):
        opensm.given_guids(["0x0c42a10300aa0010", "0x12"])
    with pytest.raises(ValueError, match=r'^opensm_port_guids\[0\] is the number 883445511186153488, not a port GUID: '
                                         r'YAML reads an unquoted 0x0c42a10300aa0010 as a number.* Quote it: "0x0c42a10300aa0010"$'):
        opensm.given_guids([0x0C42A10300AA0010])
    with pytest.raises(ValueError, match=r"^opensm_port_guids: '0x0c42a10300aa0010' is not accepted; accepted: a list"):
        opensm.given_guids("0x0c42a10300aa0010")


def test_port_guids_of_a_reading():
    """The InfiniBand ports of the physical functions, in the reading's order; facts are read leniently."""
    assert opensm.port_guids(hca(SM1, SM1_B, vf=VF, ethernet="0xb8cef60300a10019")) == [SM1, SM1_B]
    assert opensm.port_guids({"hcas": [{"is_vf": False, "ports": [{"link_layer": "InfiniBand", "port_guid": "0x1"}]}]}) == [
        "0x0000000000000001"]
    assert opensm.port_guids(None) == [] and opensm.port_guids({}) == []
    # every port GUID a host owns (the check of another host's GUIDs): VFs and Ethernet ports too
    assert opensm.hca_guids(hca(SM1, vf=VF, ethernet="0xb8cef60300a10019")) == {SM1, VF, "0xb8cef60300a10019"}


def test_to_read():
    assert opensm.to_read(["c1", "c2", "sm2"], {"c1": True, "c2": False}) == ["c2", "sm2"]
    assert opensm.to_read([], {}) == []


# ------------------------------------------------------------------ the plan

def test_plan_distribution_master():
    p = plan(opensm_partitions=[{"name": "compute", "pkey": "0x0010", "members": ["compute"]}])
    assert (p["guids"], p["priority"], p["service"], p["package"], p["defaults_file"]) == ([SM1], 15, "opensm", "opensm", "/etc/default/opensm")
    assert p["units"] == ["opensm@%s.service" % SM1] and p["logs"] == ["/var/log/opensm.%s.log" % SM1]
    assert "compute=0x0010 : %s, %s ;" % (C1, C2) in p["partitions"]["content"]
    assert p["problem"] is None and p["warnings"] == [] and p["virt"] is False
    assert opensm.template_vars(p) == {"__opensm_guids": [SM1], "__opensm_priority": 15, "__opensm_virt": False,
                                       "__opensm_partitions": {"content": p["partitions"]["content"]},
                                       "__opensm_partitions_path": "/etc/opensm/partitions.conf"}


@pytest.mark.parametrize("host, settings, priority", [
    ("sm1", {}, 15), ("sm2", {}, 14), ("sm2", {"opensm_priority": 3}, 3), ("c1", {"opensm_priority": "0"}, 0),
])
def test_plan_priority(host, settings, priority):
    assert plan(host=host, **settings)["priority"] == priority


def test_plan_priority_never_below_zero():
    groups = dict(GROUPS, opensm=["sm%d" % i for i in range(20)])
    assert opensm.plan({}, "sm19", groups, hca(SM1), {}, {}, [])["priority"] == 0


def test_plan_ports_given_win_over_discovery():
    p = plan(own=hca(SM1, SM1_B), opensm_port_guids=[SM1_B.upper().replace("0X", "0x")])
    assert p["guids"] == [SM1_B]
    assert plan(own=hca(SM1, SM1_B))["units"] == ["opensm@%s.service" % SM1, "opensm@%s.service" % SM1_B]


def test_plan_no_port_to_bind():
    assert plan(own=hca(ethernet="0xb8cef60300a10019"))["problem"] == (
        "no InfiniBand port found (hca_info); check the link type (role link_type) or set opensm_port_guids")


def test_plan_nvidia_binds_one_port():
    p = plan(own=hca(SM1, SM1_B), opensm_flavour="nvidia")
    assert p["problem"] == ("NVIDIA's opensmd binds one port, and opensm_port_guids/discovery gives %s, %s; set opensm_port_guids "
                            "to one" % (SM1, SM1_B))
    p = plan(opensm_flavour="nvidia", opensm_log_file="/var/log/sm.log")
    wanted = (None, "opensmd", None, ["opensmd"], ["/var/log/sm.log"])
    assert (p["problem"], p["service"], p["defaults_file"], p["units"], p["logs"]) == wanted


@pytest.mark.parametrize("flavour, setting, vf_hosts, virt, warned", [
    ("distribution", "auto", ["c1"], False, "the distribution's OpenSM has no SR-IOV virtualization (virt_enabled)"),
    ("nvidia", "auto", ["c1"], True, None),
    ("nvidia", "auto", [], False, None),
    ("nvidia", "enabled", [], True, None),
    ("nvidia", "disabled", ["c1"], False, "opensm_virt_enabled is disabled"),
    ("distribution", "disabled", [], False, None),
])
def test_plan_virtualization_and_its_warning(flavour, setting, vf_hosts, virt, warned):
    p = plan(vf_hosts=vf_hosts, opensm_flavour=flavour, opensm_virt_enabled=setting)
    assert p["virt"] is virt
    if warned:
        assert p["warnings"] == ["VF GUIDs are configured (sriov_vf_guids of c1), but %s: InfiniBand VFs stay down until a subnet "
                                 "manager with virtualization runs (opensm_flavour: nvidia, or the switch's SM with virtualization "
                                 "on)." % warned]
    else:
        assert p["warnings"] == []


def test_plan_members_vfs_and_empty_partitions():
    partitions = [{"name": "compute", "pkey": "0x0010", "members": [{"group": "compute", "functions": "vf"}]},
                  {"name": "storage", "pkey": "0x0020", "defmember": "limited", "members": [{"host": "c1", "functions": "pf"}]}]
    p = plan(vf={"c1": [VF]}, opensm_partitions=partitions)
    assert "compute=0x0010 : %s ;" % VF in p["partitions"]["content"]
    assert "storage=0x0020, defmember=limited : %s ;" % C1 in p["partitions"]["content"]
    p = plan(opensm_partitions=partitions)
    assert p["warnings"] == ["partition compute (0x0010) has no member yet; left out of partitions.conf"]


def test_plan_refuses_a_member_host_without_a_reading():
    with pytest.raises(ValueError, match=r"the port GUIDs of c2 are not known \(not discovered\)"):
        plan(pf={"c1": [C1]}, opensm_partitions=[{"name": "compute", "pkey": "0x0010", "members": ["compute"]}])


# ------------------------------------------------------------------ tags, restarts

@pytest.mark.parametrize("run_tags, skip_tags, parts", [
    (None, None, {"configure", "install", "service"}),
    (["all"], [], {"configure", "install", "service"}),
    (["opensm"], [], {"configure", "install", "service"}),
    (["opensm_preflight"], [], set()),
    (["opensm_configure"], [], {"configure"}),
    (["opensm_install", "opensm_service"], [], {"install", "service"}),
    (["all"], ["opensm_install"], {"configure", "service"}),
    (["opensm_configure", "ipoib"], ["opensm_configure"], set()),
])
def test_parts_from_the_tags(run_tags, skip_tags, parts):
    assert opensm.parts(run_tags, skip_tags) == parts


@pytest.mark.parametrize("changed, restart, reload", [
    ({"conf": False, "defaults": False, "partitions": False}, False, False),
    ({"conf": True, "defaults": False, "partitions": True}, True, True),
    ({"conf": False, "defaults": True, "partitions": False}, True, False),
    ({"conf": False, "partitions": True}, False, True),
])
def test_restart_or_reload(changed, restart, reload):
    assert opensm.restarts(changed) == (restart, reload)
