# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""NVIDIA/Mellanox firmware configuration tools.

Two flavours ship the same user interface under different names: MFT
(``mlxconfig``, ``mlxfwreset``, ``mst``; closed source, also in DOCA-OFED)
and mstflint (``mstconfig``, ``mstfwreset``; open source, in the distros).
"""

from __future__ import annotations

from ansible_collections.fabric.infiniband.plugins.module_utils._runner import find_tool


FLAVOURS = {
    "mft": ("mlxconfig", "mlxfwreset", "mst"),
    "mstflint": ("mstconfig", "mstfwreset"),
}
# the tool whose presence makes a flavour count as installed
CONFIG_TOOL = {"mft": "mlxconfig", "mstflint": "mstconfig"}


def flavour_name(paths):
    """``mft``, ``mstflint``, ``both`` or ``none`` from the result of ``find_tools``."""
    installed = [name for name in ("mft", "mstflint") if paths[name].get(CONFIG_TOOL[name])]
    if len(installed) == 2:
        return "both"
    return installed[0] if installed else "none"


def find_tools(module):
    """Paths of every firmware tool (None when missing) and the flavour."""
    result = {}
    for name, tools in FLAVOURS.items():
        result[name] = dict((tool, find_tool(module, tool)) for tool in tools)
    result["flavour"] = flavour_name(result)
    return result
