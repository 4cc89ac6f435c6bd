# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The controller checks of ipoib and k8s_network (issue 33, class 4): a host's IPoIB address inside the addresses a
NetworkAttachmentDefinition hands to pods on the same partition, refused from both sides before any change."""

from __future__ import annotations

import pytest

from ansible_collections.fabric.infiniband.plugins.plugin_utils import controller_checks, ipoib, k8s_network

CHECKS = {"ipoib": ipoib.check, "k8s_network": k8s_network.check}

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
    return CHECKS[role](ctx)


# ------------------------------------------------------------------ ipoib and k8s_network: addresses in the pods' range

NAD = {"name": "ib-a", "type": "ipoib", "master": "ibp59s0f0", "ipam": {"range": "10.56.0.0/16"}}


def ipoib_own(*addresses, children=None):
    entry = {"device": "mlx5_0", "addresses": list(addresses)}
    if children:
        entry["children"] = children
    return {"ipoib_config": [entry]}


@pytest.mark.parametrize("network, own, says", [
    (NAD, ipoib_own("10.56.0.5/16"),
     "ipoib_config[0].addresses[0] of node01: 10.56.0.5 is inside 10.56.0.0/16, the addresses k8s_network_networks[0] (ib-a) "
     "hands to pods (whereabouts, range 10.56.0.0/16) on the same partition 0x7fff"),
    (dict(NAD, pkey="0x0001"), ipoib_own("10.10.0.5/24", children=[{"pkey": "0x0001", "addresses": ["10.56.3.4/16"]}]),
     "ipoib_config[0].children[0].addresses[0] of node01: 10.56.3.4 is inside"),
    (dict(NAD, ipam={"range": "10.56.0.0/16", "range_start": "10.56.1.0", "range_end": "10.56.1.200"}), ipoib_own("10.56.1.9/16"),
     "10.56.1.9 is inside 10.56.1.0-10.56.1.200"),
])
def test_ipoib_address_inside_a_pod_range_is_refused(network, own, says):
    hostvars = {"k8s1": {"k8s_network_networks": [network]}}
    problems = run("ipoib", "node01", own=own, hostvars=hostvars)
    assert any(says in p for p in problems), problems
    assert any("ipam.exclude" in p for p in problems)


@pytest.mark.parametrize("network, own", [
    (NAD, ipoib_own("10.57.0.5/16")),                                          # outside the range
    (dict(NAD, pkey="0x0002"), ipoib_own("10.56.0.5/16")),                    # another partition
    (dict(NAD, ipam={"range": "10.56.0.0/16", "exclude": ["10.56.0.0/24"]}), ipoib_own("10.56.0.5/16")),
    (dict(NAD, ipam={"range": "10.56.0.0/16", "range_start": "10.56.1.0"}), ipoib_own("10.56.0.5/16")),
])
def test_ipoib_address_outside_the_pods_pool_is_accepted(network, own):
    assert run("ipoib", "node01", own=own, hostvars={"k8s1": {"k8s_network_networks": [network]}}) == []


def test_ipoib_bare_pkey_is_refused():
    problems = run("ipoib", "node01", own=ipoib_own(children=[{"pkey": 20}]))
    assert problems and "ipoib_config[0].children[0].pkey: 20 is not an accepted P_Key" in problems[0]


def test_k8s_network_range_holding_a_host_address_is_refused_from_inventory_and_published():
    hostvars = {"node01": ipoib_own("10.56.0.5/16"),
                "sm1": {"ansible_facts": {"ipoib_interfaces": [{"netdev": "ibp1s0", "addresses": ["10.56.9.9/16"], "children": []}]}}}
    problems = run("k8s_network", "k8s1", own={"k8s_network_networks": [NAD]}, hostvars=hostvars)
    assert sorted(p.split(" is inside")[0] for p in problems) == ["ipoib_config[0].addresses[0] of node01: 10.56.0.5",
                                                                  "ipoib_interfaces of sm1 (ibp1s0): 10.56.9.9"]


def test_k8s_network_pkey_and_ranges_are_checked_without_the_nodes():
    problems = run("k8s_network", "k8s1", own={"k8s_network_networks": [dict(NAD, pkey=0x20)]})
    assert problems and "pkey: 32 is not an accepted P_Key" in problems[0]
    assert run("k8s_network", "k8s1", own={"k8s_network_networks": [NAD]}) == []
