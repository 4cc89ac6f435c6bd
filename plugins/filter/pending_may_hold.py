# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
name: pending_may_hold
short_description: Whether a node's pending-action record may hold a role's entry
version_added: 0.2.0
author: fabric.infiniband developers (@fabric-infiniband)
description:
  - Takes the fact C(infiniband_pending) (published by M(fabric.infiniband.pending_info), M(fabric.infiniband.hca_info) with
    O(fabric.infiniband.hca_info#module:pending=true) and M(fabric.infiniband.pending_action)) and returns V(false) only when that fact is
    current (P(fabric.infiniband.fact_current#filter)) and has no entry O(name). A role then skips removing an entry that is not there.
options:
  _input:
    description: The fact, or nothing.
    type: raw
    required: true
  name:
    description: The entry's name, usually the role's.
    type: str
    required: true
  stale:
    description: The fact C(infiniband_pending_stale).
    type: bool
    default: false
"""

EXAMPLES = r"""
- name: Remove the role's entry when the record may hold it
  fabric.infiniband.pending_action:
    name: link_type
    state: absent
  when: ansible_facts.infiniband_pending | default(none) | fabric.infiniband.pending_may_hold('link_type')
"""

RETURN = r"""
_value:
  description: V(false) when the current record has no such entry, V(true) otherwise.
  type: bool
"""

from ansible.module_utils.parsing.convert_bool import boolean

from ansible_collections.fabric.infiniband.plugins.plugin_utils import node_state


def pending_may_hold(fact, name, stale=False):
    if not node_state.is_current(fact, stale=boolean(stale, strict=False)):
        return True
    return name in (fact.get("entries") or {})


class FilterModule:
    def filters(self):
        return {"pending_may_hold": pending_may_hold}
