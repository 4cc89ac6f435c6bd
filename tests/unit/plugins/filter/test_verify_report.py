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
    assert lines[0].split() == ["host", "firmware", "link", "layer", "port", "state", "SM", "netns", "VFs", "VF", "GUIDs", "P_Keys",
                                "pending", "in", "fabric", "result"]
    # no firmware_versions: the firmware check is not asked
    assert lines[2].split() == ["node01", "-", "ok", "ok", "ok", "FAIL", "-", "-", "ok", "ok", "ok", "FAIL"]
    assert lines[3].split() == ["node02", "-", "ok", "ok", "ok", "ok", "ok", "ok", "ok", "ok", "ok", "ok"]
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
    assert lines[2].split() == ["node01", "-", "WAITING", "ok", "ok", "ok", "-", "-", "ok", "WAITING", "ok", "WAITING"]
    assert lines[3].split() == ["node02", "-", "ok", "ok", "ok", "FAIL", "WAITING", "WAITING", "ok", "WAITING", "ok", "FAIL"]
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

