# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The gpudirect role's decisions (controller side), for its action (plugins/action/gpudirect.py).

Pure functions over one read of the node (module gpudirect_info) and the role's settings:

- :func:`settings`: the settings as the step uses them (the argument specs have judged them);
- :func:`recorded_bridges`: the bridges an earlier run's boot-time list names that are still on a GPU or HCA path;
- :func:`plan`: the GPUDirect path, whether nvidia_peermem is loaded now, the bridges whose ACS redirect is cleared now
  and at every boot, whether iommu=pt goes on the kernel command line and whether that waits for a reboot;
- :func:`report`: the fact ``gpudirect_report`` after this run's changes (in check mode: after those it would make),
  with the readiness judgement, what changed and the notes;
- :func:`report_text`: its readable form (the block the role prints per node);
- :func:`not_ready`: the refusal of a node that is not ready, with ``gpudirect_required``.
"""

from __future__ import annotations

import json
import re

ROLE = "gpudirect"

PATHS = ("auto", "peermem", "dmabuf", "none")

# The role's files on the node.
MODULES_LOAD_PATH = "/etc/modules-load.d/fabric-infiniband-gpudirect.conf"
GRUB_PATH = "/etc/default/grub.d/fabric-infiniband-gpudirect.cfg"
GRUB_TOOLS = ("/usr/sbin/update-grub", "/usr/sbin/grub2-mkconfig")
ACS_CONF_PATH = "/etc/fabric-infiniband/gpudirect-acs.conf"
ACS_PROGRAM_PATH = "/usr/local/libexec/fabric-infiniband/gpudirect-acs"
ACS_UNIT = "fabric-infiniband-gpudirect-acs.service"
ACS_UNIT_PATH = "/etc/systemd/system/" + ACS_UNIT
# systemctl enable's link (the unit's WantedBy=multi-user.target)
ACS_UNIT_LINK = "/etc/systemd/system/multi-user.target.wants/" + ACS_UNIT
SETPCI_PATHS = ("/usr/bin/setpci", "/usr/sbin/setpci", "/bin/setpci", "/sbin/setpci")
PENDING_PATH = "/var/lib/fabric-infiniband/pending.json"
# What gpudirect_info reads besides the topology, so that one read tells which of the role's files are as it would write them.
FILES = (MODULES_LOAD_PATH, GRUB_PATH, ACS_CONF_PATH, ACS_PROGRAM_PATH, ACS_UNIT_PATH, ACS_UNIT_LINK, PENDING_PATH) + SETPCI_PATHS

# setpci's value:mask for the ACS Control register (ECAP_ACS+0x6, 16 bits): bit 2 ReqRedir and bit 3 CmpltRedir to 0;
# setpci reads the register and keeps every bit outside the mask.
ACS_VALUE = "0000:000c"

# pciutils (setpci, lspci): the same name on every family supported today.
PACKAGE = "pciutils"

PENDING_REASON = ("iommu=pt on the kernel command line at the next boot (the IOMMU translates DMA now), for GPUDirect RDMA")

REASON_NO_PEERMEM = (
    "nvidia-peermem is not installed (modinfo -n nvidia-peermem finds nothing): install the NVIDIA driver package that ships "
    "it, or use DMA-BUF (gpudirect_path: dmabuf; Linux >= 5.12 and the NVIDIA open kernel module >= 515)")
REASON_NO_DMABUF = (
    "gpudirect_path is dmabuf, but DMA-BUF is not usable here (kernel 5.12 or later: %s; NVIDIA open kernel module 515 or "
    "later: %s): use gpudirect_path peermem or auto")
# With consent the module's "add iommu=pt and reboot" is done or has failed: these say which.
REASON_IOMMU_PENDING = (
    "the IOMMU translates DMA for the GPUs and HCAs until the next boot, which breaks or slows GPUDirect RDMA: iommu=pt is on "
    "the kernel command line from then on (reboot recorded: pending_action entry gpudirect)")
REASON_STUCK = (
    "the IOMMU still translates DMA for the GPUs and HCAs after a reboot: iommu=pt (pending_action entry gpudirect, recorded "
    "before that boot) did not take effect; no new reboot is asked for: make the boot loader read %s (update-grub; on EL "
    "with BLS entries: grubby --update-kernel=ALL --args=iommu=pt), then reboot the node" % GRUB_PATH)

CHANGE_PEERMEM = "loaded nvidia_peermem"
CHANGE_ACS = "cleared ACS ReqRedir/CmpltRedir on %s"
CHANGE_IOMMU = "iommu=pt on the kernel command line at the next boot (reboot recorded: pending_action gpudirect)"
NOTE_PEERMEM = ("nvidia_peermem is no longer loaded at boot; it stays loaded until the next boot (it may be in use, refcnt "
                "%s): the role never unloads a module")
NOTE_ACS = ("the boot-time unit that cleared ACS redirect is removed: ACS stays as it is until the next boot, then the BIOS "
            "value returns")
NOTE_GRUB = "iommu=pt leaves the kernel command line at the next boot"


def _bool(value):
    if isinstance(value, bool):
        return value
    return str(value).strip().lower() in ("1", "true", "yes", "on", "y", "t")


def _unique(items):
    out = []
    for item in items:
        if item not in out:
            out.append(item)
    return out


def _intersect(first, second):
    """Ansible's ``intersect``: the items of ``first`` also in ``second``, once each, in ``first``'s order."""
    return _unique([item for item in first if item in second])


def _difference(first, second):
    return _unique([item for item in first if item not in second])


def settings(values):
    """The settings as the step uses them: the defaults where unset, the consents as booleans (the argument specs have
    refused anything that is not one)."""
    values = dict(values or {})
    return {
        "gpudirect_path": values.get("gpudirect_path") or "auto",
        "gpudirect_allow_acs_change": _bool(values.get("gpudirect_allow_acs_change", False)),
        "gpudirect_allow_kernel_args": _bool(values.get("gpudirect_allow_kernel_args", False)),
        "gpudirect_required": _bool(values.get("gpudirect_required", False)),
    }


def exists(files, path):
    """Whether gpudirect_info found ``path`` (a dangling link counts); unknown counts as there."""
    entry = (files or {}).get(path)
    return True if entry is None else bool(entry.get("exists"))


def current(files, path, content, mode):
    """Whether ``path`` holds ``content`` with ``mode``, owned by root, as gpudirect_info read it."""
    entry = (files or {}).get(path) or {}
    return bool(entry.get("exists") and entry.get("content") == content and entry.get("mode") == mode
                and entry.get("uid") == 0 and entry.get("gid") == 0)


def content(files, path):
    """The text of ``path``, None when absent or unread."""
    return ((files or {}).get(path) or {}).get("content")


def setpci_installed(files):
    """Whether setpci (pciutils) is on the node."""
    return any(((files or {}).get(path) or {}).get("exists") for path in SETPCI_PATHS)


def pending_may_hold(files):
    """Whether the node's pending record may hold the entry gpudirect: False only when it is absent, or read and without it."""
    entry = (files or {}).get(PENDING_PATH)
    if entry is None:
        return True
    if not entry.get("exists"):
        return False
    try:
        data = json.loads(entry.get("content") or "")
    except ValueError:
        return True
    entries = data.get("entries") if isinstance(data, dict) else None
    return not isinstance(entries, dict) or ROLE in entries


