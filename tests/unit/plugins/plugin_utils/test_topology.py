# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""plugin_utils/topology.py: the fabric's tree for Slurm's topology.conf and the Kubernetes node labels."""

from __future__ import annotations

import json
import os

import pytest

from ansible.errors import AnsibleError

from ansible_collections.fabric.infiniband.plugins.module_utils import ibnetdiscover
from ansible_collections.fabric.infiniband.plugins.plugin_utils import topology

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(__file__)), "module_utils", "fixtures", "ibnetdiscover")
LAB_PATTERN = r"^(\S+?)-[0-9a-fA-F]{4}:"


def _read(name):
    with open(os.path.join(FIXTURES, name)) as handle:
        return handle.read()


def two_level_fabric():
    """A fat tree in ibnetdiscover's topology file grammar: two managed spines over two leaves, four hosts (node01 with
    two rails on two leaves), and gpu99 which no inventory names."""
    spines = {"0x0000000000000a01": "MF0;spine01:MQM8700/U1", "0x0000000000000a02": "MF0;spine02:MQM8700/U1"}
    leaves = {"0x0000000000000b01": "leaf 1", "0x0000000000000b02": "leaf 2"}
    hcas = [  # guid, description, leaf, leaf port
        ("0x0000000000000c01", "node01 mlx5_0", "0x0000000000000b01", 1),
        ("0x0000000000000c02", "node01 mlx5_1", "0x0000000000000b02", 1),
        ("0x0000000000000c03", "node02 mlx5_0", "0x0000000000000b01", 2),
        ("0x0000000000000c04", "node03.example.com mlx5_0", "0x0000000000000b02", 2),
        ("0x0000000000000c05", "gpu99 mlx5_0", "0x0000000000000b02", 3),
    ]
    blocks = []
    for index, (sguid, desc) in enumerate(sorted(spines.items()), 1):
        ports = ['[%d]\t"S-%s"[%d]\t\t# "%s" lid %d 4xHDR' % (n, lguid[2:], 10 + index, leaves[lguid], 10 + n)
                 for n, lguid in enumerate(sorted(leaves), 1)]
        blocks.append('switchguid=%s(%s)\nSwitch\t40 "S-%s"\t\t# "%s" enhanced port 0 lid %d lmc 0\n%s'
                      % (sguid, sguid[2:], sguid[2:], desc, index, "\n".join(ports)))
    for n, (lguid, desc) in enumerate(sorted(leaves.items()), 1):
        ports = ['[%d]\t"H-%s"[1](%x)\t\t# "%s" lid %d 4xHDR' % (port, guid[2:], int(guid, 16) + 1, hdesc, 20 + port)
                 for guid, hdesc, leaf, port in hcas if leaf == lguid]
        ports += ['[%d]\t"S-%s"[%d]\t\t# "%s" lid %d 4xHDR' % (10 + i, sguid[2:], n, spines[sguid], i)
                  for i, sguid in enumerate(sorted(spines), 1)]
        blocks.append('switchguid=%s(%s)\nSwitch\t40 "S-%s"\t\t# "%s" enhanced port 0 lid %d lmc 0\n%s'
                      % (lguid, lguid[2:], lguid[2:], desc, 10 + n, "\n".join(ports)))
    for guid, hdesc, leaf, port in hcas:
        blocks.append('caguid=%s\nCa\t1 "H-%s"\t\t# "%s"\n[1](%x)\t"S-%s"[%d]\t\t# lid %d lmc 0 "%s" lid 1 4xHDR'
                      % (guid, guid[2:], hdesc, int(guid, 16) + 1, leaf[2:], port, 20 + port, leaves[leaf]))
    return ibnetdiscover.parse("\n\n".join(blocks) + "\n")


INVENTORY = ["node01", "node02", "node03.example.com", "node04"]


def test_two_level_tree_topology_conf_and_reports():
    result = topology.plan(two_level_fabric(), INVENTORY, {})
    # "leaf 1" and "leaf 2" both give "leaf": ambiguous, so both fall back to their GUIDs
    assert result["levels"][0] == {"ib-0000000000000b01": ["node01", "node02"],
                                   "ib-0000000000000b02": ["node01", "node03.example.com"]}
    assert result["levels"][1] == {"spine01": ["ib-0000000000000b01", "ib-0000000000000b02"],
                                   "spine02": ["ib-0000000000000b01", "ib-0000000000000b02"]}
    assert result["conf"].splitlines()[1:] == [
        "SwitchName=ib-0000000000000b01 Nodes=node01,node02",
        "SwitchName=ib-0000000000000b02 Nodes=node01,node03.example.com",
        "SwitchName=spine01 Switches=ib-0000000000000b01,ib-0000000000000b02",
        "SwitchName=spine02 Switches=ib-0000000000000b01,ib-0000000000000b02",
    ]
    assert result["missing"] == ["node04"]
    assert result["unknown"] == ["gpu99"]


