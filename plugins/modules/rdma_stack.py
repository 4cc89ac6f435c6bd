#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

# The documentation of the action plugin plugins/action/rdma_stack.py, the one task of the role fabric.infiniband.rdma_stack.

from __future__ import annotations

DOCUMENTATION = r"""
module: rdma_stack
short_description: The rdma_stack role's step, checks, repository, packages, kernel modules and DOCA driver, in one task
version_added: 0.3.0
description:
  - The one task of the role P(fabric.infiniband.rdma_stack#role), which reads its settings (C(rdma_stack_flavour),
    C(rdma_stack_perftest), C(rdma_stack_extra_packages), C(rdma_stack_modules), C(rdma_stack_doca_version),
    C(rdma_stack_doca_repo_url), C(rdma_stack_doca_key_url), C(rdma_stack_doca_packages), C(rdma_stack_allow_driver_restart),
    C(rdma_stack_verify)) from the task's variables.
  - Reads the distribution, architecture and package manager facts (unless the host has them) and which RDMA packages are
    installed with one M(fabric.infiniband.node_facts) run, then loads the package names of the platform
    (C(roles/rdma_stack/vars/<family>.yml), then C(vars/<platform>.yml)).
  - Refuses, before any change, bad input, an unsupported platform, the other stack's verbs packages (a mixed stack), and a
    module of C(rdma_stack_modules) the running kernel does not have (M(fabric.infiniband.kernel_modules) in check mode,
    C(modprobe -n)).
  - With C(rdma_stack_flavour=doca), fetches the repository's key and writes the repository and its pin (apt) or imports the key
    and adds the repository (dnf). Runs the package manager only when a package is missing or the repository changed.
  - Loads the modules at every boot and, for the inbox stack, now; with DOCA-OFED restarts C(openibd) when
    C(rdma_stack_allow_driver_restart) allows it, else records the reboot the driver waits for with
    M(fabric.infiniband.pending_action) (entry C(rdma_stack)). Never reboots.
  - After a change (or on every run with C(rdma_stack_verify=always)), checks that C(ibv_devinfo -l) lists every RDMA device of
    the kernel and that C(rdma system show) works.
  - A run that changes nothing runs M(fabric.infiniband.node_facts) and M(fabric.infiniband.kernel_modules) in check mode (with
    DOCA-OFED also the repository's modules and M(fabric.infiniband.pending_action)). After the run's preflight
    (C(playbooks/preflight.yml)), which ran the same two reads, it takes their answers (the fact C(infiniband_preflight_reads) of
    the run) and runs neither again.
author:
  - fabric.infiniband developers (@fabric-infiniband)
extends_documentation_fragment:
  - fabric.infiniband.role_step
seealso:
  - module: fabric.infiniband.node_facts
  - module: fabric.infiniband.kernel_modules
  - module: fabric.infiniband.pending_action
"""

EXAMPLES = r"""
- name: Install the RDMA stack (the role's task; use the role)
  fabric.infiniband.rdma_stack:
  vars:
    rdma_stack_flavour: inbox
    rdma_stack_modules: [mlx5_core, mlx5_ib, ib_uverbs, ib_umad, ib_ipoib, rdma_ucm]

- name: Only the checks, reading the node (the role's preflight entry point)
  fabric.infiniband.rdma_stack:
    preflight: true
"""

RETURN = r"""
platform:
  description: The platform, by the name of its vars file.
  returned: always
  type: str
  sample: Debian-12
packages:
  description: The packages the stack is made of on this node.
  returned: always
  type: list
  elements: str
  sample: [doca-ofed, perftest]
packages_missing:
  description: Those the package database did not report installed.
  returned: always
  type: list
  elements: str
  sample: []
repository_changed:
  description: Whether the DOCA repository, its key or its pin changed.
  returned: when not O(preflight)
  type: bool
packages_changed:
  description: Whether the package manager installed something.
  returned: when not O(preflight)
  type: bool
modules_loaded:
  description: The kernel modules loaded in this run.
  returned: when not O(preflight)
  type: list
  elements: str
  sample: [ib_umad, ib_ipoib, rdma_ucm]
driver_restarted:
  description: Whether C(openibd) restarted (DOCA-OFED).
  returned: when not O(preflight)
  type: bool
driver_pending:
  description: Whether the DOCA driver waits for a reboot.
  returned: when not O(preflight)
  type: bool
ran:
  description: The modules the step ran on the node, in order, with a label and whether each changed something.
  returned: always
  type: list
  elements: dict
  sample: [{module: fabric.infiniband.node_facts, label: read the distribution and which RDMA packages are installed, changed: false,
            failed: false}]
ansible_facts:
  description:
    - The facts of M(fabric.infiniband.node_facts) (distribution, platform, pkg_mgr) when the host had none, and C(infiniband_hca_stale)
      when a module was loaded.
  returned: when a module of the step returned some
  type: dict
  sample: {ansible_distribution: Debian, ansible_pkg_mgr: apt}
"""
