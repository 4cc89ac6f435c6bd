# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""modprobe (kmod.py), the modules loaded at power-on (modules-load.d) and /sys/module."""

import io
import json
import os

import pytest

from fabricsim import cli, kmod, sysfs
from fabricsim import state as sim_state


def root():
    return os.environ["FABRICSIM_ROOT"]


def write(rel, text):
    path = os.path.join(root(), rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)


def modules_in_sysfs(state):
    return sorted({p.split("/")[2] for p in sysfs.tree(state) if p.startswith("/module/")})


def test_power_on_loads_what_a_host_with_the_pf_driver_has(make_state):
    st = make_state()
    assert sim_state.loaded_modules(st) == ["ib_core", "ib_uverbs", "mlx5_core", "mlx5_ib"]
    assert modules_in_sysfs(st) == ["ib_core", "ib_uverbs", "mlx5_core", "mlx5_ib"]
    assert "/module/ib_ipoib" not in sysfs.tree(st)


def test_power_on_loads_modules_load_d_with_dependencies(make_state):
    write("etc/modules-load.d/rdma.conf", "# comment\nib_ipoib\n; other comment\nrdma-ucm\n\noverlay\n")
    st = make_state()
    sim_state.power_on(st)
    assert sim_state.loaded_modules(st) == ["ib_cm", "ib_core", "ib_ipoib", "ib_uverbs", "iw_cm", "mlx5_core", "mlx5_ib",
                                            "rdma_cm", "rdma_ucm"]
    assert sysfs.tree(st)["/module/ib_cm/refcnt"].content == "2\n"  # ib_ipoib, rdma_cm
    assert sysfs.tree(st)["/module/rdma_ucm/refcnt"].content == "0\n"


def test_etc_hides_usr_lib_file_of_the_same_name(make_state):
    write("usr/lib/modules-load.d/a.conf", "ib_umad\n")
    write("etc/modules-load.d/a.conf", "ib_ipoib\n")
    write("run/modules-load.d/b.conf", "ib_umad\n")
    assert sim_state.modules_load_d() == ["ib_ipoib", "ib_umad"]
    write("run/modules-load.d/b.conf", "")
    assert sim_state.modules_load_d() == ["ib_ipoib"]


def test_state_can_name_its_boot_modules():
    desc = {"hostname": "n", "kernel": {"modules": ["mlx5_core"]}, "adapters": []}
    st = sim_state.normalize(desc)
    assert sim_state.loaded_modules(st) == ["mlx5_core"]
    assert "/module/ib_core/parameters/netns_mode" not in sysfs.tree(st)


def test_modprobe_loads_with_dependencies_and_is_idempotent(make_state):
    st = make_state()
    res = kmod.run(st, ["ib_ipoib"])
    assert (res.rc, res.stdout, res.stderr, res.kind) == (0, "", "", "write")
    assert {"ib_ipoib", "ib_cm"} <= set(sim_state.loaded_modules(st))
    assert kmod.run(st, ["ib_ipoib"]).kind == "read"
    res = kmod.run(st, ["--first-time", "ib_ipoib"])
    assert res.rc == 1 and "Module already in kernel" in res.stderr


def test_modprobe_all_and_remove(make_state):
    st = make_state()
    assert kmod.run(st, ["-a", "ib_umad", "rdma_ucm"]).rc == 0
    assert {"ib_umad", "rdma_ucm", "rdma_cm"} <= set(sim_state.loaded_modules(st))
    res = kmod.run(st, ["-r", "rdma_cm"])
    assert res.rc == 1 and res.stderr == "modprobe: FATAL: Module rdma_cm is in use.\n"
    assert kmod.run(st, ["-r", "rdma_ucm"]).rc == 0
    assert "rdma_ucm" not in sim_state.loaded_modules(st)
    assert kmod.run(st, ["-n", "ib_ipoib"]).rc == 0
    assert "ib_ipoib" not in sim_state.loaded_modules(st)


def test_mlx_compat_only_with_ofed_modules_on_disk(make_state):
    st = make_state()
    res = kmod.run(st, ["mlx_compat"])
    assert res.rc == 1 and res.stderr.startswith("modprobe: FATAL: Module mlx_compat not found in directory /lib/modules/")
    assert kmod.run(st, ["-q", "mlx_compat"]).stderr == ""
    write("lib/modules/6.1.0-28-amd64/updates/dkms/mlx_compat.ko", "")
    assert kmod.run(st, ["mlx_compat"]).rc == 0
    sim_state.power_on(st)
    assert "mlx_compat" in sim_state.loaded_modules(st)


def test_ofed_state_boots_with_mlx_compat(make_state):
    assert "mlx_compat" in sim_state.loaded_modules(make_state(tools={"ofed": True}))


@pytest.mark.parametrize("argv, sim, real", [
    (["ib_ipoib"], ["ib_ipoib"], None),
    (["ib-ipoib", "debug_level=1"], ["ib-ipoib"], None),
    (["overlay"], [], ["overlay"]),
    (["-a", "-q", "ib_umad", "overlay", "br_netfilter"], ["ib_umad"], ["-a", "-q", "overlay", "br_netfilter"]),
    (["-c"], [], ["-c"]),
    (["--show-depends", "ib_ipoib"], [], ["--show-depends", "ib_ipoib"]),
    ([], [], []),
])
def test_split_between_simulator_and_real_modprobe(argv, sim, real):
    assert kmod.split(argv) == (sim, real)


def test_cli_records_the_load_and_passes_unknown_names_through(monkeypatch, make_state, sim_env):
    sim_state.save(make_state())
    calls = []

    def fake_execv(path, args):
        calls.append((path, args))
        raise SystemExit(0)

    monkeypatch.setattr(kmod, "REAL_PATHS", (str(sim_env / "modprobe.distrib"),))
    (sim_env / "modprobe.distrib").write_text("")
    monkeypatch.setattr(os, "execv", fake_execv)
    out, err = io.StringIO(), io.StringIO()
    assert cli.main("modprobe", ["ib_umad"], stdout=out, stderr=err) == 0
    assert "ib_umad" in sim_state.loaded_modules(sim_state.load())
    with open(os.environ["FABRICSIM_LOG"], encoding="utf-8") as handle:
        entry = json.loads(handle.read().splitlines()[-1])
    assert entry["tool"] == "modprobe" and entry["argv"] == ["ib_umad"] and entry["kind"] == "write"
    with pytest.raises(SystemExit):
        cli.main("modprobe", ["-a", "ib_ipoib", "overlay"], stdout=out, stderr=err)
    assert calls == [(str(sim_env / "modprobe.distrib"), ["modprobe", "-a", "overlay"])]
    assert "ib_ipoib" in sim_state.loaded_modules(sim_state.load())


def test_exec_real_without_a_real_modprobe(monkeypatch, capsys):
    monkeypatch.setattr(kmod, "REAL_PATHS", ("/nonexistent/modprobe.distrib",))
    assert kmod.exec_real(["overlay"]) == 127
    assert "real modprobe is not installed" in capsys.readouterr().err
