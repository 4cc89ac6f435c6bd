# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The traffic step's plan (pairs, rails, batches, ports, thresholds) and its verdicts."""

from __future__ import annotations

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.fabric.infiniband.plugins.filter.verify_checks import verify_checks
from ansible_collections.fabric.infiniband.plugins.filter.verify_report import verify_report
from ansible_collections.fabric.infiniband.plugins.filter.verify_traffic_plan import verify_traffic_plan
from ansible_collections.fabric.infiniband.plugins.filter.verify_traffic_rows import verify_traffic_rows

TABLE = {100: {"min_bw_gbps": 90, "max_lat_us": 6}, 200: {"min_bw_gbps": 180, "max_lat_us": 6},
         "400": {"min_bw_gbps": 360, "max_lat_us": 6}}


def hca(*devices, rate=200, state="ACTIVE", vfs=()):
    hcas = [{"rdma_device": d, "is_vf": False, "ports": [{"port": 1, "state": state, "rate_gbps": rate}]} for d in devices]
    hcas += [{"rdma_device": d, "is_vf": True, "ports": [{"port": 1, "state": "ACTIVE", "rate_gbps": rate}]} for d in vfs]
    return {"hcas": hcas}


def node(address, *devices, **kwargs):
    out = {"hca": hca(*devices, **{k: v for k, v in kwargs.items() if k in ("rate", "state", "vfs")}), "address": address,
           "thresholds": TABLE}
    out.update({k: v for k, v in kwargs.items() if k not in ("rate", "state", "vfs")})
    return out


def fleet(count, devices=("mlx5_0",), **kwargs):
    return {"node%02d" % i: node("10.0.0.%d" % i, *devices, **kwargs) for i in range(1, count + 1)}


def pairs_of(plan):
    return [(r["server"], r["server_hca"], r["client"], r["client_hca"]) for r in plan["runs"]]


def test_even_fleet_pairs_neighbours_in_one_batch():
    plan = verify_traffic_plan(fleet(4))
    assert pairs_of(plan) == [("node01", "mlx5_0", "node02", "mlx5_0"), ("node03", "mlx5_0", "node04", "mlx5_0")]
    assert plan["batches"] == 1
    assert [r["tcp_port"] for r in plan["runs"]] == [18515, 18517]
    assert plan["runs"][0]["server_address"] == "10.0.0.1"
    assert plan["runs"][0]["min_bw_gbps"] == 180 and plan["runs"][0]["max_lat_us"] == 6


def test_odd_fleet_gives_the_last_node_a_partner_in_another_batch():
    plan = verify_traffic_plan(fleet(3))
    assert pairs_of(plan) == [("node01", "mlx5_0", "node02", "mlx5_0"), ("node03", "mlx5_0", "node01", "mlx5_0")]
    assert [r["batch"] for r in plan["runs"]] == [0, 1]
    assert [r["tcp_port"] for r in plan["runs"]] == [18515, 18515]


def test_rails_pair_hca_n_with_hca_n_in_natural_order_and_skip_vfs():
    nodes = {"a": node("a", "mlx5_10", "mlx5_2", vfs=("mlx5_20",)), "b": node("b", "mlx5_3", "mlx5_1")}
    plan = verify_traffic_plan(nodes)
    assert pairs_of(plan) == [("a", "mlx5_2", "b", "mlx5_1"), ("a", "mlx5_10", "b", "mlx5_3")]
    # a node serves or connects once per batch: the rails of one pair run one after the other
    assert [r["batch"] for r in plan["runs"]] == [0, 1]


def test_a_missing_rail_is_reported_unpaired_not_failed():
    plan = verify_traffic_plan({"a": node("a", "mlx5_0", "mlx5_1"), "b": node("b", "mlx5_0")})
    assert plan["runs"][1]["unpaired"] == "b has no HCA on rail 1 to pair with a mlx5_1"
    assert plan["runs"][1]["batch"] is None
    rows = verify_traffic_rows(plan, results=[{"run": 0, "client": client(195.0, 2.0)}, {"run": 0, "server": {"ran": True}}])
    assert [r["status"] for r in rows] == ["pass", "unpaired"] and rows[1]["pair"] == "a mlx5_1 -> b (no HCA)"
    assert verify_checks({}, traffic=rows)["ok"] is True


