# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

import pytest

from ansible_collections.fabric.infiniband.plugins.module_utils import opensm

GROUPS = {"all": ["sm1", "sm2", "c1", "c2"], "opensm": ["sm1", "sm2"], "compute": ["c1", "c2"], "empty": []}
HOSTS = GROUPS["all"]
PF = {"c1": ["0xb8cef60300a30030", "0xb8cef60300a30031"], "c2": ["0xB8CEF60300A40040"], "sm1": ["0xb8cef60300a10010"]}
VF = {"c1": ["0x00000000000f0001"]}


def render(partitions, **kwargs):
    kwargs.setdefault("pf_guids", PF)
    kwargs.setdefault("vf_guids", VF)
    kwargs.setdefault("groups", GROUPS)
    kwargs.setdefault("hosts", HOSTS)
    return opensm.render_partitions(partitions, **kwargs)


def body(result):
    return [line for line in result["content"].splitlines() if not line.startswith("#")]


def test_default_partition_only():
    result = render([])
    assert body(result) == ["Default=0x7fff, ipoib : ALL=full, ALL_SWITCHES=full, SELF=full ;"]
    assert result["max_per_port"] == 1
    assert result["partitions"] == [] and result["warnings"] == []


def test_default_partition_limited_with_multicast_parameters():
    result = render([], default={"membership": "limited", "ipoib": False, "mtu": 2048, "rate": 25, "sl": 1, "scope": 2})
    assert body(result) == ["Default=0x7fff, mtu=4, rate=15, sl=1, scope=2 : ALL=limited, ALL_SWITCHES=full, SELF=full ;"]


def test_members_resolved_from_hosts_groups_guids_and_keywords():
    result = render([
        {"name": "compute", "pkey": "0x0010", "ipoib": True, "mtu": 4096, "rate": 100, "sl": 0, "scope": 2,
         "defmember": "full", "members": ["compute"]},
        {"name": "storage", "pkey": "0x20", "defmember": "limited",
         "members": [{"host": "sm1", "membership": "full"}, {"host": "c1", "functions": "pf"}, "0x0000000000001234"]},
        {"name": "vfs", "pkey": "0x0030", "members": [{"group": "compute", "functions": "vf", "membership": "full"}, "SELF"]},
    ])
    assert body(result)[1:] == [
        "compute=0x0010, ipoib, mtu=5, rate=16, sl=0, scope=2, defmember=full : "
        "0xb8cef60300a30030, 0xb8cef60300a30031, 0x00000000000f0001, 0xb8cef60300a40040 ;",
        "storage=0x0020, defmember=limited : 0xb8cef60300a10010=full, 0xb8cef60300a30030, 0xb8cef60300a30031, 0x0000000000001234 ;",
        "vfs=0x0030 : SELF, 0x00000000000f0001=full ;",
    ]
    assert [p["pkey"] for p in result["partitions"]] == ["0x0010", "0x0020", "0x0030"]
    assert result["partitions"][2]["keywords"] == ["SELF"]
    # c1's first port is in compute and storage, plus Default.
    assert result["max_per_port"] == 3


def test_strongest_membership_wins_for_a_guid_listed_twice():
    result = render([{"name": "p", "pkey": 1, "members": [
        {"guid": "0xb8cef60300a30030", "membership": "limited"}, {"host": "c1", "membership": "full"},
        {"guid": "0xb8cef60300a30031", "membership": "limited"}]}])
    assert body(result)[1] == "p=0x0001 : 0xb8cef60300a30030=full, 0xb8cef60300a30031=full, 0x00000000000f0001=full ;"


def test_both_needs_allow_both_pkeys():
    partitions = [{"name": "p", "pkey": 1, "members": [{"host": "c2", "membership": "both"}]}]
    with pytest.raises(ValueError, match=r"opensm_partitions\[0\] \(p\)\.members\[0\]\.membership: 'both' needs opensm_allow_both_pkeys"):
        render(partitions)
    assert body(render(partitions, allow_both=True))[1] == "p=0x0001 : 0xb8cef60300a40040=both ;"


def test_partition_without_members_is_left_out_with_a_warning():
    result = render([{"name": "later", "pkey": "0x0100", "members": [{"group": "empty"}]}])
    assert body(result) == ["Default=0x7fff, ipoib : ALL=full, ALL_SWITCHES=full, SELF=full ;"]
    assert "# later=0x0100 : no member yet (left out)" in result["content"]
    assert result["warnings"] == ["partition later (0x0100) has no member yet; left out of partitions.conf"]


