# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Whether a node fact of this collection may be the basis of a change in this run (controller side).

The modules that read a node (``hca_info``, ``pending_info``) publish what they read as facts
(``infiniband_hca``, ``infiniband_pending``), stamped with the run they were read in (their
``run_id`` option, which the roles fill from the ``fabric.infiniband.run_id`` lookup). The modules
that change what a fact describes either return it refreshed (``pending_action``) or set
``infiniband_<name>_stale`` (``sriov_vfs``, ``rdma_system``, ``fw_reset``, ``kernel_modules``, and
the ``node_reboot`` role after a boot). A role uses a fact when :func:`is_current` says so and
reads the node again otherwise, so that a fact from another run (Ansible's fact cache, a sliced
AWX job) is read by fleet-wide checks but never decides a write.

The run's identity is the ansible-playbook process that forks the workers: its PID and start time
(so that a recycled PID is another run) on this controller. Lookups and filters run in a worker,
whose parent is that process, or in that process itself. tests/unit/plugins/plugin_utils pins this
for the ansible-core release under test with a real ansible-playbook run.
"""

from __future__ import annotations

import getpass
import multiprocessing
import os
import socket


def _start_time(pid, proc="/proc"):
    """Start time of ``pid`` in clock ticks since boot (field 22 of its stat), '' where unknown."""
    try:
        with open(os.path.join(proc, str(pid), "stat")) as handle:
            stat = handle.read()
    except (IOError, OSError):
        return ""
    fields = stat.rpartition(")")[2].split()
    return fields[19] if len(fields) > 19 else ""


def controller_pid():
    """PID of the ansible-playbook process of this run (the parent of a forked worker)."""
    return os.getppid() if multiprocessing.parent_process() is not None else os.getpid()


def run_id():
    """Identity of this run of ansible-playbook on this controller: host, PID and start time."""
    pid = controller_pid()
    return "%s:%d:%s" % (socket.gethostname(), pid, _start_time(pid))


def run_alive(run, proc="/proc"):
    """Whether the run ``run`` (a :func:`run_id`) still runs: True or False when it was started on this
    controller (its process, with the same start time, exists or not), None when it ran elsewhere or
    ``run`` is no run identity (nobody here can tell)."""
    parts = run.rsplit(":", 2) if isinstance(run, str) else []
    if len(parts) != 3 or not parts[1].isdigit() or parts[0] != socket.gethostname():
        return None
    start = _start_time(int(parts[1]), proc)
    return bool(start) and start == parts[2]


def is_current(fact, stale=False, run=None):
    """True when ``fact`` was read in this run (``run``, default :func:`run_id`) and nothing has
    marked it stale since. A missing, malformed or unstamped fact is not current."""
    if stale or not isinstance(fact, dict):
        return False
    stamp = fact.get("run_id")
    if not stamp or not isinstance(stamp, str):
        return False
    return stamp == (run if run is not None else run_id())


def may_hold(fact, name, stale=False, run=None):
    """Whether the node's pending record (the fact infiniband_pending) may hold the entry ``name``: unknown (True)
    unless this run has a current reading of it."""
    if not is_current(fact, stale, run):
        return True
    return name in (fact.get("entries") or {})


def reading(hca):
    """The identity of one reading of the adapters (the fact infiniband_hca): the boot and the time it was
    read. A fact derived from one reading is valid only with that reading."""
    hca = hca if isinstance(hca, dict) else {}
    return "%s@%s" % (hca.get("boot"), hca.get("read_at"))


def run_owner(variables=None):
    """Who runs: the name a run takes the nodes' run lock under (module run_lock). ``infiniband_run_owner`` when the
    inventory or -e sets it; in AWX the job template (its slices and repeated launches count as one); else the
    controller's user and host, so that the same operator's next run renews a lock a failed run left."""
    variables = variables or {}
    if variables.get("infiniband_run_owner"):
        return str(variables["infiniband_run_owner"])
    if variables.get("awx_job_template_name"):
        return "AWX job template %s" % variables["awx_job_template_name"]
    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = "uid%d" % os.getuid()
    return "%s@%s" % (user, socket.gethostname())
