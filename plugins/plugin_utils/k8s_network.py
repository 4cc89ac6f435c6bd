# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The k8s_network role's checks on the controller, before anything is sent to the cluster (plugin_utils/controller_checks.py
runs them: the role's first task and the run's preflight).

- the networks (the filter ``k8s_network_nads``: ranges, P_Keys in the collection's one grammar, device plugin and RDMA
  netns mode; the nodes' published state is the role's own later check, since this run's node roles may still change it);
- :func:`pod_range_problems`: a host's IPoIB address inside the addresses whereabouts hands to the pods of a
  NetworkAttachmentDefinition on the same partition (the same P_Key): the pod and the host would answer ARP for it. The
  hosts are every host of the inventory (whatever --limit or job slice the run has): what its inventory asks of it
  (``ipoib_config``, planned without a reading of its adapters, as the ipoib role's duplicate address check plans it),
  else the interfaces it published (``ipoib_interfaces``). The ipoib role runs the same check from the host's side.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping

from ansible.errors import AnsibleFilterError

from ansible_collections.fabric.infiniband.plugins.module_utils import values

DEFAULT_PARTITION = 0x7FFF
NETWORKS = "k8s_network_networks"
_LIBRARIES = {}


def _netaddr():
    if "netaddr" not in _LIBRARIES:
        try:
            _LIBRARIES["netaddr"] = importlib.import_module("netaddr")
        except ImportError:  # pragma: no cover - the filters say so when they run
            _LIBRARIES["netaddr"] = None
    return _LIBRARIES["netaddr"]


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
    from ansible_collections.fabric.infiniband.plugins.filter.ipoib_plan import ipoib_plan  # pylint: disable=import-outside-toplevel

    out = []
    for host in hosts:
        config = ctx.hostvar(host, "ipoib_config")
        if config:
            try:
                plan = ipoib_plan(None, config, mtu=ctx.hostvar(host, "ipoib_mtu") or 2044,
                                  mode=ctx.hostvar(host, "ipoib_mode") or "datagram")
            except AnsibleFilterError:
                continue  # refused by that host's own checks
            out += host_addresses(host, plan)
            continue
        published = ctx.fact(host, "ipoib_interfaces") or ctx.hostvar(host, "ipoib_interfaces")
        if published:
            out += host_addresses(host, published, published=True)
    return out


def _resource_names(ctx):
    names = ctx.var("k8s_network_resource_names") or []
    if names:
        return names
    deploy = values.parse_bool(ctx.var("k8s_network_device_plugin_deploy", True), "k8s_network_device_plugin_deploy")
    if not deploy or ctx.var("k8s_network_device_plugin", "sriov") != "sriov":
        return []
    return ["%s/%s" % (r.get("prefix", "mellanox.com"), r.get("name")) for r in ctx.var("k8s_network_sriov_resources") or []
            if isinstance(r, Mapping)]


def check(ctx):
    """The k8s_network role's controller checks of ``ctx``'s host (plugin_utils/controller_checks.py)."""
    from ansible_collections.fabric.infiniband.plugins.filter.k8s_network_nads import k8s_network_nads  # pylint: disable=import-outside-toplevel

    networks = ctx.var(NETWORKS) or []
    try:
        k8s_network_nads(networks, namespace=ctx.var("k8s_network_nad_namespace", "default"),
                         device_plugin=ctx.var("k8s_network_device_plugin", "sriov"),
                         rdma_netns=ctx.var("k8s_network_rdma_netns", "unknown"), resource_names=_resource_names(ctx),
                         whereabouts_kubeconfig=ctx.var("k8s_network_whereabouts_kubeconfig"), nodes=None)
    except (AnsibleFilterError, ValueError) as exc:
        return [getattr(exc, "message", None) or str(exc)]
    if _netaddr() is None:
        return []
    pools = pod_pools(networks)
    if not pools:
        return []
    return pod_range_problems(pools, inventory_addresses(ctx, ctx.groups.get("all") or []))