def unit_current(files, unit, bridges, program):
    """Whether the boot-time unit, its list of bridges and its program are as the role writes them, and the unit enabled."""
    return (current(files, ACS_UNIT_PATH, unit, "0644") and current(files, ACS_CONF_PATH, bridges, "0644")
            and current(files, ACS_PROGRAM_PATH, program, "0755") and exists(files, ACS_UNIT_LINK))


def unit_gone(files):
    """Whether nothing of the boot-time unit is on the node."""
    return not any(exists(files, path) for path in (ACS_UNIT_PATH, ACS_UNIT_LINK, ACS_CONF_PATH, ACS_PROGRAM_PATH))


def recorded_bridges(conf_text, info):
    """The bridges the boot-time list (``conf_text``, the file an earlier run wrote; None when absent) names, that are
    still on the path of a GPU or HCA."""
    names = []
    for line in (conf_text or "").splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        names.append(line.split()[0])
    on_path = [bridge.get("pci_address") for bridge in info.get("bridges") or []]
    return _intersect(names, on_path)


def acs_redirect(pairs):
    """The bridges with ACS redirect on some pair's path, sorted."""
    return sorted(_unique([bridge for pair in pairs for bridge in pair.get("acs_redirect") or []]))


def plan(s, info, recorded=(), grub_exists=False):
    """What the run does on the node, from the settings ``s`` (:func:`settings`), the read ``info`` (gpudirect_info),
    the bridges of the earlier boot-time list (:func:`recorded_bridges`) and whether the GRUB drop-in exists."""
    path = s["gpudirect_path"]
    if path == "auto":
        path = "dmabuf" if (info.get("dmabuf") or {}).get("usable") else "peermem"
    peermem = info.get("peermem") or {}
    nvidia_loaded = info.get("nvidia_loaded", True)
    peermem_load = bool(path == "peermem" and peermem.get("installed") and not peermem.get("loaded") and nvidia_loaded)
    redirect = acs_redirect(info.get("pairs") or [])
    allow_acs = s["gpudirect_allow_acs_change"]
    allow_kernel = s["gpudirect_allow_kernel_args"]
    translated = (info.get("iommu") or {}).get("mode") == "translated"
    return {
        "path": path,
        "peermem_load": peermem_load,
        "peermem_boot": path == "peermem",
        "acs_redirect": redirect,
        "acs_clear_now": list(redirect) if allow_acs else [],
        "acs_boot": sorted(_unique(list(redirect) + list(recorded))) if allow_acs else [],
        # an existing drop-in stays while it is allowed: after the reboot it is what makes the mode passthrough
        "grub_wanted": bool(allow_kernel and (translated or grub_exists)),
        "reboot_wanted": bool(allow_kernel and translated),
    }