# "1" and "20": text without 0x has no single meaning (decimal to OpenSM, refused by ib-kubernetes): refused (issue 22)
@pytest.mark.parametrize("pkey", ["0x0000", 0, "0x7fff", 0x7FFF, "0x8001", 0x10000, "zz", "", True, None, 1.5, "1", "20"])
def test_pkey_out_of_range_or_malformed(pkey):
    with pytest.raises(ValueError, match=r"opensm_partitions\[0\] \(p\)\.pkey: .* accepted: 0x0001 to 0x7ffe"):
        render([{"name": "p", "pkey": pkey}])


@pytest.mark.parametrize("pkey", ["0x0001", "0x1", 1, "0x7ffe", "0X7FFE"])
def test_pkey_in_range(pkey):
    assert render([{"name": "p", "pkey": pkey, "members": ["ALL"]}])["partitions"][0]["pkey"] in ("0x0001", "0x7ffe")


@pytest.mark.parametrize("partitions, message", [
    ([{"name": "a", "pkey": 1}, {"name": "a", "pkey": 2}], r"\[1\] \(a\)\.name: a is also the name of opensm_partitions\[0\]"),
    ([{"name": "a", "pkey": 1}, {"name": "b", "pkey": "0x0001"}], r"\[1\] \(b\)\.pkey: 0x0001 is also the P_Key of opensm_partitions\[0\]"),
    ([{"name": "Default", "pkey": 1}], r"the Default partition is always there; set it with opensm_default_partition"),
    ([{"name": "bad name", "pkey": 1}], r"\[0\]\.name: 'bad name' is not accepted; accepted: 1 to 64 letters"),
    ([{"name": "a:b", "pkey": 1}], r"\.name: 'a:b' is not accepted"),
    ([{"pkey": 1}], r"\[0\]\.name: None is not accepted"),
    ([{"name": "a"}], r"\(a\)\.pkey: missing; accepted: 0x0001 to 0x7ffe"),
    ([{"name": "a", "pkey": 1, "color": "red"}], r"\(a\): unknown key\(s\) color; accepted: name, pkey"),
    ([{"name": "a", "pkey": 1, "ipoib": "maybe"}], r"\(a\)\.ipoib: 'maybe' is not a boolean; accepted: true or false"),
    ([{"name": "a", "pkey": 1, "mtu": 5}], r"\(a\)\.mtu: 5 is not accepted; accepted \(bytes\): 256, 512, 1024, 2048, 4096"),
    ([{"name": "a", "pkey": 1, "rate": 3}], r"\(a\)\.rate: 3 is not accepted; accepted \(Gb/s\): 2\.5, 5, 10"),
    ([{"name": "a", "pkey": 1, "sl": 16}], r"\(a\)\.sl: 16 is not accepted; accepted: an integer from 0 to 15"),
    ([{"name": "a", "pkey": 1, "scope": 0}], r"\(a\)\.scope: 0 is not accepted; accepted: an integer from 1 to 15"),
    ([{"name": "a", "pkey": 1, "defmember": "half"}], r"\(a\)\.defmember: 'half' is not accepted; accepted: full, limited, both"),
    ([{"name": "a", "pkey": 1, "members": "c1"}], r"\(a\)\.members: 'c1' is not accepted; accepted: a list"),
    ([{"name": "a", "pkey": 1, "members": ["nosuch"]}], r"\.members\[0\]: 'nosuch' is neither a port GUID"),
    ([{"name": "a", "pkey": 1, "members": ["0xZZ"]}], r"\.members\[0\] '0xZZ' is not hex after 0x; write it as 8 bytes, 0x and 16 hex digits"),
    ([{"name": "a", "pkey": 1, "members": ["0x0"]}], r"\.members\[0\] '0x0' has 1 hex digits after 0x; a GUID has 16"),
    ([{"name": "a", "pkey": 1, "members": ["0x0000000000000000"]}], r"\.members\[0\] '0x0000000000000000' is the zero GUID"),
    ([{"name": "a", "pkey": 1, "members": [{"guid": "b8:ce:f6:03:00:a3:00"}]}], r"\.members\[0\]\.guid 'b8:ce:f6:03:00:a3:00' has 7 groups"),
    # YAML's reading of unquoted GUIDs (class 8): numbers, refused with what to write
    ([{"name": "a", "pkey": 1, "members": [0xB8CEF60300A30030]}],
     r'\.members\[0\] is the number 13316851640937152560, not a port GUID: .* Quote it: "0xb8cef60300a30030"'),
    ([{"name": "a", "pkey": 1, "members": [{"guid": 28524360585417}]}],
     r'\.members\[0\]\.guid is the number 28524360585417, .*unquoted 10:11:22:33:44:55:56:57 .*"10:11:22:33:44:55:56:57"'),
    ([{"name": "a", "pkey": 1, "members": [{"host": "c1", "group": "compute"}]}], r"give exactly one of guid, host, group \(got host, group\)"),
    ([{"name": "a", "pkey": 1, "members": [{"membership": "full"}]}], r"give exactly one of guid, host, group \(got none\)"),
    ([{"name": "a", "pkey": 1, "members": [{"host": "x"}]}], r"\.members\[0\]\.host: 'x' is not a host of the inventory"),
    ([{"name": "a", "pkey": 1, "members": [{"group": "x"}]}], r"\.members\[0\]\.group: 'x' is not a group of the inventory; groups: compute, empty, opensm"),
    ([{"name": "a", "pkey": 1, "members": [{"host": "c1", "functions": "vfs"}]}], r"\.functions: 'vfs' is not accepted; accepted: all, pf, vf"),
    ([{"name": "a", "pkey": 1, "members": [{"host": "c1", "port": 1}]}], r"\.members\[0\]: unknown key\(s\) port"),
    ([{"name": "a", "pkey": 1, "members": [7]}], r"\.members\[0\] is the number 7, not a port GUID"),
    ([{"name": "a", "pkey": 1, "members": [True]}], r"\.members\[0\]: True is not accepted"),
    (["a"], r"opensm_partitions\[0\]: 'a' is not accepted; accepted: a dict"),
    ({"name": "a"}, r"opensm_partitions: .* accepted: a list of dicts"),
])
def test_invalid_input_names_the_variable_and_the_accepted_values(partitions, message):
    with pytest.raises(ValueError, match=message):
        render(partitions)
    with pytest.raises(ValueError, match=message):
        opensm.check_partitions(partitions, groups=GROUPS, hosts=HOSTS)


