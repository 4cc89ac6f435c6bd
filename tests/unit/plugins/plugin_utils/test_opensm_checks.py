# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The controller checks of opensm, ipoib and k8s_network (issue 33, class 4): values valid alone, wrong together, refused
naming the user's setting before any change, by the role's first task and by the run's preflight alike."""

from __future__ import annotations

import pytest

from ansible_collections.fabric.infiniband.plugins.plugin_utils import controller_checks

RUN = "ctl:1:0"
SM1_PORT, SM2_PORT, NODE_PORT = "0x0c42a10300aa0010", "0x0c42a10300bb0010", "0x0c42a10300cc0010"


def hca(guid, run=RUN):
    return {"run_id": run, "hcas": [{"rdma_device": "mlx5_0", "pci_address": "0000:3b:00.0", "is_vf": False,
                                     "ports": [{"port": 1, "link_layer": "InfiniBand", "port_guid": guid}]}]}


GROUPS = {"all": ["sm1", "sm2", "node01", "k8s1"], "opensm": ["sm1", "sm2"], "ib_nodes": ["node01"], "k8s_control": ["k8s1"]}


def context(role, host, own=None, hostvars=None, facts=None):
    hostvars = dict(hostvars or {})
    variables = dict(own or {}, inventory_hostname=host, groups=GROUPS, hostvars=hostvars,
                     ansible_facts=facts or (hostvars.get(host) or {}).get("ansible_facts") or {})
    return controller_checks.Context(role, variables, None, run_id=RUN)


def run(role, host, **kwargs):
    ctx = context(role, host, **kwargs)
    return controller_checks.checks(role)(ctx)


def test_every_role_without_a_step_has_checks_and_the_message_says_nothing_changed():
    assert all(controller_checks.checks(role) for role in controller_checks.ROLES)
    ctx_vars = dict(inventory_hostname="sm1", groups=GROUPS, hostvars={},
                    opensm_partitions=[{"name": "storage", "pkey": 8001, "members": ["ALL"]}])
    out = controller_checks.run(["opensm", "sriov"], ctx_vars, None)
    assert len(out) == 1 and out[0].startswith("opensm: opensm_partitions[0] (storage).pkey: 8001 is not an accepted P_Key")
    assert out[0].endswith("Nothing was changed.")


# ------------------------------------------------------------------ opensm: port GUIDs of another host

OPENSM_HOSTS = {"sm1": {"ansible_facts": {"infiniband_hca": hca(SM1_PORT)}},
                "sm2": {"ansible_facts": {"infiniband_hca": hca(SM2_PORT, run="old:1:0")}},
                "node01": {"ansible_facts": {"sriov_vf_guids": ["0x02fa000000000100"]}, "opensm_port_guids": []}}


@pytest.mark.parametrize("given, says", [
    ([SM2_PORT], "opensm_port_guids[0]: %s belongs to sm2 (a port of its adapters, infiniband_hca), not to sm1" % SM2_PORT),
    (["0x02fa000000000100"], "belongs to node01 (a VF GUID it published, sriov_vf_guids), not to sm1"),
    ([NODE_PORT], "opensm_port_guids[0]: %s is no port of sm1 (read in this run); accepted: port GUIDs of sm1's own "
                  "InfiniBand ports (%s), or [] to bind to every one of them" % (NODE_PORT, SM1_PORT)),
    (["0x12"], "opensm_port_guids[0] '0x12' has 2 hex digits after 0x"),
])
def test_opensm_port_guid_of_another_host_is_refused(given, says):
    problems = run("opensm", "sm1", own={"opensm_port_guids": given}, hostvars=OPENSM_HOSTS)
    assert any(says in p for p in problems), problems


def test_opensm_port_guid_two_sms_claim_in_the_inventory():
    hostvars = dict(OPENSM_HOSTS, sm2={"opensm_port_guids": [SM1_PORT]})
    problems = run("opensm", "sm1", own={"opensm_port_guids": [SM1_PORT]}, hostvars=hostvars)
    assert problems == ["opensm_port_guids[0]: %s belongs to sm2 (its opensm_port_guids in the inventory), not to sm1: OpenSM "
                        "binds to a port of its own host, and would bind nowhere, or the subnet would get a second SM on that "
                        "port; accepted: port GUIDs of sm1's own InfiniBand ports (%s), or [] to bind to every one of them"
                        % (SM1_PORT, SM1_PORT)]


def test_opensm_own_port_and_discovery_are_accepted():
    assert run("opensm", "sm1", own={"opensm_port_guids": [SM1_PORT]}, hostvars=OPENSM_HOSTS) == []
    assert run("opensm", "sm1", own={"opensm_port_guids": []}, hostvars=OPENSM_HOSTS) == []
    # a stale own reading decides nothing: sm2's is of another run
    assert run("opensm", "sm2", own={"opensm_port_guids": [NODE_PORT]}, hostvars=OPENSM_HOSTS) == []


def test_opensm_partitions_and_pkeys_are_checked():
    problems = run("opensm", "sm1", own={"opensm_partitions": [{"name": "p", "pkey": 32769, "members": ["ALL"]}]})
    assert problems and "'0x0001' (without the membership bit of 0x8001) for decimal 32769" in problems[0]
