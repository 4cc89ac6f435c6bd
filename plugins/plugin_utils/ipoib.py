# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The ipoib role's logic on the controller, for its one step (plugins/action/ipoib.py; docs: plugins/modules/ipoib.py).

Pure functions, unit-tested (tests/unit/plugins/plugin_utils/test_ipoib.py):

- :func:`plan`: ``ipoib_config``, ``ipoib_mtu`` and ``ipoib_mode`` resolved against the reading of the adapters (each port
  to its netdev, MTU, mode, addresses, PKey children) and checked, with a message that names the variable; with no reading
  (None) what can be checked without one (keys, P_Keys in the collection's one grammar, MTUs, addresses, overlaps);
- :func:`duplicate_addresses`: an address given to two interfaces, of this host, of the other hosts of the play, or of the
  inventory's other hosts (by what they published, else what their inventory asks);
- :func:`check`: the checks that need no node (the plan without a reading, and an address of this host inside the addresses a
  NetworkAttachmentDefinition of the inventory hands to pods on the same partition, plugin_utils/k8s_network.py);
- :func:`choose_stack`, :func:`conflict_search`, :func:`sources_interfaces_d`: the network stack and what stops the role on
  it; :func:`wanted_files`, :func:`file_current`, :func:`stale_files`: the stack's files; :func:`link_state`,
  :func:`settled`, :func:`fixes`: what ``ip`` still has to apply after the stack.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import re

from ansible.errors import AnsibleFilterError

from ansible_collections.fabric.infiniband.plugins.module_utils import pci
from ansible_collections.fabric.infiniband.plugins.module_utils import values

ROLE = "ipoib"

_LIBRARIES = {}


def _netaddr():
    """netaddr, imported the first time a filter needs it, or None when it is not installed.

    Not at the top of the file: Ansible imports every filter file of the collection whenever one of its
    filters is templated, so a module-level import would cost every task that uses any of them.
    """
    if "netaddr" not in _LIBRARIES:
        try:
            _LIBRARIES["netaddr"] = importlib.import_module("netaddr")
        except ImportError:  # pragma: no cover - reported when the filter runs
            _LIBRARIES["netaddr"] = None
    return _LIBRARIES["netaddr"]


MODES = ("datagram", "connected")
MAX_MTU = {"datagram": 4092, "connected": 65520}
MIN_MTU = 1280  # IPv6's minimum, and well above IPoIB's own
# The adapters that still do connected mode: mlx4 (ConnectX-3) and Connect-IB. ConnectX-4 and later only do enhanced IPoIB.
CONNECTED_MODELS = ("ConnectX-3", "Connect-IB")
IFNAMSIZ = 15
ENTRY_KEYS = ("device", "port", "mtu", "mode", "addresses", "children")
CHILD_KEYS = ("pkey", "mtu", "addresses")


def _fail(msg):
    raise AnsibleFilterError(msg)


def _ports(hca):
    """(pci_address, rdma_device, port number, port, hca entry) of every port of the host."""
    out = []
    for entry in hca.get("hcas") or []:
        for port in entry.get("ports") or []:
            out.append((entry.get("pci_address"), entry.get("rdma_device"), port.get("port"), port, entry))
    return out


def _selector(device, where):
    """The device of an entry: a PCI address in its normal form, or an RDMA device name."""
    try:
        return pci.selector(device, where + ".device")
    except pci.PciAddressError as exc:
        raise AnsibleFilterError(str(exc)) from None


def _find(ports, where, device, port):
    for address, rdma, num, port_info, entry in ports:
        if num == port and (device == rdma or (address and device == address.lower())):
            return port_info, entry
    _fail("%s: %s port %s is not a port of this host (ports: %s)" % (
        where, device, port, ", ".join("%s/%s (%s)" % (r, n, p) for p, r, n, _i, _e in ports) or "none"))
    return None, None


def _int(value, where, name):
    if isinstance(value, bool):
        _fail("%s.%s %r is not a number" % (where, name, value))
    if isinstance(value, int):
        return value
    try:
        return int(str(value), 0)
    except ValueError:
        _fail("%s.%s %r is not a number" % (where, name, value))
    return None


def _pkey(value, where):
    """The collection's one P_Key grammar (module_utils/values.py), the same as opensm's and k8s_network's."""
    try:
        return values.parse_pkey(value, where + ".pkey")
    except ValueError as exc:
        _fail(str(exc))
    return None


def _mtu(value, where, mode, limit=None):
    mtu = _int(value, where, "mtu")
    top = MAX_MTU[mode] if limit is None else limit
    if not MIN_MTU <= mtu <= top:
        why = "the %s mode allows at most %d" % (mode, MAX_MTU[mode]) if limit is None else "its parent's MTU is %d" % limit
        _fail("%s.mtu %d is out of range: %s (and at least %d)" % (where, mtu, why, MIN_MTU))
    return mtu


def _addresses(values, where):
    if values is None:
        return []
    if not isinstance(values, list):
        _fail("%s.addresses must be a list of addresses with a prefix length (10.10.0.5/24)" % where)
    out = []
    for i, value in enumerate(values):
        text = str(value)
        if "/" not in text:
            _fail("%s.addresses[%d] %r has no prefix length (10.10.0.5/24)" % (where, i, text))
        try:
            net = _netaddr().IPNetwork(text)
        except (_netaddr().AddrFormatError, ValueError, TypeError):
            _fail("%s.addresses[%d] %r is not an IPv4 or IPv6 address with a prefix length" % (where, i, text))
        if net.version == 4 and net.prefixlen < 31 and net.ip in (net.network, net.broadcast):
            _fail("%s.addresses[%d] %s is the network or broadcast address of its subnet" % (where, i, text))
        if net.ip.is_multicast() or net.ip.is_loopback() or (net.version == 6 and net.ip.is_link_local()):
            _fail("%s.addresses[%d] %s is a multicast, loopback or link-local address" % (where, i, text))
        out.append("%s/%d" % (net.ip, net.prefixlen))
    return out


def _check_overlaps(rails):
    """One subnet per rail: no subnet of one interface overlaps a subnet of another (or of itself)."""
    seen = []
    for name, addresses in rails:
        for text in addresses:
            net = _netaddr().IPNetwork(text).cidr
            for other_name, other_text, other in seen:
                # the same address twice is reported by duplicate_addresses, across the play and the inventory
                if net.version == other.version and (net in other or other in net) \
                        and text.split("/")[0] != other_text.split("/")[0]:
                    _fail("overlapping subnets: %s (%s) and %s (%s); give each rail and partition its own subnet"
                          % (text, name, other_text, other_name))
            seen.append((name, text, net))


def plan(hca, config, mtu=2044, mode="datagram"):
    """The interfaces of a host: one entry per port of ``config`` (ipoib_config), resolved against ``hca`` (the fact
    infiniband_hca) or, with ``hca`` None, checked without a reading (ports named ``<device> port <n>``). Raises
    AnsibleFilterError with a message that names the user's variable."""
    if _netaddr() is None:
        _fail("the ipoib role needs the Python library netaddr on the controller (pip install netaddr)")
    resolve = hca is not None
    if resolve and (not isinstance(hca, dict) or "hcas" not in hca):
        _fail("the ipoib plan expects the reading of fabric.infiniband.hca_info (the fact infiniband_hca)")
    if not isinstance(config, list):
        _fail("ipoib_config must be a list of ports")
    if mode not in MODES:
        _fail("ipoib_mode %r must be one of: %s" % (mode, ", ".join(MODES)))
    # The role-wide MTU is checked even when no entry uses it, so that a bad value fails at once.
    if isinstance(mtu, bool) or not str(mtu).isdigit() or not MIN_MTU <= int(mtu) <= MAX_MTU[mode]:
        _fail("ipoib_mtu %r is out of range: accepted %d to %d in the %s mode (ipoib_mode; connected allows up to %d)"
              % (mtu, MIN_MTU, MAX_MTU[mode], mode, MAX_MTU["connected"]))
    ports = _ports(hca) if resolve else []
    entries, taken = [], {}
    for i, item in enumerate(config):
        where = "ipoib_config[%d]" % i
        if not isinstance(item, dict) or not item.get("device"):
            _fail("%s needs device (a PCI address such as 0000:3b:00.0 or an RDMA device such as mlx5_0)" % where)
        unknown = sorted(set(item) - set(ENTRY_KEYS))
        if unknown:
            _fail("%s: unknown keys %s (known: %s)" % (where, ", ".join(unknown), ", ".join(ENTRY_KEYS)))
        port_num = _int(item.get("port", 1), where, "port")
        device = _selector(item["device"], where)
        if resolve:
            port, entry = _find(ports, where, device, port_num)
            if port.get("link_layer") != "InfiniBand":
                _fail("%s: %s port %d is %s, not InfiniBand; IPoIB needs an InfiniBand port (see the link_type role)"
                      % (where, item["device"], port_num, port.get("link_layer")))
            netdev = label = port.get("netdev")
            if not netdev:
                _fail("%s: %s port %d has no netdev; load ib_ipoib (the rdma_stack role does)" % (where, item["device"], port_num))
        else:
            # no reading of the host: the port by what the inventory calls it
            entry = {"pci_address": device if pci.parse(device) else None, "rdma_device": None if pci.parse(device) else device}
            netdev, label = None, "%s port %d" % (device, port_num)
        if label in taken:
            _fail("%s selects %s, which %s selects already" % (where, label, taken[label]))
        taken[label] = where
        if_mode = item.get("mode") or mode
        if if_mode not in MODES:
            _fail("%s.mode %r must be one of: %s" % (where, if_mode, ", ".join(MODES)))
        model = entry.get("model") or "unknown model"
        if resolve and if_mode == "connected" and not str(model).startswith(CONNECTED_MODELS):
            _fail("%s: %s (%s) only does enhanced IPoIB, which is datagram only: connected mode is for ConnectX-3 and "
                  "Connect-IB; use mode datagram" % (where, item["device"], model))
        if_mtu = _mtu(item.get("mtu") or mtu, where, if_mode)
        children, pkeys = [], set()
        for j, child in enumerate(item.get("children") or []):
            cwhere = "%s.children[%d]" % (where, j)
            if not isinstance(child, dict) or "pkey" not in child:
                _fail("%s needs pkey (0x0001 to 0x7ffe)" % cwhere)
            unknown = sorted(set(child) - set(CHILD_KEYS))
            if unknown:
                _fail("%s: unknown keys %s (known: %s)" % (cwhere, ", ".join(unknown), ", ".join(CHILD_KEYS)))
            pkey = _pkey(child["pkey"], cwhere) | 0x8000
            if pkey in pkeys:
                _fail("%s: PKey 0x%04x is given twice for %s" % (cwhere, pkey, label))
            pkeys.add(pkey)
            name = "%s.%04x" % (label, pkey)
            if resolve and len(name) > IFNAMSIZ:
                _fail("%s: the child's name %s is longer than the kernel's 15 characters" % (cwhere, name))
            children.append({"pkey": "0x%04x" % pkey, "name": name, "parent": netdev, "mode": if_mode,
                             "mtu": _mtu(child.get("mtu") or if_mtu, cwhere, if_mode, limit=if_mtu),
                             "addresses": _addresses(child.get("addresses"), cwhere)})
        entries.append({"pci_address": entry.get("pci_address"), "rdma_device": entry.get("rdma_device"), "port": port_num,
                        "netdev": netdev, "name": label, "model": model, "mtu": if_mtu, "mode": if_mode,
                        "addresses": _addresses(item.get("addresses"), where), "children": children})
    for link in entries + [c for p in entries for c in p["children"]]:
        link["ipv4"] = [a for a in link["addresses"] if ":" not in a]
        link["ipv6"] = [a for a in link["addresses"] if ":" in a]
    for entry in entries:
        entry["fact"] = {key: entry[key] for key in ("pci_address", "rdma_device", "port", "netdev", "addresses")}
        entry["fact"]["children"] = [{"pkey": c["pkey"], "name": c["name"], "addresses": c["addresses"]} for c in entry["children"]]
    _check_overlaps([(p["name"], p["addresses"]) for p in entries]
                    + [(c["name"], c["addresses"]) for p in entries for c in p["children"]])
    return entries


# The k8s_network role's checks plan the inventory's ipoib_config with it (plugin_utils/k8s_network.py).
ipoib_plan = plan

DEFAULT_MTU = 2044
DEFAULT_MODE = "datagram"


def planned(asked):
    """The plan of what the inventory asks of a host (``{config, mtu, mode}``), without a reading of its adapters; None when
    the plan refuses it (that host's own run refuses it)."""
    asked = asked if isinstance(asked, dict) else {"config": asked}
    try:
        return plan(None, asked.get("config") or [], mtu=asked.get("mtu") or DEFAULT_MTU, mode=asked.get("mode") or DEFAULT_MODE)
    except AnsibleFilterError:
        return None


# --------------------------------------------------------------------------------------- an address twice, across hosts

def _add(users, host, entries, tag=""):
    for entry in entries or []:
        if not isinstance(entry, dict):
            continue
        rails = [(entry.get("name") or entry.get("netdev"), entry.get("addresses") or [])]
        rails += [(c.get("name"), c.get("addresses") or []) for c in entry.get("children") or [] if isinstance(c, dict)]
        for netdev, addresses in rails:
            for text in addresses:
                address = str(text).split("/", 1)[0].lower()
                users.setdefault(address, []).append(("%s/%s%s" % (host, netdev, tag), host, bool(not tag)))


def duplicate_addresses(plans, known=None, asked=None, host=None):
    """One line per address given to more than one interface, ``<address> on <host>/<netdev>, ...``, sorted.

    ``plans``: host to plan, the hosts of the play; ``known``: host to the fact ``ipoib_interfaces`` it published (this run or
    a fact cache), for the inventory's other hosts, marked ``(published)``; ``asked``: host to ``{config, mtu, mode}`` (its
    inventory's ipoib_config, ipoib_mtu, ipoib_mode) for those that published nothing, planned without a reading, marked
    ``(inventory)``. Only addresses that a host of the play uses are reported (two other hosts that share one are not this
    run's to refuse), and with ``host`` only those that this host uses. Addresses compare without their prefix length."""
    users = {}
    plans = plans or {}
    known = known or {}
    for name in sorted(plans):
        _add(users, name, plans[name])
    for name in sorted(known):
        if name not in plans:
            _add(users, name, known[name], " (published)")
    for name in sorted(asked or {}):
        if name not in plans and name not in known:
            _add(users, name, planned(asked[name]), " (inventory)")
    out = []
    for address, where in users.items():
        if len(where) < 2 or not any(in_play for _label, _host, in_play in where):
            continue
        if host is not None and not any(owner == host for _label, owner, _in_play in where):
            continue
        out.append("%s on %s" % (address, ", ".join(sorted(label for label, _host, _in_play in where))))
    return sorted(out)


def duplicate_message(lines):
    """The refusal of :func:`duplicate_addresses`' lines, or None."""
    if not lines:
        return None
    return ("duplicate address: %s ((published): the host's fact ipoib_interfaces; (inventory): its ipoib_config). Nothing was "
            "changed; give each interface an address of its own" % "; ".join(lines))


# --------------------------------------------------------------------------------------- the checks without a node

def check(ctx):
    """The checks that need no node, as problems naming the user's variables: the plan without a reading of the adapters, and
    an address of this host inside the addresses a NetworkAttachmentDefinition of the inventory (``k8s_network_networks`` of
    this host, else of the hosts of group ``k8s_control``) hands to pods on the same partition (plugin_utils/k8s_network.py;
    the k8s_network role runs it from the cluster's side). ``ctx``: plugin_utils/controller_checks.py's Context."""
    try:
        entries = plan(None, ctx.var("ipoib_config") or [], mtu=ctx.var("ipoib_mtu", DEFAULT_MTU),
                       mode=ctx.var("ipoib_mode", DEFAULT_MODE))
    except AnsibleFilterError as exc:
        return [getattr(exc, "message", None) or str(exc)]
    return pod_range_problems(ctx, entries)


def networks_of(ctx):
    """The NetworkAttachmentDefinitions of the inventory: this host's k8s_network_networks, else those of the hosts of group
    k8s_control (the first that sets it)."""
    from ansible_collections.fabric.infiniband.plugins.plugin_utils import k8s_network  # pylint: disable=import-outside-toplevel

    own = ctx.var(k8s_network.NETWORKS)
    if own:
        return own
    for host in ctx.groups.get("k8s_control") or []:
        networks = ctx.hostvar(host, k8s_network.NETWORKS)
        if networks:
            return networks
    return []


def pod_range_problems(ctx, entries):
    """An address of ``entries`` (this host's plan) inside a pod range of the same partition (see :func:`check`)."""
    from ansible_collections.fabric.infiniband.plugins.plugin_utils import k8s_network  # pylint: disable=import-outside-toplevel

    if not entries or k8s_network._netaddr() is None:  # pylint: disable=protected-access
        return []
    pools = k8s_network.pod_pools(networks_of(ctx))
    return k8s_network.pod_range_problems(pools, k8s_network.host_addresses(ctx.host, entries)) if pools else []


# --------------------------------------------------------------------------------------- tags

# The role's tags: the plan (always, when the step runs), the stack's files, the interfaces brought up now.
TAGS = ("ipoib_plan", "ipoib_persist", "ipoib_runtime")


def phases(run_tags, skip_tags):
    """Which of ``persist`` and ``runtime`` this run asks for, from ``ansible_run_tags`` and ``ansible_skip_tags``: a run
    that names none of the role's tags (``all``, or a play's tag such as ``ipoib``) does both; ``--tags ipoib_plan`` only plans
    and publishes; ``--tags ipoib_persist`` writes the files and brings nothing up; ``--skip-tags`` leaves a phase out."""
    run_tags = set(run_tags or ("all",))
    skip_tags = set(skip_tags or ())
    named = run_tags & set(TAGS)
    out = set()
    for phase in ("persist", "runtime"):
        tag = "ipoib_" + phase
        if tag in skip_tags:
            continue
        if not named or tag in named:
            out.add(phase)
    return out


# --------------------------------------------------------------------------------------- the network stack

STACKS = ("networkmanager", "networkd", "ifupdown")
PREFIX = "fabric-ipoib-"
NETWORKD_DIR = "/etc/systemd/network"
NM_DIR = "/etc/NetworkManager/system-connections"
IFUPDOWN_FILE = "/etc/network/interfaces.d/fabric-ipoib-interfaces"
IFUPDOWN_FILES = ("/etc/network/interfaces", "/sbin/ifup")
UNITS = ("NetworkManager.service", "systemd-networkd.service")
# systemctl show, for choose_stack: one run for both units
UNITS_ARGV = ["systemctl", "show", "--property=Id,SubState,UnitFileState"] + list(UNITS)

NO_STACK = ("No network stack to persist the IPoIB interfaces: NetworkManager is not running, systemd-networkd is not enabled "
            "and ifupdown is not installed (/etc/network/interfaces and /sbin/ifup). Enable one, or set ipoib_network_stack.")
NO_SOURCE = ("/etc/network/interfaces does not include /etc/network/interfaces.d/, where the role writes fabric-ipoib: add the line "
             "\"source /etc/network/interfaces.d/*\" (Debian's default).")


def parse_units(text):
    """``{unit: {SubState, UnitFileState}}`` of ``systemctl show --property=Id,SubState,UnitFileState`` (blocks per unit)."""
    out, current = {}, {}
    for line in (text or "").splitlines() + [""]:
        line = line.strip()
        if not line:
            if current.get("Id"):
                out[current["Id"]] = current
            current = {}
            continue
        key, _sep, value = line.partition("=")
        current[key] = value
    return out


def choose_stack(setting, units, ifupdown_present=False):
    """The stack that persists the interfaces: ``setting`` (ipoib_network_stack) unless auto; else NetworkManager when it
    runs, systemd-networkd when enabled, ifupdown when installed; None when none is found."""
    if setting and setting != "auto":
        return setting
    units = units or {}
    if (units.get("NetworkManager.service") or {}).get("SubState") == "running":
        return "networkmanager"
    if (units.get("systemd-networkd.service") or {}).get("UnitFileState") == "enabled":
        return "networkd"
    if ifupdown_present:
        return "ifupdown"
    return None


def links(entries):
    """Every interface of a plan, parents first, then their PKey children."""
    return list(entries) + [child for entry in entries for child in entry["children"]]


def conflict_search(stack, names):
    """The arguments of ansible.builtin.find that finds other files naming one of ``names`` for ``stack`` (ours are named
    fabric-ipoib-*; globs such as Name=ib* are not detected)."""
    names_re = "(%s)" % "|".join(re.escape(name) for name in names)
    if stack == "networkd":
        paths = ["/etc/systemd/network", "/run/systemd/network", "/usr/local/lib/systemd/network", "/usr/lib/systemd/network"]
        patterns = ["*.network", "*.netdev", "*.link"]
        contains = r"\s*(Name|OriginalName|IPoIB)\s*=\s*(.*\s)?%s(\s.*)?$" % names_re
    elif stack == "networkmanager":
        paths = ["/etc/NetworkManager/system-connections", "/run/NetworkManager/system-connections"]
        patterns = ["*"]
        contains = r"\s*(interface-name|parent)\s*=\s*%s\s*$" % names_re
    else:
        paths = ["/etc/network", "/etc/network/interfaces.d"]
        patterns = ["interfaces", "*"]
        contains = r"\s*(auto|iface|allow-\S+|mapping)\s+(.*\s)?%s(\s.*)?$" % names_re
    return dict(paths=paths, patterns=patterns, contains=contains, excludes=["*%s*" % PREFIX, "*.dpkg-*", "*~"],
                file_type="file")


def conflict_message(paths, names, stack):
    return ("%s already configure(s) one of %s for %s. Remove or change that configuration, or set ipoib_take_over: true to write "
            "the role's own next to it (see the role's README for what wins)." % (", ".join(sorted(paths)), ", ".join(names), stack))


def sources_interfaces_d(text):
    """Whether /etc/network/interfaces reads /etc/network/interfaces.d."""
    return bool(re.search(r"(?m)^\s*source(-directory)?\s+(/etc/network/)?interfaces\.d(/\*|/)?\s*$", text or ""))


# --------------------------------------------------------------------------------------- the stack's files

def wanted_files(stack, entries):
    """The files the role writes for ``stack``: ``[{path, src, mode, variables}]`` (``variables``: the template's, without
    the NetworkManager profile's UUID, which the step adds)."""
    out = []
    if stack == "networkd":
        for link in links(entries):
            out.append(dict(path="%s/10-%s%s.network" % (NETWORKD_DIR, PREFIX, link["name"]), src="networkd.network.j2",
                            mode="0644", variables={"__ipoib_link": link}))
        for link in links(entries):
            if "parent" in link:
                out.append(dict(path="%s/10-%s%s.netdev" % (NETWORKD_DIR, PREFIX, link["name"]), src="networkd.netdev.j2",
                                mode="0644", variables={"__ipoib_link": link}))
    elif stack == "networkmanager":
        for link in links(entries):
            out.append(dict(path="%s/%s%s.nmconnection" % (NM_DIR, PREFIX, link["name"]), src="nm.nmconnection.j2", mode="0600",
                            variables={"__ipoib_link": link}, profile=PREFIX + link["name"]))
    else:
        out.append(dict(path=IFUPDOWN_FILE, src="ifupdown.j2", mode="0644", variables={"__ipoib_plan": entries}))
    return out


def own_files_search(stack):
    """The arguments of ansible.builtin.find that lists the role's own files of ``stack`` with their checksums, or None."""
    if stack == "networkd":
        return dict(paths=[NETWORKD_DIR], patterns=["10-%s*.network" % PREFIX, "10-%s*.netdev" % PREFIX], get_checksum=True)
    if stack == "networkmanager":
        return dict(paths=[NM_DIR], patterns=["%s*.nmconnection" % PREFIX], get_checksum=True)
    return dict(paths=[IFUPDOWN_FILE.rsplit("/", 1)[0]], patterns=[IFUPDOWN_FILE.rsplit("/", 1)[1]], get_checksum=True)


def file_current(found, content, mode):
    """Whether the file ``found`` (an entry of ansible.builtin.find with its checksum) holds ``content`` with ``mode``, owned by
    root: then the template would change nothing."""
    if not found or content is None:
        return False
    checksum = hashlib.sha1(content.encode("utf-8")).hexdigest()  # nosec - the checksum find returns
    return (found.get("checksum") == checksum and str(found.get("mode")) == mode and found.get("uid") == 0
            and found.get("gid") == 0)


def stale_files(found, wanted):
    """The role's files that no interface needs any more."""
    keep = set(entry["path"] for entry in wanted)
    return sorted(entry["path"] for entry in found if entry.get("path") not in keep)


# --------------------------------------------------------------------------------------- what ip applies

def link_state(text):
    """``{name: {mtu, up, addresses}}`` of ``ip -json address show`` (addresses as ``address/prefixlen``). A name listed twice
    keeps its first entry, the kernel's (the test lab's ip lists its simulated netdevs after the real ones)."""
    try:
        data = json.loads(text or "[]")
    except ValueError:
        return {}
    out = {}
    for entry in data if isinstance(data, list) else []:
        if not isinstance(entry, dict) or not entry.get("ifname") or entry["ifname"] in out:
            continue
        out[entry["ifname"]] = {
            "mtu": entry.get("mtu"), "up": "UP" in (entry.get("flags") or []),
            "addresses": ["%s/%s" % (a.get("local"), a.get("prefixlen")) for a in entry.get("addr_info") or []
                          if isinstance(a, dict) and a.get("local")]}
    return out


def _missing(link, state):
    return [a for a in link["addresses"] if a not in state["addresses"]]


def settled(wanted, state):
    """Whether every interface exists with its MTU, up, with its addresses."""
    for link in wanted:
        have = state.get(link["name"])
        if not have or have["mtu"] != link["mtu"] or not have["up"] or _missing(link, have):
            return False
    return True


def fixes(wanted, state):
    """``[(argv, label)]``: what ip still applies, in order: the children the stack did not make, the MTU and up, the
    addresses the interfaces do not have."""
    out = []
    for link in wanted:
        have = state.get(link["name"])
        if have is None and "parent" in link:
            out.append((["ip", "link", "add", "link", link["parent"], "name", link["name"], "type", "ipoib", "pkey", link["pkey"]],
                        "make the PKey child %s" % link["name"]))
    for link in wanted:
        have = state.get(link["name"])
        if have is None or have["mtu"] != link["mtu"] or not have["up"]:
            out.append((["ip", "link", "set", "dev", link["name"], "mtu", str(link["mtu"]), "up"],
                        "set the MTU of %s to %s and bring it up" % (link["name"], link["mtu"])))
    for link in wanted:
        have = state.get(link["name"]) or {"addresses": []}
        for address in _missing(link, have):
            out.append((["ip", "address", "add", address, "dev", link["name"]], "add %s to %s" % (address, link["name"])))
    return out


def ifupdown_up(text):
    """The interfaces ifupdown has brought up (``ifquery --state``: ``name=name`` per line)."""
    return set(line.split("=", 1)[0].strip() for line in (text or "").splitlines() if "=" in line)
