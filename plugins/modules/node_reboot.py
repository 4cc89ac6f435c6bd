#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

# The documentation of the action plugin plugins/action/node_reboot.py, the checks of the role fabric.infiniband.node_reboot.

from __future__ import annotations

DOCUMENTATION = r"""
module: node_reboot
short_description: The node_reboot role's checks of the reboot settings and batch controls, in one task
version_added: 0.3.0
description:
  - The first task of the role P(fabric.infiniband.node_reboot#role) and its entry point C(validate), which read the reboot
    settings from the task's variables (the role's C(node_reboot_*) options and the playbooks' C(infiniband_*) names that map
    onto them).
  - Refuses unknown C(node_reboot_*) settings, values the reboot orchestration cannot use (each named by the variable the user
    set, with the accepted values), and the batch controls C(infiniband_reboot_serial), C(infiniband_reboot_max_fail_percentage)
    and C(infiniband_reboot_hosts) when they are set for a host, where the play keywords of C(playbooks/reboot.yml) cannot see
    them.
  - Changes nothing. Without O(pending) it reads nothing from the node. Whether a node reboots is decided by the role's
    tasks after it, from the node's pending-action record.
options:
  pending:
    description:
      - Also return what the node waits for (RV(next_action), RV(tried) and RV(waiting)), taken from the fact C(infiniband_pending) when
        a role of this run published it and nothing marked it stale since, else read from the node's record by
        M(fabric.infiniband.pending_info) (a read, the same in check mode), whose facts it publishes.
      - C(playbooks/reboot.yml) checks and reads in this one task, then groups the waiting nodes.
      - Ignored with O(preflight=true).
    type: bool
    default: false
author:
  - fabric.infiniband developers (@fabric-infiniband)
extends_documentation_fragment:
  - fabric.infiniband.role_step
seealso:
  - module: fabric.infiniband.pending_action
"""

EXAMPLES = r"""
- name: Check the reboot settings and the batch controls (the role's entry point validate)
  fabric.infiniband.node_reboot:
    preflight: true

- name: Check the reboot settings, read what the node waits for
  fabric.infiniband.node_reboot:
    pending: true
  register: reboot_check

- name: Group the nodes that wait
  ansible.builtin.group_by:
    key: infiniband_reboot_waiting
  when: reboot_check.waiting
"""

RETURN = r"""
problems:
  description: What was refused, each named by the variable the user set.
  returned: always
  type: list
  elements: str
  sample: ["infiniband_reboot_timeout: 0 is not accepted; accepted: whole seconds, 1 or more"]
next_action:
  description: What the node waits for, as RV(fabric.infiniband.pending_info#module:next_action) (V(null) when nothing).
  returned: with O(pending=true)
  type: str
  sample: reboot
tried:
  description: The entries a boot has already tried, as RV(fabric.infiniband.pending_info#module:tried).
  returned: with O(pending=true)
  type: list
  elements: str
  sample: []
waiting:
  description: Whether the node waits for an action or holds entries a boot did not apply (the nodes reboot.yml groups).
  returned: with O(pending=true)
  type: bool
  sample: true
"""
