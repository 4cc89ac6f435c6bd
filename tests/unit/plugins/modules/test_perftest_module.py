# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""perftest through AnsibleModule, with the commands mocked (exact argv) and a sysfs and /dev of its own."""

from __future__ import annotations

import os

import pytest

from ansible_collections.fabric.infiniband.plugins.modules import perftest
from ansible_collections.fabric.infiniband.tests.unit import conftest

TOOLS = {"ib_write_bw": "/usr/bin/ib_write_bw", "ib_read_lat": "/usr/bin/ib_read_lat", "timeout": "/usr/bin/timeout"}


@pytest.fixture
def node(tmp_path):
    sysfs = tmp_path / "sys"
    (sysfs / "class" / "infiniband" / "rxe0").mkdir(parents=True)
    (sysfs / "class" / "infiniband_verbs" / "uverbs0").mkdir(parents=True)
    (sysfs / "class" / "infiniband_verbs" / "uverbs0" / "ibdev").write_text("rxe0\n")
    dev = tmp_path / "dev" / "infiniband"
    dev.mkdir(parents=True)
    (dev / "uverbs0").write_text("")
    return {"sysfs_root": str(sysfs), "dev_root": str(tmp_path / "dev")}


def argv(program, *args):
    return ["/usr/bin/timeout", "--kill-after=5", "60", TOOLS[program]] + list(args)


BW = argv("ib_write_bw", "-d", "rxe0", "-i", "1", "-p", "18515", "-F", "--report_gbits", "-n", "200", "192.168.77.1")
LAT = argv("ib_read_lat", "-d", "rxe0", "-i", "1", "-p", "18516", "-F", "192.168.77.1")
CLIENT = {"role": "client", "device": "rxe0", "tcp_port": 18515, "server_address": "192.168.77.1", "bw_iterations": 200}


def test_client_retries_until_the_server_listens(mocker, capsys, node):
    sleep = mocker.patch.object(perftest.time, "sleep")
    result, cmds = conftest.run_module(mocker, capsys, perftest.main, dict(CLIENT, **node), TOOLS, [
        dict(argv=BW, rc=1, err=conftest.read_fixture("perftest/real_4.5_client_no_server.txt")),
        dict(argv=BW, out=conftest.read_fixture("perftest/real_4.5_write_bw_client_gbits.txt")),
        dict(argv=LAT, out=conftest.read_fixture("perftest/real_4.5_read_lat_client.txt")),
    ])
    assert result["changed"] is False and result["ran"] is True
    assert result["tests"]["write_bw"]["bw_gbps"] == 0.072856
    assert result["tests"]["read_lat"]["lat_us"] == 643.94
    assert cmds == [BW, BW, LAT] and sleep.call_count == 1


def test_server_without_client_times_out_and_says_so(mocker, capsys, node):
    server_bw = argv("ib_write_bw", "-d", "rxe0", "-i", "1", "-p", "18515", "-F", "--report_gbits")
    params = dict(node, role="server", device="rxe0", tcp_port=18515, tests=["write_bw"])
    result, _cmds = conftest.run_module(mocker, capsys, perftest.main, params, TOOLS, [dict(argv=server_bw, rc=124)])
    assert result["failed"] is True
    assert result["msg"] == "server ib_write_bw on rxe0 port 1 (TCP 18515): no client came within 60 s"


def test_a_device_error_is_the_message(mocker, capsys, node):
    result, _cmds = conftest.run_module(mocker, capsys, perftest.main, dict(CLIENT, **node), TOOLS, [
        dict(argv=BW, rc=1, out=" Port number 1 state is DOWN\n Couldn't set the link layer\n")])
    assert result["failed"] is True and result["msg"].endswith(": Port number 1 state is DOWN")
    assert result["tests"]["write_bw"]["rc"] == 1


def test_check_mode_moves_nothing(mocker, capsys, node):
    result, cmds = conftest.run_module(mocker, capsys, perftest.main, dict(CLIENT, **node), TOOLS, [], check_mode=True)
    assert cmds == [] and result["ran"] is False
    assert result["tests"]["write_bw"]["cmd"] == BW


def test_unknown_device(mocker, capsys, node):
    result, _cmds = conftest.run_module(mocker, capsys, perftest.main, dict(CLIENT, device="mlx5_0", **node), TOOLS, [])
    assert result["msg"] == "device: mlx5_0 is no RDMA device of this node (it has: rxe0)"


def test_missing_user_verbs(mocker, capsys, node):
    os.unlink(os.path.join(node["dev_root"], "infiniband", "uverbs0"))
    result, _cmds = conftest.run_module(mocker, capsys, perftest.main, dict(CLIENT, **node), TOOLS, [])
    assert result["msg"].startswith("rxe0 has no user-verbs device (%s/infiniband/uverbs0 missing)" % node["dev_root"])


def test_missing_perftest(mocker, capsys, node):
    result, _cmds = conftest.run_module(mocker, capsys, perftest.main, dict(CLIENT, **node), {"timeout": "/usr/bin/timeout"}, [])
    assert result["msg"].startswith("ib_write_bw not found: install perftest")


def test_client_without_server_address(mocker, capsys, node):
    params = dict(CLIENT, **node)
    del params["server_address"]
    result, _cmds = conftest.run_module(mocker, capsys, perftest.main, params, TOOLS, [])
    assert result["msg"].startswith("server_address: required when role is client")


def test_zero_timeout(mocker, capsys, node):
    result, _cmds = conftest.run_module(mocker, capsys, perftest.main, dict(CLIENT, timeout=0, **node), TOOLS, [])
    assert result["msg"] == "timeout: 0 is not a positive number"
