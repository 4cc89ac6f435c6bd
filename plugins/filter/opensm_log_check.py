# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
name: opensm_log_check
short_description: What OpenSM logged since a reload or restart
version_added: 0.1.0
author: fabric.infiniband developers (@fabric-infiniband)
description:
  - Reads a part of OpenSM's log (its default format) and returns the subnet manager states it entered, whether a sweep
    completed (C(SUBNET UP)), and the lines that say the partition configuration was not applied as written (parse
    errors and warnings, the fallback to the default configuration, P_Key errors).
options:
  _input:
    description: Log text.
    type: str
    required: true
"""

EXAMPLES = r"""
- name: Fail on partition errors
  ansible.builtin.assert:
    that: (__log.stdout | fabric.infiniband.opensm_log_check).errors == []
"""

RETURN = r"""
_value:
  description: The findings.
  type: dict
  contains:
    states:
      description: The states entered, in order (V(DISCOVERING), V(STANDBY), V(MASTER), V(NOT-ACTIVE)).
      type: list
      elements: str
    subnet_up:
      description: Whether a sweep completed (the master logs C(SUBNET UP)).
      type: bool
    errors:
      description: Lines about the partition configuration not being applied as written.
      type: list
      elements: str
"""

from ansible_collections.fabric.infiniband.plugins.module_utils import opensm


def opensm_log_check(text):
    return opensm.log_check(text)


class FilterModule:
    def filters(self):
        return {"opensm_log_check": opensm_log_check}
