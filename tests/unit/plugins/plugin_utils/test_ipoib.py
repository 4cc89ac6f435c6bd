# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.fabric.infiniband.plugins.plugin_utils import ipoib
from ansible_collections.fabric.infiniband.plugins.plugin_utils.ipoib import duplicate_addresses as ipoib_duplicate_addresses
from ansible_collections.fabric.infiniband.plugins.plugin_utils.ipoib import plan as ipoib_plan


def _hca(model="ConnectX-6", link_layer="InfiniBand", netdev=True):
    hcas = []
    for pci, rdma, name in (("0000:3b:00.0", "mlx5_0", "ibp59s0f0"), ("0000:3b:00.1", "mlx5_1", "ibp59s0f1")):
        hcas.append({"pci_address": pci, "rdma_device": rdma, "model": model,
                     "ports": [{"port": 1, "link_layer": link_layer, "netdev": name if netdev else None}]})
    return {"hcas": hcas}


def test_resolves_ports_names_children_and_publishes_the_fact():
    plan = ipoib_plan(_hca(), [{"device": "3b:00.0", "mtu": 4092, "addresses": ["10.10.0.5/24", "FD10::5/64"],
                                "children": [{"pkey": "0x0001", "addresses": ["10.20.0.5/24"]}, {"pkey": "0x7ffe"}]},
                               {"device": "mlx5_1"}])
    first = plan[0]
    assert (first["netdev"], first["mtu"], first["mode"]) == ("ibp59s0f0", 4092, "datagram")
    assert first["addresses"] == ["10.10.0.5/24", "fd10::5/64"]
    assert (first["ipv4"], first["ipv6"]) == (["10.10.0.5/24"], ["fd10::5/64"])
    assert [(c["pkey"], c["name"], c["mtu"]) for c in first["children"]] == [
        ("0x8001", "ibp59s0f0.8001", 4092), ("0xfffe", "ibp59s0f0.fffe", 4092)]
    assert first["fact"] == {"pci_address": "0000:3b:00.0", "rdma_device": "mlx5_0", "port": 1, "netdev": "ibp59s0f0",
                             "addresses": ["10.10.0.5/24", "fd10::5/64"],
                             "children": [{"pkey": "0x8001", "name": "ibp59s0f0.8001", "addresses": ["10.20.0.5/24"]},
                                          {"pkey": "0xfffe", "name": "ibp59s0f0.fffe", "addresses": []}]}
    assert (plan[1]["netdev"], plan[1]["mtu"], plan[1]["addresses"]) == ("ibp59s0f1", 2044, [])


def test_connected_mode_on_connectx3():
    plan = ipoib_plan(_hca("ConnectX-3"), [{"device": "mlx5_0", "mode": "connected", "mtu": 65520}])
    assert (plan[0]["mode"], plan[0]["mtu"]) == ("connected", 65520)


