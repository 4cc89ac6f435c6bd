# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

import pytest

from ansible_collections.fabric.infiniband.plugins.module_utils import _runner


class FailJson(Exception):
    pass


class FakeModule(object):
    """Just what the runner uses of AnsibleModule."""

    def __init__(self, tools, results=(), check_mode=False):
        self.tools = tools
        self.results = list(results)
        self.check_mode = check_mode
        self.calls = []

    def get_bin_path(self, arg, required=False, opt_dirs=None):
        path = self.tools.get(arg)
        if path is None and required:
            self.fail_json(msg="Failed to find required executable %s" % arg)
        return path

    def run_command(self, args, **kwargs):
        self.calls.append((args, kwargs))
        return self.results.pop(0)

    def fail_json(self, **kwargs):
        raise FailJson(kwargs)


def test_run_uses_argv_and_c_locale():
    module = FakeModule({"rdma": "/usr/sbin/rdma"}, [(0, "netns shared\n", "")])
    runner = _runner.Runner(module, "rdma")
    res = runner.run(["-j", "system", "show"])
    assert res.as_dict() == {"cmd": ["/usr/sbin/rdma", "-j", "system", "show"], "rc": 0, "stdout": "netns shared\n", "stderr": ""}
    assert res.ok and not res.skipped
    args, kwargs = module.calls[0]
    assert args == ["/usr/sbin/rdma", "-j", "system", "show"]
    assert kwargs["environ_update"] == {"LC_ALL": "C", "LANGUAGE": "C"}
    assert kwargs["check_rc"] is False
    assert kwargs["expand_user_and_vars"] is False
    assert "use_unsafe_shell" not in kwargs


def test_arguments_become_strings():
    module = FakeModule({"mstconfig": "/usr/bin/mstconfig"}, [(0, "", "")])
    res = _runner.Runner(module, "mstconfig").run(["-d", "0000:3b:00.0", "set", 8])
    assert res.cmd[-1] == "8"


def test_mutating_call_skipped_in_check_mode():
    module = FakeModule({"rdma": "/usr/sbin/rdma"}, check_mode=True)
    res = _runner.Runner(module, "rdma").run(["system", "set", "netns", "exclusive"], mutating=True)
    assert res.skipped and res.rc == 0 and module.calls == []
    assert res.cmd == ["/usr/sbin/rdma", "system", "set", "netns", "exclusive"]


def test_read_call_runs_in_check_mode():
    module = FakeModule({"rdma": "/usr/sbin/rdma"}, [(0, "", "")], check_mode=True)
    res = _runner.Runner(module, "rdma").run(["system", "show"])
    assert not res.skipped and len(module.calls) == 1


def test_required_tool_missing_fails():
    with pytest.raises(FailJson) as exc:
        _runner.Runner(FakeModule({}), "rdma")
    assert "rdma" in exc.value.args[0]["msg"]


def test_optional_tool_missing():
    runner = _runner.Runner(FakeModule({}), "rdma", required=False)
    assert not runner.available
    assert runner.argv(["system"]) == ["rdma", "system"]
    assert _runner.find_tool(FakeModule({"mst": "/usr/bin/mst"}), "mst") == "/usr/bin/mst"
    assert _runner.find_tool(FakeModule({}), "mst") is None


def test_fail_reports_command():
    module = FakeModule({"rdma": "/usr/sbin/rdma"}, [(1, "", "error: Device or resource busy\n")])
    runner = _runner.Runner(module, "rdma")
    res = runner.run(["system", "set", "netns", "exclusive"], mutating=True)
    with pytest.raises(FailJson) as exc:
        runner.fail("Setting the RDMA netns mode to exclusive failed", res, changed=False, rc=99)
    assert exc.value.args[0] == {
        "msg": "Setting the RDMA netns mode to exclusive failed",
        "cmd": ["/usr/sbin/rdma", "system", "set", "netns", "exclusive"],
        "rc": 1,
        "stdout": "",
        "stderr": "error: Device or resource busy\n",
        "changed": False,
    }
