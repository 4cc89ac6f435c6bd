# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
name: run_id
short_description: The identity of this ansible-playbook run, to stamp node facts with
version_added: 0.2.0
author: fabric.infiniband developers
description:
  - Returns one string naming the current run of C(ansible-playbook) on this controller (host name, process ID and start time of the
    process that forks the workers).
  - The roles of this collection pass it to M(fabric.infiniband.hca_info), M(fabric.infiniband.pending_info) and
    M(fabric.infiniband.pending_action) as their O(fabric.infiniband.hca_info#module:run_id) option, and use a fact those modules
    published only when P(fabric.infiniband.fact_current#filter) says it belongs to this run. A fact from an earlier run, for example from
    Ansible's fact cache, is read by fleet-wide checks but never decides a change.
options: {}
notes:
  - The same run gives the same string in every task and worker; another run, even with the same process ID, gives another.
"""

EXAMPLES = r"""
- name: Read the adapters, stamped with this run
  fabric.infiniband.hca_info:
    run_id: "{{ lookup('fabric.infiniband.run_id') }}"
"""

RETURN = r"""
_raw:
  description: One string, for example V(ctl01:41522:8840213).
  type: list
  elements: str
"""

from ansible.plugins.lookup import LookupBase

from ansible_collections.fabric.infiniband.plugins.plugin_utils import node_state


class LookupModule(LookupBase):
    def run(self, terms, variables=None, **kwargs):
        return [node_state.run_id()]
