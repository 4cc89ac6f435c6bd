# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations


class ModuleDocFragment(object):

    # The option and attributes every role step (plugins/plugin_utils/role_step.py) shares.
    DOCUMENTATION = r"""
options:
  preflight:
    description:
      - Only the checks. The step reads what it needs from the node (in check mode where a module would change something) and
        fails on what it would refuse, writing nothing. C(playbooks/preflight.yml) runs every role's step this way on every node
        before the first change of a run.
    type: bool
    default: false
attributes:
  action:
    support: full
    description: Runs on the controller as an action plugin, which runs the role's modules on the node.
  check_mode:
    description: Can run with C(--check) and then reports what it would change without changing it.
    support: full
    details:
      - The modules run in check mode; the reads that decide a plan run for real (they change nothing).
  diff_mode:
    description: Returns the state before and after the change when run with C(--diff).
    support: full
    details:
      - The modules' diffs, one per change.
  platform:
    description: The target systems this module runs on.
    support: full
    platforms: linux
notes:
  - The role's settings are read from the task's variables (the role's defaults, the inventory, C(-e)), not passed as options;
    a variable named like a setting of the role that the role does not have is refused, with the closest name.
  - Facts of this run (C(infiniband_hca), C(infiniband_pending)) are used where current, else read from the node once.
"""
