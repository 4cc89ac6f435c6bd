# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""plugin_utils/rdma_netns.py: the rdma_netns role's settings, checks and decisions (its action runs the modules)."""

from __future__ import annotations

import os

import yaml

from ansible_collections.fabric.infiniband.plugins.plugin_utils import rdma_netns

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))
ROLE = os.path.join(ROOT, "roles", "rdma_netns")


def _yaml(*path):
    with open(os.path.join(ROLE, *path)) as handle:
        return yaml.safe_load(handle)


def test_defaults_are_the_roles():
    assert rdma_netns.DEFAULTS == _yaml("defaults", "main.yml")
    options = _yaml("meta", "argument_specs.yml")["argument_specs"]["main"]["options"]
    assert dict((name, spec["default"]) for name, spec in options.items()) == rdma_netns.DEFAULTS
    assert tuple(options["rdma_netns_mode"]["choices"]) == rdma_netns.MODES
    assert tuple(options["rdma_netns_runtime"]["choices"]) == rdma_netns.RUNTIMES
    assert tuple(options["rdma_netns_update_initramfs"]["choices"]) == rdma_netns.UPDATE_INITRAMFS
    assert tuple(options["rdma_netns_cluster_plugins"]["choices"]) == rdma_netns.CLUSTER_PLUGINS


def test_settings_take_the_defaults_where_not_set_or_null():
    s = rdma_netns.settings({"rdma_netns_mode": "shared", "rdma_netns_runtime": None, "other": 1})
    assert s["rdma_netns_mode"] == "shared" and s["rdma_netns_runtime"] == "try" and "other" not in s
    assert rdma_netns.check(rdma_netns.settings({})) == []


def test_check_names_the_variable_and_the_accepted_values():
    problems = rdma_netns.check(rdma_netns.settings({
        "rdma_netns_mode": "isolated", "rdma_netns_runtime": "force", "rdma_netns_update_initramfs": "sometimes",
        "rdma_netns_kernel_cmdline": "maybe", "rdma_netns_cluster_plugins": ["calico", "rdma_cni"]}))
    assert problems == [
        "rdma_netns_mode must be one of exclusive, shared, got 'isolated'",
        "rdma_netns_runtime must be one of try, require, got 'force'",
        "rdma_netns_update_initramfs must be one of auto, always, never, got 'sometimes'",
        "rdma_netns_kernel_cmdline must be true or false, got 'maybe'",
        "rdma_netns_cluster_plugins lists 'calico'; accepted: rdma_shared_device_plugin, ib_sriov_cni_rdma_isolation, rdma_cni",
    ]
    assert rdma_netns.check(rdma_netns.settings({"rdma_netns_cluster_plugins": "rdma_cni"}))[0].startswith(
        "rdma_netns_cluster_plugins must be a list of rdma_shared_device_plugin")


def test_warning_when_the_mode_does_not_suit_the_plugins():
    assert rdma_netns.warning("exclusive", ["rdma_cni"]) is None
    assert rdma_netns.warning("exclusive", ["rdma_shared_device_plugin", "rdma_cni"]) == (
        "rdma_netns_mode is exclusive, but rdma_netns_cluster_plugins lists rdma_shared_device_plugin, which needs shared mode "
        '(it exits with "incorrect RDMA subsystem network namespace" in exclusive mode).')
    assert rdma_netns.conflicts("shared", ["rdma_cni", "ib_sriov_cni_rdma_isolation", "rdma_shared_device_plugin"]) == [
        "rdma_cni", "ib_sriov_cni_rdma_isolation"]
    assert rdma_netns.warning("shared", ["rdma_cni"]).endswith("which needs exclusive mode.")


def test_kernel_modules_args():
    args = rdma_netns.kernel_modules_args(rdma_netns.settings({"rdma_netns_mode": "shared", "rdma_netns_kernel_cmdline": "yes"}))
    assert args == {"options": {"ib_core": {"netns_mode": 1}}, "options_file": rdma_netns.MODPROBE_FILE, "cmdline": True,
                    "cmdline_file": rdma_netns.GRUB_FILE, "load": False}
    assert rdma_netns.kernel_modules_args(rdma_netns.settings({}))["options"] == {"ib_core": {"netns_mode": 0}}


KMOD = {"kernel": "6.1.0-27-amd64", "initramfs": "/boot/initrd.img-6.1.0-27-amd64",
        "files": {"options_file": {"checksum": "abc", "changed": False}, "cmdline_file": {"changed": True}}}


def test_initramfs_decision():
    auto = rdma_netns.settings({})
    assert rdma_netns.stamp_wanted(KMOD) == "6.1.0-27-amd64 abc"
    assert rdma_netns.initramfs(auto, KMOD, "") == "list"
    assert rdma_netns.initramfs(auto, KMOD, "6.1.0-27-amd64 abc\n") is None
    assert rdma_netns.initramfs(auto, KMOD, "6.1.0-26-amd64 abc") == "list"
    assert rdma_netns.initramfs(rdma_netns.settings({"rdma_netns_update_initramfs": "always"}), KMOD, "") == "regenerate"
    assert rdma_netns.initramfs(rdma_netns.settings({"rdma_netns_update_initramfs": "never"}), KMOD, "") is None
    assert rdma_netns.initramfs(auto, dict(KMOD, initramfs=None), "") is None
    assert rdma_netns.grub_changed(KMOD) and not rdma_netns.grub_changed({"files": {}})


def test_initramfs_commands():
    assert rdma_netns.list_argv("/boot/initrd.img-6.1") == ["lsinitramfs", "/boot/initrd.img-6.1"]
    assert rdma_netns.list_argv("/boot/initramfs-5.14.img") == ["lsinitrd", "/boot/initramfs-5.14.img"]
    assert rdma_netns.regenerate_argv("/boot/initrd.img-6.1", "6.1") == ["update-initramfs", "-u", "-k", "6.1"]
    assert rdma_netns.regenerate_argv("/boot/initramfs-5.14.img", "5.14") == ["dracut", "-f", "--kver", "5.14"]
    assert rdma_netns.loads_ib_core(["usr/lib/modules/6.1/kernel/drivers/infiniband/core/ib_core.ko.xz"])
    assert not rdma_netns.loads_ib_core(["usr/lib/modules/6.1/kernel/drivers/net/mlx5_core.ko"])


def test_mode_may_differ_unless_a_current_reading_shows_it():
    hca = {"rdma_system": {"netns_mode": "exclusive"}}
    assert not rdma_netns.mode_may_differ(hca, True, "exclusive")
    assert rdma_netns.mode_may_differ(hca, True, "shared")
    assert rdma_netns.mode_may_differ(hca, False, "exclusive")
    assert rdma_netns.mode_may_differ(None, True, "exclusive")


def test_pending_args():
    waits = rdma_netns.pending_args("exclusive", {"reboot_required": True, "reason": "netns blocker exists",
                                                  "netns": {"before": "shared", "after": "shared"}}, "run")
    assert waits["state"] == "present" and waits["action"] == "reboot" and waits["run_id"] == "run"
    assert waits["reason"] == "RDMA netns mode exclusive at the next boot; now refused at run time (netns blocker exists)"
    assert waits["stuck_msg"].startswith("The kernel still runs shared.")
    assert waits["details"] == {"netns": "exclusive"}
    done = rdma_netns.pending_args("shared", None, "run")
    assert done["state"] == "absent" and "(busy)" in done["reason"] and "another mode" in done["stuck_msg"]
