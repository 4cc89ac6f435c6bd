# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""iproute2's ``ip`` for the simulated netdevs: ``ip link show|set ... vf N`` and ``ip addr show``.

``run(state, argv)`` is the simulated tool (a pure function of the state, like ``rdma.py``).
``main(argv)`` is what the ``/bin/ip`` wrapper of a lab node calls: it simulates only commands
that name a simulated netdev (the ``netdev`` of a simulated PCI function), and execs the real,
diverted ``ip`` (``/bin/ip.distrib``) with the same argv for everything else -- Ansible facts,
networking scripts and containers keep the real tool.  ``ip link show`` / ``ip addr show``
without a device run the real tool and append the simulated netdevs in the same layout.

Formats (text, ``-o``, ``-br``, ``-j``/``-p``, ``-d``) follow iproute2 ``ip/ipaddress.c``
(``print_linkinfo``, ``print_vfinfo``) and ``ip/iplink.c`` (``iplink_parse_vf``); the VF line
depends on ``tools.iproute2`` (and ``kernel.release`` for the GUIDs):

* < 5.3:  ``    vf 0 MAC 00:00:10:49:fe:80, spoof checking off, link-state auto, trust off, query_rss off``
* 5.3-5.4: ``    vf 0     link/infiniband <PF addr> brd <PF brd>, spoof checking off, link-state auto, ...``
* >= 5.5 (kernel >= 5.5): ``..., spoof checking off, NODE_GUID 00:..:00, PORT_GUID 00:..:00, link-state auto, ...``

