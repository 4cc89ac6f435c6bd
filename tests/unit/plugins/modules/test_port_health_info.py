# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""port_health_info and module_utils/porthealth on sysfs trees laid out as the kernel writes them."""

from __future__ import annotations

import json
import os

import pytest

from ansible.module_utils.testing import patch_module_args

from ansible_collections.fabric.infiniband.plugins.module_utils import pending
from ansible_collections.fabric.infiniband.plugins.module_utils import porthealth
from ansible_collections.fabric.infiniband.plugins.modules import port_health_info

# (rate file, state, phys_state) as recorded: ibstatus on a ConnectX-7 (tool-outputs.md 6), the kernel's
# rate_show() for a 1X link and an old kernel's SDR text without the speed name.
RATES = [
    ("200 Gb/sec (4X HDR)", ("4X", "HDR")),
    ("400 Gb/sec (4X NDR)", ("4X", "NDR")),
    ("50 Gb/sec (1X HDR)", ("1X", "HDR")),
    ("56 Gb/sec (4X FDR)", ("4X", "FDR")),
    ("2.5 Gb/sec (1X SDR)", ("1X", "SDR")),
    ("10 Gb/sec (4X)", ("4X", "SDR")),
    ("garbage", (None, None)),
    (None, (None, None)),
]


@pytest.mark.parametrize("text, expected", RATES)
def test_rate_layout(text, expected):
    assert porthealth.parse_rate_layout(text) == expected


def test_counter_and_growth():
    assert porthealth.parse_counter("17\n") == 17 and porthealth.parse_counter("x") is None
    assert porthealth.parse_counter(None) is None
    first = {"symbol_error": 5, "link_downed": 3, "port_rcv_errors": None}
    second = {"symbol_error": 9, "link_downed": 1, "port_rcv_errors": 2}
    # link_downed went down: cleared in between, so it gained at least its new value
    assert porthealth.growth(first, second) == {"symbol_error": 4, "link_downed": 1, "port_rcv_errors": None}


def test_flaps_since_the_last_run():
    port = {"name": "mlx5_0/1", "port_guid": "0x1", "counters": {"link_downed": 7}}
    assert porthealth.flaps_since(None, port, "b1") is None
    record = porthealth.flap_record([dict(port, counters={"link_downed": 5})], "b1", 1.0)
    assert record == {"boot": "b1", "read_at": 1.0, "ports": {"0x1": {"name": "mlx5_0/1", "link_downed": 5}}}
    assert porthealth.flaps_since(record, port, "b1") == 2
    assert porthealth.flaps_since(record, port, "b2") == 7  # rebooted: the counter started again
    assert porthealth.flaps_since(record, dict(port, port_guid="0x2"), "b1") is None
    assert porthealth.load_record("{bad") is None and porthealth.load_record('{"ports": []}') is None


def write(root, rel, text):
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as handle:
        handle.write(text + "\n")


def port_tree(root, device, bdf, rate="200 Gb/sec (4X HDR)", state="4: ACTIVE", phys="5: LinkUp", counters=None,
              device_id="0x101b", guid="0c42:a103:00aa:0010"):
    base = "class/infiniband/%s/ports/1/" % device
    write(root, base + "state", state)
    write(root, base + "phys_state", phys)
    write(root, base + "rate", rate)
    write(root, base + "link_layer", "InfiniBand")
    write(root, base + "gids/0", "fe80:0000:0000:0000:" + guid)
    for name in porthealth.COUNTERS:
        write(root, base + "counters/" + name, str((counters or {}).get(name, 0)))
    write(root, "bus/pci/devices/%s/vendor" % bdf, "0x15b3")
    write(root, "bus/pci/devices/%s/device" % bdf, device_id)
    os.symlink("../../../bus/pci/devices/" + bdf, os.path.join(root, "class/infiniband", device, "device"))


def run(capsys, monkeypatch, check=False, between=None, boot="boot-1", read_cost=0.0, **params):
    """Run the module on a fake clock: each read of a port's state (porthealth.read_port) takes ``read_cost`` seconds of it."""
    monkeypatch.setattr(pending, "boot_identity", lambda proc="/proc": boot)
    slept = []
    clock = [100.0]
    read_port = porthealth.read_port

    def timed_read_port(fs, device, port):
        clock[0] += read_cost
        return read_port(fs, device, port)

    def sleep(seconds):
        slept.append(round(seconds, 6))
        clock[0] += seconds
        if between:
            between()
    monkeypatch.setattr(porthealth, "read_port", timed_read_port)
    monkeypatch.setattr(port_health_info.time, "monotonic", lambda: clock[0])
    monkeypatch.setattr(port_health_info.time, "sleep", sleep)
    args = dict(params)
    if check:
        args["_ansible_check_mode"] = True
    with patch_module_args(args):
        with pytest.raises(SystemExit):
            port_health_info.main()
    result = json.loads(capsys.readouterr().out)
    result["_slept"] = slept
    return result


