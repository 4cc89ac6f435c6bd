# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The traffic thresholds, checked before any traffic (issue 33, class 4): negative, unit-bearing and incomplete values are
refused naming the setting, and a row that is there is never reported as missing."""

from __future__ import annotations

import pytest

from ansible_collections.fabric.infiniband.plugins.plugin_utils import traffic

DEFAULT = {100: {"min_bw_gbps": 90, "max_lat_us": 6}, 200: {"min_bw_gbps": 180, "max_lat_us": 6}}


def problems(**settings):
    return traffic.threshold_problems(dict({"verify_traffic": True, "verify_traffic_thresholds": DEFAULT}, **settings))


def test_the_default_table_and_numeric_text_are_accepted():
    assert problems() == []
    assert problems(verify_traffic_thresholds={"200": {"min_bw_gbps": "180", "max_lat_us": 6.5}}) == []
    assert problems(verify_traffic_min_bw_gbps=150.0, verify_traffic_max_lat_us="9") == []


def test_nothing_is_checked_with_the_traffic_step_off():
    assert traffic.threshold_problems({"verify_traffic": False, "verify_traffic_min_bw_gbps": -1}) == []


@pytest.mark.parametrize("settings, says", [
    ({"verify_traffic_min_bw_gbps": -5}, "verify_traffic_min_bw_gbps: -5 is not accepted (a negative or zero bandwidth lets "
                                         "every pair pass); accepted: a number of Gb/s greater than 0, such as 180"),
    ({"verify_traffic_max_lat_us": 0}, "verify_traffic_max_lat_us: 0 is not accepted (a negative or zero latency fails every "
                                       "pair); accepted: a number of microseconds greater than 0, such as 6"),
    ({"verify_traffic_thresholds": {200: {"min_bw_gbps": "180 Gb/s", "max_lat_us": 6}}},
     "verify_traffic_thresholds[200].min_bw_gbps: '180 Gb/s' is not accepted (a number with a unit: the unit is Gb/s, given "
     "by the name, so write 180); accepted: a number of Gb/s greater than 0"),
    ({"verify_traffic_thresholds": {200: {"min_bw_gbps": "180G", "max_lat_us": "6us"}}},
     "verify_traffic_thresholds[200].max_lat_us: '6us' is not accepted (a number with a unit: the unit is microseconds"),
    ({"verify_traffic_thresholds": {200: {"min_bw_gbps": -180, "max_lat_us": 6}}},
     "verify_traffic_thresholds[200].min_bw_gbps: -180 is not accepted (a negative or zero bandwidth"),
    ({"verify_traffic_thresholds": {"200G": {"min_bw_gbps": 180, "max_lat_us": 6}}},
     "verify_traffic_thresholds: the link rate '200G' is not accepted (a number with a unit: the unit is Gb/s, given by the "
     "name, so write 200); accepted: link rates in Gb/s"),
    ({"verify_traffic_thresholds": {-200: {"min_bw_gbps": 180, "max_lat_us": 6}}},
     "verify_traffic_thresholds: the link rate -200 is not accepted (not greater than 0)"),
    ({"verify_traffic_thresholds": {200: {"min_bw_gbps": 180}}},
     "verify_traffic_thresholds[200] has no max_lat_us, so a pair at that rate would have no threshold (setting "
     "verify_traffic_thresholds replaces the whole table: give every row min_bw_gbps and max_lat_us, or set "
     "verify_traffic_max_lat_us)"),
    ({"verify_traffic_thresholds": {200: {"min_bw": 180, "max_lat_us": 6}}},
     "verify_traffic_thresholds[200]: unknown key min_bw; accepted: min_bw_gbps, max_lat_us"),
    ({"verify_traffic_thresholds": {200: 180}}, "verify_traffic_thresholds[200]: 180 is not accepted; accepted: a mapping"),
    ({"verify_traffic_thresholds": {200: DEFAULT[200], "200": DEFAULT[200]}}, "the link rate 200 is given twice"),
    ({"verify_traffic_thresholds": [200]}, "verify_traffic_thresholds: [200] is not accepted; it must be a mapping"),
    ({"verify_traffic_thresholds": {200: {"min_bw_gbps": float("nan"), "max_lat_us": 6}}},
     "verify_traffic_thresholds[200].min_bw_gbps: nan is not accepted"),
])
def test_refused_naming_the_setting(settings, says):
    found = problems(**settings)
    assert any(says in problem for problem in found), found


def test_a_row_without_a_value_is_fine_when_the_fixed_setting_stands_in():
    assert problems(verify_traffic_thresholds={200: {"min_bw_gbps": 180}}, verify_traffic_max_lat_us=7) == []


def node(thresholds, **fixed):
    port = {"port": 1, "state": "ACTIVE", "rate_gbps": 200}
    out = {"hca": {"hcas": [{"rdma_device": "mlx5_0", "is_vf": False, "ports": [port]}]}, "address": "a", "thresholds": thresholds}
    out.update(fixed)
    return out


def test_a_row_that_is_there_is_never_called_missing():
    """Before: a unit in a row's value dropped the row, and the run failed with 'no threshold for a link rate of 200 Gb/s:
    ... or a row of verify_traffic_thresholds at or below that rate' although the row was there."""
    table = {100: DEFAULT[100], 200: {"min_bw_gbps": "180 Gb/s", "max_lat_us": 6}}
    run = traffic.plan({"a": node(table), "b": node(table)})["runs"][0]
    assert "or a row of verify_traffic_thresholds" not in run["problem"]
    assert run["problem"].startswith("no usable threshold for a link rate of 200 Gb/s: a: verify_traffic_thresholds[200]"
                                     ".min_bw_gbps is '180 Gb/s'")
    ok = traffic.plan({"a": node(DEFAULT), "b": node(DEFAULT)})["runs"][0]
    assert (ok["problem"], ok["min_bw_gbps"], ok["max_lat_us"]) == (None, 180.0, 6.0)


@pytest.mark.parametrize("value, ok", [(60, True), ("120", True), (1, True), (0, False), (-5, False), (2.5, False),
                                       ("soon", False), (None, True)])
def test_the_traffic_timeout_is_a_whole_number_of_seconds_from_one(value, ok):
    problem = traffic.timeout_problem({"verify_traffic": True, "verify_traffic_timeout": value})
    assert (problem is None) is ok, problem
    if not ok:
        assert problem.startswith("verify_traffic_timeout: %r is not accepted" % (value,))
        assert "a whole number of seconds from 1" in problem
    # not checked when the traffic step is off
    assert traffic.timeout_problem({"verify_traffic": False, "verify_traffic_timeout": value}) is None
