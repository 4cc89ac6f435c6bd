# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""module_utils/systemctl.py: the is-enabled parser on what systemd 252 (Debian 12) and newer print,
and which states count as enabled at the next boot."""

from __future__ import annotations

import pytest

from ansible_collections.fabric.infiniband.plugins.module_utils import systemctl


@pytest.mark.parametrize("rc, out, err, state", [
    (0, "enabled\n", "", "enabled"),
    (1, "disabled\n", "", "disabled"),
    (0, "static\n", "", "static"),
    (0, "enabled-runtime\n", "", "enabled-runtime"),
    (1, "masked\n", "", "masked"),
    # systemd 254 and later
    (4, "not-found\n", "", "not-found"),
    # systemd 252 (Debian 12): nothing on stdout for a unit it does not know
    (1, "", "Failed to get unit file state for x.service: No such file or directory\n", "not-found"),
    # another failure: no state
    (1, "", "Failed to connect to bus: Permission denied\n", None),
    (0, "", "", None),
])
def test_parse_is_enabled(rc, out, err, state):
    assert systemctl.parse_is_enabled(rc, out, err) == state


@pytest.mark.parametrize("state, at_boot", [
    ("enabled", True),
    # links under /run: gone at the next boot
    ("enabled-runtime", False),
    # rc 0 without links of the unit's own
    ("static", False), ("indirect", False), ("generated", False), ("transient", False), ("alias", False),
    ("disabled", False), ("linked", False), ("masked", False), ("not-found", False), (None, False),
])
def test_only_enabled_means_enabled_at_boot(state, at_boot):
    assert systemctl.enabled_at_boot(state) is at_boot


def test_the_states_enable_cannot_change_are_refused_with_a_reason():
    assert sorted(systemctl.CANNOT_ENABLE) == sorted(
        ["static", "indirect", "generated", "transient", "alias", "masked", "masked-runtime", "bad"])
    assert not set(systemctl.CANNOT_ENABLE) & set(["enabled", "enabled-runtime", "disabled", "linked", "linked-runtime", "not-found"])


def test_argv_builders():
    name = "fabric-infiniband-sriov.service"
    assert systemctl.is_enabled_args(name) == ["is-enabled", name]
    assert systemctl.enable_args(name) == ["enable", name]
    assert systemctl.reenable_args(name) == ["reenable", name]
    assert systemctl.disable_args(name) == ["disable", name]
    assert systemctl.daemon_reload_args() == ["daemon-reload"]
