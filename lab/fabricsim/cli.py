# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Entry point of every simulated tool: ``main(tool, argv)``, or ``python3 -m fabricsim.cli <tool> args...``.

``main`` loads the state under its lock, runs the tool, saves the state if the tool changed it,
appends one line to the call log, prints the tool's stdout/stderr and returns its exit code.
``fabricsim`` is the admin tool: ``boot`` (power-on rules), ``power-cycle``, ``fault`` (inject one), ``tool`` (a tool's
output layout), ``port`` (a port's counters and link), ``show``.
"""

from __future__ import annotations

import importlib
import json
import os
import sys

from fabricsim import Result, porthealth
from fabricsim import state as sim_state

# tool -> (which tools.firmware / flag provides it, runner)
TOOLS = {
    "mlxconfig": "mft",
    "mlxfwreset": "mft",
    "mst": "mft",
    "mstconfig": "mstflint",
    "mstfwreset": "mstflint",
    "flint": "mft",
    "mstflint": "mstflint",
    "rdma": None,
    "ibv_devinfo": None,
    "ibv_devices": None,
    "ibstat": None,
    "ibdev2netdev": "ofed",
    "modprobe": None,
    "modinfo": None,
    "ip": None,
    "fabricsim": None,
}


def available(state, tool):
    """Whether ``tool`` exists on this node (its package is installed)."""
    need = TOOLS.get(tool, "missing")
    tools = state.get("tools", {})
    if need is None:
        return True
    if need == "ofed":
        return bool(tools.get("ofed"))
    if need == "missing":
        return False
    return tools.get("firmware") == need


def admin(state, argv):
    """``fabricsim boot|power-cycle|fault|show``."""
    cmd = argv[0] if argv else "show"
    if cmd == "boot":
        sim_state.power_on(state)
        return Result(0, "", "", "write")
    if cmd in ("power-cycle", "power_cycle"):
        sim_state.power_cycle(state)
        return Result(0, "", "", "write")
    if cmd == "fault":
        # fabricsim fault <name> <count>: inject a fault (lab/README.md, "Faults"); 0 clears it
        try:
            sim_state.set_fault(state, argv[1], int(argv[2]))
        except (IndexError, ValueError, sim_state.StateError) as exc:
            return Result(2, "", "usage: fabricsim fault <name> <count> (%s)\n" % exc, "read")
        return Result(0, "", "", "fault")
    if cmd == "tool":
        # fabricsim tool <name> <value>: the output layout of a tool (tools.<name>, e.g. flint_query running_only)
        try:
            sim_state.set_tool(state, argv[1], argv[2])
        except (IndexError, sim_state.StateError) as exc:
            return Result(2, "", "usage: fabricsim tool <name> <value> (%s)\n" % exc, "read")
        return Result(0, "", "", "fault")
    if cmd == "port":
        # fabricsim port <mlx5_N|bdf> <action> ...: a port's counters, width, speed, flaps (porthealth.py)
        func = sim_state.find_rdma(state, argv[1]) if len(argv) > 1 else None
        if func is None and len(argv) > 1:
            func = sim_state.find_function(state, argv[1])
        if func is None:
            return Result(2, "", "fabricsim port: no such device %s\n" % (argv[1:2] or ["(none)"])[0]
                          + porthealth.USAGE, "read")
        try:
            porthealth.command(state, func, argv[2:], func.model.rate)
        except porthealth.PortHealthError as exc:
            return Result(2, "", "fabricsim port: %s\n%s" % (exc, porthealth.USAGE), "read")
        return Result(0, "", "", "fault", func.bdf)
    if cmd == "show":
        return Result(0, json.dumps(sim_state.summary(state), indent=2, sort_keys=True) + "\n", "", "read")
    return Result(2, "", "usage: fabricsim {boot|power-cycle|fault|tool|port|show}\n", "read")


# tool -> (module of fabricsim, its function, whether it takes tool= and stdin=). Imported when the
# tool runs: each call is a new process, and a real ``rdma`` or ``ip`` starts in milliseconds.
RUNNERS = {
    "mlxconfig": ("mlxconfig", "run", True),
    "mstconfig": ("mlxconfig", "run", True),
    "mlxfwreset": ("fwreset", "run", True),
    "mstfwreset": ("fwreset", "run", True),
    "flint": ("flint", "run", True),
    "mstflint": ("flint", "run", True),
    "mst": ("mst", "run", False),
    "rdma": ("rdma", "run", False),
    "ibv_devinfo": ("verbs", "ibv_devinfo", False),
    "ibv_devices": ("verbs", "ibv_devices", False),
    "ibstat": ("verbs", "ibstat", False),
    "ibdev2netdev": ("verbs", "ibdev2netdev", False),
    "modprobe": ("kmod", "run", False),
    "modinfo": ("kmod", "modinfo", False),
    "ip": ("iproute", "run", False),
}


def _kmod():
    return importlib.import_module("fabricsim.kmod")


def run_tool(state, tool, argv, stdin=None):
    """Run one simulated tool against ``state`` (mutated in place); returns a Result."""
    if not available(state, tool):
        return Result(127, "", "%s: command not found\n" % tool, "read")
    if tool not in RUNNERS:
        return admin(state, argv)
    module, function, interactive = RUNNERS[tool]
    runner = getattr(importlib.import_module("fabricsim." + module), function)
    if interactive:
        return runner(state, argv, tool=tool, stdin=stdin)
    return runner(state, argv)


class _Stdin:
    """The process's stdin for prompts; shows the tool's pending output before blocking on a read."""

    def __init__(self, stream, out):
        self.stream = stream
        self.out = out

    def show(self, text):
        self.out.write(text)
        self.out.flush()

    def readline(self):
        return self.stream.readline()


def main(tool, argv=None, stdin=None, stdout=None, stderr=None):
    """Run ``tool`` with ``argv`` against the node's state file; returns the exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    stdout = stdout or sys.stdout
    stderr = stderr or sys.stderr
    path = sim_state.state_path()
    if stdin is None:
        stdin = _Stdin(sys.stdin, stdout) if sys.stdin is not None else None
    kmod = _kmod() if tool in ("modprobe", "modinfo") else None
    if tool == "modprobe" and not kmod.split(argv)[0]:
        return kmod.exec_real(argv)  # no module the simulator knows
    if tool == "modinfo" and not kmod.modinfo_split(argv)[0]:
        return kmod.modinfo_exec_real(argv)
    if not os.path.exists(path):
        stderr.write("%s: the simulated hardware has no state file (%s)\n" % (tool, path))
        return 1
    with sim_state.transaction(path) as st:
        result = run_tool(st, tool, argv, stdin)
    try:
        sim_state.log_call(tool, argv, result.rc, result.kind, result.device)
    except OSError as exc:
        stderr.write("fabricsim: cannot write the call log: %s\n" % exc)
    stdout.write(result.stdout)
    stdout.flush()
    stderr.write(result.stderr)
    stderr.flush()
    if tool == "modprobe" and result.rc == 0 and kmod.split(argv)[1]:
        return kmod.exec_real(kmod.split(argv)[1])  # the names it does not know
    if tool == "modinfo" and kmod.modinfo_split(argv)[1]:
        rc = kmod.modinfo_exec_real(kmod.modinfo_split(argv)[1])
        return rc or result.rc
    return result.rc


def _module_main(args):
    if not args:
        sys.stderr.write("usage: python3 -m fabricsim.cli <tool> [args...]\n")
        return 2
    return main(args[0], args[1:])


if __name__ == "__main__":
    sys.exit(_module_main(sys.argv[1:]))
