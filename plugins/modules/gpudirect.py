#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

# The documentation of the action plugin plugins/action/gpudirect.py, the one task of the role fabric.infiniband.gpudirect.

from __future__ import annotations

DOCUMENTATION = r"""
module: gpudirect
short_description: The gpudirect role's step, nvidia_peermem, ACS redirect, iommu=pt and the readiness report, in one task
version_added: 0.3.0
description:
  - The one task of the role P(fabric.infiniband.gpudirect#role), which reads its settings (C(gpudirect_path),
    C(gpudirect_allow_acs_change), C(gpudirect_allow_kernel_args), C(gpudirect_required)) from the task's variables.
  - Reads the node once with M(fabric.infiniband.gpudirect_info) (GPUs, HCAs, their PCIe paths, ACS, the IOMMU mode,
    nvidia-peermem and DMA-BUF); with C(gpudirect_allow_acs_change) also the boot-time list of bridges of an earlier run, with
    C(gpudirect_allow_kernel_args) whether the GRUB drop-in exists.
  - Loads C(nvidia_peermem) now (only when it is the path, installed and not loaded) and at every boot
    (C(/etc/modules-load.d/fabric-infiniband-gpudirect.conf)); otherwise removes that file. Never unloads a module.
  - With C(gpudirect_allow_acs_change), installs pciutils when it is missing, clears ACS ReqRedir and CmpltRedir with C(setpci) on
    the bridges between a GPU and its HCA where they are set, and installs C(fabric-infiniband-gpudirect-acs.service) with
    M(fabric.infiniband.boot_unit); without it removes that unit.
  - With C(gpudirect_allow_kernel_args) and a translating IOMMU, writes C(iommu=pt) into a GRUB drop-in, regenerates the GRUB
    configuration after a change and records the reboot with M(fabric.infiniband.pending_action) (entry C(gpudirect)); without
    it removes the drop-in and the entry. Never reboots.
  - Publishes the fact C(gpudirect_report) and prints its text; with C(gpudirect_required), fails on a node that is not ready.
author:
  - fabric.infiniband developers (@fabric-infiniband)
extends_documentation_fragment:
  - fabric.infiniband.role_step
seealso:
  - module: fabric.infiniband.gpudirect_info
  - module: fabric.infiniband.boot_unit
  - module: fabric.infiniband.pending_action
"""

EXAMPLES = r"""
- name: GPUDirect readiness and its changes (the role's task; use the role)
  fabric.infiniband.gpudirect:
  vars:
    gpudirect_allow_acs_change: true

- name: Only the checks of the settings (the whole-run preflight)
  fabric.infiniband.gpudirect:
    preflight: true
"""

RETURN = r"""
plan:
  description: What the step decided to do on the node.
  returned: when not O(preflight)
  type: dict
  sample: {path: peermem, peermem_load: false, peermem_boot: true, acs_redirect: [], acs_clear_now: [], acs_boot: ["0000:18:00.0"],
           grub_wanted: false, reboot_wanted: false}
msg:
  description: The readiness report as text (what the step prints).
  returned: when not O(preflight)
  type: str
ran:
  description: The modules the step ran on the node, in order, with a label and whether each changed something.
  returned: always
  type: list
  elements: dict
  sample: [{module: fabric.infiniband.gpudirect_info, label: read the GPUs, HCAs, PCIe paths, ACS and IOMMU, changed: false,
            failed: false}]
ansible_facts:
  description: The readiness report.
  returned: when not O(preflight)
  type: dict
  contains:
    gpudirect_report:
      description:
        - C(ready), C(reasons), C(path), C(pairs) (GPU to HCA, RDMA device, netdev, NUMA nodes, relation, ACS state), C(gpus),
          C(hcas), C(peermem), C(dmabuf), C(acs), C(iommu), C(reboot_pending), C(reboot_stuck), C(changes), C(notes) and C(text).
      type: dict
"""