@pytest.mark.parametrize("hca,config,says", [
    (_hca(), [{"device": "0000:99:00.0"}], "ipoib_config[0]: 0000:99:00.0 port 1 is not a port of this host"),
    (_hca(), [{"device": "3b:00.9"}], "ipoib_config[0].device '3b:00.9' is not a PCI address; write it as 0000:3b:00.0 or 3b:00.0"),
    (_hca(), [{"device": 3540.0}], 'ipoib_config[0].device is the number 3540.0, not a PCI address: YAML reads an unquoted 59:00.0 '
     'as a base-60 number. Quote it: "59:00.0"'),
    (_hca(), [{"device": "mlx5_0", "port": 2}], "mlx5_0 port 2 is not a port of this host"),
    (_hca(), [{"port": 1}], "ipoib_config[0] needs device"),
    (_hca(), [{"device": "mlx5_0", "vlan": 3}], "unknown keys vlan"),
    (_hca(link_layer="Ethernet"), [{"device": "mlx5_0"}], "is Ethernet, not InfiniBand"),
    (_hca(netdev=False), [{"device": "mlx5_0"}], "has no netdev"),
    (_hca(), [{"device": "mlx5_0"}, {"device": "0000:3b:00.0"}], "selects ibp59s0f0, which ipoib_config[0] selects"),
    (_hca(), [{"device": "mlx5_0", "mode": "fast"}], "mode 'fast' must be one of: datagram, connected"),
    (_hca(), [{"device": "mlx5_0", "mode": "connected"}], "(ConnectX-6) only does enhanced IPoIB"),
    (_hca("ConnectX-4"), [{"device": "mlx5_0", "mode": "connected"}], "only does enhanced IPoIB"),
    (_hca(), [{"device": "mlx5_0", "mtu": 4093}], "mtu 4093 is out of range: the datagram mode allows at most 4092"),
    (_hca("ConnectX-3"), [{"device": "mlx5_0", "mode": "connected", "mtu": 65521}], "connected mode allows at most 65520"),
    (_hca(), [{"device": "mlx5_0", "mtu": 1000}], "and at least 1280"),
    (_hca(), [{"device": "mlx5_0", "mtu": "big"}], "mtu 'big' is not a number"),
    (_hca(), [{"device": "mlx5_0", "children": [{"pkey": "0x8001"}]}], "pkey: '0x8001' is not an accepted P_Key (0x8001 carries the full-membership bit"),
    (_hca(), [{"device": "mlx5_0", "children": [{"pkey": "0x7fff"}]}], "children[0].pkey: '0x7fff' is not an accepted P_Key (0x7fff is the Default partition"),
    (_hca(), [{"device": "mlx5_0", "children": [{"pkey": 0}]}], "children[0].pkey: 0 is not an accepted P_Key; accepted: 0x0001 to 0x7ffe"),
    (_hca(), [{"device": "mlx5_0", "children": [{"pkey": 1}, {"pkey": "0x1"}]}], "PKey 0x8001 is given twice"),
    (_hca(), [{"device": "mlx5_0", "children": [{}]}], "children[0] needs pkey"),
    (_hca(), [{"device": "mlx5_0", "mtu": 2044, "children": [{"pkey": 1, "mtu": 4092}]}], "its parent's MTU is 2044"),
    (_hca(), [{"device": "mlx5_0", "addresses": "10.0.0.1/24"}], "addresses must be a list"),
    (_hca(), [{"device": "mlx5_0", "addresses": ["10.0.0.1"]}], "has no prefix length"),
    (_hca(), [{"device": "mlx5_0", "addresses": ["10.0.0.300/24"]}], "is not an IPv4 or IPv6 address"),
    (_hca(), [{"device": "mlx5_0", "addresses": ["10.0.0.0/24"]}], "is the network or broadcast address"),
    (_hca(), [{"device": "mlx5_0", "addresses": ["fe80::1/64"]}], "link-local"),
    (_hca(), [{"device": "mlx5_0", "addresses": ["10.10.0.5/24"]}, {"device": "mlx5_1", "addresses": ["10.10.7.5/16"]}],
     "overlapping subnets: 10.10.7.5/16 (ibp59s0f1) and 10.10.0.5/24 (ibp59s0f0)"),
    (_hca(), [{"device": "mlx5_0", "addresses": ["fd10::5/64"], "children": [{"pkey": 1, "addresses": ["fd10::6/64"]}]}],
     "overlapping subnets: fd10::6/64 (ibp59s0f0.8001)"),
    ({"changed": False}, [], "expects the reading of fabric.infiniband.hca_info"),
])
def test_bad_input_names_the_variable(hca, config, says):
    with pytest.raises(AnsibleFilterError) as err:
        ipoib_plan(hca, config)
    assert says in str(err.value)


@pytest.mark.parametrize("mtu, mode, says", [
    (70000, "datagram", "ipoib_mtu 70000 is out of range: accepted 1280 to 4092 in the datagram mode"),
    (70000, "connected", "accepted 1280 to 65520 in the connected mode"),
    ("big", "datagram", "ipoib_mtu 'big' is out of range"),
    (2044, "unreliable", "ipoib_mode 'unreliable' must be one of: datagram, connected"),
])
def test_role_wide_mtu_and_mode_are_checked_without_entries(mtu, mode, says):
    with pytest.raises(AnsibleFilterError) as err:
        ipoib_plan(_hca(), [], mtu=mtu, mode=mode)
    assert says in str(err.value)


def test_same_address_twice_is_left_to_the_play_wide_check():
    plan = ipoib_plan(_hca(), [{"device": "mlx5_0", "addresses": ["10.30.0.5/24"]},
                               {"device": "mlx5_1", "addresses": ["10.30.0.5/24"]}])
    assert ipoib_duplicate_addresses({"node01": plan}) == ["10.30.0.5 on node01/ibp59s0f0, node01/ibp59s0f1"]


