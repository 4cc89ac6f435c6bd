# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The simulated sysfs tree (tool-outputs.md section 9) and the kernel's write rules."""

import errno
import posixpath
import time

import pytest
from conftest import node_file

from fabricsim import state as sim_state
from fabricsim import sysfs
from fabricsim.sysfs import Dir, File, Link

CX7_VIEW = {"state": "ACTIVE", "lid": 48, "sm_lid": 48, "lmc": 0, "rate": "200 Gb/sec (4X HDR)", "cap_mask": "0xa751e84a"}


def cx7_state():
    desc = node_file("cx7-and-cx4lx.json")
    desc["adapters"][0]["node_guid"] = "0xc470bd0300cf4964"
    desc["fabric_view"] = {"0000:c1:00.0": CX7_VIEW}
    return sim_state.normalize(desc)


def read(st, path):
    entries = sysfs.tree(st)
    entry = entries[sysfs.resolve(entries, path)]
    assert isinstance(entry, File), (path, entry)
    return entry.content


def test_infiniband_device_files():
    st = cx7_state()
    ib = "/class/infiniband/mlx5_2/"
    expected = {
        "node_type": "1: CA\n", "node_guid": "c470:bd03:00cf:4964\n", "sys_image_guid": "c470:bd03:00cf:4964\n",
        "fw_ver": "28.40.1000\n", "hca_type": "MT4129\n", "board_id": "MT_0000000834\n", "node_desc": "node02 mlx5_2\n",
        "hw_rev": "0\n",
        "ports/1/state": "4: ACTIVE\n", "ports/1/phys_state": "5: LinkUp\n", "ports/1/rate": "200 Gb/sec (4X HDR)\n",
        "ports/1/lid": "0x30\n", "ports/1/sm_lid": "0x30\n", "ports/1/lid_mask_count": "0\n", "ports/1/sm_sl": "0\n",
        "ports/1/cap_mask": "0xa751e84a\n", "ports/1/link_layer": "InfiniBand\n",
        "ports/1/gids/0": "fe80:0000:0000:0000:c470:bd03:00cf:4964\n", "ports/1/gids/1": ":".join(["0000"] * 8) + "\n",
        "ports/1/pkeys/0": "0xffff\n", "ports/1/pkeys/1": "0x0000\n", "ports/1/gid_attrs/types/0": "IB/RoCE v1\n",
        "device/vendor": "0x15b3\n", "device/device": "0x1021\n", "device/class": "0x020700\n", "device/numa_node": "1\n",
    }
    for rel, content in expected.items():
        assert read(st, ib + rel) == content, rel
    entries = sysfs.tree(st)
    assert entries["/class/infiniband/mlx5_2"] == Link("../../devices/pci0000:c0/0000:c0:00.0/0000:c1:00.0/infiniband/mlx5_2")
    assert entries["/devices/pci0000:c0/0000:c0:00.0/0000:c1:00.0/infiniband/mlx5_2/device"] == Link("../../../0000:c1:00.0")
    assert sysfs.resolve(entries, ib + "device") == "/devices/pci0000:c0/0000:c0:00.0/0000:c1:00.0"


def test_port_states_in_sysfs_follow_fabric():
    st = sim_state.normalize(node_file("cx6-vpi-eth-p1.json"))
    assert read(st, "/class/infiniband/mlx5_0/ports/1/link_layer") == "Ethernet\n"
    assert read(st, "/class/infiniband/mlx5_0/ports/1/state") == "4: ACTIVE\n"
    assert read(st, "/class/infiniband/mlx5_0/ports/1/lid") == "0x0\n"
    assert read(st, "/class/infiniband/mlx5_0/ports/1/gid_attrs/types/1") == "RoCE v2\n"
    assert read(st, "/class/infiniband/mlx5_0/ports/1/gid_attrs/ndevs/0") == "enp59s0f0np0\n"
    assert read(st, "/class/infiniband/mlx5_0/ports/1/gids/0") == "fe80:0000:0000:0000:0e42:a1ff:feaa:0010\n"
    assert read(st, "/class/infiniband/mlx5_1/ports/1/state") == "2: INIT\n"
    assert read(st, "/class/infiniband/mlx5_1/ports/1/lid") == "0xffff\n"
    del st["fabric"]["ports"]["0000:3b:00.1"]
    assert read(st, "/class/infiniband/mlx5_1/ports/1/state") == "1: DOWN\n"
    assert read(st, "/class/infiniband/mlx5_1/ports/1/phys_state") == "2: Polling\n"


