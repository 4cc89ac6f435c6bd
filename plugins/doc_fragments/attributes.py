# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations


class ModuleDocFragment(object):

    # Descriptions of the attributes every module declares; each module sets
    # the support levels of check_mode and diff_mode in its own attributes block.
    DOCUMENTATION = r"""
options: {}
attributes:
  check_mode:
    description: Can run with C(--check) and then reports what it would change without changing it.
  diff_mode:
    description: Returns the state before and after the change when run with C(--diff).
  platform:
    description: The target systems this module runs on.
    support: full
    platforms: linux
"""

    # The support levels of a module that only reads (fabric.infiniband.attributes.info_module).
    INFO_MODULE = r"""
options: {}
attributes:
  check_mode:
    support: full
    details:
      - The module only reads, so it behaves the same with and without check mode.
  diff_mode:
    support: N/A
    details:
      - The module only reads and never changes anything.
"""
