# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The ibnetdiscover topology-file parser against recorded outputs (fixtures/ibnetdiscover/README.md)
and whitespace variations of them."""

from __future__ import annotations

import pytest

from ansible_collections.fabric.infiniband.plugins.module_utils import ibnetdiscover
from ansible_collections.fabric.infiniband.tests.unit.conftest import read_fixture


def _lab():
    return read_fixture("ibnetdiscover/lab_ibsim_diags44.txt")


def test_argv():
    assert ibnetdiscover.argv() == []
    assert ibnetdiscover.argv("mlx5_1", 2, 500) == ["-C", "mlx5_1", "-P", "2", "-t", "500"]


def test_lab_fabric():
    topo = ibnetdiscover.parse(_lab())
    assert topo["seen_from"] == {"node_guid": "0x0c42a10300aa000f", "port_guid": "0x0c42a10300aa0010"}
    assert topo["switches"] == [{"guid": "0x0000000000200000", "description": "Switch1", "num_ports": 36,
                                 "sys_image_guid": "0x0000000000200000", "vendor_id": "0x0", "device_id": "0x0",
                                 "lid": 1, "lmc": 0, "port_guid": "0x0000000000200000"}]
    by_desc = {h["description"]: h for h in topo["hcas"]}
    assert sorted(by_desc) == ["node01-0000:3b:00.0", "node01-0000:3b:00.1", "node02-0000:c1:00.0", "node03-0000:86:00.0"]
    node02 = by_desc["node02-0000:c1:00.0"]
    assert node02["guid"] == "0xc470bd0300cf495f"
    assert node02["port_guids"] == ["0xc470bd0300cf4960"]
    assert node02["ports"] == [{"port": 1, "guid": "0xc470bd0300cf4960", "lid": 5, "lmc": 0}]
    assert node02["type"] == "ca" and node02["num_ports"] == 1
    # each link once, though both ends print it
    assert len(topo["links"]) == 4
    link = [lk for lk in topo["links"] if lk["to"]["guid"] == "0xc470bd0300cf495f"][0]
    assert link == {"from": {"guid": "0x0000000000200000", "port": 3, "type": "switch"},
                    "to": {"guid": "0xc470bd0300cf495f", "port": 1, "type": "ca"},
                    "width": "4x", "speed": "SDR", "complete": True}
    assert ibnetdiscover.lids(topo)[5] == ("0xc470bd0300cf495f", "0xc470bd0300cf4960")
    assert ibnetdiscover.lids(topo)[1] == ("0x0000000000200000", "0x0000000000200000")


def test_man_page_example_peers_outside_the_excerpt():
    topo = ibnetdiscover.parse(read_fixture("ibnetdiscover/man_example_2007.txt"))
    assert [s["description"] for s in topo["switches"]] == ["ISR9024 Voltaire"]
    assert topo["switches"][0]["lid"] == 6
    assert topo["hcas"] == []
    assert {(lk["from"]["guid"], lk["from"]["type"], lk["to"]["port"], lk["complete"]) for lk in topo["links"]} == {
        ("0x0008f10400410015", "switch", 10, False), ("0x0008f10403961354", "ca", 22, False)}
    assert all(lk["speed"] == "SDR" and lk["width"] == "4x" for lk in topo["links"])


@pytest.mark.parametrize("mangle", [
    pytest.param(lambda t: t.replace("\t", " "), id="spaces"),
    pytest.param(lambda t: t.replace("\t", "    ").replace("\n", "\r\n"), id="crlf"),
    pytest.param(lambda t: "\n".join("  " + line for line in t.splitlines()), id="indented"),
    pytest.param(lambda t: t.replace(") \t", ")\t").replace("[1](", "[1] ("), id="guid_spacing"),
    pytest.param(lambda t: t.replace("4xSDR", "4xHDR s=1 w=2 v=4"), id="full_info_flags"),
])
def test_whitespace_variations_parse_the_same(mangle):
    want = ibnetdiscover.parse(_lab())
    got = ibnetdiscover.parse(mangle(_lab()))
    if "HDR" in mangle("4xSDR"):
        for link in want["links"]:
            link["speed"] = "HDR"
    assert got == want


def test_grouping_ext_ports_router_and_quotes_in_description():
    text = "\n".join([
        "Chassis 1 (guid 0x8f10400411f56)",
        "# Spine Nodes",
        "vendid=0x2c9", "devid=0xcf08", "sysimgguid=0x98039b0300867bba",
        "switchguid=0x98039b0300867bba(98039b0300867bba)\t# MQM8700 Spine 1",
        'Switch\t40 "S-98039b0300867bba"\t\t# "MF0;sw01:MQM8700/U1" enhanced port 0 lid 12 lmc 0',
        '[3][ext 3]\t"H-0c42a10300aa0010"[1](c42a10300aa0010) \t\t# "gpu01 "hca" mlx5_0" lid 40 4xNDR',
        '[5]\t"R-0002c90000000010"[2](2c90000000012) \t\t# "router" lid 9 4xEDR',
        "", "vendid=0x2c9", "devid=0x1021", "caguid=0x0c42a10300aa0010",
        'Ca\t1 "H-0c42a10300aa0010"\t\t# "gpu01 "hca" mlx5_0"',
        '[1](c42a10300aa0010) \t"S-98039b0300867bba"[3][ext 3]\t\t# lid 40 lmc 1 "MF0;sw01:MQM8700/U1" lid 12 4xNDR',
        "", "vendid=0x2c9", "devid=0x0", "rtguid=0x0002c90000000010",
        'Rt\t2 "R-0002c90000000010"\t\t# "router"',
        '[2](2c90000000012) \t"S-98039b0300867bba"[5]\t\t# lid 9 lmc 0 "MF0;sw01:MQM8700/U1" lid 12 4xEDR',
    ])
    topo = ibnetdiscover.parse(text)
    assert topo["switches"][0]["lid"] == 12 and topo["switches"][0]["description"] == "MF0;sw01:MQM8700/U1"
    gpu = [h for h in topo["hcas"] if h["type"] == "ca"][0]
    assert gpu["description"] == 'gpu01 "hca" mlx5_0'
    assert gpu["ports"] == [{"port": 1, "guid": "0x0c42a10300aa0010", "lid": 40, "lmc": 1}]
    router = [h for h in topo["hcas"] if h["type"] == "router"][0]
    assert router["ports"][0]["lid"] == 9
    assert len(topo["links"]) == 2
    assert ibnetdiscover.lids(topo)[41] == ("0x0c42a10300aa0010", "0x0c42a10300aa0010")  # LMC 1: two LIDs


def test_peer_only_ca_gets_its_port_from_the_switch_line():
    text = "\n".join(_lab().split("\n\n")[:2])  # the switch block only
    topo = ibnetdiscover.parse(text)
    assert topo["hcas"] == []
    assert all(not link["complete"] for link in topo["links"])


@pytest.mark.parametrize("text", ["", "ibwarn: [1234] mad_rpc_open_port: can't open UMAD port ((null):0)\n", "# comments only\n"])
def test_no_nodes_is_an_error(text):
    with pytest.raises(ValueError, match="no Switch or Ca line"):
        ibnetdiscover.parse(text)
