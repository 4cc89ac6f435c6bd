# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The opensm step's refusals (issue 33, class 4): values valid alone, wrong together, refused naming the user's setting
before any change, by the role's step and by the run's preflight alike (plugins/plugin_utils/opensm.py: problems)."""

from __future__ import annotations

import pytest

from ansible_collections.fabric.infiniband.plugins.plugin_utils import opensm

RUN = "ctl:1:0"
SM1_PORT, SM2_PORT, NODE_PORT = "0x0c42a10300aa0010", "0x0c42a10300bb0010", "0x0c42a10300cc0010"


def hca(guid, run=RUN):
    return {"run_id": run, "hcas": [{"rdma_device": "mlx5_0", "pci_address": "0000:3b:00.0", "is_vf": False,
                                     "ports": [{"port": 1, "link_layer": "InfiniBand", "port_guid": guid}]}]}


GROUPS = {"all": ["sm1", "sm2", "node01", "k8s1"], "opensm": ["sm1", "sm2"], "ib_nodes": ["node01"], "k8s_control": ["k8s1"]}


# ------------------------------------------------------------------ port GUIDs of another host

# what the step reads of the other hosts (action: _hosts): their reading, the VF GUIDs they publish, their opensm_port_guids
OTHERS = {"sm2": {"hca": hca(SM2_PORT, run="old:1:0"), "vf_guids": None, "port_guids": None},
          "node01": {"hca": None, "vf_guids": ["0x02fa000000000100"], "port_guids": []}}


def run(host="sm1", others=None, own=None, own_current=True, **settings):
    return opensm.problems(settings, host, GROUPS, own_hca=own if own is not None else hca(SM1_PORT), own_current=own_current,
                           others=OTHERS if others is None else others)


@pytest.mark.parametrize("given, says", [
    ([SM2_PORT], "opensm_port_guids[0]: %s belongs to sm2 (a port of its adapters, infiniband_hca), not to sm1" % SM2_PORT),
    (["0x02fa000000000100"], "belongs to node01 (a VF GUID it published, sriov_vf_guids), not to sm1"),
    ([NODE_PORT], "opensm_port_guids[0]: %s is no port of sm1 (read in this run); accepted: port GUIDs of sm1's own "
                  "InfiniBand ports (%s), or [] to bind to every one of them" % (NODE_PORT, SM1_PORT)),
    (["0x12"], "opensm_port_guids[0] '0x12' has 2 hex digits after 0x"),
    ("0x0c42a10300aa0010", "opensm_port_guids: '0x0c42a10300aa0010' is not accepted; accepted: a list of this host's port GUIDs"),
])
def test_opensm_port_guid_of_another_host_is_refused(given, says):
    problems = run(opensm_port_guids=given)
    assert any(says in p for p in problems), problems


def test_opensm_port_guid_two_sms_claim_in_the_inventory():
    others = dict(OTHERS, sm2={"port_guids": [SM1_PORT]})
    problems = run(others=others, opensm_port_guids=[SM1_PORT])
    assert problems == ["opensm_port_guids[0]: %s belongs to sm2 (its opensm_port_guids in the inventory), not to sm1: OpenSM "
                        "binds to a port of its own host, and would bind nowhere, or the subnet would get a second SM on that "
                        "port; accepted: port GUIDs of sm1's own InfiniBand ports (%s), or [] to bind to every one of them"
                        % (SM1_PORT, SM1_PORT)]


def test_opensm_own_port_and_discovery_are_accepted():
    assert run(opensm_port_guids=[SM1_PORT]) == []
    assert run(opensm_port_guids=[]) == []
    # a reading of another run decides nothing about this host's own ports (the preflight before the step reads the node)
    assert run(host="sm2", own=hca(SM2_PORT, run="old:1:0"), own_current=False, others={}, opensm_port_guids=[NODE_PORT]) == []


def test_opensm_partitions_and_pkeys_are_checked():
    problems = run(opensm_partitions=[{"name": "p", "pkey": 32769, "members": ["ALL"]}])
    assert problems and "'0x0001' (without the membership bit of 0x8001) for decimal 32769" in problems[0]


# ------------------------------------------------------------------ the settings the argument specs cannot judge

@pytest.mark.parametrize("host, settings, says", [
    ("node01", {}, "opensm_priority is null and the host is not in the group opensm (opensm_group), so no priority can be derived; "
                   "set opensm_priority (0 to 15) or add the host to the group"),
    ("sm1", {"opensm_group": "sms"}, "not in the group sms (opensm_group)"),
    ("sm1", {"opensm_priority": 16}, "opensm_priority: 16 is not accepted; accepted: 0 to 15, or null"),
    ("sm1", {"opensm_priority": -1}, "opensm_priority: -1 is not accepted"),
    ("sm1", {"opensm_subnet_prefix": "fe80::"}, "opensm_subnet_prefix: fe80:: is not accepted; accepted: 0x and 16 hex digits"),
    ("sm1", {"opensm_subnet_prefix": "0xfe80000000000000\n"}, "opensm_subnet_prefix"),
    ("sm1", {"opensm_log_flags": "3"}, "opensm_log_flags: 3 is not accepted; accepted: a hex byte such as 0x03"),
    ("sm1", {"opensm_extra_options": {"qos": True, "guid": "0x1", "sm_priority": 3}},
     "opensm_extra_options: guid, sm_priority are written by the role; set them with their opensm_ variables"),
    ("sm1", {"opensm_virt_enabled": "enabled"},
     "opensm_virt_enabled: enabled needs opensm_flavour: nvidia (virt_enabled exists only in NVIDIA's OpenSM)"),
])
def test_settings_refused_with_the_users_variable(host, settings, says):
    problems = opensm.setting_problems(settings, host, GROUPS)
    assert any(says in p for p in problems), problems


def test_settings_accepted():
    assert opensm.setting_problems({}, "sm1", GROUPS) == []
    # a host outside the group with a priority of its own; the priority as text (-e opensm_priority=5)
    assert opensm.setting_problems({"opensm_priority": 0}, "node01", GROUPS) == []
    assert opensm.setting_problems({"opensm_priority": "5"}, "node01", GROUPS) == []
    assert opensm.setting_problems({"opensm_virt_enabled": "enabled", "opensm_flavour": "nvidia", "opensm_log_flags": "0xff",
                                    "opensm_subnet_prefix": "0xFE80000000000001"}, "sm1", GROUPS) == []


def test_every_problem_at_once():
    problems = run(opensm_priority=16, opensm_log_flags="x", opensm_partitions=[{"name": "p", "pkey": "0x8001"}])
    assert [p.split(":")[0].split(" ")[0] for p in problems] == ["opensm_priority", "opensm_log_flags", "opensm_partitions[0]"]


def test_allow_both_as_text():
    """opensm_allow_both_pkeys: "false" (text) means false: membership both is refused, naming the setting."""
    problems = run(opensm_allow_both_pkeys="false", opensm_partitions=[{"name": "s", "pkey": "0x0010", "defmember": "both",
                                                                       "members": ["ALL_CAS"]}])
    assert any("'both' needs opensm_allow_both_pkeys: true" in p for p in problems), problems
    assert run(opensm_allow_both_pkeys="yes", opensm_partitions=[{"name": "s", "pkey": "0x0010", "defmember": "both"}]) == []
    assert any("opensm_allow_both_pkeys: 'maybe' is not a boolean" in p for p in run(opensm_allow_both_pkeys="maybe"))
