# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""NVIDIA/Mellanox firmware reset: MFT's ``mlxfwreset`` and mstflint's ``mstfwreset``.

Both print the same text (tool-outputs.md section 3). This file holds:

- argv builders (``query_args``, ``reset_args``), never command strings;
- parsers, pure functions on the tool's output returning plain dicts:
  ``parse_query`` (the ``q`` table of reset levels, types and sync owners)
  and ``parse_reset`` (the level announced, the ``-I- <step> -Done`` lines,
  ``FW was loaded successfully``), with ``classify_error`` for ``-E-`` lines;
- ``explain_failure``, one sentence with what to do for a failed call;
- the sysfs checks run before a reset: the physical functions of the card
  (``card_functions``), their SR-IOV VFs (``functions_with_vfs``) and
  whether the card is a BlueField (``is_bluefield``).

Tool selection, device resolution and the BlueField mode come from
``mlxconfig.py`` (``select_tool(..., names=RESET_TOOLS)``, ``resolve_device``,
``first_function``, ``bluefield_mode``).

The parsers do not depend on column widths: descriptions contain blanks and
dashes (``Phy-less``, ``"live-Patch"``), so a level row is split at its last
``-Supported``/``-Not Supported``; step rows at the last ``-`` before
``Done``/``Skipped``/``Failed``. Publishers squeeze and indent lines, and trim
trailing blanks; none of that matters here.
"""

from __future__ import annotations

import re

from ansible_collections.fabric.infiniband.plugins.module_utils import mlxconfig as mlxcfg
from ansible_collections.fabric.infiniband.plugins.module_utils import sysfs as sysfs_utils


RESET_TOOLS = mlxcfg.RESET_TOOLS
# the configuration tool of the same flavour (for the BlueField mode)
CONFIG_TOOL_OF = {"mlxfwreset": "mlxconfig", "mstfwreset": "mstconfig"}

# reset levels of the tools' database (cmd_reg_mfrl.py); 1 exists on BlueField only,
# 5 only in old releases
LEVEL_NAMES = {
    0: 'Driver, PCI link, network link will remain up ("live-Patch")',
    1: 'Only ARM side will not remain up ("Immediate reset")',
    3: "Driver restart and PCI reset",
    4: "Warm Reboot",
    5: "Cold Reboot",
}

# step results that are not a failure (the others: Failed, or none printed)
STEP_OK = ("Done", "Skipped")

# PCI device ids (vendor 0x15b3) of BlueField physical functions
BLUEFIELD_DEVICE_IDS = frozenset(
    dev_id for dev_id, (model, is_vf) in sysfs_utils.PCI_MODELS.items() if model.startswith("BlueField") and not is_vf)

_SECTIONS = (
    (re.compile(r"^Reset-levels\b", re.I), "levels"),
    (re.compile(r"^Reset-types\b", re.I), "types"),
    (re.compile(r"^Reset-sync\b", re.I), "sync"),
)
_ROW_RE = re.compile(r"^([0-9]+)\s*:\s*(.*)$")
_STATUS_RE = re.compile(r"^(?P<text>.*?)\s*-\s*(?P<status>Not\s+Supported|Supported)\b\s*(?P<tail>.*)$", re.I)
_REASON_RE = re.compile(r"\(\s*Reason\s*:\s*(?P<reason>.*?)\s*\)", re.I)
_DEFAULT_RE = re.compile(r"\(\s*default\s*\)", re.I)
_QUERY_HEADER_RE = re.compile(r"^Supported reset levels for loading FW on device,\s*(?P<device>.*?)\s*:$", re.I)
_RESET_HEADER_RE = re.compile(
    r"^(?P<word>Minimal|Requested|The)\s+reset\s+level\s+for\s+device,\s*(?P<device>.*?)(?:\s+is)?\s*:$", re.I)
_SETTINGS_RE = re.compile(r"^Reset level\s*:\s*[0-9]+\s*(?:,|$)", re.I)
_SETTING_RE = re.compile(r"Reset\s+(level|type|sync|method)\s*:\s*([0-9]+)", re.I)
_PROMPT_RE = re.compile(r"^Continue with reset\s*\?\s*\[y/N\]\s*(?P<rest>.*)$", re.I)
_STEP_RE = re.compile(r"^-I-\s+(?P<step>.*?\S)\s*-\s*(?P<rest>(?:Done|Skipped|Failed)\b.*|-[EWI]-.*|)$", re.I)
_RESULT_RE = re.compile(r"^(Done|Skipped|Failed)\b\s*(.*)$", re.I)
_LOADED_RE = re.compile(r"^FW was loaded successfully", re.I)

# -E- messages -> kind
_ERRORS = (
    (re.compile(r"^Failed to open (?:the )?device", re.I), "open"),
    (re.compile(r"^Cannot open Device", re.I), "open"),
    (re.compile(r"^The tool is not supported on UEFI Secure Boot", re.I), "secure_boot"),
    (re.compile(r"^Failed to Identify Device", re.I), "identify"),
    (re.compile(r"^Can ?not find path of the provided mst device", re.I), "mst"),
    (re.compile(r"^Failed to run: mst status", re.I), "mst"),
    (re.compile(r"^Firmware reset failed", re.I), "reset_failed"),
    (re.compile(r"^Failed to get the driver status", re.I), "driver"),
    (re.compile(r"^Please make sure the driver is down", re.I), "driver"),
    (re.compile(r"^Reset-level '?[0-9]+'? is not supported", re.I), "level_unsupported"),
    (re.compile(r"^There is no supported reset-level", re.I), "level_unsupported"),
    (re.compile(r"^Reset-(?:type|sync) '?[0-9]+'? is not supported", re.I), "unsupported"),
    (re.compile(r"^Synchronization by driver is not supported", re.I), "unsupported"),
    (re.compile(r"^Command is not supported", re.I), "unsupported"),
    (re.compile(r"^Only root user can run this tool", re.I), "not_root"),
    (re.compile(r"^\S+ is not supported for device in Flash Recovery mode", re.I), "livefish"),
    (re.compile(r"^The tool is not supported on virtual machines", re.I), "virtual_machine"),
    (re.compile(r"^Unsupported (?:device|OS)", re.I), "unsupported_device"),
    (re.compile(r"^(?:fsm sync timed out|Operation failed, the fsm register)", re.I), "multihost"),
    (re.compile(r"^Aborted by user", re.I), "aborted"),
    (re.compile(r"^Failed to reboot machine", re.I), "reboot"),
)


# ---------------------------------------------------------------- argv

def query_args(device):
    """Arguments (after the tool path) of the query of the supported reset levels."""
    return ["-d", device, "q"]


def reset_args(device, level, skip_driver=False):
    """Arguments of one non-interactive reset at an explicit level."""
    args = ["-d", device, "-l", str(int(level)), "-y", "reset"]
    if skip_driver:
        args.append("--skip_driver")
    return args


# ---------------------------------------------------------------- parsers

def _message(line):
    return line.strip()[3:].strip()


def _new_result():
    return {"errors": [], "warnings": [], "infos": [], "lines": []}


def _tool_message(result, stripped):
    """File a ``-E-``/``-W-``/``-I-`` line; False for any other line."""
    kind = {"-E-": "errors", "-W-": "warnings", "-I-": "infos"}.get(stripped[:3])
    if kind is None:
        return False
    result[kind].append(_message(stripped))
    return True


def _stderr(result, stderr):
    for raw in (stderr or "").splitlines():
        stripped = raw.strip()
        if stripped and not _tool_message(result, stripped):
            result["lines"].append(stripped)


def parse_level_row(text):
    """``3: Driver restart and PCI reset   -Supported     (default)`` ->
    ``{number, description, supported, default, reason}``; None for any other line.

    ``supported`` is None when the row has no status (a truncated listing).
    """
    match = _ROW_RE.match(text.strip())
    if not match:
        return None
    number, rest = int(match.group(1)), match.group(2)
    status = _STATUS_RE.match(rest)
    supported = None
    tail = ""
    if status:
        rest, tail = status.group("text"), status.group("tail")
        supported = status.group("status").lower() == "supported"
    reason = _REASON_RE.search(tail)
    return {
        "number": number,
        "description": " ".join(rest.split()) or None,
        "supported": supported,
        "default": bool(_DEFAULT_RE.search(tail)),
        "reason": reason.group("reason") if reason else None,
    }


def parse_query(stdout, stderr=""):
    """Parse the output of ``q``/``query``.

    Returns ``{device, levels, types, sync, errors, warnings, infos, lines}``:
    ``device`` as named in the header (None when not printed), ``levels``,
    ``types`` and ``sync`` the rows of the three blocks in the tool's order,
    each ``{number, description, supported, default, reason}`` (``level``
    rows keyed ``level``, the others ``number``); the ``-E-``/``-W-``/``-I-``
    messages of both streams, and the lines nothing accounts for.
    """
    result = dict(_new_result(), device=None, levels=[], types=[], sync=[])
    section = None
    for raw in (stdout or "").splitlines():
        stripped = raw.strip()
        if not stripped:
            continue
        if _tool_message(result, stripped):
            continue
        header = _QUERY_HEADER_RE.match(stripped)
        if header:
            result["device"] = header.group("device")
            continue
        found = [key for regex, key in _SECTIONS if regex.match(stripped)]
        if found:
            section = found[0]
            continue
        row = parse_level_row(stripped) if section else None
        if row is None:
            result["lines"].append(stripped)
            continue
        if section == "levels":
            row["level"] = row.pop("number")
        result[section].append(row)
    _stderr(result, stderr)
    return result


def supported_levels(parsed):
    """Numbers of the reset levels the query marks as supported, in the tool's order."""
    return [row["level"] for row in parsed.get("levels", []) if row["supported"]]


