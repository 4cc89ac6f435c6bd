# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""``ibv_devinfo``, ``ibv_devices`` (libibverbs), ``ibstat`` (infiniband-diags) and ``ibdev2netdev`` (OFED).

Indentation uses real TAB characters where the tools print them (tool-outputs.md sections 5, 7, 8).
"""

from __future__ import annotations

import os
import re

from fabricsim import Result, catalog
from fabricsim import state as sim_state

VERBS_PORT_STATES = {0: "PORT_NOP", 1: "PORT_DOWN", 2: "PORT_INIT", 3: "PORT_ARMED", 4: "PORT_ACTIVE", 5: "PORT_ACTIVE_DEFER"}
IBSTAT_STATES = {0: "???", 1: "Down", 2: "Initializing", 3: "Armed", 4: "Active"}
IBSTAT_PHYS = {0: "No state change", 1: "Sleep", 2: "Polling", 3: "Disabled", 4: "PortConfigurationTraining", 5: "LinkUp",
               6: "LinkErrorRecovery", 7: "PhyTest"}
MTU = {1: "256", 2: "512", 3: "1024", 4: "2048", 5: "4096"}


def fw_version(func):
    return func.adapter.get("firmware_version", func.model.fw_version)


def hw_rev(func):
    return func.model.chip_rev


def cap_mask(func, status=None):
    """The port capability mask; a ``fabric_view`` entry may carry its own (e.g. IsSM set where OpenSM runs)."""
    if status and "cap_mask" in status:
        return status["cap_mask"]
    if not func.ib:
        return catalog.CAP_MASK_ETH
    return catalog.CAP_MASK_IB_CX6 if "cx6" in func.model.tags else catalog.CAP_MASK_IB


def rate_gbps(rate_text):
    m = re.match(r"\s*([0-9.]+)", rate_text)
    return m.group(1) if m else "0"


def active_mtu(func):
    return 5 if func.ib else 3


# ------------------------------------------------------------------------------ ibv_devinfo
def _devinfo_one(state, func, port=0):
    ps = sim_state.port_status(state, func)
    out = "hca_id:\t%s\n" % func.rdma
    out += "\ttransport:\t\t\tInfiniBand (0)\n"
    out += "\tfw_ver:\t\t\t\t%s\n" % fw_version(func)
    out += "\tnode_guid:\t\t\t%s\n" % sim_state.guid_colon(func.node_guid)
    out += "\tsys_image_guid:\t\t\t%s\n" % sim_state.guid_colon(func.sys_image_guid)
    out += "\tvendor_id:\t\t\t0x%04x\n" % catalog.VERBS_VENDOR_ID
    out += "\tvendor_part_id:\t\t\t%d\n" % func.device_id
    out += "\thw_ver:\t\t\t\t0x%X\n" % hw_rev(func)
    out += "\tboard_id:\t\t\t%s\n" % func.adapter.get("psid", func.model.psid)
    out += "\tphys_port_cnt:\t\t\t1\n"
    if port in (0, 1):
        mtu = active_mtu(func)
        out += "\t\tport:\t1\n"
        out += "\t\t\tstate:\t\t\t%s (%d)\n" % (VERBS_PORT_STATES.get(ps["state"], "unknown"), ps["state"])
        out += "\t\t\tmax_mtu:\t\t4096 (5)\n"
        out += "\t\t\tactive_mtu:\t\t%s (%d)\n" % (MTU[mtu], mtu)
        out += "\t\t\tsm_lid:\t\t\t%d\n" % ps["sm_lid"]
        out += "\t\t\tport_lid:\t\t%d\n" % ps["lid"]
        out += "\t\t\tport_lmc:\t\t0x%02x\n" % ps["lmc"]
        out += "\t\t\tlink_layer:\t\t%s\n" % func.link_layer
        out += "\n"
    return out


def ibv_devinfo(state, argv):
    devname, port, list_only = None, 0, False
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg in ("-d", "--ib-dev") and i + 1 < len(argv):
            devname = argv[i + 1]
            i += 1
        elif arg.startswith("--ib-dev="):
            devname = arg.split("=", 1)[1]
        elif arg in ("-i", "--ib-port") and i + 1 < len(argv):
            port = int(argv[i + 1]) if argv[i + 1].isdigit() else 0
            if port <= 0:
                return Result(1, _devinfo_usage(), "")
            i += 1
        elif arg in ("-l", "--list"):
            list_only = True
        elif arg in ("-v", "--verbose"):
            pass
        else:
            return Result(255, _devinfo_usage(), "")
        i += 1
    funcs = sim_state.rdma_functions(state)
    if list_only:
        out = "%d HCA%s found:\n" % (len(funcs), "" if len(funcs) == 1 else "s")
        out += "".join("\t%s\n" % f.rdma for f in funcs) + "\n"
        return Result(0, out, "")
    if devname:
        match = [f for f in funcs if f.rdma == devname]
        if not match:
            return Result(255, "", "IB device '%s' wasn't found\n" % devname)
        if port > 1:
            return Result(4, "", "Invalid port requested for device\n")
        return Result(0, _devinfo_one(state, match[0], port), "")
    if not funcs:
        return Result(255, "", "No IB devices found\n")
    if port > 1:
        return Result(4, "", "Invalid port requested for device\n")
    return Result(0, "".join(_devinfo_one(state, f, port) for f in funcs), "")


def _devinfo_usage():
    return ("Usage: ibv_devinfo             print the ca attributes\n\n"
            "Options:\n"
            "  -d, --ib-dev=<dev>     use IB device <dev> (default first device found)\n"
            "  -i, --ib-port=<port>   use port <port> of IB device (default all ports)\n"
            "  -l, --list             print only the IB devices names\n"
            "  -v, --verbose          print all the attributes of the IB device(s)\n")


def ibv_devices(state, argv):
    del argv
    out = "    %-16s\t   node GUID\n" % "device"
    out += "    %-16s\t----------------\n" % "------"
    for f in sim_state.rdma_functions(state):
        out += "    %-16s\t%016x\n" % (f.rdma, f.node_guid)
    return Result(0, out, "")


# ------------------------------------------------------------------------------ ibstat
def _ibstat_port(state, func, pre, hdrpre):
    ps = sim_state.port_status(state, func)
    rate = ps["rate"]
    if "FDR10" in rate:
        rate_line = "%s (FDR10)" % rate_gbps(rate)
    else:
        rate_line = rate_gbps(rate)
    out = "%sPort 1:\n" % hdrpre
    out += "%sState: %s\n" % (pre, IBSTAT_STATES.get(ps["state"], "???"))
    out += "%sPhysical state: %s\n" % (pre, IBSTAT_PHYS.get(ps["phys_state"], "???"))
    out += "%sRate: %s\n" % (pre, rate_line)
    out += "%sBase lid: %d\n" % (pre, ps["lid"])
    out += "%sLMC: %d\n" % (pre, ps["lmc"])
    out += "%sSM lid: %d\n" % (pre, ps["sm_lid"])
    out += "%sCapability mask: 0x%08x\n" % (pre, cap_mask(func, ps))
    out += "%sPort GUID: 0x%016x\n" % (pre, func.port_guid)
    out += "%sLink layer: %s\n" % (pre, func.link_layer)
    return out


def _ibstat_ca(state, func, short):
    out = "CA '%s'\n" % func.rdma
    out += "\tCA type: MT%d\n" % func.device_id
    out += "\tNumber of ports: 1\n"
    out += "\tFirmware version: %s\n" % fw_version(func)
    out += "\tHardware version: %x\n" % hw_rev(func)
    out += "\tNode GUID: 0x%016x\n" % func.node_guid
    out += "\tSystem image GUID: 0x%016x\n" % func.sys_image_guid
    if not short:
        out += _ibstat_port(state, func, "\t\t", "\t")
    return out


def ibstat(state, argv):
    list_only = short = ports = False
    rest = []
    for arg in argv:
        if arg in ("-l", "--list_of_cas"):
            list_only = True
        elif arg in ("-s", "--short"):
            short = True
        elif arg in ("-p", "--port_list"):
            ports = True
        elif arg.startswith("-") and arg != "-":
            return Result(255, "", "ibstat: invalid option -- '%s'\n" % arg.lstrip("-"))
        else:
            rest.append(arg)
    funcs = sim_state.rdma_functions(state)
    pid = os.getpid()
    if rest:
        match = [f for f in funcs if f.rdma == rest[0]]
        if not match:
            return Result(255, "", "ibpanic: [%d] main: '%s' IB device can't be found\n" % (pid, rest[0]))
        funcs = match
    if ports:
        return Result(0, "".join("0x%016x\n" % f.port_guid for f in funcs), "")
    if list_only:
        return Result(0, "".join("%s\n" % f.rdma for f in funcs), "")
    if len(rest) > 1:
        port = int(rest[1], 0) if re.fullmatch(r"(0x)?[0-9a-fA-F]+", rest[1]) else 0
        func = funcs[0]
        if port != 1:
            err = "ibwarn: [%d] ca_stat: CA: '%s' has no port number %d - max (1)\n" % (pid, func.rdma, port)
            err += "ibpanic: [%d] main: stat of IB device '%s' failed\n" % (pid, func.rdma)
            return Result(255, "", err)
        return Result(0, "CA: '%s'\n" % func.rdma + _ibstat_port(state, func, "", ""), "")
    return Result(0, "".join(_ibstat_ca(state, f, short) for f in funcs), "")


# ------------------------------------------------------------------------------ ibdev2netdev
def carrier(state, func):
    """IPoIB carrier follows the IB port being ACTIVE; simulated Ethernet links are always up."""
    if not func.ib:
        return True
    return sim_state.port_status(state, func)["state"] == 4


def ibdev2netdev(state, argv):
    verbose = "-v" in argv
    funcs = sorted(sim_state.rdma_functions(state), key=lambda f: f.rdma)
    out = ""
    for f in funcs:
        link = "Up" if carrier(state, f) else "Down"
        netdev = f.netdev or "<No-netdev>"
        if verbose:
            ps = sim_state.port_status(state, f)
            ibstate = catalog.PORT_STATES.get(ps["state"], "DOWN")
            if f.is_vf:
                part, desc = "NA", ""
            else:
                part = f.adapter.get("part_name", f.model.part_name).replace("_Ax", "")
                desc = f.adapter.get("description", f.model.description)
            out += "%s %s (MT%d - %s) %s fw %s port 1 (%-6s) ==> %s (%s)\n" % (
                f.bdf, f.rdma, f.device_id, part, desc, fw_version(f), ibstate, netdev, link)
        else:
            out += "%s port 1 ==> %s (%s)\n" % (f.rdma, netdev, link)
    return Result(0, out, "")
