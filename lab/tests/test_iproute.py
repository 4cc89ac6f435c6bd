# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The simulated ``ip`` (iproute2): VF lines of ``ip link show``, ``ip link set ... vf N``, errors, pass-through.

Layouts: tool-outputs.md section 9.3/9.4 and iproute2 ip/ipaddress.c print_linkinfo/print_vfinfo,
ip/iplink.c iplink_parse_vf, lib/utils.c get_guid/invarg.
"""

import copy
import io
import json
import os
import re
import stat
import subprocess
import sys
import types

import pytest
from conftest import CX6, LAB

from fabricsim import cli, iproute, node, sysfs
from fabricsim import state as sim_state

IB_ADDR = "00:00:10:49:fe:80:00:00:00:00:00:00:0c:42:a1:03:00:aa:00:10"
IB_BRD = "00:ff:ff:ff:ff:12:40:1b:ff:ff:00:00:00:00:00:00:ff:ff:ff:ff"
ZERO = "00:00:00:00:00:00:00:00"
GUID1 = "02:00:00:00:00:00:00:01"
PF, ETH = "ibp59s0f0", "enp59s0f1np1"


def vpi(numvfs=2, tools=None, kernel=None, view=None):
    """CX-6 VPI: port 1 IB (ibp59s0f0, 0000:3b:00.0), port 2 Ethernet (enp59s0f1np1), SR-IOV on."""
    d = copy.deepcopy(CX6)
    d["adapters"][0]["params"] = {"SRIOV_EN": 1, "NUM_OF_VFS": 4, "LINK_TYPE_P1": 1, "LINK_TYPE_P2": 2}
    d["tools"].update(tools or {})
    if kernel:
        d["kernel"]["release"] = kernel
    if view:
        d["fabric_view"] = view
    st = sim_state.normalize(d)
    if numvfs:
        sim_state.set_numvfs(st, "0000:3b:00.0", numvfs)
    return st


def ip(st, *argv):
    return iproute.run(st, list(argv))


def vf_line(index, node=ZERO, port=ZERO, link_state="auto"):
    return ("    vf %d     link/infiniband %s brd %s, spoof checking off, NODE_GUID %s, PORT_GUID %s, link-state %s, "
            "trust off, query_rss off\n" % (index, IB_ADDR, IB_BRD, node, port, link_state))


# ------------------------------------------------------------------------------ layouts
def test_ipoib_pf_with_vfs_layout():
    res = ip(vpi(), "link", "show", PF)
    assert (res.rc, res.stderr, res.kind) == (0, "", "read")
    assert res.stdout == (
        "10: ibp59s0f0: <NO-CARRIER,BROADCAST,MULTICAST,UP> mtu 2044 qdisc mq state DOWN mode DEFAULT group default "
        "qlen 256\n"
        "    link/infiniband %s brd %s\n" % (IB_ADDR, IB_BRD) + vf_line(0) + vf_line(1))


def test_layout_matches_the_real_capture():
    """sriov-network-operator doc (tool-outputs.md 9.4): same words, separators and indentation."""
    real = [
        "6: ibp216s0f0: <BROADCAST,MULTICAST> mtu 4092 qdisc noop state UP mode DEFAULT group default qlen 256",
        "    link/infiniband 00:00:05:a9:fe:80:00:00:00:00:00:00:b8:59:9f:03:00:f9:8f:86 brd "
        "00:ff:ff:ff:ff:12:40:1b:ff:ff:00:00:00:00:00:00:ff:ff:ff:ff",
        "    vf 0     link/infiniband ... NODE_GUID 02:00:00:00:00:00:00:00, PORT_GUID 02:00:00:00:00:00:00:00, "
        "link-state enable, trust off, query_rss off",
    ]
    st = vpi(numvfs=1, view={"0000:3b:00.0": {"state": "ACTIVE", "lid": 5, "sm_lid": 1}})
    assert ip(st, "link", "set", "dev", PF, "vf", "0", "node_guid", "02:00:00:00:00:00:00:00", "port_guid",
              "02:00:00:00:00:00:00:00", "state", "enable").rc == 0
    ours = ip(st, "link", "show", PF).stdout.splitlines()

    def shape(line):
        line = re.sub(r"^\d+: \S+: <[A-Z_,-]+> mtu \d+ qdisc \w+", "N: NAME: <FLAGS> mtu M qdisc Q", line)
        line = re.sub(r"link/infiniband [0-9a-f:]{59} brd [0-9a-f:]{59}, spoof checking off,", "link/infiniband ...",
                      line)
        return re.sub(r"[0-9a-f]{2}(:[0-9a-f]{2}){19}", "ADDR20", line)

    assert [shape(x) for x in ours] == [shape(x) for x in real]
    assert ours[0].startswith("10: ibp59s0f0: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 2044 qdisc mq state UP ")


def test_ip_addr_show_layout_matches_spiderpool_capture():
    st = vpi(view={"0000:3b:00.0": {"state": "ACTIVE", "lid": 5, "sm_lid": 1}})
    out = ip(st, "addr", "show", PF).stdout
    assert out == ("10: ibp59s0f0: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 2044 qdisc mq state UP group default qlen 256\n"
                   "    link/infiniband %s brd %s\n" % (IB_ADDR, IB_BRD))
    assert "vf 0" in ip(st, "-d", "addr", "show", PF).stdout  # VFs only with -d for ip addr


def test_address_is_the_sysfs_one():
    st = vpi()
    entries = sysfs.tree(st)
    assert entries[sysfs.resolve(entries, "/class/net/%s/address" % PF)].content == IB_ADDR + "\n"
    assert entries[sysfs.resolve(entries, "/class/net/%s/ifindex" % PF)].content == "10\n"


def test_ethernet_pf_and_vf_lines():
    st = vpi(numvfs=0)
    sim_state.set_numvfs(st, "0000:3b:00.1", 1)
    out = ip(st, "link", "show", "dev", ETH).stdout
    assert out == ("11: enp59s0f1np1: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc mq state UP mode DEFAULT group "
                   "default qlen 1000\n"
                   "    link/ether 0c:42:a1:aa:00:11 brd ff:ff:ff:ff:ff:ff\n"
                   "    vf 0     link/ether 02:01:00:aa:00:11 brd ff:ff:ff:ff:ff:ff, spoof checking off, "
                   "link-state auto, trust off, query_rss off\n")


@pytest.mark.parametrize("version,kernel,tail", [
    ("5.2.0", None, "    vf 0 MAC 00:00:10:49:fe:80, spoof checking off, link-state auto, trust off, query_rss off\n"),
    ("5.4.0", None, "    vf 0     link/infiniband %s brd %s, spoof checking off, link-state auto, trust off, "
                    "query_rss off\n" % (IB_ADDR, IB_BRD)),
    ("6.1.0", "5.4.0", "    vf 0     link/infiniband %s brd %s, spoof checking off, link-state auto, trust off, "
                       "query_rss off\n" % (IB_ADDR, IB_BRD)),
    ("5.5.0", None, vf_line(0)),
])
def test_vf_line_by_iproute2_generation(version, kernel, tail):
    out = ip(vpi(numvfs=1, tools={"iproute2": version}, kernel=kernel), "link", "show", PF).stdout
    assert out.splitlines(keepends=True)[-1] == tail


def test_oneline_brief_and_details():
    st = vpi(numvfs=1)
    one = ip(st, "-o", "link", "show", PF).stdout
    assert one.count("\n") == 1 and one.count("\\    ") == 2 and "qlen 256\\    link/infiniband " in one
    brief = ip(st, "-br", "link", "show", PF).stdout
    assert brief == "ibp59s0f0        DOWN           %s <NO-CARRIER,BROADCAST,MULTICAST,UP> \n" % IB_ADDR
    details = ip(st, "-d", "link", "show", "dev", PF).stdout.splitlines()
    assert details[1] == "    link/infiniband %s brd %s promiscuity 0 minmtu 68 maxmtu 65520 " % (IB_ADDR, IB_BRD)
    assert details[2].startswith("    ipoib pkey  0xffff mode  datagram umcast  0000 addrgenmode eui64 ")
    assert details[2].endswith(" parentbus pci parentdev 0000:3b:00.0 ")
    assert details[3] == vf_line(0).rstrip("\n")


def test_json_compact_and_pretty():
    st = vpi(numvfs=1)
    assert ip(st, "link", "set", PF, "vf", "0", "node_guid", GUID1, "state", "disable").rc == 0
    text = ip(st, "-j", "link", "show", PF).stdout
    assert text.startswith('[{"ifindex":10,"ifname":"ibp59s0f0","flags":["NO-CARRIER",') and text.endswith("}]\n")
    doc = json.loads(text)
    vf = doc[0]["vfinfo_list"][0]
    assert (vf["node guid"], vf["port guid"], vf["link_state"], vf["spoofchk"]) == (GUID1, ZERO, "disable", False)
    pretty = ip(st, "-j", "-p", "link", "show", PF).stdout
    assert json.loads(pretty) == doc
    assert pretty.startswith('[ {\n        "ifindex": 10,\n') and pretty.endswith("\n    } ]\n")
    assert '"flags": [ "NO-CARRIER","BROADCAST","MULTICAST","UP" ],' in pretty


# ------------------------------------------------------------------------------ set / show
def test_set_show_round_trip_separate_calls():
    st = vpi()
    for argv in (("node_guid", GUID1), ("port_guid", "02:00:00:00:00:00:01:01"), ("state", "auto")):
        res = ip(st, "link", "set", PF, "vf", "1", *argv)
        assert (res.rc, res.stdout, res.stderr, res.kind, res.device) == (0, "", "", "write", "0000:3b:00.0")
    out = ip(st, "link", "show", PF).stdout
    assert out.endswith(vf_line(0) + vf_line(1, GUID1, "02:00:00:00:00:00:01:01", "auto"))
    r = st["runtime"]["functions"]["0000:3b:00.3"]
    assert (r["node_guid"], r["port_guid"], r["policy"]) == ("0x0200000000000001", "0x0200000000000101", "Follow")


def test_guid_becomes_active_after_rebind():
    st = vpi(numvfs=1)
    vf = sim_state.find_function(st, "0000:3b:00.2")
    name = vf.rdma

    def sysfs_guid():
        entries = sysfs.tree(st)
        return entries[sysfs.resolve(entries, "/class/infiniband/%s/node_guid" % name)].content

    assert ip(st, "link", "set", PF, "vf", "0", "node_guid", "11:22:33:44:77:66:77:90", "port_guid",
              "11:22:33:44:77:66:77:91").rc == 0
    assert sysfs_guid() == "0000:0000:0000:0000\n"  # administrative only, until the VF driver reloads
    sysfs.write(st, "/bus/pci/drivers/mlx5_core/unbind", b"0000:3b:00.2\n")
    sysfs.write(st, "/bus/pci/drivers/mlx5_core/bind", b"0000:3b:00.2\n")
    name = sim_state.find_function(st, "0000:3b:00.2").rdma
    assert sysfs_guid() == "1122:3344:7766:7790\n"
    entries = sysfs.tree(st)
    gid = entries[sysfs.resolve(entries, "/class/infiniband/%s/ports/1/gids/0" % name)].content
    assert gid == "fe80:0000:0000:0000:1122:3344:7766:7791\n"
    assert "NODE_GUID 11:22:33:44:77:66:77:90, PORT_GUID 11:22:33:44:77:66:77:91" in ip(st, "link", "show", PF).stdout


def test_link_state_and_ofed_policy_are_one_setting():
    st = vpi(numvfs=1, tools={"ofed": True})
    pf = "/bus/pci/devices/0000:3b:00.0"

    def policy():
        entries = sysfs.tree(st)
        return entries[sysfs.resolve(entries, pf + "/sriov/0/policy")].content

    assert policy() == "Down\n" and "link-state disable" in ip(st, "link", "show", PF).stdout
    for word, ofed in (("auto", "Follow"), ("enable", "Up"), ("disable", "Down"), ("a", "Follow")):
        assert ip(st, "link", "set", PF, "vf", "0", "state", word).rc == 0
        assert policy() == ofed + "\n"
    for ofed, word in (("Up", "enable"), ("Follow", "auto"), ("Down", "disable")):
        sysfs.write(st, pf + "/sriov/0/policy", ofed.encode() + b"\n")
        assert "link-state %s," % word in ip(st, "link", "show", PF).stdout
    sysfs.write(st, pf + "/sriov/0/node", b"11:22:33:44:77:66:77:90\n")
    assert "NODE_GUID 11:22:33:44:77:66:77:90" in ip(st, "link", "show", PF).stdout


def test_upstream_fresh_vf_shows_auto():
    assert "link-state auto" in ip(vpi(numvfs=1), "link", "show", PF).stdout


def test_several_vfs_in_one_call_and_keyword_prefixes():
    st = vpi()
    assert ip(st, "link", "set", "dev", PF, "vf", "0", "node", GUID1, "vf", "1", "port", GUID1, "st", "en").rc == 0
    out = ip(st, "link", "show", PF).stdout
    assert out.endswith(vf_line(0, GUID1) + vf_line(1, ZERO, GUID1, "enable"))


# ------------------------------------------------------------------------------ errors
@pytest.mark.parametrize("argv,rc,err,kind", [
    (["link", "set", "ib9", "vf", "0", "node_guid", GUID1], 1, 'Cannot find device "ib9"\n', "read"),
    (["link", "show", "ib9"], 1, 'Device "ib9" does not exist.\n', "read"),
    (["link", "set", PF, "vf", "2", "node_guid", GUID1], 2, "RTNETLINK answers: Invalid argument\n", "write"),
    (["link", "set", PF, "vf", "-1", "state", "auto"], 2, "RTNETLINK answers: Invalid argument\n", "write"),
    (["link", "set", ETH, "vf", "0", "node_guid", GUID1], 2, "RTNETLINK answers: Operation not supported\n", "write"),
    (["link", "set", PF, "vf", "0", "node_guid", "2:00:00:00:00:00:00:01"], 255,
     'Error: argument "2:00:00:00:00:00:00:01" is wrong: Invalid GUID format\n\n', "read"),
    (["link", "set", PF, "vf", "0", "port_guid", "0x0200000000000001"], 255,
     'Error: argument "0x0200000000000001" is wrong: Invalid GUID format\n\n', "read"),
    (["link", "set", PF, "vf", "0", "node_guid", "02:00:00:00:00:00:00:0g"], 255,
     'Error: argument "02:00:00:00:00:00:00:0g" is wrong: Invalid GUID format\n\n', "read"),
    (["link", "set", PF, "vf", "0", "state", "up"], 255, 'Error: argument "up" is wrong: Invalid "state" value\n\n',
     "read"),
    (["link", "set", PF, "vf", "x", "state", "auto"], 255, 'Error: argument "x" is wrong: Invalid "vf" value\n\n',
     "read"),
    (["link", "set", PF, "vf", "0"], 255, 'Command line is not complete. Try option "help"\n', "read"),
    (["link", "set", PF, "vf", "0", "node_guid"], 255, 'Command line is not complete. Try option "help"\n', "read"),
    (["link", "set", PF, "vf", "0", "up"], 255, 'Command line is not complete. Try option "help"\n', "read"),
    (["link", "show", PF, "extra"], 255, 'Error: either "dev" is duplicate, or "extra" is a garbage.\n', "read"),
])
def test_errors(argv, rc, err, kind):
    st = vpi()
    sim_state.set_numvfs(st, "0000:3b:00.1", 1)
    before = copy.deepcopy(st)
    res = ip(st, *argv)
    assert (res.rc, res.stdout, res.stderr, res.kind) == (rc, "", err, kind)
    assert st == before


def test_state_is_applied_before_a_failing_guid_like_the_kernel():
    st = vpi(numvfs=0)
    sim_state.set_numvfs(st, "0000:3b:00.1", 1)
    res = ip(st, "link", "set", ETH, "vf", "0", "state", "disable", "node_guid", GUID1)
    assert (res.rc, res.stderr) == (2, "RTNETLINK answers: Operation not supported\n")
    assert "link-state disable" in ip(st, "link", "show", ETH).stdout


def test_guid_syntax_is_get_guid():
    assert iproute.parse_guid("02:00:00:00:00:00:00:01") == 0x0200000000000001
    assert iproute.parse_guid("FF:ee:00:00:00:00:00:01") == 0xFFEE000000000001
    assert iproute.parse_guid(" 2:00:00:00:00:00:00:01") == 0x0200000000000001  # strtoul skips blanks
    for bad in ("02:00:00:00:00:00:00:1", "0200:0000:0000:0001", "02-00-00-00-00-00-00-01", "02:00:00:00:00:00:00:01:"):
        assert iproute.parse_guid(bad) is None


# ------------------------------------------------------------------------------ cli: state file and call log
def test_cli_saves_and_logs(sim_env):
    path = sim_env / "state.json"
    path.write_text(sim_state.dumps(vpi()))
    out, err = io.StringIO(), io.StringIO()
    assert cli.main("ip", ["link", "set", PF, "vf", "0", "node_guid", GUID1], stdout=out, stderr=err) == 0
    assert cli.main("ip", ["link", "set", PF, "vf", "0", "node_guid", "bad"], stdout=out, stderr=err) == 255
    assert cli.main("ip", ["link", "show", PF], stdout=out, stderr=err) == 0
    assert sim_state.load()["runtime"]["functions"]["0000:3b:00.2"]["node_guid"] == "0x0200000000000001"
    log = [json.loads(x) for x in (sim_env / "calls.jsonl").read_text().splitlines()]
    assert [(x["tool"], x["kind"], x["rc"], x["device"]) for x in log] == [
        ("ip", "write", 0, "0000:3b:00.0"), ("ip", "read", 255, None), ("ip", "read", 0, None)]
    assert "NODE_GUID 02:00:00:00:00:00:00:01" in out.getvalue()


# ------------------------------------------------------------------------------ the wrapper: pass-through
class Exec(Exception):
    pass


@pytest.fixture
def wrapper(sim_env, monkeypatch):
    """iproute.main with the state file written, os.execv and the real ip faked."""
    (sim_env / "state.json").write_text(sim_state.dumps(vpi(numvfs=1)))
    calls = types.SimpleNamespace(execs=[], runs=[], real_stdout=b"1: lo: <LOOPBACK,UP,LOWER_UP> mtu 65536 qdisc noqueue "
                                  b"state UNKNOWN mode DEFAULT group default qlen 1000\n    link/loopback "
                                  b"00:00:00:00:00:00 brd 00:00:00:00:00:00\n")

    def fake_execv(path, args):
        calls.execs.append((path, args))
        raise Exec()

    def fake_run(args, **kwargs):
        calls.runs.append((kwargs.get("executable"), args))
        return subprocess.CompletedProcess(args, 0, calls.real_stdout, b"")

    monkeypatch.setattr(os, "execv", fake_execv)
    monkeypatch.setattr(subprocess, "run", fake_run)
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    monkeypatch.setattr(iproute, "_in_initial_netns", lambda: True)

    def call(*argv):
        out, err = io.StringIO(), io.StringIO()
        try:
            rc = iproute.main(list(argv), stdout=out, stderr=err)
        except Exec:
            rc = "exec"
        return rc, out.getvalue(), err.getvalue()

    calls.call = call
    return calls


@pytest.mark.parametrize("argv", [
    [], ["-4", "route", "get", "8.8.8.8"], ["addr", "show", "primary", "dev", "eth0"], ["link", "show", "lo"],
    ["link", "set", "eth0", "up"], ["link", "set", "dev", "eth0", "vf", "0", "node_guid", GUID1],
    ["-batch", "cmds"], ["-n", "ns1", "link", "show", PF], ["-s", "-s", "neigh"], ["link", "add", "dummy0", "type", "dummy"],
    ["-V"], ["help"], ["link", "help"], ["monitor"], ["link", "show", "group", "5"], ["route"],
    ["address", "add", "10.0.0.1/24", "dev", PF], ["rule", "show", PF],
])
def test_pass_through_keeps_argv(wrapper, argv):
    argv_before = list(argv)
    assert wrapper.call(*argv)[0] == "exec"
    assert wrapper.execs == [(iproute.REAL_IP, ["ip"] + argv_before)]
    assert not (wrapper.runs and argv)


def test_no_state_file_passes_through(wrapper, sim_env):
    (sim_env / "state.json").unlink()
    assert wrapper.call("link", "show", PF)[0] == "exec"


def test_other_netns_passes_through(wrapper, monkeypatch):
    monkeypatch.setattr(iproute, "_in_initial_netns", lambda: False)
    assert wrapper.call("link", "show", PF)[0] == "exec"


def test_simulated_device_is_answered_and_logged(wrapper, sim_env):
    rc, out, err = wrapper.call("-d", "link", "show", "dev", PF)
    assert (rc, err) == (0, "") and "    vf 0     link/infiniband" in out and not wrapper.execs
    rc, out, err = wrapper.call("link", "set", PF, "vf", "0", "port_guid", GUID1)
    assert (rc, out, err) == (0, "", "")
    assert "PORT_GUID %s" % GUID1 in wrapper.call("link", "show", PF)[1]
    log = [json.loads(x) for x in (sim_env / "calls.jsonl").read_text().splitlines()]
    assert [(x["kind"], x["argv"][:2]) for x in log] == [("read", ["-d", "link"]), ("write", ["link", "set"]),
                                                         ("read", ["link", "show"])]


def test_set_needs_root(wrapper, monkeypatch):
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    assert wrapper.call("link", "set", PF, "vf", "0", "port_guid", GUID1) == (
        2, "", "RTNETLINK answers: Operation not permitted\n")


def test_no_device_show_appends(wrapper):
    rc, out, _err = wrapper.call("link", "show")
    assert rc == 0 and wrapper.runs == [(iproute.REAL_IP, ["ip", "link", "show"])]
    lines = out.splitlines()
    assert lines[0].startswith("1: lo: ") and lines[2].startswith("10: ibp59s0f0: ")
    assert [x.split(":")[0] for x in lines if not x.startswith(" ")] == ["1", "10", "11", "12"]  # + VF's netdev
    wrapper.real_stdout = b'[{"ifindex":1,"ifname":"lo"}]\n'
    rc, out, _err = wrapper.call("-j", "link")
    assert [x["ifname"] for x in json.loads(out)] == ["lo", PF, ETH, "ibp59s0f2"]
    wrapper.real_stdout = b'[ {\n        "ifindex": 1,\n        "ifname": "lo"\n    } ]\n'
    rc, out, _err = wrapper.call("-j", "-p", "addr")
    assert [x["ifname"] for x in json.loads(out)] == ["lo", PF, ETH, "ibp59s0f2"] and out.endswith("\n    } ]\n")
    wrapper.real_stdout = b"[]\n"
    assert [x["ifname"] for x in json.loads(wrapper.call("-j", "link")[1])] == [PF, ETH, "ibp59s0f2"]
    wrapper.real_stdout = b"[ ]\n"
    assert len(json.loads(wrapper.call("-j", "-p", "link")[1])) == 3
    wrapper.real_stdout = b""
    assert wrapper.call("-4", "addr", "show")[1] == ""  # no IPv4 address on a simulated netdev


def test_wrapper_script_execs_the_real_ip(tmp_path):
    """The installed wrapper, end to end: ``python3 -IS``, only iproute.py imported, exec with the same argv."""
    fake = tmp_path / "ip.distrib"
    fake.write_text("#!/bin/sh\necho \"real: $*\"\n")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    script = tmp_path / "ip"
    script.write_text(node.IP_WRAPPER.format(tool="ip", lib=LAB, pycache=str(tmp_path / "pycache")).replace("/usr/bin/python3", sys.executable, 1))
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    state = tmp_path / "state.json"
    env = dict(os.environ, FABRICSIM_REAL_IP=str(fake), FABRICSIM_STATE=str(state),
               FABRICSIM_LOG=str(tmp_path / "calls.jsonl"))

    def run(*argv):
        res = subprocess.run([str(script)] + list(argv), env=env, capture_output=True, text=True, check=False)
        return res.returncode, res.stdout, res.stderr

    assert run("-4", "addr", "show", "dev", "eth0") == (0, "real: -4 addr show dev eth0\n", "")  # no state file
    state.write_text(sim_state.dumps(vpi(numvfs=1)))
    assert run("link", "show", "dev", "eth0") == (0, "real: link show dev eth0\n", "")
    rc, out, err = run("link", "show", "dev", PF)
    assert (rc, err) == (0, "") and out.endswith(vf_line(0))


def test_node_installs_ip_at_the_packaged_path():
    assert node.TOOL_PATHS["ip"] == "/usr/bin/ip" and "ip" in node.BASE_TOOLS
    assert cli.available(vpi(), "ip")
    text = node.IP_WRAPPER.format(tool="ip", lib="/usr/lib/fabricsim", pycache=node.PYCACHE_DIR)
    assert text.startswith("#!/usr/bin/python3 -IS\n") and "fabricsim" in text[:200]
