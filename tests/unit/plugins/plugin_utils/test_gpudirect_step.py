# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The gpudirect role's decisions (plugins/plugin_utils/gpudirect.py): the settings, the plan (path, nvidia_peermem, ACS now
and at boot, iommu=pt and its reboot), the report after the run's changes, its text and the refusal of a node that is not
ready."""

from __future__ import annotations

import copy

import pytest

from ansible_collections.fabric.infiniband.plugins.plugin_utils import gpudirect as gd

BRIDGE = "0000:18:00.0"
OTHER = "0000:28:00.0"


def _info(**changes):
    """Two GPU/HCA pairs under two switches; ACS redirect on the first pair's switch port, nvidia-peermem installed, not
    loaded; IOMMU passthrough; DMA-BUF not usable (proprietary module)."""
    info = {
        "gpus": [
            {"pci_address": "0000:19:00.0", "numa_node": 0, "path": ["0000:16:01.0", "0000:17:00.0", BRIDGE]},
            {"pci_address": "0000:29:00.0", "numa_node": 1, "path": ["0000:26:01.0", "0000:27:00.0", OTHER]},
        ],
        "hcas": [
            {"pci_address": "0000:1a:00.0", "numa_node": 0, "rdma_device": "mlx5_0", "netdev": "ibp26s0",
             "path": ["0000:16:01.0", "0000:17:00.0", "0000:18:01.0"]},
            {"pci_address": "0000:2a:00.0", "numa_node": None, "rdma_device": "mlx5_1", "netdev": None,
             "path": ["0000:26:01.0", "0000:27:00.0", "0000:28:01.0"]},
        ],
        "bridges": [{"pci_address": a} for a in ("0000:16:01.0", "0000:17:00.0", BRIDGE, "0000:18:01.0", "0000:26:01.0",
                                                 "0000:27:00.0", OTHER, "0000:28:01.0")],
        "pairs": [
            {"gpu": "0000:19:00.0", "hca": "0000:1a:00.0", "relation": "PIX", "common_bridge": "0000:17:00.0",
             "acs_redirect": [BRIDGE], "ok": False,
             "reasons": ["GPU 0000:19:00.0 and HCA 0000:1a:00.0: ACS redirect on %s sends their traffic to the root complex "
                         "(gpudirect_allow_acs_change)" % BRIDGE]},
            {"gpu": "0000:29:00.0", "hca": "0000:2a:00.0", "relation": "PIX", "common_bridge": "0000:27:00.0",
             "acs_redirect": [], "ok": True, "reasons": []},
        ],
        "iommu": {"enabled": True, "mode": "passthrough", "cmdline": [], "units": ["dmar0"]},
        "peermem": {"installed": True, "loaded": False, "refcnt": None, "holders": []},
        "dmabuf": {"kernel": True, "driver": False, "usable": False, "driver_version": "550.54.15", "open_kernel_module": False},
        "nvidia_loaded": True,
        "reasons": [],
    }
    info["reasons"] = list(info["pairs"][0]["reasons"])
    for key, value in changes.items():
        info[key] = value
    return info


def _s(**values):
    return gd.settings(values)


def test_settings_defaults_and_booleans():
    assert gd.settings({}) == {"gpudirect_path": "auto", "gpudirect_allow_acs_change": False,
                               "gpudirect_allow_kernel_args": False, "gpudirect_required": False}
    s = gd.settings({"gpudirect_path": "dmabuf", "gpudirect_allow_acs_change": "yes", "gpudirect_allow_kernel_args": "true",
                     "gpudirect_required": 1})
    assert s == {"gpudirect_path": "dmabuf", "gpudirect_allow_acs_change": True, "gpudirect_allow_kernel_args": True,
                 "gpudirect_required": True}


def test_recorded_bridges_keeps_those_still_on_a_path():
    text = "# Ansible managed\n# comment\n\n%s 0000:000c\n0000:99:00.0 0000:000c\n  %s 0000:000c  \n" % (OTHER, BRIDGE)
    assert gd.recorded_bridges(text, _info()) == [OTHER, BRIDGE]
    assert gd.recorded_bridges(None, _info()) == []


@pytest.mark.parametrize("path, usable, expected", [
    ("auto", False, "peermem"), ("auto", True, "dmabuf"), ("peermem", True, "peermem"), ("none", False, "none"),
    ("dmabuf", False, "dmabuf"),
])
def test_plan_path(path, usable, expected):
    info = _info(dmabuf=dict(_info()["dmabuf"], usable=usable))
    plan = gd.plan(_s(gpudirect_path=path), info)
    assert plan["path"] == expected
    assert plan["peermem_boot"] == (expected == "peermem")
    assert plan["peermem_load"] == (expected == "peermem")


def test_plan_peermem_not_loaded_without_nvidia_or_when_loaded():
    assert not gd.plan(_s(), _info(nvidia_loaded=False))["peermem_load"]
    assert not gd.plan(_s(), _info(peermem={"installed": True, "loaded": True, "refcnt": 0}))["peermem_load"]
    assert not gd.plan(_s(), _info(peermem={"installed": False, "loaded": False}))["peermem_load"]


def test_plan_acs_only_with_consent():
    assert gd.plan(_s(), _info(), recorded=[OTHER])["acs_clear_now"] == []
    assert gd.plan(_s(), _info(), recorded=[OTHER])["acs_boot"] == []
    plan = gd.plan(_s(gpudirect_allow_acs_change=True), _info(), recorded=[OTHER])
    assert plan["acs_clear_now"] == [BRIDGE]
    assert plan["acs_boot"] == [BRIDGE, OTHER]
    assert gd.needs_setpci(plan)
    assert not gd.needs_setpci(gd.plan(_s(), _info()))


@pytest.mark.parametrize("consent, mode, exists, wanted, reboot", [
    (False, "translated", True, False, False),
    (True, "translated", False, True, True),
    (True, "passthrough", True, True, False),
    (True, "passthrough", False, False, False),
])
def test_plan_iommu(consent, mode, exists, wanted, reboot):
    info = _info(iommu={"enabled": True, "mode": mode})
    plan = gd.plan(_s(gpudirect_allow_kernel_args=consent), info, grub_exists=exists)
    assert (plan["grub_wanted"], plan["reboot_wanted"]) == (wanted, reboot)


def test_report_without_consent():
    info = _info()
    plan = gd.plan(_s(), info)
    r = gd.report(info, plan)
    assert not r["ready"]
    assert r["reasons"] == info["reasons"]
    assert r["changes"] == ["loaded nvidia_peermem"]
    assert r["peermem"]["loaded"] and r["peermem"]["loaded_now"]
    assert r["acs"] == {"redirect": [BRIDGE], "cleared_now": [], "cleared_at_boot": []}
    assert r["pairs"][0]["acs_redirect"] == [BRIDGE] and not r["pairs"][0]["ok"]
    assert r["pairs"][0]["rdma_device"] == "mlx5_0" and r["pairs"][0]["gpu_numa_node"] == 0
    assert r["gpus"] == 2 and r["hcas"] == 2
    assert r["iommu"]["iommu_pt_at_next_boot"] is False
    assert r["notes"] == []


def test_report_acs_cleared_now_makes_the_pair_ready():
    info = _info(peermem={"installed": True, "loaded": True, "refcnt": 2})
    plan = gd.plan(_s(gpudirect_allow_acs_change=True), info, recorded=[OTHER])
    r = gd.report(info, plan)
    assert r["ready"] and r["reasons"] == []
    assert r["changes"] == ["cleared ACS ReqRedir/CmpltRedir on %s" % BRIDGE]
    assert r["pairs"][0] == dict(r["pairs"][0], ok=True, acs_redirect=[], acs_cleared=[BRIDGE], acs_cleared_at_boot=[BRIDGE],
                                 reasons=[])
    assert r["pairs"][1]["acs_cleared_at_boot"] == [OTHER]
    assert r["acs"] == {"redirect": [], "cleared_now": [BRIDGE], "cleared_at_boot": [BRIDGE, OTHER]}


def test_report_second_run_changes_nothing():
    cleared = _info(peermem={"installed": True, "loaded": True, "refcnt": 0}, reasons=[])
    cleared["pairs"] = [dict(cleared["pairs"][0], acs_redirect=[], ok=True, reasons=[]), cleared["pairs"][1]]
    plan = gd.plan(_s(gpudirect_allow_acs_change=True), cleared, recorded=[BRIDGE])
    assert plan["acs_clear_now"] == [] and plan["acs_boot"] == [BRIDGE]
    r = gd.report(cleared, plan)
    assert r["ready"] and r["changes"] == [] and r["notes"] == []
    text = gd.report_text(r, "node01")
    assert "ok (cleared at boot on %s)" % BRIDGE in text
    assert "Path: nvidia-peermem, loaded" in text


def test_report_notes_of_removals():
    info = _info(peermem={"installed": True, "loaded": True, "refcnt": 0})
    plan = gd.plan(_s(gpudirect_path="none"), info)
    r = gd.report(info, plan, {"modules_load_removed": True, "acs_removed": True, "grub_removed": True})
    assert r["notes"] == [gd.NOTE_PEERMEM % "?", gd.NOTE_ACS, gd.NOTE_GRUB]
    assert "nvidia_peermem is no longer loaded at boot" in r["notes"][0]


def test_report_role_reasons():
    info = _info(peermem={"installed": False, "loaded": False})
    r = gd.report(info, gd.plan(_s(gpudirect_path="peermem"), info))
    assert r["reasons"][-1] == gd.REASON_NO_PEERMEM
    # the module's own reason names peermem: not said twice
    info = _info(peermem={"installed": False, "loaded": False}, reasons=["nvidia-peermem is not loaded and not installed"])
    r = gd.report(info, gd.plan(_s(gpudirect_path="peermem"), info))
    assert r["reasons"] == ["nvidia-peermem is not loaded and not installed"]
    r = gd.report(_info(), gd.plan(_s(gpudirect_path="dmabuf"), _info()))
    assert r["reasons"][-1] == gd.REASON_NO_DMABUF % ("yes", "no")
    assert r["path"] == "dmabuf" and not r["peermem"]["loaded_now"]


def _translated():
    reason = "the IOMMU translates DMA for the GPUs and HCAs: add iommu=pt to the kernel command line and reboot " \
             "(gpudirect_allow_kernel_args)"
    info = _info(iommu={"enabled": True, "mode": "translated"}, peermem={"installed": True, "loaded": True, "refcnt": 1})
    info["pairs"] = [dict(info["pairs"][0], acs_redirect=[], ok=True, reasons=[]), info["pairs"][1]]
    info["reasons"] = [reason]
    return info


def test_report_iommu_pending_with_consent():
    info = _translated()
    plan = gd.plan(_s(gpudirect_allow_kernel_args=True), info)
    r = gd.report(info, plan, {"grub_written": True, "pending_changed": True})
    assert r["reasons"] == [gd.REASON_IOMMU_PENDING]
    assert r["changes"] == [gd.CHANGE_IOMMU]
    assert r["reboot_pending"] and not r["reboot_stuck"] and r["iommu"]["iommu_pt_at_next_boot"]
    assert "IOMMU: translated, iommu=pt at the next boot (reboot pending)" in gd.report_text(r, "node01")
    # the same again before the reboot: nothing changed, still pending
    assert gd.report(info, plan, {})["changes"] == []


def test_report_iommu_stuck_after_a_reboot():
    info = _translated()
    plan = gd.plan(_s(gpudirect_allow_kernel_args=True), info, grub_exists=True)
    r = gd.report(info, plan, {"stuck": True})
    assert r["reasons"] == [gd.REASON_STUCK] and r["reboot_stuck"] and not r["reboot_pending"] and r["changes"] == []
    assert "IOMMU: translated, iommu=pt did not take effect" in gd.report_text(r, "node01")


def test_report_iommu_without_consent():
    info = _translated()
    r = gd.report(info, gd.plan(_s(), info, grub_exists=True), {"grub_removed": True})
    assert r["reasons"] == info["reasons"] and r["notes"] == [gd.NOTE_GRUB]


def test_report_does_not_change_the_read():
    info = _info()
    before = copy.deepcopy(info)
    gd.report(info, gd.plan(_s(gpudirect_allow_acs_change=True), info))
    assert info == before


def test_report_text():
    info = _info()
    r = gd.report(info, gd.plan(_s(gpudirect_allow_acs_change=True), info))
    lines = gd.report_text(r, "node01", check_mode=True).splitlines()
    assert lines[0] == "GPUDirect RDMA on node01: READY (2 GPUs, 2 HCAs)"
    assert lines[1] == "Path: nvidia-peermem, loaded now (check mode: would be)"
    assert lines[2] == "IOMMU: passthrough"
    assert lines[3].split() == ["GPU", "NUMA", "HCA", "RDMA", "netdev", "NUMA", "rel", "ACS"]
    assert lines[4].split() == ["0000:19:00.0", "0", "0000:1a:00.0", "mlx5_0", "ibp26s0", "0", "PIX", "cleared", "on",
                                BRIDGE, "(check", "mode:", "would", "be)"]
    assert lines[5].split() == ["0000:29:00.0", "1", "0000:2a:00.0", "mlx5_1", "-", "-", "PIX", "ok"]
    assert lines[6:] == ["Would change (check mode):", "  - loaded nvidia_peermem",
                         "  - cleared ACS ReqRedir/CmpltRedir on %s" % BRIDGE]
    r = gd.report(info, gd.plan(_s(), info), {"acs_removed": True})
    text = gd.report_text(r, "node01")
    assert "NOT READY" in text and "Not ready because:\n  - GPU 0000:19:00.0" in text and "redirect on %s" % BRIDGE in text
    assert text.endswith("Note:\n  - " + gd.NOTE_ACS)
    none = gd.report(info, gd.plan(_s(gpudirect_path="none"), info))
    assert "Path: left alone (gpudirect_path none); nvidia-peermem not loaded, DMA-BUF not usable" in gd.report_text(none, "n")
    dmabuf = gd.report(info, gd.plan(_s(gpudirect_path="dmabuf"), info))
    assert "Path: DMA-BUF, not usable (NVIDIA driver 550.54.15, proprietary kernel module)" in gd.report_text(dmabuf, "n")


def test_not_ready_only_when_required():
    r = gd.report(_info(), gd.plan(_s(), _info()))
    assert gd.not_ready(r, "node01", _s()) is None
    message = gd.not_ready(r, "node01", _s(gpudirect_required=True))
    assert message.startswith("node01 is not ready for GPUDirect RDMA: GPU 0000:19:00.0")
    ready = gd.report(_info(), gd.plan(_s(gpudirect_allow_acs_change=True), _info()))
    assert gd.not_ready(ready, "node01", _s(gpudirect_required=True)) is None
