# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""When a node fact may decide a change: plugin_utils/node_state.py, the fact_current filter and
the run_id lookup, the last pinned with real ansible-playbook runs of the ansible-core under test."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from ansible_collections.fabric.infiniband.plugins.filter.fact_current import fact_current
from ansible_collections.fabric.infiniband.plugins.plugin_utils import node_state

RUN = "ctl:100:5000"


@pytest.mark.parametrize(
    "fact, stale, expected",
    [
        ({"run_id": RUN, "hcas": []}, False, True),
        ({"run_id": RUN, "hcas": []}, True, False),
        ({"run_id": "ctl:100:4999", "hcas": []}, False, False),  # same PID, another start: another run
        ({"run_id": "", "hcas": []}, False, False),  # unstamped (no run_id passed)
        ({"hcas": []}, False, False),
        ({"run_id": 7}, False, False),
        (None, False, False),
        ("", False, False),
        ([], False, False),
    ],
)
def test_is_current(fact, stale, expected):
    assert node_state.is_current(fact, stale=stale, run=RUN) is expected


def test_run_id_names_this_process_outside_a_worker():
    host, pid, start = node_state.run_id().rsplit(":", 2)
    assert int(pid) == os.getpid()
    assert start == node_state._start_time(os.getpid())
    assert start.isdigit()


def test_filter_takes_string_booleans(monkeypatch):
    monkeypatch.setattr(node_state, "run_id", lambda: RUN)
    assert fact_current({"run_id": RUN}, "false") is True
    assert fact_current({"run_id": RUN}, "true") is False
    assert fact_current({"run_id": RUN}) is True
    assert fact_current(None) is False


PLAYBOOK = textwrap.dedent(
    """\
    - name: Read the run id in every place a role reads it
      hosts: all
      gather_facts: false
      vars:
        play_level: "{{ lookup('fabric.infiniband.run_id') }}"
      tasks:
        - name: In a task's arguments (a worker per host)
          ansible.builtin.set_fact:
            in_task: "{{ lookup('fabric.infiniband.run_id') }}"
            in_play_vars: "{{ play_level }}"

        - name: In a filter, against a fact stamped in the task before
          ansible.builtin.set_fact:
            judged: "{{ {'run_id': in_task} | fabric.infiniband.fact_current }}"

        - name: Once for the play
          ansible.builtin.set_fact:
            once: "{{ lookup('fabric.infiniband.run_id') }}"
          run_once: true

        # One module run for the play (it would be one per host otherwise): what every host saw.
        - name: Write what each host saw
          ansible.builtin.copy:
            content: >-
              {{ {'hosts': ansible_play_hosts, 'once': once,
                  'in_task': ansible_play_hosts | map('extract', hostvars, 'in_task') | list,
                  'in_play_vars': ansible_play_hosts | map('extract', hostvars, 'in_play_vars') | list,
                  'judged': ansible_play_hosts | map('extract', hostvars, 'judged') | list} | to_json }}
            dest: "{{ out_dir }}/seen.json"
            mode: "0644"
          run_once: true
          delegate_to: localhost
    """
)


def _run_playbook(tmp_path, tag):
    out = tmp_path / tag
    out.mkdir()
    (tmp_path / "play.yml").write_text(PLAYBOOK)
    inventory = tmp_path / "hosts.ini"
    inventory.write_text("".join("h%d ansible_connection=local ansible_python_interpreter=%s\n" % (n, sys.executable) for n in range(4)))
    env = dict(os.environ, ANSIBLE_FORKS="2", ANSIBLE_NOCOLOR="1")
    proc = subprocess.run(
        [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", str(inventory), str(tmp_path / "play.yml"),
         "-e", "out_dir=%s" % out],
        env=env, capture_output=True, text=True, check=False, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    seen = json.loads((out / "seen.json").read_text())
    assert sorted(seen["hosts"]) == ["h%d" % n for n in range(4)], seen
    return [{"in_task": seen["in_task"][n], "in_play_vars": seen["in_play_vars"][n], "judged": seen["judged"][n], "once": seen["once"]}
            for n in range(4)]


def test_run_id_is_one_per_ansible_playbook_run(tmp_path):
    """Pins the assumption node_state.controller_pid makes of ansible-core: a lookup or filter runs in
    the ansible-playbook process or in a worker forked from it, so that every task, host and worker of
    one run sees one identity, and a second run another."""
    first = _run_playbook(tmp_path, "first")
    second = _run_playbook(tmp_path, "second")
    ids = set()
    for seen in first:
        ids.update([seen["in_task"], seen["in_play_vars"], seen["once"]])
        assert seen["judged"] is True
    assert len(ids) == 1, ids
    again = set()
    for seen in second:
        again.update([seen["in_task"], seen["in_play_vars"], seen["once"]])
    assert len(again) == 1, again
    assert ids != again


@pytest.mark.parametrize(
    "fact, stale, expected",
    [
        ({"run_id": RUN, "entries": {"link_type": {"action": "reboot"}}}, False, True),
        ({"run_id": RUN, "entries": {"sriov": {"action": "reboot"}}}, False, False),
        ({"run_id": RUN, "entries": {}}, False, False),
        ({"run_id": RUN, "entries": {}}, True, True),  # stale: unknown
        ({"run_id": "other:1:1", "entries": {}}, False, True),  # another run's reading: unknown
        (None, False, True),
    ],
)
def test_pending_may_hold(monkeypatch, fact, stale, expected):
    from ansible_collections.fabric.infiniband.plugins.filter.pending_may_hold import pending_may_hold

    monkeypatch.setattr(node_state, "run_id", lambda: RUN)
    assert pending_may_hold(fact, "link_type", stale) is expected


def test_run_owner():
    assert node_state.run_owner({"infiniband_run_owner": "team-a"}) == "team-a"
    assert node_state.run_owner({"awx_job_template_name": "Prepare InfiniBand nodes (sliced)"}) == \
        "AWX job template Prepare InfiniBand nodes (sliced)"
    user, host = node_state.run_owner({}).split("@")
    assert user and host
