# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""sriov_vfs with its boot_unit option: the VFs and the unit that makes them at every boot in one module run (the sriov
role's step gives its unit there), on the fake sysfs of test_sriov_vfs.py with ``ip`` and ``systemctl`` mocked with the
exact argv. The unit's own cases are test_boot_unit.py's; here: the order, the result and diff, and a bad unit refused
before any VF is touched."""

from __future__ import annotations

import grp
import os
import pwd

import pytest

from ansible_collections.fabric.infiniband.plugins.module_utils import boot_unit as unit_utils
from ansible_collections.fabric.infiniband.plugins.modules import sriov_vfs
from ansible_collections.fabric.infiniband.tests.unit.plugins.modules.test_boot_unit import (
    DISABLED, ENABLE, ENABLED, IS_ENABLED, NAME, RELOAD, params)
from ansible_collections.fabric.infiniband.tests.unit.plugins.modules.test_mlxconfig_module import run_module
from ansible_collections.fabric.infiniband.tests.unit.plugins.modules.test_sriov_vfs import IP, IPLINK, SHOW

TOOLS = dict(IP, systemctl="/usr/bin/systemctl")
VFS = {"pf": "mlx5_0", "num_vfs": 2, "vfs": [{"index": 0, "guid": "0x0200000000000001"}], "link_state": "auto"}


@pytest.fixture
def root(make_sysfs):
    return make_sysfs("sysfs_cx6_dual_sriov.yml")


@pytest.fixture
def paths(tmp_path, monkeypatch):
    """The unit's files under tmp_path, owned by whoever runs the tests (as test_boot_unit.py's)."""
    monkeypatch.setattr(unit_utils, "UNIT_DIR", str(tmp_path / "etc" / "systemd" / "system"))
    monkeypatch.setattr(unit_utils, "OWNER", pwd.getpwuid(os.getuid()).pw_name)
    monkeypatch.setattr(unit_utils, "GROUP", grp.getgrgid(os.getgid()).gr_name)
    return dict(unit=str(tmp_path / "etc" / "systemd" / "system" / NAME), conf=str(tmp_path / "etc" / "fabric-infiniband" / "test.json"),
                program=str(tmp_path / "usr" / "local" / "libexec" / "fabric-infiniband" / "apply"))


def run(mocker, capsys, root, unit, calls, vfs=None, check=False, diff=False):
    args = dict(VFS if vfs is None else vfs, sysfs_root=root, boot_unit=unit)
    return run_module(mocker, capsys, sriov_vfs.main, args, TOOLS, list(calls), check_mode=check, diff=diff)


def test_the_vfs_and_their_unit_in_one_run(mocker, capsys, root, paths):
    """VFs as wanted and a new unit: the unit is written, reloaded and enabled after the VFs are read; the VFs' reading stays
    current (nothing marks it stale); the diff has the VFs' entry, then the unit's. The next run only asks is-enabled."""
    result, ran = run(mocker, capsys, root, params(paths), [{"argv": SHOW, "out": IPLINK}, {"argv": RELOAD}, DISABLED,
                                                            {"argv": ENABLE}], diff=True)
    assert not result.get("failed"), result
    assert result["changed"] is True and result["writes"] == [] and ran == [SHOW, RELOAD, IS_ENABLED, ENABLE]
    assert result["boot_unit"]["written"] == [paths["conf"], paths["program"], paths["unit"]]
    assert result["boot_unit"]["enabled"] is True and result["boot_unit"]["changed"] is True
    assert "ansible_facts" not in result
    assert [entry["before_header"] for entry in result["diff"]] == [
        "SR-IOV of 0000:3b:00.0", paths["conf"], paths["program"], paths["unit"], "systemctl is-enabled %s" % NAME]
    mocker.stopall()
    result, ran = run(mocker, capsys, root, params(paths), [{"argv": SHOW, "out": IPLINK}, ENABLED])
    assert result["changed"] is False and ran == [SHOW, IS_ENABLED] and result["boot_unit"]["written"] == []


def test_a_vf_change_marks_the_reading_stale_and_the_unit_goes_after_it(mocker, capsys, root, paths):
    numvfs = os.path.join(root, "bus", "pci", "devices", "0000:3b:00.0", "sriov_numvfs")
    vfs = {"pf": "ibp59s0f0", "num_vfs": 0}
    result, ran = run(mocker, capsys, root, params(paths, state="absent"), [], vfs=vfs)
    assert result["changed"] is True and result["writes"] == ["%s=0" % numvfs] and ran == []
    assert result["ansible_facts"] == {"infiniband_hca_stale": True}
    assert result["boot_unit"]["removed"] == [] and result["boot_unit"]["enabled"] is False


def test_a_bad_unit_is_refused_by_its_option_before_any_vf_is_touched(mocker, capsys, root, paths):
    numvfs = os.path.join(root, "bus", "pci", "devices", "0000:3b:00.0", "sriov_numvfs")
    with open(numvfs) as handle:
        before = handle.read()
    bad = params(paths, files=[dict(path="relative/apply", content="x")])
    result, ran = run(mocker, capsys, root, bad, [], vfs={"pf": "ibp59s0f0", "num_vfs": 0})
    assert result["failed"] and result["msg"].startswith("boot_unit.files[0].path 'relative/apply' is not the absolute path"), result
    assert ran == []
    with open(numvfs) as handle:
        assert handle.read() == before
    mocker.stopall()
    result, ran = run(mocker, capsys, root, dict(name=NAME), [], vfs={"pf": "ibp59s0f0", "num_vfs": 0})
    assert result["failed"] and "unit" in result["msg"] and "boot_unit" in result["msg"], result
