# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""verify_report: the text table and the self-contained HTML page with its SVG topology, for a
fabric with a failing node."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.fabric.infiniband.plugins.filter.verify_checks import verify_checks
from ansible_collections.fabric.infiniband.plugins.filter.verify_report import verify_report
from ansible_collections.fabric.infiniband.tests.unit.plugins.filter.test_verify_checks import _lab_nodes, _topology

SVG_NS = "{http://www.w3.org/2000/svg}"


def _failing_report():
    nodes = _lab_nodes()
    nodes["node01"]["hca"]["rdma_system"]["netns_mode"] = "shared"
    nodes["node02"]["hca"]["hcas"][0]["ports"][0]["description"] = "<b>"  # nothing of a node reaches the page unescaped
    return verify_checks(nodes, topology=_topology(), topology_host="node01")


def test_text_table():
    text = verify_report(_failing_report(), "text")
    lines = text.splitlines()
    assert lines[0].split() == ["host", "firmware", "link", "layer", "port", "state", "width", "speed", "errors", "flaps",
                                "SM", "netns", "VFs", "VF", "GUIDs", "P_Keys",
                                "pending", "in", "fabric", "result"]
    # no firmware_versions: the firmware check is not asked
    assert lines[2].split() == ["node01", "-", "ok", "ok", "-", "-", "-", "-", "ok", "FAIL", "-", "-", "ok", "ok", "ok", "FAIL"]
    assert lines[3].split() == ["node02", "-", "ok", "ok", "-", "-", "-", "-", "ok", "ok", "ok", "ok", "ok", "ok", "ok", "ok"]
    assert "1 of 3 nodes fail 1 checks: node01" in lines
    assert "topology from node01: 1 switches, 4 HCAs, 4 links" in lines
    assert lines[-1] == "  node01: RDMA netns mode: expected exclusive, found shared"


def test_html_is_self_contained_with_marked_cells_and_topology():
    page = verify_report(_failing_report(), "html", title="Lab <fabric>")
    assert page.startswith("<!DOCTYPE html>")
    assert "<title>Lab &lt;fabric&gt;</title>" in page
    # no external assets or scripts
    assert not re.search(r"<script|<link|src=|href=|@import|url\(", page)
    assert page.count('<td class="fail">FAIL</td>') == 2  # the netns cell and the result of node01
    assert "<li>node01: RDMA netns mode: expected exclusive, found shared</li>" in page
    svg = ET.fromstring(re.search(r"<svg.*</svg>", page, re.S).group(0))
    texts = [t.text for t in svg.iter(SVG_NS + "text")]
    for host in ("node01", "node02", "node03"):
        assert host in texts
    assert "Switch1" in texts
    boxes = {g.get("class"): 0 for g in svg.iter(SVG_NS + "g") if g.get("class")}
    for g in svg.iter(SVG_NS + "g"):
        if g.get("class"):
            boxes[g.get("class")] += 1
    assert boxes == {"hca fail": 2, "hca ok": 2}  # node01's two functions fail
    assert len(list(svg.iter(SVG_NS + "line"))) == 4
    # the switch ports (1 to 4) and each HCA's port 1 label the links
    assert sorted(t for t in texts if t.isdigit()) == ["1", "1", "1", "1", "1", "2", "3", "4"]


def test_layout_switches_in_a_row_hcas_below():
    report = _failing_report()
    second = dict(report["fabric"]["switches"][0], guid="0x0000000000300000", description="Switch2")
    report["fabric"]["switches"].append(second)
    report["fabric"]["links"].append({"from": {"guid": "0x0000000000200000", "port": 36, "type": "switch"},
                                      "to": {"guid": "0x0000000000300000", "port": 1, "type": "switch"},
                                      "width": "4x", "speed": "HDR", "complete": True})
    svg = ET.fromstring(re.search(r"<svg.*</svg>", verify_report(report, "html"), re.S).group(0))
    rects = [r for r in svg.iter(SVG_NS + "rect") if r.get("fill") == "#cfd8dc"]
    assert len({r.get("y") for r in rects}) == 1  # both switches in one row
    hca_rects = [g.find(SVG_NS + "rect") for g in svg.iter(SVG_NS + "g") if (g.get("class") or "").startswith("hca")]
    assert min(float(r.get("y")) for r in hca_rects) > float(rects[0].get("y"))
    assert len(list(svg.iter(SVG_NS + "path"))) == 1  # the switch-to-switch link


def test_no_topology_says_why():
    report = verify_checks(_lab_nodes(), topology={"failed": True, "msg": "no umad"}, topology_host="node01")
    assert "No topology: no umad" in verify_report(report, "html")
    assert "topology: no umad" in verify_report(report, "text")


