# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The port health columns of the verify report (issue 34): a column per check, a sentence per failing port."""

from __future__ import annotations

from ansible_collections.fabric.infiniband.plugins.filter.verify_checks import verify_checks
from ansible_collections.fabric.infiniband.plugins.filter.verify_report import verify_report
from ansible_collections.fabric.infiniband.plugins.plugin_utils import health
from ansible_collections.fabric.infiniband.tests.unit.plugins.filter.test_verify_checks import _lab_nodes, _topology


def _port(name, model, speed, **kwargs):
    port = {"name": name, "device": name.split("/")[0], "port": 1, "model": model, "width": "4X", "speed": speed,
            "state": "ACTIVE", "physical_state": "LinkUp", "link_layer": "InfiniBand", "is_vf": False, "rate": "x",
            "growth": dict.fromkeys(health.DEFAULT_THRESHOLDS, 0), "link_downed_since_last_run": 0}
    port.update(kwargs)
    return port


def _report(**faults):
    nodes = _lab_nodes()
    ports = {"node01": _port("mlx5_0/1", "ConnectX-6", "HDR"), "node02": _port("mlx5_0/1", "ConnectX-7", "NDR"),
             "node03": _port("mlx5_0/1", "ConnectX-5", "EDR")}
    for host, fault in faults.items():
        ports[host].update(fault)
    for host, port in ports.items():
        nodes[host]["health"] = health.fact("run", health.judge([port], {"verify_health_interval": 2}))
    return verify_checks(nodes, topology=_topology(), topology_host="node01")


def test_a_healthy_fabric_shows_ok_in_the_four_columns():
    lines = verify_report(_report(), "text").splitlines()
    header = lines[0].split()
    assert header[header.index("state") + 1:header.index("state") + 5] == ["width", "speed", "errors", "flaps"]
    for line in lines[2:5]:
        cells = line.split()
        assert cells[4:8] == ["ok", "ok", "ok", "ok"], line


def test_each_failing_port_has_its_column_and_reason():
    growth = dict(dict.fromkeys(health.DEFAULT_THRESHOLDS, 0), symbol_error=11)
    report = _report(node01={"link_downed_since_last_run": 1}, node02={"growth": growth}, node03={"width": "1X"})
    text = verify_report(report, "text")
    lines = text.splitlines()
    assert lines[2].split()[4:8] == ["ok", "ok", "ok", "FAIL"]
    assert lines[3].split()[4:8] == ["ok", "ok", "FAIL", "ok"]
    assert lines[4].split()[4:8] == ["FAIL", "ok", "ok", "ok"]
    assert "  node01: flaps of mlx5_0/1: expected at most 0 since the last run, found 1 since the last run" in lines
    assert "  node02: errors of mlx5_0/1: expected no growth above the thresholds, found symbol_error +11 (threshold 0)" \
        in lines
    assert "  node03: width of mlx5_0/1: expected 4X, found 1X" in lines
    assert '<td class="fail">FAIL</td>' in verify_report(report, "html")
    checks = [c for h in report["hosts"] if h["host"] == "node03" for c in h["checks"] if c["category"] == "width"]
    assert checks == [{"category": "width", "name": "width of mlx5_0/1", "expected": "4X", "actual": "1X", "ok": False,
                       "status": "fail"}]
