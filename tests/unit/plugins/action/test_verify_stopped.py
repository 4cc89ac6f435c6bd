# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""plugins/action/verify.py's report, in a real ansible-playbook run: a node that failed a registered step is reported as
failed there, with the step's message; one lost on the way as unreachable; one stopped by a task that registers nothing as
such (issue 33, class 7). Pins what the report takes from ansible-core: a task's registered result is kept when the task
fails or the host is unreachable, and a later play's hostvars holds it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

PLAYBOOK = textwrap.dedent(
    """\
    - name: What happens before verify
      hosts: all
      gather_facts: false
      tasks:
        # the firmware step's fact: this run's on h1 (its rules match no card), an earlier run's on h4 (a fact cache's)
        - name: Publish which firmware rules match no card
          ansible.builtin.set_fact:
            infiniband_firmware_unmatched:
              run_id: "{{ lookup('fabric.infiniband.run_id') if inventory_hostname == 'h1' else 'ctl:1:1' }}"
              rules: [{rule: 2, where: "firmware_versions[2]", psid: MT_0000000999, version: "28.39.1002", at_least: false}]
              seen: [h1, h2, h4]
              unseen: [h3]
            cacheable: true
          when: inventory_hostname in ['h1', 'h4']

        - name: Take the run lock (h2 finds it held)
          ansible.builtin.fail:
            msg: "The node's run lock is held by another run (owner ops@ctl)"
          when: inventory_hostname == 'h2'
          register: nodes_run_lock

        - name: Read the adapters (h3 is unreachable)
          ansible.builtin.ping:
          register: nodes_hca

        - name: A task that registers nothing (h4 fails it)
          ansible.builtin.fail:
            msg: unregistered failure
          when: inventory_hostname == 'h4'

    - name: Verify
      hosts: all
      gather_facts: false
      tasks:
        - name: Check every node, write the report
          fabric.infiniband.verify:
            report: true
          run_once: true
          vars:
            verify_report_dir: "{{ out_dir }}"
            verify_fail: false
    """
)


def test_report_tells_failed_from_unreachable(tmp_path):
    (tmp_path / "play.yml").write_text(PLAYBOOK)
    local = "ansible_connection=local ansible_python_interpreter=%s" % sys.executable
    (tmp_path / "hosts.ini").write_text(
        "h1 %s\nh2 %s\n" % (local, local)
        + "h3 ansible_connection=ssh ansible_host=127.0.0.1 ansible_port=1 "
          "ansible_ssh_common_args='-o ConnectTimeout=5 -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null'\n"
        + "h4 %s\n" % local)
    out = tmp_path / "report"
    env = dict(os.environ, ANSIBLE_FORKS="4", ANSIBLE_NOCOLOR="1")
    proc = subprocess.run(
        [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", str(tmp_path / "hosts.ini"),
         str(tmp_path / "play.yml"), "-e", "out_dir=%s" % out],
        env=env, capture_output=True, text=True, check=False, timeout=300)
    # h2, h3, h4 fail or are unreachable: ansible-playbook says so in its exit code; the report is written all the same
    assert (out / "fabric-report.json").exists(), proc.stdout + proc.stderr
    report = json.loads((out / "fabric-report.json").read_text())
    hosts = dict((entry["host"], entry) for entry in report["hosts"])
    failures = dict(line.split(": ", 1) for line in report["failures"] if line.split(": ", 1)[0] in hosts)
    assert hosts["h2"]["stopped"]["state"] == "failed", hosts["h2"]
    assert failures["h2"] == ("no data from the node: failed before verify: the run lock (nodes.yml): The node's run lock is "
                              "held by another run (owner ops@ctl)")
    assert hosts["h3"]["stopped"]["state"] == "unreachable", hosts["h3"]
    assert failures["h3"].startswith("no data from the node: unreachable: "), failures["h3"]
    assert failures["h3"].endswith(" in the discovery of the adapters (nodes.yml)"), failures["h3"]
    assert hosts["h4"]["stopped"] == {"state": "unknown", "steps": []}
    assert "registers no result" in failures["h4"]
    # h1 is still in the play (it has no read of its own here): no "stopped"
    assert "stopped" not in hosts["h1"]
    text = (out / "fabric-report.txt").read_text()
    assert "h2: no data from the node: failed before verify: the run lock (nodes.yml)" in text
    # the firmware rules that match no card, from the fact of this run only (h4's is an earlier run's)
    assert report["unmatched_firmware"] == [
        "firmware_versions[2] (psid MT_0000000999, version 28.39.1002) matches no card of h1, h2, h4 (not seen: h3)"]
    assert ("\nFirmware rules that match no card (they burn nothing; check the PSID or model):\n"
            "  firmware_versions[2] (psid MT_0000000999, version 28.39.1002) matches no card of h1, h2, h4 (not seen: h3)\n"
            "\nFailing checks:\n") in text, text
