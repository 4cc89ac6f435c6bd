# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""kernel_modules end to end through AnsibleModule: modprobe mocked with the exact argv (the run_module
harness), a fake sysfs whose /sys/module has the case's modules, and a fake root under tmp_path for
the files, /proc/sys/kernel/osrelease, /boot and /lib/modules (the module_utils.kmod constants). The
files are owned by the user running the tests (module constants OWNER and GROUP). Cases in
test_kernel_modules.yaml, bad inputs in test_kernel_modules_bad_inputs.yaml; file paths in a case are
under the fake root, and so are the paths the result names."""

from __future__ import annotations

import grp
import json
import os
import pwd

import pytest

from ansible_collections.fabric.infiniband.plugins.module_utils import kmod
from ansible_collections.fabric.infiniband.plugins.modules import kernel_modules
from ansible_collections.fabric.infiniband.tests.unit.conftest import run_module
from ansible_collections.fabric.infiniband.tests.unit.plugins.modules.test_mlxconfig_module import assert_subset, case_ids, load_cases


MODPROBE = {"modprobe": "/usr/sbin/modprobe"}
RELEASE = "6.1.0-28-amd64"
HEADERS = {"boot": kmod.BOOT_FILE_HEADER, "options": kmod.OPTIONS_FILE_HEADER, "cmdline": kmod.CMDLINE_FILE_HEADER}
CASES = load_cases("test_kernel_modules.yaml")
BAD = load_cases("test_kernel_modules_bad_inputs.yaml")


@pytest.fixture
def root(tmp_path, monkeypatch):
    """The fake root: never the test machine's /etc, /proc, /boot and /lib/modules."""
    top = tmp_path / "root"
    monkeypatch.setattr(kmod, "OSRELEASE", str(top / "proc" / "sys" / "kernel" / "osrelease"))
    monkeypatch.setattr(kmod, "BOOT_DIR", str(top / "boot"))
    monkeypatch.setattr(kmod, "MODULES_DIR", str(top / "lib" / "modules"))
    monkeypatch.setattr(kernel_modules, "OWNER", pwd.getpwuid(os.getuid()).pw_name)
    monkeypatch.setattr(kernel_modules, "GROUP", grp.getgrgid(os.getgid()).gr_name)
    return str(top)


def put(path, content, mode=0o644):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as handle:
        handle.write(content)
    os.chmod(path, mode)


def read(path):
    with open(path) as handle:
        return handle.read()


def content(spec):
    """A file's content in a case: a string as it is, or {header: boot|options|cmdline, lines: [...]}."""
    if isinstance(spec, str):
        return spec
    return HEADERS[spec["header"]] + "".join("%s\n" % line for line in spec.get("lines") or [])


def prepare(case, root, make_sysfs):
    """The node of a case: loaded modules, kernel release, /boot, modules.builtin and the files before."""
    put(os.path.join(root, "proc", "sys", "kernel", "osrelease"), "%s\n" % case.get("kernel", RELEASE))
    for name in case.get("boot") or []:
        put(os.path.join(root, "boot", name), "initramfs")
    if case.get("builtin"):
        put(os.path.join(root, "lib", "modules", case.get("kernel", RELEASE), "modules.builtin"),
            "".join("kernel/drivers/x/%s.ko\n" % name for name in case["builtin"]))
    for path, spec in (case.get("files_before") or {}).items():
        spec = spec if isinstance(spec, dict) and "mode" in spec else {"content": spec}
        put(root + path, content(spec["content"]), int(str(spec.get("mode", "0644")), 8))
    for path, target in (case.get("links") or {}).items():
        os.symlink(target, root + path)
    files = {"module/%s/initstate" % name: "live" for name in case.get("loaded") or []}
    return make_sysfs({"files": files})


def under_root(params, root):
    params = dict(params)
    for key in kernel_modules.FILE_OPTIONS:
        if isinstance(params.get(key), str) and params[key].startswith("/"):
            params[key] = root + params[key]
    return params


