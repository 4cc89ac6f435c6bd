# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""gpudirect_info end to end through AnsibleModule: a fake sysfs tree (the module's
SYSFS_ROOT and PROC_ROOT pointed at it), modinfo found or not through get_bin_path,
run_command mocked with the exact argv expected."""

from __future__ import annotations


import os

import pytest


from ansible_collections.fabric.infiniband.plugins.modules import gpudirect_info
from ansible_collections.fabric.infiniband.tests.unit import conftest
from ansible_collections.fabric.infiniband.tests.unit.plugins.module_utils.pcie_tree import make_node


MODINFO = "/usr/sbin/modinfo"
MODINFO_ARGV = [MODINFO, "-n", "nvidia-peermem"]
PEERMEM_KO = "/lib/modules/6.8.0-45-generic/updates/dkms/nvidia-peermem.ko.zst\n"

CASES = [
    dict(id="hgx_ready_with_peermem", node=dict(),
         tools={"modinfo": MODINFO}, calls=[dict(argv=MODINFO_ARGV, out=PEERMEM_KO)],
         expect=dict(ready=True, reasons=[], gpudirect_path="peermem", peermem={"installed": True, "loaded": True})),
    dict(id="peermem_installed_not_loaded_proprietary", node=dict(modules=("nvidia",)),
         tools={"modinfo": MODINFO}, calls=[dict(argv=MODINFO_ARGV, out=PEERMEM_KO)],
         expect=dict(ready=False, gpudirect_path=None, peermem={"installed": True, "loaded": False},
                     reasons=["nvidia-peermem is not loaded and DMA-BUF is not usable (the NVIDIA driver is the proprietary kernel "
                              "module, not the open one); load it (modprobe nvidia-peermem)"])),
    dict(id="modinfo_fails_is_not_installed_dmabuf_path", node=dict(modules=("nvidia",), taint="OE"),
         tools={"modinfo": MODINFO},
         calls=[dict(argv=MODINFO_ARGV, rc=1, err="modinfo: ERROR: Module nvidia-peermem not found.\n")],
         expect=dict(ready=True, gpudirect_path="dmabuf", peermem={"installed": False, "loaded": False},
                     dmabuf={"usable": True, "open_kernel_module": True})),
    dict(id="no_modinfo_runs_nothing", node=dict(modules=("nvidia",), taint="OE"),
         tools={}, calls=[], expect=dict(ready=True, peermem={"installed": False})),
    dict(id="check_mode_same_answer", node=dict(), flags=dict(check=True),
         tools={"modinfo": MODINFO}, calls=[dict(argv=MODINFO_ARGV, out=PEERMEM_KO)], expect=dict(ready=True, changed=False)),
    dict(id="acs_redirect_and_translated_iommu", node=dict(acs={"0000:17:01.0": ["ReqRedir", "CmpltRedir"]}, iommu="DMA-FQ"),
         tools={"modinfo": MODINFO}, calls=[dict(argv=MODINFO_ARGV, out=PEERMEM_KO)],
         expect=dict(ready=False, iommu={"mode": "translated", "enabled": True},
                     reasons=["GPU 0000:18:00.0 and HCA 0000:19:00.0 (mlx5_0): ACS ReqRedir+ CmpltRedir+ on bridge 0000:17:01.0 "
                              "sends their peer-to-peer traffic through the root complex; clear it (gpudirect_allow_acs_change)",
                              "the IOMMU translates DMA for the GPUs and HCAs (IOMMU groups of type DMA), which breaks or slows "
                              "GPUDirect RDMA; add iommu=pt to the kernel command line and reboot (gpudirect_allow_kernel_args)"])),
    dict(id="unprivileged_read_warns", node=dict(config_size={"0000:17:00.0": 64}),
         tools={"modinfo": MODINFO}, calls=[dict(argv=MODINFO_ARGV, out=PEERMEM_KO)],
         expect=dict(ready=True, acs_unknown=["0000:17:00.0"]),
         warnings=["cannot read the ACS control bits of bridge(s) 0000:17:00.0 (config space shorter than 256 bytes: run as root); "
                   "ACS redirect on them is not checked"]),
    dict(id="iommu_mode_unknown_warns", node=dict(iommu="", cmdline="ro quiet"),
         tools={"modinfo": MODINFO}, calls=[dict(argv=MODINFO_ARGV, out=PEERMEM_KO)],
         expect=dict(ready=True, iommu={"mode": "unknown"}),
         warnings=["the IOMMU is on but its mode is unknown (no IOMMU group type and no iommu=pt on the kernel command line)"]),
    dict(id="recorded_asus_not_ready_unless_pairs_optional", node=dict(fixture="asus_esc8000a_e12_rtx6000ada.yml"),
         params=dict(require_pairs=False), tools={"modinfo": MODINFO}, calls=[dict(argv=MODINFO_ARGV, out=PEERMEM_KO)],
         expect=dict(ready=True, reasons=[])),
]


def assert_subset(expected, actual, where="result"):
    """Dicts match on the expected keys; lists item by item with equal length."""
    if isinstance(expected, dict):
        assert isinstance(actual, dict), "%s: expected a dict, got %r" % (where, actual)
        for key, value in expected.items():
            assert key in actual, "%s: missing key %r" % (where, key)
            assert_subset(value, actual[key], "%s.%s" % (where, key))
    elif isinstance(expected, list):
        assert isinstance(actual, list), "%s: expected a list, got %r" % (where, actual)
        assert len(actual) == len(expected), "%s: %d items, expected %d: %r" % (where, len(actual), len(expected), actual)
        for index, (exp, act) in enumerate(zip(expected, actual)):
            assert_subset(exp, act, "%s[%d]" % (where, index))
    else:
        assert actual == expected, "%s: %r != %r" % (where, actual, expected)


def run_module(mocker, capsys, params, tools, calls, check_mode=False):
    """Run gpudirect_info.main() through the shared harness; return (result dict, commands run)."""
    return conftest.run_module(mocker, capsys, gpudirect_info.main, params, tools, calls, check_mode=check_mode)


@pytest.mark.parametrize("case", CASES, ids=[case["id"] for case in CASES])
def test_case(case, mocker, capsys, tmp_path):
    node = dict(case["node"])
    fixture = node.pop("fixture", "synthetic_hgx_8gpu_8hca.yml")
    root, proc = make_node(tmp_path, fixture, **node)
    mocker.patch.object(gpudirect_info, "SYSFS_ROOT", root)
    mocker.patch.object(gpudirect_info, "PROC_ROOT", proc)
    mocker.patch.object(gpudirect_info, "kernel_release", return_value="6.8.0-45-generic")
    result, ran = run_module(mocker, capsys, case.get("params") or {}, case["tools"], case["calls"],
                             check_mode=(case.get("flags") or {}).get("check", False))
    assert not result.get("failed"), result
    assert result["changed"] is False
    assert len(ran) == len(case["calls"])
    assert_subset(case["expect"], result)
    assert result["_test_warnings"] == case.get("warnings", [])
    for key in ("gpus", "hcas", "bridges", "pairs", "iommu", "peermem", "dmabuf", "ready", "reasons", "gpudirect_path"):
        assert key in result


def test_argument_spec():
    assert gpudirect_info.argument_spec() == {"require_pairs": {"type": "bool", "default": True},
                                              "files": {"type": "list", "elements": "path", "default": []}}


def test_read_files(tmp_path):
    small = tmp_path / "small.conf"
    small.write_text("nvidia_peermem\n")
    small.chmod(0o640)
    big = tmp_path / "big"
    big.write_bytes(b"x" * (gpudirect_info.FILE_LIMIT + 1))
    link = tmp_path / "dangling"
    link.symlink_to(tmp_path / "nowhere")
    files = gpudirect_info.read_files([str(small), str(big), str(link), str(tmp_path / "absent")])
    assert files[str(small)] == dict(exists=True, mode="0640", uid=os.getuid(), gid=os.getgid(), content="nvidia_peermem\n")
    assert files[str(big)]["exists"] and files[str(big)]["content"] is None
    assert files[str(link)]["exists"] and files[str(link)]["content"] is None
    assert files[str(tmp_path / "absent")] == dict(exists=False, mode=None, uid=None, gid=None, content=None)


def test_kernel_release_is_the_running_kernel():
    import os
    assert gpudirect_info.kernel_release() == os.uname()[2]