def test_aliases_name_switches_and_labels_follow_the_single_leaf():
    aliases = {"0xb01": "leaf01", "0000000000000b02": "leaf02"}
    result = topology.plan(two_level_fabric(), INVENTORY, {"topology_switch_aliases": aliases})
    assert result["levels"][0] == {"leaf01": ["node01", "node02"], "leaf02": ["node01", "node03.example.com"]}
    leaf = topology.DEFAULT_LABELS["leaf"]
    # node02 and node03 hang off one leaf; every host hangs off both spines: no spine label (one value per label)
    assert result["labels"]["node02"] == {leaf: "leaf01"}
    assert result["labels"]["node03.example.com"] == {leaf: "leaf02"}
    assert result["labels"]["node01"] == {}
    assert result["multi"]["node01"] == {"leaf": ["leaf01", "leaf02"], "spine": ["spine01", "spine02"]}


def test_one_spine_gives_the_spine_label():
    fabric = two_level_fabric()
    spine2 = "0x0000000000000a02"
    fabric["links"] = [link for link in fabric["links"] if spine2 not in (link["from"]["guid"], link["to"]["guid"])]
    fabric["switches"] = [s for s in fabric["switches"] if s["guid"] != spine2]
    result = topology.plan(fabric, ["node02"], {"topology_switch_aliases": {"0xb01": "leaf01", "0xb02": "leaf02"}})
    assert result["labels"] == {"node02": {"network.topology.nvidia.com/leaf": "leaf01",
                                           "network.topology.nvidia.com/spine": "spine01"}}
    # leaf02 holds no inventory host: it is left out, and so is the spine's link to it
    assert result["conf"].splitlines()[1:] == ["SwitchName=leaf01 Nodes=node02", "SwitchName=spine01 Switches=leaf01"]
    assert result["unknown"] == ["gpu99", "node01", "node03.example.com"]


def test_the_lab_fabric_one_switch_with_the_lab_pattern():
    fabric = ibnetdiscover.parse(_read("lab_ibsim_diags44.txt"))
    result = topology.plan(fabric, ["node01", "node02", "node03"], {"topology_hca_name_pattern": LAB_PATTERN})
    assert result["conf"].splitlines()[1:] == ["SwitchName=Switch1 Nodes=node01,node02,node03"]
    assert result["missing"] == [] and result["unknown"] == []
    assert result["labels"]["node02"] == {"network.topology.nvidia.com/leaf": "Switch1"}


def test_the_default_pattern_does_not_guess_the_lab_names():
    fabric = ibnetdiscover.parse(_read("lab_ibsim_diags44.txt"))
    result = topology.plan(fabric, ["node01", "node02", "node03"], {})
    assert result["missing"] == ["node01", "node02", "node03"]
    assert "node01-0000:3b:00.0" in result["unknown"]
    assert result["levels"] == [{}]


def test_map_by_port_guid_from_the_hosts_facts():
    fabric = ibnetdiscover.parse(_read("lab_ibsim_diags44.txt"))
    guids = {"node01": ["0x0c42a10300aa0010", "0x0c42a10300aa0011"], "node03": ["98039b0300c0ff10"]}
    result = topology.plan(fabric, ["node01", "node03"], {"topology_map_by": "port_guid"}, guids=guids)
    assert result["levels"][0] == {"Switch1": ["node01", "node03"]}
    assert result["unknown"] == ["node02-0000:c1:00.0"]


def test_switch_names_from_guid_mode():
    names = topology.switch_names([{"guid": "0x200000", "description": "Switch1"}], mode="guid")
    assert names == {"0x0000000000200000": "ib-0000000000200000"}


@pytest.mark.parametrize("settings, says", [
    ({"topology_hca_name_pattern": "(unclosed"}, "topology_hca_name_pattern"),
    ({"topology_hca_name_pattern": r"^\S+"}, "captures the host name"),
    ({"topology_map_by": "hostname"}, "topology_map_by must be one of description, port_guid"),
    ({"topology_switch_names": "lid"}, "topology_switch_names must be one of description, guid"),
    ({"topology_k8s_labels": {"leaf": "Bad Key"}}, "topology_k8s_labels.leaf is not a Kubernetes label key"),
    ({"topology_k8s_labels": {"leaf": "UPPER.example/leaf"}}, "prefix"),
    ({"topology_k8s_labels": {"rack": "example.com/rack"}}, "unknown level 'rack'"),
    ({"topology_k8s_labels": ["a"]}, "topology_k8s_labels must be a mapping"),
    ({"topology_switch_aliases": {"0xzz": "leaf01"}}, "topology_switch_aliases: '0xzz'"),
    ({"topology_switch_aliases": {"0xb01": "leaf 01"}}, "topology_switch_aliases[0xb01]"),
])
def test_bad_settings_are_refused_naming_the_variable(settings, says):
    with pytest.raises(AnsibleError) as err:
        topology.plan(two_level_fabric(), INVENTORY, settings)
    assert says in str(err.value)
    assert "Nothing was changed" in str(err.value)


