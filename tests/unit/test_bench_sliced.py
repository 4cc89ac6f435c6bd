# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""scripts/bench.py's sliced workflow: how it slices, and what its checks and table make of a result (so that a
bench of half an hour does not fail at its end)."""

from __future__ import annotations

import importlib.util
import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _bench():
    spec = importlib.util.spec_from_file_location("fabric_bench", os.path.join(ROOT, "scripts", "bench.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _run(hosts, wall, changed=0, failed=0, writes=0):
    return {"rc": 0, "wall_s": wall, "user_s": 1.0, "sys_s": 0.5, "hosts": hosts, "tasks_run": 10 * hosts, "tasks_changed": changed,
            "failed": failed, "wall_per_host_s": round(wall / hosts, 3),
            "firmware_totals": {"write": writes, "reboots": 0, "query": 0, "reset": 0, "adapters": hosts, "adapters_not_one_query": 0}}


def _sliced(slice_walls, changed=0):
    runs = []
    for index, wall in enumerate(slice_walls):
        run = _run(3, wall, changed=changed if index == 1 else 0)
        run.update(cached_hosts_before=3 * index, to_reference=round(wall / 10.0, 2))
        runs.append(run)
    return {"hosts": 12, "slices": 4, "forks": 20, "slice_hosts": [3, 3, 3, 3], "reference": _run(3, 10.0), "slice_runs": runs,
            "cached_hosts": 12, "fabric_job": _run(12, 20.0), "slices_wall_s": sum(slice_walls)}


def test_slices_take_every_nth_host():
    bench = _bench()
    hosts = ["fleet%03d" % n for n in range(1, 11)]
    slices = bench.slices_of(hosts, 4)
    assert slices == [["fleet001", "fleet005", "fleet009"], ["fleet002", "fleet006", "fleet010"], ["fleet003", "fleet007"],
                      ["fleet004", "fleet008"]]
    assert bench.slices_of(hosts[:2], 4) == [["fleet001"], ["fleet002"]]


def test_checks_and_table_of_a_clean_sliced_run():
    bench = _bench()
    data = {"fleet": [{"hosts": 12, "sliced": _sliced([9.0, 10.5, 10.9, 9.9])}]}
    found = {c["goal"].split(": ", 1)[1]: c for c in bench.checks(data)}
    assert [c["met"] for c in found.values()] == [True, True], found
    assert "slice 3 x1.09" in found["no slice takes longer than the reference run of as many hosts without the fact cache "
                                    "(10 % allowed for noise)"]["measured"]
    lines = bench.sliced_table(data["fleet"][0]["sliced"], 12)
    assert lines[1].startswith("| sliced workflow, 12 fleet nodes in 4 slices (forks 20) |")
    assert lines[4] == "| slice 1: `nodes.yml`, fact cache | 3 | 9.0 | 3.000 | 0.90 | 1.5 | 30 | 0 | 0 | 0 | 0 | 0 |"
    assert lines[-1] == "| the 4 slices one after the other | 12 | 40.3 | | | | | | | | | |"


def test_a_change_or_a_slow_slice_fails_its_check():
    bench = _bench()
    data = {"fleet": [{"hosts": 12, "sliced": _sliced([9.0, 12.0, 10.0, 10.0], changed=2)}]}
    assert [c["met"] for c in bench.checks(data)] == [False, False]


def test_a_skipped_sliced_run_is_said():
    bench = _bench()
    assert bench.sliced_table({"skipped": "about 900 s needed, 60 s left"}, 200) == [
        "", "Sliced workflow over 200 fleet nodes: skipped: about 900 s needed, 60 s left"]
    assert bench.checks({"fleet": [{"hosts": 200, "sliced": {"skipped": "x"}}]}) == []
