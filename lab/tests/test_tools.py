# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""mlxfwreset/mstfwreset, mst, rdma, ibv_devinfo, ibv_devices, ibstat, ibdev2netdev."""

import json
import re

import pytest
from conftest import CX6, fixture_text, node_file, rstrip_lines

from fabricsim import fwreset, mst, rdma, verbs
from fabricsim import state as sim_state


def node(adapters, tools=None, fabric_ports=None, view=None, hostname="node01"):
    desc = {"hostname": hostname, "tools": {"firmware": "mft", "firmware_version": "4.21.0", "iproute2": "6.1.0", "ofed": False},
            "kernel": {"lockdown": "none", "netns_mode": "shared"},
            "fabric": {"switch": "Switch1", "ports": fabric_ports or {}}, "adapters": adapters, "fabric_view": view or {}}
    desc["tools"].update(tools or {})
    return sim_state.normalize(desc)


# ------------------------------------------------------------------------------ mlxfwreset
def test_fwreset_auto_level_real_capture():
    st = node([{"model": "ConnectX-4 VPI", "pci_address": "0000:04:00.0", "params": {"LINK_TYPE_P1": {"current": 2, "next": 1}}}])
    res = fwreset.run(st, ["-y", "-d", "0000:04:00.0", "reset"], tool="mlxfwreset")
    assert res.rc == 0
    assert res.stdout == fixture_text("ref_mlxfwreset_auto.txt")
    assert res.kind == "reset" and res.device == "0000:04:00.0"
    assert sim_state.param_value(st["adapters"][0], "LINK_TYPE_P1", "current") == 1


def test_fwreset_newer_wording_mst_device():
    st = node([{"model": "ConnectX-7", "pci_address": "0000:18:00.0"}], tools={"firmware_version": "4.33.0"})
    mst.run(st, ["start"])
    res = fwreset.run(st, ["-d", "/dev/mst/mt4129_pciconf0", "reset", "-y"], tool="mlxfwreset")
    assert res.stdout == fixture_text("ref_mlxfwreset_newer.txt")


def test_fwreset_requested_level():
    st = node([{"model": "ConnectX-6 VPI", "pci_address": "0000:3d:00.0"}])
    res = fwreset.run(st, ["-d", "3d:00.1", "reset", "-y", "-l3"], tool="mlxfwreset")
    assert res.stdout == fixture_text("ref_mlxfwreset_l3.txt")


def test_mstfwreset_skip_driver_as_sriov_operator_calls_it(make_state):
    st = make_state(params={"SRIOV_EN": {"current": 0, "next": 1}})
    res = fwreset.run(st, ["-d", "0000:3b:00.0", "--skip_driver", "-l", "3", "-y", "reset"])
    assert res.rc == 0
    assert "-I- Stopping Driver                         -Skipped\n" in res.stdout
    assert res.stdout.endswith("-I- Restarting MST                          -Skipped\n-I- FW was loaded successfully.\n")
    assert sim_state.sriov_enabled(st["adapters"][0])


def test_fwreset_fails_while_vfs_exist(make_state):
    st = make_state(params={"SRIOV_EN": 1, "LINK_TYPE_P1": {"current": 1, "next": 2}})
    sim_state.set_numvfs(st, "0000:3b:00.1", 1)
    res = fwreset.run(st, ["-d", "0000:3b:00.0", "-l", "3", "-y", "reset"])
    assert res.rc == 1
    assert res.stdout.endswith("-I- Sending Reset Command To Fw             -Failed\n"
                               "-E- Firmware reset failed, retry operation or reboot machine.\n")
    assert sim_state.param_value(st["adapters"][0], "LINK_TYPE_P1", "current") == 1


@pytest.mark.parametrize("argv,rc,tail", [
    (["-d", "0000:3b:00.0", "reset"], 1, "Continue with reset?[y/N] -E- Aborted by user.\n"),
    (["-d", "0000:3b:00.0", "-l", "1", "-y", "reset"], 1, "-E- Reset-level '1' is not supported for device, 3b:00.0.\n"),
    (["-d", "0000:aa:00.0", "-y", "reset"], 1, "-E- Failed to open device (0000:aa:00.0): No such file or directory.\n"),
    (["-d", "mlx5_9", "q"], 1, "-E- Failed to Identify Device: mlx5_9.\n"),
])
def test_fwreset_errors(make_state, argv, rc, tail):
    st = make_state(params={"LINK_TYPE_P1": {"current": 1, "next": 2}})
    res = fwreset.run(st, argv)
    assert res.rc == rc and res.stdout.endswith(tail)
    assert sim_state.param_value(st["adapters"][0], "LINK_TYPE_P1", "current") == 1


