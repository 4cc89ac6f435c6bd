# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""sriov_vfs through AnsibleModule on a fake sysfs (sysfs_cx6_dual_sriov.yml: PF 0000:3b:00.0 with
two VFs, VF 0 with GUID 0x0200000000000001, VF 1 with a zero GUID; PF 0000:3b:00.1 with SR-IOV
off) and ``ip`` mocked with the exact argv. Writes go to plain files here, so the paths that need
the kernel's reaction (VFs appearing, a rebind taking effect) are checked in check mode; the
molecule scenario ``sriov`` runs them for real on the lab's simulated kernel rules."""

from __future__ import annotations

import os

import pytest

from ansible_collections.fabric.infiniband.plugins.modules import sriov_vfs
from ansible_collections.fabric.infiniband.tests.unit.plugins.modules.test_mlxconfig_module import run_module

IP = {"ip": "/usr/bin/ip"}
SHOW = ["/usr/bin/ip", "-d", "link", "show", "dev", "ibp59s0f0"]
IPLINK = (
    "10: ibp59s0f0: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 2044 qdisc mq state UP mode DEFAULT group default qlen 256\n"
    "    link/infiniband 00:00:10:49:fe:80:00:00:00:00:00:00:0c:42:a1:03:00:aa:00:10 brd 00:ff:ff:ff:ff:12:40:1b:ff:ff:00:00\n"
    "    vf 0     link/infiniband 00:00:10:49 brd 00:ff, spoof checking off, NODE_GUID 02:00:00:00:00:00:00:01, "
    "PORT_GUID 02:00:00:00:00:00:00:01, link-state auto, trust off, query_rss off\n"
    "    vf 1     link/infiniband 00:00:10:49 brd 00:ff, spoof checking off, NODE_GUID 00:00:00:00:00:00:00:00, "
    "PORT_GUID 00:00:00:00:00:00:00:00, link-state auto, trust off, query_rss off\n"
)


@pytest.fixture
def root(make_sysfs):
    return make_sysfs("sysfs_cx6_dual_sriov.yml")


def run(mocker, capsys, root, params, calls=(), check=True, diff=False):
    args = dict(params, sysfs_root=root)
    return run_module(mocker, capsys, sriov_vfs.main, args, IP, list(calls), check_mode=check, diff=diff)


def test_no_op_reads_once_and_writes_nothing(mocker, capsys, root):
    result, ran = run(mocker, capsys, root, {"pf": "mlx5_0", "num_vfs": 2, "vfs": [{"index": 0, "guid": "0x0200000000000001"}],
                                             "link_state": "auto"}, [{"argv": SHOW, "out": IPLINK}], check=False)
    assert not result["changed"] and result["writes"] == [] and ran == [SHOW]
    assert result["method"] == "netlink"
    assert result["pf"]["netdev"] == "ibp59s0f0" and result["pf"]["total_vfs"] == 8
    vf0 = result["after"]["vfs"][0]
    assert (vf0["pci_address"], vf0["node_guid"], vf0["active_node_guid"], vf0["link_state"]) == (
        "0000:3b:00.2", "0x0200000000000001", "0x0200000000000001", "auto")


def test_zero_guid_is_set_and_the_vf_rebound(mocker, capsys, root):
    result, ran = run(mocker, capsys, root, {"pf": "0000:3b:00.0", "num_vfs": 2, "vfs": [{"index": 1, "guid": "02:fa:00:00:00:00:00:01"}]},
                      [{"argv": SHOW, "out": IPLINK}], diff=True)
    assert result["changed"] and ran == [SHOW]  # check mode: the set is not run
    assert result["cmds"][-1] == ["/usr/bin/ip", "link", "set", "dev", "ibp59s0f0", "vf", "1", "node_guid", "02:fa:00:00:00:00:00:01",
                                  "port_guid", "02:fa:00:00:00:00:00:01"]
    drivers = os.path.join(root, "bus", "pci", "drivers", "mlx5_core")
    assert result["writes"] == ["%s/unbind=0000:3b:00.3" % drivers, "%s/bind=0000:3b:00.3" % drivers]
    assert result["rebound"] == ["0000:3b:00.3"]
    assert result["diff"]["after"]["vfs"]["vf1"]["node_guid"] == "0x02fa000000000001"
    assert result["diff"]["before"]["vfs"]["vf1"]["node_guid"] == "0x0000000000000000"


def test_rebind_false_leaves_it_pending(mocker, capsys, root):
    result, _ran = run(mocker, capsys, root, {"pf": "mlx5_0", "num_vfs": 2, "rebind": False,
                                              "vfs": [{"index": 1, "guid": "0x02fa000000000001"}]}, [{"argv": SHOW, "out": IPLINK}])
    assert result["rebind_pending"] == ["0000:3b:00.3"] and result["rebound"] == []


def test_count_change_goes_through_zero_only_when_allowed(mocker, capsys, root):
    numvfs = os.path.join(root, "bus", "pci", "devices", "0000:3b:00.0", "sriov_numvfs")
    result, _ran = run(mocker, capsys, root, {"pf": "ibp59s0f0", "num_vfs": 4, "allow_recreate": True, "drivers_autoprobe": True})
    assert result["writes"] == ["%s=1" % numvfs.replace("sriov_numvfs", "sriov_drivers_autoprobe"), "%s=0" % numvfs, "%s=4" % numvfs]
    assert result["after"]["num_vfs"] == 4 and len(result["after"]["vfs"]) == 4
    mocker.stopall()  # undo the first run's patches of AnsibleModule
    result, _ran = run(mocker, capsys, root, {"pf": "ibp59s0f0", "num_vfs": 0}, check=False)
    assert result["changed"] and result["writes"] == ["%s=0" % numvfs]
    with open(numvfs) as handle:
        assert handle.read() == "0\n"


