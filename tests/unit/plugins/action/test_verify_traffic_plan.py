# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""plugins/action/verify.py's traffic plan (``traffic_plan: true``), in a real ansible-playbook run: planned once from every
host's registered read, registered on every host of the play (run_once), stamped; a pair whose HCA the node lacks is
refused naming verify_traffic_pairs before any traffic; the report reads only the results of its own plan, and reads the
health gate's skipped loop without an ansible-core deprecation warning."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

PLAYBOOK = textwrap.dedent(
    """\
    - name: Plan
      hosts: all
      gather_facts: false
      vars:
        verify_traffic: true
        verify_traffic_plan_only: false
        verify_report_dir: "{{ out_dir }}"
        verify_fail: false
        verify_health: false
      tasks:
        - name: What each node's read registered
          ansible.builtin.set_fact:
            __verify_step:
              node:
                hca: {hcas: []}
                traffic:
                  address: "10.0.0.{{ inventory_hostname[-1] }}"
                  hca:
                    hcas:
                      - {rdma_device: mlx5_0, is_vf: false, ports: [{port: 1, state: ACTIVE, rate_gbps: 200}]}
                  thresholds: {200: {min_bw_gbps: 1, max_lat_us: 100}}

        - name: Plan the traffic
          fabric.infiniband.verify:
            traffic_plan: true
          run_once: true
          register: __verify_traffic

        - name: Results of an earlier plan and of this one
          ansible.builtin.set_fact:
            __verify_traffic_results:
              - {plan: earlier, run: "{{ __verify_traffic.runs[0].id }}",
                 client: {ran: true, tests: {write_bw: {bw_gbps: 999}, read_lat: {lat_us: 1}}}}
              - {plan: "{{ __verify_traffic.stamp }}", run: "{{ __verify_traffic.runs[0].id }}",
                 client: {ran: true, tests: {write_bw: {bw_gbps: 0.5}, read_lat: {lat_us: 3}}}}
          when: inventory_hostname == 'h2'

        - name: What every host registered
          ansible.builtin.copy:
            content: "{{ {'runs': __verify_traffic.runs | length, 'batches': __verify_traffic.batches,
                          'stamp': __verify_traffic.stamp} | to_json }}"
            dest: "{{ out_dir }}/{{ inventory_hostname }}.json"
            mode: "0644"
          delegate_to: localhost

        # as the role's gate task registers it with verify_health_gate false: an empty loop, whose result also carries
        # ansible-core's deprecated skipped_reason
        - name: The health gate, off
          ansible.builtin.debug:
            msg: "{{ item }}"
          loop: []
          register: __verify_health_gate

        - name: The report
          fabric.infiniband.verify:
            report: true
          run_once: true

    - name: A pair whose HCA the node lacks
      hosts: all
      gather_facts: false
      tasks:
        - name: Plan the traffic
          fabric.infiniband.verify:
            traffic_plan: true
          run_once: true
          vars:
            verify_traffic_pairs: [{server: h1, client: h2, server_hca: mlx5_9}]
    """
)


def test_plan_once_stamped_and_refused(tmp_path):
    (tmp_path / "play.yml").write_text(PLAYBOOK)
    local = "ansible_connection=local ansible_python_interpreter=%s" % sys.executable
    (tmp_path / "hosts.ini").write_text("[ib_nodes]\nh1 %s\nh2 %s\n" % (local, local))
    out = tmp_path / "out"
    out.mkdir()
    env = dict(os.environ, ANSIBLE_FORKS="2", ANSIBLE_NOCOLOR="1")
    proc = subprocess.run(
        [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", str(tmp_path / "hosts.ini"),
         str(tmp_path / "play.yml"), "-e", "out_dir=%s" % out],
        env=env, capture_output=True, text=True, check=False, timeout=300)
    output = proc.stdout + proc.stderr
    registered = [json.loads((out / ("%s.json" % h)).read_text()) for h in ("h1", "h2")]
    assert registered[0] == registered[1], registered
    assert registered[0]["runs"] == 1 and registered[0]["batches"] == 1 and len(registered[0]["stamp"]) == 32, registered
    report = json.loads((out / "fabric-report.json").read_text())
    assert [(r["server"], r["client"], r["bw_gbps"]) for r in report["traffic"]] == [("h1", "h2", 0.5)], report["traffic"]
    # the second play: refused before any traffic, naming the user's setting
    assert proc.returncode != 0, output
    assert "verify_traffic_pairs[0].server_hca" in output and "No traffic moved." in output, output
    assert "DEPRECATION WARNING" not in output, output