def test_pci_class_follows_link_type_current():
    st = sim_state.normalize(node_file("cx6-vpi-eth-p1.json"))
    assert read(st, "/bus/pci/devices/0000:3b:00.0/class") == "0x020000\n"
    assert read(st, "/bus/pci/devices/0000:3b:00.1/class") == "0x020700\n"
    sim_state.set_param(st, st["adapters"][0], "LINK_TYPE_P1", 1)
    assert read(st, "/bus/pci/devices/0000:3b:00.0/class") == "0x020000\n"  # Next Boot only
    sim_state.power_on(st)
    assert read(st, "/bus/pci/devices/0000:3b:00.0/class") == "0x020700\n"


def test_netdevs():
    st = sim_state.normalize(node_file("cx6-vpi-eth-p1.json"))
    assert read(st, "/class/net/enp59s0f0np0/type") == "1\n"
    assert read(st, "/class/net/enp59s0f0np0/address") == "0c:42:a1:aa:00:10\n"
    assert read(st, "/class/net/enp59s0f0np0/carrier") == "1\n"
    assert read(st, "/class/net/ibp59s0f1/type") == "32\n"
    assert read(st, "/class/net/ibp59s0f1/address") == "00:00:10:49:fe:80:00:00:00:00:00:00:0c:42:a1:03:00:aa:00:11\n"
    assert read(st, "/class/net/ibp59s0f1/pkey") == "0xffff\n"
    assert read(st, "/class/net/ibp59s0f1/mode") == "datagram\n"
    assert read(st, "/class/net/ibp59s0f1/carrier") == "0\n"  # port INIT: no SM yet
    assert read(st, "/class/net/ibp59s0f1/device/device") == "0x101b\n"
    entries = sysfs.tree(st)
    assert entries["/devices/pci0000:3a/0000:3a:00.0/0000:3b:00.1/net/ibp59s0f1/device"] == Link("../../../0000:3b:00.1")


def test_sriov_files_only_while_sriov_en_current():
    desc = node_file("cx6-vpi-eth-p1.json")
    desc["adapters"][0]["params"]["SRIOV_EN"] = {"current": False, "next": True}
    st = sim_state.normalize(desc)
    entries = sysfs.tree(st)
    assert "/devices/pci0000:3a/0000:3a:00.0/0000:3b:00.0/sriov_numvfs" not in entries
    sim_state.power_on(st)
    assert read(st, "/bus/pci/devices/0000:3b:00.0/sriov_totalvfs") == "8\n"
    assert read(st, "/bus/pci/devices/0000:3b:00.0/sriov_numvfs") == "0\n"
    assert read(st, "/bus/pci/devices/0000:3b:00.0/sriov_drivers_autoprobe") == "1\n"
    assert read(st, "/bus/pci/devices/0000:3b:00.0/sriov_offset") == "2\n"
    assert read(st, "/bus/pci/devices/0000:3b:00.1/sriov_offset") == "9\n"
    assert read(st, "/bus/pci/devices/0000:3b:00.0/sriov_stride") == "1\n"
    assert read(st, "/bus/pci/devices/0000:3b:00.0/sriov_vf_device") == "101c\n"
    assert sysfs.tree(st)["/devices/pci0000:3a/0000:3a:00.0/0000:3b:00.0/sriov_numvfs"].writable


