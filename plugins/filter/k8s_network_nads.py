# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
name: k8s_network_nads
short_description: Check the RDMA networks of the inventory and make their NetworkAttachmentDefinitions
version_added: 0.1.0
author: fabric.infiniband developers (@fabric-infiniband)
description:
  - Takes the list of networks of the role P(fabric.infiniband.k8s_network#role) (C(k8s_network_networks)) and returns one
    C(k8s.cni.cncf.io/v1) NetworkAttachmentDefinition per network, C(ipoib) or C(ib-sriov), each with whereabouts IPAM.
  - Fails, naming the network and the key, on anything that cannot work, before anything is sent to the cluster. Addresses
    are checked with netaddr. V(range) must be a network in CIDR form (no host bits); V(gateway), V(range_start),
    V(range_end) and every V(exclude) must lie inside it; the ranges of two networks must not overlap unless both set
    V(allow_overlap).
  - Refuses combinations of device plugin and RDMA network namespace mode that cannot work, as the plugins do at run time
    on the nodes, here before any pod fails. The RDMA shared device plugin needs the shared mode; V(rdma_isolation) of
    ib-sriov-cni needs the exclusive mode; an ib-sriov network needs the SR-IOV network device plugin (its VF PCI address
    comes from it).
options:
  _input:
    description: The networks (see the role's argument specification, C(k8s_network_networks)).
    type: list
    elements: dict
    required: true
  namespace:
    description: The namespace of networks that name none.
    type: str
    default: default
  device_plugin:
    description: The device plugin of the cluster.
    type: str
    choices: [sriov, rdma_shared, none]
    default: sriov
  rdma_netns:
    description: The RDMA network namespace mode of the nodes (the C(rdma_netns) role), or V(unknown).
    type: str
    choices: [exclusive, shared, unknown]
    default: unknown
  resource_names:
    description: The resource names the device plugin offers (C(<prefix>/<name>)); when not empty, an ib-sriov network must use one.
    type: list
    elements: str
  whereabouts_kubeconfig:
    description: The kubeconfig whereabouts reads on the nodes.
    type: str
    default: /etc/cni/net.d/whereabouts.d/whereabouts.kubeconfig
  labels:
    description: Labels given to every NetworkAttachmentDefinition.
    type: dict
  nodes:
    description:
      - What the node roles published for the InfiniBand nodes, by inventory host name, each a dict with C(rdma_netns_mode)
        (the node's RDMA netns mode or V(null)), C(ipoib_interfaces) (the ipoib role's fact or V(null)), C(sriov_state)
        (the sriov role's fact or V(null)) and C(infiniband_hca) (the fact of M(fabric.infiniband.hca_info) or V(null)).
        V(null) values are not checked.
      - With O(rdma_netns=unknown) the nodes' common mode is used; nodes that disagree with each other, or with an
        O(rdma_netns) given, are refused. An ipoib network's master must exist on every node that published
        C(ipoib_interfaces); on a node that published none but has C(infiniband_hca), the master (or, for a PKey child,
        its parent) must be the netdev of one of its InfiniBand ports. An ib-sriov network needs a node with VFs when some
        node published C(sriov_state).
    type: dict
"""

EXAMPLES = r"""
- name: Make the NetworkAttachmentDefinitions
  ansible.builtin.set_fact:
    nads: "{{ k8s_network_networks | fabric.infiniband.k8s_network_nads(device_plugin='sriov', rdma_netns='exclusive') }}"
"""

RETURN = r"""
_value:
  description: One NetworkAttachmentDefinition per network, in the order given; C(spec.config) is a JSON string.
  type: list
  elements: dict
"""

import importlib
import json
import re

from ansible.errors import AnsibleFilterError

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


_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_RESOURCE = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?/[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")
_NETDEV = re.compile(r"^[^\s/:]{1,15}$")
_COMMON = ("name", "namespace", "type", "ipam", "allow_overlap")
_KEYS = {
    "ipoib": _COMMON + ("master", "pkey", "mtu"),
    "ib-sriov": _COMMON + ("resource_name", "pkey", "link_state", "rdma_isolation", "ib_kubernetes"),
}
_IPAM_KEYS = ("range", "range_start", "range_end", "exclude", "gateway", "routes", "enable_overlapping_ranges")


def _fail(net, msg):
    raise AnsibleFilterError("k8s_network_networks: network %r: %s" % (net, msg))


def _pkey(net, value):
    """0x0001-0x7ffe as an int, in the collection's one P_Key grammar (module_utils/values.py): "20" is refused here
    as in opensm and ipoib, not read as 0x0020; the full-membership bit (0x8000) is the SM's and the kernel's business."""
    try:
        return values.parse_pkey(value, "pkey")
    except ValueError as exc:
        _fail(net, str(exc))
    return None


def _bool(net, key, value):
    """The collection's one boolean grammar (module_utils/values.py): the text "false" is false, not a non-empty string."""
    try:
        return values.parse_bool(value, key)
    except ValueError as exc:
        _fail(net, str(exc))
    return None


def _address(net, key, text):
    try:
        return _netaddr().IPAddress(str(text))
    except (_netaddr().AddrFormatError, ValueError, TypeError):
        _fail(net, "ipam.%s %r is not an IP address" % (key, text))


def _ipam(net, ipam, kubeconfig):
    if not isinstance(ipam, dict) or "range" not in ipam:
        _fail(net, "ipam.range is required (a CIDR such as 10.56.0.0/16)")
    unknown = sorted(set(ipam) - set(_IPAM_KEYS))
    if unknown:
        _fail(net, "unknown ipam keys %s (known: %s)" % (", ".join(unknown), ", ".join(_IPAM_KEYS)))
    text = str(ipam["range"])
    try:
        if "/" not in text:
            raise ValueError
        network = _netaddr().IPNetwork(text)
    except (_netaddr().AddrFormatError, ValueError, TypeError):
        _fail(net, "ipam.range %r is not a CIDR" % (text,))
    if network.ip != network.network:
        _fail(net, "ipam.range %s has host bits set (the network is %s)" % (text, network.cidr))
    if network.size < 4 and network.version == 4:
        _fail(net, "ipam.range %s leaves no address for pods" % text)
    out = {"type": "whereabouts", "datastore": "kubernetes", "kubernetes": {"kubeconfig": kubeconfig}, "range": str(network.cidr)}
    bounds = {}
    for key in ("range_start", "range_end", "gateway"):
        if ipam.get(key) is None:
            continue
        address = _address(net, key, ipam[key])
        if address not in network:
            _fail(net, "ipam.%s %s is outside the range %s" % (key, address, network.cidr))
        bounds[key] = address
        out[key] = str(address)
    if "range_start" in bounds and "range_end" in bounds and bounds["range_start"] > bounds["range_end"]:
        _fail(net, "ipam.range_start %s is after ipam.range_end %s" % (bounds["range_start"], bounds["range_end"]))
    excludes = []
    for item in ipam.get("exclude") or []:
        try:
            # a bare address excludes that one address
            excluded = _netaddr().IPNetwork(str(item) if "/" in str(item) else "%s/%d" % (item, 32 if network.version == 4 else 128))
        except (_netaddr().AddrFormatError, ValueError, TypeError):
            _fail(net, "ipam.exclude %r is not a CIDR" % (item,))
        if excluded.ip != excluded.network:
            _fail(net, "ipam.exclude %s has host bits set" % (item,))
        if excluded not in network:
            _fail(net, "ipam.exclude %s is outside the range %s" % (item, network.cidr))
        excludes.append(str(excluded.cidr))
    if excludes:
        out["exclude"] = excludes
    routes = []
    for route in ipam.get("routes") or []:
        if not isinstance(route, dict) or "dst" not in route:
            _fail(net, "ipam.routes entries need dst (a CIDR), got %r" % (route,))
        try:
            dst = _netaddr().IPNetwork(str(route["dst"]))
        except (_netaddr().AddrFormatError, ValueError, TypeError):
            _fail(net, "ipam.routes dst %r is not a CIDR" % (route["dst"],))
        if dst.version != network.version:
            _fail(net, "ipam.routes dst %s is not of the range's IP version" % dst)
        entry = {"dst": str(dst.cidr)}
        if route.get("gw") is not None:
            gw = _address(net, "routes.gw", route["gw"])
            if gw not in network:
                _fail(net, "ipam.routes gw %s is outside the range %s" % (gw, network.cidr))
            entry["gw"] = str(gw)
        routes.append(entry)
    if routes:
        out["routes"] = routes
    if ipam.get("enable_overlapping_ranges") is not None:
        out["enable_overlapping_ranges"] = _bool(net, "ipam.enable_overlapping_ranges", ipam["enable_overlapping_ranges"])
    return network, out


def _node_mode(rdma_netns, nodes):
    """The nodes' RDMA netns mode, checked against the one given."""
    modes = {}
    for host, facts in sorted((nodes or {}).items()):
        mode = (facts or {}).get("rdma_netns_mode")
        if mode is not None:
            modes.setdefault(str(mode), []).append(host)
    if len(modes) > 1:
        raise AnsibleFilterError("k8s_network_nodes: the nodes' RDMA network namespace modes differ (%s); pods of one "
                                 "network land on any of them, so they must agree (rdma_netns_mode)"
                                 % "; ".join("%s: %s" % (m, ", ".join(h)) for m, h in sorted(modes.items())))
    if not modes:
        return rdma_netns
    mode, hosts = next(iter(modes.items()))
    if mode not in ("exclusive", "shared"):
        raise AnsibleFilterError("k8s_network_nodes: rdma_netns_mode %r of %s is not exclusive or shared" % (mode, ", ".join(hosts)))
    if rdma_netns != "unknown" and mode != rdma_netns:
        raise AnsibleFilterError("k8s_network_rdma_netns is %s but the nodes are %s (rdma_netns_mode of %s); set "
                                 "k8s_network_rdma_netns to %s or unknown, or change the nodes" % (rdma_netns, mode, ", ".join(hosts), mode))
    return mode


def _hca_ipoib_netdevs(hca):
    """The netdevs of the InfiniBand ports in an hca_info fact, and every netdev of their PCI functions (PKey children
    made before the reading)."""
    names = set()
    for entry in (hca or {}).get("hcas") or []:
        ib = [p for p in entry.get("ports") or [] if isinstance(p, dict) and p.get("link_layer") == "InfiniBand"]
        if ib:
            names.update(p.get("netdev") for p in ib)
            names.update(entry.get("netdevs") or [])
    names.discard(None)
    return names


def _check_master(name, master, nodes):
    """The master netdev (or PKey child) on every node that published its IPoIB interfaces, else on every node whose
    adapters were read (infiniband_hca: the master, or a PKey child's parent, is an InfiniBand port's netdev)."""
    missing, known = [], set()
    parent = master.split(".", 1)[0]
    for host, facts in sorted((nodes or {}).items()):
        facts = facts or {}
        interfaces = facts.get("ipoib_interfaces")
        if interfaces is not None:
            names = set()
            for item in interfaces:
                names.add(item.get("netdev"))
                names.update(child.get("name") for child in item.get("children") or [])
            known |= names
            if master not in names:
                missing.append((host, "ipoib_interfaces"))
        elif facts.get("infiniband_hca") is not None:
            names = _hca_ipoib_netdevs(facts["infiniband_hca"])
            known |= names
            if master not in names and parent not in names:
                missing.append((host, "infiniband_hca"))
    if missing:
        sources = "; ".join("%s of %s" % (fact, ", ".join(h for h, f in missing if f == fact))
                            for fact in ("ipoib_interfaces", "infiniband_hca") if any(f == fact for _h, f in missing))
        _fail(name, "master %s is not an IPoIB interface of %s (%s; known: %s); add it to their ipoib_config"
              % (master, ", ".join(h for h, _f in missing), sources, ", ".join(sorted(n for n in known if n)) or "none"))


def _check_vfs(name, nodes):
    published = [(host, facts.get("sriov_state")) for host, facts in sorted((nodes or {}).items())
                 if (facts or {}).get("sriov_state") is not None]
    if published and not any(int(pf.get("num_vfs") or 0) > 0 for _host, state in published for pf in state):
        _fail(name, "no node has VFs (sriov_state of %s lists none); give the nodes sriov_pfs"
              % ", ".join(host for host, _state in published))


def _config(net, kind, ipam, device_plugin, rdma_netns, resource_names, nodes):
    config = {"cniVersion": "0.3.1", "name": net["name"], "type": kind}
    annotations = {}
    if kind == "ipoib":
        master = net.get("master")
        if not master or not _NETDEV.match(str(master)):
            _fail(net["name"], "master %r is not a netdev name (the host IPoIB interface, e.g. ibp59s0f0)" % (master,))
        master = str(master)
        if net.get("pkey") is not None:
            # ipoib-cni takes the PKey of its master: a partition other than the default needs the host's PKey child.
            if "." in master:
                _fail(net["name"], "give either a PKey child as master (%s) or master and pkey, not both" % master)
            master = "%s.%04x" % (master, _pkey(net["name"], net["pkey"]) | 0x8000)
        _check_master(net["name"], master, nodes)
        config["master"] = master
        if net.get("mtu") is not None:
            mtu = net["mtu"]
            if isinstance(mtu, bool) or not isinstance(mtu, int) or not 1280 <= mtu <= 65520:
                _fail(net["name"], "mtu %r is out of range (1280 to 65520, at most the master's)" % (mtu,))
            config["mtu"] = mtu
    else:
        if device_plugin != "sriov":
            _fail(net["name"], "an ib-sriov network needs the SR-IOV network device plugin (k8s_network_device_plugin: sriov), "
                  "which gives it its VF; the device plugin is %s" % device_plugin)
        resource = net.get("resource_name")
        if not resource or not _RESOURCE.match(str(resource)):
            _fail(net["name"], "resource_name %r is not <prefix>/<name> (e.g. mellanox.com/mlnx_sriov_rdma_ib)" % (resource,))
        if resource_names and resource not in resource_names:
            _fail(net["name"], "resource_name %s is not offered by the device plugin (k8s_network_resource_names: %s)"
                  % (resource, ", ".join(resource_names)))
        _check_vfs(net["name"], nodes)
        annotations["k8s.v1.cni.cncf.io/resourceName"] = resource
        if net.get("pkey") is not None:
            config["pkey"] = "0x%04x" % _pkey(net["name"], net["pkey"])
        link_state = net.get("link_state", "enable")
        if link_state not in ("auto", "enable", "disable"):
            _fail(net["name"], "link_state %r is not auto, enable or disable" % (link_state,))
        config["link_state"] = link_state
        isolation = _bool(net["name"], "rdma_isolation", net.get("rdma_isolation", False))
        if isolation and rdma_netns == "shared":
            _fail(net["name"], "rdma_isolation needs the RDMA network namespace mode exclusive, the nodes are shared "
                  "(ib-sriov-cni refuses it at pod start; run the rdma_netns role with exclusive)")
        config["rdmaIsolation"] = isolation
        config["ibKubernetesEnabled"] = _bool(net["name"], "ib_kubernetes", net.get("ib_kubernetes", False))
    config["ipam"] = ipam
    return config, annotations


def k8s_network_nads(networks, namespace="default", device_plugin="sriov", rdma_netns="unknown", resource_names=None,
                     whereabouts_kubeconfig="/etc/cni/net.d/whereabouts.d/whereabouts.kubeconfig", labels=None, nodes=None):
    if _netaddr() is None:
        raise AnsibleFilterError("k8s_network_nads needs the Python library netaddr on the controller")
    if device_plugin not in ("sriov", "rdma_shared", "none"):
        raise AnsibleFilterError("k8s_network_device_plugin %r is not sriov, rdma_shared or none" % (device_plugin,))
    if rdma_netns not in ("exclusive", "shared", "unknown"):
        raise AnsibleFilterError("k8s_network_rdma_netns %r is not exclusive, shared or unknown" % (rdma_netns,))
    rdma_netns = _node_mode(rdma_netns, nodes)
    if device_plugin == "rdma_shared" and rdma_netns == "exclusive":
        raise AnsibleFilterError("the RDMA shared device plugin needs the RDMA network namespace mode shared, the nodes are "
                                 "exclusive (it exits with 'incorrect RDMA subsystem network namespace'); use the SR-IOV "
                                 "network device plugin, or the shared mode")
    nads, seen, ranges = [], set(), []
    for net in networks or []:
        if not isinstance(net, dict):
            raise AnsibleFilterError("k8s_network_networks: every entry is a dict, got %r" % (net,))
        name = net.get("name")
        if not isinstance(name, str) or not _DNS_LABEL.match(name) or len(name) > 63:
            raise AnsibleFilterError("k8s_network_networks: name %r is not a DNS label (lower case, digits, '-')" % (name,))
        kind = net.get("type")
        if kind not in _KEYS:
            _fail(name, "type %r is not ipoib or ib-sriov" % (kind,))
        unknown = sorted(set(net) - set(_KEYS[kind]))
        if unknown:
            _fail(name, "unknown keys %s for type %s (known: %s)" % (", ".join(unknown), kind, ", ".join(_KEYS[kind])))
        ns = net.get("namespace") or namespace
        if not _DNS_LABEL.match(str(ns)):
            _fail(name, "namespace %r is not a DNS label" % (ns,))
        if (ns, name) in seen:
            _fail(name, "defined twice in namespace %s" % ns)
        seen.add((ns, name))
        network, ipam = _ipam(name, net.get("ipam"), whereabouts_kubeconfig)
        allow = _bool(name, "allow_overlap", net.get("allow_overlap", False))
        for other, other_net, other_allow in ranges:
            if network.version == other_net.version and network.first <= other_net.last and other_net.first <= network.last:
                if not (allow and other_allow):
                    _fail(name, "ipam.range %s overlaps %s of network %r (set allow_overlap on both to allow it)"
                          % (network.cidr, other_net.cidr, other))
        ranges.append((name, network, allow))
        config, annotations = _config(net, kind, ipam, device_plugin, rdma_netns, resource_names or [], nodes)
        metadata = {"name": name, "namespace": ns, "labels": dict(labels or {})}
        if annotations:
            metadata["annotations"] = annotations
        nads.append({"apiVersion": "k8s.cni.cncf.io/v1", "kind": "NetworkAttachmentDefinition", "metadata": metadata,
                     "spec": {"config": json.dumps(config, sort_keys=True)}})
    return nads


class FilterModule:
    def filters(self):
        return {"k8s_network_nads": k8s_network_nads}
