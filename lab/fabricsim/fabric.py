# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The link between the simulated adapters and the simulated switch fabric (ibsim).

Host side: ``netfile()`` writes the topology ibsim serves: one switch, every cabled port of a VPI
card plugged into it.  Node side: ``query_port()`` asks ibsim what the subnet manager made of a
port (state, LID, SM LID, P_Keys) by running the real ``ibstat``/``smpquery`` under ibsim's
umad2sim preload, and ``sync()`` writes that into the state's ``fabric_view``, which the
simulated sysfs shows -- so a port goes INIT -> ACTIVE when a real OpenSM sweeps the fabric.
"""

import os
import re
import shutil
import subprocess
import tempfile

from fabricsim import state as sim_state

SWITCH = "Switch1"
SWITCH_PORTS = 36
UMAD2SIM = "/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so"
IBSTAT = "/usr/sbin/ibstat"
SMPQUERY = "/usr/sbin/smpquery"
_STATES = {"down": "DOWN", "initializing": "INIT", "armed": "ARMED", "active": "ACTIVE"}


def port_name(host, bdf):
    """The fabric's name of a port: unique over the lab, and what SIM_HOST selects."""
    return "%s-%s" % (host, bdf)


def cabled_ports(states):
    """Every cabled port of a VPI card over all nodes (sorted), with its switch port.

    A node's description says which functions are cabled; the lab numbers the switch ports,
    so descriptions never collide.  A port cabled while in Ethernet mode is listed too: the cable
    does not change with the link type, only what the port does with it.
    """
    ports, switch_port = [], 0
    for host in sorted(states):
        cabled = states[host].get("fabric", {}).get("ports", {})
        for func in sim_state.functions(states[host], include_vfs=False):
            if func.bdf not in cabled or not func.model.vpi:
                continue
            switch_port += 1
            ports.append({"host": host, "bdf": func.bdf, "name": port_name(host, func.bdf),
                          "guid": func.node_guid, "switch_port": switch_port})
    return ports


def netfile(states):
    """An ibnetdiscover-style topology for ibsim."""
    ports = cabled_ports(states)
    if len(ports) > SWITCH_PORTS:
        raise ValueError("%d cabled ports, the simulated switch has %d" % (len(ports), SWITCH_PORTS))
    lines = ['Switch\t%d "%s"' % (SWITCH_PORTS, SWITCH)]
    lines += ['[%d]\t"%s"[1]' % (port["switch_port"], port["name"]) for port in ports]
    # ibsim gives a port the GUID node GUID + port number; a real mlx5 function has port GUID ==
    # node GUID, so the fabric's node GUID is one below the GUID the host shows.
    hcas = ['caguid=0x%016x\nHca\t1 "%s"\n[1]\t"%s"[%d]' % (port["guid"] - 1, port["name"], SWITCH, port["switch_port"])
            for port in ports]
    return "\n".join(lines) + "\n\n" + "\n\n".join(hcas) + "\n"


def parse_ibstat_port(text):
    """State, LID, SM LID and LMC of the (only) port in ``ibstat`` output; None if absent."""
    fields = {}
    for line in text.splitlines():
        key, sep, value = line.strip().partition(":")
        if sep:
            fields[key.strip().lower()] = value.strip()
    if "state" not in fields or "base lid" not in fields:
        return None
    view = {"state": _STATES.get(fields["state"].lower(), "DOWN"),
            "lid": int(fields["base lid"]), "sm_lid": int(fields.get("sm lid", "0")), "lmc": int(fields.get("lmc", "0"))}
    if view["state"] in ("DOWN", "INIT"):
        # Until the SM configures it, a ConnectX port reports LID 0xffff (ibsim says 0).
        view["lid"] = 0xFFFF
    return view


