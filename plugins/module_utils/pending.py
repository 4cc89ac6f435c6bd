# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The node's record of disruptive actions that changes are waiting for.

Roles never reboot, reset firmware or power-cycle a node themselves: they record here that one
is needed (``pending_action`` module), and the reboot orchestration reads the record, acts once
for everything, and after the boot decides whether each change took effect.  One JSON file:

    {"version": 1,
     "entries": {"link_type": {"action": "reboot", "reason": "...", "details": {...},
                               "since": 1700000000, "boot": "<boot identity when recorded>"}}}

The boot identity tells whether the node has booted since an entry was recorded, which is what a
boot-loop guard needs: an entry recorded before the current boot whose change is still not live
is a failure to report, not a reason to reboot again.
"""

from __future__ import annotations

import json
import os

from ansible_collections.fabric.infiniband.plugins.module_utils import _files

DEFAULT_PATH = "/var/lib/fabric-infiniband/pending.json"
ACTIONS = ("reboot", "power_cycle", "fw_reset")
# The strongest action wins when several are pending: a power cycle also applies what a reboot
# would, and a reboot also applies what a firmware reset would.
STRENGTH = {"fw_reset": 1, "reboot": 2, "power_cycle": 3}


def _read(path):
    try:
        with open(path) as handle:
            return handle.read()
    except (IOError, OSError):
        return None


def boot_identity(proc="/proc"):
    """Changes with every boot of the machine, and with every start of a container's init.

    ``boot_id`` is new on each kernel boot; the start time of PID 1 (field 22 of its stat, in
    clock ticks since the kernel booted) is fixed on a host but new whenever a container's init
    is started again, so the pair identifies a boot in both places.
    """
    boot_id = (_read(os.path.join(proc, "sys/kernel/random/boot_id")) or "").strip()
    stat = _read(os.path.join(proc, "1/stat")) or ""
    # The command name in field 2 may contain spaces; the fields after its ')' are plain.
    fields = stat.rpartition(")")[2].split()
    start = fields[19] if len(fields) > 19 else ""
    return "%s:%s" % (boot_id, start)


def load(path):
    """The record as a dict; an absent file is an empty record, a damaged one raises ValueError."""
    text = _read(path)
    if text is None or not text.strip():
        return {"version": 1, "entries": {}}
    data = json.loads(text)
    if not isinstance(data, dict) or not isinstance(data.get("entries"), dict):
        raise ValueError("%s is not a pending-action record" % path)
    return data


def save(module, path, data):
    """Write atomically (temporary file in the same directory, then rename)."""
    text = json.dumps(data, indent=2, sort_keys=True) + "\n"
    _files.write_atomic(module, path, text.encode("utf-8"), 0o644)


def strongest(entries):
    """The one action that satisfies every entry, or None when nothing is pending."""
    actions = [entry.get("action") for entry in entries.values() if entry.get("action") in STRENGTH]
    return max(actions, key=STRENGTH.get) if actions else None


def annotate(entries, current_boot):
    """Entries as returned to the user: with ``booted_since`` (the node booted after recording)."""
    out = {}
    for name, entry in entries.items():
        item = dict(entry)
        item["booted_since"] = bool(entry.get("boot")) and entry.get("boot") != current_boot
        out[name] = item
    return out


def read(module, path):
    """The record's plan for the current boot, with ``boot``: what pending_info returns (and
    hca_info with ``pending: true``); a damaged record fails the module, naming the file."""
    try:
        record = load(path)
    except ValueError as exc:
        module.fail_json(msg="Cannot read the pending-action record %s: %s. Move it away to start a new record." % (path, exc))
    boot = boot_identity()
    result = plan(record["entries"], boot)
    result["boot"] = boot
    return result


def plan(entries, current_boot):
    """What the reboot orchestration needs to decide, from the record's entries.

    An entry recorded before the current boot (``booted_since``) has had its chance: it is never a
    reason to act again (boot-loop guard), only to report. The others decide the action: the
    strongest of them, and whether a firmware reset would be enough for all of them.
    """
    annotated = annotate(entries, current_boot)
    actionable = dict((name, entry) for name, entry in annotated.items() if not entry["booted_since"])
    tried = sorted(name for name, entry in annotated.items() if entry["booted_since"])
    next_action = strongest(actionable)
    return dict(
        entries=annotated,
        action=strongest(entries),
        next_action=next_action,
        actionable=sorted(actionable),
        tried=tried,
        fw_reset_sufficient=next_action == "fw_reset",
    )