def needs_setpci(the_plan):
    """Whether setpci (pciutils) must be on the node: ACS is cleared now or at every boot."""
    return bool(the_plan["acs_clear_now"] or the_plan["acs_boot"])


def _pairs_after(info, the_plan):
    devices = list(info.get("gpus") or []) + list(info.get("hcas") or [])
    by_address = dict((device.get("pci_address"), device) for device in devices)
    clear_now = the_plan["acs_clear_now"]
    out = []
    for pair in info.get("pairs") or []:
        hca = by_address.get(pair.get("hca")) or {}
        gpu = by_address.get(pair.get("gpu")) or {}
        redirect = pair.get("acs_redirect") or []
        reasons = pair.get("reasons") or []
        cleared = _intersect(redirect, clear_now)
        still = [reason for reason in reasons if not any(bridge in reason for bridge in cleared)]
        out.append({
            "gpu": pair.get("gpu"),
            "gpu_numa_node": gpu.get("numa_node"),
            "hca": pair.get("hca"),
            "rdma_device": hca.get("rdma_device"),
            "netdev": hca.get("netdev"),
            "hca_numa_node": hca.get("numa_node"),
            "relation": pair.get("relation"),
            "common_bridge": pair.get("common_bridge"),
            "acs_redirect": _difference(redirect, cleared),
            "acs_cleared": cleared,
            "acs_cleared_at_boot": _intersect(list(gpu.get("path") or []) + list(hca.get("path") or []), the_plan["acs_boot"]),
            "ok": bool(pair.get("ok") or (reasons and not still)),
            "reasons": still,
        })
    return out


def _role_reasons(info, the_plan, stuck, pending):
    """What the role itself finds wrong with the path it was asked for, where the module's reasons do not say it already
    (the module only asks for a path when none serves)."""
    reasons = []
    peermem = info.get("peermem") or {}
    dmabuf = info.get("dmabuf") or {}
    if (the_plan["path"] == "peermem" and not peermem.get("installed")
            and not any("peermem" in reason for reason in info.get("reasons") or [])):
        reasons.append(REASON_NO_PEERMEM)
    if the_plan["path"] == "dmabuf" and not dmabuf.get("usable"):
        reasons.append(REASON_NO_DMABUF % ("yes" if dmabuf.get("kernel") else "no", "yes" if dmabuf.get("driver") else "no"))
    if stuck:
        reasons.append(REASON_STUCK)
    if pending:
        reasons.append(REASON_IOMMU_PENDING)
    return reasons


def report(info, the_plan, outcome=None):
    """The fact ``gpudirect_report`` after the run's changes. ``outcome`` says what the node's modules answered:
    ``stuck`` (pending_action: the node booted since the entry and the IOMMU still translates), ``grub_written``,
    ``pending_changed``, ``modules_load_removed``, ``acs_removed``, ``grub_removed`` (each whether it changed)."""
    outcome = dict(outcome or {})
    stuck = bool(outcome.get("stuck"))
    pending = bool(the_plan["reboot_wanted"] and not stuck)
    pairs = _pairs_after(info, the_plan)
    role_reasons = _role_reasons(info, the_plan, stuck, pending)
    clear_now = the_plan["acs_clear_now"]
    reasons = [
        reason for reason in info.get("reasons") or []
        if not any(bridge in reason for bridge in clear_now)
        and not (the_plan["peermem_load"] and re.search("peermem", reason, re.IGNORECASE))
        and not (the_plan["reboot_wanted"] and "iommu=pt" in reason)
        and reason not in role_reasons
    ] + role_reasons
    peermem = dict(info.get("peermem") or {})
    changes = []
    if the_plan["peermem_load"]:
        changes.append(CHANGE_PEERMEM)
    if clear_now:
        changes.append(CHANGE_ACS % ", ".join(clear_now))
    if pending and (outcome.get("grub_written") or outcome.get("pending_changed")):
        changes.append(CHANGE_IOMMU)
    notes = []
    if outcome.get("modules_load_removed") and peermem.get("loaded"):
        notes.append(NOTE_PEERMEM % (peermem.get("refcnt") or "?"))
    if outcome.get("acs_removed"):
        notes.append(NOTE_ACS)
    if outcome.get("grub_removed"):
        notes.append(NOTE_GRUB)
    iommu = dict(info.get("iommu") or {})
    iommu["iommu_pt_at_next_boot"] = pending
    peermem_after = dict(peermem, loaded=bool(peermem.get("loaded") or the_plan["peermem_load"]),
                         loaded_now=bool(the_plan["peermem_load"]))
    return {
        "ready": not reasons,
        "reasons": reasons,
        "path": the_plan["path"],
        "pairs": pairs,
        "gpus": len(info.get("gpus") or []),
        "hcas": len(info.get("hcas") or []),
        "peermem": peermem_after,
        "dmabuf": info.get("dmabuf"),
        "acs": {
            "redirect": acs_redirect(pairs),
            "cleared_now": list(clear_now),
            "cleared_at_boot": list(the_plan["acs_boot"]),
        },
        "iommu": iommu,
        "reboot_pending": pending,
        "reboot_stuck": stuck,
        "changes": changes,
        "notes": notes,
    }


