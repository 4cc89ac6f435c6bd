# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""module_utils/rdma.py for fabric.infiniband.rdma_system: the read with its sysfs
fallback, the ``system set`` argv and error classification on recorded outputs
(fixtures/rdma/), and the search for the network namespaces that block a change
of mode on fake /proc and /run/netns trees.

``build_proc`` is shared with the module tests.
"""

from __future__ import annotations

import os

import pytest

from ansible_collections.fabric.infiniband.plugins.module_utils import rdma
from ansible_collections.fabric.infiniband.tests.unit.conftest import fixture_path, read_fixture


INIT_NS = 4026531840


def build_proc(proc_root, procs=None, netns_names=None, run_dir=None):
    """A fake /proc: ``procs`` maps pid -> {net: 'net:[N]' or an int, comm: name};
    ``net: null`` leaves the link out (unreadable). ``netns_names`` become empty
    files in ``run_dir`` (as a stale /run/netns entry would look: no nsfs inode)."""
    os.makedirs(proc_root, exist_ok=True)
    for name in ("self", "sys", "net"):  # non-numeric entries are skipped
        os.makedirs(os.path.join(proc_root, name), exist_ok=True)
    for pid, spec in (procs or {}).items():
        base = os.path.join(proc_root, str(pid))
        os.makedirs(os.path.join(base, "ns"), exist_ok=True)
        net = spec.get("net")
        if net is not None:
            os.symlink(net if isinstance(net, str) else "net:[%d]" % net, os.path.join(base, "ns", "net"))
        if spec.get("comm") is not None:
            with open(os.path.join(base, "comm"), "w") as handle:
                handle.write("%s\n" % spec["comm"])
    if run_dir is not None:
        os.makedirs(run_dir, exist_ok=True)
        for name in netns_names or []:
            open(os.path.join(run_dir, name), "w").close()


def fixture(name):
    """(stdout, stderr) of a fixtures/rdma/ capture."""
    out = read_fixture("rdma/%s.txt" % name)
    err_path = fixture_path("rdma/%s.stderr" % name)
    err = read_fixture("rdma/%s.stderr" % name) if os.path.exists(err_path) else ""
    return out, err


# ---------------------------------------------------------------- set argv

@pytest.mark.parametrize("mode", ["shared", "exclusive"])
def test_system_set_args(mode):
    assert rdma.system_set_args(mode) == ["system", "set", "netns", mode]


@pytest.mark.parametrize("mode", ["Exclusive", "", None, "foo", "exclusive "])
def test_system_set_args_refuses_other_values(mode):
    with pytest.raises(ValueError):
        rdma.system_set_args(mode)


def test_modprobe_netns_mode():
    assert rdma.modprobe_netns_mode("exclusive") == 0
    assert rdma.modprobe_netns_mode("shared") == 1
    with pytest.raises(ValueError):
        rdma.modprobe_netns_mode("0")


# ---------------------------------------------------------------- set errors

@pytest.mark.parametrize("name, rc, kind", [
    ("sim_6.1_set_exclusive", 0, None),
    ("sim_6.1_set_shared_same_busy", 0, None),
    ("sim_6.1_set_exclusive_busy", 1, "busy"),
    ("real_debian12_set_busy", 1, "busy"),
    ("sim_6.1_set_invalid", 1, "invalid_mode"),
    ("sim_5.2_set", 1, "unsupported"),
])
def test_classify_recorded_set_outputs(name, rc, kind):
    out, err = fixture(name)
    assert rdma.classify_set_error(rc, out, err) == kind


@pytest.mark.parametrize("rc, out, err, kind", [
    (0, "", "", None),
    (0, "", "error: Device or resource busy\n", None),  # rc 0 wins: the read-back decides
    (1, "error: Device or resource busy\n", "", "busy"),  # on stdout
    (1, "", "  error:   Device or resource busy  \r\n", "busy"),
    (1, "", "ERROR: DEVICE OR RESOURCE BUSY", "busy"),
    (255, "", "error: Device or resource busy", "busy"),
    (1, "", "valid options are: { shared | exclusive }\n", "invalid_mode"),
    (1, "", "Unknown object 'system'.\n", "unsupported"),
    (1, "", "error: Operation not permitted\n", "permission"),
    (1, "", "error: Permission denied\n", "permission"),
    (1, "", "error: Operation not supported\n", "not_supported"),
    (1, "", "error: Protocol not supported\n", "not_supported"),
    (1, "", "", "other"),
    (2, "", "something new\n", "other"),
    (1, None, None, "other"),
])
def test_classify_set_error_variants(rc, out, err, kind):
    assert rdma.classify_set_error(rc, out, err) == kind


def test_every_kind_has_help():
    kinds = set(kind for kind, _needle in rdma.SET_ERRORS) | {"other"}
    assert kinds == set(rdma.SET_ERROR_HELP)


# ---------------------------------------------------------------- read with fallback

GEN = {
    "5.3": {},
    "5.14": {"copy_on_fork": True},
    "6.1": {"copy_on_fork": True},
    "6.7": {"privileged_qkey": False, "copy_on_fork": True},
    "6.13": {"privileged_qkey": False, "monitor": False, "copy_on_fork": True},
}


@pytest.mark.parametrize("version", sorted(GEN))
@pytest.mark.parametrize("mode", ["shared", "exclusive"])
def test_settings_every_generation(version, mode):
    out, err = fixture("sim_%s_show_%s" % (version, mode))
    settings, problem = rdma.system_settings((0, out, err), "exclusive" if mode == "shared" else "shared")
    expected = dict(rdma.empty_settings(), netns_mode=mode, source="rdma")
    expected.update(GEN[version])
    assert settings == expected
    assert problem is None


def test_settings_debian12_text_for_json():
    out, _err = fixture("real_debian12_show_j_shared")
    settings, problem = rdma.system_settings((0, out, ""), None)
    assert settings == dict(rdma.empty_settings(), netns_mode="shared", source="rdma", copy_on_fork=True)
    assert problem is None


@pytest.mark.parametrize("out", [
    "   netns exclusive copy-on-fork on",
    "\tnetns\texclusive\n\tcopy-on-fork\ton\n",
    '[ {\n        "netns": "exclusive",\n        "copy-on-fork": true\n    } ]\n',
    '[{"netns":"exclusive","copy-on-fork":true}]',
])
def test_settings_whitespace_variants(out):
    settings, problem = rdma.system_settings((0, out, ""), None)
    assert (settings["netns_mode"], settings["copy_on_fork"], settings["source"], problem) == ("exclusive", True, "rdma", None)


def test_settings_old_iproute2_falls_back_quietly():
    out, err = fixture("sim_5.2_show")
    assert rdma.system_settings((1, out, err), "exclusive") == (
        dict(rdma.empty_settings(), netns_mode="exclusive", source="sysfs"), None)
    assert rdma.system_settings((255, "", read_fixture("rdma_system_real_old_iproute2.err")), None) == (rdma.empty_settings(), None)


@pytest.mark.parametrize("show, sysfs_mode, mode, source, problem", [
    (None, "shared", "shared", "sysfs", None),  # rdma not installed
    (None, None, None, None, None),  # ... and ib_core not loaded
    ((1, "", "error: Protocol not supported\n"), None, None, None, "rc 1: error: Protocol not supported"),
    ((1, "", "error: Protocol not supported\n"), "exclusive", "exclusive", "sysfs", "rc 1: error: Protocol not supported"),
    ((0, "garbage\n", ""), "shared", "shared", "sysfs", "rc 0: garbage"),
    ((0, "", ""), None, None, None, "rc 0: no output"),
    ((1, "netns shared\n", ""), None, None, None, "rc 1: netns shared"),  # a failed run's output is not trusted
    ((0, '[{"netns":"bogus"}]', ""), "shared", "shared", "sysfs", 'rc 0: [{"netns":"bogus"}]'),
    (None, "bogus", None, None, None),
])
def test_settings_fallbacks(show, sysfs_mode, mode, source, problem):
    settings, said = rdma.system_settings(show, sysfs_mode)
    assert (settings["netns_mode"], settings["source"], said) == (mode, source, problem)
    assert settings["copy_on_fork"] is None


# ---------------------------------------------------------------- blocking namespaces

@pytest.mark.parametrize("link, inode", [
    ("net:[4026531840]", 4026531840),
    (" net:[1]\n", 1),
    ("mnt:[4026531840]", None),
    ("net:[]", None),
    ("net:[12a]", None),
    ("", None),
    (None, None),
])
def test_ns_inode(link, inode):
    assert rdma.ns_inode(link) == inode


def test_named_netns(tmp_path):
    run = tmp_path / "netns"
    build_proc(str(tmp_path / "proc"), netns_names=["x", "cni-1234"], run_dir=str(run))
    assert rdma.named_netns(str(run)) == [("cni-1234", None), ("x", None)]
    # a mounted namespace file has the device of /proc/self/ns/net: its inode is the namespace's
    dev = os.stat(str(run / "x")).st_dev
    inodes = [("cni-1234", os.stat(str(run / "cni-1234")).st_ino), ("x", os.stat(str(run / "x")).st_ino)]
    assert rdma.named_netns(str(run), dev) == inodes
    assert rdma.named_netns(str(tmp_path / "missing")) == []


def test_netns_processes(tmp_path):
    proc = str(tmp_path / "proc")
    build_proc(proc, {
        1: {"net": INIT_NS, "comm": "systemd"},
        2: {"net": INIT_NS, "comm": "kthreadd"},
        812: {"net": 4026532305, "comm": "systemd-hostnam"},
        90: {"net": 4026532400, "comm": "sleep"},
        91: {"net": 4026532400},  # no comm
        700: {"net": None, "comm": "gone"},  # link unreadable
        701: {"net": "mnt:[4026531841]", "comm": "odd"},
    })
    init, found = rdma.netns_processes(proc)
    assert init == INIT_NS
    assert found == {4026532305: [(812, "systemd-hostnam")], 4026532400: [(90, "sleep"), (91, "?")]}


def test_netns_processes_without_pid1(tmp_path):
    proc = str(tmp_path / "proc")
    build_proc(proc, {812: {"net": 4026532305, "comm": "systemd-hostnam"}, 813: {"net": INIT_NS, "comm": "bash"}})
    assert rdma.netns_processes(proc) == (None, {})
    assert rdma.netns_processes(str(tmp_path / "missing")) == (None, {})
    # our own namespace stands for PID 1's when only that one can be read
    os.makedirs(os.path.join(proc, "self", "ns"))
    os.symlink("net:[%d]" % INIT_NS, os.path.join(proc, "self", "ns", "net"))
    assert rdma.netns_processes(proc) == (INIT_NS, {4026532305: [(812, "systemd-hostnam")]})


def test_group_blockers():
    named = [("init", INIT_NS), ("x", 4026532400), ("stale", None)]
    by_inode = {4026532400: [(90, "sleep")], 4026532305: [(812, "systemd-hostnam")], 4026532999: [(5, "a"), (6, "b"), (7, "c")]}
    assert rdma.group_blockers(named, by_inode, INIT_NS, limit=2) == [
        {"name": "x", "inode": 4026532400, "process_count": 1, "processes": [{"pid": 90, "comm": "sleep"}]},
        {"name": "stale", "inode": None, "process_count": 0, "processes": []},
        {"name": None, "inode": 4026532305, "process_count": 1, "processes": [{"pid": 812, "comm": "systemd-hostnam"}]},
        {"name": None, "inode": 4026532999, "process_count": 3, "processes": [{"pid": 5, "comm": "a"}, {"pid": 6, "comm": "b"}]},
    ]
    assert rdma.group_blockers([], {}, INIT_NS) == []


def test_netns_blockers_on_fake_trees(tmp_path, monkeypatch):
    proc, run = str(tmp_path / "proc"), str(tmp_path / "netns")
    build_proc(proc, {1: {"net": INIT_NS, "comm": "systemd"}, 812: {"net": 4026532305, "comm": "systemd-hostnam"}},
               netns_names=["x"], run_dir=run)
    expected = [
        {"name": "x", "inode": None, "process_count": 0, "processes": []},
        {"name": None, "inode": 4026532305, "process_count": 1, "processes": [{"pid": 812, "comm": "systemd-hostnam"}]},
    ]
    assert rdma.netns_blockers(proc, run) == (expected, True)
    # the defaults are read when called, so that tests can point them elsewhere
    monkeypatch.setattr(rdma, "PROC_ROOT", proc)
    monkeypatch.setattr(rdma, "NETNS_RUN_DIR", run)
    assert rdma.netns_blockers() == (expected, True)


def test_netns_blockers_nothing_to_see(tmp_path):
    proc = str(tmp_path / "proc")
    build_proc(proc, {1: {"net": INIT_NS}, 2: {"net": INIT_NS}})
    assert rdma.netns_blockers(proc, str(tmp_path / "no-run-netns")) == ([], True)
    assert rdma.netns_blockers(str(tmp_path / "no-proc"), str(tmp_path / "no-run-netns")) == ([], False)


@pytest.mark.parametrize("blocker, text", [
    ({"name": "x", "inode": None, "process_count": 0, "processes": []}, "/run/netns/x"),
    ({"name": "x", "inode": 7, "process_count": 1, "processes": [{"pid": 9, "comm": "sleep"}]},
     "/run/netns/x (net:[7]) held by sleep (pid 9)"),
    ({"name": None, "inode": 4026532305, "process_count": 1, "processes": [{"pid": 812, "comm": "systemd-hostnam"}]},
     "net:[4026532305] held by systemd-hostnam (pid 812)"),
    ({"name": None, "inode": 5, "process_count": 12, "processes": [{"pid": 1, "comm": "a"}, {"pid": 2, "comm": "b"}]},
     "net:[5] held by a (pid 1), b (pid 2) and 10 more processes"),
    ({"name": None, "inode": 5, "process_count": 3, "processes": [{"pid": 1, "comm": "a"}, {"pid": 2, "comm": "b"}]},
     "net:[5] held by a (pid 1), b (pid 2) and 1 more process"),
    ({"name": None, "inode": None}, "an unnamed network namespace"),
])
def test_describe_blocker(blocker, text):
    assert rdma.describe_blocker(blocker) == text


def test_describe_blocker_names_at_most_three_processes():
    procs = [{"pid": pid, "comm": "p%d" % pid} for pid in range(1, 11)]
    blocker = {"name": None, "inode": 5, "process_count": 40, "processes": procs}
    assert rdma.describe_blocker(blocker) == "net:[5] held by p1 (pid 1), p2 (pid 2), p3 (pid 3) and 37 more processes"


def test_describe_blockers():
    two = [{"name": "x", "inode": None, "processes": []}, {"name": "y", "inode": None, "processes": []}]
    assert rdma.describe_blockers(two) == "/run/netns/x; /run/netns/y"
    many = [{"name": "cni-%d" % index, "inode": None, "processes": []} for index in range(8)]
    assert rdma.describe_blockers(many) == ("/run/netns/cni-0; /run/netns/cni-1; /run/netns/cni-2; /run/netns/cni-3; "
                                            "/run/netns/cni-4; and 3 more (see blocked_by)")
    assert rdma.describe_blockers([]) == ("none is named in /run/netns or used by a process, so it is held by an open file "
                                          "descriptor or a bind mount elsewhere (lsns -t net tells)")
    assert rdma.describe_blockers([], processes_inspected=False) == (
        "none is named in /run/netns and the processes could not be inspected (/proc/1/ns/net and /proc/self/ns/net are not readable)")