@pytest.mark.parametrize("default, message", [
    ({"membership": "both"}, r"opensm_default_partition\.membership: 'both' is not accepted; accepted: full, limited"),
    ({"pkey": "0x7fff"}, r"opensm_default_partition: unknown key\(s\) pkey"),
    ("full", r"opensm_default_partition: 'full' is not accepted"),
])
def test_invalid_default_partition(default, message):
    with pytest.raises(ValueError, match=message):
        render([], default=default)


def test_member_host_not_discovered():
    with pytest.raises(ValueError, match=r"opensm_partitions \(a\): the port GUIDs of c2 are not known"):
        render([{"name": "a", "pkey": 1, "members": ["c2"]}], pf_guids={"c1": []})


def test_at_most_128_partitions_per_port():
    ok = [{"name": "p%d" % i, "pkey": "0x%04x" % i, "members": ["c2"]} for i in range(1, 128)]
    assert render(ok)["max_per_port"] == 128
    too_many = ok + [{"name": "p128", "pkey": "0x0080", "members": [{"guid": "0xb8cef60300a40040"}]}]
    with pytest.raises(ValueError, match=r"0xb8cef60300a40040 would be in 129 partitions .*accepted: at most 128 per port"):
        render(too_many)
    every_port = [{"name": "p%d" % i, "pkey": "0x%04x" % i, "members": ["ALL"]} for i in range(1, 129)]
    with pytest.raises(ValueError, match=r"every port would be in 129 partitions"):
        render(every_port)


def test_check_partitions_lists_the_hosts_to_discover():
    partitions = [{"name": "a", "pkey": 1, "members": ["compute", {"host": "sm1"}, "0x0000000000000001", "ALL"]}, {"name": "b", "pkey": 2}]
    assert opensm.check_partitions(partitions, groups=GROUPS, hosts=HOSTS) == ["c1", "c2", "sm1"]
    assert opensm.check_partitions([], groups=GROUPS, hosts=HOSTS) == []


def test_a_name_that_is_a_host_and_a_group_is_the_host():
    groups = dict(GROUPS, c1=["c2"])
    assert opensm.check_partitions([{"name": "a", "pkey": 1, "members": ["c1"]}], groups=groups, hosts=HOSTS) == ["c1"]


