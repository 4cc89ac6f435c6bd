#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
module: run_lock
short_description: Take or release a node's run lock, so that two runs never prepare or reboot a node at once
version_added: 0.1.0
description:
  - Two runs of the collection's playbooks on the same node at once would both read the node, both write its firmware and both decide
    to reboot it. A run takes the node's run lock first (O(state=present)) and releases it at its end (O(state=absent)).
  - The lock is one small JSON file on the node naming the run that holds it (O(owner)), when it was taken and last renewed, and in
    which boot. When another run holds it, the module fails with the owner, the lock's age and how to clear it.
  - The same run taking the lock again renews it (for example after the run rebooted the node). With O(run_id), two runs of the
    same owner are two runs; the later one takes over the lock of the earlier one only when that run is gone (its
    C(ansible-playbook) process no longer exists, which the controller can tell when that run was started on the same
    controller), when the lock is stale, or with O(break_lock=true), never while it runs. A lock not renewed for O(max_age)
    seconds is stale, as left by a run that was killed, and is taken over with a warning. A lock is not stale because the node
    booted since it was taken, since the run holding it reboots nodes on purpose.
  - A run that finds its own lock gone when it releases it (the node rebooted under it from a file system that does not keep
    the lock, or the file was removed) gets one warning saying so, not a failure.
  - To clear a lock by hand when no run is in progress, run the module with O(break_lock=true) (the collection's playbooks
    C(-e infiniband_break_lock=true)), or remove the file on the node.
  - Safe against races on the node. Every decision is taken under an exclusive C(flock) of the lock's directory, a new lock
    is created whole and only if none exists (a complete temporary file hard-linked to the lock's name, which fails when
    the name exists, as C(O_CREAT|O_EXCL) does), and a lock is replaced by an atomic rename.
author:
  - fabric.infiniband developers (@fabric-infiniband)
extends_documentation_fragment:
  - fabric.infiniband.attributes
attributes:
  check_mode:
    support: full
    details:
      - Reports what it would do and fails where a real run would (another run holds the lock), but writes nothing.
  diff_mode:
    support: full
  action:
    support: full
    description: Runs on the controller as an action plugin, which runs the module on the node.
    details:
      - The action plugin of the same name checks on the controller whether the run holding the lock still runs (O(run_id)).
options:
  state:
    description:
      - V(present) takes the lock (or renews it when O(owner) holds it), V(absent) releases it.
      - Releasing a lock that another owner holds leaves it in place, with a warning, unless O(break_lock=true).
    type: str
    choices: [present, absent]
    default: present
  owner:
    description:
      - Names who runs, for the operator who finds the lock, and tells a run's own lock from another's. Use the same value in every
        task of a run. Runs with the same owner count as one, and the later one renews the lock.
      - With an owner per operator and controller (V(alice@ctl01)) or per AWX job template, a run again after a failed run (which
        leaves its lock) goes on without clearing anything, while another operator, controller or job template is refused. With an
        owner per run (add the time the run started), a second run of the same operator is refused too, and the lock of a failed
        run must be cleared (O(break_lock)) or wait for O(max_age).
      - One line of at most 200 printable characters. Required unless O(break_lock=true).
    type: str
  run_id:
    description:
      - The identity of this run of C(ansible-playbook), from the P(fabric.infiniband.run_id#lookup) lookup (controller host, PID
        and start time). Recorded in the lock besides O(owner), so that each run holds its own lock; a second run of the same owner
        started beside the first is refused while the first runs.
      - Without it, runs with the same owner count as one, as before.
    type: str
    version_added: 0.3.0
  setting_names:
    description:
      - The names under which the user set this module's options, for the messages. Mapping C(max_age) to
        C(infiniband_run_lock_max_age), as the collection's playbooks do, a message names C(infiniband_run_lock_max_age (max_age)).
    type: dict
    default: {}
    version_added: 0.3.0
  replace_run:
    description:
      - Set by the action plugin, not by hand. Take over the lock if the run it names still holds it, as the controller saw that
        run's process end.
    type: str
    version_added: 0.3.0
  max_age:
    description:
      - Seconds after its last renewal when a lock is stale and is taken over. V(0) means never by age.
      - A whole number; the action plugin refuses anything else naming the user's variable (O(setting_names)).
    type: int
    default: 21600
  break_lock:
    description:
      - Take over (or with O(state=absent) remove) the lock whoever holds it, also a lock file that cannot be read. Only when no
        other run is in progress on the node.
    type: bool
    default: false
  path:
    description:
      - The lock file. Its directory is created when missing (O(state=present)).
    type: path
    default: /var/lib/fabric-infiniband/run.lock
