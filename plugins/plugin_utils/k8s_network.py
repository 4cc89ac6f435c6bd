# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The k8s_network role's logic on the controller: its checks, the values its manifests are rendered with, the
NetworkAttachmentDefinitions, and what to send to the cluster and in which order. ``plugins/action/k8s_network.py`` (the
role's one task) runs it; the filter ``fabric.infiniband.k8s_network_nads`` is :func:`nads` for users' templates.

- :func:`checks`: every refusal before anything is sent, each naming the user's variable: nodes the inventory does not
  know, a reconciler schedule that is no cron expression, the networks (:func:`nads`: ranges, P_Keys in the collection's
  one grammar, device plugin and RDMA netns mode, and the nodes' published state where given: the run's preflight leaves
  it out, since this run's node roles may still change it), and :func:`pod_range_problems`;
- :func:`pod_range_problems`: a host's IPoIB address inside the addresses whereabouts hands to the pods of a
  NetworkAttachmentDefinition on the same partition (the same P_Key): the pod and the host would answer ARP for it. The
  hosts are every host of the inventory (whatever --limit or job slice the run has): what its inventory asks of it
  (``ipoib_config``, planned without a reading of its adapters, as the ipoib role's duplicate address check plans it),
  else the interfaces it published (``ipoib_interfaces``). The ipoib role runs the same check from the host's side;
- :func:`template_vars`: the labels, images and resource names the templates use;
- :func:`batches`, :func:`stale_nads`, :func:`crd_users_query`: the apply and the removal.
"""

from __future__ import annotations

import importlib
import json
import re
from collections.abc import Mapping

from ansible.errors import AnsibleFilterError

from ansible_collections.fabric.infiniband.plugins.module_utils import values

ROLE = "k8s_network"
DEFAULT_PARTITION = 0x7FFF
NETWORKS = "k8s_network_networks"
# Every object the role makes carries this label; `state: absent` and the pruning of networks no longer listed only
# touch objects that carry it.
LABELS = {"app.kubernetes.io/managed-by": "fabric.infiniband.k8s_network"}
SELECTOR = "app.kubernetes.io/managed-by=fabric.infiniband.k8s_network"
# The CRD of the NetworkAttachmentDefinitions.
NAD_CRD = "network-attachment-definitions.k8s.cni.cncf.io"
NAD_API = "k8s.cni.cncf.io/v1"
CRD_API = "apiextensions.k8s.io/v1"
# What absent looks for, in the order it removes them (CRDs last, and only when no object of theirs remains that the
# role did not make).
KINDS = (
    (NAD_API, "NetworkAttachmentDefinition"),
    ("apps/v1", "Deployment"),
    ("apps/v1", "DaemonSet"),
    ("v1", "ConfigMap"),
    ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"),
    ("rbac.authorization.k8s.io/v1", "ClusterRole"),
    ("v1", "ServiceAccount"),
)
# A standard cron expression (five fields: minute hour day-of-month month day-of-week) or a descriptor (@daily, @every 6h):
# the reconciler cannot start on a schedule it cannot parse.
_SCHEDULE = re.compile(r"^\s*(@[a-z]+(\s+\S+)?|\S+(\s+\S+){4})\s*$")
# The values of a node the role reads (never its other variables, which may hold secrets).
NODE_VALUES = ("rdma_netns_mode", "ipoib_interfaces", "sriov_state")
_LIBRARIES = {}


class Refused(ValueError):
    """Input the role refuses, with a message that names the user's variable."""


def _netaddr():
    """netaddr, imported the first time it is needed, or None when it is not installed."""
    if "netaddr" not in _LIBRARIES:
        try:
            _LIBRARIES["netaddr"] = importlib.import_module("netaddr")
        except ImportError:  # pragma: no cover - said when the networks are checked
            _LIBRARIES["netaddr"] = None
    return _LIBRARIES["netaddr"]


def _flag(settings, name, default):
    return values.parse_bool(settings.get(name, default), name)


# ------------------------------------------------------------------ the values of the templates

def offered_names(settings):
    """The resource names ib-sriov networks may use: the user's list, else those of the SR-IOV device plugin the role
    deploys, else any well-formed name (a device plugin managed elsewhere)."""
    names = settings.get("k8s_network_resource_names") or []
    if names:
        return list(names)
    if not _flag(settings, "k8s_network_device_plugin_deploy", True) or settings.get("k8s_network_device_plugin", "sriov") != "sriov":
        return []
    return ["%s/%s" % (r.get("prefix", "mellanox.com"), r.get("name")) for r in settings.get("k8s_network_sriov_resources") or []
            if isinstance(r, Mapping)]


def template_vars(settings):
    """The role's own values the templates use besides its settings (``__k8s_network_*``): labels and pinned images."""
    registry = settings.get("k8s_network_registry", "ghcr.io")
    return {
        "__k8s_network_labels": dict(LABELS),
        "__k8s_network_selector": SELECTOR,
        "__k8s_network_multus_image": "%s/k8snetworkplumbingwg/multus-cni:%s-thick" % (registry, settings.get("k8s_network_multus_version")),
        "__k8s_network_whereabouts_image": "%s/k8snetworkplumbingwg/whereabouts:%s" % (
            registry, settings.get("k8s_network_whereabouts_version")),
        "__k8s_network_ipoib_cni_image": "%s/mellanox/ipoib-cni:%s" % (registry, settings.get("k8s_network_ipoib_cni_version")),
        "__k8s_network_ib_sriov_cni_image": "%s/k8snetworkplumbingwg/ib-sriov-cni:%s" % (
            registry, settings.get("k8s_network_ib_sriov_cni_version")),
        "__k8s_network_sriov_dp_image": "%s/k8snetworkplumbingwg/sriov-network-device-plugin:%s" % (
            registry, settings.get("k8s_network_sriov_device_plugin_version")),
        "__k8s_network_rdma_shared_dp_image": "%s/mellanox/k8s-rdma-shared-dev-plugin:%s" % (
            registry, settings.get("k8s_network_rdma_shared_device_plugin_version")),
        "__k8s_network_resource_names": offered_names(settings),
    }


def templates(settings):
    """``(crd templates, workload templates)``: the role's templates to render, in the order their objects are made."""
    workloads = []
    if _flag(settings, "k8s_network_multus_enabled", True):
        workloads.append("multus.yml.j2")
    if _flag(settings, "k8s_network_whereabouts_enabled", True):
        workloads.append("whereabouts.yml.j2")
    if settings.get("k8s_network_cni_install", "daemonset") == "daemonset":
        workloads.append("cni.yml.j2")
    if _flag(settings, "k8s_network_device_plugin_deploy", True):
        workloads.append("device_plugin.yml.j2")
    return ["crds.yml.j2"], workloads


# ------------------------------------------------------------------ the networks (the filter k8s_network_nads)

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
    raise Refused("k8s_network_networks: network %r: %s" % (net, msg))


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
        raise Refused("k8s_network_nodes: the nodes' RDMA network namespace modes differ (%s); pods of one "
                      "network land on any of them, so they must agree (rdma_netns_mode)"
                      % "; ".join("%s: %s" % (m, ", ".join(h)) for m, h in sorted(modes.items())))
    if not modes:
        return rdma_netns
    mode, hosts = next(iter(modes.items()))
    if mode not in ("exclusive", "shared"):
        raise Refused("k8s_network_nodes: rdma_netns_mode %r of %s is not exclusive or shared" % (mode, ", ".join(hosts)))
    if rdma_netns != "unknown" and mode != rdma_netns:
        raise Refused("k8s_network_rdma_netns is %s but the nodes are %s (rdma_netns_mode of %s); set "
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


def _config(net, kind, ipam, device_plugin, rdma_netns, offered, nodes):
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
        if offered and resource not in offered:
            _fail(net["name"], "resource_name %s is not offered by the device plugin (k8s_network_resource_names: %s)"
                  % (resource, ", ".join(offered)))
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


def nads(networks, namespace="default", device_plugin="sriov", rdma_netns="unknown", resource_names=None,
         whereabouts_kubeconfig="/etc/cni/net.d/whereabouts.d/whereabouts.kubeconfig", labels=None, nodes=None):
    """One NetworkAttachmentDefinition per network of ``networks`` (k8s_network_networks), in the order given; raises
    :class:`Refused` naming the network and the key on anything that cannot work (see the filter k8s_network_nads)."""
    if _netaddr() is None:
        raise Refused("the k8s_network role needs the Python library netaddr on the controller")
    if device_plugin not in ("sriov", "rdma_shared", "none"):
        raise Refused("k8s_network_device_plugin %r is not sriov, rdma_shared or none" % (device_plugin,))
    if rdma_netns not in ("exclusive", "shared", "unknown"):
        raise Refused("k8s_network_rdma_netns %r is not exclusive, shared or unknown" % (rdma_netns,))
    rdma_netns = _node_mode(rdma_netns, nodes)
    if device_plugin == "rdma_shared" and rdma_netns == "exclusive":
        raise Refused("the RDMA shared device plugin needs the RDMA network namespace mode shared, the nodes are "
                      "exclusive (it exits with 'incorrect RDMA subsystem network namespace'); use the SR-IOV "
                      "network device plugin, or the shared mode")
    out, seen, ranges = [], set(), []
    for net in networks or []:
        if not isinstance(net, dict):
            raise Refused("k8s_network_networks: every entry is a dict, got %r" % (net,))
        name = net.get("name")
        if not isinstance(name, str) or not _DNS_LABEL.match(name) or len(name) > 63:
            raise Refused("k8s_network_networks: name %r is not a DNS label (lower case, digits, '-')" % (name,))
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
        out.append({"apiVersion": NAD_API, "kind": "NetworkAttachmentDefinition", "metadata": metadata,
                    "spec": {"config": json.dumps(config, sort_keys=True)}})
    return out


# ------------------------------------------------------------------ a host's address inside the pods' range

def _partition(net):
    """The partition (P_Key without the membership bit) the pods of ``net`` are on; None when its P_Key is refused elsewhere."""
    try:
        if net.get("pkey") is not None:
            return values.parse_pkey(net["pkey"], "pkey")
        master = str(net.get("master") or "")
        if net.get("type") == "ipoib" and "." in master:
            return int(master.rsplit(".", 1)[1], 16) & 0x7FFF
    except ValueError:
        return None
    return DEFAULT_PARTITION


def pod_pools(networks):
    """``[(where, partition, range, first, last, excludes)]``: the addresses whereabouts may hand to the pods of each network
    (its range, within range_start and range_end, without its excludes); entries it cannot read are left to the filter
    ``k8s_network_nads``, which refuses them."""
    netaddr = _netaddr()
    pools = []
    for index, net in enumerate(networks or [] if isinstance(networks, list) else []):
        if not isinstance(net, Mapping) or not isinstance(net.get("ipam"), Mapping) or "range" not in net["ipam"]:
            continue
        partition = _partition(net)
        ipam = net["ipam"]
        try:
            network = netaddr.IPNetwork(str(ipam["range"]))
            first = netaddr.IPAddress(str(ipam["range_start"])) if ipam.get("range_start") else network[0]
            last = netaddr.IPAddress(str(ipam["range_end"])) if ipam.get("range_end") else network[-1]
            excludes = [netaddr.IPNetwork(str(item) if "/" in str(item) else "%s/%d" % (item, 32 if network.version == 4 else 128))
                        for item in ipam.get("exclude") or []]
        except (netaddr.AddrFormatError, ValueError, TypeError):
            continue
        if partition is None:
            continue
        pools.append(("%s[%d] (%s)" % (NETWORKS, index, net.get("name")), partition, network, first, last, excludes))
    return pools


def _links(plan):
    """``[(index path, name, partition, addresses)]`` of a plan of ipoib_plan or a published ipoib_interfaces."""
    out = []
    for i, entry in enumerate(plan or [] if isinstance(plan, list) else []):
        if not isinstance(entry, Mapping):
            continue
        out.append(("[%d]" % i, entry.get("name") or entry.get("netdev"), DEFAULT_PARTITION, entry.get("addresses") or []))
        for k, child in enumerate(entry.get("children") or []):
            if not isinstance(child, Mapping):
                continue
            try:
                partition = int(str(child.get("pkey")), 16) & 0x7FFF
            except ValueError:
                continue
            out.append(("[%d].children[%d]" % (i, k), child.get("name"), partition, child.get("addresses") or []))
    return out


def host_addresses(host, plan, published=False):
    """``[(where, partition, address)]``: each IPoIB address of ``host``, named as the user set it (``ipoib_config[0]
    .addresses[1] of node01``), or as the host published it (``ipoib_interfaces of node01 (ibp59s0f0)``)."""
    netaddr = _netaddr()
    out = []
    for path, name, partition, addresses in _links(plan):
        for j, text in enumerate(addresses):
            try:
                address = netaddr.IPNetwork(str(text)).ip
            except (netaddr.AddrFormatError, ValueError, TypeError):
                continue
            where = ("ipoib_interfaces of %s (%s)" % (host, name) if published
                     else "ipoib_config%s.addresses[%d] of %s" % (path, j, host))
            out.append((where, partition, address))
    return out


def pod_range_problems(pools, addresses):
    """Sentences, one per host address inside a pod pool of the same partition (see the module's documentation)."""
    problems = []
    for where, partition, address in addresses:
        for net_where, net_partition, network, first, last, excludes in pools:
            if partition != net_partition or address.version != network.version or address not in network:
                continue
            if not first <= address <= last or any(address in excluded for excluded in excludes):
                continue
            problems.append(
                "%s: %s is inside %s, the addresses %s hands to pods (whereabouts, range %s) on the same partition 0x%04x, so a "
                "pod may get it too and both answer for it; accepted: an address outside the pods' range, or keep it from the "
                "pods with the network's ipam.exclude (%s/%d) or ipam.range_start/range_end" % (
                    where, address, network.cidr if (first, last) == (network[0], network[-1]) else "%s-%s" % (first, last),
                    net_where, network.cidr, partition, address, 32 if address.version == 4 else 128))
    return problems


def inventory_addresses(ctx, hosts):
    """The IPoIB addresses of ``hosts``: what each one's inventory asks (ipoib_config), else what it published."""
    # the ipoib role's own plan (imported here: it imports this file)
    from ansible_collections.fabric.infiniband.plugins.plugin_utils.ipoib import plan as ipoib_plan  # pylint: disable=import-outside-toplevel

    out = []
    for host in hosts:
        own = host == ctx.host
        values = ctx.hostvalues(host, ("ipoib_config", "ipoib_mtu", "ipoib_mode", "ipoib_interfaces") + (() if own else ("ansible_facts",)))
        config = values.get("ipoib_config")
        if config:
            try:
                plan = ipoib_plan(None, config, mtu=values.get("ipoib_mtu") or 2044,
                                  mode=values.get("ipoib_mode") or "datagram")
            except (AnsibleFilterError, ValueError):
                continue  # refused by that host's own checks
            out += host_addresses(host, plan)
            continue
        # the host's published fact (this host's as the step sees it), else its inventory's
        fact = ctx.fact(host, "ipoib_interfaces") if own else (values.get("ansible_facts") or {}).get("ipoib_interfaces")
        published = fact or values.get("ipoib_interfaces")
        if published:
            out += host_addresses(host, published, published=True)
    return out


# ------------------------------------------------------------------ the checks

def node_facts(nodes, hostvar, fact):
    """What the node roles published for ``nodes``: four values per node and nothing else (``hostvar(host, name)``,
    ``fact(host, name)``: the inventory, this run's facts or Ansible's fact cache; no node is contacted)."""
    out = {}
    for host in nodes or []:
        entry = dict((name, hostvar(host, name)) for name in NODE_VALUES)
        entry["infiniband_hca"] = fact(host, "infiniband_hca")
        out[host] = entry
    return out


def unknown_nodes_problem(nodes, inventory):
    unknown = [host for host in nodes or [] if host not in (inventory or [])]
    if unknown:
        return ("k8s_network_nodes: %s not in the inventory; accepted: inventory host names (for instance groups['ib_nodes'])"
                % ", ".join(str(h) for h in unknown))
    return None


def schedule_problem(settings):
    """The reconciler's schedule, when whereabouts is deployed: a cron expression or a descriptor."""
    if not _flag(settings, "k8s_network_whereabouts_enabled", True):
        return None
    schedule = settings.get("k8s_network_whereabouts_reconciler_schedule", "30 4 * * *")
    if isinstance(schedule, str) and _SCHEDULE.match(schedule):
        return None
    return ("k8s_network_whereabouts_reconciler_schedule: %s is not a cron expression; accepted: five fields, minute hour "
            "day-of-month month day-of-week (for instance \"30 4 * * *\"), or a descriptor (@daily, @every 6h)" % json.dumps(schedule))


def checks(ctx, settings, nodes=None):
    """``(problems, nads)``: every refusal of the role's settings (sentences naming the user's variables) and, when there
    is none, the NetworkAttachmentDefinitions. ``nodes``: :func:`node_facts` of k8s_network_nodes, or None to leave the
    nodes' published state out (the run's preflight)."""
    problems = [unknown_nodes_problem(settings.get("k8s_network_nodes"), ctx.groups.get("all")), schedule_problem(settings)]
    networks = settings.get(NETWORKS) or []
    made = []
    try:
        made = nads(networks, namespace=settings.get("k8s_network_nad_namespace", "default"),
                    device_plugin=settings.get("k8s_network_device_plugin", "sriov"),
                    rdma_netns=settings.get("k8s_network_rdma_netns", "unknown"), resource_names=offered_names(settings),
                    whereabouts_kubeconfig=settings.get("k8s_network_whereabouts_kubeconfig",
                                                        "/etc/cni/net.d/whereabouts.d/whereabouts.kubeconfig"),
                    labels=LABELS, nodes=nodes)
    except ValueError as exc:
        problems.append(str(exc))
    if not [p for p in problems if p] and _netaddr() is not None:
        pools = pod_pools(networks)
        if pools:
            problems.extend(pod_range_problems(pools, inventory_addresses(ctx, ctx.groups.get("all") or [])))
    return [p for p in problems if p], made


def _ctx_settings(ctx):
    names = ("k8s_network_nodes", "k8s_network_whereabouts_enabled", "k8s_network_whereabouts_reconciler_schedule", NETWORKS,
             "k8s_network_nad_namespace", "k8s_network_device_plugin", "k8s_network_rdma_netns", "k8s_network_resource_names",
             "k8s_network_device_plugin_deploy", "k8s_network_sriov_resources", "k8s_network_whereabouts_kubeconfig")
    return dict((name, ctx.var(name)) for name in names if ctx.var(name) is not None)


def check(ctx):
    """The k8s_network role's controller checks of ``ctx``'s host (plugin_utils/controller_checks.py's Context), without the
    nodes' published state: what the run's preflight refuses."""
    return checks(ctx, _ctx_settings(ctx))[0]


# ------------------------------------------------------------------ the apply and the removal

def objects(texts):
    """The objects of rendered manifests (YAML documents; empty ones left out)."""
    import yaml  # pylint: disable=import-outside-toplevel

    out = []
    for text in texts:
        out.extend(doc for doc in yaml.safe_load_all(text) if doc)
    return out


def batches(items, diff=False):
    """The definitions to send, one module run each: the whole list at once (the module compares each object with the
    server's and changes only those that differ), or with --diff each object alone (the module shows no diff for a list)."""
    items = list(items)
    if not items:
        return []
    if diff:
        return [[item] for item in items]
    return [items]


def definition(batch):
    """A batch as the module's definition: the object itself when alone, else the list."""
    return batch[0] if len(batch) == 1 else list(batch)


def reference(obj):
    """What a deletion needs of an object: its apiVersion, kind, name and namespace."""
    meta = {"name": obj["metadata"]["name"]}
    if obj["metadata"].get("namespace"):
        meta["namespace"] = obj["metadata"]["namespace"]
    return {"apiVersion": obj["apiVersion"], "kind": obj["kind"], "metadata": meta}


def reference_text(obj):
    return "%s %s/%s" % (obj["kind"], obj["metadata"].get("namespace") or "", obj["metadata"]["name"])


def batch_names(batch):
    return ", ".join(str(o.get("metadata", {}).get("name")) for o in batch)


def stale_nads(found, wanted):
    """The NetworkAttachmentDefinitions the role made (``found``) that are no longer listed (``wanted``)."""
    keep = set((n["metadata"].get("namespace"), n["metadata"]["name"]) for n in wanted)
    return [n for n in found or [] if (n["metadata"].get("namespace"), n["metadata"]["name"]) not in keep]


def crd_users_query(crd):
    """``(api_version, kind)`` of the objects of a CustomResourceDefinition (its storage version)."""
    spec = crd["spec"]
    version = next((v["name"] for v in spec.get("versions") or [] if v.get("storage")), None)
    return "%s/%s" % (spec["group"], version), spec["names"]["kind"]
