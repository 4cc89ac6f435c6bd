# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Option specs shared by several modules.

Modules deep-copy these dicts into their ``argument_spec()``; each one is
documented once in a doc fragment of the same collection.
"""

from __future__ import annotations

import copy


# documented by the fabric.infiniband.sysfs doc fragment
SYSFS_ARG_SPEC = dict(
    sysfs_root=dict(type="path", default="/sys"),
)

# documented by the fabric.infiniband.mlxconfig_tool doc fragment
MLXCONFIG_TOOL_ARG_SPEC = dict(
    tool=dict(type="str", default="auto", choices=["auto", "mlxconfig", "mstconfig"]),
)


def merge_specs(*specs):
    """Deep copy of the given spec dicts merged left to right."""
    merged = {}
    for spec in specs:
        merged.update(copy.deepcopy(spec))
    return merged


def mark_stale(module, result, *facts):
    """Mark the named node facts (``hca``, ``pending``) stale in a result that changed the node.

    Sets ``infiniband_<name>_stale`` in the result's ``ansible_facts``, so that a role reads the node
    again before it decides anything from that fact (plugin_utils/node_state.py). Nothing is marked
    in check mode, where the node did not change.
    """
    if result.get("changed") and not module.check_mode:
        facts_out = result.setdefault("ansible_facts", {})
        for name in facts:
            facts_out["infiniband_%s_stale" % name] = True
    return result