def _v(value):
    return "-" if value is None else value


ROW = "%-13s %-4s %-13s %-8s %-13s %-4s %-4s %s"


def _acs_cell(pair, check):
    if pair["acs_redirect"]:
        return "redirect on " + ",".join(pair["acs_redirect"])
    if pair["acs_cleared"]:
        return "cleared on " + ",".join(pair["acs_cleared"]) + check
    if pair["acs_cleared_at_boot"]:
        return "ok (cleared at boot on " + ",".join(pair["acs_cleared_at_boot"]) + ")"
    return "ok"


def report_text(r, host, check_mode=False):
    """The readable form of the report ``r`` (:func:`report`), as the role prints it."""
    check = " (check mode: would be)" if check_mode else ""
    peermem = r.get("peermem") or {}
    dmabuf = r.get("dmabuf") or {}
    lines = ["GPUDirect RDMA on %s: %s (%s GPUs, %s HCAs)" % (host, "READY" if r["ready"] else "NOT READY", r["gpus"], r["hcas"])]
    if r["path"] == "peermem":
        if peermem.get("loaded_now"):
            state = "loaded now" + check
        elif peermem.get("loaded"):
            state = "loaded"
        else:
            state = "not loaded" if peermem.get("installed") else "not installed"
        lines.append("Path: nvidia-peermem, " + state)
    elif r["path"] == "dmabuf":
        lines.append("Path: DMA-BUF, %s (NVIDIA driver %s, %s kernel module)" % (
            "usable" if dmabuf.get("usable") else "not usable", dmabuf.get("driver_version") or "unknown",
            "open" if dmabuf.get("open_kernel_module") else "proprietary"))
    else:
        lines.append("Path: left alone (gpudirect_path none); nvidia-peermem %s, DMA-BUF %s" % (
            "loaded" if peermem.get("loaded") else "not loaded", "usable" if dmabuf.get("usable") else "not usable"))
    lines.append("IOMMU: %s%s%s" % (
        (r.get("iommu") or {}).get("mode"),
        ", iommu=pt at the next boot (reboot pending)" if r["reboot_pending"] else "",
        ", iommu=pt did not take effect after a reboot (pending_action gpudirect)" if r["reboot_stuck"] else ""))
    lines.append(ROW % ("GPU", "NUMA", "HCA", "RDMA", "netdev", "NUMA", "rel", "ACS"))
    for pair in r["pairs"]:
        lines.append(ROW % (pair["gpu"], _v(pair["gpu_numa_node"]), pair["hca"], _v(pair["rdma_device"]), _v(pair["netdev"]),
                            _v(pair["hca_numa_node"]), pair["relation"], _acs_cell(pair, check)))
    if r["reasons"]:
        lines.append("Not ready because:")
        lines.extend("  - %s" % reason for reason in r["reasons"])
    if r["changes"]:
        lines.append("Would change (check mode):" if check_mode else "Changed:")
        lines.extend("  - %s" % change for change in r["changes"])
    if r["notes"]:
        lines.append("Note%s:" % (" (check mode: what the run would do)" if check_mode else ""))
        lines.extend("  - %s" % note for note in r["notes"])
    return "\n".join(lines).strip()


def not_ready(r, host, s):
    """The refusal of a node that is not ready, when ``gpudirect_required`` asks for one; None otherwise."""
    if s["gpudirect_required"] and not r["ready"]:
        return "%s is not ready for GPUDirect RDMA: %s" % (host, " / ".join(r["reasons"]))
    return None
