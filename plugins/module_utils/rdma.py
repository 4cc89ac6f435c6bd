# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The ``rdma`` tool of iproute2: argv builders and output parsers.

``rdma system show`` has printed more attributes with every iproute2
generation, and some versions print plain text even when asked for JSON
(``-j``), so the parser accepts both forms:

- 5.3 - 5.13: ``netns shared``
- 5.14 - 6.6: ``netns shared copy-on-fork on``
- 6.7 - 6.12: ``netns shared privileged-qkey off copy-on-fork on``
- 6.13+: ``netns shared privileged-qkey off monitor off copy-on-fork on``
- < 5.3: ``Unknown object 'system'.`` (no such command)

``rdma system set netns <mode>`` prints nothing and exits 0 when it worked
(also when the mode was already set), ``error: Device or resource busy``
with rc 1 when the mode differs and a network namespace other than the
initial one exists. ``netns_blockers`` finds those namespaces to say why.
"""

from __future__ import annotations

import json
import os
import re


NETNS_MODES = ("shared", "exclusive")
UNKNOWN_OBJECT = "Unknown object"

_TRUE = ("on", "true", "yes", "enabled")
_FALSE = ("off", "false", "no", "disabled")


def system_show_args():
    """Arguments (after the tool path) that query the RDMA subsystem settings."""
    return ["-j", "system", "show"]


def _key(name):
    name = str(name).strip().lower().replace("-", "_")
    return "netns_mode" if name == "netns" else name


def _value(value):
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, (int, float)):
        return value
    text = str(value).strip()
    if text.lower() in _TRUE:
        return True
    if text.lower() in _FALSE:
        return False
    return text


def _from_json(data):
    if isinstance(data, dict):
        data = [data]
    if not isinstance(data, list):
        return None
    settings = {}
    for item in data:
        if isinstance(item, dict):
            for key, value in item.items():
                settings[_key(key)] = _value(value)
    return settings


def _from_text(text):
    # "<key> <value>" pairs starting at "netns"; anything before it (a
    # device prefix, a warning) is ignored.
    settings = {}
    words = text.split()
    if "netns" not in words:
        return settings
    start = words.index("netns")
    for index in range(start, len(words) - 1, 2):
        settings[_key(words[index])] = _value(words[index + 1])
    return settings


def parse_system_show(stdout):
    """Parse ``rdma [-j] system show`` output (JSON or text) into a dict.

    Keys use underscores (``copy_on_fork``), ``netns`` becomes
    ``netns_mode``, on/off become booleans. Returns None when the output
    holds no valid netns mode (for example the error of an old iproute2).
    """
    text = (stdout or "").strip()
    if not text:
        return None
    settings = None
    if text[0] in "[{":
        try:
            settings = _from_json(json.loads(text))
        except ValueError:
            settings = None
    if settings is None:
        settings = _from_text(text)
    mode = settings.get("netns_mode")
    if not isinstance(mode, str) or mode.lower() not in NETNS_MODES:
        return None
    settings["netns_mode"] = mode.lower()
    return settings


def system_unsupported(stdout, stderr):
    """True when iproute2 is too old to know the ``system`` object (< 5.3)."""
    return UNKNOWN_OBJECT in "%s\n%s" % (stdout or "", stderr or "")


def empty_settings():
    """The settings of the RDMA subsystem when nothing tells them."""
    return dict(netns_mode=None, source=None, copy_on_fork=None, privileged_qkey=None, monitor=None)


def system_settings(show, sysfs_mode):
    """Settings of the RDMA subsystem, from ``rdma -j system show`` or else from sysfs.

    ``show`` is ``(rc, stdout, stderr)`` of ``rdma -j system show``, or None when
    ``rdma`` is not installed; ``sysfs_mode`` is the mode the ``ib_core``
    parameter gives (None when it is absent). Returns ``(settings, problem)``:
    ``settings`` has the keys of ``empty_settings()`` (and whatever else the
    installed iproute2 prints), ``source`` being ``rdma``, ``sysfs`` or None;
    ``problem`` says why ``rdma`` did not tell when it failed for another
    reason than being too old for the ``system`` object, else it is None.
    """
    settings = empty_settings()
    problem = None
    if show is not None:
        rc, out, err = show
        parsed = parse_system_show(out) if rc == 0 else None
        if parsed:
            settings.update(parsed)
            settings["source"] = "rdma"
            return settings, None
        if not system_unsupported(out, err):
            problem = "rc %s: %s" % (rc, (err or "").strip() or (out or "").strip() or "no output")
    if sysfs_mode in NETNS_MODES:
        settings.update(netns_mode=sysfs_mode, source="sysfs")
    return settings, problem


# ---------------------------------------------------------------- system set

# Texts of rdma's answers to ``rdma system set netns <mode>`` (C locale), by kind.
SET_ERRORS = (
    ("busy", "Device or resource busy"),
    ("invalid_mode", "valid options are"),
    ("unsupported", UNKNOWN_OBJECT),
    ("permission", "Operation not permitted"),
    ("permission", "Permission denied"),
    ("not_supported", "not supported"),
)

SET_ERROR_HELP = {
    "busy": "the kernel does not change the RDMA netns mode while a network namespace other than the initial one exists (EBUSY)",
    "invalid_mode": "rdma accepts only 'shared' and 'exclusive'",
    "unsupported": "rdma from iproute2 before 5.3 has no 'system' object; install iproute2 5.3 or later",
    "permission": "changing the RDMA netns mode needs root (CAP_NET_ADMIN in the initial user namespace): use become",
    "not_supported": "the kernel does not support RDMA netns modes (Linux 5.3 or later, with ib_core loaded, is needed)",
    "other": "rdma failed",
}


def system_set_args(mode):
    """Arguments (after the tool path) that set the RDMA netns mode at run time."""
    if mode not in NETNS_MODES:
        raise ValueError("netns mode must be one of %s, not %r" % (", ".join(NETNS_MODES), mode))
    return ["system", "set", "netns", mode]


def modprobe_netns_mode(mode):
    """Value of the ``ib_core`` option ``netns_mode`` for a mode: 1 shared, 0 exclusive."""
    if mode not in NETNS_MODES:
        raise ValueError("netns mode must be one of %s, not %r" % (", ".join(NETNS_MODES), mode))
    return 1 if mode == "shared" else 0


def classify_set_error(rc, stdout, stderr):
    """None when ``rdma system set`` succeeded (rc 0), else the kind of failure:
    ``busy`` (EBUSY), ``invalid_mode``, ``unsupported`` (iproute2 before 5.3),
    ``permission``, ``not_supported`` (kernel) or ``other``."""
    if rc == 0:
        return None
    text = "%s\n%s" % (stdout or "", stderr or "")
    for kind, needle in SET_ERRORS:
        if needle.lower() in text.lower():
            return kind
    return "other"


# ---------------------------------------------------------------- netns users

PROC_ROOT = "/proc"
NETNS_RUN_DIR = "/run/netns"
MAX_PROCESSES = 10
# how the messages name those places (the roots above change only in tests)
_PROC_NAME = "/proc"
_NETNS_RUN_NAME = "/run/netns"

_NS_LINK_RE = re.compile(r"^net:\[(\d+)\]$")


def ns_inode(link):
    """``net:[4026531840]`` (the target of ``/proc/<pid>/ns/net``) -> 4026531840."""
    match = _NS_LINK_RE.match((link or "").strip())
    return int(match.group(1)) if match else None


def _readlink(path):
    try:
        return os.readlink(path)
    except (IOError, OSError):
        return None


def _read_text(path):
    try:
        with open(path, "rb") as handle:
            return handle.read().decode("utf-8", "replace").strip() or None
    except (IOError, OSError):
        return None


def _stat(path):
    try:
        return os.stat(path)
    except (IOError, OSError):
        return None


def named_netns(run_dir, nsfs_dev=None):
    """``(name, inode)`` of the entries of ``run_dir`` (``/run/netns``, where
    ``ip netns add`` mounts the namespaces it names), sorted by name.

    The inode is that of the namespace when the entry is a mounted namespace
    file (its device is ``nsfs_dev``, the device of ``/proc/self/ns/net``),
    else None.
    """
    try:
        names = sorted(os.listdir(run_dir))
    except (IOError, OSError):
        return []
    found = []
    for name in names:
        info = _stat(os.path.join(run_dir, name))
        inode = info.st_ino if info is not None and nsfs_dev is not None and info.st_dev == nsfs_dev else None
        found.append((name, inode))
    return found


def netns_processes(proc_root):
    """``(init, {inode: [(pid, comm), ...]})``: the network namespace of PID 1
    and the processes in any other one, sorted by pid.

    When PID 1's link cannot be read (a sandbox without CAP_SYS_PTRACE), our
    own namespace stands for it: a change of mode can only work from the
    initial one anyway, since a task in another namespace would itself block
    it. Processes whose link cannot be read
    (gone, or not ours to read) are left out; when neither PID 1's nor our own
    link can be read, ``init`` is None and nothing is listed.
    """
    init = ns_inode(_readlink(os.path.join(proc_root, "1", "ns", "net")))
    if init is None:
        init = ns_inode(_readlink(os.path.join(proc_root, "self", "ns", "net")))
    found = {}
    if init is None:
        return None, found
    try:
        entries = os.listdir(proc_root)
    except (IOError, OSError):
        return init, found
    for entry in entries:
        if not entry.isdigit():
            continue
        inode = ns_inode(_readlink(os.path.join(proc_root, entry, "ns", "net")))
        if inode is None or inode == init:
            continue
        comm = _read_text(os.path.join(proc_root, entry, "comm")) or "?"
        found.setdefault(inode, []).append((int(entry), comm))
    for procs in found.values():
        procs.sort()
    return init, found


def _blocker(name, inode, procs, limit):
    return {
        "name": name,
        "inode": inode,
        "process_count": len(procs),
        "processes": [{"pid": pid, "comm": comm} for pid, comm in procs[:limit]],
    }


def group_blockers(named, by_inode, init=None, limit=MAX_PROCESSES):
    """One entry per network namespace other than PID 1's: the named ones
    (``named_netns``) first, with the processes in them, then the unnamed ones
    that processes are in (``netns_processes``), by inode."""
    blockers = []
    seen = set()
    for name, inode in named:
        if inode is not None and inode == init:
            continue  # a name given to the initial namespace does not block
        procs = by_inode.get(inode, []) if inode is not None else []
        seen.add(inode)
        blockers.append(_blocker(name, inode, procs, limit))
    for inode in sorted(by_inode):
        if inode not in seen:
            blockers.append(_blocker(None, inode, by_inode[inode], limit))
    return blockers


def netns_blockers(proc_root=None, run_dir=None, limit=MAX_PROCESSES):
    """The network namespaces other than the initial one that can be seen
    cheaply: the ones named in ``/run/netns`` and the ones processes are in.

    Returns ``(blockers, processes_inspected)``; see ``group_blockers`` for the
    entries. A namespace held only by an open file descriptor or by a bind
    mount elsewhere is not seen. ``proc_root`` and ``run_dir`` default to
    ``PROC_ROOT`` and ``NETNS_RUN_DIR`` (read when called).
    """
    proc_root = proc_root or PROC_ROOT
    own = _stat(os.path.join(proc_root, "self", "ns", "net"))
    named = named_netns(run_dir or NETNS_RUN_DIR, own.st_dev if own is not None else None)
    init, by_inode = netns_processes(proc_root)
    return group_blockers(named, by_inode, init, limit), init is not None


def describe_blocker(blocker, limit=3):
    """``/run/netns/x`` or ``net:[4026532305] held by systemd-hostnam (pid 812)``,
    naming at most ``limit`` processes."""
    if blocker.get("name") is not None:
        text = "%s/%s" % (_NETNS_RUN_NAME, blocker["name"])
        if blocker.get("inode") is not None:
            text += " (net:[%d])" % blocker["inode"]
    elif blocker.get("inode") is not None:
        text = "net:[%d]" % blocker["inode"]
    else:
        text = "an unnamed network namespace"
    procs = ["%s (pid %d)" % (proc["comm"], proc["pid"]) for proc in (blocker.get("processes") or [])[:limit]]
    more = max(blocker.get("process_count") or 0, len(blocker.get("processes") or [])) - len(procs)
    if procs:
        text += " held by " + ", ".join(procs)
        if more > 0:
            text += " and %d more process%s" % (more, "" if more == 1 else "es")
    return text


def describe_blockers(blockers, processes_inspected=True, limit=5):
    """What blocks a change of mode, as one sentence part naming at most ``limit`` namespaces."""
    if blockers:
        text = "; ".join(describe_blocker(blocker) for blocker in blockers[:limit])
        if len(blockers) > limit:
            text += "; and %d more (see blocked_by)" % (len(blockers) - limit)
        return text
    text = "none is named in %s" % _NETNS_RUN_NAME
    if processes_inspected:
        text += " or used by a process, so it is held by an open file descriptor or a bind mount elsewhere (lsns -t net tells)"
    else:
        text += " and the processes could not be inspected (%s/1/ns/net and %s/self/ns/net are not readable)" % (_PROC_NAME, _PROC_NAME)
    return text
