# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""module_utils/kmod.py: module names, the modprobe argv, the content of the modules-load.d, modprobe.d
and GRUB drop-in files, the running kernel's release, initramfs and built-in modules, and presence in a
fake /sys/module."""

from __future__ import annotations

import hashlib
import os

import pytest

from ansible_collections.fabric.infiniband.plugins.module_utils import kmod, sysfs


@pytest.fixture
def roots(tmp_path, monkeypatch):
    """Never the test machine's /proc, /boot and /lib/modules."""
    monkeypatch.setattr(kmod, "OSRELEASE", str(tmp_path / "proc" / "sys" / "kernel" / "osrelease"))
    monkeypatch.setattr(kmod, "BOOT_DIR", str(tmp_path / "boot"))
    monkeypatch.setattr(kmod, "MODULES_DIR", str(tmp_path / "lib" / "modules"))
    return tmp_path


def put(path, content=""):
    os.makedirs(os.path.dirname(str(path)), exist_ok=True)
    with open(str(path), "w") as handle:
        handle.write(content)


# ---------------------------------------------------------------- names

@pytest.mark.parametrize("name, sys_name", [("mlx5_core", "mlx5_core"), ("rdma-ucm", "rdma_ucm"), ("nvidia-peermem", "nvidia_peermem")])
def test_sysfs_name(name, sys_name):
    assert kmod.sysfs_name(name) == sys_name


@pytest.mark.parametrize("name", ["mlx5_core; reboot", "", "ib core", "../ib_core", "ib_core\n", "mlx5.core", 5, None])
def test_check_name_refuses_what_is_not_a_module_name(name):
    with pytest.raises(ValueError) as err:
        kmod.check_name(name, "names[2]")
    assert "names[2]" in str(err.value) and "letters, digits, _ and -" in str(err.value)


def test_unique_names_keeps_the_first_spelling_and_the_order():
    assert kmod.unique_names(["ib_umad", "rdma-ucm", "ib_ipoib", "rdma_ucm", "ib_umad"], "names") == ["ib_umad", "rdma-ucm", "ib_ipoib"]


def test_unique_names_names_the_bad_item():
    with pytest.raises(ValueError, match=r"report\[1\] 'a b'"):
        kmod.unique_names(["ok", "a b"], "report")


def test_modprobe_args():
    assert kmod.modprobe_args("ib_umad") == ["ib_umad"]
    assert kmod.modprobe_args("rdma-ucm", dry_run=True) == ["-n", "rdma-ucm"]


# ---------------------------------------------------------------- options

@pytest.mark.parametrize("value, text", [
    (0, "0"), (1, "1"), (True, "1"), (False, "0"), (128, "128"), (-1, "-1"), (1.5, "1.5"),
    ("Y", "Y"), ("0x10", "0x10"), ("/lib/firmware/x.bin", "/lib/firmware/x.bin"), ("a,b", "a,b"),
    ([4, 4], "4,4"), (["mlx5_0", "mlx5_1"], "mlx5_0,mlx5_1"), ([True, False], "1,0"),
])
def test_format_value(value, text):
    assert kmod.format_value(value, "options.m.p") == text


@pytest.mark.parametrize("value", ["1 2", "", "a\"b", "$(reboot)", "`x`", "a\\b", "x;y", None, {"a": 1}, [], [[1]], ["a b"]])
def test_format_value_refuses_what_needs_quoting(value):
    with pytest.raises(ValueError) as err:
        kmod.format_value(value, "options.ib_core.netns_mode")
    assert "options.ib_core.netns_mode" in str(err.value)
    assert "letters, digits" in str(err.value)


def test_normalize_options_sorts_and_spells_modules_with_underscores():
    options = {"rdma-ucm": {"b": 2, "a": 1}, "ib_core": {"netns_mode": 0}}
    assert kmod.normalize_options(options) == [("ib_core", [("netns_mode", "0")]), ("rdma_ucm", [("a", "1"), ("b", "2")])]


def test_normalize_options_merges_both_spellings_of_a_module_and_drops_empty_ones():
    assert kmod.normalize_options({"rdma-ucm": {"a": 1}, "rdma_ucm": {"b": 2}, "ib_core": {}}) == [("rdma_ucm", [("a", "1"), ("b", "2")])]
    assert kmod.normalize_options(None) == [] and kmod.normalize_options({}) == []


@pytest.mark.parametrize("options, parts", [
    ({"ib core": {"x": 1}}, ["options key", "'ib core'", "letters, digits"]),
    ({"ib_core": {"netns mode": 1}}, ["options.ib_core key", "'netns mode'"]),
    ({"ib_core": 0}, ["options.ib_core", "dict of parameters"]),
    ({"ib_core": {"netns_mode": "0 1"}}, ["options.ib_core.netns_mode", "'0 1'"]),
    ({"ib_core": {"a-b": 1, "a_b": 2}}, ["options.ib_core.a_b", "a_b", "twice"]),
    ([("ib_core", {})], ["options must be a dict"]),
])
def test_normalize_options_names_the_bad_option(options, parts):
    with pytest.raises(ValueError) as err:
        kmod.normalize_options(options)
    for part in parts:
        assert part in str(err.value), (part, str(err.value))


# ---------------------------------------------------------------- file contents

