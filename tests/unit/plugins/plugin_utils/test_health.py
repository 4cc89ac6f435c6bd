# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""plugin_utils/health: settings refused naming the variable, the judgement per port, the gate's plan."""

from __future__ import annotations

import pytest

from ansible_collections.fabric.infiniband.plugins.plugin_utils import health


def port(name="mlx5_0/1", model="ConnectX-6", width="4X", speed="HDR", state="ACTIVE", phys="LinkUp", growth=None,
         flaps=0, layer="InfiniBand", is_vf=False):
    device = name.split("/")[0]
    return {"name": name, "device": device, "port": 1, "model": model, "width": width, "speed": speed, "state": state,
            "physical_state": phys, "link_layer": layer, "is_vf": is_vf, "rate": "x",
            "growth": dict(dict.fromkeys(health.DEFAULT_THRESHOLDS, 0), **(growth or {})),
            "link_downed_since_last_run": flaps}


def test_a_clean_node_passes_with_a_row_per_ib_port():
    result = health.judge([port(), port("mlx5_1/1"), port("mlx5_2/1", layer="Ethernet"), port("mlx5_3/1", is_vf=True)], {})
    assert result["passed"] is True and result["failures"] == []
    assert [r["port"] for r in result["rows"]] == ["mlx5_0/1", "mlx5_1/1"]
    assert all(r[c] == "ok" for r in result["rows"] for c in health.CHECKS)


@pytest.mark.parametrize("kwargs, check, code, reason", [
    ({"width": "1X"}, "width", "link-degraded", "mlx5_0/1: width 1X, expected 4X"),
    ({"speed": "EDR"}, "speed", "link-degraded", "mlx5_0/1: speed EDR, expected HDR"),
    ({"growth": {"symbol_error": 12}}, "errors", "port-errors", "mlx5_0/1: symbol_error +12 (threshold 0) in 1s"),
    ({"flaps": 2}, "flaps", "link-flapping", "mlx5_0/1: link went down 2 times since the last run"),
    ({"state": "INIT"}, "state", "port-down", "mlx5_0/1: state INIT, expected ACTIVE"),
])
def test_each_failure_has_its_reason(kwargs, check, code, reason):
    result = health.judge([port(**kwargs)], {})
    assert result["passed"] is False
    assert result["failures"][0] == {"port": "mlx5_0/1", "check": check, "code": code, "reason": reason}
    assert result["rows"][0][check] == "FAIL" and result["rows"][0]["result"] == "FAIL"


def test_a_down_port_is_not_judged_on_width():
    result = health.judge([port(state="DOWN", phys="Disabled", width="4X", speed="SDR")], {})
    row = result["rows"][0]
    assert (row["state"], row["physical_state"], row["width"], row["speed"]) == ("FAIL", "FAIL", "-", "-")
    assert [f["check"] for f in result["failures"]] == ["state", "physical_state"]


def test_expected_per_model_rail_device_and_port():
    settings = {"verify_health_expected": {"models": {"ConnectX-6": {"speed": "EDR"}}, "rails": {1: {"width": "2x"}},
                                           "ports": {"mlx5_2": {"up": False}, "mlx5_3/1": {"speed": "hdr"}}}}
    ports = [port(speed="EDR"), port("mlx5_1/1", speed="EDR", width="2X"), port("mlx5_2/1", state="DOWN"),
             port("mlx5_3/1")]
    result = health.judge(ports, settings)
    assert result["passed"] is True, result["failures"]
    assert result["rows"][2]["result"] == "-" and result["rows"][2]["reasons"] == ["not expected up"]
    # unknown model: the speed is not judged, the width is
    result = health.judge([port(model=None, speed="QDR")], {})
    assert result["passed"] and result["rows"][0]["speed"] == "-"


