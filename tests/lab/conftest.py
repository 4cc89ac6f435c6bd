# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The fixture every lab test module starts from."""

import pytest

import labhost as lab


@pytest.fixture(scope="module")
def fresh_lab():
    """A lab whose nodes never saw a playbook, for each test module: `labctl reset` forgets their state, `up` starts
    them again; `down` after the module's last test."""
    lab.labctl("reset")
    lab.labctl("up")
    yield
    lab.labctl("down")