def test_duplicates_across_hosts_ignore_the_prefix_length():
    a = ipoib_plan(_hca(), [{"device": "mlx5_0", "addresses": ["10.10.0.5/24"],
                             "children": [{"pkey": 1, "addresses": ["10.20.0.5/24"]}]}])
    b = ipoib_plan(_hca(), [{"device": "mlx5_0", "addresses": ["10.10.0.6/24"],
                             "children": [{"pkey": 1, "addresses": ["10.20.0.5/16"]}]}])
    assert ipoib_duplicate_addresses({"node02": b, "node01": a}) == [
        "10.20.0.5 on node01/ibp59s0f0.8001, node02/ibp59s0f0.8001"]
    assert ipoib_duplicate_addresses({"node01": a, "node02": []}) == []


def test_the_published_fact_carries_the_children_addresses():
    plan = ipoib_plan(_hca(), [{"device": "mlx5_0", "children": [{"pkey": 1, "addresses": ["10.20.0.5/24"]}]}])
    assert plan[0]["fact"]["children"] == [{"pkey": "0x8001", "name": "ibp59s0f0.8001", "addresses": ["10.20.0.5/24"]}]


def test_without_a_reading_ports_are_named_as_the_inventory_names_them():
    plan = ipoib_plan(None, [{"device": "3b:00.0", "mode": "connected", "mtu": 65520, "addresses": ["10.10.0.7/24"],
                              "children": [{"pkey": "0x0002", "addresses": ["10.20.0.7/24"]}]},
                             {"device": "mlx5_1", "port": 2}])
    assert [(p["netdev"], p["name"], p["pci_address"], p["rdma_device"]) for p in plan] == [
        (None, "0000:3b:00.0 port 1", "0000:3b:00.0", None), (None, "mlx5_1 port 2", None, "mlx5_1")]
    assert plan[0]["children"][0]["name"] == "0000:3b:00.0 port 1.8002"
    # what needs no reading is still checked
    with pytest.raises(AnsibleFilterError, match="overlapping subnets"):
        ipoib_plan(None, [{"device": "mlx5_0", "addresses": ["10.10.0.7/24"]}, {"device": "mlx5_1", "addresses": ["10.10.0.8/16"]}])
    with pytest.raises(AnsibleFilterError, match="selects mlx5_0 port 1, which ipoib_config.0. selects already"):
        ipoib_plan(None, [{"device": "mlx5_0"}, {"device": "mlx5_0", "port": 1}])


# --limit node03: node01 and node02 are outside the play; node01 published its interfaces (fact cache), node02 never ran
# the role and its inventory asks for an address.
_NODE01_FACT = [{"pci_address": "0000:3b:00.0", "rdma_device": "mlx5_0", "port": 1, "netdev": "ibp59s0f0",
                 "addresses": ["10.10.0.1/24"], "children": [{"pkey": "0x8001", "name": "ibp59s0f0.8001", "addresses": ["10.20.0.1/24"]}]}]
_NODE02_ASKS = {"config": [{"device": "0000:3b:00.0", "addresses": ["10.10.0.2/24"]}], "mtu": None, "mode": None}


@pytest.mark.parametrize("address, says", [
    ("10.10.0.1/24", "10.10.0.1 on node01/ibp59s0f0 (published), node03/ibp59s0f0"),
    ("10.20.0.1/16", "10.20.0.1 on node01/ibp59s0f0.8001 (published), node03/ibp59s0f0"),
    ("10.10.0.2/24", "10.10.0.2 on node02/0000:3b:00.0 port 1 (inventory), node03/ibp59s0f0"),
])
def test_an_address_of_a_host_outside_the_play_is_refused(address, says):
    plan = ipoib_plan(_hca(), [{"device": "mlx5_0", "addresses": [address]}])
    assert ipoib_duplicate_addresses({"node03": plan}, known={"node01": _NODE01_FACT}, asked={"node02": _NODE02_ASKS}) == [says]


def test_hosts_outside_the_play_are_not_judged_among_themselves():
    plan = ipoib_plan(_hca(), [{"device": "mlx5_0", "addresses": ["10.10.0.3/24"]}])
    # node02's inventory asks node01's address: its own run refuses that, this run (node03) has nothing to do with it
    asks = {"config": [{"device": "mlx5_0", "addresses": ["10.10.0.1/24"]}]}
    assert ipoib_duplicate_addresses({"node03": plan}, known={"node01": _NODE01_FACT}, asked={"node02": asks}) == []


