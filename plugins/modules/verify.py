#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

# The documentation of the action plugin plugins/action/verify.py, the two steps of the role fabric.infiniband.verify.

from __future__ import annotations

DOCUMENTATION = r"""
module: verify
short_description: The verify role's steps, each node's read, then the checks and the report, in two tasks
version_added: 0.3.0
description:
  - The steps of the role P(fabric.infiniband.verify#role), which read its settings (C(verify_*)) and the other roles' variables it
    checks against (C(link_type_default), C(link_type_adapters), C(rdma_netns_mode), C(sriov_pfs) and the GUID scheme,
    C(firmware_versions), C(opensm_partitions)) from the task's variables.
  - Without O(report), per node, registered by the role as C(__verify_step) - refuses explicit C(verify_traffic_pairs) that name a
    host outside the play or pair a node with itself (with C(verify_traffic)); reads the node with M(fabric.infiniband.hca_info)
    (C(pending=true)) unless this run has current facts C(infiniband_hca) and C(infiniband_pending); runs
    M(fabric.infiniband.fabric_topology_info) on the topology host (C(verify_topology_host), else the play's first host of group
    C(opensm), else its first host), with C(verify_tool_environment), a failure being reported, not raised; and publishes what it
    discovered there as the run-stamped fact C(infiniband_fabric), which the role P(fabric.infiniband.topology#role) of the same
    run takes instead of discovering the fabric again.
  - With O(report) (the role runs it once) - checks every node of the play from the other hosts' C(__verify_step) with the filter
    C(fabric.infiniband.verify_checks), with the traffic rows of the role's traffic step when C(verify_traffic); writes
    C(fabric-report.txt), C(fabric-report.json) and C(fabric-report.html) in C(verify_report_dir) on the controller, each only
    when its content differs (atomically, also in check mode); shows the table; fails with the summary and the failures when a
    check fails and C(verify_fail).
  - A host of the play that left it before its read (C(ansible_play_hosts_all) but not C(ansible_play_hosts)) has no data; its
    row says why, from the results its tasks registered in this run (Ansible keeps a task's registered result when the task
    failed or the host was unreachable, and drops the facts of a failed task) - V(unreachable) with the connection's message
    and the step where it was lost, V(failed before verify) with the step (the run lock, a role's step such as the firmware
    role's image checks) and its message, or, where the task that stopped it registers nothing, that the run's output names it.
    The JSON report carries it per host as C(stopped) (C(state) V(failed), V(unreachable) or V(unknown), and C(steps)).
  - The rules of C(firmware_versions) that match no card of any host of the run (the fact C(infiniband_firmware_unmatched) the
    firmware role's step published in this run; a fact cache's from an earlier run is not used) get a line each under the
    tables, with the hosts whose cards were looked at and those not seen, and C(unmatched_firmware) in the JSON report. They
    fail no check.
  - Read-only on the nodes.
author:
  - fabric.infiniband developers (@fabric-infiniband)
extends_documentation_fragment:
  - fabric.infiniband.role_step
options:
  report:
    description:
      - Check every node and write the report, from what the step without it registered on each host (C(__verify_step)). Run it
        once (C(run_once)).
    type: bool
    default: false
  traffic_plan:
    description:
      - Plan the traffic runs of O(report)'s traffic table (C(verify_traffic)) from what the step without it registered on each
        host, and fail, naming C(verify_traffic_pairs), when a pair cannot run. Run it once (C(run_once)); the role registers its
        result as C(__verify_traffic).
    type: bool
    default: false
notes:
  - With O(preflight), only the explicit traffic pairs are checked, against the group C(ib_nodes).
seealso:
  - module: fabric.infiniband.hca_info
  - module: fabric.infiniband.fabric_topology_info
  - module: fabric.infiniband.perftest
"""

EXAMPLES = r"""
- name: Read the node and the fabric (the role's tasks; use the role)
  fabric.infiniband.verify:
  register: __verify_step

- name: Check every node, write the report on the controller
  fabric.infiniband.verify:
    report: true
  run_once: true
  vars:
    verify_report_dir: fabric-report
"""

RETURN = r"""
node:
  description: What the report needs of the node, C(hca), C(pending), C(expect) (what the inventory asks) and C(traffic).
  returned: without O(report) or O(preflight)
  type: dict
topology:
  description: The result of M(fabric.infiniband.fabric_topology_info), failed or not.
  returned: on the topology host, without O(report) or O(preflight)
  type: dict
runs:
  description: The planned traffic runs (server, client, their HCAs and ports, TCP port, batch, thresholds).
  returned: with O(traffic_plan)
  type: list
  elements: dict
batches:
  description: How many batches the runs take (a node serves or connects at most once per batch).
  returned: with O(traffic_plan)
  type: int
stamp:
  description: The plan's own identifier; the results the nodes keep name it.
  returned: with O(traffic_plan)
  type: str
report:
  description: The report's table, line by line (C(fabric-report.txt)).
  returned: with O(report)
  type: list
  elements: str
report_dir:
  description: The directory of the report files.
  returned: with O(report)
  type: str
written:
  description: The report files written (those whose content differed).
  returned: with O(report)
  type: list
  elements: str
summary:
  description: The report's summary line.
  returned: with O(report)
  type: str
  sample: all 3 nodes pass
ok:
  description: Whether every node passes.
  returned: with O(report)
  type: bool
ansible_facts:
  description: Facts for the host.
  returned: without O(report) or O(preflight)
  type: dict
  contains:
    infiniband_fabric:
      description:
        - On the topology host, when the discovery worked, the fabric it discovered - C(switches) (C(guid), C(description)),
          C(hcas) (C(type), C(guid), C(description), C(port_guids)) and C(links) (C(from) and C(to), each C(guid) and C(port)) -,
          with C(run_id) (this run) and C(host). LIDs, vendor and device ids and link widths are left out (the fact is kept by
          fact caches; about 1 KiB for the lab's three nodes, about 0.25 KiB per HCA).
      type: dict
ran:
  description: The modules the step ran on the node, in order, with a label and whether each changed something.
  returned: when it ran some
  type: list
  elements: dict
"""