def run_case(case, mocker, capsys, make_sysfs, root):
    params = under_root(case.get("params") or {}, root)
    params.setdefault("sysfs_root", prepare(case, root, make_sysfs))
    flags = case.get("flags") or {}
    tools = case.get("tools", MODPROBE)
    result, ran = run_module(mocker, capsys, kernel_modules.main, params, tools, case.get("run_command") or [],
                             check_mode=flags.get("check", False), diff=flags.get("diff", False))
    # the paths the result names, relative to the fake root
    result = json.loads(json.dumps(result).replace(root, ""))
    assert bool(result.get("failed")) == bool(case.get("failed")), result
    for part in case.get("msg") or []:
        assert part in result.get("msg", ""), "%r not in msg %r" % (part, result.get("msg"))
    if "expect" in case:
        assert_subset(case["expect"], result)
    assert result["_test_warnings"] == [], result["_test_warnings"]
    return result, ran


def files_now(root):
    out = {}
    for top, _dirs, names in os.walk(os.path.join(root, "etc")):
        for name in names:
            path = os.path.join(top, name)
            out[path[len(root):]] = (read(path), oct(os.stat(path).st_mode & 0o7777))
    return out


@pytest.mark.parametrize("case", CASES, ids=case_ids(CASES))
def test_case(case, mocker, capsys, make_sysfs, root):
    result, ran = run_case(case, mocker, capsys, make_sysfs, root)
    flags = case.get("flags") or {}
    assert result["cmds"] == ran and result["cmd"] == (ran[-1] if ran else [])
    if flags.get("check"):
        assert all(argv[1] == "-n" for argv in ran), "check mode loads nothing: %r" % (ran,)
    if not flags.get("diff"):
        assert "diff" not in result
    if "files_after" in case:
        expected = {path: content(spec) for path, spec in case["files_after"].items() if spec is not None}
        assert {path: text for path, (text, _mode) in files_now(root).items()} == expected
        assert all(mode == "0o644" for _text, mode in files_now(root).values())
    # checksums are the SHA-1 of what the file holds (or would hold, in check mode)
    for option, entry in result["files"].items():
        if entry["state"] == "present" and not flags.get("check") and not result.get("failed"):
            with open(root + entry["path"], "rb") as handle:
                assert entry["checksum"] == kmod.checksum(handle.read()), option
    assert result["changed"] == (bool(result["loaded"]) or any(entry["changed"] for entry in result["files"].values()))


def test_bad_input_table_is_large_enough():
    assert len(BAD) >= 15


@pytest.mark.parametrize("case", BAD, ids=case_ids(BAD))
def test_bad_input(case, mocker, capsys, make_sysfs, root):
    """Every bad input fails before any file is written and before any modprobe."""
    case = dict(case, failed=True)
    result, ran = run_case(case, mocker, capsys, make_sysfs, root)
    assert ran == []
    assert result.get("changed", False) is False
    assert files_now(root) == {path: (content(spec), "0o644") for path, spec in (case.get("files_before") or {}).items()}


def test_second_run_changes_nothing(mocker, capsys, make_sysfs, root):
    """A run after a first one that wrote the files (and with the modules loaded) reads and runs nothing."""
    case = {"loaded": ["mlx5_core"], "params": {
        "names": ["mlx5_core", "ib_umad"], "boot_file": "/etc/modules-load.d/rdma.conf",
        "options": {"ib_core": {"netns_mode": 0}}, "options_file": "/etc/modprobe.d/netns.conf",
        "cmdline": True, "cmdline_file": "/etc/default/grub.d/netns.cfg"},
        "run_command": [{"argv": ["/usr/sbin/modprobe", "ib_umad"]}]}
    first, ran = run_case(case, mocker, capsys, make_sysfs, root)
    assert first["changed"] is True and ran == [["/usr/sbin/modprobe", "ib_umad"]]
    inodes = {path: os.stat(root + path).st_ino for path in files_now(root)}
    mocker.stopall()
    case = dict(case, loaded=["mlx5_core", "ib_umad"], run_command=[])
    second, ran = run_case(case, mocker, capsys, make_sysfs, root)
    assert second["changed"] is False and ran == []
    assert all(not entry["changed"] for entry in second["files"].values())
    assert {option: entry["checksum"] for option, entry in second["files"].items()} == \
        {option: entry["checksum"] for option, entry in first["files"].items()}
    assert {path: os.stat(root + path).st_ino for path in files_now(root)} == inodes


def test_argument_spec_is_a_fresh_copy():
    spec = kernel_modules.argument_spec()
    assert spec["sysfs_root"] == {"type": "path", "default": "/sys"}
    assert spec["names"] == {"type": "list", "elements": "str", "default": []}
    spec["names"]["default"].append("x")
    assert kernel_modules.argument_spec()["names"]["default"] == []