def test_label_patch_sets_removes_its_own_and_leaves_others():
    keys = topology.DEFAULT_LABELS.values()
    leaf, spine = topology.DEFAULT_LABELS["leaf"], topology.DEFAULT_LABELS["spine"]
    current = {leaf: "old", spine: "spine01", "example.com/rack": "r1", "kubernetes.io/hostname": "node01"}
    annotations = {topology.OWNER_ANNOTATION: "%s,%s,fabric.example/old-key" % (leaf, spine)}
    current["fabric.example/old-key"] = "x"
    patch = topology.label_patch(current, annotations, {leaf: "leaf01"}, keys)
    assert patch == {"metadata": {"labels": {leaf: "leaf01", spine: None, "fabric.example/old-key": None},
                                  "annotations": {topology.OWNER_ANNOTATION: leaf}}}
    assert topology.label_patch({leaf: "leaf01"}, {topology.OWNER_ANNOTATION: leaf}, {leaf: "leaf01"}, keys) is None
    # a node no longer placed loses the role's labels and its annotation
    assert topology.label_patch({leaf: "leaf01"}, {topology.OWNER_ANNOTATION: leaf}, {}, keys) == {
        "metadata": {"labels": {leaf: None}, "annotations": {topology.OWNER_ANNOTATION: None}}}
    # a node the role never labelled, with nothing to set: untouched
    assert topology.label_patch({"example.com/rack": "r1"}, {}, {}, keys) is None


# The fact infiniband_fabric (issue 34 item 3): the verify role's discovery, for the topology role of the same run.
RUN = "ctl:100:5000"


@pytest.mark.parametrize("build", [lambda: ibnetdiscover.parse(_read("lab_ibsim_diags44.txt")), two_level_fabric])
def test_the_fact_plans_what_the_discovery_plans(build):
    found = dict(build(), changed=False, cmd=["/usr/sbin/ibnetdiscover"])
    fact = topology.fabric_fact(found, RUN, "node01")
    assert fact["run_id"] == RUN and fact["host"] == "node01"
    for settings in ({"topology_hca_name_pattern": LAB_PATTERN}, {}, {"topology_switch_names": "guid"}):
        assert topology.plan(fact, INVENTORY + ["node03"], settings) == topology.plan(found, INVENTORY + ["node03"], settings)
    guids = {"node01": ["0x0c42a10300aa0010", "0x0c42a10300aa0011"]}
    assert topology.plan(fact, ["node01"], {"topology_map_by": "port_guid"}, guids=guids) == \
        topology.plan(found, ["node01"], {"topology_map_by": "port_guid"}, guids=guids)


def test_the_fact_is_small():
    """A fact cache keeps it (jsonfile, redis; AWX's per host): the lab's 3-node fabric in under 1.3 KiB, well under half of
    the module's result; on a fabric of N hosts about 0.25 KiB per CA and its link."""
    found = ibnetdiscover.parse(_read("lab_ibsim_diags44.txt"))
    fact = topology.fabric_fact(found, RUN, "node01")
    size, full = len(json.dumps(fact)), len(json.dumps(found))
    assert size < 1300 and size * 2 < full, (size, full)
    assert sorted(fact) == ["hcas", "host", "links", "run_id", "switches"]
    assert sorted(fact["hcas"][0]) == ["description", "guid", "port_guids", "type"]
    assert fact["links"][0] == {"from": {"guid": found["links"][0]["from"]["guid"], "port": found["links"][0]["from"]["port"]},
                                "to": {"guid": found["links"][0]["to"]["guid"], "port": found["links"][0]["to"]["port"]}}


def test_no_fact_of_a_failed_discovery():
    assert topology.fabric_fact({"failed": True, "msg": "ibnetdiscover could not discover the fabric"}, RUN, "n1") is None
    assert topology.fabric_fact({"skipped": True}, RUN, "n1") is None
    assert topology.fabric_fact(None, RUN, "n1") is None


def test_candidates_discover_from_first_then_here_then_the_sm_and_the_nodes():
    groups = {"all": ["ctl", "node01", "node02", "sm1"], "opensm": ["sm1"], "ib_nodes": ["node01", "node02"]}
    assert topology.fabric_candidates("node02", "ctl", groups) == ["node02", "ctl", "sm1", "node01"]
    assert topology.fabric_candidates("", "ctl", {}) == ["ctl"]


def test_current_fabric_takes_only_this_runs():
    found = ibnetdiscover.parse(_read("lab_ibsim_diags44.txt"))
    facts = {"node01": topology.fabric_fact(found, "ctl:100:4999", "node01"),  # an earlier run's, from a fact cache
             "node02": topology.fabric_fact(found, RUN, "node02"),
             "node03": {"run_id": RUN},  # no fabric in it
             "sm1": topology.fabric_fact(found, RUN, "sm1")}
    read = facts.get
    assert topology.current_fabric(["node01", "node03", "node02", "sm1"], read, run=RUN) == ("node02", facts["node02"])
    assert topology.current_fabric(["sm1", "node02"], read, run=RUN)[0] == "sm1"
    assert topology.current_fabric(["node01", "node03", "ctl"], read, run=RUN) == (None, None)
    assert topology.current_fabric([], read, run=RUN) == (None, None)