@pytest.fixture
def root(tmp_path):
    root = str(tmp_path / "sys")
    port_tree(root, "mlx5_0", "0000:3b:00.0")
    port_tree(root, "mlx5_1", "0000:3b:00.1", rate="50 Gb/sec (1X HDR)", guid="0c42:a103:00aa:0011",
              counters={"link_downed": 4, "symbol_error": 100})
    return root


def test_two_reads_an_interval_apart(capsys, monkeypatch, root, tmp_path):
    path = str(tmp_path / "state" / "port_health.json")

    def errors_rise():
        write(root, "class/infiniband/mlx5_1/ports/1/counters/symbol_error", "160")
    result = run(capsys, monkeypatch, between=errors_rise, sysfs_root=root, state_path=path, interval=2)
    assert result["changed"] is False and result["_slept"] == [2.0] and result["record_written"] is True
    one, two = result["ports"]
    assert one["name"] == "mlx5_0/1" and one["state"] == "ACTIVE" and one["physical_state"] == "LinkUp"
    assert (one["width"], one["speed"], one["model"], one["is_vf"]) == ("4X", "HDR", "ConnectX-6", False)
    assert two["width"] == "1X" and two["rate_gbps"] == 50 and two["pci_address"] == "0000:3b:00.1"
    assert two["counters"]["symbol_error"] == 160 and two["growth"]["symbol_error"] == 60
    assert two["link_downed_since_last_run"] is None  # no record yet
    with open(path) as handle:
        assert json.load(handle)["ports"]["0x0c42a10300aa0011"] == {"name": "mlx5_1/1", "link_downed": 4}
    # the next run sees the flaps since this one
    write(root, "class/infiniband/mlx5_1/ports/1/counters/link_downed", "6")
    result = run(capsys, monkeypatch, sysfs_root=root, state_path=path, interval=0, devices=["mlx5_1"])
    assert result["_slept"] == [] and [p["name"] for p in result["ports"]] == ["mlx5_1/1"]
    assert result["ports"][0]["link_downed_since_last_run"] == 2 and result["ports"][0]["growth"]["link_downed"] == 0


def test_the_ports_are_read_while_the_counters_run(capsys, monkeypatch, root, tmp_path):
    """The state of the ports is read between the two readings of the counters: the wait is the interval less that time,
    and none when it took longer; a counter that rises while the ports are read is counted."""
    path = str(tmp_path / "port_health.json")
    result = run(capsys, monkeypatch, sysfs_root=root, state_path=path, interval=2, read_cost=0.25)
    assert result["_slept"] == [1.5]  # two ports read at 0.25 s each
    result = run(capsys, monkeypatch, sysfs_root=root, state_path=path, interval=0.4, read_cost=0.25)
    assert result["_slept"] == []
    read_port = porthealth.read_port  # as the last run left it: it reads the port

    def errors_rise_while_read(fs, device, port):
        write(root, "class/infiniband/mlx5_1/ports/1/counters/symbol_error", "130")
        return read_port(fs, device, port)
    monkeypatch.setattr(porthealth, "read_port", errors_rise_while_read)
    result = run(capsys, monkeypatch, sysfs_root=root, state_path=path, interval=1)
    assert result["ports"][1]["growth"]["symbol_error"] == 30 and result["ports"][1]["counters"]["symbol_error"] == 130


def test_check_mode_writes_no_record(capsys, monkeypatch, root, tmp_path):
    path = str(tmp_path / "state" / "port_health.json")
    result = run(capsys, monkeypatch, check=True, sysfs_root=root, state_path=path, interval=0)
    assert result["record_written"] is False and not os.path.exists(path)


def test_a_bad_interval_is_refused(capsys, monkeypatch, root, tmp_path):
    result = run(capsys, monkeypatch, sysfs_root=root, state_path=str(tmp_path / "x.json"), interval=-1)
    assert result["failed"] and "interval must be between 0 and 300 seconds" in result["msg"]
