# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
name: verify_traffic_rows
short_description: Judge the RDMA traffic runs of the verify role against their thresholds
version_added: 0.1.0
author: fabric.infiniband developers (@fabric-infiniband)
description:
  - One report row per run of the plan of C(fabric.infiniband.verify_traffic_plan), with the bandwidth of C(ib_write_bw) (Gb/s)
    and the latency of C(ib_read_lat) (typical, microseconds) the client measured, the thresholds, and the verdict.
  - V(pass) when both figures are within their thresholds; V(fail) with the reasons (a figure beyond its threshold, the client's
    or the server's error, a node that gave no result, the plan's problem); V(planned) when no traffic moved (O(planned_why));
    V(unpaired) for a rail the partner lacks (not a failure).
  - Each row names both ends and their HCAs (C(pair)), so that a failing row says where to look.
options:
  _input:
    description: The plan.
    type: dict
    required: true
  results:
    description:
      - What the nodes kept, items C({"run" ID, "client" RESULT}) and C({"run" ID, "server" RESULT}), RESULT being the registered
        result of M(fabric.infiniband.perftest).
    type: list
    elements: dict
    default: []
  planned_why:
    description: Why no traffic moved (check mode, C(verify_traffic_plan_only)); V(null) when it did.
    type: str
"""

EXAMPLES = r"""
- name: Judge the runs
  ansible.builtin.set_fact:
    __rows: "{{ __plan | fabric.infiniband.verify_traffic_rows(results=__results) }}"
"""

RETURN = r"""
_value:
  description:
    - The rows, with C(pair), C(server), C(server_hca), C(server_port), C(client), C(client_hca), C(client_port), C(rate_gbps),
      C(min_bw_gbps), C(max_lat_us), C(bw_gbps), C(lat_us), C(status) and C(reasons).
  type: list
  elements: dict
"""

from ansible_collections.fabric.infiniband.plugins.plugin_utils import traffic


def verify_traffic_rows(plan, results=None, planned_why=None):
    return traffic.rows(plan, results=results or [], planned_why=planned_why)


class FilterModule:
    def filters(self):
        return {"verify_traffic_rows": verify_traffic_rows}
