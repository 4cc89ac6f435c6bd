# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The node's run lock: one run of the collection's playbooks at a time prepares (and reboots) a node.

One small JSON file, written by the ``run_lock`` module:

    {"version": 1, "owner": "alice@ctl01", "run": "ctl01:41522:8840213", "since": 1700000000,
     "renewed": 1700000000, "boot": "<boot identity when last taken or renewed>"}

``owner`` names who runs (an operator at a controller, an AWX job template); ``run`` is the identity
of one run of ansible-playbook (the ``fabric.infiniband.run_id`` lookup: controller host, PID and
start time), written when the caller gives one. The same run taking the lock again renews it; two
runs of the same owner are two runs (issue 33): a later run takes the lock of an earlier one only
when that run is gone (the action plugin sees on the controller that its process ended), when it is
stale, or with break_lock. A lock without ``run`` (an older collection, or a caller without
``run_id``) belongs to its owner alone, as before. A lock is stale when it was not renewed for
``max_age`` seconds: a run that was killed leaves its lock behind. A lock is not stale because the
node booted since: the run that holds it reboots nodes on purpose.

This file holds the pure part (parse, judge, say); the module does the file system work.
"""

from __future__ import annotations

import json
import time

DEFAULT_PATH = "/var/lib/fabric-infiniband/run.lock"
DEFAULT_MAX_AGE = 21600
VERSION = 1
OWNER_MAX = 200
# How the collection's playbooks let a user clear a lock; the module's messages name it next to its own option.
PLAYBOOK_BREAK = "-e infiniband_break_lock=true"


def owner_problem(owner):
    """Why ``owner`` cannot name a run, or None."""
    if not owner or not owner.strip():
        return "it is empty"
    if len(owner) > OWNER_MAX:
        return "it has %d characters, more than %d" % (len(owner), OWNER_MAX)
    if any(not char.isprintable() for char in owner):
        return "it has a line break or another control character"
    return None


def parse(text):
    """The lock in ``text`` (the file's content) as a dict; raises ValueError saying why it is not a lock."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ValueError("it is not JSON (%s)" % exc) from None
    if not isinstance(data, dict):
        raise ValueError("it is JSON but not an object")
    owner = data.get("owner")
    if not isinstance(owner, str) or owner_problem(owner):
        raise ValueError("it names no owner")
    for key in ("since", "renewed"):
        if isinstance(data.get(key), bool) or not isinstance(data.get(key), (int, float)):
            raise ValueError("its %s is not a number of seconds" % key)
    if not isinstance(data.get("boot"), str):
        raise ValueError("its boot is not a string")
    if data.get("run") is not None and not isinstance(data.get("run"), str):
        raise ValueError("its run is not a string")
    return data


def same_run(lock, owner, run):
    """Whether ``lock`` is the lock of the run (``owner``, ``run``): the same owner and the same run identity
    (both without one: a lock and a caller of before run identities)."""
    return lock.get("owner") == owner and (lock.get("run") or None) == (run or None)


def new(owner, now, boot, previous=None, run=None):
    """The lock the run (``owner``, ``run``) takes at ``now``; when it renews its own lock, ``since`` stays."""
    since = previous["since"] if previous and same_run(previous, owner, run) else now
    lock = {"version": VERSION, "owner": owner, "since": int(since), "renewed": int(now), "boot": boot}
    if run:
        lock["run"] = run
    return lock


def setting(names, option):
    """How a message names ``option``: ``infiniband_run_lock_max_age (max_age)`` where ``names`` (the module's
    setting_names) says which variable of the user's it came from, else the option."""
    name = (names or {}).get(option)
    return "%s (%s)" % (name, option) if name and name != option else option


def age(lock, now):
    """Seconds since the lock was taken or last renewed (never negative, whatever the clock did)."""
    return max(0, int(now - lock["renewed"]))


def is_stale(lock, now, max_age):
    """Not renewed for more than ``max_age`` seconds (0: never stale by age)."""
    return max_age > 0 and age(lock, now) > max_age


def span(seconds):
    """'40 s', '12 min', '3 h 5 min', '2 d 4 h'."""
    seconds = int(seconds)
    if seconds < 60:
        return "%d s" % seconds
    if seconds < 3600:
        return "%d min" % (seconds // 60)
    if seconds < 86400:
        return "%d h %d min" % (seconds // 3600, seconds % 3600 // 60)
    return "%d d %d h" % (seconds // 86400, seconds % 86400 // 3600)


def utc(seconds):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


def describe(lock, now, boot):
    """'"AWX job 4711" (run ctl01:4152:88), taken 2026-11-26T05:10:00Z, last renewed 12 min ago, in this boot of the node'."""
    where = "in this boot of the node" if lock["boot"] == boot else "in an earlier boot of the node"
    run = " (run %s)" % lock["run"] if lock.get("run") else ""
    return "%s%s, taken %s, last renewed %s ago, %s" % (json.dumps(lock["owner"]), run, utc(lock["since"]), span(age(lock, now)), where)


def clear_hint(path):
    return ("If no run is in progress (a run that failed, was killed or lost its connection leaves its lock), clear it: run again with break_lock=true "
            "(the collection's playbooks: %s), or remove the file on the node (rm %s)." % (PLAYBOOK_BREAK, path))


def held_message(path, lock, now, boot, max_age, names=None, same_owner=False, liveness=None):
    """Another run holds the lock (``same_owner``: another run of this run's owner; ``liveness``: what the
    controller could tell of that run, a sentence or None)."""
    max_age_name = setting(names, "max_age")
    stale = ("it goes stale %s after its last renewal" % span(max_age) if max_age > 0
             else "%s is 0: it never goes stale" % max_age_name)
    who = "Another run of the same owner" if same_owner else "Another run"
    live = " %s." % liveness if liveness else ""
    return ("%s holds the run lock of this node (%s): %s.%s Wait until that run ends; it releases the lock. %s "
            "(A lock not renewed for %s is taken over without asking; %s.)"
            % (who, path, describe(lock, now, boot), live, clear_hint(path), max_age_name, stale))


def damaged_message(path, reason):
    """The lock file is there but is not a lock: nobody can tell whose it is."""
    return "The run lock %s cannot be used: %s. %s" % (path, reason, clear_hint(path))
