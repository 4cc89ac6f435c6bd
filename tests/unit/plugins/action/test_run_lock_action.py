# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The controller's half of run_lock (issue 33, classes 3 and 6): max_age named as the playbook variable before
the module runs, and the lock of a gone run of the same owner taken over, never a live run's."""

from __future__ import annotations

import os
import socket
from unittest.mock import MagicMock

import pytest

from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar

from ansible_collections.fabric.infiniband.plugins.action import run_lock as action
from ansible_collections.fabric.infiniband.plugins.plugin_utils import node_state

NAMES = {"max_age": "infiniband_run_lock_max_age"}


def _action(args):
    task = MagicMock()
    task.args, task.async_val, task.check_mode, task.diff = args, 0, False, False
    return action.ActionModule(task, MagicMock(), MagicMock(), loader=DataLoader(), templar=Templar(loader=DataLoader()),
                               shared_loader_obj=None)


def held(run):
    msg = ("Another run of the same owner holds the run lock of this node (/l): \"A\" (run %s), taken x. Wait until that run ends; "
           "it releases the lock." % run)
    return {"failed": True, "msg": msg, "held_by": {"owner": "A", "run": run, "same_owner": True}}


def _run(args, answers):
    act = _action(args)
    calls = []

    def execute(module_name, module_args, task_vars):
        calls.append(dict(module_args))
        return dict(answers[len(calls) - 1])

    act._execute_module = execute  # pylint: disable=protected-access
    return act.run(task_vars={}), calls


@pytest.mark.parametrize("value, says", [
    ("6h", "infiniband_run_lock_max_age (max_age) must be 0 (a lock never goes stale by age) or a whole number of seconds, "
           "for example 21600 (6 h), got '6h'"),
    (-5, "infiniband_run_lock_max_age (max_age) must be 0 (a lock never goes stale by age) or a number of seconds, got -5"),
    ("-5", "infiniband_run_lock_max_age (max_age) must be 0"),
    (True, "got True"),
    (1.5, "got 1.5"),
    (None, "got None"),
])
def test_max_age_is_refused_naming_the_playbook_variable(value, says):
    result, calls = _run({"owner": "A", "max_age": value, "setting_names": NAMES}, [])
    assert result["failed"] and says in result["msg"], result["msg"]
    assert calls == []  # refused before the module ran on the node


@pytest.mark.parametrize("value", [0, 21600, "21600", " 60 "])
def test_max_age_accepted(value):
    result, calls = _run({"owner": "A", "max_age": value, "setting_names": NAMES}, [{"changed": True}])
    assert not result.get("failed") and len(calls) == 1


def test_a_gone_run_of_this_controller_is_taken_over(monkeypatch):
    monkeypatch.setattr(node_state, "run_alive", lambda run, proc="/proc": False)
    result, calls = _run({"owner": "A", "run_id": "h:2:2", "replace_run": "forged"},
                         [held("h:1:1"), {"changed": True, "acquired": True}])
    assert result["acquired"] and [c.get("replace_run") for c in calls] == [None, "h:1:1"]


def test_a_live_run_is_never_taken_over_and_the_message_says_it_runs(monkeypatch):
    monkeypatch.setattr(node_state, "run_alive", lambda run, proc="/proc": True)
    result, calls = _run({"owner": "A", "run_id": "h:2:2"}, [held("h:41:1")])
    assert result["failed"] and len(calls) == 1
    assert "That run is still in progress: its ansible-playbook process (PID 41) runs on this controller. Wait until" in result["msg"]


def test_a_run_of_another_controller_is_not_judged(monkeypatch):
    monkeypatch.setattr(node_state, "run_alive", lambda run, proc="/proc": None)
    result, calls = _run({"owner": "A", "run_id": "h:2:2"}, [held("ctl02:41:1")])
    assert result["failed"] and len(calls) == 1
    assert "That run was started on controller ctl02, where this run cannot tell whether it still runs" in result["msg"]


def test_run_alive_on_this_controller():
    me = node_state.run_id()
    assert node_state.run_alive(me) is True
    host, pid, start = me.rsplit(":", 2)
    assert node_state.run_alive("%s:%s:%s" % (host, pid, int(start or 0) + 1)) is False  # a recycled PID is another run
    assert node_state.run_alive("%s:%d:1" % (host, 4194304 + os.getpid())) is False  # no such process
    assert node_state.run_alive("not-%s:%s:%s" % (socket.gethostname(), pid, start)) is None
    assert node_state.run_alive("junk") is None and node_state.run_alive(None) is None