def level_entry(parsed, level):
    """The query row of one level, None when the tool did not list it."""
    for row in parsed.get("levels", []):
        if row["level"] == level:
            return row
    return None


def describe_levels(parsed, only_supported=True):
    """``3 (Driver restart and PCI reset), 4 (Warm Reboot)`` for messages."""
    rows = [row for row in parsed.get("levels", []) if row["supported"] or not only_supported]
    return ", ".join("%d (%s)" % (row["level"], row["description"] or LEVEL_NAMES.get(row["level"], "?")) for row in rows)


def parse_reset(stdout, stderr=""):
    """Parse the output of ``reset``.

    Returns a dict with:

    - ``wording``: how the tool announced the level: ``minimal`` (``Minimal
      reset level for device, X:``, older tools without ``-l``), ``auto``
      (``The reset level for device, X is:``, newer ones without ``-l``),
      ``requested`` (``Requested reset level for device, X:``, with ``-l``),
      None when not printed (the tool stopped before);
    - ``device``, ``level`` and ``description`` announced;
    - ``confirmed``: the ``Continue with reset?[y/N]`` prompt was answered
      ``y`` (True), not answered (False) or not shown (None);
    - ``settings``: ``Reset level: 3, Reset type: 0, ...`` of the newest
      tools as ``{level, type, sync, method}`` (empty when not printed);
    - ``steps``: ``[{step, result}]`` from the ``-I- <step> -Done`` lines,
      result ``Done``/``Skipped``/``Failed`` or None when the line stops after
      the dash; a ``Failed`` printed on a line of its own (an error between
      two steps) is a step None;
    - ``loaded``: ``-I- FW was loaded successfully.`` was printed;
    - ``errors``, ``warnings``, ``infos``, ``lines``.
    """
    result = dict(_new_result(), wording=None, device=None, level=None, description=None, confirmed=None,
                  settings={}, steps=[], loaded=False)
    announced = False
    for raw in (stdout or "").splitlines():
        stripped = raw.strip()
        if not stripped:
            continue
        prompt = _PROMPT_RE.match(stripped)
        if prompt:
            rest = prompt.group("rest").strip()
            result["confirmed"] = rest.lower() in ("y", "yes")
            if not rest or result["confirmed"]:
                continue
            stripped = rest
        step = _STEP_RE.match(stripped)
        if step:
            rest = step.group("rest").strip()
            outcome = _RESULT_RE.match(rest)
            status = None
            if outcome:
                status = outcome.group(1).capitalize()
                rest = outcome.group(2).strip()
            result["steps"].append({"step": " ".join(step.group("step").split()), "result": status})
            if not rest:
                continue
            stripped = rest
        if stripped.lower() == "failed":
            result["steps"].append({"step": None, "result": "Failed"})
            continue
        if stripped.startswith("-I-") and _LOADED_RE.match(_message(stripped)):
            result["loaded"] = True
        if _tool_message(result, stripped):
            continue
        header = _RESET_HEADER_RE.match(stripped)
        if header:
            word = header.group("word").lower()
            result["wording"] = {"the": "auto"}.get(word, word)
            result["device"] = header.group("device")
            announced = True
            continue
        if _SETTINGS_RE.match(stripped):
            result["settings"] = dict((key.lower(), int(value)) for key, value in _SETTING_RE.findall(stripped))
            continue
        row = _ROW_RE.match(stripped)
        if announced and row and result["level"] is None:
            result["level"] = int(row.group(1))
            result["description"] = " ".join(row.group(2).split()) or None
            continue
        result["lines"].append(stripped)
    _stderr(result, stderr)
    return result


