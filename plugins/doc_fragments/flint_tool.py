# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations


class ModuleDocFragment(object):

    # The firmware burning tool of the firmware modules.
    DOCUMENTATION = r"""
options:
  tool:
    description:
      - Which firmware burning tool to run. Both take the same arguments and print the same text.
      - V(flint) is NVIDIA MFT's tool (also shipped by DOCA-OFED); it also opens MST device paths after C(mst start).
      - V(mstflint) is the open-source mstflint's tool, packaged by the distributions.
      - V(auto) takes C(flint) when it is installed and C(mstflint) otherwise.
    type: str
    choices: [auto, flint, mstflint]
    default: auto
requirements:
  - C(flint) from NVIDIA MFT or DOCA-OFED, or C(mstflint) from mstflint, on the managed node
notes:
  - Firmware tools access the adapter's PCI configuration space directly. Under kernel lockdown (Secure Boot) they cannot open
    the device, unless NVIDIA MFT's signed kernel module is available; the modules then fail with what to do.
  - The modules read C(/sys/kernel/security/lockdown) and the PCI functions and RDMA devices under O(sysfs_root) only to
    explain failures, to resolve RDMA device names and to find the cards; a named device does not have to appear in sysfs.
"""
