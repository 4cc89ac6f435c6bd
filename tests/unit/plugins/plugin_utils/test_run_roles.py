# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The roles a run applies to a host, read from its playbooks (issue 32: the whole-run preflight keeps no list of roles by
hand; plugins/plugin_utils/run_roles.py). The collection's own playbooks are read as they are, so that a role added to a
play of site.yml is checked by the preflight, and one taken out is not."""

from __future__ import annotations

import os

import jinja2
import pytest
import yaml

from ansible_collections.fabric.infiniband.plugins.plugin_utils import run_roles

PLAYBOOKS = run_roles.PLAYBOOKS_DIR
GROUPS = {"all": ["node01", "node02", "sm1", "gpu1", "k8s1"], "ib_nodes": ["node01", "node02", "gpu1"], "opensm": ["sm1"],
          "gpu_nodes": ["gpu1"], "k8s_control": ["k8s1"], "slurm_control": ["node01"]}
NODE_ROLES = ["rdma_stack", "firmware", "link_type", "node_reboot", "rdma_netns", "sriov"]


def template(text):
    """A play's hosts rendered with no variable set (reboot.yml: infiniband_reboot_hosts defaults to ib_nodes)."""
    return jinja2.Template(text).render()


def roles(playbook, host, groups=None):
    return run_roles.run_roles(host, GROUPS if groups is None else groups, template=template,
                               args=[os.path.join(PLAYBOOKS, playbook)])


def test_site_runs_every_role_of_a_node_where_its_groups_say():
    assert roles("site.yml", "node01") == NODE_ROLES + ["ipoib", "verify"]
    assert roles("site.yml", "gpu1") == NODE_ROLES + ["ipoib", "gpudirect", "verify"]
    assert roles("site.yml", "sm1") == ["opensm"]
    assert roles("site.yml", "k8s1") == ["k8s_network"]


def test_each_half_is_its_own_roles():
    assert roles("nodes.yml", "node01") == NODE_ROLES
    assert roles("fabric_cluster.yml", "node01") == ["ipoib", "verify"]
    assert roles("fabric_cluster.yml", "sm1") == ["opensm"]
    assert roles("verify.yml", "node02") == ["verify"]


def test_the_preflight_alone_stands_for_site():
    assert roles("preflight.yml", "node01") == roles("site.yml", "node01")


def test_a_collection_playbook_by_its_name():
    assert run_roles.run_roles("k8s1", GROUPS, template=template, args=["fabric.infiniband.cluster"]) == ["k8s_network"]
    assert run_roles.run_roles("node01", GROUPS, template=template, args=["fabric.infiniband.nodes"]) == NODE_ROLES


def test_a_users_playbook_adds_a_role_to_the_run(tmp_path):
    """A role added to a play is checked: a user's playbook after site.yml, with a role of the collection by its full name, in
    a block, as import_role and include_role; another collection's role, and one of the collection's other entry points, are
    not this role's run."""
    tasks = [{"block": [{"ansible.builtin.include_role": {"name": "fabric.infiniband.ipoib"}}]},
             {"ansible.builtin.import_role": {"name": "fabric.infiniband.k8s_network", "tasks_from": "cni_binaries"}},
             {"import_role": {"name": "verify"}}]
    play = [{"hosts": "slurm_control", "roles": [{"role": "fabric.infiniband.topology"}, "other.ns.verify"]},
            {"hosts": "ib_nodes", "tasks": tasks}]
    path = tmp_path / "mine.yml"
    path.write_text(yaml.safe_dump(play), encoding="utf-8")
    assert run_roles.run_roles("node01", GROUPS, args=[str(path)]) == ["topology", "ipoib"]
    assert run_roles.run_roles("node02", GROUPS, args=[str(path)]) == ["ipoib"]
    assert run_roles.run_roles("node01", GROUPS, template=template, args=[os.path.join(PLAYBOOKS, "nodes.yml"), str(path)]) == \
        NODE_ROLES + ["topology", "ipoib"]


def test_a_playbook_with_no_role_of_the_collection_stands_for_site(tmp_path):
    path = tmp_path / "other.yml"
    path.write_text(yaml.safe_dump([{"hosts": "all", "tasks": [{"ansible.builtin.ping": {}}]}]), encoding="utf-8")
    assert run_roles.run_roles("node01", GROUPS, template=template, args=[str(path)]) == roles("site.yml", "node01")


@pytest.mark.parametrize("pattern, host, expected", [
    ("ib_nodes", "node01", True),
    ("ib_nodes", "sm1", False),
    ("ib_nodes:opensm", "sm1", True),
    ("ib_nodes,opensm", "k8s1", False),
    ("ib_nodes:!gpu_nodes", "gpu1", False),
    ("ib_nodes:&slurm_control", "node01", True),
    ("ib_nodes:&slurm_control", "node02", False),
    ("all", "k8s1", True),
    ("node0*", "node02", True),
    ("node0*", "gpu1", False),
    ("~gpu\\d", "gpu1", True),
    ("k8s1", "k8s1", True),
    ("infiniband_reboot_waiting", "node02", False),  # neither in the inventory nor made by an earlier play
    ("no_such_group:ib_nodes", "node02", True),
    (["opensm", "k8s_control"], "k8s1", True),
    (None, "node01", False),
])
def test_host_patterns(pattern, host, expected):
    assert run_roles.host_in(pattern, host, GROUPS) is expected


def test_a_group_the_inventory_lacks_names_nobody():
    """An inventory without the group opensm (the switch runs the SM): opensm is no role of the run on any host."""
    groups = {"all": ["node01", "node02"], "ib_nodes": ["node01", "node02"]}
    assert roles("site.yml", "node01", groups) == NODE_ROLES + ["ipoib", "verify"]


def test_a_group_made_by_group_by_holds_the_hosts_of_the_play_before_it():
    assert run_roles.host_in("infiniband_reboot_waiting", "node02", GROUPS, made=True, run_groups={"infiniband_reboot_waiting"})
    assert not run_roles.host_in("infiniband_reboot_waiting", "node02", GROUPS, made=False,
                                 run_groups={"infiniband_reboot_waiting"})


def test_a_templated_hosts_is_rendered_for_the_host():
    """reboot.yml's first play: hosts "{{ infiniband_reboot_hosts | default('ib_nodes') }}"; its second play's group, made by
    group_by in the first, holds the first's hosts."""
    seen = []

    def opensm(text):
        seen.append(text)
        return "opensm"
    out = run_roles.run_roles("sm1", GROUPS, template=opensm, args=[os.path.join(PLAYBOOKS, "reboot.yml")])
    assert out == ["node_reboot"] and any("infiniband_reboot_hosts" in text for text in seen)
    assert roles("reboot.yml", "sm1") == []


def test_what_cannot_be_read_is_left_out(tmp_path):
    assert run_roles.playbook_paths(["no/such/playbook.yml", "fabric.infiniband.nothing"], cwd=str(tmp_path)) == []
