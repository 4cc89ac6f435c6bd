# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
name: fact_current
short_description: Whether a node fact of this collection was read in this run and is not stale
version_added: 0.2.0
author: fabric.infiniband developers (@fabric-infiniband)
description:
  - Takes a fact published by M(fabric.infiniband.hca_info) (C(infiniband_hca)), M(fabric.infiniband.pending_info) or
    M(fabric.infiniband.pending_action) (C(infiniband_pending)) and returns V(true) when it was read in the current run of
    C(ansible-playbook) (its C(run_id) equals P(fabric.infiniband.run_id#lookup)) and O(stale) is false.
  - A missing fact, one without a stamp, and one from another run (Ansible's fact cache, a sliced AWX job) are not current. The roles
    of this collection read the node again in that case before they change anything.
options:
  _input:
    description: The fact, or nothing.
    type: raw
    required: true
  stale:
    description: The matching C(infiniband_<name>_stale) fact, set by the modules that changed what the fact describes.
    type: bool
    default: false
"""

EXAMPLES = r"""
- name: Read the adapters unless this run has a current reading
  fabric.infiniband.hca_info:
    run_id: "{{ lookup('fabric.infiniband.run_id') }}"
  when: not ansible_facts.infiniband_hca | default(none) | fabric.infiniband.fact_current(ansible_facts.infiniband_hca_stale | default(false))
"""

RETURN = r"""
_value:
  description: Whether the fact may be used in place of reading the node again.
  type: bool
"""

from ansible.module_utils.parsing.convert_bool import boolean

from ansible_collections.fabric.infiniband.plugins.plugin_utils import node_state


def fact_current(fact, stale=False):
    return node_state.is_current(fact, stale=boolean(stale, strict=False))


class FilterModule:
    def filters(self):
        return {"fact_current": fact_current}
