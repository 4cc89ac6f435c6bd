#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

# The documentation of the action plugin plugins/action/rdma_netns.py, the one task of the role fabric.infiniband.rdma_netns.

from __future__ import annotations

DOCUMENTATION = r"""
module: rdma_netns
short_description: The rdma_netns role's step, the ib_core option, the run-time switch and the record, in one task
version_added: 0.3.0
description:
  - The one task of the role P(fabric.infiniband.rdma_netns#role), which reads its settings (C(rdma_netns_mode),
    C(rdma_netns_runtime), C(rdma_netns_update_initramfs), C(rdma_netns_kernel_cmdline), C(rdma_netns_cluster_plugins)) from the
    task's variables; outside the role, the role's defaults apply to those not set.
  - Refuses a value the role does not accept (naming the variable and the values it accepts), and warns when the mode does not suit
    what C(rdma_netns_cluster_plugins) lists.
  - Writes C(options ib_core netns_mode=0) (exclusive) or C(=1) (shared) to C(/etc/modprobe.d/fabric-infiniband-rdma-netns.conf)
    and the GRUB drop-in C(/etc/default/grub.d/fabric-infiniband-rdma-netns.cfg) (or removes it) with one run of
    M(fabric.infiniband.kernel_modules); runs C(update-grub) when the drop-in changed.
  - Regenerates the running kernel's initramfs (C(update-initramfs), or C(dracut) on RHEL-family systems) when it contains
    C(ib_core) (or always, per C(rdma_netns_update_initramfs)), unless the stamp C(/var/lib/fabric-infiniband/rdma_netns.initramfs)
    says it was regenerated for this kernel and option; in check mode it reports the change and runs nothing.
  - Switches the running kernel with M(fabric.infiniband.rdma_system), unless this run's reading of the node (the fact
    C(infiniband_hca)) shows the mode; records what waits for a reboot with M(fabric.infiniband.pending_action) (entry
    C(rdma_netns)), or removes the entry, where the node's record may hold it.
  - Never reboots.
author:
  - fabric.infiniband developers (@fabric-infiniband)
extends_documentation_fragment:
  - fabric.infiniband.role_step
seealso:
  - module: fabric.infiniband.kernel_modules
  - module: fabric.infiniband.rdma_system
  - module: fabric.infiniband.pending_action
"""

EXAMPLES = r"""
- name: Put the RDMA netns mode in place (the role's task; use the role)
  fabric.infiniband.rdma_netns:
  vars:
    rdma_netns_mode: exclusive
    rdma_netns_runtime: try
    rdma_netns_update_initramfs: auto
    rdma_netns_kernel_cmdline: false
    rdma_netns_cluster_plugins: [ib_sriov_cni_rdma_isolation]

- name: Only the checks
  fabric.infiniband.rdma_netns:
    preflight: true
"""

RETURN = r"""
kernel:
  description: The running kernel's release.
  returned: when not O(preflight)
  type: str
  sample: 6.1.0-27-amd64
initramfs:
  description:
    - What became of the running kernel's initramfs; null when it has none or C(rdma_netns_update_initramfs) is V(never).
  returned: when not O(preflight)
  type: str
  choices: [current, without ib_core, would regenerate, regenerated]
  sample: current
netns:
  description: The mode before and after the run-time switch.
  returned: when the switch ran (this run had no current reading of the node that shows the mode)
  type: dict
  sample: {before: shared, after: exclusive}
reboot_required:
  description: Whether only a reboot brings the mode (the kernel refused the switch while other network namespaces exist).
  returned: when the switch ran
  type: bool
  sample: false
reason:
  description: Why the mode was not applied at run time, from M(fabric.infiniband.rdma_system).
  returned: when the switch ran
  type: str
applied:
  description: Whether the switch changed the running kernel's mode.
  returned: when the switch ran
  type: bool
ran:
  description: The modules the step ran on the node, in order, with a label and whether each changed something.
  returned: always
  type: list
  elements: dict
  sample: [{module: fabric.infiniband.kernel_modules, label: write the ib_core option, changed: false, failed: false}]
"""
