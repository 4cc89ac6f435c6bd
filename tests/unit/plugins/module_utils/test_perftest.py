# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""perftest's result tables: the real outputs of Debian 12's perftest 4.5 (soft-RoCE between two QEMU guests of the VM lab)
and the layouts of other releases rebuilt from their format strings (fixtures/perftest/README.md)."""

from __future__ import annotations

import os
import re

import pytest

from ansible_collections.fabric.infiniband.plugins.module_utils import perftest
from ansible_collections.fabric.infiniband.tests.unit import conftest


def fixture(name):
    return conftest.read_fixture(os.path.join("perftest", name))


def squeeze(text):
    """The same table with other whitespace: tabs for runs of spaces, trailing blanks, CRLF."""
    return "\r\n".join(re.sub(r" {2,}", "\t", line) + "  " for line in text.splitlines())


def test_real_write_bw_client():
    assert perftest.result("write_bw", fixture("real_4.5_write_bw_client_gbits.txt")) == {
        "bw_gbps": 0.072856, "bw_peak_gbps": 0.075932, "bytes": 65536, "iterations": 200}


def test_real_write_bw_server_prints_the_same_row():
    assert perftest.result("write_bw", fixture("real_4.5_write_bw_server_gbits.txt"))["bw_gbps"] == 0.072856


def test_real_read_lat_client_nine_columns_with_tabs():
    rows = perftest.parse_table(fixture("real_4.5_read_lat_client.txt"))
    assert rows == [{"bytes": 2, "iterations": 200, "t_min_us": 405.87, "t_max_us": 42981.73, "t_typical_us": 643.94,
                     "t_avg_us": 997.8, "t_stdev_us": 1146.53, "p99_us": 6894.5, "p99_9_us": 42981.73}]
    assert perftest.result("read_lat", fixture("real_4.5_read_lat_client.txt"))["lat_us"] == 643.94


@pytest.mark.parametrize("name, gbps", [
    # 4.x: MB is 2^20 bytes (format_factor 0x100000): 11720.55 * 2^20 * 8 / 10^9 = 98.319 Gb/s
    ("source_4.5_write_bw_mbsec.txt", 98.319),
    ("source_26.04_write_bw_mibsec.txt", 195.204),
])
def test_bandwidth_units_become_gbps(name, gbps):
    assert round(perftest.result("write_bw", fixture(name))["bw_gbps"], 3) == gbps


def test_duration_mode_latency_has_only_the_average():
    assert perftest.result("read_lat", fixture("source_4.5_read_lat_duration.txt"))["lat_us"] == 2.77


@pytest.mark.parametrize("name", sorted(n for n in os.listdir(conftest.fixture_path("perftest")) if n.endswith(".txt")
                                        and "no_server" not in n))
def test_other_whitespace_parses_the_same(name):
    text = fixture(name)
    assert perftest.parse_table(text)
    assert perftest.parse_table(squeeze(text)) == perftest.parse_table(text)


def test_no_table_and_a_refused_connection():
    text = fixture("real_4.5_client_no_server.txt")
    assert perftest.result("write_bw", text) is None
    assert perftest.connect_refused(text, "")
    assert perftest.connect_refused("", text)
    assert perftest.error(text, "") == "Couldn't connect to 192.168.77.1:18599"
    assert not perftest.connect_refused(fixture("real_4.5_write_bw_client_gbits.txt"), "")


def test_device_errors_are_told():
    assert perftest.error("", " Couldn't get context for the device\n") == "Couldn't get context for the device"
    assert perftest.error(" Port number 1 state is DOWN\n", "") == "Port number 1 state is DOWN"
    assert perftest.error("", "") is None


def test_args_of_server_and_client():
    assert perftest.args("write_bw", "mlx5_0", 1, 18515) == ["-d", "mlx5_0", "-i", "1", "-p", "18515", "-F", "--report_gbits"]
    assert perftest.args("read_lat", "mlx5_1", 1, 18516, server="10.0.0.1", iterations=100) == [
        "-d", "mlx5_1", "-i", "1", "-p", "18516", "-F", "-n", "100", "10.0.0.1"]
    assert perftest.tool("read_lat") == "ib_read_lat"
