# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The fixtures the lab test modules start from."""

import pytest

import awxjob
import labhost as lab


@pytest.fixture(scope="module")
def fresh_lab():
    """A lab whose nodes never saw a playbook, for each test module: `labctl reset` forgets their state, `up` starts
    them again; `down` after the module's last test. A lab instance (FABRIC_LAB_INSTANCE) gets its inventory first."""
    lab.labctl("reset")
    if lab.INSTANCE != "lab":
        lab.labctl("inventory")
    lab.labctl("up")
    yield
    lab.labctl("down")


@pytest.fixture(scope="session")
def project_sync(tmp_path_factory):
    """The project as AWX's project sync leaves it, once for every AWX job of the session (awxjob.project_sync)."""
    return awxjob.project_sync(tmp_path_factory.mktemp("project-sync"))
