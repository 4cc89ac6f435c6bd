# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The pending-action record as the node may hold it (issue 22, class 6): a damaged record of any shape
gets the one "move it away" message from every reader (test_pending_record.yaml), and a state directory
that cannot be written gets a message naming the path, the system's error and what to do, never a
traceback, from pending_info's writable check and from pending_action (test_pending_writes.yaml)."""

from __future__ import annotations

import errno
import json
import os
import tempfile

import pytest

from ansible.module_utils.testing import patch_module_args

from ansible_collections.fabric.infiniband.plugins.module_utils import pending
from ansible_collections.fabric.infiniband.plugins.modules import pending_action, pending_info
from ansible_collections.fabric.infiniband.tests.unit.plugins.modules.test_mlxconfig_module import assert_subset, case_ids, load_cases

RECORDS = load_cases("test_pending_record.yaml")
DAMAGED = [case for case in RECORDS if not case.get("ok")]
WRITES = load_cases("test_pending_writes.yaml")
MODULES = {"pending_info": pending_info, "pending_action": pending_action}


def run(capsys, monkeypatch, module, params, check=False):
    monkeypatch.setattr(pending, "boot_identity", lambda proc="/proc": "boot-a:1")
    args = dict(params)
    if check:
        args["_ansible_check_mode"] = True
    with patch_module_args(args):
        with pytest.raises(SystemExit):
            module.main()
    return json.loads(capsys.readouterr().out)


def put_record(case, path):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if case.get("directory"):
        os.mkdir(path)
    elif "hex" in case:
        with open(path, "wb") as handle:
            handle.write(bytes.fromhex(case["hex"]))
    else:
        with open(path, "w") as handle:
            handle.write(case["text"] if "text" in case else json.dumps(case["record"]))


def content(path):
    if os.path.isdir(path):
        return "directory"
    with open(path, "rb") as handle:
        return handle.read()


def check_damaged_message(case, path, msg):
    assert msg.startswith("Cannot read the pending-action record %s: " % path), msg
    assert "Move it away to start a new record (for example: mv %s %s.damaged)" % (path, path) in msg, msg
    for part in case["says"]:
        assert part in msg, "%r not in %r" % (part, msg)
    assert "Traceback" not in msg


@pytest.mark.parametrize("case", RECORDS, ids=case_ids(RECORDS))
def test_load(case, tmp_path):
    path = str(tmp_path / "state" / "pending.json")
    put_record(case, path)
    if case.get("ok"):
        assert sorted(pending.load(path)["entries"]) == case["entries"]
        return
    with pytest.raises(ValueError) as info:
        pending.load(path)
    for part in case["says"]:
        assert part in str(info.value), "%r not in %r" % (part, str(info.value))


@pytest.mark.parametrize("case", DAMAGED, ids=case_ids(DAMAGED))
def test_pending_info_says_move_it_away(case, tmp_path, capsys, monkeypatch):
    path = str(tmp_path / "state" / "pending.json")
    put_record(case, path)
    result = run(capsys, monkeypatch, pending_info, {"path": path})
    assert result["failed"] is True
    check_damaged_message(case, path, result["msg"])


@pytest.mark.parametrize("state", ["present", "absent"])
@pytest.mark.parametrize("case", DAMAGED, ids=case_ids(DAMAGED))
def test_pending_action_says_move_it_away_and_leaves_the_file(case, state, tmp_path, capsys, monkeypatch):
    path = str(tmp_path / "state" / "pending.json")
    put_record(case, path)
    before = content(path)
    result = run(capsys, monkeypatch, pending_action, {"path": path, "name": "sriov", "state": state})
    assert result["failed"] is True
    check_damaged_message(case, path, result["msg"])
    assert content(path) == before
    assert sorted(os.listdir(os.path.dirname(path))) == ["pending.json"]


def test_an_unreadable_record_is_never_taken_for_an_empty_one(tmp_path, monkeypatch):
    """A record that exists but cannot be opened (EACCES for a user, EIO) used to read as "nothing pending"."""
    path = str(tmp_path / "pending.json")
    with open(path, "w") as handle:
        json.dump({"version": 1, "entries": {"sriov": {"action": "reboot", "since": 1, "boot": "a:1"}}}, handle)
    real_open = open

    def denied(name, *args, **kwargs):
        if name == path:
            raise PermissionError(errno.EACCES, "Permission denied", path)
        return real_open(name, *args, **kwargs)

    monkeypatch.setattr("builtins.open", denied)
    with pytest.raises(ValueError) as info:
        pending.load(path)
    assert "it cannot be read: %s: Permission denied (EACCES)" % path in str(info.value)


def layout(case, tmp):
    state = os.path.join(tmp, "state")
    kind = case.get("layout", "dir")
    if kind in ("dir", "record"):
        os.mkdir(state)
    if kind == "record":
        with open(os.path.join(state, "pending.json"), "w") as handle:
            json.dump({"version": 1, "entries": {"old": {"action": "reboot", "since": 1, "boot": "boot-a:1"}}}, handle)
    if kind == "file_as_dir":
        with open(state, "w") as handle:
            handle.write("not a directory\n")


def inject(fault, tmp, monkeypatch):
    """Make one call fail under ``tmp`` with the errno a read-only, full or forbidden directory gives."""
    if not fault:
        return
    number = getattr(errno, fault["errno"])

    def failing(real, where):
        def call(*args, **kwargs):
            if str(where(args, kwargs)).startswith(tmp):
                raise OSError(number, os.strerror(number), str(where(args, kwargs)))
            return real(*args, **kwargs)
        return call

    if fault["op"] == "mkdir":
        monkeypatch.setattr(os, "mkdir", failing(os.mkdir, lambda a, k: a[0]))
    else:
        real = getattr(tempfile, fault["op"])
        monkeypatch.setattr(tempfile, fault["op"], failing(real, lambda a, k: k.get("dir", "")))


def files_under(tmp):
    out = []
    for top, dirs, names in os.walk(tmp):
        rel = os.path.relpath(top, tmp)
        if rel != "." and not names and not dirs:
            out.append(rel + "/")
        out.extend(os.path.normpath(os.path.join(rel, name)) for name in names)
    return sorted(out)


@pytest.mark.parametrize("case", WRITES, ids=case_ids(WRITES))
def test_write(case, tmp_path, capsys, monkeypatch):
    tmp = str(tmp_path)
    layout(case, tmp)
    path = os.path.join(tmp, "state", "pending.json")
    before = content(path) if os.path.isfile(path) else None
    inject(case.get("fault"), tmp, monkeypatch)
    params = dict(case.get("params") or {}, path=path)
    result = run(capsys, monkeypatch, MODULES[case["module"]], params, check=(case.get("flags") or {}).get("check", False))
    monkeypatch.undo()
    assert bool(result.get("failed")) == bool(case.get("failed")), result
    for part in case.get("says") or []:
        part = part.replace("<tmp>", tmp)
        assert part in result.get("msg", ""), "%r not in %r" % (part, result.get("msg"))
    if case.get("failed"):
        assert "Traceback" not in result["msg"] and "exception" not in result
    if "expect" in case:
        assert_subset(case["expect"], result)
    assert files_under(tmp) == sorted(case["after"])
    if before is not None and (case.get("failed") or not result.get("changed")):
        assert content(path) == before
