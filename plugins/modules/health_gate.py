#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

# The documentation of the action plugin plugins/action/health_gate.py, the health gate of the role fabric.infiniband.verify.

from __future__ import annotations

DOCUMENTATION = r"""
module: health_gate
short_description: Drain in Slurm or taint in Kubernetes the nodes that fail the fabric health check, and return them
version_added: 0.3.0
description:
  - The health gate of the role P(fabric.infiniband.verify#role), which reads its settings (C(verify_health_*)) from the task's
    variables. Off unless C(verify_health_gate=true).
  - Reads the fact C(infiniband_health) of this run of every host of the play (published by the role's check of each node's
    ports); hosts without one are left as they are.
  - With O(scheduler=slurm), run once on the Slurm controller; reads the nodes with C(sinfo), drains a failing node with
    C(scontrol update nodename=<node> state=drain) and the reason C(fabric.infiniband:) followed by the node's reasons, and resumes a healthy node only when its
    drain reason starts with C(fabric.infiniband:), so a node an administrator drained is never resumed. The Slurm node name is
    the inventory name up to its first dot.
  - With O(scheduler=kubernetes), run once on the host that reaches the API server; sets the taint
    C(<verify_health_taint_key>=<code>:NoSchedule) on a failing Node (the code names the first failure, C(port-down),
    C(link-degraded), C(port-errors), C(link-flapping)) and removes it, and only it, from a healthy Node. The Node name is the
    inventory name.
  - Never takes out more than C(verify_health_max_drain) nodes in one run (a number, or a percentage of the judged nodes,
    rounded down, at least one); above it takes out none and fails, saying that a fabric-wide fault (a subnet manager down, a
    spine switch lost) is suspected.
  - In check mode reports the plan (RV(plan)) and changes nothing.
author:
  - fabric.infiniband developers (@fabric-infiniband)
requirements:
  - On the Slurm controller, C(sinfo) and C(scontrol).
  - On the Kubernetes host, the Python C(kubernetes) client (for M(kubernetes.core.k8s)).
extends_documentation_fragment:
  - fabric.infiniband.role_step
options:
  scheduler:
    description: Which scheduler this run of the gate acts on.
    type: str
    required: true
    choices: [slurm, kubernetes]
seealso:
  - module: fabric.infiniband.port_health_info
  - name: scontrol(1)
    description: C(scontrol update NodeName=... State=DRAIN Reason=...).
    link: https://slurm.schedmd.com/scontrol.html
  - name: Taints and tolerations
    description: Kubernetes taints.
    link: https://kubernetes.io/docs/concepts/scheduling-eviction/taint-and-toleration/
"""

EXAMPLES = r"""
- name: The health gate (the role's step; use the role with verify_health_gate=true)
  fabric.infiniband.health_gate:
    scheduler: "{{ item }}"
  delegate_to: "{{ verify_health_slurm_controller if item == 'slurm' else verify_health_k8s_from }}"
  run_once: true
  loop: [slurm, kubernetes]
"""

RETURN = r"""
scheduler:
  description: The scheduler acted on.
  returned: always
  type: str
max_drain:
  description: How many nodes this run may take out.
  returned: always
  type: int
plan:
  description:
    - What the gate does (or would do in check mode), as lists of C(drain), C(resume), C(taint), C(untaint) and C(left) (nodes left
      as they are, with why), and C(refused), the message when more nodes fail than C(verify_health_max_drain) allows.
  returned: always
  type: dict
not_in_scheduler:
  description: Judged hosts the scheduler does not know.
  returned: always
  type: list
  elements: str
ran:
  description: The modules the step ran, in order, with a label and whether each changed something.
  returned: always
  type: list
  elements: dict
"""