def test_thresholds_allow_some_growth():
    settings = {"verify_health_thresholds": {"symbol_error": 20, "link_downed_since_last_run": "3"},
                "verify_health_interval": 5}
    assert health.judge([port(growth={"symbol_error": 20}, flaps=3)], settings)["passed"]
    result = health.judge([port(growth={"symbol_error": 21, "port_rcv_errors": 1})], settings)
    assert result["failures"][0]["reason"] == ("mlx5_0/1: port_rcv_errors +1 (threshold 0), symbol_error +21 "
                                               "(threshold 20) in 5s")


@pytest.mark.parametrize("settings, says", [
    ({"verify_health_thresholds": {"symbol_error": "many"}}, "verify_health_thresholds.symbol_error must be a number"),
    ({"verify_health_thresholds": {"symbol_error": -1}}, "verify_health_thresholds.symbol_error must be 0 or more"),
    ({"verify_health_thresholds": {"symbol_error": True}}, "verify_health_thresholds.symbol_error must be a number"),
    ({"verify_health_thresholds": {"symbol_errors": 1}},
     "verify_health_thresholds.symbol_errors is not a counter this check knows"),
    ({"verify_health_thresholds": [1]}, "verify_health_thresholds must be a mapping"),
    ({"verify_health_expected": {"model": {}}}, "verify_health_expected.model is unknown"),
    ({"verify_health_expected": {"ports": {"mlx5_0/1": {"width": "3X"}}}},
     "verify_health_expected.ports.mlx5_0/1.width must be one of"),
    ({"verify_health_expected": {"models": {"ConnectX-7": {"speed": "GDR"}}}},
     "verify_health_expected.models.ConnectX-7.speed must be one of"),
    ({"verify_health_expected": {"rails": {"first": {"width": "4X"}}}}, "verify_health_expected.rails.first: a rail"),
    ({"verify_health_expected": {"ports": {"mlx5_0": {"up": "no"}}}}, "verify_health_expected.ports.mlx5_0.up must be"),
    ({"verify_health_max_drain": "lots"}, "verify_health_max_drain must be a whole number"),
    ({"verify_health_max_drain": -2}, "verify_health_max_drain must be 0 or more"),
    ({"verify_health_max_drain": "120%"}, "verify_health_max_drain must be at most 100%"),
    ({"verify_health_interval": "soon"}, "verify_health_interval must be a number of seconds"),
    ({"verify_health_taint_key": "Fabric.Infiniband/bad"}, "no valid DNS subdomain prefix"),
    ({"verify_health_taint_key": "fabric.infiniband/-bad"}, "the name after the prefix"),
    ({"verify_health_taint_key": "a/b/c"}, "no valid DNS subdomain prefix"),
    ({"verify_health_gate": "yes"}, "verify_health_gate must be true or false"),
])
def test_bad_settings_are_refused_naming_the_variable(settings, says):
    problems = health.check_settings(settings, 4)
    assert len(problems) == 1 and says in problems[0], problems


def test_good_settings_pass():
    assert health.check_settings({"verify_health_thresholds": {"symbol_error": 10, "port_xmit_discards": 2.5},
                                  "verify_health_max_drain": "25%", "verify_health_taint_key": "example.com/ib",
                                  "verify_health_gate": True}, 8) == []


@pytest.mark.parametrize("value, total, limit", [(2, 10, 2), ("10%", 30, 3), ("10%", 3, 1), ("0%", 3, 0), ("50 %", 5, 2),
                                                 ("1", 5, 1), (0, 5, 0)])
def test_max_drain(value, total, limit):
    assert health.max_drain(value, total) == (limit, None)


def healthy():
    return {"passed": True, "failures": []}


def sick(code="link-degraded", reason="mlx5_0/1: width 1X, expected 4X"):
    return {"passed": False, "failures": [{"port": "mlx5_0/1", "check": "width", "code": code, "reason": reason}]}


