#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
module: pending_action
short_description: Record that a change waits for a reboot, a firmware reset or a power cycle
version_added: 0.1.0
description:
  - Roles of this collection never reboot, reset firmware or power-cycle a node on their own. When a change they made takes effect only
    after one of those, they record it with this module, and the reboot orchestration acts once for everything that is pending.
  - The record is one JSON file on the node. Each entry keeps the time and the boot it was first recorded in, even when it is recorded
    again, so that after a reboot RV(entries.booted_since) tells that the node has booted since and the change is still not live.
  - An entry's action is never weakened while the entry exists (a pending power cycle stays one when a later run asks for a reboot).
    When the action becomes stronger, its time and boot start again, since the stronger action has not been tried yet.
  - Remove the entry (O(state=absent)) once its change is live.
  - Never reboots or resets anything itself.
  - A record that is not one (not JSON, or JSON of another shape) fails the module with the same message whatever is wrong, saying what
    and how to move it away. A record that cannot be written fails it with the path, the system's error and what to do, never a traceback.
    To learn that before making the change the entry is about, run M(fabric.infiniband.pending_info) with
    O(fabric.infiniband.pending_info#module:writable=true) first.
  - In check mode, when the record would change, the module checks that it could be written (a temporary file, removed at once).
author:
  - fabric.infiniband developers (@fabric-infiniband)
extends_documentation_fragment:
  - fabric.infiniband.attributes
attributes:
  check_mode:
    support: full
  diff_mode:
    support: full
options:
  name:
    description:
      - Who records the entry, usually the role's name, for example V(link_type). One entry per name.
    type: str
    required: true
  state:
    description:
      - V(present) records the entry (or updates its action, reason and details), V(absent) removes it.
    type: str
    choices: [present, absent]
    default: present
  action:
    description:
      - What the change waits for. V(fw_reset) is a firmware reset (C(mlxfwreset)), V(reboot) a warm reboot, V(power_cycle) a cold one.
      - A stronger action also satisfies the weaker ones; RV(action) is the strongest action over all entries.
    type: str
    choices: [reboot, power_cycle, fw_reset]
    default: reboot
  reason:
    description:
      - A sentence for the operator, for example V(LINK_TYPE_P1 of 0000:3b:00.0 is IB at the next boot, ETH now).
    type: str
    default: ""
  details:
    description:
      - Anything the orchestration or a later run needs to decide whether the change took effect, for example the devices and values.
    type: dict
    default: {}
  escalate_to:
    description:
      - When the node has booted since the entry was recorded and the change is still pending (the caller records it again), record this
        stronger action instead, for example V(power_cycle) for cards that load a new configuration only on a cold boot.
      - Its time and boot start again, so that RV(stuck) tells whether the stronger action helped.
      - Ignored with O(state=absent) and when the entry's action is already as strong.
    type: str
    choices: [reboot, power_cycle, fw_reset]
  stuck_msg:
    description:
      - With O(state=present), fail when RV(stuck) is true, with a message that names the entry, the action that was tried and its reason,
        followed by this text (what the operator should check instead of rebooting again).
      - So that a role records what waits, removes what no longer does and stops at a boot that did not apply its change in one task.
      - Empty, the module never fails for that and returns RV(stuck) for the caller to decide.
    type: str
    default: ""
  run_id:
    description:
      - The run this call belongs to, stamped on the refreshed fact RV(ansible_facts.infiniband_pending). The roles pass
        P(fabric.infiniband.run_id#lookup).
    type: str
    default: ""
  path:
    description:
      - The file holding the record.
    type: path
    default: /var/lib/fabric-infiniband/pending.json
"""

EXAMPLES = r"""
- name: Record that the new link types need a reboot
  fabric.infiniband.pending_action:
    name: link_type
    action: reboot
    reason: "LINK_TYPE_P1 of 0000:3b:00.0 is IB at the next boot"
    details:
      devices: ["0000:3b:00.0"]

- name: Nothing is pending for link_type any more
  fabric.infiniband.pending_action:
    name: link_type
    state: absent
  register: __pending

- name: Record a reboot; when one already happened and did not help, record a power cycle instead
  fabric.infiniband.pending_action:
    name: link_type
    action: reboot
    escalate_to: power_cycle
  register: __pending

- name: Stop when even the power cycle did not apply the change
  ansible.builtin.fail:
    msg: "The change is still pending after a {{ __pending.entries.link_type.action }}"
  when: __pending.stuck

- name: Record what waits or remove the entry, and stop at a boot that did not apply it, in one task
  fabric.infiniband.pending_action:
    name: link_type
    state: "{{ 'present' if __waiting | length > 0 else 'absent' }}"
    action: reboot
    escalate_to: power_cycle
    reason: "LINK_TYPE_P1 of 0000:3b:00.0 is IB at the next boot"
    stuck_msg: Check the card's firmware version, or power the node off and on by hand.
    run_id: "{{ lookup('fabric.infiniband.run_id') }}"
  vars:
    __waiting: ["0000:3b:00.0"]
"""

RETURN = r"""
entries:
  description: Every pending entry on the node after the change, by name.
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
      description: What the entry waits for.
      type: str
    reason:
      description: The entry's sentence for the operator.
      type: str
    details:
      description: The entry's details.
      type: dict
    since:
      description: When the entry was first recorded, seconds since the epoch.
      type: int
    boot:
      description: Identity of the boot in which the entry was first recorded.
      type: str
    booted_since:
      description: Whether the node has booted since the entry was first recorded.
      type: bool
action:
  description: The strongest pending action over all entries (a power cycle covers a reboot, a reboot a firmware reset), V(null) when none.
  returned: always
  type: str
  sample: reboot
boot:
  description: Identity of the current boot (C(/proc/sys/kernel/random/boot_id) and the start time of PID 1).
  returned: always
  type: str
ansible_facts:
  description: The record after the call, as M(fabric.infiniband.pending_info) would read it now.
  returned: always
  type: complex
  contains:
    infiniband_pending:
      description: What M(fabric.infiniband.pending_info) returns, with C(run_id) (O(run_id)); in check mode, the record as it would be.
      type: dict
    infiniband_pending_stale:
      description: Always V(false).
      type: bool
stuck:
  description:
    - With O(state=present), whether the entry's action has already been tried (the node booted since it was recorded) and it could not
      be escalated further, so that the change is still pending after what should have applied it. A caller should fail, not reboot again.
  returned: always
  type: bool
  sample: false
"""

import time

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.fabric.infiniband.plugins.module_utils import pending


def argument_spec():
    return dict(
        name=dict(type="str", required=True),
        state=dict(type="str", choices=["present", "absent"], default="present"),
        action=dict(type="str", choices=list(pending.ACTIONS), default="reboot"),
        reason=dict(type="str", default=""),
        details=dict(type="dict", default={}),
        escalate_to=dict(type="str", choices=list(pending.ACTIONS)),
        stuck_msg=dict(type="str", default=""),
        run_id=dict(type="str", default=""),
        path=dict(type="path", default=pending.DEFAULT_PATH),
    )


class PendingAction(object):
    def __init__(self, module):
        self.module = module
        self.params = module.params
        self.boot = pending.boot_identity()

    def desired(self, before):
        entries = dict(before)
        name = self.params["name"]
        if self.params["state"] == "absent":
            entries.pop(name, None)
            return entries
        old = before.get(name) or {}
        action = self.params["action"]
        if pending.STRENGTH.get(old.get("action"), 0) > pending.STRENGTH[action]:
            # Never weakened: the stronger action also applies what the weaker one would.
            action = old["action"]
        escalate = self.params["escalate_to"]
        if self.tried(old) and escalate and pending.STRENGTH[escalate] > pending.STRENGTH[action]:
            action = escalate
        if old.get("action") == action:
            since, boot = old.get("since", int(time.time())), old.get("boot", self.boot)
        else:
            # A new or stronger action has not been tried yet: its clock starts now.
            since, boot = int(time.time()), self.boot
        entries[name] = dict(action=action, reason=self.params["reason"], details=self.params["details"], since=since, boot=boot)
        return entries

    def tried(self, entry):
        """The entry's action was already tried: the node has booted since it was recorded."""
        return bool(entry) and entry.get("boot") != self.boot

    def consequence(self):
        """What a record that cannot be written means for this call."""
        name = self.params["name"]
        if self.params["state"] == "absent":
            return "The entry %s stays, so the reboot play may still act on it." % name
        return ("Nothing records that %s waits for a %s: if its change is already made, the reboot play does not know it "
                "until it is recorded." % (name, self.params["action"].replace("_", " ")))

    def run(self):
        path = self.params["path"]
        record = pending.load_or_fail(self.module, path)
        before = record["entries"]
        after = self.desired(before)
        changed = after != before
        if changed and self.module.check_mode:
            # What a real run would meet: a record it cannot write (nothing is left behind by the check).
            reason = pending.check_writable(path)
            if reason:
                self.module.fail_json(msg=pending.unwritable_message(path, reason, self.consequence()), changed=False)
        elif changed:
            record["entries"] = after
            pending.save(self.module, path, record, self.consequence())
        entry = after.get(self.params["name"])
        stuck = self.params["state"] == "present" and self.tried(entry)
        result = dict(changed=changed, entries=pending.annotate(after, self.boot), action=pending.strongest(after), boot=self.boot,
                      stuck=stuck)
        fact = pending.plan(after, self.boot)
        fact.update(boot=self.boot, run_id=self.params["run_id"])
        result["ansible_facts"] = dict(infiniband_pending=fact, infiniband_pending_stale=False)
        if self.module._diff:
            result["diff"] = dict(before=dict(entries=before), after=dict(entries=after), before_header=path, after_header=path)
        if stuck and self.params["stuck_msg"]:
            result["msg"] = "%s: the node has booted since this was recorded, by a %s, and it still waits (%s). %s" % (
                self.params["name"], entry["action"].replace("_", " "), entry.get("reason") or "no reason given", self.params["stuck_msg"])
            self.module.fail_json(**result)
        self.module.exit_json(**result)


def main():
    module = AnsibleModule(argument_spec=argument_spec(), supports_check_mode=True)
    PendingAction(module).run()


if __name__ == "__main__":
    main()