def test_vfs_in_tree():
    st = cx7_state()
    sysfs.write(st, "/class/net/ibp193s0/device/sriov_numvfs", b"2\n")
    entries = sysfs.tree(st)
    pf = "/devices/pci0000:c0/0000:c0:00.0/0000:c1:00.0"
    assert entries[pf + "/virtfn0"] == Link("../0000:c1:00.1")
    assert entries[pf + "/virtfn1"] == Link("../0000:c1:00.2")
    assert entries["/devices/pci0000:c0/0000:c0:00.0/0000:c1:00.1/physfn"] == Link("../0000:c1:00.0")
    assert read(st, "/bus/pci/devices/0000:c1:00.1/device") == "0x101e\n"
    assert read(st, "/class/infiniband/mlx5_3/node_guid") == "0000:0000:0000:0000\n"
    assert read(st, "/class/infiniband/mlx5_3/ports/1/state") == "1: DOWN\n"  # OFED default policy Down
    assert entries["/bus/pci/drivers/mlx5_core/0000:c1:00.2"] == Link("../../../../devices/pci0000:c0/0000:c0:00.0/0000:c1:00.2")
    # OFED-only sysfs: per-VF GUIDs and policy
    sysfs.write(st, pf + "/sriov/0/node", b"11:22:33:44:77:66:77:90\n")
    sysfs.write(st, pf + "/sriov/0/policy", b"Follow\n")
    assert read(st, pf + "/sriov/0/node") == "11:22:33:44:77:66:77:90\n"
    assert read(st, "/class/infiniband/mlx5_3/node_guid") == "0000:0000:0000:0000\n"  # until rebind
    sysfs.write(st, "/bus/pci/drivers/mlx5_core/unbind", b"0000:c1:00.1\n")
    assert "/class/infiniband/mlx5_3" not in sysfs.tree(st)
    sysfs.write(st, "/bus/pci/drivers/mlx5_core/bind", b"0000:c1:00.1\n")
    assert read(st, "/class/infiniband/mlx5_3/node_guid") == "1122:3344:7766:7790\n"
    assert read(st, "/class/infiniband/mlx5_3/ports/1/state") == "2: INIT\n"
    with pytest.raises(OSError) as exc:
        sysfs.write(st, pf + "/sriov/0/policy", b"Sideways\n")
    assert exc.value.errno == errno.EINVAL


def test_every_parent_is_a_dir():
    st = cx7_state()
    sim_state.set_numvfs(st, "0000:c1:00.0", 3)
    entries = sysfs.tree(st)
    for path in entries:
        assert path.startswith("/") and not path.endswith("/")
        parent = posixpath.dirname(path)
        while parent != "/":
            assert isinstance(entries.get(parent), Dir), (path, parent)
            parent = posixpath.dirname(parent)
    for path, entry in entries.items():
        if isinstance(entry, Link):
            target = posixpath.normpath(posixpath.join(posixpath.dirname(path), entry.target))
            assert target in entries or target.startswith(("/bus/pci", "/module")), (path, target)


def test_class_dirs_module_and_kernel_files():
    st = cx7_state()
    assert read(st, "/class/infiniband_mad/abi_version") == "5\n"
    assert read(st, "/class/infiniband_mad/umad2/ibdev") == "mlx5_2\n"
    assert read(st, "/class/infiniband_mad/umad2/port") == "1\n"
    assert read(st, "/class/infiniband_verbs/abi_version") == "6\n"
    assert read(st, "/class/infiniband_verbs/uverbs2/ibdev") == "mlx5_2\n"
    assert read(st, "/module/ib_core/parameters/netns_mode") == "Y\n"
    sim_state.set_netns_mode(st, "exclusive")
    assert read(st, "/module/ib_core/parameters/netns_mode") == "N\n"
    assert read(st, "/kernel/security/lockdown") == "[none] integrity confidentiality\n"
    assert isinstance(sysfs.tree(st)["/bus/pci/drivers/mlx5_core"], Dir)


def test_write_sriov_numvfs_errors():
    st = cx7_state()
    path = "/bus/pci/devices/0000:c1:00.0/sriov_numvfs"
    for data, code in ((b"17\n", errno.ERANGE), (b"abc\n", errno.EINVAL), (b"-1\n", errno.EINVAL), (b"\n", errno.EINVAL),
                       (b"70000", errno.ERANGE)):
        with pytest.raises(OSError) as exc:
            sysfs.write(st, path, data)
        assert exc.value.errno == code, data
    sysfs.write(st, path, b"4\n")
    sysfs.write(st, path, b"4")  # same value: no-op
    with pytest.raises(OSError) as exc:
        sysfs.write(st, path, b"2\n")
    assert exc.value.errno == errno.EBUSY
    sysfs.write(st, path, b"0\n")
    sysfs.write(st, path, b"2\n")
    assert read(st, path) == "2\n"


