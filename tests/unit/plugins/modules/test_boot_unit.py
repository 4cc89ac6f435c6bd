# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""boot_unit end to end through AnsibleModule: systemctl mocked with the exact argv (the run_module
harness), the unit directory (module constant UNIT_DIR) and the files under tmp_path, owned by the
user running the tests (module constants OWNER and GROUP), so that the files on disk tell what was
written. The is-enabled outputs are those of systemd 252 (Debian 12)."""

from __future__ import annotations

import grp
import os
import pwd

import pytest

from ansible_collections.fabric.infiniband.plugins.module_utils import boot_unit as unit_utils
from ansible_collections.fabric.infiniband.plugins.modules import boot_unit
from ansible_collections.fabric.infiniband.tests.unit.conftest import run_module


SYSTEMCTL = {"systemctl": "/usr/bin/systemctl"}
NAME = "fabric-infiniband-test.service"
UNIT = "[Unit]\nDescription=test\n\n[Service]\nType=oneshot\nExecStart=/usr/local/libexec/t/apply\n\n[Install]\nWantedBy=multi-user.target\n"
CONF = '{\n    "pfs": []\n}\n'
PROGRAM = "#!/bin/sh\necho hello\n"

RELOAD = ["/usr/bin/systemctl", "daemon-reload"]
IS_ENABLED = ["/usr/bin/systemctl", "is-enabled", NAME]
ENABLE = ["/usr/bin/systemctl", "enable", NAME]
REENABLE = ["/usr/bin/systemctl", "reenable", NAME]
DISABLE = ["/usr/bin/systemctl", "disable", NAME]
# systemd 252: a known unit prints its state (rc 0 when enabled, 1 when disabled); an unknown one prints only to stderr
ENABLED = {"argv": IS_ENABLED, "rc": 0, "out": "enabled\n"}
DISABLED = {"argv": IS_ENABLED, "rc": 1, "out": "disabled\n"}
NOT_FOUND = {"argv": IS_ENABLED, "rc": 1, "err": "Failed to get unit file state for %s: No such file or directory\n" % NAME}


@pytest.fixture
def paths(tmp_path, monkeypatch):
    monkeypatch.setattr(unit_utils, "UNIT_DIR", str(tmp_path / "etc" / "systemd" / "system"))
    monkeypatch.setattr(unit_utils, "OWNER", pwd.getpwuid(os.getuid()).pw_name)
    monkeypatch.setattr(unit_utils, "GROUP", grp.getgrgid(os.getgid()).gr_name)
    return dict(
        unit=str(tmp_path / "etc" / "systemd" / "system" / NAME),
        conf=str(tmp_path / "etc" / "fabric-infiniband" / "test.json"),
        program=str(tmp_path / "usr" / "local" / "libexec" / "fabric-infiniband" / "apply"),
    )


def params(paths, **extra):
    args = dict(name=NAME, unit=UNIT, files=[
        dict(path=paths["conf"], content=CONF),
        dict(path=paths["program"], content=PROGRAM, mode="0755"),
    ])
    args.update(extra)
    return args


def put(path, content, mode):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as handle:
        handle.write(content)
    os.chmod(path, mode)


def installed(paths):
    """The state a first run leaves: every file with its content and mode."""
    put(paths["conf"], CONF, 0o644)
    put(paths["program"], PROGRAM, 0o755)
    put(paths["unit"], UNIT, 0o644)


def read(path):
    with open(path) as handle:
        return handle.read()


def mode(path):
    return oct(os.stat(path).st_mode & 0o7777)


def run(mocker, capsys, args, calls=(), check=False, diff=False, tools=None):
    return run_module(mocker, capsys, boot_unit.main, args, SYSTEMCTL if tools is None else tools, list(calls),
                      check_mode=check, diff=diff)


def test_fresh_install_writes_everything_reloads_and_enables(mocker, capsys, paths):
    umask = os.umask(0o077)  # the modes do not depend on the umask
    try:
        result, ran = run(mocker, capsys, params(paths), [{"argv": RELOAD}, DISABLED, {"argv": ENABLE}])
    finally:
        os.umask(umask)
    assert not result.get("failed"), result
    assert result["changed"] is True and result["enabled"] is True
    assert result["written"] == [paths["conf"], paths["program"], paths["unit"]]
    assert result["attributes_set"] == [] and result["removed"] == []
    assert result["cmds"] == ran == [RELOAD, IS_ENABLED, ENABLE] and result["cmd"] == ENABLE
    assert (read(paths["conf"]), read(paths["program"]), read(paths["unit"])) == (CONF, PROGRAM, UNIT)
    assert (mode(paths["conf"]), mode(paths["program"]), mode(paths["unit"])) == ("0o644", "0o755", "0o644")
    # missing parents created 0755, no temporary file left behind
    assert mode(os.path.dirname(paths["program"])) == mode(os.path.dirname(os.path.dirname(paths["program"]))) == "0o755"
    assert os.listdir(os.path.dirname(paths["program"])) == ["apply"]
    assert "diff" not in result


def test_no_op_reads_and_only_asks_whether_enabled(mocker, capsys, paths):
    installed(paths)
    before = dict((key, os.stat(path).st_ino) for key, path in paths.items())
    result, ran = run(mocker, capsys, params(paths), [ENABLED])
    assert result["changed"] is False and result["enabled"] is True
    assert result["written"] == result["attributes_set"] == result["removed"] == []
    assert ran == [IS_ENABLED]
    assert dict((key, os.stat(path).st_ino) for key, path in paths.items()) == before


def test_a_changed_file_is_the_only_one_written(mocker, capsys, paths):
    installed(paths)
    put(paths["conf"], '{"pfs": ["old"]}\n', 0o644)
    program_inode = os.stat(paths["program"]).st_ino
    unit_inode = os.stat(paths["unit"]).st_ino
    result, ran = run(mocker, capsys, params(paths), [ENABLED])
    assert result["changed"] is True and result["written"] == [paths["conf"]]
    assert ran == [IS_ENABLED]  # the unit file did not change: no daemon-reload
    assert read(paths["conf"]) == CONF and mode(paths["conf"]) == "0o644"
    assert (os.stat(paths["program"]).st_ino, os.stat(paths["unit"]).st_ino) == (program_inode, unit_inode)


def test_a_changed_unit_file_is_reloaded_and_enabled_again(mocker, capsys, paths):
    installed(paths)
    put(paths["unit"], UNIT.replace("multi-user.target", "sysinit.target"), 0o644)
    result, ran = run(mocker, capsys, params(paths), [{"argv": RELOAD}, ENABLED, {"argv": REENABLE}])
    assert result["changed"] is True and result["written"] == [paths["unit"]]
    assert ran == [RELOAD, IS_ENABLED, REENABLE]
    assert read(paths["unit"]) == UNIT


def test_a_wrong_mode_is_set_without_writing(mocker, capsys, paths):
    installed(paths)
    os.chmod(paths["program"], 0o600)
    inode = os.stat(paths["program"]).st_ino
    result, ran = run(mocker, capsys, params(paths), [ENABLED])
    assert result["changed"] is True
    assert result["written"] == [] and result["attributes_set"] == [paths["program"]]
    assert mode(paths["program"]) == "0o755" and os.stat(paths["program"]).st_ino == inode
    assert ran == [IS_ENABLED]


def test_check_mode_on_a_fresh_node_writes_and_runs_nothing(mocker, capsys, paths, tmp_path):
    result, ran = run(mocker, capsys, params(paths), [], check=True)
    assert result["changed"] is True and result["enabled"] is True
    assert result["written"] == [paths["conf"], paths["program"], paths["unit"]]
    assert ran == [] and result["cmds"] == []
    assert os.listdir(str(tmp_path)) == []


def test_check_mode_reports_a_change_and_an_enable_without_making_them(mocker, capsys, paths):
    installed(paths)
    put(paths["conf"], "{}\n", 0o600)
    result, ran = run(mocker, capsys, params(paths), [DISABLED], check=True)
    assert result["changed"] is True and result["enabled"] is True and result["written"] == [paths["conf"]]
    assert ran == [IS_ENABLED]  # no enable
    assert read(paths["conf"]) == "{}\n" and mode(paths["conf"]) == "0o600"


def test_check_mode_with_enabled_false_on_a_fresh_node_enables_nothing(mocker, capsys, paths):
    result, ran = run(mocker, capsys, params(paths, enabled=False), [], check=True)
    assert result["changed"] is True and result["enabled"] is False and ran == []


def test_diff_has_one_entry_per_changed_file_and_the_enabled_state(mocker, capsys, paths):
    installed(paths)
    put(paths["conf"], '{"pfs": ["old"]}\n', 0o644)
    os.chmod(paths["program"], 0o700)
    result, ran = run(mocker, capsys, params(paths), [DISABLED], check=True, diff=True)
    assert result["diff"] == [
        {"before_header": paths["conf"], "after_header": paths["conf"], "before": '{"pfs": ["old"]}\n', "after": CONF},
        {"before_header": paths["program"], "after_header": paths["program"],
         "before": "mode 0700, owner %d:%d\n" % (os.getuid(), os.getgid()),
         "after": "mode 0755, owner %d:%d\n" % (os.getuid(), os.getgid())},
        {"before_header": "systemctl is-enabled " + NAME, "after_header": "systemctl is-enabled " + NAME,
         "before": "disabled\n", "after": "enabled\n"},
    ]


def test_diff_of_a_new_file_starts_empty(mocker, capsys, paths):
    result, ran = run(mocker, capsys, params(paths, files=[]), [], check=True, diff=True)
    assert result["diff"][0] == {"before_header": paths["unit"], "after_header": paths["unit"], "before": "", "after": UNIT}
    assert result["diff"][1]["before"] == "not-found\n" and result["diff"][1]["after"] == "enabled\n"
    assert len(result["diff"]) == 2


def test_an_enabled_runtime_unit_is_enabled_for_good(mocker, capsys, paths):
    installed(paths)
    result, ran = run(mocker, capsys, params(paths), [{"argv": IS_ENABLED, "rc": 0, "out": "enabled-runtime\n"}, {"argv": ENABLE}])
    assert result["changed"] is True and ran == [IS_ENABLED, ENABLE]


def test_enabled_false_disables_an_enabled_unit(mocker, capsys, paths):
    installed(paths)
    result, ran = run(mocker, capsys, params(paths, enabled=False), [ENABLED, {"argv": DISABLE}])
    assert result["changed"] is True and result["enabled"] is False and ran == [IS_ENABLED, DISABLE]


def test_absent_disables_and_removes_everything(mocker, capsys, paths):
    installed(paths)
    args = dict(name=NAME, state="absent", files=[dict(path=paths["conf"]), dict(path=paths["program"])])
    result, ran = run(mocker, capsys, args, [ENABLED, {"argv": DISABLE}, {"argv": RELOAD}], diff=True)
    assert result["changed"] is True and result["enabled"] is False
    assert result["removed"] == [paths["unit"], paths["conf"], paths["program"]]
    assert ran == [IS_ENABLED, DISABLE, RELOAD]
    assert not any(os.path.exists(path) for path in paths.values())
    # the directories stay
    assert os.path.isdir(os.path.dirname(paths["program"]))
    assert result["diff"][0]["after"] == "disabled\n"
    assert [entry["before"] for entry in result["diff"][1:]] == [UNIT, CONF, PROGRAM]


def test_absent_of_a_disabled_unit_does_not_disable(mocker, capsys, paths):
    put(paths["unit"], UNIT, 0o644)
    result, ran = run(mocker, capsys, dict(name=NAME, state="absent"), [DISABLED, {"argv": RELOAD}])
    assert result["changed"] is True and result["removed"] == [paths["unit"]] and ran == [IS_ENABLED, RELOAD]


def test_absent_in_check_mode_removes_nothing(mocker, capsys, paths):
    installed(paths)
    args = dict(name=NAME, state="absent", files=[dict(path=paths["conf"])])
    result, ran = run(mocker, capsys, args, [ENABLED], check=True)
    assert result["changed"] is True and result["removed"] == [paths["unit"], paths["conf"]]
    assert ran == [IS_ENABLED]
    assert all(os.path.exists(path) for path in paths.values())


def test_absent_when_nothing_is_there_changes_and_runs_nothing(mocker, capsys, paths):
    args = dict(name=NAME, state="absent", files=[dict(path=paths["conf"]), dict(path=paths["program"])])
    result, ran = run(mocker, capsys, args, [])
    assert result["changed"] is False and result["removed"] == [] and ran == []


def test_absent_needs_no_systemctl_when_nothing_is_there(mocker, capsys, paths):
    result, ran = run(mocker, capsys, dict(name=NAME, state="absent"), [], tools={})
    assert not result.get("failed") and result["changed"] is False


def test_a_failing_enable_names_the_command_rc_and_stderr(mocker, capsys, paths):
    err = "Failed to enable unit: Unit file %s does not exist.\n" % NAME
    result, ran = run(mocker, capsys, params(paths), [{"argv": RELOAD}, NOT_FOUND, {"argv": ENABLE, "rc": 1, "err": err}])
    assert result["failed"] is True
    assert result["msg"] == "cannot enable %s: '/usr/bin/systemctl enable %s' failed with rc 1: %s" % (NAME, NAME, err.strip())
    assert result["cmd"] == ENABLE and result["rc"] == 1 and result["stderr"] == err
    assert result["written"] == [paths["conf"], paths["program"], paths["unit"]]


def test_a_failing_daemon_reload_is_named(mocker, capsys, paths):
    err = "System has not been booted with systemd as init system (PID 1). Can't operate.\n"
    result, ran = run(mocker, capsys, params(paths), [{"argv": RELOAD, "rc": 1, "err": err}])
    assert result["failed"] is True and result["msg"].startswith("cannot reload the unit files after writing %s:" % paths["unit"])
    assert "Can't operate." in result["msg"] and result["cmd"] == RELOAD


def test_is_enabled_without_an_answer_fails(mocker, capsys, paths):
    installed(paths)
    result, ran = run(mocker, capsys, params(paths), [{"argv": IS_ENABLED, "rc": 1, "err": "Access denied\n"}])
    assert result["failed"] is True
    assert result["msg"] == "cannot tell whether %s is enabled: '/usr/bin/systemctl is-enabled %s' failed with rc 1: Access denied" % (
        NAME, NAME)


def test_a_static_unit_cannot_be_enabled(mocker, capsys, paths):
    installed(paths)
    result, ran = run(mocker, capsys, params(paths), [{"argv": IS_ENABLED, "rc": 0, "out": "static\n"}])
    assert result["failed"] is True and ran == [IS_ENABLED]
    assert result["msg"].startswith("cannot enable %s: systemctl is-enabled says static: the unit file has no [Install] section" % NAME)


def test_without_systemctl_present_fails_naming_it(mocker, capsys, paths):
    installed(paths)
    result, ran = run(mocker, capsys, params(paths), [], tools={})
    assert result["failed"] is True and "systemctl is not installed" in result["msg"] and ran == []


@pytest.mark.parametrize("change, says", [
    (dict(unit=None), "state is present but all of the following are missing: unit"),
    (dict(files=[dict(path="relative/file", content="x")]), "files[0].path 'relative/file' is not the absolute path of a file"),
    (dict(files=[dict(path="/etc/x", content="x", mode="rwx")]), "files[0].mode 'rwx' is not an octal mode"),
    (dict(files=[dict(path="/etc/x")]), "files[0] (/etc/x) has no content; content is required with state=present"),
    (dict(files=[dict(path="/etc/x", content="a"), dict(path="/etc//x", content="b")]), "files[1].path /etc/x is listed twice"),
    (dict(name="../evil.service"), "name '../evil.service' is not a unit name"),
])
def test_bad_input_fails_before_anything_is_done(mocker, capsys, paths, tmp_path, change, says):
    args = params(paths)
    args.update(change)
    if args["unit"] is None:
        del args["unit"]
    result, ran = run(mocker, capsys, args, [])
    assert result["failed"] is True and says in result["msg"], result["msg"]
    assert ran == [] and os.listdir(str(tmp_path)) == []