seealso:
  - module: fabric.infiniband.pending_info
"""

EXAMPLES = r"""
- name: Take the node's run lock
  fabric.infiniband.run_lock:
    owner: "{{ infiniband_run_owner }}"
    run_id: "{{ lookup('fabric.infiniband.run_id') }}"
    max_age: "{{ infiniband_run_lock_max_age | default(21600) }}"
    setting_names: {max_age: infiniband_run_lock_max_age}
    break_lock: "{{ infiniband_break_lock | default(false) }}"
  changed_when: false  # run bookkeeping, released at the end of the run

- name: Release the node's run lock
  fabric.infiniband.run_lock:
    state: absent
    owner: "{{ infiniband_run_owner }}"
    run_id: "{{ lookup('fabric.infiniband.run_id') }}"
  changed_when: false

# ansible ib_nodes -b -m fabric.infiniband.run_lock -a 'state=absent break_lock=true' --limit node03
- name: Clear a stale lock by hand
  fabric.infiniband.run_lock:
    state: absent
    break_lock: true
"""

RETURN = r"""
path:
  description: The lock file.
  returned: always
  type: str
  sample: /var/lib/fabric-infiniband/run.lock
lock:
  description: The lock on the node after the call (what it would be in check mode), V(null) when there is none.
  returned: always
  type: dict
  sample: {owner: "alice@ctl01", since: 1763776000, renewed: 1763776000, boot: "8c7e0d5e:1", version: 1}
  contains:
    owner:
      description: Who runs the run that holds the lock.
      type: str
    run:
      description: The identity of the run that holds the lock (O(run_id)); absent when it gave none.
      type: str
    since:
      description: When the owner took the lock, seconds since the epoch.
      type: int
    renewed:
      description: When the owner last took it, seconds since the epoch; its age counts from here.
      type: int
    boot:
      description: Identity of the boot in which it was last taken.
      type: str
previous:
  description: The lock found on the node before the call, with its C(age) in seconds and whether it was C(stale), V(null) when there was none.
  returned: always
  type: dict
acquired:
  description: The owner holds the lock after the call (would, in check mode).
  returned: always
  type: bool
released:
  description: A lock was removed (would be, in check mode).
  returned: always
  type: bool
held_by:
  description: When another run holds the lock (the module failed), that lock, and C(same_owner) when it is a run of the same owner.
  returned: failed
  type: dict
gone:
  description: This run's lock was not found when it was released (the node rebooted under the run, or the file was removed).
  returned: always
  type: bool
broken:
  description: A lock of another owner (stale, unreadable, or with O(break_lock=true)) was taken over or removed.
  returned: always
  type: bool
msg:
  description: What was done, in one sentence.
  returned: always
  type: str
  sample: "Took the run lock /var/lib/fabric-infiniband/run.lock"