def test_a_published_fact_wins_over_the_inventory_and_a_host_of_the_play_over_both():
    plan = ipoib_plan(_hca(), [{"device": "mlx5_0", "addresses": ["10.10.0.2/24"]}])
    # node02 published (no 10.10.0.2 any more): its inventory is not read
    assert ipoib_duplicate_addresses({"node03": plan}, known={"node02": []}, asked={"node02": _NODE02_ASKS}) == []
    # node03 in the play: its plan counts, not its old fact
    assert ipoib_duplicate_addresses({"node03": []}, known={"node03": _NODE01_FACT}) == []


def test_inventory_settings_the_plan_refuses_are_left_to_that_host():
    plan = ipoib_plan(_hca(), [{"device": "mlx5_0", "addresses": ["10.10.0.2/24"]}])
    bad = {"config": [{"device": "mlx5_0", "addresses": ["10.10.0.2/24"], "mtu": 9000}]}
    assert ipoib_duplicate_addresses({"node03": plan}, asked={"node02": bad}) == []
    good_connected = {"config": [{"device": "mlx5_0", "addresses": ["10.10.0.2/24"], "mtu": 9000}], "mode": "connected"}
    assert ipoib_duplicate_addresses({"node03": plan}, asked={"node02": good_connected}) == [
        "10.10.0.2 on node02/mlx5_0 port 1 (inventory), node03/ibp59s0f0"]


# ------------------------------------------------------------------ the step's decisions (plugins/action/ipoib.py)

def test_duplicates_seen_from_one_host_name_only_its_own():
    a = ipoib_plan(_hca(), [{"device": "mlx5_0", "addresses": ["10.10.0.5/24"]}])
    b = ipoib_plan(None, [{"device": "mlx5_0", "addresses": ["10.10.0.5/24"]}])
    c = ipoib_plan(None, [{"device": "mlx5_0", "addresses": ["10.10.0.7/24"]}])
    plans = {"node01": a, "node02": b, "node03": c}
    assert ipoib_duplicate_addresses(plans, host="node01") == ["10.10.0.5 on node01/ibp59s0f0, node02/mlx5_0 port 1"]
    assert ipoib_duplicate_addresses(plans, host="node03") == []
    assert ipoib.duplicate_message([]) is None
    assert ipoib.duplicate_message(["x"]).startswith("duplicate address: x ((published)")


@pytest.mark.parametrize("run_tags, skip_tags, phases", [
    (["all"], [], {"persist", "runtime"}),
    (["ipoib"], [], {"persist", "runtime"}),
    (["ipoib_plan"], [], set()),
    (["ipoib_persist"], [], {"persist"}),
    (["ipoib_persist", "ipoib_runtime"], [], {"persist", "runtime"}),
    (["all"], ["ipoib_runtime"], {"persist"}),
    (None, None, {"persist", "runtime"}),
])
def test_phases_follow_the_tags(run_tags, skip_tags, phases):
    assert ipoib.phases(run_tags, skip_tags) == phases


SYSTEMCTL = """Id=NetworkManager.service
SubState=dead
UnitFileState=

Id=systemd-networkd.service
SubState=running
UnitFileState=enabled
"""


def test_the_stack_is_chosen_as_the_role_did():
    units = ipoib.parse_units(SYSTEMCTL)
    assert units["systemd-networkd.service"]["UnitFileState"] == "enabled"
    assert ipoib.choose_stack("auto", units) == "networkd"
    assert ipoib.choose_stack("auto", dict(units, **{"NetworkManager.service": {"SubState": "running"}})) == "networkmanager"
    assert ipoib.choose_stack("auto", {}, ifupdown_present=True) == "ifupdown"
    assert ipoib.choose_stack("auto", {}) is None
    assert ipoib.choose_stack("ifupdown", units) == "ifupdown"


def test_conflict_search_matches_a_name_as_a_word():
    import re
    search = ipoib.conflict_search("networkd", ["ibp59s0f0", "ibp59s0f0.8001"])
    pattern = re.compile(search["contains"])
    assert pattern.match("Name=ibp59s0f0")
    assert pattern.match("  IPoIB = ibp59s0f0.8001")
    assert not pattern.match("Name=ibp59s0f01")
    assert "*fabric-ipoib-*" in search["excludes"]
    assert re.compile(ipoib.conflict_search("ifupdown", ["ib0"])["contains"]).match("auto lo ib0")


