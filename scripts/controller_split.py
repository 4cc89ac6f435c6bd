# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Run ansible-playbook and split its CPU between the main process and everything it started.

A measuring aid for docs/scaling.md, not part of the collection or of ``make test``::

    python scripts/controller_split.py OUT [--queue-sleep S] [--ballast-mib M] -- ansible-playbook ARGS...

ansible-playbook runs inside this process, so that at its exit ``OUT`` gets the main process's own
user/sys seconds and largest RSS, and the user/sys seconds of its children (the forked workers and
their ssh clients). Two experiments, both for measuring only:

- ``--queue-sleep S``: ansible-core's ``_queue_task`` waits for a free worker in a loop with a fixed
  ``time.sleep(0.0001)``; this replaces that one sleep with ``S`` seconds.
- ``--ballast-mib M``: keeps about ``M`` MiB of small Python objects alive in the main process, so that
  a small fleet's run forks from a process as large as a big fleet's.
"""

import argparse
import atexit
import os
import resource
import runpy
import sys
import time

BYTES_PER_BALLAST_ENTRY = 430  # one {'k': str, 'v': [int, int]} entry, measured with ru_maxrss


class _QueueClock:
    """The ``time`` module as the strategy sees it, with the queue's fixed sleep replaced."""

    def __init__(self, seconds):
        self._seconds = seconds

    def __getattr__(self, name):
        return getattr(time, name)

    def sleep(self, seconds):
        time.sleep(self._seconds if seconds == 0.0001 else seconds)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("out")
    parser.add_argument("--queue-sleep", type=float)
    parser.add_argument("--ballast-mib", type=int, default=0)
    argv = sys.argv[1:]
    if "--" not in argv or argv.index("--") == len(argv) - 1:
        parser.error("give the ansible-playbook command after --")
    args = parser.parse_args(argv[:argv.index("--")])
    command = argv[argv.index("--") + 1:]
    pid = os.getpid()

    def report():
        if os.getpid() != pid:  # a forked worker leaving
            return
        own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
        with open(args.out, "w", encoding="utf-8") as handle:
            handle.write("main user_s=%.2f sys_s=%.2f maxrss_kib=%d\nchildren user_s=%.2f sys_s=%.2f\n" % (
                own.ru_utime, own.ru_stime, own.ru_maxrss, children.ru_utime, children.ru_stime))

    atexit.register(report)
    if args.queue_sleep is not None:
        from ansible.plugins import strategy  # pylint: disable=import-outside-toplevel
        strategy.time = _QueueClock(args.queue_sleep)
    # alive until ansible-playbook exits (it forks its workers from this process)
    _ballast = [{"k": str(i), "v": [i, i + 1]} for i in range(args.ballast_mib * 1024 * 1024 // BYTES_PER_BALLAST_ENTRY)]
    sys.argv = command
    runpy.run_path(command[0], run_name="__main__")


if __name__ == "__main__":
    main()
