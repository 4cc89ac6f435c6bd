# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Topology from one discovery (issue 34 item 3): the verify role publishes the fabric it discovered as the run-stamped fact
infiniband_fabric on its host; the topology role takes a current one from any host and skips its own discovery, and
discovers the fabric itself when the run has none (the role alone). Real ansible-playbook runs of the role."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from unittest.mock import MagicMock

from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar

from ansible_collections.fabric.infiniband.plugins.action import verify as verify_action
from ansible_collections.fabric.infiniband.plugins.module_utils import ibnetdiscover

FIXTURE = os.path.join(os.path.dirname(os.path.dirname(__file__)), "module_utils", "fixtures", "ibnetdiscover",
                       "lab_ibsim_diags44.txt")
LAB_PATTERN = r"^(\S+?)-[0-9a-fA-F]{4}:"


def _fabric():
    with open(FIXTURE) as handle:
        return ibnetdiscover.parse(handle.read())


def test_verify_publishes_the_fabric_it_discovered():
    task = MagicMock()
    task.args, task.async_val, task.check_mode, task.diff, task.environment = {}, 0, True, False, []
    act = verify_action.ActionModule(task, MagicMock(), MagicMock(), loader=DataLoader(), templar=Templar(loader=DataLoader()),
                                     shared_loader_obj=None)
    act._vars, act._facts, act._out_facts, act._ran = {"inventory_hostname": "node01"}, {}, {}, []  # pylint: disable=protected-access
    act.run_id = "ctl:1:2"
    act._execute_module = lambda module_name, module_args, task_vars: dict(_fabric(), changed=False)  # pylint: disable=protected-access
    result = act._topology({})  # pylint: disable=protected-access
    fact = act._out_facts["infiniband_fabric"]  # pylint: disable=protected-access
    assert fact["run_id"] == "ctl:1:2" and fact["host"] == "node01" and len(fact["hcas"]) == 4
    assert "lids" in result["hcas"][0]  # the report's own copy keeps what the fact leaves out
    act._out_facts = {}  # pylint: disable=protected-access
    act._execute_module = lambda module_name, module_args, task_vars: {"failed": True, "msg": "no port"}  # pylint: disable=protected-access
    assert act._topology({})["failed"] and "infiniband_fabric" not in act._out_facts  # pylint: disable=protected-access


PLAYBOOK = textwrap.dedent(
    """\
    - name: A discovery earlier in the run (as the verify role publishes it)
      hosts: node01
      gather_facts: false
      tasks:
        - name: Publish the fabric
          ansible.builtin.set_fact:
            infiniband_fabric: "{{ fabric | combine({'run_id': lookup('fabric.infiniband.run_id'), 'host': 'node01'}) }}"
            cacheable: true
          when: publish | bool

    - name: Topology
      hosts: ctl
      gather_facts: false
      roles:
        - role: fabric.infiniband.topology
          vars:
            topology_hosts: [node01, node02, node03]
            topology_discover_from: node02
            topology_hca_name_pattern: '{pattern}'
    """
)


def _run(tmp_path, publish):
    fabric = dict(_fabric())
    (tmp_path / "fabric.json").write_text(json.dumps({"fabric": fabric}))
    (tmp_path / "play.yml").write_text(PLAYBOOK.replace("{pattern}", LAB_PATTERN))
    local = "ansible_connection=local ansible_python_interpreter=%s" % sys.executable
    (tmp_path / "hosts.ini").write_text("ctl %s\n[ib_nodes]\nnode01 %s\nnode02 %s\nnode03 %s\n" % (local, local, local, local))
    env = dict(os.environ, ANSIBLE_FORKS="4", ANSIBLE_NOCOLOR="1", ANSIBLE_STDOUT_CALLBACK="ansible.builtin.json",
               ANSIBLE_CALLBACKS_ENABLED="fabric.infiniband.preload")
    proc = subprocess.run(
        [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", str(tmp_path / "hosts.ini"),
         str(tmp_path / "play.yml"), "-e", "@%s" % (tmp_path / "fabric.json"), "-e", "publish=%s" % publish],
        env=env, capture_output=True, text=True, check=False, timeout=300)
    out = json.loads(proc.stdout[proc.stdout.index("{"):])
    tasks = dict((task["task"]["name"].split(" : ")[-1], task["hosts"]) for play in out["plays"] for task in play["tasks"])
    return proc, tasks


def test_topology_takes_the_runs_fabric_and_skips_its_discovery(tmp_path):
    proc, tasks = _run(tmp_path, True)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert tasks["Check the topology settings, look for a fabric discovered in this run"]["ctl"]["fabric_from"] == "node01"
    assert tasks["Discover the fabric from one InfiniBand node"]["ctl"].get("skipped") is True
    step = tasks["Write topology.conf, reconfigure Slurm, label the Kubernetes nodes"]["ctl"]
    assert step["source"] == "fact infiniband_fabric of node01 (discovered in this run)", step
    assert step["levels"] == [{"Switch1": ["node01", "node02", "node03"]}] and step["missing"] == []


def test_topology_alone_discovers_the_fabric_itself(tmp_path):
    proc, tasks = _run(tmp_path, False)
    assert tasks["Check the topology settings, look for a fabric discovered in this run"]["ctl"]["fabric_from"] is None
    # its own discovery ran on topology_discover_from (the unit test's node has no ibnetdiscover: it fails there)
    discovery = tasks["Discover the fabric from one InfiniBand node"]["ctl"]
    assert not discovery.get("skipped") and (discovery.get("failed") or "switches" in discovery), discovery
    assert proc.returncode != 0 or "switches" in discovery