def test_write_autoprobe_and_read_only_files():
    st = cx7_state()
    path = "/bus/pci/devices/0000:c1:00.0/sriov_drivers_autoprobe"
    sysfs.write(st, path, b"0\n")
    assert read(st, path) == "0\n"
    sysfs.write(st, "/bus/pci/devices/0000:c1:00.0/sriov_numvfs", b"1\n")
    assert "/class/infiniband/mlx5_3" not in sysfs.tree(st)
    with pytest.raises(OSError) as exc:
        sysfs.write(st, path, b"maybe\n")
    assert exc.value.errno == errno.EINVAL
    for ro in ("/bus/pci/devices/0000:c1:00.0/vendor", "/bus/pci/devices/0000:c1:00.0/sriov_totalvfs",
               "/module/ib_core/parameters/netns_mode", "/class/infiniband/mlx5_2/ports/1/state"):
        with pytest.raises(OSError) as exc:
            sysfs.write(st, ro, b"1\n")
        assert exc.value.errno == errno.EACCES, ro
    with pytest.raises(OSError) as exc:
        sysfs.write(st, "/class/infiniband/mlx5_2/ports", b"1\n")
    assert exc.value.errno == errno.EISDIR
    with pytest.raises(OSError) as exc:
        sysfs.write(st, "/bus/pci/devices/0000:01:00.0/sriov_numvfs", b"1\n")  # SRIOV_EN False: no such file
    assert exc.value.errno == errno.ENOENT


def test_write_bind_unbind_node_desc_lockdown():
    st = cx7_state()
    sysfs.write(st, "/bus/pci/drivers/mlx5_core/unbind", b"0000:01:00.1\n")
    entries = sysfs.tree(st)
    assert "/class/infiniband/mlx5_1" not in entries and "/class/net/enp1s0f1np1" not in entries
    assert "/devices/pci0000:00/0000:00:01.0/0000:01:00.1/driver" not in entries
    with pytest.raises(OSError) as exc:
        sysfs.write(st, "/bus/pci/drivers/mlx5_core/unbind", b"0000:01:00.1\n")
    assert exc.value.errno == errno.ENODEV
    with pytest.raises(OSError) as exc:
        sysfs.write(st, "/bus/pci/drivers/mlx5_core/bind", b"0000:99:00.0\n")
    assert exc.value.errno == errno.ENODEV
    sysfs.write(st, "/bus/pci/drivers/mlx5_core/bind", b"0000:01:00.1\n")
    assert read(st, "/class/infiniband/mlx5_1/node_desc") == "node02 mlx5_1\n"
    sysfs.write(st, "/class/infiniband/mlx5_2/node_desc", b"compute-7 HCA-1")
    assert read(st, "/class/infiniband/mlx5_2/node_desc") == "compute-7 HCA-1\n"
    sysfs.write(st, "/kernel/security/lockdown", b"integrity\n")
    assert read(st, "/kernel/security/lockdown") == "none [integrity] confidentiality\n"
    with pytest.raises(OSError) as exc:
        sysfs.write(st, "/kernel/security/lockdown", b"none\n")
    assert exc.value.errno == errno.EPERM


def test_tree_is_fast_and_cached():
    st = cx7_state()
    sim_state.set_numvfs(st, "0000:c1:00.0", 16)
    start = time.perf_counter()
    entries = sysfs.tree(st)
    assert time.perf_counter() - start < 0.5
    assert sysfs.tree(st) is entries
    assert len([p for p in entries if p.startswith("/class/infiniband/")]) == 19


def test_tree_for_file(sim_env):
    path = sim_env / "state.json"
    path.write_text('{"adapters": [{"model": "ConnectX-5 VPI", "pci_address": "0000:86:00.0"}]}')
    entries = sysfs.tree_for_file(str(path))
    assert entries["/class/net/ibp134s0f0"] == Link("../../devices/pci0000:85/0000:85:00.0/0000:86:00.0/net/ibp134s0f0")
    assert sysfs.tree_for_file(str(path)) is entries