def parse_smpquery_pkeys(text):
    """The non-empty P_Keys of ``smpquery pkeys`` output, in table order."""
    keys = []
    for line in text.splitlines():
        head, sep, rest = line.partition(":")
        if not sep or not head.strip().isdigit():
            continue
        keys += [key for key in rest.split() if re.match(r"^0x[0-9a-fA-F]{4}$", key) and int(key, 16) & 0x7FFF]
    return keys


def _preloaded(argv, name, server, timeout=5):
    host, _sep, port = server.rpartition(":")
    env = dict(os.environ, LD_PRELOAD=UMAD2SIM, SIM_HOST=name, IBSIM_SERVER_NAME=host, IBSIM_SERVER_PORT=port)
    workdir = tempfile.mkdtemp(prefix="umad2sim-")  # umad2sim writes ./sys-<pid> there
    try:
        result = subprocess.run(argv, env=env, cwd=workdir, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True, timeout=timeout, check=False)
        return result.stdout if result.returncode == 0 else None
    except (OSError, subprocess.TimeoutExpired):
        return None
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def query_port(name, server):
    """What the fabric at ``server`` (``host:port`` of ibsim) says about one port; None if it cannot tell."""
    text = _preloaded([IBSTAT], name, server)
    view = parse_ibstat_port(text) if text else None
    if view and view["state"] in ("ARMED", "ACTIVE"):
        pkeys = _preloaded([SMPQUERY, "pkeys", str(view["lid"]), "1"], name, server)
        if pkeys:
            view["pkeys"] = parse_smpquery_pkeys(pkeys)
    return view


def server(state):
    """Where this node's switch fabric is served (``fabric.ibsim``, set by labctl), or None."""
    return state.get("fabric", {}).get("ibsim")


def sync(state_path, query=query_port):
    """Refresh ``fabric_view`` for every cabled InfiniBand port of this node; True if it changed."""
    state = sim_state.load(state_path)
    address = server(state)
    if not address:
        return False
    host = state.get("hostname", "")
    cabled = state.get("fabric", {}).get("ports", {})
    views = {}
    for func in sim_state.functions(state, include_vfs=False):
        if func.bdf in cabled and func.ib:
            view = query(port_name(host, func.bdf), address)
            if view is not None:
                views[func.bdf] = view
    if all(state.get("fabric_view", {}).get(bdf) == view for bdf, view in views.items()):
        return False

    def update(current):
        current.setdefault("fabric_view", {}).update(views)

    sim_state.mutate(state_path, update)
    return True


# A kernel counter file -> the PortCounters field of ibsim's console command PerformanceSet (perfquery's names)
PERF_FIELDS = {"symbol_error": "SymbolErrorCounter", "link_error_recovery": "LinkErrorRecoveryCounter",
               "link_downed": "LinkDownedCounter", "port_rcv_errors": "PortRcvErrors",
               "port_rcv_remote_physical_errors": "PortRcvRemotePhysicalErrors", "port_xmit_discards": "PortXmitDiscards",
               "local_link_integrity_errors": "LocalLinkIntegrityErrors",
               "excessive_buffer_overrun_errors": "ExcessiveBufferOverrunErrors"}


def perf_set(states, host, bdf, counter, value):
    """The ibsim console line that sets ``counter`` (the kernel's name) of the switch port cabled to ``host``'s port
    ``bdf``: the far end of the same link, as ``perfquery <switch lid> <port>`` then shows it. Write it to the lab's
    console FIFO (``.cache/lab*/ibsim/console``)."""
    field = PERF_FIELDS.get(counter)
    if field is None:
        raise ValueError("%s is no counter ibsim keeps; known: %s" % (counter, ", ".join(sorted(PERF_FIELDS))))
    for port in cabled_ports(states):
        if port["host"] == host and port["bdf"] == sim_state.normalize_bdf(bdf):
            return 'PerformanceSet "%s"[%d] PortCounters.%s=%d' % (SWITCH, port["switch_port"], field, int(value))
    raise ValueError("%s %s is not cabled to the switch" % (host, bdf))
