#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

# The documentation of the action plugin plugins/action/port_health.py, the port health check of the role fabric.infiniband.verify.

from __future__ import annotations

DOCUMENTATION = r"""
module: port_health
short_description: Judge the health of a node's InfiniBand ports and publish it as the fact infiniband_health
version_added: 0.3.0
description:
  - The port health check of the role P(fabric.infiniband.verify#role), which reads its settings (C(verify_health_*)) from the
    task's variables and refuses bad ones, naming the variable.
  - Runs M(fabric.infiniband.port_health_info) on the node (the counters read twice, C(verify_health_interval) seconds apart)
    and judges every InfiniBand port of a physical function, state ACTIVE, physical state LinkUp, the expected width and
    speed (C(verify_health_expected), by default 4X and the highest speed of the adapter model), the growth of each error
    counter against C(verify_health_thresholds) and the link-downed count since the last run.
  - Publishes the fact C(infiniband_health) (C(run_id), C(passed), C(failures) with a reason each, C(rows)) for the report,
    M(fabric.infiniband.health_gate) and the topology role. Never fails a node for its ports; the report does.
author:
  - fabric.infiniband developers (@fabric-infiniband)
extends_documentation_fragment:
  - fabric.infiniband.role_step
seealso:
  - module: fabric.infiniband.port_health_info
  - module: fabric.infiniband.health_gate
"""

EXAMPLES = r"""
- name: Judge the ports (the role's step; use the role)
  fabric.infiniband.port_health:
  register: __health
"""

RETURN = r"""
passed:
  description: Whether every judged port passed.
  returned: unless verify_health is false
  type: bool
rows:
  description: One row per port, a column per check (V(ok), V(FAIL), V(-) for not judged), with the port's reasons.
  returned: unless verify_health is false
  type: list
  elements: dict
failures:
  description: Each failure with its port, check, code and reason.
  returned: unless verify_health is false
  type: list
  elements: dict
reasons:
  description: "The reasons of the failures, for example V(mlx5_0/1: width 1X, expected 4X)."
  returned: unless verify_health is false
  type: list
  elements: str
ran:
  description: The modules the step ran.
  returned: always
  type: list
  elements: dict
"""