def test_ethernet_ports_are_rails_only_with_roce():
    nodes = {h: node(h, "mlx5_0", "mlx5_1") for h in ("a", "b")}
    for h in nodes:
        nodes[h]["hca"]["hcas"][1]["ports"][0]["link_layer"] = "Ethernet"
    assert pairs_of(verify_traffic_plan(nodes)) == [("a", "mlx5_0", "b", "mlx5_0")]
    for h in nodes:
        nodes[h]["roce"] = True
    assert pairs_of(verify_traffic_plan(nodes)) == [("a", "mlx5_0", "b", "mlx5_0"), ("a", "mlx5_1", "b", "mlx5_1")]


@pytest.mark.parametrize("rate, bw, lat", [(100, 90, 6), (200, 180, 6), (400, 360, 6), (800, 360, 6), (56, None, None)])
def test_thresholds_take_the_row_at_or_below_the_rate(rate, bw, lat):
    run = verify_traffic_plan(fleet(2, rate=rate))["runs"][0]
    assert (run["min_bw_gbps"], run["max_lat_us"]) == (bw, lat)
    if bw is None:
        assert "verify_traffic_min_bw_gbps" in run["problem"] and run["batch"] is None


def test_the_slower_port_and_the_more_lenient_end_judge_the_pair():
    nodes = {"a": node("a", "mlx5_0", rate=400), "b": node("b", "mlx5_0", rate=200, min_bw_gbps=100.0, max_lat_us=9)}
    run = verify_traffic_plan(nodes)["runs"][0]
    assert run["rate_gbps"] == 200
    assert run["min_bw_gbps"] == 100.0 and run["max_lat_us"] == 9.0


def test_a_port_that_is_down_fails_without_traffic():
    nodes = {"a": node("a", "mlx5_0"), "b": node("b", "mlx5_0", state="DOWN")}
    run = verify_traffic_plan(nodes)["runs"][0]
    assert run["problem"] == "b mlx5_0/1 is DOWN" and run["batch"] is None


@pytest.mark.parametrize("pairs, message", [
    ([{"server": "node01", "client": "node01"}], "verify_traffic_pairs[0]: node01 is paired with itself"),
    ([{"server": "node01", "client": "node09"}], "verify_traffic_pairs[0].client: node09 is no host of the play"),
    ([{"server": "node01", "client": "node02", "client_hca": "mlx5_7"}],
     "verify_traffic_pairs[0].client_hca: node02 has no HCA mlx5_7 (it has: mlx5_0)"),
    ([{"server": "node01", "client": "node02"}, {"server": "node01", "client": "node02"}],
     "verify_traffic_pairs[1]: the pair node01 - node02 is given twice"),
    (["node01"], "verify_traffic_pairs[0]: 'node01' needs server and client"),
])
def test_bad_pairs_are_problems_and_nothing_runs(pairs, message):
    plan = verify_traffic_plan(fleet(2), pairs=pairs)
    assert plan["runs"] == [] and plan["batches"] == 0
    assert any(p.startswith(message) for p in plan["problems"]), plan["problems"]


def test_the_preflight_form_checks_pairs_without_facts():
    problems = verify_traffic_plan(["node01", "node02"], pairs=[{"server": "node01", "client": "node01"}])["problems"]
    assert problems == ["verify_traffic_pairs[0]: node01 is paired with itself; server and client must be two nodes"]
    assert verify_traffic_plan(["node01", "node02"], pairs=[{"server": "node01", "client": "node02"}])["problems"] == []


def test_explicit_pair_on_chosen_hcas():
    nodes = {"a": node("a", "mlx5_0", "mlx5_1"), "b": node("b", "mlx5_0", "mlx5_1"), "c": node("c", "mlx5_0")}
    plan = verify_traffic_plan(nodes, pairs=[{"server": "b", "client": "a", "server_hca": "mlx5_1", "client_hca": "mlx5_0"}])
    assert pairs_of(plan) == [("b", "mlx5_1", "a", "mlx5_0")]


