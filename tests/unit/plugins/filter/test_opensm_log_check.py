# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The filter opensm_log_check, which the opensm role's handlers read OpenSM's log with."""

from __future__ import annotations

from ansible_collections.fabric.infiniband.plugins.filter.opensm_log_check import opensm_log_check


def test_states_sweep_and_errors():
    assert opensm_log_check("x 0x80 -> Entering MASTER state\ny 0x02 -> SUBNET UP\n") == {"states": ["MASTER"], "subnet_up": True, "errors": []}
    found = opensm_log_check("a 0x80 -> Entering STANDBY state\nb 0x01 -> PARSE ERROR partitions.conf:3\n")
    assert found["states"] == ["STANDBY"] and not found["subnet_up"] and found["errors"] == ["b 0x01 -> PARSE ERROR partitions.conf:3"]
