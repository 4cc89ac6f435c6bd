# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""mlxconfig_info end to end through AnsibleModule (cases in test_mlxconfig_info.yaml;
harness shared with test_mlxconfig_module.py)."""

from __future__ import annotations

import pytest

from ansible_collections.fabric.infiniband.plugins.modules import mlxconfig_info
from ansible_collections.fabric.infiniband.tests.unit.plugins.modules.test_mlxconfig_module import (
    case_ids, load_cases, queries, run_case, sets,
)


CASES = load_cases("test_mlxconfig_info.yaml")


@pytest.mark.parametrize("case", CASES, ids=case_ids(CASES))
def test_case(case, mocker, capsys, make_sysfs):
    result, ran = run_case(case, mocker, capsys, make_sysfs, mlxconfig_info.main)
    assert sets(ran) == [], "the info module never writes"
    assert len(ran) == len(queries(ran))
    assert result["changed"] is False
    if not result.get("failed"):
        assert result["cmds"] == ran
        assert "diff" not in result


def test_argument_spec():
    spec = mlxconfig_info.argument_spec()
    assert spec == {
        "sysfs_root": {"type": "path", "default": "/sys"},
        "tool": {"type": "str", "default": "auto", "choices": ["auto", "mlxconfig", "mstconfig"]},
        "device": {"type": "str"},
        "params": {"type": "list", "elements": "str"},
    }
