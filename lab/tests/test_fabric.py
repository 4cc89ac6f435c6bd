# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The link to the simulated switch fabric: netfile, ibstat/smpquery parsing, fabric_view sync."""

import copy

import pytest

from conftest import CX6, fixture_text
from fabricsim import fabric
from fabricsim import state as sim_state

# A captured ibstat of ibsim's umad2sim (one port, TAB-indented), as the node runs it.
IBSTAT_INIT = ("CA 'ibsim0'\n\tCA type: simulator\n\tNumber of ports: 1\n\tFirmware version: 1\n\tHardware version: a1\n"
               "\tNode GUID: 0x0c42a10300aa0010\n\tSystem image GUID: 0x0c42a10300aa0010\n\tPort 1:\n\t\tState: Initializing\n"
               "\t\tPhysical state: LinkUp\n\t\tRate: 10\n\t\tBase lid: 0\n\t\tLMC: 0\n\t\tSM lid: 0\n"
               "\t\tCapability mask: 0x0050c048\n\t\tPort GUID: 0x0c42a10300aa0011\n\t\tLink layer: IB\n")


def _node(host, **adapter):
    desc = copy.deepcopy(CX6)
    desc["hostname"] = host
    desc["adapters"][0].update(adapter)
    return sim_state.normalize(desc)


def test_netfile_numbers_switch_ports_over_all_nodes():
    states = {"node02": _node("node02", node_guid="0x0c42a10300bb0010"), "node01": _node("node01")}
    text = fabric.netfile(states)
    lines = text.splitlines()
    assert lines[0] == 'Switch\t36 "Switch1"'
    assert lines[1:5] == ['[1]\t"node01-0000:3b:00.0"[1]', '[2]\t"node01-0000:3b:00.1"[1]',
                          '[3]\t"node02-0000:3b:00.0"[1]', '[4]\t"node02-0000:3b:00.1"[1]']
    # ibsim adds the port number to the node GUID: one below, so the port GUID is the host's.
    assert 'caguid=0x0c42a10300aa000f\nHca\t1 "node01-0000:3b:00.0"\n[1]\t"Switch1"[1]' in text
    assert 'caguid=0x0c42a10300bb0010\nHca\t1 "node02-0000:3b:00.1"\n[1]\t"Switch1"[4]' in text


def test_netfile_leaves_out_uncabled_and_ethernet_only_cards():
    node = copy.deepcopy(CX6)
    node["fabric"]["ports"] = {"0000:3b:00.1": 1}
    node["adapters"].append({"model": "ConnectX-4 Lx EN", "pci_address": "0000:01:00.0"})
    node["fabric"]["ports"]["0000:01:00.0"] = 2
    ports = fabric.cabled_ports({"node01": sim_state.normalize(node)})
    assert [(p["bdf"], p["switch_port"]) for p in ports] == [("0000:3b:00.1", 1)]


def test_netfile_refuses_more_ports_than_the_switch_has():
    states = {"node%02d" % i: _node("node%02d" % i, node_guid="0x0c42a10300%02x0010" % i) for i in range(19)}
    with pytest.raises(ValueError, match="38 cabled ports, the simulated switch has 36"):
        fabric.netfile(states)


def test_parse_ibstat_before_the_sm_reports_lid_ffff():
    assert fabric.parse_ibstat_port(IBSTAT_INIT) == {"state": "INIT", "lid": 0xFFFF, "sm_lid": 0, "lmc": 0}


def test_parse_ibstat_active_port_with_other_whitespace():
    text = IBSTAT_INIT.replace("State: Initializing", "State:   Active").replace("Base lid: 0", "Base lid:  48")
    text = text.replace("SM lid: 0", "SM lid: 1").replace("\t", "        ")
    assert fabric.parse_ibstat_port(text) == {"state": "ACTIVE", "lid": 48, "sm_lid": 1, "lmc": 0}


def test_parse_ibstat_without_a_port_is_none():
    assert fabric.parse_ibstat_port("ibpanic: [42] main: stat of IB device 'mthca0' failed") is None


def test_parse_smpquery_pkeys_keeps_members_only():
    assert fabric.parse_smpquery_pkeys(fixture_text("smpquery-pkeys.txt")) == ["0xffff", "0x8001"]


def test_sync_writes_the_fabric_view_of_infiniband_ports_once(tmp_path):
    path = str(tmp_path / "state.json")
    state = _node("node01", params={"LINK_TYPE_P1": "ETH"})
    state["fabric"]["ibsim"] = "10.89.0.1:7070"
    sim_state.save(state, path)
    asked = []

    def query(name, server):
        asked.append((name, server))
        return {"state": "ACTIVE", "lid": 7, "sm_lid": 1, "lmc": 0, "pkeys": ["0xffff"]}

    assert fabric.sync(path, query=query) is True
    # Port 1 is Ethernet: only the InfiniBand port is asked about.
    assert asked == [("node01-0000:3b:00.1", "10.89.0.1:7070")]
    assert sim_state.load(path)["fabric_view"] == {"0000:3b:00.1": {"state": "ACTIVE", "lid": 7, "sm_lid": 1, "lmc": 0, "pkeys": ["0xffff"]}}
    assert fabric.sync(path, query=query) is False


def test_sync_without_a_fabric_asks_nothing(tmp_path):
    path = str(tmp_path / "state.json")
    sim_state.save(_node("node01"), path)
    assert fabric.sync(path, query=lambda name, server: pytest.fail("queried without ibsim")) is False
    assert "fabric_view" not in sim_state.load(path) or not sim_state.load(path)["fabric_view"]