def failed_steps(parsed):
    """The steps that did not finish (``Failed``, or no result at all)."""
    return [step for step in parsed.get("steps", []) if step["result"] not in STEP_OK]


def describe_steps(steps):
    """``Sending Reset Command To Fw: Done, Stopping Driver: Failed`` for messages."""
    if not steps:
        return "no step reported"
    return ", ".join("%s: %s" % (step["step"] or "(between steps)", step["result"] or "no result") for step in steps)


def classify_error(message):
    """Kind of one ``-E-`` message; ``other`` when not known."""
    text = str(message).strip()
    if text.startswith("-E-"):
        text = text[3:].strip()
    for regex, kind in _ERRORS:
        if regex.match(text):
            return kind
    return "other"


def error_kinds(parsed):
    return [classify_error(err) for err in parsed.get("errors", [])]


# ---------------------------------------------------------------- failures

LOCKDOWN_HELP = (
    "the kernel is locked down (%s): Secure Boot lockdown blocks the direct PCI access that %s needs, so it cannot open %s. "
    "Reboot the host instead to load the new firmware configuration, or lift the lockdown for the maintenance (disable "
    "Secure Boot in the firmware setup, or with 'mokutil --disable-validation', and reboot)"
)
SECURE_BOOT_HELP = (
    "%s refuses to run under UEFI Secure Boot (it resets the PCI link of %s through sysfs, which lockdown forbids): "
    "reboot the host instead to load the new firmware configuration"
)