def test_port_guids_of_infiniband_ports_of_physical_functions():
    hca = {"hcas": [
        {"rdma_device": "mlx5_0", "is_vf": False, "ports": [{"port": 1, "link_layer": "Ethernet", "port_guid": "0x0c42a10300aa0010"}]},
        {"rdma_device": "mlx5_1", "is_vf": False, "ports": [{"port": 1, "link_layer": "InfiniBand", "port_guid": "0x0C42A10300AA0011"}]},
        {"rdma_device": "mlx5_2", "is_vf": True, "ports": [{"port": 1, "link_layer": "InfiniBand", "port_guid": "0x0c42a10300aa0f01"}]},
        {"rdma_device": "mlx5_3", "is_vf": False, "ports": [{"port": 1, "link_layer": "InfiniBand", "port_guid": "0x0c42a10300aa0020"},
                                                            {"port": 2, "link_layer": "InfiniBand", "port_guid": None}]},
        {"rdma_device": None, "is_vf": False},
    ]}
    assert opensm.port_guids(hca) == ["0x0c42a10300aa0011", "0x0c42a10300aa0020"]
    assert opensm.port_guids({}) == [] and opensm.port_guids(None) == []


# Lines as OpenSM 3.3.23 wrote them in the lab (molecule scenario opensm).
LOG_START_MASTER = """\
Nov 22 04:19:05 761629 [97FA7740] 0x03 -> OpenSM 3.3.23
Nov 22 04:19:05 769900 [97FA7740] 0x80 -> Entering DISCOVERING state
Nov 22 04:19:05 771714 [97FA7740] 0x02 -> osm_opensm_bind: Setting IS_SM on port 0xb8cef60300a10010
Nov 22 04:19:05 778744 [94FA06C0] 0x80 -> Entering MASTER state
Nov 22 04:19:05 781116 [94FA06C0] 0x02 -> osm_ucast_mgr_process: minhop tables configured on all switches
Nov 22 04:19:05 782023 [94FA06C0] 0x02 -> SUBNET UP
"""
LOG_STANDBY = """\
Nov 22 04:17:49 766862 [DAAE56C0] 0x80 -> Entering STANDBY state
Nov 22 04:17:49 765714 [E52C76C0] 0x01 -> log_trap_info: Received Generic Notice type:4 num:144 (CapabilityMask, NodeDescription, \
Link [Width|Speed] Enabled, SM priority changed) Producer:1 (Channel Adapter) from LID:3 TID:0x0000000000000000
"""
LOG_BAD_PARTITIONS = """\
Nov 22 04:20:43 562073 [E575B6C0] 0x01 -> parse_part_conf: PARSE ERROR: line 3: bad PortGUID
Nov 22 04:20:43 562128 [E575B6C0] 0x01 -> osm_prtn_make_partitions: Partition configuration in error; retrying with default config
Nov 22 04:20:43 563430 [E575B6C0] 0x02 -> osm_ucast_mgr_process: minhop tables configured on all switches
Nov 22 04:20:43 564094 [E575B6C0] 0x02 -> SUBNET UP
"""


def test_log_check_master_start():
    assert opensm.log_check(LOG_START_MASTER) == {"states": ["DISCOVERING", "MASTER"], "subnet_up": True, "errors": []}


def test_log_check_standby_and_traps_are_not_partition_errors():
    assert opensm.log_check(LOG_STANDBY) == {"states": ["STANDBY"], "subnet_up": False, "errors": []}


def test_log_check_partition_errors():
    result = opensm.log_check(LOG_BAD_PARTITIONS)
    assert result["subnet_up"] is True
    assert [line.split("-> ")[1] for line in result["errors"]] == [
        "parse_part_conf: PARSE ERROR: line 3: bad PortGUID",
        "osm_prtn_make_partitions: Partition configuration in error; retrying with default config",
    ]


def test_log_check_empty():
    assert opensm.log_check("") == {"states": [], "subnet_up": False, "errors": []}
    assert opensm.log_check(None) == {"states": [], "subnet_up": False, "errors": []}


@pytest.mark.parametrize("text, allowed", [("false", False), ("no", False), ("0", False), ("true", True), (True, True)])
def test_allow_both_pkeys_from_text_means_what_it_says(text, allowed):
    """opensm_allow_both_pkeys=false (text, as -e and AWX surveys pass it) refuses 'both' (issue 22)."""
    partitions = [{"name": "p", "pkey": 1, "defmember": "both", "members": ["ALL"]}]
    if allowed:
        assert render(partitions, allow_both=text)["partitions"][0]["pkey"] == "0x0001"
    else:
        with pytest.raises(ValueError, match=r"'both' needs opensm_allow_both_pkeys: true"):
            render(partitions, allow_both=text)
        with pytest.raises(ValueError, match=r"'both' needs opensm_allow_both_pkeys: true"):
            opensm.check_partitions(partitions, allow_both=text)


def test_allow_both_pkeys_not_a_boolean():
    with pytest.raises(ValueError, match=r"^opensm_allow_both_pkeys: 'sometimes' is not a boolean"):
        opensm.check_partitions([], allow_both="sometimes")
