# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""``modprobe`` (kmod) for the RDMA modules the simulator knows (``state.MODULE_DEPS``).

A container cannot load kernel modules. For the names the simulator knows, ``modprobe`` does what the
kernel would show: the module and its dependencies appear in ``/sys/module`` (``-r`` removes one that
nothing uses). Any other name goes to the real modprobe, which dpkg-divert moved to
``<path>.distrib`` (``exec_real``), so a node behaves as a real host for everything else.
"""

from __future__ import annotations

import os
import sys

from fabricsim import Result
from fabricsim import state as sim_state

# Real modprobe after the node's dpkg-divert (Debian 12 ships /sbin/modprobe, 13 /usr/sbin/modprobe).
REAL_PATHS = ("/usr/sbin/modprobe.distrib", "/sbin/modprobe.distrib")
FLAGS = {"a": "all", "q": "quiet", "v": "verbose", "n": "dry_run", "r": "remove", "b": "blacklist", "s": "syslog",
         "i": "ignore"}
LONG = {"--all": "all", "--quiet": "quiet", "--verbose": "verbose", "--dry-run": "dry_run", "--show": "dry_run",
        "--remove": "remove", "--use-blacklist": "blacklist", "--syslog": "syslog", "--first-time": "first_time",
        "--ignore-install": "ignore", "--ignore-remove": "ignore"}


def parse(argv):
    """``(options, names, params)``; None when ``argv`` has an option the simulator leaves to the real tool."""
    opts, positional = set(), []
    for arg in argv:
        if arg in LONG:
            opts.add(LONG[arg])
        elif arg.startswith("-") and len(arg) > 1 and not positional:
            if not all(c in FLAGS for c in arg[1:]):
                return None
            opts.update(FLAGS[c] for c in arg[1:])
        else:
            positional.append(arg)
    if "all" in opts or "remove" in opts:
        return opts, positional, []
    return opts, positional[:1], positional[1:]


def known(name):
    return name.replace("-", "_") in sim_state.MODULE_DEPS


def split(argv):
    """``(simulated, real)``: the module names the simulator handles, and the argv for the real modprobe
    (None when it has nothing to do)."""
    parsed = parse(argv)
    if parsed is None:
        return [], list(argv)
    opts, names, _params = parsed
    sim = [n for n in names if known(n)]
    rest = [n for n in names if not known(n)]
    if not names:
        return [], list(argv)
    if not rest:
        return sim, None
    if len(names) == 1:
        return [], list(argv)
    return sim, [a for a in argv if a.startswith("-")] + rest


def exec_real(argv):
    """Replace this process with the real modprobe (argv[0] ``modprobe``: kmod dispatches on it)."""
    for path in REAL_PATHS:
        if os.path.exists(path):
            sys.stdout.flush()
            sys.stderr.flush()
            os.execv(path, ["modprobe"] + list(argv))
    sys.stderr.write("modprobe: the real modprobe is not installed (%s)\n" % " or ".join(REAL_PATHS))
    return 127


def _release(state):
    return state.get("kernel", {}).get("release", "6.1.0")


def run(state, argv):
    """Apply ``modprobe argv`` to the simulated modules; names for the real tool are left out (see ``split``)."""
    parsed = parse(argv)
    names, _real = split(argv)
    if parsed is None or not names:
        return Result(0, "", "", "read")
    opts = parsed[0]
    err = []
    changed = False
    for name in names:
        mod = name.replace("-", "_")
        if "remove" in opts:
            if mod not in sim_state.loaded_modules(state):
                if "quiet" not in opts:
                    err.append("modprobe: FATAL: Module %s is not in kernel.\n" % mod)
                    return Result(1, "", "".join(err), "write" if changed else "read")
                continue
            if "dry_run" in opts:
                continue
            try:
                sim_state.unload_module(state, mod)
            except OSError:
                err.append("modprobe: FATAL: Module %s is in use.\n" % mod)
                return Result(1, "", "".join(err), "write" if changed else "read")
            changed = True
            continue
        if mod in sim_state.loaded_modules(state):
            if "first_time" in opts:
                err.append("modprobe: ERROR: could not insert '%s': Module already in kernel\n" % mod)
                return Result(1, "", "".join(err), "read")
            continue
        if "dry_run" in opts:
            if mod == "mlx_compat" and not sim_state.ofed_modules_on_disk(state):
                return Result(1, "", "modprobe: FATAL: Module %s not found in directory /lib/modules/%s\n" % (mod, _release(state)))
            continue
        if not sim_state.load_module(state, mod):
            if "quiet" not in opts:
                err.append("modprobe: FATAL: Module %s not found in directory /lib/modules/%s\n" % (mod, _release(state)))
            return Result(1, "", "".join(err), "write" if changed else "read")
        changed = True
    return Result(0, "", "".join(err), "write" if changed else "read")