Only ``stdlib`` modules are imported at module level: the pass-through path must stay cheap.
"""

from __future__ import annotations

import os
import sys

REAL_IP = "/bin/ip.distrib"
# ip link's VF link state and the vport policy the mlx5 driver sets for it (= MLNX_OFED's sysfs
# sriov/<n>/policy words).  "Auto" is the simulator's policy of a VF nobody set (upstream driver).
LINK_STATE_POLICY = {"auto": "Follow", "enable": "Up", "disable": "Down"}
POLICY_LINK_STATE = {"Follow": "auto", "Auto": "auto", "Up": "enable", "Down": "disable"}
IPOIB_MTU, ETH_MTU = 2044, 1500
IPOIB_QLEN, ETH_QLEN = 256, 1000
ETH_BROADCAST = "ff:ff:ff:ff:ff:ff"
# ip's own options: no argument / one argument; anything else -> the real ip decides.
_FLAG_OPTS = ("-4", "-6", "-0", "-details", "-oneline", "-json", "-pretty", "-brief", "-stats", "-statistics",
              "-human", "-human-readable", "-iec", "-resolve", "-Numeric", "-color", "-all")
_VF_KEYWORDS = ("mac", "vlan", "rate", "max_tx_rate", "min_tx_rate", "spoofchk", "query_rss", "trust", "state",
                "node_guid", "port_guid")
_ADDR_FLAGS = ("secondary", "temporary", "primary", "dynamic", "permanent", "tentative", "deprecated", "dadfailed",
               "home", "nodad", "optimistic", "mngtmpaddr", "noprefixroute", "autojoin", "stable-privacy")


class IpExit(Exception):
    """The tool stops: ``rc`` with ``stderr`` (iproute2's invarg/incomplete_command/RTNETLINK errors)."""

    def __init__(self, rc, stderr):
        super().__init__(stderr)
        self.rc = rc
        self.stderr = stderr


class PassThrough(Exception):
    """Not a command about a simulated netdev: the real ip handles it."""


def matches(word, keyword):
    """iproute2's ``matches()``: ``word`` is a non-empty prefix of ``keyword``."""
    return 0 < len(word) <= len(keyword) and keyword.startswith(word)


def _invarg(msg, arg):
    return IpExit(255, 'Error: argument "%s" is wrong: %s\n' % (arg, msg))


def _incomplete():
    return IpExit(255, 'Command line is not complete. Try option "help"\n')


def _rtnetlink(text):
    return IpExit(2, "RTNETLINK answers: %s\n" % text)


# --------------------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------------------
class Options:
    """ip's global options that change the output of the commands simulated here."""

    def __init__(self):
        self.family = None  # None, "inet", "inet6", "link"
        self.details = False
        self.oneline = False
        self.json = False
        self.pretty = False
        self.brief = False
        self.stats = 0


def parse_options(argv):
    """Split ``ip``'s global options from the command; raises PassThrough for ones not simulated."""
    opts = Options()
    args = list(argv)
    while args and args[0].startswith("-") and len(args[0]) > 1:
        opt = args[0]
        if opt.startswith("--"):
            opt = opt[1:]
        if opt in ("-4", "-6", "-0"):
            opts.family = {"-4": "inet", "-6": "inet6", "-0": "link"}[opt]
        elif matches(opt, "-family"):
            if len(args) < 2 or args[1] not in ("inet", "inet6", "link"):
                raise PassThrough()
            opts.family = args[1]
            args = args[1:]
        elif opt == "-d" or (matches(opt, "-details") and len(opt) > 2):
            opts.details = True
        elif opt == "-o" or (matches(opt, "-oneline") and len(opt) > 2):
            opts.oneline = True
        elif opt == "-j" or (matches(opt, "-json") and len(opt) > 2):
            opts.json = True
        elif opt == "-p" or (matches(opt, "-pretty") and len(opt) > 2):
            opts.pretty = True
        elif matches(opt, "-brief") and len(opt) > 2:
            opts.brief = True
        elif opt == "-s" or (matches(opt, "-stats") and len(opt) > 2) or matches(opt, "-statistics"):
            opts.stats += 1
        elif opt in ("-h", "-r", "-N", "-a", "-c") or any(matches(opt, o) and len(opt) > 2 for o in _FLAG_OPTS) \
                or opt.startswith("-color="):
            pass  # human/resolve/numeric/all/color: nothing they change is shown for these links
        else:
            raise PassThrough()  # -batch, -netns, -force, -Version, -help, -loops, -rcvbuf, -timestamp ...
        args = args[1:]
    return opts, args


def parse_command(args):
    """``(object, action, rest)`` for the commands simulated here; raises PassThrough otherwise."""
    if not args:
        raise PassThrough()
    obj = args[0]
    if matches(obj, "link"):
        rest = args[1:]
        if not rest:
            return "link", "show", []
        for name in ("add", "change", "replace"):
            if matches(rest[0], name) or rest[0] == "chg":
                raise PassThrough()
        if matches(rest[0], "set"):
            return "link", "set", rest[1:]
        if matches(rest[0], "show") or matches(rest[0], "lst") or matches(rest[0], "list"):
            return "link", "show", rest[1:]
        raise PassThrough()
    if matches(obj, "address"):  # "a", "addr": ip's command table has address before addrlabel
        rest = args[1:]
        if not rest:
            return "address", "show", []
        if matches(rest[0], "show") or matches(rest[0], "lst") or matches(rest[0], "list"):
            return "address", "show", rest[1:]
        raise PassThrough()
    raise PassThrough()


def parse_show(args):
    """``ip link|addr show`` selectors -> (device or None, up_only); PassThrough for other filters."""
    dev, up = None, False
    i = 0
    while i < len(args):
        word = args[i]
        if word == "up":
            up = True
        elif word in _ADDR_FLAGS or (word.startswith("-") and word[1:] in _ADDR_FLAGS):
            pass
        elif word in ("to", "scope", "label", "group", "master", "vrf", "nomaster", "type", "proto"):
            raise PassThrough()
        else:
            if word == "dev":
                i += 1
                if i >= len(args):
                    raise _incomplete()
                word = args[i]
            elif matches(word, "help"):
                raise PassThrough()
            if dev is not None:
                raise IpExit(255, 'Error: either "dev" is duplicate, or "%s" is a garbage.\n' % word)
            dev = word
        i += 1
    return dev, up


def _set_device(args):
    """The device an ``ip link set`` names (the first word that is not a keyword), or None."""
    i = 0
    while i < len(args):
        word = args[i]
        if word == "dev":
            return args[i + 1] if i + 1 < len(args) else None
        if word == "vf":
            i += 2
            while i < len(args) and any(matches(args[i], k) for k in _VF_KEYWORDS):
                i += 2
            continue
        if word in ("up", "down", "nomaster") or matches(word, "nomaster"):
            i += 1
            continue
        if word in ("mtu", "name", "index", "link", "address", "broadcast", "brd", "txqueuelen", "qlen", "txqlen",
                    "netns", "multicast", "allmulticast", "promisc", "trailers", "arp", "carrier", "master", "vrf",
                    "dynamic", "alias", "group", "mode", "state", "numtxqueues", "numrxqueues", "addrgenmode",
                    "protodown", "gso_max_size", "gso_max_segs", "xdp", "xdpgeneric", "xdpdrv", "xdpoffload",
                    "type", "link-netns", "link-netnsid"):
            i += 2
            continue
        return word
    return None


def _strtoul_group(text):
    """One ``xx`` group of iproute2's get_guid(): strtoul(base 16) must consume exactly 2 characters."""
    s = text
    j = 0
    while j < len(s) and s[j] in " \t\n\v\f\r":
        j += 1
    neg = False
    if j < len(s) and s[j] in "+-":
        neg = s[j] == "-"
        j += 1
    if j >= len(s) or s[j] not in "0123456789abcdefABCDEF":
        return None
    digits = s[j:]
    if any(c not in "0123456789abcdefABCDEF" for c in digits):
        return None
    value = int(digits, 16)
    if neg:
        value = (-value) % (1 << 64)  # strtoul of "-x": ULONG_MAX + 1 - x
    return value


def parse_guid(text):
    """iproute2 ``get_guid()``: exactly ``xx:xx:xx:xx:xx:xx:xx:xx`` (23 characters); None when invalid."""
    if len(text) != 23 or any(text[2 + i * 3] != ":" for i in range(7)):
        return None
    guid = 0
    for i in range(8):
        value = _strtoul_group(text[i * 3:i * 3 + 2])
        if value is None or value > 255:
            return None
        guid |= value << (56 - 8 * i)
    return guid


def _get_integer(text):
    """iproute2 ``get_integer(..., 0)``: strtol base 0, the whole word, within int; None otherwise."""
    t = text.strip(" \t\n\v\f\r") if text[:1].isspace() else text
    sign = -1 if t[:1] == "-" else 1
    body = t[1:] if t[:1] in "+-" else t
    try:
        if body[:2].lower() == "0x" and len(body) > 2:
            value = int(body[2:], 16)
        elif body[:1] == "0" and len(body) > 1:
            value = int(body[1:], 8)
        else:
            value = int(body, 10) if body.isdigit() else None
    except ValueError:
        return None
    if value is None:
        return None
    value *= sign
    if not -(1 << 31) <= value < (1 << 31):
        return None
    return value


def parse_set(args):
    """``ip link set`` arguments -> (device, [vf requests], other words); raises IpExit like iproute2."""
    dev = None
    vfs = []
    others = []
    i = 0
    n = len(args)

    def next_arg(k):
        if k + 1 >= n:
            raise _incomplete()
        return args[k + 1]

    while i < n:
        word = args[i]
        if word in ("up", "down"):
            others.append(word)
        elif word == "mtu":
            value = next_arg(i)
            if _get_integer(value) is None:
                raise _invarg('Invalid "mtu" value\n', value)
            others.append("mtu")
            i += 1
        elif word == "vf":
            value = next_arg(i)
            index = _get_integer(value)
            if index is None:
                raise _invarg('Invalid "vf" value\n', value)
            if dev is None:
                raise IpExit(255, 'Error: argument "dev" is required\n')
            i += 1
            request = {"vf": index}
            start = i
            while i + 1 < n:
                key = args[i + 1]
                if matches(key, "mac") or matches(key, "vlan") or matches(key, "rate") \
                        or matches(key, "max_tx_rate") or matches(key, "min_tx_rate") or matches(key, "spoofchk") \
                        or matches(key, "query_rss") or matches(key, "trust"):
                    raise IpExit(2, "ip: vf %s is not modelled by the simulator\n" % key)
                if matches(key, "state"):
                    value = next_arg(i + 1)
                    if matches(value, "auto"):
                        request["state"] = "auto"
                    elif matches(value, "enable"):
                        request["state"] = "enable"
                    elif matches(value, "disable"):
                        request["state"] = "disable"
                    else:
                        raise _invarg('Invalid "state" value\n', value)
                elif matches(key, "node_guid") or matches(key, "port_guid"):
                    value = next_arg(i + 1)
                    guid = parse_guid(value)
                    if guid is None:
                        raise _invarg("Invalid GUID format\n", value)
                    request["node_guid" if matches(key, "node_guid") else "port_guid"] = guid
                else:
                    break
                i += 2
            if i == start:
                raise _incomplete()
            vfs.append(request)
        elif word in ("name", "index", "link", "address", "broadcast", "brd", "txqueuelen", "qlen", "txqlen", "netns",
                      "multicast", "allmulticast", "promisc", "trailers", "arp", "carrier", "master", "vrf", "dynamic",
                      "type", "alias", "group", "mode", "state", "numtxqueues", "numrxqueues", "addrgenmode",
                      "link-netns", "link-netnsid", "protodown", "protodown_reason", "gso_max_size", "gso_max_segs",
                      "xdp", "xdpgeneric", "xdpdrv", "xdpoffload", "nomaster"):
            raise IpExit(2, "ip: link set %s is not modelled by the simulator\n" % word)
        else:
            if word == "dev":
                word = next_arg(i)
                i += 1
            elif matches(word, "help"):
                raise PassThrough()
            if dev is not None:
                raise IpExit(255, 'Error: either "dev" is duplicate, or "%s" is a garbage.\n' % word)
            dev = word
        i += 1
    if dev is None:
        raise IpExit(255, 'Not enough information: "dev" argument is required.\n')
    return dev, vfs, others


# --------------------------------------------------------------------------------------
# Rendering
# --------------------------------------------------------------------------------------
def _jsonw(value, pretty, depth=0):
    """iproute2's json_writer: compact, or pretty (4-space indent, ``[ a,b ]`` arrays)."""
    import json  # pylint: disable=import-outside-toplevel

    if isinstance(value, dict):
        if not value:
            return "{}"
        if not pretty:
            return "{" + ",".join("%s:%s" % (json.dumps(k), _jsonw(v, False)) for k, v in value.items()) + "}"
        pad = "    " * (depth + 1)
        body = ",".join("\n%s%s: %s" % (pad, json.dumps(k), _jsonw(v, True, depth + 1)) for k, v in value.items())
        return "{" + body + "\n" + "    " * depth + "}"
    if isinstance(value, list):
        if not pretty:
            return "[" + ",".join(_jsonw(v, False) for v in value) + "]"
        if not value:
            return "[ ]"
        return "[ " + ",".join(_jsonw(v, True, depth + 1) for v in value) + " ]"
    return json.dumps(value)


def json_document(objects, pretty):
    return _jsonw(list(objects), pretty) + "\n"


class Netdev:
    """What ``ip`` shows of one simulated netdev (a PF's or a bound VF's)."""

    def __init__(self, state, func):
        from fabricsim import sysfs  # pylint: disable=import-outside-toplevel
        from fabricsim.verbs import carrier  # pylint: disable=import-outside-toplevel

        self.state = state
        self.func = func
        self.name = func.netdev
        self.ifindex = func.ifindex
        self.ib = func.ib
        self.carrier = carrier(state, func)
        if self.ib:
            self.link_type = "infiniband"
            self.address = sysfs._ipoib_address(func)  # pylint: disable=protected-access
            self.broadcast = sysfs.IPOIB_BROADCAST
            self.mtu, self.qlen = IPOIB_MTU, IPOIB_QLEN
        else:
            self.link_type = "ether"
            self.address = func.mac
            self.broadcast = ETH_BROADCAST
            self.mtu, self.qlen = ETH_MTU, ETH_QLEN

    @property
    def flags(self):
        if self.carrier:
            return ["BROADCAST", "MULTICAST", "UP", "LOWER_UP"]
        return ["NO-CARRIER", "BROADCAST", "MULTICAST", "UP"]

    @property
    def operstate(self):
        return "UP" if self.carrier else "DOWN"

    def vfs(self):
        """(index, runtime record) of the PF's VFs; none for a VF's own netdev."""
        from fabricsim import state as sim_state  # pylint: disable=import-outside-toplevel

        f = self.func
        if f.is_vf:
            return []
        rt = self.state.get("runtime", {}).get("functions", {})
        out = []
        for vf in range(rt.get(f.bdf, {}).get("sriov_numvfs", 0)):
            out.append((vf, rt.get(sim_state.vf_bdf(f.adapter, f.pf, vf), {})))
        return out


def _versions(state):
    from fabricsim import state as sim_state  # pylint: disable=import-outside-toplevel

    tools = state.get("tools", {})
    version = sim_state.version_tuple(tools.get("iproute2", "6.1.0"))
    kernel = sim_state.version_tuple(state.get("kernel", {}).get("release") or tools.get("iproute2", "6.1.0"))
    return version, kernel


def _guid_text(value):
    from fabricsim import state as sim_state  # pylint: disable=import-outside-toplevel

    return sim_state.guid_bytes(sim_state.parse_guid(value or "0"))


def vf_entry(state, dev, index, record):
    """One VF of ``print_vfinfo``: (text without the leading newline, JSON object)."""
    version, kernel = _versions(state)
    link_state = POLICY_LINK_STATE.get(record.get("policy", "Auto"), "auto")
    address = dev.address if dev.ib else record.get("mac", "00:00:00:00:00:00")
    obj = {"vf": index}
    if version < (5, 3, 0):
        mac = ":".join(address.split(":")[:6])
        text = "    vf %d MAC %s" % (index, mac)
        obj["mac"] = mac
    else:
        text = "    vf %d     link/%s %s brd %s" % (index, dev.link_type, address, dev.broadcast)
        obj.update({"link_type": dev.link_type, "address": address, "broadcast": dev.broadcast})
    obj["vlan_list"] = [{}]
    obj["rate"] = {"max_tx": 0, "min_tx": 0}
    text += ", spoof checking off"
    obj["spoofchk"] = False
    if dev.ib and version >= (5, 5, 0) and kernel >= (5, 5, 0):
        node, port = _guid_text(record.get("node_guid")), _guid_text(record.get("port_guid"))
        text += ", NODE_GUID %s, PORT_GUID %s" % (node, port)
        obj.update({"node guid": node, "port guid": port})
    text += ", link-state %s, trust off, query_rss off" % link_state
    obj.update({"link_state": link_state, "trust": False, "query_rss_en": False})
    return text, obj


def _details(state, dev):
    """``-d``: the words after the link/ line, and the ipoib linkinfo line (iproute2 6.1 order)."""
    f = dev.func
    parent = f.bdf
    if dev.ib:
        linkinfo = "    ipoib pkey  0xffff mode  datagram umcast  0000 "
        words = ["promiscuity 0 ", "minmtu 68 ", "maxmtu 65520 "]
        txq, rxq = 128, 16
    else:
        linkinfo = None
        words = ["promiscuity 0 ", "minmtu 68 ", "maxmtu 9978 "]
        txq, rxq = 128, 16
    tail = ["addrgenmode eui64 ", "numtxqueues %d " % txq, "numrxqueues %d " % rxq, "gso_max_size 65536 ",
            "gso_max_segs 65535 ", "tso_max_size 524280 ", "tso_max_segs 65535 ", "gro_max_size 65536 "]
    if not dev.ib and not f.is_vf:
        tail.append("portname p%d " % f.pf)
    tail += ["parentbus pci ", "parentdev %s " % parent]
    obj = {"promiscuity": 0, "min_mtu": 68, "max_mtu": 65520 if dev.ib else 9978}
    if dev.ib:
        obj["linkinfo"] = {"info_kind": "ipoib", "info_data": {"key": "0xffff", "mode": "datagram", "umcast": "0000"}}
    obj.update({"inet6_addr_gen_mode": "eui64", "num_tx_queues": txq, "num_rx_queues": rxq, "gso_max_size": 65536,
                "gso_max_segs": 65535, "tso_max_size": 524280, "tso_max_segs": 65535, "gro_max_size": 65536})
    if not dev.ib and not f.is_vf:
        obj["phys_port_name"] = "p%d" % f.pf
    obj.update({"parentbus": "pci", "parentdev": parent})
    return "".join(words), linkinfo, "".join(tail), obj


def render(state, devs, opts, do_link):
    """``print_linkinfo`` for each netdev: text (or a JSON document with ``-j``)."""
    sep = "\\" if opts.oneline else "\n"
    texts, objects = [], []
    for dev in devs:
        if opts.brief:
            bobj = {"ifname": dev.name, "operstate": dev.operstate}
            if do_link:
                bobj.update({"address": dev.address, "flags": dev.flags})
            else:
                bobj["addr_info"] = []
            objects.append(bobj)
            line = "%-16s %-14s " % (dev.name, dev.operstate)
            if do_link:
                line += "%s <%s> " % (dev.address, ",".join(dev.flags))
            texts.append(line + "\n")
            continue
        obj = {"ifindex": dev.ifindex, "ifname": dev.name, "flags": dev.flags, "mtu": dev.mtu, "qdisc": "mq",
               "operstate": dev.operstate}
        head = "%d: %s: <%s> mtu %d qdisc mq state %s " % (dev.ifindex, dev.name, ",".join(dev.flags), dev.mtu,
                                                           dev.operstate)
        if do_link:
            head += "mode DEFAULT "
            obj["linkmode"] = "DEFAULT"
        head += "group default qlen %d" % dev.qlen
        obj.update({"group": "default", "txqlen": dev.qlen})
        parts = [head]
        show_link = opts.family in (None, "link") or opts.details
        if show_link:
            line = "    link/%s %s brd %s" % (dev.link_type, dev.address, dev.broadcast)
            obj.update({"link_type": dev.link_type, "address": dev.address, "broadcast": dev.broadcast})
            if opts.details:
                words, linkinfo, tail, dobj = _details(state, dev)
                line += " " + words
                if linkinfo:
                    parts.append(line)
                    line = linkinfo
                line += tail
                obj.update(dobj)
            parts.append(line)
        if do_link or opts.details:
            vfs = dev.vfs()
            if vfs:
                obj["vfinfo_list"] = []
                for index, record in vfs:
                    text, vobj = vf_entry(state, dev, index, record)
                    parts.append(text)
                    obj["vfinfo_list"].append(vobj)
        if not do_link:
            obj["addr_info"] = []
        objects.append(obj)
        texts.append(sep.join(parts) + "\n")
    if opts.json:
        return objects
    return "".join(texts)


def simulated_netdevs(state):
    """Every simulated netdev (PFs' and bound VFs'), by name, in ifindex order."""
    from fabricsim import state as sim_state  # pylint: disable=import-outside-toplevel

    funcs = [f for f in sim_state.functions(state) if f.netdev]
    return {f.netdev: f for f in sorted(funcs, key=lambda f: f.ifindex)}


# --------------------------------------------------------------------------------------
# The simulated tool
# --------------------------------------------------------------------------------------
def show(state, opts, obj, rest):
    """``ip link|addr show [dev] X``: text, or the list of JSON objects with ``-j``."""
    dev_name, _up = parse_show(rest)
    netdevs = simulated_netdevs(state)
    if dev_name is None:
        names = list(netdevs)
    elif dev_name in netdevs:
        names = [dev_name]
    else:
        raise IpExit(1, 'Device "%s" does not exist.\n' % dev_name)
    devs = [Netdev(state, netdevs[n]) for n in names]
    if obj == "address" and opts.family in ("inet", "inet6"):
        devs = []  # ip -4/-6 addr lists only links with such addresses; simulated netdevs have none
    return render(state, devs, opts, do_link=(obj == "link"))


def _set(state, f, vfs):
    """``ip link set <pf> vf N [state S] [node_guid G] [port_guid G]``, applied as the kernel does."""
    from fabricsim import state as sim_state  # pylint: disable=import-outside-toplevel

    rt = state.get("runtime", {}).get("functions", {})
    numvfs = 0 if f.is_vf else rt.get(f.bdf, {}).get("sriov_numvfs", 0)
    for request in vfs:
        index = request["vf"]
        # rtnetlink do_setvfinfo order: ... LINK_STATE, ..., IB_NODE_GUID, IB_PORT_GUID; the first error stops
        # it with what came before applied.  mlx5 answers EINVAL for a VF that does not exist.
        if "state" in request:
            if not 0 <= index < numvfs:
                raise _rtnetlink("Invalid argument")
            sim_state.set_vf_guid(state, sim_state.vf_bdf(f.adapter, f.pf, index),
                                  policy=LINK_STATE_POLICY[request["state"]])
        for key in ("node_guid", "port_guid"):
            if key not in request:
                continue
            if not f.ib:
                raise _rtnetlink("Operation not supported")  # handle_infiniband_guid: not ARPHRD_INFINIBAND
            if not 0 <= index < numvfs:
                raise _rtnetlink("Invalid argument")
            sim_state.set_vf_guid(state, sim_state.vf_bdf(f.adapter, f.pf, index), **{key: request[key]})


def run(state, argv):
    """The simulated ``ip`` on ``state`` (mutated by ``link set``); returns a Result."""
    from fabricsim import Result  # pylint: disable=import-outside-toplevel

    kind, device = "read", None
    try:
        opts, args = parse_options(argv)
        obj, action, rest = parse_command(args)
        if action == "set":
            dev_name, vfs, _others = parse_set(rest)
            f = simulated_netdevs(state).get(dev_name)
            if f is None:
                raise IpExit(1, 'Cannot find device "%s"\n' % dev_name)
            # From here the request goes to the kernel: a write, even when it answers an error.
            kind, device = "write", f.parent or f.bdf
            _set(state, f, vfs)
            return Result(0, "", "", kind, device)
        out = show(state, opts, obj, rest)
        return Result(0, json_document(out, opts.pretty) if opts.json else out, "", kind, device)
    except PassThrough:
        return Result(1, "", "ip: only the simulated netdevs' link/addr show and link set are simulated\n", kind,
                      device)
    except IpExit as exc:
        return Result(exc.rc, "", exc.stderr, kind, device)


# --------------------------------------------------------------------------------------
# The /bin/ip wrapper
# --------------------------------------------------------------------------------------
def real_ip():
    return os.environ.get("FABRICSIM_REAL_IP", REAL_IP)


def exec_real(argv):
    """Replace this process with the real ip (argv[0] ``ip``, so it behaves as when called directly)."""
    path = real_ip()
    try:
        os.execv(path, ["ip"] + list(argv))
    except OSError as exc:
        sys.stderr.write("ip: the real ip (%s) cannot run: %s\n" % (path, exc.strerror))
        return 127
    return 0  # not reached


def standin(state):
    """The lab's IPoIB stand-in is on (``kernel.ipoib_standin``): each IPoIB netdev also exists as a real ifb netdev."""
    return bool(state.get("kernel", {}).get("ipoib_standin"))


def real_netdev(name):
    """A real kernel netdev of that name exists in this network namespace."""
    import socket  # pylint: disable=import-outside-toplevel

    try:
        return bool(name) and socket.if_nametoindex(name) > 0
    except OSError:
        return False


def standin_link(name, present):
    """Make (or remove) the real ifb netdev that stands in for an IPoIB netdev; no-op when already so.

    The lab's kernel has neither ib_ipoib nor the dummy driver: ifb is the netdev it can make (ARPHRD_ETHER).
    """
    import subprocess  # pylint: disable=import-outside-toplevel

    if real_netdev(name) == present:
        return
    argv = ["ip", "link", "add", name, "type", "ifb"] if present else ["ip", "link", "del", name]
    subprocess.run(argv, executable=real_ip(), check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def _standin_passthrough(action, rest):
    """In stand-in mode, what the real ip does to the real ifb: addresses, and link set up/down/mtu."""
    if action == "show":
        return False
    _dev, vfs, others = parse_set(rest)
    return not vfs and bool(others)


def _standin_ipoib_add(argv):
    """``ip link add link <parent> name <child> type ipoib [pkey P] [mode M]`` in stand-in mode: a real ifb child."""
    from fabricsim import state as sim_state  # pylint: disable=import-outside-toplevel

    args = list(argv)
    if len(args) < 2 or not matches(args[0], "link") or args[1] != "add" or "type" not in args:
        return None
    if args[args.index("type") + 1:args.index("type") + 2] != ["ipoib"]:
        return None
    try:
        state = sim_state.load()
    except Exception:  # pylint: disable=broad-exception-caught
        return None
    words = dict(zip(args[2::2], args[3::2], strict=False))
    parent, child = words.get("link"), words.get("name")
    if not standin(state) or parent not in simulated_netdevs(state) or not child:
        return None
    if real_netdev(child):
        sys.stderr.write("RTNETLINK answers: File exists\n")
        return 2
    standin_link(child, True)
    return 0


def _in_initial_netns():
    """The simulated netdevs live in the initial network namespace only."""
    try:
        return os.readlink("/proc/self/ns/net") == os.readlink("/proc/1/ns/net")
    except OSError:
        return True


def _virtual_netdev(name):
    """A real software netdev (lo, veth, bridges: /sys/devices/virtual/net): no state file to read for it."""
    if not name or "/" in name:
        return False
    try:
        return "/devices/virtual/" in os.readlink("/sys/class/net/" + name)
    except OSError:
        return False


def _append(real_out, extra, opts):
    """Real ``ip ... show`` output followed by the simulated netdevs in the same layout."""
    if not opts.json:
        return real_out + extra
    if not extra:
        return real_out
    body = _jsonw(list(extra), opts.pretty)[1:]  # "<objects>]" (pretty: " <objects> ]")
    text = real_out.rstrip("\n")
    if opts.pretty:
        if text.endswith("[ ]"):
            return text[:-1] + body.lstrip() + "\n"
        return text[:-2] + "," + body.lstrip() + "\n"
    if text.endswith("[]"):
        return text[:-1] + body + "\n"
    return text[:-1] + "," + body + "\n"


def main(argv=None, stdout=None, stderr=None):  # pylint: disable=too-many-return-statements
    """The wrapper: simulate what names a simulated netdev, exec the real ip for everything else."""
    argv = list(sys.argv[1:] if argv is None else argv)
    stdout = stdout or sys.stdout
    stderr = stderr or sys.stderr
    try:
        opts, args = parse_options(argv)
        obj, action, rest = parse_command(args)
        dev = _set_device(rest) if action == "set" else parse_show(rest)[0]
        if not _in_initial_netns() or _virtual_netdev(dev):
            raise PassThrough()
        from fabricsim import state as sim_state  # pylint: disable=import-outside-toplevel

        state = sim_state.load()
        netdevs = simulated_netdevs(state)
    except (PassThrough, IpExit):
        added = _standin_ipoib_add(argv)
        return exec_real(argv) if added is None else added
    except Exception:  # pylint: disable=broad-exception-caught
        # No state file, no permission to read it, a state being rewritten: the real tool.
        return exec_real(argv)
    if (dev is None and action == "set") or (dev is not None and dev not in netdevs):
        return exec_real(argv)
    # IPoIB stand-in: the real ifb of the same name holds the addresses, MTU and up/down state.
    if dev is not None and standin(state) and netdevs[dev].ib and real_netdev(dev):
        try:
            if obj == "address" or _standin_passthrough(action, rest):
                return exec_real(argv)
        except IpExit:
            return exec_real(argv)
    if action == "set":
        if os.geteuid() != 0:
            stderr.write("RTNETLINK answers: Operation not permitted\n")
            return 2
        from fabricsim import cli  # pylint: disable=import-outside-toplevel

        return cli.main("ip", argv, stdout=stdout, stderr=stderr)
    if dev is None:
        return _show_all(state, argv, opts, obj, rest, stdout, stderr)
    result = run(state, argv)
    _log(argv, result)
    stdout.write(result.stdout)
    stdout.flush()
    stderr.write(result.stderr)
    stderr.flush()
    return result.rc


def _log(argv, result):
    from fabricsim import state as sim_state  # pylint: disable=import-outside-toplevel

    try:
        sim_state.log_call("ip", argv, result.rc, result.kind, result.device)
    except OSError:
        pass  # a user who may read the state but not write the log


def _show_all(state, argv, opts, obj, rest, stdout, stderr):
    """``ip link show`` / ``ip addr show`` without a device: the real list, then the simulated netdevs."""
    import subprocess  # pylint: disable=import-outside-toplevel

    from fabricsim import Result  # pylint: disable=import-outside-toplevel

    try:
        real = subprocess.run(["ip"] + argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=False,
                              executable=real_ip())
    except OSError as exc:
        stderr.write("ip: the real ip (%s) cannot run: %s\n" % (real_ip(), exc.strerror))
        return 127
    out = real.stdout.decode("utf-8", errors="surrogateescape")
    if real.returncode == 0:
        out = _append(out, show(state, opts, obj, rest), opts)
        _log(argv, Result(0, "", "", "read", None))
    stdout.write(out)
    stdout.flush()
    stderr.write(real.stderr.decode("utf-8", errors="surrogateescape"))
    stderr.flush()
    return real.returncode
