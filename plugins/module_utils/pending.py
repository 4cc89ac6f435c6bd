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

import errno
import json
import os
import pwd
import tempfile

from ansible_collections.fabric.infiniband.plugins.module_utils import _files

DEFAULT_PATH = "/var/lib/fabric-infiniband/pending.json"
VERSION = 1
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


def json_type(value):
    """The JSON name of a value's type, for messages about a record written by hand."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


def os_error_text(exc):
    """What an OSError says, with its errno name and the path it names: 'mkdir /x: Read-only file system (EROFS)'."""
    name = errno.errorcode.get(exc.errno, "errno %s" % exc.errno) if exc.errno else "no errno"
    text = "%s (%s)" % (exc.strerror or exc, name)
    return "%s: %s" % (exc.filename, text) if exc.filename else text


def shape_problem(data):
    """Why ``data`` (parsed JSON) is not a pending-action record, or None when it is one.

    A record is an object with ``entries`` (an object, by name) and an optional ``version`` (1); each
    entry an object with ``action`` (one of ACTIONS), ``since`` (seconds, a number), ``boot`` (a
    string) and optionally ``reason`` (a string) and ``details`` (an object): what pending_action writes.
    """
    if not isinstance(data, dict):
        return "its top level is %s, not an object with version and entries" % json_type(data)
    if "version" in data and (isinstance(data["version"], bool) or data["version"] != VERSION):
        return "its version is %s, this collection reads version %d" % (json.dumps(data["version"]), VERSION)
    if "entries" not in data:
        return "it has no entries"
    if not isinstance(data["entries"], dict):
        return "its entries are %s, not an object of entries by name" % json_type(data["entries"])
    for name in sorted(data["entries"]):
        entry = data["entries"][name]
        where = "entry %s" % json.dumps(name)
        if not isinstance(entry, dict):
            return "%s is %s, not an object" % (where, json_type(entry))
        if "action" not in entry:
            return "%s has no action" % where
        if entry["action"] not in ACTIONS:
            return "%s has the action %s, not one of %s" % (where, json.dumps(entry["action"]), ", ".join(sorted(ACTIONS, key=STRENGTH.get)))
        since = entry.get("since")
        if isinstance(since, bool) or not isinstance(since, (int, float)):
            return "%s has since %s (%s), not a number of seconds" % (where, json.dumps(since), json_type(since)) if "since" in entry \
                else "%s has no since" % where
        if not isinstance(entry.get("boot"), str):
            return "%s has boot %s, not a string" % (where, json_type(entry["boot"])) if "boot" in entry else "%s has no boot" % where
        if not isinstance(entry.get("reason", ""), str):
            return "%s has a reason that is %s, not a string" % (where, json_type(entry["reason"]))
        if not isinstance(entry.get("details", {}), dict):
            return "%s has details that are %s, not an object" % (where, json_type(entry["details"]))
    return None


def load(path):
    """The record as a dict; an absent (or empty) file is an empty record.

    Raises ValueError, saying why, when the file cannot be read, is not JSON, or is JSON of another
    shape (shape_problem): a reader must never take a damaged record for an empty one.
    """
    try:
        with open(path, "rb") as handle:
            raw = handle.read()
    except (IOError, OSError) as exc:
        if exc.errno in (errno.ENOENT, errno.ENOTDIR):
            # Nothing there (ENOTDIR: a file where a directory of the path goes, which a write reports).
            raw = b""
        else:
            raise ValueError("it cannot be read: %s" % os_error_text(exc)) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError("it is not UTF-8 text") from None
    if not text.strip():
        return {"version": VERSION, "entries": {}}
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ValueError("it is not JSON (%s)" % exc) from None
    problem = shape_problem(data)
    if problem:
        raise ValueError("it is JSON but not a pending-action record: %s" % problem)
    return data


def damaged_message(path, reason):
    """The one message for a record that cannot be used, whatever is wrong with it."""
    return ("Cannot read the pending-action record %s: %s. Move it away to start a new record (for example: mv %s %s.damaged), "
            "then run the playbook again; the moved file shows what was waiting." % (path, reason, path, path))


def load_or_fail(module, path):
    """load(), failing the module with damaged_message."""
    try:
        return load(path)
    except ValueError as exc:
        module.fail_json(msg=damaged_message(path, exc))


def _user():
    try:
        return pwd.getpwuid(os.geteuid()).pw_name
    except KeyError:
        return "uid %d" % os.geteuid()


def unwritable_message(path, reason, consequence):
    """The one message for a record that cannot be written: the path, why (errno text), what it means, what to do."""
    directory = os.path.dirname(path) or "."
    return ("Cannot write the pending-action record %s: %s. %s Make %s writable by %s (a read-write file system with free space; "
            "check its owner and mode, and mount options), or point the record elsewhere with the module's path option, then run again."
            % (path, reason, consequence, directory, _user()))


def check_writable(path):
    """Prove that the record at ``path`` can be written, as save() writes it, without leaving anything behind.

    When the record's directory exists, a temporary file is created in it, written, synced and removed;
    when it does not, a temporary directory is created and removed in the nearest existing parent (where
    save() would create it). Returns None when it can be written, else the reason.
    """
    if os.path.lexists(path) and not os.path.isfile(path):
        return "%s exists and is not a regular file" % path
    directory = os.path.dirname(path) or "."
    probe = directory
    while not os.path.isdir(probe):
        if os.path.lexists(probe):
            return "%s exists and is not a directory" % probe
        probe = os.path.dirname(probe) or "."
    try:
        if probe == directory:
            fd, tmp = tempfile.mkstemp(prefix=".%s.probe." % os.path.basename(path), dir=directory)
            try:
                os.write(fd, b"{}\n")
                os.fsync(fd)
            finally:
                os.close(fd)
                os.unlink(tmp)
        else:
            os.rmdir(tempfile.mkdtemp(prefix=".fabric-infiniband.probe.", dir=probe))
    except (IOError, OSError) as exc:
        return os_error_text(exc)
    return None


def save(module, path, data, consequence="The record is unchanged."):
    """Write atomically (temporary file in the same directory, then rename); a failure fails the module
    with unwritable_message, never with a traceback or a bare errno."""
    text = json.dumps(data, indent=2, sort_keys=True) + "\n"
    try:
        _files.write_atomic(module, path, text.encode("utf-8"), 0o644)
    except (IOError, OSError) as exc:
        module.fail_json(msg=unwritable_message(path, os_error_text(exc), consequence), changed=False)


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
    record = load_or_fail(module, path)
    boot = boot_identity()
    result = plan(record["entries"], boot)
    result["boot"] = boot
    return result


def tried_message(result, advice):
    """The failure of a node whose boot did not apply what was recorded before it (the boot-loop guard): each tried entry
    with its reason, then ``advice`` (what to do instead of another boot). ``result``: what :func:`read` returns."""
    entries = result.get("entries") or {}
    listed = "; ".join("%s: %s" % (name, (entries.get(name) or {}).get("reason") or "no reason recorded")
                       for name in result.get("tried") or [])
    return "The node has booted since these were recorded and they still wait: %s. %s" % (listed, advice)


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