def test_bad_input():
    with pytest.raises(AnsibleFilterError, match="result of fabric.infiniband.verify_checks"):
        verify_report({}, "text")
    with pytest.raises(AnsibleFilterError, match="format must be text or html"):
        verify_report(_failing_report(), "pdf")


def _waiting_report():
    from ansible_collections.fabric.infiniband.tests.unit.plugins.filter.test_verify_checks import _waiting_nodes, PARTITIONS
    return verify_checks(_waiting_nodes(), topology=_topology(), topology_host="node01", partitions=PARTITIONS,
                         groups={"all": ["node01", "node02", "node03"]})


def test_text_table_shows_waiting_apart_from_failing():
    lines = verify_report(_waiting_report(), "text").splitlines()
    # columns: host, firmware, link layer, port state, SM, netns, VFs, VF GUIDs, P_Keys, pending, in fabric, result
    assert lines[2].split() == ["node01", "-", "WAITING", "ok", "-", "-", "-", "-", "ok", "ok", "-", "-", "ok", "WAITING", "ok", "WAITING"]
    assert lines[3].split() == ["node02", "-", "ok", "ok", "-", "-", "-", "-", "ok", "FAIL", "WAITING", "WAITING", "ok", "WAITING", "ok", "FAIL"]
    assert lines[4].split()[-1] == "ok"
    assert "1 of 3 nodes fail 1 checks: node02; 1 of 3 nodes wait for a reboot: node01" in lines
    start = lines.index("Failing checks:")
    assert lines[start + 1] == "  node02: RDMA netns mode: expected exclusive, found shared"
    assert lines[-2:] == ["  node01: waits for a reboot for link_type (LINK_TYPE_P1 of 0000:3b:00.0 is IB at the next boot)",
                          "  node02: waits for a power cycle for sriov (NUM_OF_VFS of 0000:c1:00.0 is 2 at the next boot)"]
    assert lines[-3].startswith("Waiting for a reboot")


def test_html_shows_waiting_in_its_own_colour_and_word():
    page = verify_report(_waiting_report(), "html")
    # node01: link layer and pending cells and its result; node02: VFs, VF GUIDs and pending
    assert page.count('<td class="waiting">WAITING</td>') == 6
    assert page.count('<td class="fail">FAIL</td>') == 2  # node02's netns cell and result
    assert "td.waiting{background:#fff3d6;" in page
    assert '<p class="summary fail">' in page
    assert "<h2>Waiting for a reboot</h2>" in page and "<li>node01: waits for a reboot for link_type" in page
    svg = ET.fromstring(re.search(r"<svg.*</svg>", page, re.S).group(0))
    classes = sorted(g.get("class") for g in svg.iter(SVG_NS + "g") if g.get("class"))
    assert classes == ["hca fail", "hca ok", "hca waiting", "hca waiting"]
    rects = [r for g in svg.iter(SVG_NS + "g") if g.get("class") == "hca waiting" for r in g.iter(SVG_NS + "rect")]
    assert {r.get("fill") for r in rects} == {"#fff3d6"}
    assert '<span style="background:#fff3d6;color:#b26a00">node waits for a reboot</span>' in page


def test_only_waiting_page_summary_is_amber():
    from ansible_collections.fabric.infiniband.tests.unit.plugins.filter.test_verify_checks import _waiting_nodes
    nodes = _waiting_nodes()
    nodes["node02"]["hca"]["rdma_system"]["netns_mode"] = "exclusive"
    page = verify_report(verify_checks(nodes, topology=_topology(), topology_host="node01"), "html")
    assert '<p class="summary waiting">' in page and "<h2>Failing checks</h2>" not in page


def _firmware_report():
    """The lab's rules; node01's second function still runs the version before the burn, node02's ConnectX-7 runs a newer
    version than its at_least rule asks, node03's first function waits for the firmware role's activation."""
    from ansible_collections.fabric.infiniband.tests.unit.plugins.filter.test_verify_checks import _firmware_nodes
    nodes = _firmware_nodes()
    nodes["node01"]["hca"]["hcas"][1]["firmware_version"] = "20.39.1002"
    nodes["node03"]["hca"]["hcas"][0]["firmware_version"] = "16.34.1002"
    nodes["node03"]["pending"] = {"entries": {"firmware": {"action": "fw_reset", "reason": "burnt", "booted_since": False}}}
    return verify_checks(nodes, topology=_topology(), topology_host="node01")


