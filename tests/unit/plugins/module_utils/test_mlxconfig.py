# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

import pytest

from ansible_collections.fabric.infiniband.plugins.module_utils import mlxconfig


class FakeModule(object):
    def __init__(self, tools):
        self.tools = tools
        self.looked_up = []

    def get_bin_path(self, arg, required=False, opt_dirs=None):
        assert not required
        self.looked_up.append(arg)
        return self.tools.get(arg)


MFT = {"mlxconfig": "/usr/bin/mlxconfig", "mlxfwreset": "/usr/bin/mlxfwreset", "mst": "/usr/bin/mst"}
MSTFLINT = {"mstconfig": "/usr/bin/mstconfig", "mstfwreset": "/usr/bin/mstfwreset"}


@pytest.mark.parametrize("tools, flavour", [
    (MFT, "mft"),
    (MSTFLINT, "mstflint"),
    (dict(MFT, **MSTFLINT), "both"),
    ({}, "none"),
    # a reset tool without its configuration tool does not make a flavour
    ({"mlxfwreset": "/usr/bin/mlxfwreset", "mstfwreset": "/usr/bin/mstfwreset"}, "none"),
    ({"mstconfig": "/usr/bin/mstconfig"}, "mstflint"),
])
def test_find_tools(tools, flavour):
    module = FakeModule(tools)
    found = mlxconfig.find_tools(module)
    assert found["flavour"] == flavour
    assert found["mft"] == dict((t, tools.get(t)) for t in ("mlxconfig", "mlxfwreset", "mst"))
    assert found["mstflint"] == dict((t, tools.get(t)) for t in ("mstconfig", "mstfwreset"))
    assert sorted(module.looked_up) == sorted(["mlxconfig", "mlxfwreset", "mst", "mstconfig", "mstfwreset"])
