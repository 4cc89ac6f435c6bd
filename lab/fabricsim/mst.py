# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""MFT's ``mst``: ``start``, ``stop``, ``status [-v]`` (tool-outputs.md section 2)."""

from __future__ import annotations

from fabricsim import Result
from fabricsim import state as sim_state


def device_map(state):
    """MST device path -> PCI function: ``/dev/mst/mt4123_pciconf0`` (function 0), ``..._pciconf0.1``.

    Cards are numbered per PCI device id in PCI order.
    """
    out = {}
    counters = {}
    for f in sim_state.functions(state, include_vfs=False):
        if f.pf != 0:
            continue
        n = counters.get(f.model.device_id, 0)
        counters[f.model.device_id] = n + 1
        base = "/dev/mst/%s_pciconf%d" % (f.model.mst_name, n)
        for pf, bdf in enumerate(sim_state.pf_bdfs(f.adapter)):
            out[base if pf == 0 else "%s.%d" % (base, pf)] = bdf
    return out


def _modules(started):
    text = "MST modules:\n------------\n    MST PCI module is not loaded\n"
    if started:
        text += "    MST PCI configuration module loaded\n"
    else:
        text += "    MST PCI configuration module is not loaded\n"
    return text


def status(state, verbose=False):
    started = sim_state.mst_started(state)
    out = _modules(started)
    if verbose:
        return out + _verbose_table(state, started)
    if not started:
        return out
    out += "\nMST devices:\n------------\n"
    for path, bdf in device_map(state).items():
        if "." in path.rsplit("pciconf", 1)[1]:
            continue
        func = sim_state.find_function(state, bdf)
        out += "%-33s- PCI configuration cycles access.\n" % path
        out += "%35sdomain:bus:dev.fn=%s addr.reg=88 data.reg=92 cr_bar.gw_offset=-1\n" % ("", bdf)
        out += "%35sChip revision is: %02X\n" % ("", func.model.chip_rev)
    return out


def _verbose_table(state, started):
    by_bdf = {bdf: path for path, bdf in device_map(state).items()}
    rows = []
    for f in sim_state.functions(state, include_vfs=False):
        pci = sim_state.short_bdf(f.bdf)
        path = by_bdf.get(f.bdf, "NA") if started else "NA"
        net = ("net-%s" % f.netdev) if f.netdev else "NA"
        rows.append((f.adapter["pci_address"], -f.pf, "%s(rev:%d)" % (f.model.dev_type, f.model.chip_rev), path, pci,
                     f.rdma or "NA", net, str(f.adapter.get("numa_node", 0))))
    rows.sort(key=lambda r: (r[0], r[1]))
    pci_w = max([len(r[4]) for r in rows] + [7]) + 3
    if pci_w > 10:
        pci_w = 16
    net_w = max([len(r[6]) + 7 for r in rows] + [26])
    out = "PCI devices:\n------------\n"
    out += "%-24s%-30s%-*s%-16s%-*s%s\n" % ("DEVICE_TYPE", "MST", pci_w, "PCI", "RDMA", net_w, "NET", "NUMA")
    for r in rows:
        out += "%-24s%-30s%-*s%-16s%-*s%s\n\n" % (r[2], r[3], pci_w, r[4], r[5], net_w, r[6], r[7])
    return out


START_TEXT = ("Starting MST (Mellanox Software Tools) driver set\n"
              "Loading MST PCI module - Success\n"
              "Loading MST PCI configuration module - Success\n"
              "Create devices\n"
              "Unloading MST PCI module (unused) - Success\n")


def run(state, argv):
    """``mst start|stop|restart|status [-v]``."""
    if not argv:
        return Result(1, "", "-E- Usage: mst {start|stop|restart|status [-v]}\n", "read")
    cmd, rest = argv[0], argv[1:]
    if cmd == "start":
        if sim_state.mst_started(state):
            return Result(0, "Starting MST (Mellanox Software Tools) driver set\n"
                             "[warn] mst_pciconf is already loaded, skipping\nCreate devices\n", "", "write")
        sim_state.set_mst_started(state, True)
        return Result(0, START_TEXT, "", "write")
    if cmd == "stop":
        was = sim_state.mst_started(state)
        sim_state.set_mst_started(state, False)
        text = "Stopping MST (Mellanox Software Tools) driver set\n"
        if was:
            text += "Unloading MST PCI configuration module - Success\n"
        return Result(0, text, "", "write")
    if cmd == "restart":
        sim_state.set_mst_started(state, True)
        return Result(0, "Stopping MST (Mellanox Software Tools) driver set\n" + START_TEXT, "", "write")
    if cmd == "status":
        verbose = False
        for arg in rest:
            if arg == "-v":
                verbose = True
            else:
                return Result(1, _modules(sim_state.mst_started(state)) + '    -E- Unknown argument "%s"\n' % arg, "", "read")
        return Result(0, status(state, verbose), "", "read")
    return Result(1, "", "-E- Unknown command: %s\n" % cmd, "read")
