# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""cli.main: state file round trip, the call log, tool availability, the fabricsim admin tool."""

import io
import json
import os
import subprocess
import sys

from conftest import LAB, node_file

from fabricsim import cli
from fabricsim import state as sim_state


def write_node(sim_env, name):
    path = sim_env / "state.json"
    path.write_text(json.dumps(node_file(name)))
    return path


def call(tool, *argv, stdin=None):
    out, err = io.StringIO(), io.StringIO()
    rc = cli.main(tool, list(argv), stdin=stdin, stdout=out, stderr=err)
    return rc, out.getvalue(), err.getvalue()


def log_lines(sim_env):
    path = sim_env / "calls.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def test_set_is_saved_and_logged(sim_env):
    write_node(sim_env, "cx6-vpi-eth-p1.json")
    rc, out, err = call("mstconfig", "-y", "-d", "0000:3b:00.0", "set", "LINK_TYPE_P1=IB")
    assert (rc, err) == (0, "") and out.endswith("Applying... Done!\n-I- Please reboot machine to load new configurations.\n")
    st = sim_state.load()
    assert st["adapters"][0]["params"]["LINK_TYPE_P1"] == {"current": 2, "next": 1}
    rc, out, _err = call("mstconfig", "-d", "0000:3b:00.0", "q", "LINK_TYPE_P1")
    assert rc == 0 and "IB(1)" in out
    log = log_lines(sim_env)
    assert [(x["tool"], x["kind"], x["rc"], x["device"]) for x in log] == [
        ("mstconfig", "write", 0, "0000:3b:00.0"), ("mstconfig", "query", 0, "0000:3b:00.0")]
    assert log[0]["argv"] == ["-y", "-d", "0000:3b:00.0", "set", "LINK_TYPE_P1=IB"]
    assert list(log[0]) == ["ts", "tool", "argv", "rc", "kind", "device"] and isinstance(log[0]["ts"], float)


def test_queries_do_not_rewrite_the_state_file(sim_env):
    path = write_node(sim_env, "cx6-vpi-eth-p1.json")
    call("fabricsim", "boot")
    before = os.stat(path).st_mtime_ns, path.read_text()
    for argv in (("mstconfig", "-d", "3b:00.0", "q"), ("rdma", "link"), ("ibstat",), ("ibv_devinfo",)):
        assert call(*argv)[0] == 0
    assert (os.stat(path).st_mtime_ns, path.read_text()) == before
    assert [x["kind"] for x in log_lines(sim_env)] == ["write", "query", "read", "read", "read"]


def test_aborted_set_is_a_query_not_a_write(sim_env):
    write_node(sim_env, "cx6-vpi-eth-p1.json")
    rc, out, _err = call("mstconfig", "-d", "0000:3b:00.0", "set", "SRIOV_EN=1", stdin="")
    assert rc == 2 and out.endswith("-E- Aborted by user.\n")
    assert log_lines(sim_env)[0]["kind"] == "query"
    assert sim_state.load()["adapters"][0]["params"].get("SRIOV_EN") is None


def test_tools_exist_per_flavour(sim_env):
    write_node(sim_env, "cx6-vpi-eth-p1.json")  # mstflint, no OFED
    for tool in ("mlxconfig", "mlxfwreset", "mst", "ibdev2netdev"):
        assert call(tool, "q") == (127, "", "%s: command not found\n" % tool)
    write_node(sim_env, "cx5-vpi-mft.json")
    assert call("mstconfig", "q")[0] == 127
    assert call("mst", "status")[0] == 0
    write_node(sim_env, "cx7-and-cx4lx.json")
    assert call("ibdev2netdev")[1].startswith("mlx5_0 port 1 ==> enp1s0f0np0 (Up)\n")


def test_admin_boot_power_cycle_show(sim_env):
    path = write_node(sim_env, "cx7-and-cx4lx.json")
    assert call("mlxconfig", "-y", "-d", "0000:c1:00.0", "set", "NUM_OF_VFS=8")[0] == 0
    rc, out, _err = call("fabricsim", "show")
    show = json.loads(out)
    assert rc == 0 and [f["rdma"] for f in show["functions"]] == ["mlx5_0", "mlx5_1", "mlx5_2"]
    cx7 = next(a for a in show["adapters"] if a["model"] == "ConnectX-7")
    assert cx7["params"]["NUM_OF_VFS"] == {"current": 16, "default": 16, "next": 8}
    call("fabricsim", "boot")
    assert "NUM_OF_VFS" in sim_state.load(str(path))["adapters"][0]["params"]
    assert sim_state.load(str(path))["adapters"][0]["params"]["NUM_OF_VFS"]["current"] == 16
    call("fabricsim", "power-cycle")
    assert sim_state.load(str(path))["adapters"][0]["params"]["NUM_OF_VFS"]["current"] == 8
    assert call("fabricsim", "frobnicate")[0] == 2


def test_missing_state_file(sim_env):
    rc, out, err = call("rdma", "link")
    assert rc == 1 and out == "" and "no state file" in err


def test_python_m_entry_point(sim_env):
    write_node(sim_env, "cx6-vpi-eth-p1.json")
    env = dict(os.environ, PYTHONPATH=LAB)
    proc = subprocess.run([sys.executable, "-m", "fabricsim.cli", "rdma", "system"], env=env, capture_output=True, text=True,
                          check=False, stdin=subprocess.DEVNULL)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "netns shared copy-on-fork on\n", "")
    proc = subprocess.run([sys.executable, "-m", "fabricsim.cli", "mstconfig", "-d", "0000:3b:00.0", "set", "SRIOV_EN=1"],
                          env=env, capture_output=True, text=True, check=False, stdin=subprocess.DEVNULL)
    assert proc.returncode == 2 and proc.stdout.endswith("(y/n) [n] : -E- Aborted by user.\n")


def test_installed_wrapper_runs_isolated_and_keeps_its_bytecode(sim_env):
    """The wrapper node.py installs (``python3 -IS``): the tool's answer, and the simulator compiled once into
    the pycache prefix, since the checkout is mounted read-only in the nodes."""
    from fabricsim import node  # pylint: disable=import-outside-toplevel

    write_node(sim_env, "cx6-vpi-eth-p1.json")
    pycache = sim_env / "pycache"
    script = sim_env / "rdma"
    script.write_text(node.WRAPPER.format(tool="rdma", lib=LAB, pycache=pycache).replace("/usr/bin/python3", sys.executable, 1))
    script.chmod(0o755)
    assert script.read_text().startswith("#!%s -IS\n" % sys.executable)
    proc = subprocess.run([str(script), "system"], capture_output=True, text=True, check=False, stdin=subprocess.DEVNULL)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "netns shared copy-on-fork on\n", "")
    compiled = {path.name.split(".")[0] for path in pycache.rglob("*.pyc")}
    assert {"cli", "rdma", "state"} <= compiled and "mlxconfig" not in compiled
