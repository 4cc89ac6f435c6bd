# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The FUSE operations of the simulated sysfs, called directly (no mount needed).

The real sysfs underneath is a small directory tree made by the test; the lab itself checks
the mounted filesystem end to end (molecule/hca_info).
"""

import errno
import os
import stat

import pytest

from fabricsim import fusefs
from fabricsim import state as sim_state

# The kernel follows symlinks (/class/..., /bus/...) itself: FUSE only ever sees resolved paths.
PF = "/devices/pci0000:3a/0000:3a:00.0/0000:3b:00.0"
MLX5_0 = PF + "/infiniband/mlx5_0"
MLX5_1 = "/devices/pci0000:3a/0000:3a:00.0/0000:3b:00.1/infiniband/mlx5_1"


@pytest.fixture
def overlay(tmp_path, make_state):
    real = tmp_path / "real"
    (real / "class" / "net").mkdir(parents=True)
    (real / "devices" / "virtual" / "net" / "eth0").mkdir(parents=True)
    (real / "devices" / "virtual" / "net" / "eth0" / "mtu").write_text("1500\n")
    os.symlink("../../devices/virtual/net/eth0", real / "class" / "net" / "eth0")
    path = str(tmp_path / "state.json")
    sim_state.save(make_state(params={"SRIOV_EN": "True", "NUM_OF_VFS": 8}), path)
    return fusefs.SysfsOverlay(str(real), path)


def _read(ops, path):
    ops.open(path, os.O_RDONLY)
    return ops.read(path, 4096, 0, 0).decode()


def test_simulated_and_real_entries_side_by_side(overlay):
    names = overlay.readdir("/class/net", 0)
    assert {"eth0", "ibp59s0f0", "ibp59s0f1"} <= set(names)
    assert overlay.readlink("/class/net/eth0") == "../../devices/virtual/net/eth0"
    assert _read(overlay, "/devices/virtual/net/eth0/mtu") == "1500\n"
    assert overlay.readlink("/class/infiniband/mlx5_1") == "../../devices/pci0000:3a/0000:3a:00.0/0000:3b:00.1/infiniband/mlx5_1"
    assert _read(overlay, MLX5_1 + "/ports/1/link_layer") == "InfiniBand\n"


def test_attributes_look_like_sysfs(overlay):
    ro = overlay.getattr(MLX5_0 + "/node_guid")
    rw = overlay.getattr(PF + "/sriov_numvfs")
    link = overlay.getattr("/class/infiniband/mlx5_0")
    assert stat.S_ISREG(ro["st_mode"]) and stat.S_IMODE(ro["st_mode"]) == 0o444 and ro["st_size"] == 4096
    assert stat.S_IMODE(rw["st_mode"]) == 0o644
    assert stat.S_ISLNK(link["st_mode"])
    assert stat.S_ISDIR(overlay.getattr("/class/infiniband")["st_mode"])


def test_missing_path_is_enoent(overlay):
    with pytest.raises(OSError) as caught:
        overlay.getattr("/class/infiniband/mlx5_9")
    assert caught.value.errno == errno.ENOENT


def test_write_goes_through_the_kernel_rules(overlay):
    overlay.open(PF + "/sriov_numvfs", os.O_WRONLY)
    assert overlay.write(PF + "/sriov_numvfs", b"4\n", 0, 0) == 2
    assert _read(overlay, PF + "/sriov_numvfs") == "4\n"
    with pytest.raises(OSError) as busy:
        overlay.write(PF + "/sriov_numvfs", b"2\n", 0, 0)
    assert busy.value.errno == errno.EBUSY
    overlay.write(PF + "/sriov_numvfs", b"0\n", 0, 0)
    with pytest.raises(OSError) as too_many:
        overlay.write(PF + "/sriov_numvfs", b"9\n", 0, 0)
    assert too_many.value.errno == errno.ERANGE


def test_read_only_attribute_refuses_write_open(overlay):
    with pytest.raises(OSError) as caught:
        overlay.open(MLX5_0 + "/fw_ver", os.O_WRONLY)
    assert caught.value.errno == errno.EACCES


def test_real_sysfs_stays_read_only(overlay):
    with pytest.raises(OSError) as caught:
        overlay.open("/devices/virtual/net/eth0/mtu", os.O_RDWR)
    assert caught.value.errno == errno.EROFS