def test_fwreset_usage_error(make_state):
    res = fwreset.run(make_state(), ["-d", "0000:3b:00.0"])
    assert res.rc == 2 and "the following arguments are required: command" in res.stderr


def test_fwreset_query_layout(make_state):
    res = fwreset.run(make_state(), ["-d", "mlx5_0", "q"])
    assert res.rc == 0 and res.kind == "query"
    lines = res.stdout.splitlines()
    assert lines[1] == "Supported reset levels for loading FW on device, 3b:00.0:"
    assert "3: Driver restart and PCI reset                                  -Supported     (default)" in lines
    assert '1: Only ARM side will not remain up ("Immediate reset").         -Not Supported' in lines
    for line in lines:
        if re.match(r"^\d: ", line):
            assert line[65] == "-", line


def test_fwreset_bluefield_dpu_mode(make_state):
    st = node([{"model": "BlueField-2", "pci_address": "0000:e1:00.0"}])
    res = fwreset.run(st, ["-d", "e1:00.0", "-y", "reset"], tool="mlxfwreset")
    assert res.rc == 1 and res.stdout.endswith("-E- Reset-level '3' is not supported for device, e1:00.0.\n")


def test_fwreset_level_4_reboots(make_state):
    st = make_state(params={"SRIOV_EN": {"current": 0, "next": 1}})
    res = fwreset.run(st, ["-d", "0000:3b:00.0", "-l", "4", "-y", "reset"])
    assert res.rc == 0 and "Warm Reboot" in res.stdout
    assert sim_state.sriov_enabled(st["adapters"][0]) and st["runtime"]["boot_count"] == 1


# ------------------------------------------------------------------------------ mst
def proxmox_node():
    return node([{"model": "ConnectX-6 VPI", "pci_address": "0000:0f:00.0"}, {"model": "ConnectX-6 VPI", "pci_address": "0000:92:00.0"},
                 {"model": "BlueField-2", "pci_address": "0000:e1:00.0"}])


def test_mst_start_and_status_real_capture():
    st = proxmox_node()
    assert mst.run(st, ["status"]).stdout == fixture_text("ref_mst_status_not_started.txt")
    res = mst.run(st, ["start"])
    assert res.stdout == fixture_text("ref_mst_start.txt")
    assert mst.run(st, ["status"]).stdout == fixture_text("ref_mst_status.txt")
    assert "already loaded" in mst.run(st, ["start"]).stdout
    mst.run(st, ["stop"])
    assert not sim_state.mst_started(st)


def test_mst_status_verbose_layout():
    st = node([{"model": "ConnectX-4 VPI", "pci_address": "0004:01:00.0", "numa_node": 1}])
    mst.run(st, ["start"])
    ours = mst.run(st, ["status", "-v"]).stdout
    ref = fixture_text("ref_mst_status_v_ibm.txt")
    # the publisher elided the blank lines between entries with "."; our netdevs have predictable names
    ref = "\n".join("" if line == "." else line for line in ref.split("\n"))
    ref = ref.replace("net-ib1" + " " * 7, "net-ibP4p1s0f1").replace("net-ib0" + " " * 7, "net-ibP4p1s0f0")
    assert ours == ref


def test_mst_status_verbose_short_pci_and_unknown_flag():
    st = proxmox_node()
    mst.run(st, ["start"])
    out = mst.run(st, ["status", "-v"]).stdout.splitlines()
    assert out[6] == "DEVICE_TYPE             MST                           PCI       RDMA            NET                       NUMA"
    assert out[7] == "ConnectX6(rev:0)        /dev/mst/mt4123_pciconf0.1    0f:00.1   mlx5_1          net-ibp15s0f1             0"
    assert "BlueField2(rev:1)       /dev/mst/mt41686_pciconf0     e1:00.0   mlx5_4          net-enp225s0f0np0         0" in out
    res = mst.run(st, ["status", "--v"])
    assert res.rc == 1 and res.stdout.endswith('    MST PCI configuration module loaded\n    -E- Unknown argument "--v"\n')