def test_interfaces_d_is_sourced():
    assert ipoib.sources_interfaces_d("auto lo\nsource /etc/network/interfaces.d/*\n")
    assert ipoib.sources_interfaces_d("source-directory interfaces.d\n")
    assert not ipoib.sources_interfaces_d("# source /etc/network/interfaces.d/*\n")


def test_wanted_files_per_stack():
    plan = ipoib_plan(_hca(), [{"device": "mlx5_0", "children": [{"pkey": "0x0001"}]}, {"device": "mlx5_1"}])
    networkd = [f["path"].rsplit("/", 1)[1] for f in ipoib.wanted_files("networkd", plan)]
    assert networkd == ["10-fabric-ipoib-ibp59s0f0.network", "10-fabric-ipoib-ibp59s0f1.network",
                        "10-fabric-ipoib-ibp59s0f0.8001.network", "10-fabric-ipoib-ibp59s0f0.8001.netdev"]
    nm = ipoib.wanted_files("networkmanager", plan)
    assert [f["mode"] for f in nm] == ["0600"] * 3 and nm[2]["profile"] == "fabric-ipoib-ibp59s0f0.8001"
    assert [f["path"] for f in ipoib.wanted_files("ifupdown", plan)] == [ipoib.IFUPDOWN_FILE]


def test_a_file_is_current_only_with_its_checksum_mode_and_owner():
    import hashlib
    found = {"path": "/x", "checksum": hashlib.sha1(b"a\n").hexdigest(), "mode": "0644", "uid": 0, "gid": 0}
    assert ipoib.file_current(found, "a\n", "0644")
    assert not ipoib.file_current(found, "b\n", "0644")
    assert not ipoib.file_current(found, "a\n", "0600")
    assert not ipoib.file_current(dict(found, uid=1000), "a\n", "0644")
    assert not ipoib.file_current(None, "a\n", "0644")
    assert ipoib.stale_files([{"path": "/x"}, {"path": "/y"}], [{"path": "/x"}]) == ["/y"]


IP_JSON = ('[{"ifname": "ibp59s0f0", "mtu": 4092, "flags": ["BROADCAST", "UP"], "addr_info": [{"local": "10.10.0.5", "prefixlen": 24},'
           ' {"local": "fd10::5", "prefixlen": 64}]}, {"ifname": "ibp59s0f1", "mtu": 2044, "flags": ["BROADCAST"], "addr_info": []}]')


def test_ip_applies_what_the_stack_did_not():
    plan = ipoib_plan(_hca(), [{"device": "mlx5_0", "mtu": 4092, "addresses": ["10.10.0.5/24", "fd10::5/64"],
                                "children": [{"pkey": "0x0001", "addresses": ["10.20.0.5/24"]}]},
                               {"device": "mlx5_1", "addresses": ["10.11.0.5/24"]}])
    state = ipoib.link_state(IP_JSON)
    assert state["ibp59s0f0"] == {"mtu": 4092, "up": True, "addresses": ["10.10.0.5/24", "fd10::5/64"]}
    links = ipoib.links(plan)
    assert not ipoib.settled(links, state)
    assert [argv for argv, _what in ipoib.fixes(links, state)] == [
        ["ip", "link", "add", "link", "ibp59s0f0", "name", "ibp59s0f0.8001", "type", "ipoib", "pkey", "0x8001"],
        ["ip", "link", "set", "dev", "ibp59s0f1", "mtu", "2044", "up"],
        ["ip", "link", "set", "dev", "ibp59s0f0.8001", "mtu", "4092", "up"],
        ["ip", "address", "add", "10.11.0.5/24", "dev", "ibp59s0f1"],
        ["ip", "address", "add", "10.20.0.5/24", "dev", "ibp59s0f0.8001"],
    ]
    done = dict(state, ibp59s0f1={"mtu": 2044, "up": True, "addresses": ["10.11.0.5/24"]},
                **{"ibp59s0f0.8001": {"mtu": 4092, "up": True, "addresses": ["10.20.0.5/24"]}})
    assert ipoib.settled(links, done) and ipoib.fixes(links, done) == []
    assert ipoib.link_state("not json") == {}
    # a name listed twice keeps the kernel's entry, the first
    assert ipoib.link_state(IP_JSON[:-1] + ', {"ifname": "ibp59s0f0", "mtu": 2044, "flags": []}]')["ibp59s0f0"]["mtu"] == 4092
    assert ipoib.ifupdown_up("ibp59s0f0=ibp59s0f0\nlo=lo\n") == {"ibp59s0f0", "lo"}
