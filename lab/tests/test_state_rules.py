# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""State description loading and the state rules of lab/README.md."""

import errno
import json
import os
import threading

import pytest
from conftest import CX6, node_file

from fabricsim import state as sim_state


def names(st):
    return [(f.bdf, f.rdma, f.netdev, f.link_layer) for f in sim_state.functions(st)]


def test_defaults_filled_from_catalog(make_state):
    st = make_state()
    ad = st["adapters"][0]
    assert ad["firmware_version"] == "20.39.1002" and ad["psid"] == "MT_0000000223"
    assert sim_state.param_value(ad, "NUM_OF_VFS", "current") == 8
    assert sim_state.param_value(ad, "LINK_TYPE_P2", "next") == 1
    assert names(st) == [("0000:3b:00.0", "mlx5_0", "ibp59s0f0", "InfiniBand"), ("0000:3b:00.1", "mlx5_1", "ibp59s0f1", "InfiniBand")]


def test_example_nodes_load():
    cx6 = sim_state.normalize(node_file("cx6-vpi-eth-p1.json"))
    assert names(cx6) == [("0000:3b:00.0", "mlx5_0", "enp59s0f0np0", "Ethernet"), ("0000:3b:00.1", "mlx5_1", "ibp59s0f1", "InfiniBand")]
    two = sim_state.normalize(node_file("cx7-and-cx4lx.json"))
    # mlx5_N in PCI order over the node; the single-function CX-7 drops f<fn>
    assert names(two) == [("0000:01:00.0", "mlx5_0", "enp1s0f0np0", "Ethernet"), ("0000:01:00.1", "mlx5_1", "enp1s0f1np1", "Ethernet"),
                          ("0000:c1:00.0", "mlx5_2", "ibp193s0", "InfiniBand")]
    cx5 = sim_state.normalize(node_file("cx5-vpi-mft.json"))
    assert cx5["tools"]["firmware"] == "mft" and cx5["adapters"][0]["model"] == "ConnectX-5 VPI"
    assert names(cx5)[1][3] == "Ethernet"


def test_values_accept_names_and_are_stored_as_numbers():
    st = sim_state.normalize(node_file("cx6-vpi-eth-p1.json"))
    assert st["adapters"][0]["params"]["LINK_TYPE_P1"] == {"current": 2, "next": 2}
    again = sim_state.normalize(json.loads(sim_state.dumps(st)))
    assert sim_state.dumps(again) == sim_state.dumps(st)  # normalising is idempotent


def test_guids_derived_deterministically():
    desc = json.loads(json.dumps(CX6))
    del desc["adapters"][0]["node_guid"]
    a = sim_state.normalize(desc)
    b = sim_state.normalize(desc)
    assert a["adapters"][0]["node_guid"] == b["adapters"][0]["node_guid"]
    guid = int(a["adapters"][0]["node_guid"], 16)
    assert guid >> 40 == 0x0C42A1 and (guid >> 24) & 0xFFFF == 0x0300
    f0, f1 = sim_state.functions(a)
    assert f1.node_guid == f0.node_guid + 1 and f1.sys_image_guid == f0.node_guid and f0.port_guid == f0.node_guid
    desc["hostname"] = "other"
    assert sim_state.normalize(desc)["adapters"][0]["node_guid"] != a["adapters"][0]["node_guid"]


def test_bad_descriptions():
    desc = json.loads(json.dumps(CX6))
    desc["adapters"][0]["model"] = "ConnectX-9000"
    with pytest.raises(KeyError):
        sim_state.normalize(desc)
    desc = json.loads(json.dumps(CX6))
    desc["adapters"][0]["pci_address"] = "3b:00.1"
    with pytest.raises(sim_state.StateError):
        sim_state.normalize(desc)
    desc = json.loads(json.dumps(node_file("cx7-and-cx4lx.json")))
    desc["adapters"][1]["params"] = {"LINK_TYPE_P1": "IB"}  # Ethernet-only card
    with pytest.raises(sim_state.StateError):
        sim_state.normalize(desc)


