# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
name: ipoib_plan
short_description: Resolve and check the IPoIB interfaces and PKey children of a host
version_added: 0.1.0
author: fabric.infiniband developers (@fabric-infiniband)
description:
  - Takes the result of M(fabric.infiniband.hca_info) and the P(fabric.infiniband.ipoib#role) role's C(ipoib_config), and
    returns one entry per selected InfiniBand port with its kernel netdev, MTU, mode, addresses and PKey children.
  - A port is selected by PCI address or RDMA device and port number, never by netdev name (names differ per platform).
  - Checks, with a message that names the variable, that each port exists and is an InfiniBand port with a netdev; that the
    mode is one the adapter does (ConnectX-4 and later, and BlueField, only do enhanced IPoIB, which is datagram only); that
    the MTU fits the mode (datagram at most 4092 with a 4K IB MTU, connected at most 65520) and a child's MTU its parent's;
    that PKeys are 0x0001 to 0x7ffe; that addresses are valid CIDRs and no two subnets of the host overlap.
  - A child is named C(<parent>.<pkey with the full-membership bit 0x8000, 4 hex digits>), as the kernel names the children
    of create_child (PKey 0x0001 gives C(ib0.8001)).
  - With V(null) as input (no reading of the host's adapters, as for another host of the inventory that has published
    nothing), checks what can be checked without one (keys, PKeys, MTU, addresses, overlaps) and names each port
    C(<device> port <n>) instead of its netdev (V(null)); the role's duplicate address check plans so what the inventory asks
    of the hosts outside the play.
options:
  _input:
    description: The registered result of M(fabric.infiniband.hca_info), or V(null) (see above).
    type: raw
    required: true
  config:
    description: The role's C(ipoib_config).
    type: list
    elements: dict
    required: true
  mtu:
    description: The MTU of entries that give none.
    type: int
    default: 2044
  mode:
    description: The mode of entries that give none, V(datagram) or V(connected).
    type: str
    default: datagram
"""

EXAMPLES = r"""
- name: Plan the IPoIB interfaces of this host
  ansible.builtin.set_fact:
    __plan: >-
      {{ __hca | fabric.infiniband.ipoib_plan([{'device': '0000:3b:00.0', 'mtu': 4092, 'addresses': ['10.10.0.5/24'],
         'children': [{'pkey': '0x0001', 'addresses': ['10.20.0.5/24']}]}]) }}
"""

RETURN = r"""
_value:
  description:
    - One entry per selected port, with C(pci_address), C(rdma_device), C(port), C(netdev) (and the same as C(name)),
      C(model), C(mtu), C(mode), C(addresses) (CIDRs, normalised) and C(children), each with C(pkey) (V(0x8001) style),
      C(name), C(parent), C(mode), C(mtu), C(addresses); C(ipv4) and C(ipv6) (the addresses by family); and C(fact), what the role publishes (C(pci_address),
      C(rdma_device), C(port), C(netdev), C(addresses), C(children) with C(pkey), C(name) and C(addresses)).
  type: list
  elements: dict
"""

import importlib

from ansible.errors import AnsibleFilterError

from ansible_collections.fabric.infiniband.plugins.module_utils import pci
from ansible_collections.fabric.infiniband.plugins.module_utils import values

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
                # the same address twice is reported by ipoib_duplicate_addresses, across the play
                if net.version == other.version and (net in other or other in net) \
                        and text.split("/")[0] != other_text.split("/")[0]:
                    _fail("overlapping subnets: %s (%s) and %s (%s); give each rail and partition its own subnet"
                          % (text, name, other_text, other_name))
            seen.append((name, text, net))


def ipoib_plan(hca, config, mtu=2044, mode="datagram"):
    if _netaddr() is None:
        _fail("the ipoib_plan filter needs the Python library netaddr on the controller (pip install netaddr)")
    resolve = hca is not None
    if resolve and (not isinstance(hca, dict) or "hcas" not in hca):
        _fail("ipoib_plan expects the registered result of fabric.infiniband.hca_info")
    if not isinstance(config, list):
        _fail("ipoib_config must be a list of ports")
    if mode not in MODES:
        _fail("ipoib_mode %r must be one of: %s" % (mode, ", ".join(MODES)))
    # The role-wide MTU is checked even when no entry uses it, so that a bad value fails at once.
    if isinstance(mtu, bool) or not str(mtu).isdigit() or not MIN_MTU <= int(mtu) <= MAX_MTU[mode]:
        _fail("ipoib_mtu %r is out of range: accepted %d to %d in the %s mode (ipoib_mode; connected allows up to %d)"
              % (mtu, MIN_MTU, MAX_MTU[mode], mode, MAX_MTU["connected"]))
    ports = _ports(hca) if resolve else []
    plan, taken = [], {}
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
        plan.append({"pci_address": entry.get("pci_address"), "rdma_device": entry.get("rdma_device"), "port": port_num,
                     "netdev": netdev, "name": label, "model": model, "mtu": if_mtu, "mode": if_mode,
                     "addresses": _addresses(item.get("addresses"), where), "children": children})
    for link in plan + [c for p in plan for c in p["children"]]:
        link["ipv4"] = [a for a in link["addresses"] if ":" not in a]
        link["ipv6"] = [a for a in link["addresses"] if ":" in a]
    for entry in plan:
        entry["fact"] = {key: entry[key] for key in ("pci_address", "rdma_device", "port", "netdev", "addresses")}
        entry["fact"]["children"] = [{"pkey": c["pkey"], "name": c["name"], "addresses": c["addresses"]} for c in entry["children"]]
    _check_overlaps([(p["name"], p["addresses"]) for p in plan]
                    + [(c["name"], c["addresses"]) for p in plan for c in p["children"]])
    return plan


class FilterModule:
    def filters(self):
        return {"ipoib_plan": ipoib_plan}
