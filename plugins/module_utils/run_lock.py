# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The node's run lock: one run of the collection's playbooks at a time prepares (and reboots) a node.

One small JSON file, written by the ``run_lock`` module:

    {"version": 1, "owner": "alice@ctl01", "since": 1700000000,
     "renewed": 1700000000, "boot": "<boot identity when last taken or renewed>"}

``owner`` names who runs (an operator at a controller, an AWX job template); the same owner taking
the lock again renews it. A lock is stale when it was not renewed for ``max_age`` seconds: a run that was killed
leaves its lock behind. A lock is not stale because the node booted since: the run that holds it
reboots nodes on purpose.

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
    return data


def new(owner, now, boot, previous=None):
    """The lock ``owner`` takes at ``now``; when it renews its own lock, ``since`` stays."""
    since = previous["since"] if previous and previous.get("owner") == owner else now
    return {"version": VERSION, "owner": owner, "since": int(since), "renewed": int(now), "boot": boot}


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
    """'"AWX job 4711", taken 2026-11-26T05:10:00Z, last renewed 12 min ago, in this boot of the node'."""
    where = "in this boot of the node" if lock["boot"] == boot else "in an earlier boot of the node"
    return "%s, taken %s, last renewed %s ago, %s" % (json.dumps(lock["owner"]), utc(lock["since"]), span(age(lock, now)), where)


def clear_hint(path):
    return ("If no run is in progress (a run that failed, was killed or lost its connection leaves its lock), clear it: run again with break_lock=true "
            "(the collection's playbooks: %s), or remove the file on the node (rm %s)." % (PLAYBOOK_BREAK, path))


def held_message(path, lock, now, boot, max_age):
    """Another run holds the lock."""
    stale = "it goes stale %s after its last renewal" % span(max_age) if max_age > 0 else "max_age is 0: it never goes stale"
    return ("Another run holds the run lock of this node (%s): %s. Wait until that run ends; it releases the lock. %s "
            "(A lock not renewed for max_age is taken over without asking; %s.)" % (path, describe(lock, now, boot), clear_hint(path), stale))


def damaged_message(path, reason):
    """The lock file is there but is not a lock: nobody can tell whose it is."""
    return "The run lock %s cannot be used: %s. %s" % (path, reason, clear_hint(path))