def test_set_changes_next_only_and_boot_applies(make_state):
    st = make_state()
    ad = st["adapters"][0]
    sim_state.set_param(st, ad, "LINK_TYPE_P1", 2)
    assert (sim_state.param_value(ad, "LINK_TYPE_P1", "current"), sim_state.param_value(ad, "LINK_TYPE_P1", "next")) == (1, 2)
    assert sim_state.functions(st)[0].link_layer == "InfiniBand"
    sim_state.power_on(st)
    assert sim_state.param_value(ad, "LINK_TYPE_P1", "current") == 2
    assert names(st)[0] == ("0000:3b:00.0", "mlx5_0", "enp59s0f0np0", "Ethernet")
    assert st["runtime"]["boot_count"] == 1


def test_warm_reboot_does_not_apply_on_power_cycle_only_adapter(make_state):
    desc = node_file("cx7-and-cx4lx.json")
    st = make_state(desc)
    cx7 = next(a for a in st["adapters"] if a["model"] == "ConnectX-7")
    lx = next(a for a in st["adapters"] if a["model"] == "ConnectX-4 Lx EN")
    sim_state.set_param(st, cx7, "NUM_OF_VFS", 8)
    sim_state.set_param(st, lx, "SRIOV_EN", 1)
    sim_state.power_on(st)
    assert sim_state.param_value(cx7, "NUM_OF_VFS", "current") == 16  # DGX-like: still the old value
    assert sim_state.param_value(lx, "SRIOV_EN", "current") == 1
    sim_state.power_cycle(st)
    assert sim_state.param_value(cx7, "NUM_OF_VFS", "current") == 8


def test_boot_resets_runtime(make_state):
    st = make_state(params={"SRIOV_EN": 1})
    sim_state.set_numvfs(st, "0000:3b:00.0", 4)
    sim_state.set_mst_started(st, True)
    sim_state.set_node_desc(st, "0000:3b:00.0", "custom")
    sim_state.power_on(st)
    assert st["runtime"]["functions"]["0000:3b:00.0"]["sriov_numvfs"] == 0
    assert len(sim_state.functions(st)) == 2
    assert not sim_state.mst_started(st)
    assert sim_state.node_desc(st, sim_state.functions(st)[0]) == "node01 mlx5_0"


@pytest.mark.parametrize("conf,expected", [
    ("options ib_core netns_mode=0\n", "exclusive"),
    ("# comment\noptions ib_core netns_mode=1\n", "shared"),
    ("options ib_core foo=1 netns_mode=N\n", "exclusive"),
    ("options mlx5_core foo=1\n", None),
    ("#options ib_core netns_mode=0\n", None),
])
def test_boot_netns_mode_from_modprobe(make_state, sim_env, conf, expected):
    (sim_env / "root" / "etc" / "modprobe.d" / "ib_core.conf").write_text(conf)
    for kernel_mode in ("shared", "exclusive"):
        st = make_state()
        st["kernel"]["netns_mode"] = kernel_mode
        sim_state.power_on(st)
        assert sim_state.netns_mode(st) == (expected or kernel_mode)


def test_boot_netns_mode_last_file_wins(make_state, sim_env):
    d = sim_env / "root" / "etc" / "modprobe.d"
    (d / "a.conf").write_text("options ib_core netns_mode=0\n")
    (d / "b.conf").write_text("options ib_core netns_mode=1\n")
    (d / "c.txt").write_text("options ib_core netns_mode=0\n")  # not a .conf file
    st = make_state()
    sim_state.power_on(st)
    assert sim_state.netns_mode(st) == "shared"


def test_netns_set_rules(make_state, sim_env):
    st = make_state()
    sim_state.set_netns_mode(st, "exclusive")
    assert sim_state.netns_mode(st) == "exclusive"
    (sim_env / "root" / "run" / "netns" / "blue").write_text("")
    sim_state.set_netns_mode(st, "exclusive")  # same mode: no-op even with namespaces
    with pytest.raises(OSError) as exc:
        sim_state.set_netns_mode(st, "shared")
    assert exc.value.errno == errno.EBUSY
    assert sim_state.netns_mode(st) == "exclusive"


