# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
name: run_id
short_description: The identity of this ansible-playbook run, to stamp node facts with
version_added: 0.2.0
author: fabric.infiniband developers (@fabric-infiniband)
description:
  - Returns one string naming the current run of C(ansible-playbook) on this controller (host name, process ID and start time of the
    process that forks the workers).
  - The roles of this collection pass it to M(fabric.infiniband.hca_info), M(fabric.infiniband.pending_info) and
    M(fabric.infiniband.pending_action) as their O(fabric.infiniband.hca_info#module:run_id) option, and use a fact those modules
    published only when P(fabric.infiniband.fact_current#filter) says it belongs to this run. A fact from an earlier run, for example from
    Ansible's fact cache, is read by fleet-wide checks but never decides a change.
options:
  _terms:
    description:
      - Nothing, for the run's identity. V(owner) instead returns who runs, the owner under which the collection's playbooks take the
        nodes' run lock (M(fabric.infiniband.run_lock)), namely C(infiniband_run_owner) when set, in AWX V(AWX job template <name>), else
        the controller's user and host name (V(alice@ctl01)).
    type: list
    elements: str
    required: false
notes:
  - The same run gives the same string in every task and worker; another run, even with the same process ID, gives another.
"""

EXAMPLES = r"""
- name: Read the adapters, stamped with this run
  fabric.infiniband.hca_info:
    run_id: "{{ lookup('fabric.infiniband.run_id') }}"

- name: Take the node's run lock under the name of who runs
  fabric.infiniband.run_lock:
    owner: "{{ lookup('fabric.infiniband.run_id', 'owner') }}"
"""

RETURN = r"""
_raw:
  description: One string, for example V(ctl01:41522:8840213).
  type: list
  elements: str
"""

from ansible.errors import AnsibleLookupError
from ansible.plugins.lookup import LookupBase

from ansible_collections.fabric.infiniband.plugins.plugin_utils import node_state


class LookupModule(LookupBase):
    def run(self, terms, variables=None, **kwargs):
        if not terms:
            return [node_state.run_id()]
        if list(terms) == ["owner"]:
            return [node_state.run_owner(dict((name, self._templar.template(variables[name])) for name in
                                              ("infiniband_run_owner", "awx_job_template_name") if name in (variables or {})))]
        raise AnsibleLookupError("fabric.infiniband.run_id takes no term, or the term owner; got %s" % ", ".join(map(str, terms)))