def test_text_has_the_firmware_column_and_table():
    text = verify_report(_firmware_report(), "text")
    lines = text.splitlines()
    assert lines[2].split()[:2] == ["node01", "FAIL"] and lines[3].split()[:2] == ["node02", "ok"]
    assert lines[4].split()[:2] == ["node03", "WAITING"]
    start = lines.index("Firmware (the running version of each RDMA device; asked: what the entry of firmware_versions that "
                        "names the card asks):")
    assert lines[start + 1].split() == ["host", "device", "PCI", "address", "model", "PSID", "running", "asked", "firmware_versions",
                                        "result"]
    assert set(lines[start + 2].replace(" ", "")) == {"-"}
    assert lines[start + 3:start + 8] == [
        "node01  mlx5_0  0000:3b:00.0  ConnectX-6  MT_0000000223  20.40.1000  20.40.1000     [0]                ok",
        "node01  mlx5_1  0000:3b:00.1  ConnectX-6  MT_0000000223  20.39.1002  20.40.1000     [0]                FAIL",
        "node02  mlx5_0  0000:c1:00.0  ConnectX-7  MT_0000000834  28.40.1000  >= 28.39.1002  [1]                ok",
        "node03  mlx5_0  0000:86:00.0  ConnectX-5  MT_0000000008  16.34.1002  16.35.3006     [2]                WAITING",
        "node03  mlx5_1  0000:86:00.1  ConnectX-5  MT_0000000008  16.35.3006  16.35.3006     [2]                ok"]
    assert lines[start + 8] == ""
    assert ("  node01: firmware of mlx5_1 (0000:3b:00.1, ConnectX-6, PSID MT_0000000223): expected 20.40.1000 (firmware_versions[0]), "
            "found 20.39.1002; the firmware role burns the asked image from firmware_images; a burnt image that waits for its "
            "activation shows in the pending column and makes this check wait") in lines


def test_text_firmware_table_without_rules_shows_the_versions():
    lines = verify_report(_failing_report(), "text").splitlines()
    start = [i for i, line in enumerate(lines) if line.startswith("Firmware (")][0]
    assert lines[start + 3].split() == ["node01", "mlx5_0", "0000:3b:00.0", "ConnectX-6", "MT_0000000223", "20.40.1000", "-", "-", "-"]
    assert len([line for line in lines[start + 3:] if line.startswith("node")]) == 5  # every PF's RDMA device, no VF


def test_html_has_the_firmware_table():
    page = verify_report(_firmware_report(), "html")
    table = re.search(r"<h2>Firmware</h2>.*?</table>", page, re.S).group(0)
    assert "<th>running</th><th>asked</th><th>firmware_versions</th><th>result</th>" in table
    assert ('<tr><td class="host">node01</td><td>mlx5_1</td><td>0000:3b:00.1</td><td>ConnectX-6</td><td>MT_0000000223</td>'
            '<td>20.39.1002</td><td>20.40.1000</td><td>[0]</td><td class="fail">FAIL</td></tr>') in table
    assert ('<td>28.40.1000</td><td>&gt;= 28.39.1002</td><td>[1]</td><td class="ok">ok</td></tr>') in table
    assert '<td>16.34.1002</td><td>16.35.3006</td><td>[2]</td><td class="waiting">WAITING</td></tr>' in table
    assert table.count("<tr>") == 6  # the titles and the five devices
    # the firmware table comes after the nodes' table
    assert page.index("<h2>Nodes</h2>") < page.index("<h2>Firmware</h2>")


def test_a_report_without_firmware_rows_has_no_firmware_table():
    report = _failing_report()
    for entry in report["hosts"]:
        del entry["firmware"]
    assert "Firmware (" not in verify_report(report, "text") and "<h2>Firmware</h2>" not in verify_report(report, "html")


def test_an_unpaired_rail_prints_no_empty_hca_port():
    """The issue 35 stale item: an unpaired rail printed "-/-" (and "mlx5_1/-") for what it does not have."""
    from ansible_collections.fabric.infiniband.plugins.filter.verify_report import _traffic_cells
    cells = _traffic_cells({"server": "node01", "server_hca": "mlx5_1", "client": "node02", "status": "unpaired"})
    assert cells[:4] == ["node01", "mlx5_1", "node02", "-"]
    cells = _traffic_cells({"server": "node01", "server_hca": "mlx5_0", "server_port": 1, "client": "node02",
                            "client_hca": "mlx5_2", "client_port": 1, "status": "planned"})
    assert cells[:4] == ["node01", "mlx5_0/1", "node02", "mlx5_2/1"]
