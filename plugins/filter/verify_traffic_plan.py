# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
name: verify_traffic_plan
short_description: Plan the RDMA traffic pairs of the verify role, with their HCAs, ports, batches and thresholds
version_added: 0.1.0
author: fabric.infiniband developers (@fabric-infiniband)
description:
  - Which node serves which, on which HCAs and ports, with which TCP ports, in which batch, and against which thresholds.
  - Without O(pairs), every node of the play gets a partner, in the play's order, the first with the second, the third with the
    fourth, and so on; with an odd number of nodes (three or more) the last also pairs with the first. Partners are on the same
    rail, HCA n of one node with HCA n of the other (the InfiniBand ports of its physical functions, in RDMA device name order,
    C(mlx5_2) before C(mlx5_10); RoCE ports too when the node's C(roce) is true). A rail that the partner lacks is reported
    C(unpaired), not failed (nodes of different kinds have different rail counts).
  - With O(pairs), only those pairs run, on their C(server_hca) and C(client_hca) when given, else on every rail.
  - Each run (one rail of one pair) goes into the first batch in which neither of its nodes runs yet, so that a node serves or
    connects at most once per batch; the runs of a batch run at the same time. The TCP ports of a batch count up from O(port),
    two per run (C(ib_write_bw), then C(ib_read_lat)).
  - Thresholds of a run, for each end, its own C(min_bw_gbps) and C(max_lat_us) when set, else the row of its C(thresholds) for
    the highest rate at or below the run's link rate (the slower of the two ports). A run is judged by the more lenient of its
    ends, the lower bandwidth and the higher latency, since a pair is only as fast as its slower node.
  - A run that cannot run (a port not ACTIVE, no threshold for its rate, no data from a node) carries a C(problem) and no batch;
    its report row fails with it.
  - Explicit pairs that name a host outside the play, pair a node with itself, name an HCA the node does not have, or repeat
    a pair make C(problems), sentences that name C(verify_traffic_pairs); a plan with problems has no runs.
options:
  _input:
    description:
      - Per host of the play, in the play's order, a dict with C(hca) (the fact C(infiniband_hca)), C(address) (where its
        partner reaches its perftest server over TCP), C(min_bw_gbps), C(max_lat_us) and C(thresholds).
      - A list of host names instead checks O(pairs) only (the run's preflight, before any node is read).
    type: raw
    required: true
  pairs:
    description: Explicit pairs (C(verify_traffic_pairs)), each with C(server), C(client), and optionally C(server_hca), C(client_hca).
    type: list
    elements: dict
    default: []
  port:
    description: The first TCP port of each batch.
    type: int
    default: 18515
"""

EXAMPLES = r"""
- name: Plan the pairs of two nodes
  ansible.builtin.set_fact:
    __plan: "{{ {'node01': __node01, 'node02': __node02} | fabric.infiniband.verify_traffic_plan(port=18515) }}"
"""

RETURN = r"""
_value:
  description: The plan.
  type: dict
  contains:
    runs:
      description:
        - One per rail of a pair, with C(id), C(server), C(client), C(server_hca), C(client_hca), C(server_port),
          C(client_port), C(server_address), C(rate_gbps), C(min_bw_gbps), C(max_lat_us), C(bw_iterations), C(lat_iterations),
          C(batch), C(tcp_port), and C(problem) or C(unpaired) when it cannot run.
      type: list
      elements: dict
    batches:
      description: The number of batches.
      type: int
    problems:
      description: What is wrong with O(pairs); the plan must not run when there is any.
      type: list
      elements: str
    notes:
      description: Why nothing is paired (fewer than two nodes with data).
      type: list
      elements: str
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.fabric.infiniband.plugins.plugin_utils import traffic


def verify_traffic_plan(nodes, pairs=None, port=18515):
    try:
        return traffic.plan(nodes, pairs=pairs or [], port=int(port))
    except (TypeError, ValueError) as exc:
        raise AnsibleFilterError("verify_traffic_plan: %s" % exc) from exc


class FilterModule:
    def filters(self):
        return {"verify_traffic_plan": verify_traffic_plan}
