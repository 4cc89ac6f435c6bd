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
  - What the role P(fabric.infiniband.k8s_network#role) makes and checks, for a user's own templates (the role itself runs
    the same code in its step).
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

from ansible.errors import AnsibleFilterError

from ansible_collections.fabric.infiniband.plugins.plugin_utils import k8s_network


def k8s_network_nads(networks, namespace="default", device_plugin="sriov", rdma_netns="unknown", resource_names=None,
                     whereabouts_kubeconfig="/etc/cni/net.d/whereabouts.d/whereabouts.kubeconfig", labels=None, nodes=None):
    """The role's own NADs (plugins/plugin_utils/k8s_network.py), for a user's template; a refusal fails the template."""
    try:
        return k8s_network.nads(networks, namespace=namespace, device_plugin=device_plugin, rdma_netns=rdma_netns,
                                resource_names=resource_names, whereabouts_kubeconfig=whereabouts_kubeconfig, labels=labels,
                                nodes=nodes)
    except ValueError as exc:
        raise AnsibleFilterError(str(exc)) from exc


class FilterModule:
    def filters(self):
        return {"k8s_network_nads": k8s_network_nads}