def test_a_single_node_has_no_pair():
    plan = verify_traffic_plan(fleet(1))
    assert plan["runs"] == [] and plan["notes"] == ["no pair: the play has 1 node with data, traffic needs two"]


def test_not_a_dict_is_refused():
    with pytest.raises(AnsibleFilterError, match="verify_traffic_plan"):
        verify_traffic_plan("node01")


def client(bw, lat):
    return {"ran": True, "tests": {"write_bw": {"bw_gbps": bw}, "read_lat": {"lat_us": lat}}}


def test_rows_judge_each_pair_on_its_own():
    plan = verify_traffic_plan(fleet(4))
    results = [{"run": 0, "client": client(195.0, 2.1)}, {"run": 0, "server": {"ran": True}},
               {"run": 1, "client": client(120.0, 7.5)}, {"run": 1, "server": {"ran": True}}]
    rows = verify_traffic_rows(plan, results=results)
    assert [r["status"] for r in rows] == ["pass", "fail"]
    assert rows[0]["bw_gbps"] == 195.0 and rows[0]["reasons"] == []
    assert rows[1]["reasons"] == ["bandwidth 120 Gb/s is below 180 Gb/s", "latency 7.5 us is above 6 us"]
    assert rows[1]["pair"] == "node03 mlx5_0 -> node04 mlx5_0"


def test_a_pair_whose_server_does_not_answer_fails_alone():
    plan = verify_traffic_plan(fleet(4))
    failed = {"msg": "client ib_write_bw on mlx5_0 port 1 (TCP 18517, server 10.0.0.3): Couldn't connect to 10.0.0.3:18517"}
    results = [{"run": 0, "client": client(195.0, 2.1)}, {"run": 0, "server": {"ran": True}}, {"run": 1, "client": failed}]
    rows = verify_traffic_rows(plan, results=results)
    assert rows[0]["status"] == "pass"
    assert rows[1]["status"] == "fail"
    assert rows[1]["reasons"][0].startswith("client: client ib_write_bw on mlx5_0")
    assert rows[1]["reasons"][1] == "the server node03 gave no result (unreachable, or it failed to start)"


def test_an_unreachable_client_fails_its_pair():
    rows = verify_traffic_rows(verify_traffic_plan(fleet(2)), results=[])
    assert rows[0]["status"] == "fail"
    assert rows[0]["reasons"][0] == "no result from the client node02 (unreachable, or it failed before the batch)"


def test_planned_rows_do_not_fail():
    rows = verify_traffic_rows(verify_traffic_plan(fleet(2)), planned_why="check mode")
    assert rows[0]["status"] == "planned" and rows[0]["reasons"] == ["check mode"]


def test_report_carries_the_traffic_table_and_failures():
    plan = verify_traffic_plan(fleet(2))
    rows = verify_traffic_rows(plan, results=[{"run": 0, "client": client(10.0, 2.0)}, {"run": 0, "server": {"ran": True}}])
    report = verify_checks({}, traffic=rows)
    assert report["ok"] is False
    assert report["failures"] == ["traffic node01 mlx5_0 -> node02 mlx5_0: bandwidth 10 Gb/s is below 180 Gb/s"]
    assert report["summary"].endswith("traffic: 0 of 1 runs pass")
    text = verify_report(report)
    assert "Traffic (ib_write_bw, ib_read_lat):" in text
    assert [line.split() for line in text.splitlines() if line.startswith("node01")] == [
        ["node01", "mlx5_0/1", "node02", "mlx5_0/1", "200", "10", "180", "2", "6", "FAIL"]]
    html = verify_report(report, "html")
    assert "<h2>Traffic</h2>" in html and '<td class="fail">FAIL</td>' in html
    assert '<p class="summary fail">' in html


def test_report_without_traffic_has_no_section():
    report = verify_checks({})
    assert "traffic" not in report
    assert "Traffic" not in verify_report(report)
