# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The scenario's own ibsim (test-lab wiring, not part of the collection).

    python ibsim.py start --dir DIR --port PORT NODE_STATE.json...   (re)start ibsim on UDP PORT..PORT+10
    python ibsim.py stop --dir DIR                                     stop it

The fabric is what lab/fabricsim/fabric.py makes of the node descriptions: one switch, every cabled
port of a VPI card on it.  It runs apart from the lab of `make demo` (UDP 7070, with a switch SM):
here the only subnet managers are the OpenSMs that the role deploys on the nodes.  Prints
"started" or "running" (same fabric, already serving), or "stopped"/"not running".
"""

import argparse
import os
import signal
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "lab"))

from fabricsim import fabric  # noqa: E402  pylint: disable=wrong-import-position
from fabricsim import state as sim_state  # noqa: E402  pylint: disable=wrong-import-position


def _alive(directory):
    """ibsim's PID from the pidfile, if that process still is ibsim."""
    try:
        with open(os.path.join(directory, "ibsim.pid"), encoding="utf-8") as handle:
            pid = int(handle.read().strip())
        with open("/proc/%d/cmdline" % pid, "rb") as handle:
            argv0 = handle.read().split(b"\0")[0].decode(errors="replace")
        with open("/proc/%d/stat" % pid, encoding="utf-8") as handle:
            zombie = handle.read().rpartition(")")[2].split()[0] == "Z"
    except (OSError, ValueError, IndexError):
        return None
    return pid if os.path.basename(argv0) == "ibsim" and not zombie else None


def stop(directory):
    pid = _alive(directory)
    if not pid:
        return "not running"
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 5
    while _alive(directory):
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            deadline += 5
        time.sleep(0.1)
    return "stopped"


def start(directory, port, state_files):
    states = {}
    for path in state_files:
        state = sim_state.load(path)
        states[state["hostname"]] = state
    net = fabric.netfile(states)
    os.makedirs(directory, exist_ok=True)
    netpath = os.path.join(directory, "net")
    old = None
    if os.path.exists(netpath):
        with open(netpath, encoding="utf-8") as handle:
            old = handle.read()
    if _alive(directory) and old == net:
        return "running"
    stop(directory)
    with open(netpath, "w", encoding="utf-8") as handle:
        handle.write(net)
    fifo = os.path.join(directory, "console")
    if not os.path.exists(fifo):
        os.mkfifo(fifo)
    # ibsim reads its console from stdin: a FIFO opened read-write never reaches EOF, and the
    # console stays scriptable (`echo X <client> > console` frees a slot a killed client held).
    console = os.open(fifo, os.O_RDWR)
    with open(os.path.join(directory, "ibsim.log"), "w", encoding="utf-8") as out:
        proc = subprocess.Popen(["ibsim", "-r", "-l", str(port), "-s", netpath], stdin=console, stdout=out,
                                stderr=subprocess.STDOUT, cwd=directory, start_new_session=True)
    with open(os.path.join(directory, "ibsim.pid"), "w", encoding="utf-8") as handle:
        handle.write(str(proc.pid))
    time.sleep(0.5)
    if proc.poll() is not None:
        with open(os.path.join(directory, "ibsim.log"), encoding="utf-8") as handle:
            raise SystemExit("ibsim exited at once:\n" + handle.read())
    return "started"


def main(argv=None):
    parser = argparse.ArgumentParser(prog="ibsim.py")
    parser.add_argument("action", choices=("start", "stop"))
    parser.add_argument("--dir", required=True)
    parser.add_argument("--port", type=int, default=7170)
    parser.add_argument("states", nargs="*")
    args = parser.parse_intermixed_args(argv)
    print(start(args.dir, args.port, args.states) if args.action == "start" else stop(args.dir))
    return 0


if __name__ == "__main__":
    sys.exit(main())
