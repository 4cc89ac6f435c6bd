#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

# The documentation of the action plugin plugins/action/topology.py, the one step of the role fabric.infiniband.topology.

from __future__ import annotations

DOCUMENTATION = r"""
module: topology
short_description: The topology role's step, Slurm's topology.conf and Kubernetes node labels from the InfiniBand fabric
version_added: 0.3.0
description:
  - The step of the role P(fabric.infiniband.topology#role), which reads its settings (C(topology_*)) from the task's variables.
  - Takes the fabric from a current fact C(infiniband_fabric) of any inventory host (stamped by this run; the role
    P(fabric.infiniband.verify#role) publishes it on the host that discovered the fabric), C(topology_discover_from)'s
    first, or else from the role's discovery (M(fabric.infiniband.fabric_topology_info) on C(topology_discover_from)),
    and builds its tree
    (C(plugin_utils/topology.py)), leaf switches with the inventory hosts cabled to them, the switches above with the
    switches below. Hosts are mapped from the HCAs' node descriptions or port GUIDs; inventory hosts not found and
    fabric hosts not in the inventory are reported, never guessed.
  - On the hosts of C(topology_slurm_group) writes C(topology.conf) with M(ansible.builtin.copy) (check mode, diff,
    optional backup), runs C(scontrol reconfigure) only when it changed, and fails unless C(scontrol show topology)
    shows the same tree.
  - On the hosts of C(topology_k8s_group) patches the Nodes' labels (M(kubernetes.core.k8s)), sets the leaf and spine
    labels, removes those the role set before that no longer apply (it names its keys in the Node annotation
    C(fabric.infiniband/topology-labels)), never touches another label.
author:
  - fabric.infiniband developers (@fabric-infiniband)
requirements:
  - On the Slurm controllers, C(scontrol) (Slurm with C(TopologyPlugin=topology/tree)).
  - On the Kubernetes control host, the Python C(kubernetes) client (for M(kubernetes.core.k8s)).
extends_documentation_fragment:
  - fabric.infiniband.role_step
seealso:
  - module: fabric.infiniband.fabric_topology_info
  - name: topology.conf(5)
    description: Slurm's tree topology file.
    link: https://slurm.schedmd.com/topology.conf.html
  - name: Kueue Topology Aware Scheduling
    description: A Topology object names node labels as its levels.
    link: https://kueue.sigs.k8s.io/docs/concepts/topology_aware_scheduling/
"""

EXAMPLES = r"""
- name: The fabric's topology for Slurm and Kubernetes (the role's step; use the role)
  fabric.infiniband.topology:
  vars:
    topology_hosts: "{{ groups['ib_nodes'] }}"
    topology_map_by: description
"""

RETURN = r"""
source:
  description: Where the fabric came from, the role's discovery or the fact of the host that discovered it in this run.
  returned: without O(preflight)
  type: str
  sample: fact infiniband_fabric of node01 (discovered in this run)
fabric_from:
  description:
    - The host whose current fact C(infiniband_fabric) the step takes, or V(null) when no host has one (the role then runs
      its discovery).
  returned: with O(preflight)
  type: str
  sample: node01
levels:
  description: The tree, leaves first; each level maps a switch to its hosts (level 0) or to its switches.
  returned: always
  type: list
  elements: dict
  sample: [{leaf01: [node01, node02]}, {spine01: [leaf01]}]
conf:
  description: The text of topology.conf.
  returned: always
  type: str
labels:
  description: The labels of each host placed.
  returned: always
  type: dict
  sample: {node01: {network.topology.nvidia.com/leaf: leaf01, network.topology.nvidia.com/spine: spine01}}
missing:
  description: Hosts of C(topology_hosts) not found in the fabric.
  returned: always
  type: list
  elements: str
unknown:
  description: Fabric hosts (the name from the node description, or the description) not in C(topology_hosts).
  returned: always
  type: list
  elements: str
multi:
  description: Hosts on several leaves (or spines), which get no label for that level.
  returned: always
  type: dict
slurm:
  description: The file written (C(path), C(changed), C(backup_file)) and what C(scontrol show topology) printed (C(shown)).
  returned: on the Slurm controllers
  type: dict
k8s:
  description: The Nodes labelled (C(labelled)) and the hosts without a Kubernetes Node (C(nodes_not_in_kubernetes)).
  returned: on the Kubernetes control hosts
  type: dict
ran:
  description: The modules the step ran, in order, with a label and whether each changed something.
  returned: always
  type: list
  elements: dict
"""