_ADVICE = {
    "identify": "the tool does not know this RDMA device name; give the PCI address",
    "mst": "MFT's mlxfwreset maps devices through 'mst status -v': run 'mst start' (NVIDIA MFT), or use tool=mstfwreset",
    "not_root": "run the task with become: true",
    "livefish": "the device is in livefish (flash recovery) mode: burn its firmware first",
    "virtual_machine": "a firmware reset cannot be done from a virtual machine; reset the card from the hypervisor host",
    "unsupported_device": "the tool does not support this device; reboot the host instead",
    "multihost": "the card is shared by several hosts (multi-host) and the others did not join the reset in time; "
                 "reboot the hosts instead",
    "driver": "the tool cannot tell whether the driver is loaded: unload mlx5_core from every function of the card and "
              "use skip_driver: true, or reboot the host instead",
    "level_unsupported": "reboot the host instead",
    "unsupported": "reboot the host instead",
    "reset_failed": "the tool says: retry, or reboot the host. Check that the card's RDMA devices and netdevs are back "
                    "('rdma link', 'ip link') before retrying; a reboot loads the new configuration in any case",
    "aborted": "the tool asked for a confirmation; this module always passes -y, so this should not happen",
    "reboot": "the tool could not reboot the host; reboot it",
}


def explain_failure(tool, device, parsed, rc, stdout="", lockdown=None, functions=None, during_reset=False):
    """One sentence for a failed query or reset of ``device``: the tool's
    error translated, with what to do (lockdown, unknown device, driver...).
    ``during_reset``: an error the tool does not explain gets recovery advice."""
    errors = parsed.get("errors", [])
    kinds = error_kinds(parsed)
    said = "; ".join(errors)
    kind = kinds[0] if kinds else "other"
    if "reset_failed" in kinds:
        kind = "reset_failed"
    elif "driver" in kinds:
        kind = "driver"
    if kind == "secure_boot":
        return SECURE_BOOT_HELP % (tool, device) + " (%s)" % said
    if kind == "open" or (not errors and lockdown not in (None, "none")):
        if lockdown not in (None, "none"):
            return LOCKDOWN_HELP % (lockdown, tool, device)
        hints = []
        if str(device).startswith("/dev/mst/"):
            hints.append("MST device paths exist only after 'mst start' (NVIDIA MFT)")
        if functions is not None:
            hints.append(mlxcfg.describe_functions(functions))
        detail = ": " + "; ".join(hints) if hints else ""
        return "%s cannot open device %s (%s)%s" % (tool, device, said or "rc %s" % rc, detail)
    if kind in _ADVICE:
        return "%s failed on device %s (%s): %s" % (tool, device, said, _ADVICE[kind])
    lines = [line for line in parsed.get("lines", []) if line]
    detail = said or (lines[-1] if lines else None) or ((stdout or "").strip().splitlines() or ["no output"])[-1]
    msg = "%s failed on device %s (rc %s): %s" % (tool, device, rc, detail)
    if during_reset:
        msg += (" (the card may be left half reset: check that its RDMA devices and netdevs are back ('rdma link', "
                "'ip link'), and reboot the host to recover)")
    return msg


