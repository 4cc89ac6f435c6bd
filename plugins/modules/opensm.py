#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

# The documentation of the action plugin plugins/action/opensm.py, the step of the role fabric.infiniband.opensm.

from __future__ import annotations

DOCUMENTATION = r"""
module: opensm
short_description: The opensm role's step, checks, ports, opensm.conf, partitions.conf, package and service, in one task
version_added: 0.3.0
description:
  - The step of the role P(fabric.infiniband.opensm#role), which reads its settings (C(opensm_flavour), C(opensm_group),
    C(opensm_port_guids), C(opensm_priority), C(opensm_partitions), C(opensm_default_partition) and the other C(opensm_*)
    options) from the task's variables.
  - Refuses, before the node is read, what the argument specifications cannot say - a null C(opensm_priority) on a host outside
    C(opensm_group), a priority outside 0 to 15, a malformed C(opensm_subnet_prefix) or C(opensm_log_flags), keys of
    C(opensm_extra_options) the role writes itself, C(opensm_virt_enabled=enabled) without NVIDIA's OpenSM - and bad partitions
    (P_Keys, names, members, memberships, at most 128 partitions per port), and each GUID of C(opensm_port_guids) that another
    host owns (a port of its C(infiniband_hca), a VF GUID in its C(sriov_vf_guids), or its own C(opensm_port_guids)).
  - Reads this host's adapters with M(fabric.infiniband.hca_info) unless this run has a current reading, then refuses a GUID of
    C(opensm_port_guids) that is no port of this host, and a host without an InfiniBand port to bind to (or, for NVIDIA's
    C(opensmd), more than one).
  - Writes C(/etc/opensm/opensm.conf), C(/etc/default/opensm) (the ports the distribution's units start OpenSM on)
    and C(/etc/opensm/partitions.conf) with M(ansible.builtin.template), before the package is installed so that the service
    the package starts runs them; the members' port GUIDs come from their hosts' C(infiniband_hca) (read by the role's task
    before this one, delegated), their VF GUIDs from C(sriov_vf_guids).
  - Installs the package only when M(fabric.infiniband.node_facts) does not find it installed, then enables and starts the
    service (C(opensm), or C(opensmd) with C(opensm_flavour=nvidia)).
  - Partitions without a member yet, and VF GUIDs in the inventory while this OpenSM has no SR-IOV virtualization, are warnings.
  - The restart of OpenSM (after a change of C(opensm.conf) or of the ports) and its re-read of the partitions (after a change of
    C(partitions.conf) alone) are the role's handlers, which read RV(restart), RV(reload), RV(priority), RV(units) and RV(logs).
  - With the tags C(opensm_preflight), C(opensm_configure), C(opensm_install) and C(opensm_service) in C(--tags), only the parts
    named run (C(opensm_preflight) the checks and decisions alone); C(--skip-tags) leaves a part out.
  - With O(preflight=true) the checks alone, without reading the node (this host's reading where current); RV(read) lists the
    member hosts that have no reading of this run.
author:
  - fabric.infiniband developers (@fabric-infiniband)
extends_documentation_fragment:
  - fabric.infiniband.role_step
seealso:
  - module: fabric.infiniband.hca_info
  - module: fabric.infiniband.node_facts
  - module: ansible.builtin.template
"""

EXAMPLES = r"""
- name: The subnet manager (the role's task; use the role)
  fabric.infiniband.opensm:
  register: __opensm_step
  notify: [opensm restart, opensm reload]

- name: Only the checks, and which member hosts still need a reading (the whole-run preflight, the role's first task)
  fabric.infiniband.opensm:
    preflight: true
"""

RETURN = r"""
read:
  description: The hosts that partition members name and that have no reading of their adapters from this run.
  returned: with O(preflight)
  type: list
  elements: str
  sample: [node03]
members:
  description: Every host that partition members name, directly or through a group.
  returned: with O(preflight)
  type: list
  elements: str
run_id:
  description: This run's identity, for M(fabric.infiniband.hca_info)'s C(run_id).
  returned: with O(preflight)
  type: str
host:
  description: This host.
  returned: when not O(preflight)
  type: str
flavour:
  description: C(opensm_flavour).
  returned: when not O(preflight)
  type: str
service:
  description: The service that runs OpenSM.
  returned: when not O(preflight)
  type: str
  sample: opensm
guids:
  description: The port GUIDs OpenSM binds to.
  returned: when not O(preflight)
  type: list
  elements: str
  sample: ["0x0c42a10300aa0010"]
priority:
  description: The SM priority written (15 for the master).
  returned: when not O(preflight)
  type: int
virt:
  description: Whether SR-IOV virtualization is on (C(virt_enabled 2)).
  returned: when not O(preflight)
  type: bool
units:
  description: The units of the running OpenSM processes (one per port with the distribution's units).
  returned: when not O(preflight)
  type: list
  elements: str
logs:
  description: Their log files.
  returned: when not O(preflight)
  type: list
  elements: str
partitions:
  description: Per partition its C(name), C(pkey), the member C(guids), C(keywords) and C(flags).
  returned: when not O(preflight)
  type: list
  elements: dict
partitions_path:
  description: The path of C(partitions.conf).
  returned: when not O(preflight)
  type: str
parts:
  description: The parts this run's tags asked for, of C(configure), C(install) and C(service).
  returned: when not O(preflight)
  type: list
  elements: str
restart:
  description: Whether C(opensm.conf) or the ports' list changed (OpenSM restarts).
  returned: when not O(preflight)
  type: bool
reload:
  description: Whether C(partitions.conf) changed (OpenSM re-reads it, unless it restarts).
  returned: when not O(preflight)
  type: bool
package_changed:
  description: Whether the package was installed (or would be, in check mode).
  returned: when not O(preflight)
  type: bool
ran:
  description: The modules and actions the step ran on the node, in order, with a label and whether each changed something.
  returned: always
  type: list
  elements: dict
  sample: [{module: fabric.infiniband.hca_info, label: read this host's adapters (the ports OpenSM binds to), changed: false,
            failed: false}]
"""
