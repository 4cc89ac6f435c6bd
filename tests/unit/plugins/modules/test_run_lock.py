# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""run_lock end to end through AnsibleModule, on a lock file under tmp_path (issue 22, class 7): cases in
test_run_lock.yaml, bad inputs in test_run_lock_bad_inputs.yaml, and real races between processes."""

from __future__ import annotations

import fcntl
import json
import os
import sys

import pytest

from ansible.module_utils import basic
from ansible.module_utils.testing import patch_module_args

from ansible_collections.fabric.infiniband.plugins.module_utils import pending
from ansible_collections.fabric.infiniband.plugins.modules import run_lock
from ansible_collections.fabric.infiniband.tests.unit.plugins.modules.test_mlxconfig_module import assert_subset, case_ids, load_cases

CASES = load_cases("test_run_lock.yaml")
BAD = load_cases("test_run_lock_bad_inputs.yaml")
NOW = 1700010000


def subst(value, tmp):
    """<tmp> in every string of a case."""
    return json.loads(json.dumps(value).replace("<tmp>", tmp))


def run(capsys, mocker, monkeypatch, params, now=NOW, boot="boot-a:1", check=False, diff=False):
    monkeypatch.setattr(pending, "boot_identity", lambda proc="/proc": boot)
    monkeypatch.setattr(run_lock, "now", lambda: now + 0.25)
    warn = mocker.patch.object(basic.AnsibleModule, "warn", autospec=True)
    args = dict(params)
    if check:
        args["_ansible_check_mode"] = True
    if diff:
        args["_ansible_diff"] = True
    with patch_module_args(args):
        with pytest.raises(SystemExit):
            run_lock.main()
    result = json.loads(capsys.readouterr().out)
    result["_test_warnings"] = [call.args[1] for call in warn.call_args_list]
    return result


def put(path, before):
    if before is None:
        return
    if before.get("directory"):
        os.mkdir(path)
        return
    with open(path, "w") as handle:
        handle.write(before["text"] if "text" in before else json.dumps(before))


def lock_now(path):
    if os.path.isdir(path):
        return "directory"
    if not os.path.exists(path):
        return None
    with open(path) as handle:
        text = handle.read()
    try:
        return json.loads(text)
    except ValueError:
        return text


def entries(directory):
    return sorted(os.listdir(directory)) if os.path.isdir(directory) else None


@pytest.mark.parametrize("case", CASES, ids=case_ids(CASES))
def test_case(case, tmp_path, capsys, mocker, monkeypatch):
    tmp = str(tmp_path)
    case = subst(case, tmp)
    directory = os.path.join(tmp, "state")
    path = os.path.join(directory, "run.lock")
    if case.get("layout") != "no_dir":
        os.mkdir(directory)
    put(path, case.get("before"))
    before = lock_now(path)
    flags = case.get("flags") or {}
    params = dict(case.get("params") or {})
    params.setdefault("path", path)
    result = run(capsys, mocker, monkeypatch, params, now=case.get("now", NOW), boot=case.get("boot", "boot-a:1"),
                 check=flags.get("check", False), diff=flags.get("diff", False))
    assert bool(result.get("failed")) == bool(case.get("failed")), result
    for part in case.get("says") or []:
        assert part in result.get("msg", ""), "%r not in %r" % (part, result.get("msg"))
    if "expect" in case:
        assert_subset(case["expect"], result)
    warnings = case.get("warnings") or []
    assert len(result["_test_warnings"]) == len(warnings), result["_test_warnings"]
    for part, warning in zip(warnings, result["_test_warnings"]):
        assert part in warning, "%r not in %r" % (part, warning)
    if "after" in case:
        assert lock_now(path) == (before if case["after"] == "unchanged" else case["after"])
    # nothing else is left in the directory: no temporary file, no guard file
    if entries(directory) is not None:
        assert set(entries(directory)) <= {"run.lock"}, entries(directory)
    if case.get("layout") == "no_dir" and (flags.get("check") or case.get("failed") or params.get("state") == "absent"):
        assert not os.path.exists(directory)


@pytest.mark.parametrize("case", BAD, ids=case_ids(BAD))
def test_bad_input(case, tmp_path, capsys, mocker, monkeypatch):
    tmp = str(tmp_path)
    case = subst(case, tmp)
    params = dict(case.get("params") or {})
    if "owner_length" in case:
        params["owner"] = "x" * case["owner_length"]
    params.setdefault("path", os.path.join(tmp, "state", "run.lock"))
    result = run(capsys, mocker, monkeypatch, params)
    assert result.get("failed") is True, result
    for part in case["says"]:
        assert part in result["msg"], "%r not in %r" % (part, result["msg"])
    assert os.listdir(tmp) == []


def test_a_lock_made_behind_the_guard_is_judged_not_overwritten(tmp_path, capsys, mocker, monkeypatch):
    """A lock file that appears between the read and the create (made by hand, or by something that does not take
    the flock) makes link(2) fail with EEXIST: the module reads it again and refuses, naming its owner."""
    path = str(tmp_path / "run.lock")
    real_link = os.link
    other = {"owner": "B", "since": NOW - 5, "renewed": NOW - 5, "boot": "boot-a:1", "version": 1}

    def racing_link(src, dst, *args, **kwargs):
        if dst == path and not os.path.exists(path):
            with open(path, "w") as handle:
                json.dump(other, handle)
        return real_link(src, dst, *args, **kwargs)

    monkeypatch.setattr(os, "link", racing_link)
    result = run(capsys, mocker, monkeypatch, {"owner": "A", "path": path})
    assert result["failed"] is True and 'Another run holds the run lock' in result["msg"] and '"B"' in result["msg"]
    assert lock_now(path) == other
    assert sorted(os.listdir(str(tmp_path))) == ["run.lock"]


def test_a_process_that_keeps_the_guard_fails_the_module_with_what_to_look_for(tmp_path, capsys, mocker, monkeypatch):
    directory = str(tmp_path)
    monkeypatch.setattr(run_lock, "GUARD_TIMEOUT", 0.2)
    fd = os.open(directory, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        result = run(capsys, mocker, monkeypatch, {"owner": "A", "path": os.path.join(directory, "run.lock")})
    finally:
        os.close(fd)
    assert result["failed"] is True
    assert "another process has held the flock of %s" % directory in result["msg"] and "fuser -v %s" % directory in result["msg"]
    assert os.listdir(directory) == []


def test_an_unwritable_directory_fails_with_the_path_and_the_error(tmp_path, capsys, mocker, monkeypatch):
    """A read-only state directory (simulated: root ignores modes): the path, the errno text and what to do."""
    real = run_lock.tempfile.mkstemp

    def read_only(*args, **kwargs):
        if kwargs.get("dir") == str(tmp_path):
            raise OSError(30, "Read-only file system", kwargs["dir"])
        return real(*args, **kwargs)

    monkeypatch.setattr(run_lock.tempfile, "mkstemp", read_only)
    result = run(capsys, mocker, monkeypatch, {"owner": "A", "path": str(tmp_path / "run.lock")})
    assert result["failed"] is True
    assert result["msg"] == ("Cannot take the run lock %s/run.lock: %s: Read-only file system (EROFS). Make %s writable (a read-write "
                             "file system; check its owner and mode), or set another path, then run again." % (tmp_path, tmp_path, tmp_path))


def race(path, owners):
    """Every owner tries to take the lock at the same moment, each in its own process: their results."""
    gate_read, gate_write = os.pipe()
    children = []
    for index, owner in enumerate(owners):
        out = "%s.out%d" % (path, index)
        pid = os.fork()
        if pid == 0:  # pragma: no cover - runs in the child
            code = 0
            try:
                os.close(gate_write)
                os.read(gate_read, 1)
                sys.stdout = open(out, "w")
                with patch_module_args({"owner": owner, "path": path}):
                    try:
                        run_lock.main()
                    except SystemExit:
                        pass
                sys.stdout.flush()
            except BaseException:  # noqa: B036 - a child never returns into pytest
                code = 1
            os._exit(code)
        children.append((pid, out))
    os.close(gate_read)
    os.write(gate_write, b"g" * len(owners))
    os.close(gate_write)
    results = []
    for pid, out in children:
        assert os.waitpid(pid, 0)[1] == 0
        with open(out) as handle:
            results.append(json.loads(handle.read()))
        os.unlink(out)
    return results


@pytest.mark.parametrize("round_", range(3))
def test_of_runs_racing_for_a_free_lock_exactly_one_wins(tmp_path, round_):
    directory = tmp_path / "state"
    directory.mkdir()
    path = str(directory / "run.lock")
    owners = ["run-%d" % index for index in range(6)]
    results = race(path, owners)
    winners = [result for result in results if not result.get("failed")]
    assert len(winners) == 1, results
    assert winners[0]["acquired"] is True and winners[0]["changed"] is True
    losers = [result for result in results if result.get("failed")]
    assert all("Another run holds the run lock" in result["msg"] for result in losers), losers
    assert lock_now(path)["owner"] == winners[0]["lock"]["owner"]
    assert sorted(os.listdir(str(directory))) == ["run.lock"]


def test_of_runs_racing_for_a_stale_lock_exactly_one_takes_it_over(tmp_path):
    path = str(tmp_path / "run.lock")
    with open(path, "w") as handle:
        json.dump({"owner": "killed", "since": 1, "renewed": 1, "boot": "x", "version": 1}, handle)
    results = race(path, ["run-%d" % index for index in range(6)])
    winners = [result for result in results if not result.get("failed")]
    assert len(winners) == 1, results
    assert winners[0]["broken"] is True and winners[0]["previous"]["owner"] == "killed"
    assert lock_now(path)["owner"] == winners[0]["lock"]["owner"]
