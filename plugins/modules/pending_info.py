#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
module: pending_info
short_description: Read what a node waits for (a reboot, a firmware reset or a power cycle)
version_added: 0.1.0
description:
  - Reads the record that the roles of this collection keep on a node with M(fabric.infiniband.pending_action), and tells the reboot
    orchestration what to do about it. Changes nothing.
  - An entry recorded before the current boot (RV(entries.booted_since)) has already had its reboot or power cycle. It is never a reason
    to act again (the boot-loop guard), so RV(next_action) only counts the other entries, and RV(tried) names these.
  - Publishes the reading as the fact RV(ansible_facts.infiniband_pending).
author:
  - fabric.infiniband developers (@fabric-infiniband)
extends_documentation_fragment:
  - fabric.infiniband.attributes
  - fabric.infiniband.attributes.info_module
options:
  path:
    description:
      - The file holding the record. An absent file is an empty record.
    type: path
    default: /var/lib/fabric-infiniband/pending.json
  run_id:
    description:
      - The run this reading belongs to, stamped on the fact RV(ansible_facts.infiniband_pending). The roles pass
        P(fabric.infiniband.run_id#lookup) and use the fact only when P(fabric.infiniband.fact_current#filter) says it is current.
    type: str
    default: ""
  writable:
    description:
      - Also prove that the record can be written, and fail, naming the path, the system's error and what to do, when it cannot.
        Run it before a change that M(fabric.infiniband.pending_action) is to record, so that a read-only or full state directory
        stops the run before the change rather than leaving a change that nothing records.
      - The proof leaves nothing behind, so it runs in check mode too. A temporary file is created, written and removed in the
        record's directory; when that directory does not exist yet, a temporary directory is created and removed where it would be made.
    type: bool
    default: false
seealso:
  - module: fabric.infiniband.pending_action
"""

EXAMPLES = r"""
- name: Read what the node waits for
  fabric.infiniband.pending_info:
  register: __pending

- name: Before changing the firmware, make sure the change can be recorded
  fabric.infiniband.pending_info:
    writable: true

- name: Reboot when something waits for one (or for a power cycle, which also reboots)
  ansible.builtin.reboot:
  when: __pending.next_action in ['reboot', 'power_cycle']
"""

RETURN = r"""
entries:
  description: Every pending entry on the node, by name (the role that recorded it).
  returned: always
  type: dict
  sample:
    link_type:
      action: reboot
      reason: "LINK_TYPE_P1 of 0000:3b:00.0 is IB at the next boot"
      details: {devices: ["0000:3b:00.0"]}
      since: 1763776000
      boot: "8c7e0d5e-2f7e-4b43-9a4b-2c3f0c8a5e61:1"
      booted_since: false
  contains:
    action:
      description: What the entry waits for, V(fw_reset), V(reboot) or V(power_cycle).
      type: str
    reason:
      description: The entry's sentence for the operator.
      type: str
    details:
      description: The entry's details.
      type: dict
    since:
      description: When the entry (its current action) was first recorded, seconds since the epoch.
      type: int
    boot:
      description: Identity of the boot in which the entry was first recorded.
      type: str
    booted_since:
      description: Whether the node has booted since the entry was first recorded (its action has been tried).
      type: bool
action:
  description: The strongest action over all entries, V(null) when nothing is pending.
  returned: always
  type: str
  sample: reboot
next_action:
  description:
    - The strongest action over the entries that have not been tried yet (RV(entries.booted_since) false), V(null) when there are none.
      This is what the node should get; a power cycle covers a reboot, a reboot covers a firmware reset.
  returned: always
  type: str
  sample: reboot
actionable:
  description: Names of the entries that have not been tried yet.
  returned: always
  type: list
  elements: str
  sample: [link_type, sriov]
tried:
  description: Names of the entries recorded before the current boot, whose change is still not confirmed by the role that recorded it.
  returned: always
  type: list
  elements: str
  sample: []
fw_reset_sufficient:
  description: Whether a firmware reset is enough for every entry not tried yet (each of them asks for V(fw_reset)).
  returned: always
  type: bool
  sample: false
ansible_facts:
  description: The reading as a node fact.
  returned: always
  type: complex
  contains:
    infiniband_pending:
      description: Every other return value of the module, with C(run_id) (O(run_id)).
      type: dict
    infiniband_pending_stale:
      description: Always V(false).
      type: bool
boot:
  description: Identity of the current boot (C(/proc/sys/kernel/random/boot_id) and the start time of PID 1).
  returned: always
  type: str
writable:
  description: Whether the record can be written (the module fails when it cannot).
  returned: when O(writable=true)
  type: bool
  sample: true
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.fabric.infiniband.plugins.module_utils import pending


def argument_spec():
    return dict(
        path=dict(type="path", default=pending.DEFAULT_PATH),
        run_id=dict(type="str", default=""),
        writable=dict(type="bool", default=False),
    )


def main():
    module = AnsibleModule(argument_spec=argument_spec(), supports_check_mode=True)
    path = module.params["path"]
    result = pending.read(module, path)
    facts = dict(infiniband_pending=dict(result, run_id=module.params["run_id"]), infiniband_pending_stale=False)
    if module.params["writable"]:
        reason = pending.check_writable(path)
        if reason:
            module.fail_json(msg=pending.unwritable_message(
                path, reason, "A change that waits for a reboot must not be made on this node until it can be recorded."))
        result["writable"] = True
    module.exit_json(changed=False, ansible_facts=facts, **result)


if __name__ == "__main__":
    main()