def test_sriov_numvfs_rules(make_state):
    st = make_state(params={"SRIOV_EN": 1, "NUM_OF_VFS": 4})
    pf = "0000:3b:00.0"
    with pytest.raises(OSError) as exc:
        sim_state.set_numvfs(st, pf, 5)
    assert exc.value.errno == errno.ERANGE
    sim_state.set_numvfs(st, pf, 2)
    vfs = [f for f in sim_state.functions(st) if f.is_vf]
    assert [(f.bdf, f.rdma, f.netdev, f.parent) for f in vfs] == [
        ("0000:3b:00.2", "mlx5_2", "ibp59s0f2", pf), ("0000:3b:00.3", "mlx5_3", "ibp59s0f3", pf)]
    sim_state.set_numvfs(st, pf, 2)  # same value: no-op
    with pytest.raises(OSError) as exc:
        sim_state.set_numvfs(st, pf, 3)
    assert exc.value.errno == errno.EBUSY
    sim_state.set_numvfs(st, pf, 0)
    sim_state.set_numvfs(st, "0000:3b:00.1", 1)
    # PF1's VFs follow PF0's range (offset = total VFs + 1)
    assert [f.bdf for f in sim_state.functions(st) if f.is_vf] == ["0000:3b:00.6"]


def test_sriov_needs_sriov_en_current(make_state):
    st = make_state(params={"SRIOV_EN": {"current": 0, "next": 1}})
    with pytest.raises(OSError) as exc:
        sim_state.set_numvfs(st, "0000:3b:00.0", 1)
    assert exc.value.errno == errno.ENOENT
    assert sim_state.total_vfs(st["adapters"][0]) == 0


def test_autoprobe_off_leaves_vfs_unbound_until_bind(make_state):
    st = make_state(params={"SRIOV_EN": 1})
    sim_state.set_autoprobe(st, "0000:3b:00.0", False)
    sim_state.set_numvfs(st, "0000:3b:00.0", 2)
    vf = sim_state.find_function(st, "0000:3b:00.2")
    assert vf.is_vf and not vf.bound and vf.rdma is None
    sim_state.set_vf_guid(st, "0000:3b:00.2", node_guid="02:00:00:00:00:00:00:01", port_guid="0x0200000000000001")
    assert sim_state.find_function(st, "0000:3b:00.2").node_guid == 0
    sim_state.bind(st, "0000:3b:00.2\n")
    vf = sim_state.find_function(st, "0000:3b:00.2")
    assert vf.bound and vf.rdma == "mlx5_2" and vf.node_guid == 0x0200000000000001
    with pytest.raises(OSError) as exc:
        sim_state.bind(st, "0000:3b:00.2")
    assert exc.value.errno == errno.EBUSY
    sim_state.unbind(st, "0000:3b:00.2")
    with pytest.raises(OSError) as exc:
        sim_state.unbind(st, "0000:3b:00.2")
    assert exc.value.errno == errno.ENODEV


def test_rdma_names_lowest_free(make_state):
    st = make_state(params={"SRIOV_EN": 1})
    sim_state.unbind(st, "0000:3b:00.0")
    assert [f.rdma for f in sim_state.functions(st)] == [None, "mlx5_1"]
    sim_state.set_numvfs(st, "0000:3b:00.1", 1)
    vf = [f for f in sim_state.functions(st) if f.is_vf][0]
    assert vf.rdma == "mlx5_0"


def test_fw_reset(make_state):
    st = make_state(params={"SRIOV_EN": 1})
    ad = st["adapters"][0]
    sim_state.set_param(st, ad, "LINK_TYPE_P2", 2)
    sim_state.set_numvfs(st, "0000:3b:00.0", 1)
    with pytest.raises(sim_state.FwResetError) as exc:
        sim_state.fw_reset(st, ad, 3)
    assert exc.value.kind == "failed"
    assert sim_state.param_value(ad, "LINK_TYPE_P2", "current") == 1
    sim_state.set_numvfs(st, "0000:3b:00.0", 0)
    with pytest.raises(sim_state.FwResetError) as exc:
        sim_state.fw_reset(st, ad, 1)
    assert exc.value.kind == "level"
    sim_state.fw_reset(st, ad, 3)
    assert sim_state.param_value(ad, "LINK_TYPE_P2", "current") == 2
    assert names(st)[1] == ("0000:3b:00.1", "mlx5_1", "enp59s0f1np1", "Ethernet")


