# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A port's health in the simulator: counters in sysfs, a degraded rate, flaps (``fabricsim port``)."""

import copy
import io
import json

import pytest
from conftest import CX6

from fabricsim import cli, porthealth, sysfs
from fabricsim import state as sim_state
from fabricsim.fusefs import SysfsOverlay

PORT = "/class/infiniband/mlx5_0/ports/1/"


def call(*argv):
    out, err = io.StringIO(), io.StringIO()
    rc = cli.main("fabricsim", list(argv), stdout=out, stderr=err)
    return rc, out.getvalue(), err.getvalue()


def node(**extra):
    desc = copy.deepcopy(CX6)
    desc["fabric_view"] = {"0000:3b:00.0": {"state": "ACTIVE", "lid": 3, "sm_lid": 1},
                           "0000:3b:00.1": {"state": "ACTIVE", "lid": 4, "sm_lid": 1}}
    desc.update(extra)
    return desc


@pytest.fixture
def lab_node(sim_env):
    (sim_env / "state.json").write_text(json.dumps(node()))
    return sim_env


def read(path):
    entries = sysfs.tree(sim_state.load())
    content = entries[sysfs.resolve(entries, path)].content
    return content() if callable(content) else content


def test_every_kernel_counter_file_is_there_and_zero(lab_node):
    del lab_node
    entries = sysfs.tree(sim_state.load())
    names = {p.rsplit("/", 1)[1] for p in entries if "/mlx5_0/ports/1/counters/" in p}
    assert {"symbol_error", "link_error_recovery", "link_downed", "port_rcv_errors", "port_rcv_remote_physical_errors",
            "excessive_buffer_overrun_errors", "local_link_integrity_errors", "port_xmit_discards", "port_xmit_data",
            "port_rcv_data", "port_xmit_packets", "port_rcv_packets"} <= names
    assert read(PORT + "counters/symbol_error") == "0\n"


def test_rate_follows_the_kernel_layout():
    assert porthealth.rate_text(4, "HDR") == "200 Gb/sec (4X HDR)"
    assert porthealth.rate_text(1, "HDR") == "50 Gb/sec (1X HDR)"
    assert porthealth.rate_text(4, "FDR") == "56 Gb/sec (4X FDR)"
    assert porthealth.rate_text(1, "SDR") == "2.5 Gb/sec (1X SDR)"
    assert porthealth.parse_rate("100 Gb/sec (4X EDR)") == (4, "EDR")
    assert porthealth.one_down("HDR") == "EDR" and porthealth.one_down("FDR10") == "QDR"


def test_width_and_speed_degrade_the_rate_file_and_ibstat(lab_node):
    del lab_node
    assert read(PORT + "rate") == "200 Gb/sec (4X HDR)\n"
    assert call("port", "mlx5_0", "width", "1X")[0] == 0
    assert read(PORT + "rate") == "50 Gb/sec (1X HDR)\n"
    assert call("port", "mlx5_0", "width", "4")[0] == 0
    assert call("port", "mlx5_0", "speed", "down")[0] == 0
    assert read(PORT + "rate") == "100 Gb/sec (4X EDR)\n"
    out = io.StringIO()
    assert cli.main("ibstat", ["mlx5_0"], stdout=out, stderr=io.StringIO()) == 0
    assert "\t\tRate: 100\n" in out.getvalue() and "State: Active" in out.getvalue()
    assert read("/class/infiniband/mlx5_1/ports/1/rate") == "200 Gb/sec (4X HDR)\n"  # the other port keeps its own
    assert call("port", "mlx5_0", "clear")[0] == 0
    assert "port_health" not in sim_state.load()
    assert read(PORT + "rate") == "200 Gb/sec (4X HDR)\n"


def test_a_rising_counter_grows_between_two_reads(lab_node, monkeypatch):
    del lab_node
    clock = [1000.0]
    monkeypatch.setattr(porthealth.time, "time", lambda: clock[0])
    assert call("port", "0000:3b:00.0", "counter", "symbol_error", "7", "5")[0] == 0
    entry = sim_state.load()["port_health"]["0000:3b:00.0"]
    assert entry == {"counters": {"symbol_error": 7}, "rising": {"symbol_error": 5.0}, "since": 1000.0}
    content = sysfs.tree(sim_state.load())["/devices/pci0000:3a/0000:3a:00.0/0000:3b:00.0/infiniband/mlx5_0/ports/1/"
                                           "counters/symbol_error"].content
    content.clock = lambda: clock[0]
    assert content() == "7\n"
    clock[0] += 2
    assert content() == "17\n"
    # a later command folds what it gained so far: the counter never goes back
    assert call("port", "mlx5_0", "counter", "symbol_error", "17")[0] == 0
    assert sim_state.load()["port_health"]["0000:3b:00.0"] == {"counters": {"symbol_error": 17}}


