#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

# The documentation of the action plugin plugins/action/k8s_network.py, the one task of the role fabric.infiniband.k8s_network.

from __future__ import annotations

DOCUMENTATION = r"""
module: k8s_network
short_description: The k8s_network role's step, the checks, the manifests and the Kubernetes API calls, in one task
version_added: 0.3.0
description:
  - The one task of the role P(fabric.infiniband.k8s_network#role), which reads its settings (C(k8s_network_*)) from the task's
    variables. The role runs it once per cluster (C(run_once)) on the host that reaches the API server.
  - Refuses, before anything is sent and naming the user's variable, unknown settings, the values the role's argument
    specification refuses, nodes of C(k8s_network_nodes) the inventory does not know, a reconciler schedule that is no cron
    expression, networks that cannot work (ranges, P_Keys, device plugin and RDMA netns mode, the nodes' published
    C(rdma_netns_mode), C(ipoib_interfaces), C(sriov_state) and C(infiniband_hca)), a host's IPoIB address inside the addresses
    a network hands to pods, and a C(k8s_network_kubeconfig) that is not a file on the host.
  - Renders every manifest of the role's templates and the NetworkAttachmentDefinitions.
  - With C(k8s_network_state=present), makes the CustomResourceDefinitions with M(kubernetes.core.k8s) and waits until they
    are Established, then the workloads and the NetworkAttachmentDefinitions (one module run per group, or one per object with
    C(--diff)), then removes the NetworkAttachmentDefinitions with the role's label that are no longer listed. With
    C(k8s_network_state=absent), removes the objects with the role's label, then each of its CRDs that no object of another
    owner uses.
  - In check mode the module sends a server-side dry run; on a cluster without the NetworkAttachmentDefinition CRD the
    networks are only named.
  - The kubeconfig is handed to the modules as a path; its content never enters a variable or the result.
  - With C(--tags k8s_network_preflight) (without C(k8s_network_apply)) or C(--skip-tags k8s_network_apply), the checks and the
    rendering alone.
author:
  - fabric.infiniband developers (@fabric-infiniband)
extends_documentation_fragment:
  - fabric.infiniband.role_step
requirements:
  - the Python libraries C(kubernetes) (on the host that runs the role) and C(netaddr) (on the controller)
seealso:
  - module: kubernetes.core.k8s
  - module: kubernetes.core.k8s_info
  - plugin: fabric.infiniband.k8s_network_nads
    plugin_type: filter
"""

EXAMPLES = r"""
- name: The cluster's RDMA networking (the role's task; use the role)
  fabric.infiniband.k8s_network:
  run_once: true
  vars:
    k8s_network_kubeconfig: /etc/fabric/admin.kubeconfig

- name: Only the checks of the settings (the whole-run preflight)
  fabric.infiniband.k8s_network:
    preflight: true
"""

RETURN = r"""
objects:
  description: The objects rendered (kind and name), in the order they are made.
  returned: when not O(preflight)
  type: list
  elements: str
  sample: ["CustomResourceDefinition network-attachment-definitions.k8s.cni.cncf.io", "DaemonSet kube-multus-ds"]
msg:
  description: What the step says besides its changes (a CRD that stays, networks a dry run cannot send).
  returned: when there is something to say
  type: str
ran:
  description: The modules the step ran, in order, with a label and whether each changed something.
  returned: always
  type: list
  elements: dict
  sample: [{module: kubernetes.core.k8s, label: "make the CustomResourceDefinitions and wait until they are Established
            (network-attachment-definitions.k8s.cni.cncf.io)", changed: false, failed: false}]
"""
