# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""``mlxfwreset`` (MFT) / ``mstfwreset`` (mstflint): ``query`` and ``reset`` (tool-outputs.md section 3)."""

from __future__ import annotations

import os
import re

from fabricsim import Result, catalog, mlxconfig, mst, read_answer
from fabricsim import state as sim_state

RESET_LINES = dict(catalog.RESET_LEVELS)
DEFAULT_LEVEL = 3

RESET_TYPES = [
    (0, "Full chip reset", True),
    (1, "Phy-less reset (keep network port active during reset)", False),
    (2, "NIC only reset (for SoC devices)", False),
    (3, "ARM only reset", False),
    (4, "ARM OS shut down", False),
]
RESET_SYNC = [(0, "Tool is the owner"), (1, "Driver is the owner")]


class FwResetFailure(Exception):
    """Printed as ``-E- <message>.`` with rc 1, like the tool's top-level exception handler."""


def _step(name, status):
    return "-I- %-40s-%s\n" % (name, status)


def _line(num, text, supported, default=False):
    status = "Supported" if supported else "Not Supported"
    if default:
        status = "%-14s(default)" % status
    return "%d: %-62s-%s\n" % (num, text, status)


class Tool:
    def __init__(self, state, argv, name, stdin=None):
        self.state = state
        self.argv = list(argv)
        self.name = name
        self.stdin = stdin
        self.mft = name == "mlxfwreset"
        self.out = []
        self.kind = "query"
        self.log_device = None

    def parse(self):
        opts = {"device": None, "level": None, "yes": False, "skip_driver": False, "command": None}
        argv = self.argv
        i = 0
        while i < len(argv):
            arg = argv[i]
            m = re.fullmatch(r"-l(\d+)", arg)
            if arg in ("-d", "--device", "-l", "--level", "-t", "--type", "--sync", "--mst_flags", "--pci_bridge"):
                if i + 1 >= len(argv):
                    raise FwResetFailure("argument %s: expected one argument" % arg)
                if arg in ("-d", "--device"):
                    opts["device"] = argv[i + 1]
                elif arg in ("-l", "--level"):
                    if not argv[i + 1].isdigit():
                        raise FwResetFailure("argument --level/-l: invalid int value: '%s'" % argv[i + 1])
                    opts["level"] = int(argv[i + 1])
                i += 2
                continue
            if m:
                opts["level"] = int(m.group(1))
            elif arg.startswith("--level="):
                opts["level"] = int(arg.split("=", 1)[1])
            elif arg.startswith("--device="):
                opts["device"] = arg.split("=", 1)[1]
            elif arg in ("-y", "--yes"):
                opts["yes"] = True
            elif arg == "--skip_driver":
                opts["skip_driver"] = True
            elif arg in ("--no_mst_restart", "--skip_fsm_sync", "--skip_socket_direct", "-v", "--version", "-h", "--help"):
                pass
            elif arg in ("q", "query", "r", "reset", "reset_fsm_register"):
                if opts["command"]:
                    raise FwResetFailure("unrecognized arguments: %s" % arg)
                opts["command"] = {"q": "query", "r": "reset"}.get(arg, arg)
            else:
                raise FwResetFailure("unrecognized arguments: %s" % arg)
            i += 1
        if opts["command"] is None:
            raise FwResetFailure("the following arguments are required: command")
        if not opts["device"]:
            raise FwResetFailure("argument -d/--device is required")
        return opts

    def open_device(self, dev):
        """(function, label printed by the tool)."""
        func = None
        label = dev
        if dev.startswith("mlx"):
            func = sim_state.find_rdma(self.state, dev)
            if func is None:
                raise FwResetFailure("Failed to Identify Device: %s" % dev)
            label = sim_state.short_bdf(func.bdf)
        elif dev.startswith("/dev/mst/"):
            if self.mft and sim_state.mst_started(self.state):
                bdf = mst.device_map(self.state).get(dev)
                func = sim_state.find_function(self.state, bdf) if bdf else None
        elif sim_state.parse_bdf(dev):
            func = sim_state.find_function(self.state, dev)
            label = sim_state.short_bdf(sim_state.normalize_bdf(dev))
        if func is None or func.is_vf:
            raise FwResetFailure("Failed to open device (%s): %s" % (dev, os.strerror(2)))
        if sim_state.lockdown(self.state) != "none":
            raise FwResetFailure("Failed to open device (%s): %s" % (dev, os.strerror(1)))
        return func, label

    def query(self, func, label):
        levels = sim_state.reset_levels(func.adapter)
        out = "\nSupported reset levels for loading FW on device, %s:\n\n" % label
        out += "Reset-levels:\n"
        for num, text in catalog.RESET_LEVELS:
            out += _line(num, text, num in levels, num == DEFAULT_LEVEL and num in levels)
        out += "\nReset-types (relevant only for reset-levels 1,3,4):\n"
        for num, text, ok in RESET_TYPES:
            out += _line(num, text, ok and bool(levels), num == 0 and bool(levels))
        out += "\nReset-sync (relevant only for reset-level 3):\n"
        for num, text in RESET_SYNC:
            out += _line(num, text, bool(levels), num == 0 and bool(levels))
        self.out.append(out)
        return 0

    def reset(self, func, label, level, yes, skip_driver):
        levels = sim_state.reset_levels(func.adapter)
        gen = mlxconfig.generation(self.state.get("tools", {}).get("firmware_version"))
        if level is not None:
            self.out.append("\nRequested reset level for device, %s:\n\n" % label)
        elif gen >= 5:
            level = DEFAULT_LEVEL
            self.out.append("\nThe reset level for device, %s is:\n\n" % label)
        else:
            level = DEFAULT_LEVEL
            self.out.append("\nMinimal reset level for device, %s:\n\n" % label)
        if level not in levels:
            if level in RESET_LINES:
                self.out.append("%d: %s\n" % (level, RESET_LINES[level]))
            raise FwResetFailure("Reset-level '%d' is not supported for device, %s" % (level, label))
        self.out.append("%d: %s\n" % (level, RESET_LINES[level]))
        question = "Continue with reset?[y/N] "
        if yes:
            self.out.append(question + "y\n")
        else:
            self.out.append(question)
            if read_answer(self.stdin, self.out).strip().lower() not in ("y", "yes"):
                raise FwResetFailure("Aborted by user")
        try:
            if level == 4:
                # Warm Reboot: the tool reboots the host; the simulator applies the node's power-on rules.
                self.out.append(_step("Sending Reset Command To Fw", "Done"))
                sim_state.power_on(self.state)
                self.out.append(_step("Rebooting machine", "Done"))
                self.kind = "reset"
                return 0
            sim_state.fw_reset(self.state, func.adapter, level)
        except sim_state.FwResetError:
            self.out.append(_step("Sending Reset Command To Fw", "Failed"))
            self.out.append("-E- Firmware reset failed, retry operation or reboot machine.\n")
            return 1
        self.kind = "reset"
        self.out.append(_step("Sending Reset Command To Fw", "Done"))
        if level == 3:
            driver = "Skipped" if skip_driver else "Done"
            self.out.append(_step("Stopping Driver", driver))
            self.out.append(_step("Resetting PCI", "Done"))
            self.out.append(_step("Starting Driver", driver))
            mst_state = "Done" if self.mft and sim_state.mst_started(self.state) else "Skipped"
            self.out.append(_step("Restarting MST", mst_state))
        self.out.append("-I- FW was loaded successfully.\n")
        return 0

    def execute(self):
        try:
            opts = self.parse()
        except FwResetFailure as exc:
            usage = "usage: %s [-d DEVICE] [-l {0,1,3,4}] [-y] [--skip_driver] {q,query,r,reset}\n" % self.name
            return 2, usage + "%s: error: %s\n" % (self.name, exc)
        try:
            func, label = self.open_device(opts["device"])
            self.log_device = func.bdf
            if opts["command"] == "query":
                return self.query(func, label), ""
            if opts["command"] == "reset_fsm_register":
                self.out.append("\n-I- FSM register was reset successfully.\n")
                return 0, ""
            return self.reset(func, label, opts["level"], opts["yes"], opts["skip_driver"]), ""
        except FwResetFailure as exc:
            self.out.append("-E- %s.\n" % exc)
            return 1, ""


def run(state, argv, tool="mstfwreset", stdin=None):
    """Run mlxfwreset (``tool="mlxfwreset"``) or mstfwreset; returns a Result."""
    t = Tool(state, argv, tool, stdin)
    rc, err = t.execute()
    return Result(rc, "".join(t.out), err, t.kind, t.log_device)