# ------------------------------------------------------------------------------ rdma
@pytest.mark.parametrize("version,text,js", [
    ("5.3.0", "netns shared\n", '[{"netns":"shared"}]\n'),
    ("5.14.0", "netns shared copy-on-fork on\n", '[{"netns":"shared","copy-on-fork":true}]\n'),
    ("6.1.0", "netns shared copy-on-fork on\n", "netns shared copy-on-fork on\n"),
    ("6.6.0", "netns shared copy-on-fork on\n", '[{"netns":"shared","copy-on-fork":true}]\n'),
    ("6.7.0", "netns shared privileged-qkey off copy-on-fork on\n",
     '[{"netns":"shared","privileged-qkey":false,"copy-on-fork":true}]\n'),
    ("6.13.0", "netns shared privileged-qkey off monitor off copy-on-fork on\n",
     '[{"netns":"shared","privileged-qkey":false,"monitor":false,"copy-on-fork":true}]\n'),
])
def test_rdma_system_generations(make_state, version, text, js):
    st = make_state(tools={"iproute2": version})
    for argv in (["system"], ["system", "show"], ["sys"]):
        res = rdma.run(st, argv)
        assert (res.rc, res.stdout, res.stderr) == (0, text, "")
    assert rdma.run(st, ["-j", "system", "show"]).stdout == js


def test_rdma_system_before_5_3(make_state):
    res = rdma.run(make_state(tools={"iproute2": "5.2.0"}), ["system", "show"])
    assert (res.rc, res.stdout, res.stderr) == (1, "", "Unknown object 'system'.\n")


def test_rdma_system_exclusive_real_and_pretty(make_state):
    st = make_state(tools={"iproute2": "6.6.0"})
    st["kernel"]["netns_mode"] = "exclusive"
    sim_state.power_on(st)
    assert rdma.run(st, ["system"]).stdout == "netns exclusive copy-on-fork on\n"
    assert rdma.run(st, ["-j", "-p", "system"]).stdout == '[ {\n        "netns": "exclusive",\n        "copy-on-fork": true\n    } ]\n'
    assert rdma.run(st, ["-jp", "system"]).stdout.startswith("[ {\n")


def test_rdma_system_set(make_state, sim_env):
    st = make_state()
    res = rdma.run(st, ["system", "set", "netns", "exclusive"])
    assert (res.rc, res.stdout, res.stderr, res.kind) == (0, "", "", "write")
    assert sim_state.netns_mode(st) == "exclusive"
    (sim_env / "root" / "run" / "netns" / "x").write_text("")
    res = rdma.run(st, ["system", "set", "netns", "shared"])
    assert (res.rc, res.stderr) == (1, "error: Device or resource busy\n")
    assert rdma.run(st, ["system", "set", "netns", "exclusive"]).rc == 0
    res = rdma.run(st, ["system", "set", "netns", "foo"])
    assert (res.rc, res.stderr) == (1, "valid options are: { shared | exclusive }\n")


def test_rdma_link_ib_and_roce(make_state):
    desc = node_file("cx6-vpi-eth-p1.json")
    desc["fabric_view"] = {"0000:3b:00.1": {"state": "ACTIVE", "lid": 2, "sm_lid": 2, "lmc": 0}}
    st = sim_state.normalize(desc)
    res = rdma.run(st, ["link"])
    assert res.stdout == ("link mlx5_0/1 state ACTIVE physical_state LINK_UP netdev enp59s0f0np0 \n"
                          "link mlx5_1/1 subnet_prefix fe80:0000:0000:0000 lid 2 sm_lid 2 lmc 0 state ACTIVE physical_state LINK_UP \n")
    # real capture (spiderpool docs, trailing blank trimmed by the publisher)
    real = "link mlx5_0/1 subnet_prefix fe80:0000:0000:0000 lid 2 sm_lid 2 lmc 0 state ACTIVE physical_state LINK_UP"
    assert rdma.run(st, ["link", "show", "mlx5_1/1"]).stdout.rstrip() == real.replace("mlx5_0", "mlx5_1")
    assert rdma.run(st, ["link", "show", "mlx5_1"]).stdout == rdma.run(st, ["link", "show", "mlx5_1/1"]).stdout
    js = json.loads(rdma.run(st, ["-j", "link"]).stdout)
    assert js[1] == {"ifindex": 1, "ifname": "mlx5_1", "port": 1, "subnet_prefix": "fe80:0000:0000:0000", "lid": 2, "sm_lid": 2,
                     "lmc": 0, "state": "ACTIVE", "physical_state": "LINK_UP"}
    assert js[0]["netdev"] == "enp59s0f0np0" and js[0]["netdev_index"] == 10
    assert list(js[0]) == ["ifindex", "ifname", "port", "state", "physical_state", "netdev", "netdev_index"]
    res = rdma.run(st, ["link", "show", "mlx5_7/1"])
    assert (res.rc, res.stderr) == (1, "Wrong device name\n")


