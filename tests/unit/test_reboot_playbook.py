# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""playbooks/reboot.yml with ansible-playbook, on the controller (connection local, an inventory in a temp dir).

- One name per consent (issue 21, item 4): the role's own node_reboot_* variables set in the inventory's group_vars
  reach the role (the playbook maps infiniband_* through the role's defaults, never role vars).
- Batch controls (issue 22, class 5): a bad infiniband_reboot_serial or max-fail percentage is refused in the first
  play, naming the variable the user set, before the node's pending record is even read.
Each run takes a few seconds; no node is touched (the checks fail first, or the test reads variables only).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import yaml

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PLAYBOOK = os.path.join(ROOT, "playbooks", "reboot.yml")
ANSIBLE_PLAYBOOK = os.path.join(os.path.dirname(sys.executable), "ansible-playbook")

pytestmark = pytest.mark.skipif(not os.path.exists(ANSIBLE_PLAYBOOK), reason="ansible-playbook is not beside the Python running the tests")


def _inventory(tmp_path, group_vars):
    (tmp_path / "group_vars").mkdir()
    (tmp_path / "hosts.yml").write_text(yaml.safe_dump({"all": {"children": {"ib_nodes": {"hosts": {"testnode": {
        "ansible_connection": "local", "ansible_python_interpreter": sys.executable}}}}}}), encoding="utf-8")
    (tmp_path / "group_vars" / "ib_nodes.yml").write_text(yaml.safe_dump(group_vars), encoding="utf-8")
    return str(tmp_path / "hosts.yml")


def _run(inventory, playbook, *extra):
    env = dict(os.environ, ANSIBLE_CALLBACK_RESULT_FORMAT="json", ANSIBLE_NOCOLOR="1")
    return subprocess.run([ANSIBLE_PLAYBOOK, "-i", inventory, playbook] + list(extra), cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300, check=False)


def test_the_playbook_maps_no_role_variable_through_role_vars():
    with open(PLAYBOOK, encoding="utf-8") as handle:
        plays = yaml.safe_load(handle)
    for play in plays:
        for role in play.get("roles", []):
            assert not isinstance(role, dict) or "vars" not in role, "%s: role vars outrank the inventory" % play["name"]
        assert "infiniband_reboot_pending" not in json.dumps(play), "reboot.yml reads the pending record itself"


@pytest.mark.parametrize("extra, says", [
    (["-e", "infiniband_reboot_serial=abc", "-e", "infiniband_reboot_max_fail_percentage=-5", "-e", "infiniband_drain_timeout=-1"],
     ["infiniband_reboot_serial: 'abc' is not accepted", "infiniband_reboot_max_fail_percentage: '-5' is not accepted",
      "infiniband_drain_timeout: '-1' is not accepted"]),
    (["-e", "infiniband_reboot_serial=150%"], ["infiniband_reboot_serial: '150%' is not accepted (more than 100%"]),
])
def test_bad_batch_controls_are_refused_in_the_first_play(tmp_path, extra, says):
    proc = _run(_inventory(tmp_path, {}), PLAYBOOK, *extra)
    assert proc.returncode != 0
    for text in says:
        assert text in proc.stdout, proc.stdout + proc.stderr
    # refused by the first task, before it reads the pending record: no node grouped, and no traceback
    assert "Group the nodes that wait" not in proc.stdout
    assert "Traceback" not in proc.stdout + proc.stderr


def test_a_role_variable_in_group_vars_reaches_the_role_in_the_playbook(tmp_path):
    """Before, reboot.yml set node_reboot_drain_timeout from infiniband_drain_timeout as role vars, which outrank
    group_vars: the inventory's value was silently ignored. Now it is used, so a bad one is refused by its name."""
    proc = _run(_inventory(tmp_path, {"node_reboot_drain_timeout": -1}), PLAYBOOK, "-e", "infiniband_drain_timeout=0")
    assert proc.returncode != 0
    assert "node_reboot_drain_timeout: -1 is not accepted; accepted: whole seconds, 0 or more (0: no limit)" in proc.stdout, proc.stdout


def test_group_vars_win_over_the_playbook_names_and_the_playbook_names_over_the_defaults(tmp_path):
    out = tmp_path / "values.json"
    playbook = tmp_path / "show.yml"
    playbook.write_text(yaml.safe_dump([{
        "name": "Show what the role sees", "hosts": "ib_nodes", "gather_facts": False,
        "tasks": [
            {"name": "Check", "ansible.builtin.import_role": {"name": "fabric.infiniband.node_reboot", "tasks_from": "validate"}},
            {"name": "Write", "delegate_to": "localhost", "ansible.builtin.copy": {"dest": str(out), "mode": "0644", "content": (
                "{{ {'allow': node_reboot_allow | bool, 'drain_timeout': node_reboot_drain_timeout | int,"
                " 'timeout': node_reboot_timeout | int, 'fw_reset': node_reboot_allow_fw_reset | bool} | to_json }}")}},
        ]}]), encoding="utf-8")
    inventory = _inventory(tmp_path, {"node_reboot_allow": True, "node_reboot_timeout": 1200})
    proc = _run(inventory, str(playbook), "-e", "infiniband_allow_reboot=false", "-e", "infiniband_drain_timeout=0",
                "-e", "infiniband_allow_fw_reset=yes")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # node_reboot_allow from group_vars (true) wins over -e infiniband_allow_reboot=false: the role's own name
    # is honoured; infiniband_drain_timeout=0 ("no limit") is accepted and mapped; the rest keep the defaults
    assert json.loads(out.read_text(encoding="utf-8")) == {"allow": True, "drain_timeout": 0, "timeout": 1200, "fw_reset": True}
