# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""fabric_topology_info through AnsibleModule, with ibnetdiscover mocked (exact argv)."""

from __future__ import annotations

from ansible_collections.fabric.infiniband.plugins.modules import fabric_topology_info
from ansible_collections.fabric.infiniband.tests.unit import conftest

TOOL = "/usr/sbin/ibnetdiscover"


def test_discovers_the_lab(mocker, capsys):
    out = conftest.read_fixture("ibnetdiscover/lab_ibsim_diags44.txt")
    result, cmds = conftest.run_module(mocker, capsys, fabric_topology_info.main, {}, {"ibnetdiscover": TOOL},
                                       [dict(argv=[TOOL], out=out)], check_mode=True)
    assert result["changed"] is False
    assert result["cmd"] == [TOOL]
    assert len(result["switches"]) == 1 and len(result["hcas"]) == 4 and len(result["links"]) == 4


def test_ca_and_port(mocker, capsys):
    out = conftest.read_fixture("ibnetdiscover/lab_ibsim_diags44.txt")
    result, _cmds = conftest.run_module(mocker, capsys, fabric_topology_info.main, {"ca": "mlx5_1", "port": 2},
                                        {"ibnetdiscover": TOOL}, [dict(argv=[TOOL, "-C", "mlx5_1", "-P", "2"], out=out)])
    assert result["seen_from"]["node_guid"] == "0x0c42a10300aa000f"


def test_failure_reports_the_command(mocker, capsys):
    err = "ibwarn: [77] mad_rpc_open_port: can't open UMAD port ((null):0)\nibnetdiscover: iberror: failed: Failed to open '(null)' port '0'\n"
    result, _cmds = conftest.run_module(mocker, capsys, fabric_topology_info.main, {}, {"ibnetdiscover": TOOL},
                                        [dict(argv=[TOOL], rc=255, err=err)])
    assert result["failed"] is True
    assert result["msg"].startswith("ibnetdiscover could not discover the fabric")
    assert result["rc"] == 255 and result["cmd"] == [TOOL] and "UMAD" in result["stderr"]


def test_output_without_nodes_fails(mocker, capsys):
    result, _cmds = conftest.run_module(mocker, capsys, fabric_topology_info.main, {}, {"ibnetdiscover": TOOL},
                                        [dict(argv=[TOOL], out="#\n# Topology file\n#\n")])
    assert result["failed"] is True
    assert "no Switch or Ca line" in result["msg"]