def test_rdma_link_ipoib_netdev_on_newer_kernels(make_state):
    st = make_state(tools={"iproute2": "6.12.0"})
    st["fabric_view"]["0000:3b:00.0"] = {"state": "ACTIVE", "lid": 66, "sm_lid": 3, "lmc": 0}
    assert rdma.run(st, ["link", "show", "mlx5_0/1"]).stdout == (
        "link mlx5_0/1 subnet_prefix fe80:0000:0000:0000 lid 66 sm_lid 3 lmc 0 state ACTIVE physical_state LINK_UP netdev ibp59s0f0 \n")
    js = json.loads(rdma.run(st, ["-j", "link", "show", "mlx5_0/1"]).stdout)
    assert list(js[0]) == ["ifindex", "ifname", "port", "subnet_prefix", "lid", "sm_lid", "lmc", "state", "physical_state",
                           "netdev", "netdev_index"]


def test_rdma_old_iproute2_link_format(make_state):
    st = make_state(tools={"iproute2": "4.19.0"})
    assert rdma.run(st, ["link"]).stdout.splitlines()[0] == (
        "0/1: mlx5_0/1: subnet_prefix fe80:0000:0000:0000 lid 65535 sm_lid 0 lmc 0 state INIT physical_state LINK_UP ")


def test_rdma_dev(make_state):
    st = sim_state.normalize(node_file("cx6-vpi-eth-p1.json"))
    assert rdma.run(st, ["dev"]).stdout == (
        "0: mlx5_0: node_type ca fw 20.39.1002 node_guid 0c42:a103:00aa:0010 sys_image_guid 0c42:a103:00aa:0010 \n"
        "1: mlx5_1: node_type ca fw 20.39.1002 node_guid 0c42:a103:00aa:0011 sys_image_guid 0c42:a103:00aa:0010 \n")
    st["tools"]["iproute2"] = st["kernel"]["release"] = "6.8.0"
    assert rdma.run(st, ["dev", "show", "mlx5_0"]).stdout == (
        "0: mlx5_0: node_type ca protocol roce fw 20.39.1002 node_guid 0c42:a103:00aa:0010 sys_image_guid 0c42:a103:00aa:0010 \n")
    assert json.loads(rdma.run(st, ["-j", "dev"]).stdout)[1] == {
        "ifindex": 1, "ifname": "mlx5_1", "node_type": "ca", "protocol": "ib", "fw": "20.39.1002",
        "node_guid": "0c42:a103:00aa:0011", "sys_image_guid": "0c42:a103:00aa:0010"}
    assert rdma.run(st, ["-V"]).stdout == "rdma utility, iproute2-6.8.0\n"
    assert rdma.run(st, ["bogus"]).stderr == "Unknown object 'bogus'.\n"


# ------------------------------------------------------------------------------ verbs
def cx7_only(view=True):
    fv = {"0000:c1:00.0": {"state": "ACTIVE", "lid": 48, "sm_lid": 48, "lmc": 0, "rate": "200 Gb/sec (4X HDR)",
                           "cap_mask": "0xa751e84a"}} if view else {}
    return node([{"model": "ConnectX-7", "pci_address": "0000:c1:00.0", "node_guid": "0xc470bd0300cf4964"}],
                fabric_ports={"0000:c1:00.0": 1}, view=fv)


def test_ibstat_real_capture():
    # the publisher expanded the TABs; ours has real TABs
    res = verbs.ibstat(cx7_only(), [])
    assert "\t\tState: Active\n" in res.stdout
    assert res.stdout.expandtabs(8) == fixture_text("ref_ibstat_cx7.txt")


def test_ibv_devinfo_real_capture():
    res = verbs.ibv_devinfo(cx7_only(), [])
    assert "\t\t\tstate:\t\t\tPORT_ACTIVE (4)\n" in res.stdout
    assert res.stdout.expandtabs(8) == fixture_text("ref_ibv_devinfo_cx7.txt") + "\n"


def test_ibstat_variants():
    st = cx7_only(view=False)
    assert verbs.ibstat(st, ["-l"]).stdout == "mlx5_0\n"
    assert verbs.ibstat(st, ["-p"]).stdout == "0xc470bd0300cf4964\n"
    res = verbs.ibstat(st, ["mlx5_0", "1"])
    assert res.stdout.startswith("CA: 'mlx5_0'\nPort 1:\nState: Initializing\nPhysical state: LinkUp\nRate: 400\nBase lid: 65535\n")
    assert verbs.ibstat(st, ["-s"]).stdout.endswith("System image GUID: 0xc470bd0300cf4964\n")
    res = verbs.ibstat(st, ["mlx5_9"])
    assert res.rc == 255 and re.fullmatch(r"ibpanic: \[\d+\] main: 'mlx5_9' IB device can't be found\n", res.stderr)


