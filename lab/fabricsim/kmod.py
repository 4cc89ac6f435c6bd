# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""``modprobe`` and ``modinfo`` (kmod) for the modules the simulator knows (``state.MODULE_DEPS``).

A container cannot load kernel modules. For the names the simulator knows, ``modprobe`` does what the
kernel would show: the module and its dependencies appear in ``/sys/module`` (``-r`` removes one that
nothing uses). Any other name goes to the real modprobe, which dpkg-divert moved to
``<path>.distrib`` (``exec_real``), so a node behaves as a real host for everything else.
``modinfo`` answers for the same names from the state (which module files are on disk) and leaves
other names to the real modinfo the same way.
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
            if not sim_state.on_disk(state, mod):
                return Result(1, "", "modprobe: FATAL: Module %s not found in directory /lib/modules/%s\n" % (name, _release(state)))
            continue
        if not sim_state.load_module(state, mod):
            if "quiet" not in opts:  # kmod names the module as it was asked for here
                err.append("modprobe: FATAL: Module %s not found in directory /lib/modules/%s\n" % (name, _release(state)))
            return Result(1, "", "".join(err), "write" if changed else "read")
        changed = True
    return Result(0, "", "".join(err), "write" if changed else "read")


# --------------------------------------------------------------------------------------
# modinfo
# --------------------------------------------------------------------------------------
MODINFO_REAL_PATHS = ("/usr/sbin/modinfo.distrib", "/sbin/modinfo.distrib")
# Where each simulated module's file lives under /lib/modules/<release>/: the inbox RDMA modules of a Debian
# kernel, and the DKMS builds (OFED's mlx_compat; Debian's nvidia-kernel-dkms builds nvidia and nvidia-peermem).
MODULE_FILES = {
    "mlx5_core": "kernel/drivers/net/ethernet/mellanox/mlx5/core/mlx5_core.ko",
    "mlx5_ib": "kernel/drivers/infiniband/hw/mlx5/mlx5_ib.ko",
    "ib_core": "kernel/drivers/infiniband/core/ib_core.ko",
    "ib_uverbs": "kernel/drivers/infiniband/core/ib_uverbs.ko",
    "ib_umad": "kernel/drivers/infiniband/core/ib_umad.ko",
    "ib_cm": "kernel/drivers/infiniband/core/ib_cm.ko",
    "iw_cm": "kernel/drivers/infiniband/core/iw_cm.ko",
    "rdma_cm": "kernel/drivers/infiniband/core/rdma_cm.ko",
    "rdma_ucm": "kernel/drivers/infiniband/core/rdma_ucm.ko",
    "ib_ipoib": "kernel/drivers/infiniband/ulp/ipoib/ib_ipoib.ko",
    "mlx_compat": "updates/dkms/mlx_compat.ko",
    "nvidia": "updates/dkms/nvidia.ko",
    "nvidia_peermem": "updates/dkms/nvidia-peermem.ko",
}
MODULE_DESCRIPTIONS = {"nvidia_peermem": "NVIDIA GPU memory plug-in", "mlx5_core": "Mellanox 5th generation network "
                       "adapters (ConnectX series) core driver", "ib_core": "core kernel InfiniBand API"}
MODINFO_FLAGS = {"-n": "filename", "--filename": "filename", "-l": "license", "--license": "license",
                 "-d": "description", "--description": "description", "-a": "author", "--author": "author",
                 "-p": "parm", "--parameters": "parm"}


def modinfo_parse(argv):
    """``(field, release, sep, names)``; None when ``argv`` has an option the simulator leaves to the real tool."""
    field, release, sep, names = None, None, "\n", []
    args = list(argv)
    while args:
        arg = args.pop(0)
        if arg in MODINFO_FLAGS:
            field = MODINFO_FLAGS[arg]
        elif arg in ("-F", "--field", "-k", "--set-version") or arg.startswith(("-F", "-k", "--field=", "--set-version=")):
            if "=" in arg:
                value = arg.split("=", 1)[1]
            elif len(arg) > 2 and not arg.startswith("--"):
                value = arg[2:]
            elif args:
                value = args.pop(0)
            else:
                return None
            if arg.startswith(("-F", "--field")):
                field = value
            else:
                release = value
        elif arg in ("-0", "--null"):
            sep = "\0"
        elif arg.startswith("-") and len(arg) > 1:
            return None
        else:
            names.append(arg)
    return field, release, sep, names


def modinfo_split(argv):
    """``(simulated, real argv or None)`` as ``split`` does for modprobe."""
    parsed = modinfo_parse(argv)
    if parsed is None or not parsed[3]:
        return [], list(argv)
    names = parsed[3]
    sim = [n for n in names if known(n)]
    rest = [n for n in names if not known(n)]
    if not rest:
        return sim, None
    if not sim:
        return [], list(argv)
    return sim, [a for a in argv if a not in names] + rest


def modinfo_exec_real(argv):
    for path in MODINFO_REAL_PATHS:
        if os.path.exists(path):
            sys.stdout.flush()
            sys.stderr.flush()
            os.execv(path, ["modinfo"] + list(argv))
    sys.stderr.write("modinfo: the real modinfo is not installed (%s)\n" % " or ".join(MODINFO_REAL_PATHS))
    return 127


def _modinfo_fields(state, mod, release):
    nv = state.get("nvidia") or {}
    fields = [("filename", "/lib/modules/%s/%s" % (release, MODULE_FILES[mod]))]
    if mod in ("nvidia", "nvidia_peermem"):
        fields.append(("version", nv.get("version", "")))
        licence = "Dual MIT/GPL" if nv.get("flavour") == "open" else ("NVIDIA" if mod == "nvidia" else "Dual BSD/GPL")
        fields.append(("license", licence))
    else:
        fields.append(("license", "Dual BSD/GPL"))
    if mod in MODULE_DESCRIPTIONS:
        fields.append(("description", MODULE_DESCRIPTIONS[mod]))
    fields.append(("depends", ",".join(sim_state.MODULE_DEPS[mod])))
    fields.append(("name", mod))
    fields.append(("vermagic", "%s SMP preempt mod_unload modversions " % release))
    return fields


def modinfo(state, argv):
    """``modinfo [-n|-F field|-k release|-0] NAME...`` for the simulated modules: what kmod prints for a module file
    found under /lib/modules/<release> (the state's ``kernel.release``), or its error for one that is not there."""
    parsed = modinfo_parse(argv)
    names = modinfo_split(argv)[0]
    if parsed is None or not names:
        return Result(0, "", "", "read")
    field, release, sep, _all = parsed
    release = release or _release(state)
    out, err, rc = [], [], 0
    for name in names:
        mod = name.replace("-", "_")
        if not sim_state.on_disk(state, mod):
            err.append("modinfo: ERROR: Module %s not found.\n" % name)
            rc = 1
            continue
        for key, value in _modinfo_fields(state, mod, release):
            if field is None:
                out.append("%-16s%s%s" % (key + ":", value, sep))
            elif field == key:
                out.append(value + sep)
    return Result(rc, "".join(out), "".join(err), "read")