def test_the_fuse_read_calls_a_live_counter(lab_node, tmp_path):
    del lab_node
    assert call("port", "mlx5_0", "counter", "port_rcv_errors", "3", "1000")[0] == 0
    overlay = SysfsOverlay(str(tmp_path), str(tmp_path / "state.json"))
    entries = sysfs.tree(sim_state.load())
    path = sysfs.resolve(entries, PORT + "counters/port_rcv_errors")
    first = int(overlay.read(path, 64, 0, 0))
    assert first >= 3
    assert int(overlay.read(path, 64, 0, 0)) >= first


def test_flap_counts_link_downed_and_the_port_stays_active(lab_node):
    del lab_node
    assert call("port", "mlx5_0", "flap")[0] == 0
    assert call("port", "mlx5_0", "flap", "2")[0] == 0
    assert read(PORT + "counters/link_downed") == "3\n"
    assert read(PORT + "state") == "4: ACTIVE\n" and read(PORT + "phys_state") == "5: LinkUp\n"


def test_link_down_and_up(lab_node):
    del lab_node
    assert call("port", "mlx5_0", "link", "down")[0] == 0
    assert read(PORT + "state") == "1: DOWN\n" and read(PORT + "phys_state") == "3: Disabled\n"
    assert call("port", "mlx5_0", "link", "up")[0] == 0
    assert read(PORT + "state") == "4: ACTIVE\n"
    assert read(PORT + "counters/link_downed") == "1\n"


def test_power_on_starts_counters_from_zero_and_keeps_the_link_fault(lab_node):
    del lab_node
    call("port", "mlx5_0", "width", "1")
    call("port", "mlx5_0", "counter", "symbol_error", "40")
    assert call("boot")[0] == 0
    assert read(PORT + "counters/symbol_error") == "0\n"
    assert read(PORT + "rate") == "50 Gb/sec (1X HDR)\n"


@pytest.mark.parametrize("argv, says", [
    (["port", "mlx5_9", "flap"], "no such device mlx5_9"),
    (["port", "mlx5_0", "counter", "symbol_errors", "1"], "no such counter"),
    (["port", "mlx5_0", "counter", "symbol_error", "-1"], "must be a number, 0 or more"),
    (["port", "mlx5_0", "width", "3"], "width must be one of 1, 2, 4, 8, 12"),
    (["port", "mlx5_0", "speed", "GDR"], "speed must be one of"),
    (["port", "mlx5_0", "flap", "0"], "flap needs a count"),
    (["port", "mlx5_0", "wiggle"], "unknown action wiggle"),
    (["port", "mlx5_0"], "no action"),
])
def test_bad_port_commands_are_refused_and_change_nothing(lab_node, argv, says):
    del lab_node
    rc, _out, err = call(*argv)
    assert rc == 2 and says in err, err
    assert "port_health" not in sim_state.load()


def test_state_refuses_a_bad_section():
    with pytest.raises(sim_state.StateError, match="port_health.0000:3b:00.0.link must be up or down"):
        sim_state.normalize(node(port_health={"0000:3b:00.0": {"link": "sideways"}}))


def test_ibsim_carries_the_switch_side_of_a_link():
    from fabricsim import fabric  # pylint: disable=import-outside-toplevel
    states = {"node01": sim_state.normalize(node())}
    assert fabric.perf_set(states, "node01", "0000:3b:00.1", "symbol_error", 12) == \
        'PerformanceSet "Switch1"[2] PortCounters.SymbolErrorCounter=12'
    with pytest.raises(ValueError, match="not cabled"):
        fabric.perf_set(states, "node02", "0000:3b:00.0", "symbol_error", 1)
    with pytest.raises(ValueError, match="no counter ibsim keeps"):
        fabric.perf_set(states, "node01", "0000:3b:00.0", "port_xmit_data", 1)
