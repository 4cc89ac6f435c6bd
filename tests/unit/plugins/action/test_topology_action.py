# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""plugins/action/topology.py: what it reads back from Slurm."""

from __future__ import annotations

from ansible_collections.fabric.infiniband.plugins.action.topology import expand_hostlist, parse_show_topology

# Slurm 22.05 (Debian 12), as recorded in the lab, and a two-level tree in the same format.
SHOWN_LAB = "SwitchName=Switch1 Level=0 LinkSpeed=1 Nodes=node[01-03]\n"
SHOWN_TREE = """SwitchName=leaf01 Level=0 LinkSpeed=1 Nodes=node[01-02]
SwitchName=leaf02 Level=0 LinkSpeed=1 Nodes=node[03,05-06],gpu1
SwitchName=spine01 Level=1 LinkSpeed=1 Nodes=node[01-03,05-06],gpu1 Switches=leaf[01-02]
"""


def test_expand_hostlist():
    assert expand_hostlist("node[01-03,05],gpu1,x[8-10]") == ["node01", "node02", "node03", "node05", "gpu1", "x8", "x9", "x10"]
    assert expand_hostlist("") == []
    assert expand_hostlist("a.example.com") == ["a.example.com"]


def test_parse_show_topology():
    assert parse_show_topology(SHOWN_LAB) == [{"Switch1": ["node01", "node02", "node03"]}]
    assert parse_show_topology(SHOWN_TREE) == [
        {"leaf01": ["node01", "node02"], "leaf02": ["gpu1", "node03", "node05", "node06"]},
        {"spine01": ["leaf01", "leaf02"]},
    ]
    assert parse_show_topology("topology/tree: no switches configured\n") == []