G5 = "0x0200000000000005"


@pytest.mark.parametrize("params, says", [
    ({"pf": "mlx5_0", "num_vfs": 4}, "the PF has 2 VFs and num_vfs is 4"),
    ({"pf": "mlx5_0", "num_vfs": 9}, "num_vfs 9 is more than the PF allows: sriov_totalvfs is 8"),
    ({"pf": "mlx5_0", "num_vfs": -1}, "num_vfs -1: accepted 0 or more"),
    ({"pf": "mlx5_9", "num_vfs": 2}, "pf mlx5_9: no such PCI function, RDMA device or netdev"),
    ({"pf": "0000:3b:00.2", "num_vfs": 2}, "is a VF; give its PF (0000:3b:00.0)"),
    ({"pf": "mlx5_1", "num_vfs": 2}, "SR-IOV is off in its firmware (SRIOV_EN)"),
    ({"pf": "mlx5_0", "num_vfs": 2, "vfs": [{"index": 0, "guid": "0x0000000000000000"}]},
     "vfs[0].guid '0x0000000000000000' is the zero GUID, which is not valid"),
    ({"pf": "mlx5_0", "num_vfs": 2, "vfs": [{"index": 2, "guid": G5}]}, "vfs[0].index 2 is not a VF of this PF: accepted 0 to 1"),
    ({"pf": "mlx5_0", "num_vfs": 2, "vfs": [{"index": 0, "guid": G5}, {"index": 1, "guid": G5}]}, "given to VF 0 and VF 1"),
    ({"pf": "mlx5_0", "num_vfs": 2, "vfs": [{"index": 0, "guid": "0x5"}]}, "vfs[0].guid '0x5' has 1 hex digits after 0x; a GUID has 16"),
    # issue 22 class 8: an unquoted GUID is a YAML number, which the str option turns into its decimal text
    ({"pf": "mlx5_0", "num_vfs": 2, "vfs": [{"index": 0, "port_guid": 0x0200000000000001}]},
     "vfs[0].port_guid '144115188075855873' is digits only, not a GUID: hex digits need 0x, and YAML reads an unquoted "
     '0x0200000000000001 as this number. Quote it: "0x0200000000000001"'),
    ({"pf": "mlx5_0", "num_vfs": 2, "vfs": [{"index": 0, "node_guid": 28524360585417}]}, 'Quote it: "10:11:22:33:44:55:56:57"'),
    ({"pf": "mlx5_0", "num_vfs": 2, "vfs": [{"index": 0, "guid": "ff:ff:ff:ff:ff:ff:ff:ff"}]}, "all-ones GUID"),
])
def test_bad_input_fails_before_any_write(mocker, capsys, root, params, says):
    result, ran = run(mocker, capsys, root, params, check=False)
    assert result["failed"] and says in result["msg"], result["msg"]
    assert result.get("writes", []) == [] and ran == []


def test_sriov_off_and_zero_wanted_is_fine(mocker, capsys, root):
    result, ran = run(mocker, capsys, root, {"pf": "mlx5_1", "num_vfs": 0}, check=False)
    assert not result["changed"] and ran == [] and result["after"]["num_vfs"] == 0


def test_ip_missing_is_named(mocker, capsys, root):
    args = {"pf": "mlx5_0", "num_vfs": 2, "vfs": [{"index": 1, "guid": G5}], "sysfs_root": root}
    result, _ran = run_module(mocker, capsys, sriov_vfs.main, args, {}, [])
    assert result["failed"] and "needs ip (iproute2)" in result["msg"]


def test_ofed_sysfs_is_used_where_it_exists(mocker, capsys, make_sysfs):
    sriov_dir = "devices/pci0000:00/0000:00:01.0/0000:3b:00.0/sriov"
    root = make_sysfs(dict(__import__("yaml").safe_load(open(os.path.join(
        os.path.dirname(__file__), "..", "module_utils", "fixtures", "sysfs_cx6_dual_sriov.yml"))),
        files={sriov_dir + "/0/node": "02:00:00:00:00:00:00:01", sriov_dir + "/0/port": "02:00:00:00:00:00:00:01",
               sriov_dir + "/0/policy": "Down", sriov_dir + "/1/node": "00:00:00:00:00:00:00:00",
               sriov_dir + "/1/port": "00:00:00:00:00:00:00:00", sriov_dir + "/1/policy": "Down"}))
    result, ran = run(mocker, capsys, root, {"pf": "mlx5_0", "num_vfs": 2, "link_state": "auto",
                                             "vfs": [{"index": 0, "guid": "0x0200000000000001"}]})
    assert result["method"] == "sysfs" and ran == []
    base = os.path.join(root, "bus", "pci", "devices", "0000:3b:00.0", "sriov")
    assert result["writes"] == ["%s/0/policy=Follow" % base, "%s/1/policy=Follow" % base]
