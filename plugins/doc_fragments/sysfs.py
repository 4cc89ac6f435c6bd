# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations


class ModuleDocFragment(object):

    DOCUMENTATION = r"""
options:
  sysfs_root:
    description:
      - Where the kernel's sysfs is mounted.
      - Set it when running from a container that has the host's C(/sys) mounted elsewhere, for example C(/host/sys).
    type: path
    default: /sys
"""