def test_boot_file_content():
    assert kmod.boot_file_content(["mlx5_core", "rdma-ucm"]) == kmod.BOOT_FILE_HEADER + "mlx5_core\nrdma-ucm\n"
    assert kmod.boot_file_content([]) == kmod.BOOT_FILE_HEADER


def test_every_header_names_the_collection_and_is_a_comment():
    for header in (kmod.BOOT_FILE_HEADER, kmod.OPTIONS_FILE_HEADER, kmod.CMDLINE_FILE_HEADER):
        assert header.startswith(kmod.HEADER) and "fabric.infiniband" in header
        assert all(line.startswith("# ") for line in header.splitlines())


def test_options_file_content():
    normalized = kmod.normalize_options({"ib_core": {"netns_mode": 0}, "ib_ipoib": {"send_queue_size": 256, "recv_queue_size": 512}})
    assert kmod.options_file_content(normalized) == kmod.OPTIONS_FILE_HEADER + (
        "options ib_core netns_mode=0\n"
        "options ib_ipoib recv_queue_size=512 send_queue_size=256\n")


def test_cmdline_file_content_is_a_shell_assignment_adding_to_the_command_line():
    normalized = kmod.normalize_options({"ib_core": {"netns_mode": 0}, "mlx5_core": {"prof_sel": 2}})
    assert kmod.cmdline_words(normalized) == ["ib_core.netns_mode=0", "mlx5_core.prof_sel=2"]
    assert kmod.cmdline_file_content(normalized) == kmod.CMDLINE_FILE_HEADER + (
        'GRUB_CMDLINE_LINUX="$GRUB_CMDLINE_LINUX ib_core.netns_mode=0 mlx5_core.prof_sel=2"\n')


def test_checksum_is_the_sha1_that_copy_and_template_return():
    data = b"options ib_core netns_mode=0\n"
    assert kmod.checksum(data) == hashlib.sha1(data).hexdigest()
    assert kmod.checksum(b"") == "da39a3ee5e6b4b0d3255bfef95601890afd80709"


# ---------------------------------------------------------------- the running kernel

def test_kernel_release_from_proc(roots):
    put(roots / "proc" / "sys" / "kernel" / "osrelease", "6.1.0-28-amd64\n")
    assert kmod.kernel_release() == "6.1.0-28-amd64"


def test_kernel_release_from_uname_without_proc(roots):
    assert kmod.kernel_release() == os.uname()[2]
    put(roots / "proc" / "sys" / "kernel" / "osrelease", "\n")
    assert kmod.kernel_release() == os.uname()[2]


@pytest.mark.parametrize("files, found", [
    ([], None),
    (["initrd.img-6.1.0-28-amd64"], "initrd.img-6.1.0-28-amd64"),
    (["initramfs-6.1.0-28-amd64.img"], "initramfs-6.1.0-28-amd64.img"),
    # Debian's name first when both exist; another kernel's image is not this one's
    (["initramfs-6.1.0-28-amd64.img", "initrd.img-6.1.0-28-amd64"], "initrd.img-6.1.0-28-amd64"),
    (["initrd.img-6.1.0-27-amd64", "initrd.img"], None),
])
def test_initramfs_path(roots, files, found):
    for name in files:
        put(roots / "boot" / name)
    assert kmod.initramfs_path("6.1.0-28-amd64") == (None if found is None else str(roots / "boot" / found))


def test_initramfs_path_follows_a_symlink_and_ignores_a_directory(roots):
    put(roots / "boot" / "real.img")
    os.symlink("real.img", str(roots / "boot" / "initrd.img-6.1.0-28-amd64"))
    assert kmod.initramfs_path("6.1.0-28-amd64") == str(roots / "boot" / "initrd.img-6.1.0-28-amd64")
    os.makedirs(str(roots / "boot" / "initramfs-6.2.img"))
    assert kmod.initramfs_path("6.2") is None


def test_parse_builtin():
    text = ("kernel/drivers/infiniband/core/ib_core.ko\n"
            "kernel/drivers/net/ethernet/mellanox/mlx5/core/mlx5_core.ko.xz\n"
            "kernel/drivers/infiniband/ulp/ipoib/ib-ipoib.ko\n"
            "\n"
            "modules.order\n")
    assert kmod.parse_builtin(text) == {"ib_core", "mlx5_core", "ib_ipoib"}
    assert kmod.parse_builtin(None) == set()


def test_builtin_modules_of_the_release(roots):
    put(roots / "lib" / "modules" / "6.1.0-28-amd64" / "modules.builtin", "kernel/drivers/infiniband/core/ib_core.ko\n")
    assert kmod.builtin_modules("6.1.0-28-amd64") == {"ib_core"}
    assert kmod.builtin_modules("6.2.0") == set()


def test_present_reads_sys_module_with_underscores(tmp_path):
    for name in ("mlx5_core", "rdma_ucm"):
        os.makedirs(str(tmp_path / "module" / name))
    put(tmp_path / "module" / "ib_umad", "a file, not a module directory")
    tree = sysfs.Sysfs(str(tmp_path))
    assert kmod.present(tree, ["mlx5_core", "rdma-ucm", "ib_umad", "ib_core"]) == ["mlx5_core", "rdma-ucm"]
    assert kmod.present(tree, ["ib_core", "mlx5_core"], builtin={"ib_core"}) == ["ib_core", "mlx5_core"]
