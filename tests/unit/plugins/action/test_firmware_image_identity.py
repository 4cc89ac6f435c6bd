# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The firmware step reads each image's own PSID and version on the controller (mstflint or flint, ``-i <file> q``) before
anything is copied to a node, and refuses an image whose file says other than its firmware_images entry (issue 33, class 2).
The tool here is a stand-in that prints the layout of a real ``mstflint -i <image> q`` (as module_utils/flint.py's tests
record it); the argv it gets is checked."""

from __future__ import annotations

import os
import stat

import pytest

from ansible_collections.fabric.infiniband.plugins.action.firmware import ActionModule
from ansible_collections.fabric.infiniband.plugins.plugin_utils import firmware
from ansible_collections.fabric.infiniband.plugins.plugin_utils.role_step import StepFailed

QUERY = ("Image type:            FS4\nFW Version:            {version}\nProduct Version:       {version}\n"
         "Description:           UID                GuidsNumber\nBase GUID:             N/A                     4\n"
         "Image VSD:             N/A\nDevice VSD:            N/A\nPSID:                  {psid}\n"
         "Security Attributes:   N/A\nSecurity Ver:          0\n")
IMAGE = {"index": 0, "file": "fw.bin", "psid": "MT_0000000223", "version": "20.40.1000", "sha256": "0" * 64}


def tool(tmp_path, psid="MT_0000000223", version="20.40.1000", rc=0):
    path = tmp_path / "mstflint"
    out = QUERY.format(psid=psid, version=version) if rc == 0 else "-E- Cannot open Image: fw.bin. Invalid image format\n"
    path.write_text("#!/bin/sh\nprintf '%%s\\n' \"$*\" >>%s/argv\ncat <<'OUT'\n%sOUT\nexit %d\n" % (tmp_path, out, rc))
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def step(tmp_path, setting, preflight=True):
    action = object.__new__(ActionModule)
    action.settings = {"firmware_image_query_tool": setting}
    action._read_images = {}
    action._ran = []
    action._notes = {"warnings": [], "deprecations": []}
    action._task = type("Task", (), {"args": {"preflight": preflight}})()
    action._find_needle = lambda where, name: str(tmp_path / os.path.basename(name))
    return action


def test_an_image_that_says_another_psid_is_refused_naming_the_entry(tmp_path):
    action = step(tmp_path, tool(tmp_path, psid="DEL0000000016"))
    found = action._identities([IMAGE], str(tmp_path))
    problems = firmware.image_identity_problems([IMAGE], found)
    assert problems == ["firmware_images[0] (fw.bin).psid: the entry says MT_0000000223, the file is built for PSID DEL0000000016"]
    assert (tmp_path / "argv").read_text().split() == ["-i", str(tmp_path / "fw.bin"), "q"]
    # each file is read once per step
    action._identities([IMAGE], str(tmp_path))
    assert len((tmp_path / "argv").read_text().splitlines()) == 1


def test_version_and_unreadable_image(tmp_path):
    found = step(tmp_path, tool(tmp_path, version="20.39.1002"))._identities([IMAGE], str(tmp_path))
    assert firmware.image_identity_problems([IMAGE], found) == [
        "firmware_images[0] (fw.bin).version: the entry says 20.40.1000, the file holds 20.39.1002"]
    found = step(tmp_path, tool(tmp_path, rc=1))._identities([IMAGE], str(tmp_path))
    assert firmware.image_identity_problems([IMAGE], found) == [
        "firmware_images[0] (fw.bin): the controller could not read the image: Cannot open Image: fw.bin. Invalid image format"]


def test_the_image_as_its_entry_says_passes(tmp_path):
    found = step(tmp_path, tool(tmp_path))._identities([IMAGE], str(tmp_path))
    assert (found["fw.bin"]["psid"], found["fw.bin"]["flash_version"]) == ("MT_0000000223", "20.40.1000")
    assert firmware.image_identity_problems([IMAGE], found) == []


def test_without_a_tool_the_node_checks_and_the_step_warns(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert step(tmp_path, "auto")._identities([IMAGE], str(tmp_path)) == {}
    action = step(tmp_path, "auto", preflight=False)
    assert action._identities([IMAGE], str(tmp_path)) == {}
    assert "firmware_images[0] (fw.bin) checked on the node after the copy" in action._notes["warnings"][0]
    assert step(tmp_path, "none")._identities([IMAGE], str(tmp_path)) == {}


@pytest.mark.parametrize("value", ["mstflint", "yes", "./mstflint"])
def test_a_setting_that_is_no_tool_is_refused(value):
    # with the other settings, on every run (no image needs to be burnt for it)
    problems = firmware.settings_problems("", firmware.CACHE_DIR, value)
    assert len(problems) == 1 and "firmware_image_query_tool" in problems[0] and "auto, none or an absolute path" in problems[0]
    assert firmware.settings_problems("", firmware.CACHE_DIR, "none") == []
    assert firmware.settings_problems("", firmware.CACHE_DIR, "/usr/bin/mstflint") == []


def test_a_path_that_is_not_executable_is_refused(tmp_path):
    with pytest.raises(StepFailed, match="firmware_image_query_tool: /nonexistent/mstflint is no executable"):
        step(tmp_path, "/nonexistent/mstflint")._identities([IMAGE], str(tmp_path))