def test_ibstat_roce_port():
    st = sim_state.normalize(node_file("cx6-vpi-eth-p1.json"))
    out = verbs.ibstat(st, ["mlx5_0"]).stdout
    assert ("\t\tBase lid: 0\n\t\tLMC: 0\n\t\tSM lid: 0\n\t\tCapability mask: 0x00010000\n"
            "\t\tPort GUID: 0x0e42a1fffeaa0010\n\t\tLink layer: Ethernet\n") in out


def test_ibv_devinfo_variants():
    st = sim_state.normalize(node_file("cx7-and-cx4lx.json"))
    assert verbs.ibv_devinfo(st, ["-l"]).stdout == "3 HCAs found:\n\tmlx5_0\n\tmlx5_1\n\tmlx5_2\n\n"
    out = verbs.ibv_devinfo(st, ["-d", "mlx5_1"]).stdout
    assert out.startswith("hca_id:\tmlx5_1\n") and "\t\t\tactive_mtu:\t\t1024 (3)\n" in out and "\t\t\tlink_layer:\t\tEthernet\n" in out
    assert "\tvendor_part_id:\t\t\t4117\n" in out
    res = verbs.ibv_devinfo(st, ["-d", "mlx5_5"])
    assert (res.rc, res.stderr) == (255, "IB device 'mlx5_5' wasn't found\n")
    empty = sim_state.normalize({"adapters": []})
    assert (verbs.ibv_devinfo(empty, []).rc, verbs.ibv_devinfo(empty, []).stderr) == (255, "No IB devices found\n")


def test_ibv_devices():
    st = sim_state.normalize(node_file("cx6-vpi-eth-p1.json"))
    assert verbs.ibv_devices(st, []).stdout == (
        "    device          \t   node GUID\n    ------          \t----------------\n"
        "    mlx5_0          \t0c42a10300aa0010\n    mlx5_1          \t0c42a10300aa0011\n")


def test_ibdev2netdev_with_vfs_real_capture_layout():
    st = node([{"model": "ConnectX-4 VPI", "pci_address": "0000:02:00.0", "firmware_version": "12.23.1020",
                "params": {"SRIOV_EN": 1}}], tools={"ofed": True}, fabric_ports={"0000:02:00.0": 1, "0000:02:00.1": 2},
              view={"0000:02:00.0": {"state": "ACTIVE", "lid": 5, "sm_lid": 1}})
    ref = fixture_text("ref_ibdev2netdev_cx4.txt").splitlines()
    assert verbs.ibdev2netdev(st, []).stdout.splitlines()[0] == ref[1].replace("ib0", "ibp2s0f0")
    sim_state.set_numvfs(st, "0000:02:00.0", 4)
    out = verbs.ibdev2netdev(st, ["-v"]).stdout.splitlines()
    assert out[0] == ("0000:02:00.0 mlx5_0 (MT4115 - MCX456A-ECA) ConnectX-4 VPI adapter card; EDR IB (100Gb/s) and 100GbE; "
                      "dual-port QSFP28; PCIe3.0 x16; ROHS R6 fw 12.23.1020 port 1 (ACTIVE) ==> ibp2s0f0 (Up)")
    vf_ref = ref[8]  # "0000:02:00.5 mlx5_2 (MT4116 - NA)  fw 12.23.1020 port 1 (DOWN  ) ==> ib2 (Down)"
    for n, line in enumerate(out[2:]):
        assert line == vf_ref.replace("0000:02:00.5", "0000:02:00.%d" % (n + 2)).replace("mlx5_2", "mlx5_%d" % (n + 2)).replace(
            "ib2", "ibp2s0f%d" % (n + 2))


def test_ibdev2netdev_roce_real_line():
    desc = json.loads(json.dumps(CX6))
    desc["adapters"][0].update({"pci_address": "0000:04:00.0", "params": {"LINK_TYPE_P1": "ETH"}})
    st = sim_state.normalize(desc)
    assert verbs.ibdev2netdev(st, []).stdout.splitlines()[0] == "mlx5_0 port 1 ==> enp4s0f0np0 (Up)"


def test_trimmed_helper_sanity():
    assert rstrip_lines("a  \nb\t\n") == "a\nb\n"