def test_gate_drains_and_taints_a_failing_node_and_returns_only_what_it_took_out():
    results = {"node01": sick(), "node02": healthy(), "node03": healthy(), "node04": healthy()}
    slurm = {"node01": {"node": "node01", "state": "IDLE", "reason": None},
             "node02": {"node": "node02", "state": "IDLE+DRAIN", "reason": "fabric.infiniband: mlx5_0/1: ..."},
             "node03": {"node": "node03", "state": "DRAINED", "reason": "bad DIMM"}}
    taints = {"node01": [], "node04": [{"key": health.DEFAULT_TAINT_KEY, "value": "port-errors", "effect": "NoSchedule"}],
              "node02": [{"key": "other/key", "value": "x", "effect": "NoSchedule"}]}
    plan = health.gate_plan(results, 1, slurm, taints)
    assert plan["refused"] is None
    assert plan["drain"] == [{"host": "node01", "node": "node01",
                              "reason": "fabric.infiniband: mlx5_0/1: width 1X, expected 4X"}]
    assert plan["resume"] == [{"host": "node02", "node": "node02"}]  # ours: returned
    assert plan["left"][0]["host"] == "node03" and "bad DIMM" in plan["left"][0]["why"]  # an admin's: never
    assert plan["taint"] == [{"host": "node01", "code": "link-degraded"}]
    assert plan["untaint"] == [{"host": "node04"}]  # another key on node02 is not ours


def test_gate_is_idempotent():
    slurm = {"node01": {"node": "node01", "state": "DRAINED", "reason": "fabric.infiniband: x"}}
    taints = {"node01": [{"key": health.DEFAULT_TAINT_KEY, "value": "link-degraded", "effect": "NoSchedule"}]}
    plan = health.gate_plan({"node01": sick()}, 1, slurm, taints)
    assert plan["drain"] == plan["taint"] == plan["resume"] == plan["untaint"] == []


def test_gate_refuses_above_max_drain_and_takes_no_node_out():
    results = {"node%02d" % i: sick() for i in range(1, 4)}
    results["node04"] = healthy()
    plan = health.gate_plan(results, 2, {"node01": {"state": "IDLE"}}, {"node01": []})
    assert plan["drain"] == plan["taint"] == []
    assert plan["refused"].startswith("3 of 4 nodes fail the fabric health check (node01, node02, node03), more than "
                                      "verify_health_max_drain allows (2): a fabric-wide fault")


def test_sinfo_and_scontrol():
    text = ("node01|idle|none\nnode02|drained|fabric.infiniband: mlx5_0/1: width 1X, expected 4X    \n"
            "node02|drained|fabric.infiniband: mlx5_0/1: width 1X, expected 4X\nnode03|draining*|bad|DIMM\n")
    nodes = health.parse_sinfo(text)
    assert nodes["node01"] == {"node": "node01", "state": "IDLE", "reason": None}
    assert nodes["node02"]["reason"] == "fabric.infiniband: mlx5_0/1: width 1X, expected 4X"
    assert nodes["node03"] == {"node": "node03", "state": "DRAINING", "reason": "bad|DIMM"}
    assert health.slurm_argv("node01", "drain", "fabric.infiniband: x y") == [
        "scontrol", "update", "nodename=node01", "state=drain", "reason=fabric.infiniband: x y"]
    assert health.slurm_argv("node01", "resume") == ["scontrol", "update", "nodename=node01", "state=resume"]


def test_taints_after_keeps_other_taints():
    other = {"key": "example.com/gpu", "value": "x", "effect": "NoExecute"}
    key = health.DEFAULT_TAINT_KEY
    assert health.taints_after([other], key, "port-errors") == [other, {"key": key, "value": "port-errors",
                                                                        "effect": "NoSchedule"}]
    assert health.taints_after([other, {"key": key, "value": "a", "effect": "NoSchedule"}], key, None) == [other]


def test_a_row_says_what_was_expected_and_found_per_check():
    row = health.judge([port(width="1X", growth={"symbol_error": 3}, flaps=None)], {})["rows"][0]
    assert row["expected"]["width"] == "4X" and row["found"]["width"] == "1X"
    assert row["found"]["errors"] == "symbol_error +3 (threshold 0)"
    assert row["found"]["flaps"] == "unknown (no last run)" and row["flaps"] == "ok"
