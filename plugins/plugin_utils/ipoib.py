# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The ipoib role's checks on the controller, before anything is written (plugin_utils/controller_checks.py runs them:
the role's first task and the run's preflight).

- ``ipoib_config``, ``ipoib_mtu``, ``ipoib_mode`` as the filter ``ipoib_plan`` checks them without a reading of the
  adapters (keys, P_Keys in the collection's one grammar, MTUs, addresses, overlaps); the ports are the role's own later
  check, against the reading;
- an address of this host inside the addresses a NetworkAttachmentDefinition of the inventory (``k8s_network_networks`` of
  this host, else of the hosts of group ``k8s_control``) hands to pods on the same partition
  (plugin_utils/k8s_network.py, :func:`pod_range_problems`; the k8s_network role runs it from the cluster's side).
"""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.fabric.infiniband.plugins.plugin_utils import k8s_network


def networks_of(ctx):
    """The NetworkAttachmentDefinitions of the inventory: this host's k8s_network_networks, else those of the hosts of group
    k8s_control (the first that sets it)."""
    own = ctx.var(k8s_network.NETWORKS)
    if own:
        return own
    for host in ctx.groups.get("k8s_control") or []:
        networks = ctx.hostvar(host, k8s_network.NETWORKS)
        if networks:
            return networks
    return []


def check(ctx):
    """The ipoib role's controller checks of ``ctx``'s host (plugin_utils/controller_checks.py)."""
    from ansible_collections.fabric.infiniband.plugins.filter.ipoib_plan import ipoib_plan  # pylint: disable=import-outside-toplevel

    try:
        plan = ipoib_plan(None, ctx.var("ipoib_config") or [], mtu=ctx.var("ipoib_mtu", 2044), mode=ctx.var("ipoib_mode", "datagram"))
    except AnsibleFilterError as exc:
        return [getattr(exc, "message", None) or str(exc)]
    if not plan or k8s_network._netaddr() is None:  # pylint: disable=protected-access
        return []
    pools = k8s_network.pod_pools(networks_of(ctx))
    return k8s_network.pod_range_problems(pools, k8s_network.host_addresses(ctx.host, plan)) if pools else []