def test_fw_reset_applies_on_power_cycle_only_adapter(make_state):
    st = make_state(node_file("cx7-and-cx4lx.json"))
    cx7 = next(a for a in st["adapters"] if a["model"] == "ConnectX-7")
    sim_state.set_param(st, cx7, "NUM_OF_VFS", 8)
    sim_state.fw_reset(st, cx7, 3)
    assert sim_state.param_value(cx7, "NUM_OF_VFS", "current") == 8


def test_bluefield_dpu_mode_has_no_reset_levels():
    desc = json.loads(json.dumps(CX6))
    desc["adapters"][0] = {"model": "BlueField-2", "pci_address": "0000:e1:00.0"}
    st = sim_state.normalize(desc)
    ad = st["adapters"][0]
    assert sim_state.param_value(ad, "INTERNAL_CPU_OFFLOAD_ENGINE", "current") == 0
    assert sim_state.reset_levels(ad) == ()
    desc["adapters"][0]["mode"] = "nic"
    nic = sim_state.normalize(desc)["adapters"][0]
    assert sim_state.param_value(nic, "INTERNAL_CPU_PAGE_SUPPLIER", "current") == 1
    assert 3 in sim_state.reset_levels(nic)


def test_port_states(make_state):
    st = make_state(node_file("cx6-vpi-eth-p1.json"))
    f0, f1 = sim_state.functions(st)
    assert sim_state.port_status(st, f0)["state"] == 4 and sim_state.port_status(st, f0)["lid"] == 0
    ps = sim_state.port_status(st, f1)
    assert (ps["state"], ps["phys_state"], ps["lid"], ps["sm_lid"]) == (2, 5, 0xFFFF, 0)
    del st["fabric"]["ports"]["0000:3b:00.1"]
    ps = sim_state.port_status(st, f1)
    assert (ps["state"], ps["phys_state"]) == (1, 2)
    st["fabric"]["ports"]["0000:3b:00.1"] = 2
    st["fabric_view"]["0000:3b:00.1"] = {"state": "ACTIVE", "lid": 3, "sm_lid": 1, "lmc": 0}
    ps = sim_state.port_status(st, f1)
    assert (ps["state"], ps["phys_state"], ps["lid"], ps["sm_lid"]) == (4, 5, 3, 1)


def test_transaction_saves_atomically_and_only_on_change(sim_env):
    path = str(sim_env / "state.json")
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(CX6, handle)
    sim_state.mutate(path, lambda st: None)
    raw = json.load(open(path, encoding="utf-8"))
    assert "runtime" not in raw  # nothing changed, nothing written
    sim_state.mutate(path, lambda st: sim_state.set_param(st, st["adapters"][0], "SRIOV_EN", 1))
    st = sim_state.load(path)
    assert st["adapters"][0]["params"]["SRIOV_EN"] == {"current": 0, "next": 1}
    assert not [n for n in os.listdir(sim_env) if n.startswith(".state.")]
    with pytest.raises(RuntimeError):
        with sim_state.transaction(path) as st:
            sim_state.set_param(st, st["adapters"][0], "SRIOV_EN", 0)
            raise RuntimeError("boom")
    assert sim_state.load(path)["adapters"][0]["params"]["SRIOV_EN"]["next"] == 1


def test_lock_serialises_writers(sim_env):
    path = str(sim_env / "state.json")
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(CX6, handle)

    def bump():
        for _i in range(10):
            sim_state.mutate(path, lambda st: st.__setitem__("counter", st.get("counter", 0) + 1))

    threads = [threading.Thread(target=bump) for _i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sim_state.load(path)["counter"] == 40


def test_description_edits_keep_runtime_consistent(make_state):
    st = make_state(node_file("cx7-and-cx4lx.json"))
    sim_state.set_numvfs(st, "0000:c1:00.0", 2)
    desc = json.loads(sim_state.dumps(st))
    desc["adapters"] = [a for a in desc["adapters"] if a["model"] == "ConnectX-7"]
    desc["adapters"].append({"model": "ConnectX-5 VPI", "pci_address": "0000:86:00.0"})
    st = sim_state.normalize(desc)
    assert sorted(st["runtime"]["functions"]) == ["0000:86:00.0", "0000:86:00.1", "0000:c1:00.0", "0000:c1:00.1", "0000:c1:00.2"]
    assert [f.rdma for f in sim_state.functions(st)] == ["mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3", "mlx5_4"]
