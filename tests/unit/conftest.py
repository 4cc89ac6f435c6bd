# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Shared test helpers: a builder of fake sysfs trees.

A tree is described in YAML (see ``plugins/module_utils/fixtures/sysfs_*.yml``)
by PCI function, and laid out the way the kernel does it: the real
directories live under ``devices/``, and ``bus/pci/devices``,
``class/infiniband``, ``class/net``, ``driver``, ``device``, ``physfn`` and
``virtfnN`` are relative symlinks into it. Every file value is written with a
trailing newline, as the kernel does.
"""

from __future__ import annotations

import json
import os

import pytest
import yaml
from ansible.module_utils import basic
from ansible.module_utils.testing import patch_module_args


FIXTURES = os.path.join(os.path.dirname(__file__), "plugins", "module_utils", "fixtures")
BRIDGE = os.path.join("devices", "pci0000:00", "0000:00:01.0")


def fixture_path(name):
    return os.path.join(FIXTURES, name)


def read_fixture(name):
    with open(fixture_path(name)) as handle:
        return handle.read()


def load_yaml_fixture(name):
    with open(fixture_path(name)) as handle:
        return yaml.safe_load(handle)


def _write(root, rel, value):
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as handle:
        handle.write(str(value) if str(value).endswith("\n") else "%s\n" % value)


def _link(root, rel, target):
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if os.path.lexists(path):
        os.unlink(path)
    os.symlink(target, path)


def _write_dir(root, rel, content):
    """Nested dict -> directories; scalars -> files."""
    os.makedirs(os.path.join(root, rel), exist_ok=True)
    for name, value in (content or {}).items():
        if isinstance(value, dict):
            _write_dir(root, os.path.join(rel, str(name)), value)
        else:
            _write(root, os.path.join(rel, str(name)), value)


def _up(rel):
    return os.path.join(*([".."] * len(rel.split(os.sep))))


def build_sysfs(root, spec):
    """Create the tree described by ``spec`` (a dict) under ``root``."""
    os.makedirs(root, exist_ok=True)
    for bdf, fn in (spec.get("pci") or {}).items():
        fn = dict(fn)
        fdir = os.path.join(BRIDGE, bdf)
        net = fn.pop("net", {}) or {}
        ibdevs = fn.pop("infiniband", {}) or {}
        driver = fn.pop("driver", None)
        physfn = fn.pop("physfn", None)
        vf_index = fn.pop("vf_index", None)
        fn.setdefault("vendor", "0x15b3")
        _write_dir(root, fdir, fn)
        _link(root, os.path.join("bus", "pci", "devices", bdf), os.path.join("..", "..", "..", fdir))
        if driver:
            os.makedirs(os.path.join(root, "bus", "pci", "drivers", driver), exist_ok=True)
            _link(root, os.path.join(fdir, "driver"), os.path.join(_up(fdir), "bus", "pci", "drivers", driver))
        if physfn:
            _link(root, os.path.join(fdir, "physfn"), os.path.join("..", physfn))
            _link(root, os.path.join(BRIDGE, physfn, "virtfn%d" % vf_index), os.path.join("..", bdf))
        for ifname, attrs in net.items():
            _write_dir(root, os.path.join(fdir, "net", ifname), attrs)
            _link(root, os.path.join("class", "net", ifname), os.path.join("..", "..", fdir, "net", ifname))
        for name, attrs in ibdevs.items():
            _ib_device(root, os.path.join(fdir, "infiniband", name), name, attrs)
            _link(root, os.path.join(fdir, "infiniband", name, "device"), os.path.join("..", "..", "..", bdf))
    for name, attrs in (spec.get("virtual_infiniband") or {}).items():
        _ib_device(root, os.path.join("devices", "virtual", "infiniband", name), name, attrs)
    if spec.get("ib_core_netns_mode") is not None:
        _write(root, os.path.join("module", "ib_core", "parameters", "netns_mode"), spec["ib_core_netns_mode"])
    if spec.get("lockdown") is not None:
        _write(root, os.path.join("kernel", "security", "lockdown"), spec["lockdown"])
    for rel, value in (spec.get("files") or {}).items():
        _write(root, rel, value)
    for rel, target in (spec.get("links") or {}).items():
        _link(root, rel, target)
    for rel in spec.get("remove") or []:
        os.unlink(os.path.join(root, rel))
    os.makedirs(os.path.join(root, "class", "infiniband"), exist_ok=True)
    os.makedirs(os.path.join(root, "bus", "pci", "devices"), exist_ok=True)
    return root


def _ib_device(root, ddir, name, attrs):
    _write_dir(root, ddir, attrs)
    _link(root, os.path.join("class", "infiniband", name), os.path.join("..", "..", ddir))


@pytest.fixture
def make_sysfs(tmp_path):
    """``make_sysfs('sysfs_x.yml')`` or ``make_sysfs({...})`` -> root path (str)."""
    counter = [0]

    def _make(spec):
        if isinstance(spec, str):
            spec = load_yaml_fixture(spec)
        counter[0] += 1
        return build_sysfs(str(tmp_path / ("sys%d" % counter[0])), spec or {})

    return _make


# The harness every module test runs a module through: commands mocked in order, argv lists only, C locale, no shell.
def _output(call, key):
    if "%s_fixture" % key in call:
        return read_fixture(call["%s_fixture" % key])
    return call.get(key, "")


def run_module(mocker, capsys, main, params, tools, calls, check_mode=False, diff=False):
    """Run a module's main(); return (result dict, commands run).

    ``calls`` lists the commands expected in order: ``argv`` (exact), ``rc``,
    and ``out``/``err`` or ``out_fixture``/``err_fixture`` (a file under
    module_utils/fixtures). Warnings end up in the result as ``_test_warnings``.
    """
    expected_calls = list(calls)
    ran = []

    def get_bin_path(self, arg, required=False, opt_dirs=None):
        path = tools.get(arg)
        if path is None and required:
            self.fail_json(msg="Failed to find required executable %s" % arg)
        return path

    def run_command(self, args, **kwargs):
        ran.append(list(args))
        assert expected_calls, "unexpected command %r" % (args,)
        call = expected_calls.pop(0)
        assert list(args) == call["argv"]
        assert isinstance(args, list), "commands are argv lists"
        assert kwargs.get("environ_update") == {"LC_ALL": "C", "LANGUAGE": "C"}
        assert not kwargs.get("use_unsafe_shell")
        return call.get("rc", 0), _output(call, "out"), _output(call, "err")

    mocker.patch.object(basic.AnsibleModule, "get_bin_path", get_bin_path)
    mocker.patch.object(basic.AnsibleModule, "run_command", run_command)
    warn = mocker.patch.object(basic.AnsibleModule, "warn", autospec=True)
    args = dict(params)
    if check_mode:
        args["_ansible_check_mode"] = True
    if diff:
        args["_ansible_diff"] = True
    with patch_module_args(args):
        with pytest.raises(SystemExit):
            main()
    assert not expected_calls, "commands not run: %r" % (expected_calls,)
    result = json.loads(capsys.readouterr().out)
    result["_test_warnings"] = [call.args[1] for call in warn.call_args_list]
    return result, ran