"""

import errno
import fcntl
import json
import os
import tempfile
import time

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.fabric.infiniband.plugins.module_utils import _files, pending
from ansible_collections.fabric.infiniband.plugins.module_utils import run_lock as lockfile

GUARD_TIMEOUT = 30.0


def now():
    """The clock (a function, for the tests)."""
    return time.time()


def argument_spec():
    return dict(
        state=dict(type="str", choices=["present", "absent"], default="present"),
        owner=dict(type="str"),
        max_age=dict(type="int", default=lockfile.DEFAULT_MAX_AGE),
        break_lock=dict(type="bool", default=False),
        path=dict(type="path", default=lockfile.DEFAULT_PATH),
        run_id=dict(type="str"),
        setting_names=dict(type="dict", default={}),
        replace_run=dict(type="str"),
    )


class RunLock(object):
    def __init__(self, module):
        self.module = module
        self.params = module.params
        self.path = module.params["path"]
        self.directory = os.path.dirname(self.path) or "."
        self.now = int(now())
        self.boot = pending.boot_identity()
        self.guard_fd = None
        self.run_id = module.params["run_id"] or None
        self.names = module.params["setting_names"] or {}
        self.gone = False

    def validate(self):
        owner = self.params["owner"]
        if owner is not None and lockfile.owner_problem(owner):
            self.module.fail_json(msg="owner must name the run in one line of at most %d printable characters, for example "
                                      "'alice@ctl01': %s (got %s)"
                                      % (lockfile.OWNER_MAX, lockfile.owner_problem(owner), json.dumps(owner)))
        if self.params["max_age"] < 0:
            self.module.fail_json(msg="%s must be 0 (a lock never goes stale by age) or a number of seconds, got %d"
                                      % (lockfile.setting(self.names, "max_age"), self.params["max_age"]))
        run = self.run_id
        if run is not None and lockfile.owner_problem(run):
            self.module.fail_json(msg="run_id must name the run in one line (the fabric.infiniband.run_id lookup): %s (got %s)"
                                      % (lockfile.owner_problem(run), json.dumps(run)))
        if os.path.basename(self.path) in ("", ".", ".."):
            self.module.fail_json(msg="path must name a file, got %s" % json.dumps(self.path))

    def fail_io(self, exc, doing):
        self.module.fail_json(
            msg="Cannot %s the run lock %s: %s. Make %s writable (a read-write file system; check its owner and mode), or set "
                "another path, then run again." % (doing, self.path, pending.os_error_text(exc), self.directory), changed=False)

    # ---------------------------------------------------------------- the node
    def guard(self):
        """An exclusive flock of the lock's directory for the rest of the module run: one decision at a time."""
        self.guard_fd = os.open(self.directory, os.O_RDONLY)
        deadline = time.time() + GUARD_TIMEOUT
        while True:
            try:
                fcntl.flock(self.guard_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return
            except (IOError, OSError) as exc:
                if exc.errno not in (errno.EAGAIN, errno.EACCES):
                    raise
                if time.time() > deadline:
                    self.module.fail_json(msg="Cannot take or release the run lock %s: another process has held the flock of %s for more "
                                              "than %d s (the run_lock module holds it for a few milliseconds). Find it with: fuser -v %s"
                                              % (self.path, self.directory, GUARD_TIMEOUT, self.directory), changed=False)
                time.sleep(0.05)

    def read(self):
        """(lock, problem): the lock on the node or None; problem says why a file that is there is not a lock."""
        try:
            with open(self.path, "rb") as handle:
                raw = handle.read()
        except (IOError, OSError) as exc:
            if exc.errno == errno.ENOENT:
                return None, None
            return None, "it cannot be read: %s" % pending.os_error_text(exc)
        try:
            return lockfile.parse(raw.decode("utf-8")), None
        except (ValueError, UnicodeDecodeError) as exc:
            return None, str(exc)

    def temporary(self, lock):
        fd, tmp = tempfile.mkstemp(prefix=".%s." % os.path.basename(self.path), dir=self.directory)
        try:
            os.write(fd, (json.dumps(lock, sort_keys=True) + "\n").encode("utf-8"))
            os.fchmod(fd, 0o644)
            os.fsync(fd)
        except (IOError, OSError):
            os.close(fd)
            os.unlink(tmp)
            raise
        os.close(fd)
        return tmp

    def create(self, lock):
        """Create the lock whole, only if no file has the name (link(2) fails with EEXIST, as O_CREAT|O_EXCL does)."""
        tmp = self.temporary(lock)
        try:
            os.link(tmp, self.path)
        finally:
            os.unlink(tmp)

    def replace(self, lock):
        tmp = self.temporary(lock)
        try:
            os.rename(tmp, self.path)
        except (IOError, OSError):
            os.unlink(tmp)
            raise

    def sync(self):
        if self.guard_fd is not None:
            os.fsync(self.guard_fd)

    # ---------------------------------------------------------------- decisions
    def with_age(self, lock):
        if lock is None:
            return None
        out = dict(lock)
        out["age"] = lockfile.age(lock, self.now)
        out["stale"] = lockfile.is_stale(lock, self.now, self.params["max_age"])
        return out

    def acquire(self, current, problem):
        """(what to write: create/replace, broken, message); fails when another live run holds the lock."""
        owner, max_age = self.params["owner"], self.params["max_age"]
        max_age_name = lockfile.setting(self.names, "max_age")
        if problem:
            if not self.params["break_lock"]:
                self.module.fail_json(msg=lockfile.damaged_message(self.path, problem), path=self.path)
            return "replace", True, "Replaced the run lock %s, which could not be used (%s), with break_lock" % (self.path, problem)
        if current is None:
            return "create", False, "Took the run lock %s" % self.path
        if lockfile.same_run(current, owner, self.run_id):
            booted = "" if current["boot"] == self.boot else " (the node booted since this run took it)"
            return "replace", False, "Renewed the run lock %s%s" % (self.path, booted)
        same_owner = current["owner"] == owner
        if same_owner and current.get("run") and current.get("run") == self.params["replace_run"]:
            return "replace", True, ("Took over the run lock %s of %s: that run is gone (its ansible-playbook process on this "
                                     "controller ended)" % (self.path, lockfile.describe(current, self.now, self.boot)))
        if lockfile.is_stale(current, self.now, max_age):
            return "replace", True, ("Took over the stale run lock %s of %s (not renewed for more than %s, %s)"
                                     % (self.path, lockfile.describe(current, self.now, self.boot), max_age_name, lockfile.span(max_age)))
        if self.params["break_lock"]:
            return "replace", True, "Broke the run lock %s of %s with break_lock" % (self.path, lockfile.describe(current, self.now, self.boot))
        held = dict(self.with_age(current), same_owner=same_owner)
        self.module.fail_json(msg=lockfile.held_message(self.path, current, self.now, self.boot, max_age, self.names, same_owner),
                              path=self.path, previous=self.with_age(current), held_by=held)

    def release(self, current, problem):
        """(what to write: remove/None, broken, message) for state=absent, or break_lock=true without an owner."""
        if current is None and not problem:
            if self.run_id and self.params["owner"] is not None:
                self.gone = True
                self.module.warn("The run lock %s of this run is gone: the node rebooted under the run from a file system that "
                                 "does not keep it, or someone removed it. Nothing to release; check that no other run "
                                 "works on this node." % self.path)
            return None, False, "No run lock at %s" % self.path
        if problem:
            if not self.params["break_lock"]:
                self.module.fail_json(msg=lockfile.damaged_message(self.path, problem), path=self.path)
            return "remove", True, "Removed the run lock %s, which could not be used (%s), with break_lock" % (self.path, problem)
        if lockfile.same_run(current, self.params["owner"], self.run_id):
            return "remove", False, "Released the run lock %s" % self.path
        if self.params["break_lock"]:
            return "remove", True, "Broke the run lock %s of %s with break_lock" % (self.path, lockfile.describe(current, self.now, self.boot))
        self.module.warn("Left the run lock %s in place: another run holds it (%s), which took over this run's lock. Check that "
                         "run." % (self.path, lockfile.describe(current, self.now, self.boot)))
        return None, False, "Left the run lock %s of another run in place" % self.path

    def decide(self, current, problem):
        """(lock after, what to write, broken, message)."""
        if self.params["state"] == "present" and self.params["owner"] is not None:
            write, broken, msg = self.acquire(current, problem)
            return lockfile.new(self.params["owner"], self.now, self.boot, current, self.run_id), write, broken, msg
        write, broken, msg = self.release(current, problem)
        return (None if write == "remove" else current), write, broken, msg

    def apply(self, after, write):
        if write == "create":
            self.create(after)
        elif write == "replace":
            self.replace(after)
        elif write == "remove":
            try:
                os.unlink(self.path)
            except (IOError, OSError) as exc:
                if exc.errno != errno.ENOENT:
                    raise
                self.gone = True  # removed behind the guard: what this run wanted
        self.sync()

    def run(self):
        self.validate()
        present = self.params["state"] == "present"
        check = self.module.check_mode
        try:
            if present and not check:
                _files.make_dirs(self.directory)
            if os.path.isdir(self.directory):
                self.guard()
            current, problem = self.read()
            after, write, broken, msg = self.decide(current, problem)
            if not check and write:
                try:
                    self.apply(after, write)
                except (IOError, OSError) as exc:
                    if exc.errno != errno.EEXIST or write != "create":
                        raise
                    # A lock file made by something that does not take the guard (by hand, or an older collection): judge it.
                    current, problem = self.read()
                    after, write, broken, msg = self.decide(current, problem)
                    self.apply(after, write)
        except (IOError, OSError) as exc:
            self.fail_io(exc, "take" if present else "release")
        except Exception as exc:  # pylint: disable=broad-except
            # one line for the operator (for example a node that rebooted under the run), never a traceback
            self.module.fail_json(msg="Cannot %s the run lock %s: %s: %s. If the node rebooted under this run, run again."
                                      % ("take" if present else "release", self.path, type(exc).__name__, exc), changed=False)
        if broken:
            self.module.warn(msg)
        changed = write is not None
        if check and changed:
            msg = "Would have: " + msg[0].lower() + msg[1:]
        # Taking the lock either holds it or has failed the module.
        acquired = present and self.params["owner"] is not None
        result = dict(changed=changed, path=self.path, lock=after, previous=self.with_age(current), acquired=acquired, released=write == "remove",
                      broken=broken, msg=msg, gone=self.gone)
        if self.module._diff:
            result["diff"] = dict(before=current or {}, after=after or {}, before_header=self.path, after_header=self.path)
        self.module.exit_json(**result)


def main():
    module = AnsibleModule(argument_spec=argument_spec(), supports_check_mode=True, required_if=[("break_lock", False, ("owner",))])
    RunLock(module).run()


if __name__ == "__main__":
    main()