# ---------------------------------------------------------------- sysfs checks

def card_functions(tree, pci_address):
    """Physical functions of the card of ``pci_address`` (same domain, bus and
    device) that sysfs shows, sorted; empty when sysfs does not know the address."""
    card = sysfs_utils.card_address(pci_address)
    if card is None:
        return []
    out = []
    for bdf in tree.pci_functions():
        if sysfs_utils.card_address(bdf) != card:
            continue
        if tree.link_name("bus", "pci", "devices", bdf, "physfn"):
            continue
        out.append(bdf)
    return out


def functions_with_vfs(tree, functions):
    """``[(pci_address, sriov_numvfs)]`` of the functions that have VFs enabled."""
    out = []
    for bdf in functions:
        sriov = tree.pci_sriov(bdf)
        if sriov and (sriov.get("num_vfs") or 0) > 0:
            out.append((bdf, sriov["num_vfs"]))
    return out


def is_bluefield(tree, pci_address):
    """True/False from the PCI device id of a function, None when sysfs does not tell."""
    device_id = sysfs_utils.normalize_hex_id(tree.read("bus", "pci", "devices", pci_address, "device"))
    vendor_id = sysfs_utils.normalize_hex_id(tree.read("bus", "pci", "devices", pci_address, "vendor"))
    if device_id is None or vendor_id != sysfs_utils.MELLANOX_VENDOR_ID:
        return None
    return device_id in BLUEFIELD_DEVICE_IDS
