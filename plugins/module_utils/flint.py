# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""NVIDIA/Mellanox firmware burning tool: MFT's ``flint`` and mstflint's ``mstflint``.

Both take the same arguments and print the same text (mstflint ``flint/subcommands.cpp``):

- tool choice (``select_tool``): ``flint`` (MFT, opens MST device paths too) or ``mstflint``,
  the same rules as ``mlxconfig``/``mstconfig`` (``mlxconfig.choose_tool``);
- argv builders (``query_args``, ``image_query_args``, ``burn_args``), never command strings;
- parsers, pure functions on the tool's output returning plain dicts (``parse_query`` for a
  device or an image file, ``parse_burn``, ``classify_error``);
- firmware versions (``version_tuple``, ``compare_versions``, ``version_problem``) and PSIDs
  (``psid_problem``), for the checks the modules run before anything is written.

Query output: one ``Key:  value`` line per field, the key padded with blanks to column 23
(publishers squeeze or expand them, so any run of blanks or TABs separates key and value); a line
that starts with blanks continues the previous key (``Rom Info:``). ``FW Version:`` is the image on
the flash, the one the card runs after its next activation; ``FW Version(Running):`` is printed
only when the running firmware differs from it (a burnt image waits for a reboot or a firmware
reset). Old MFT builds print ``FW Version(Running):`` alone, without ``FW Version:``: that version
is then both the running and the flash one (the tool tells of no image waiting); a blank before the
parenthesis (``FW Version (Running):``) names the same field. ``Description:`` is the card's
description only in ``q full``; in the quick query it heads the GUID table (``UID  GuidsNumber`` on FS3 and later, ``Node  Port1 ...`` on FS2).
"""

from __future__ import annotations

import re

from ansible_collections.fabric.infiniband.plugins.module_utils import mlxconfig


# (MFT name, mstflint name): mlxconfig.choose_tool takes the pair
FLINT_TOOLS = ("flint", "mstflint")
TOOL_CHOICES = ("auto",) + FLINT_TOOLS

# the field names of the query, as printed, -> result keys
_FIELDS = {
    "image type": "image_type",
    "fw version": "flash_version",
    "fw version(running)": "running_version",
    "fw release date": "release_date",
    "product version": "product_version",
    "part number": "part_number",
    "description": "description",
    "psid": "psid",
    "orig psid": "orig_psid",
    "security attributes": "security_attributes",
    "security ver": "security_version",
    "device id": "device_id",
    "image vsd": "image_vsd",
    "device vsd": "device_vsd",
    "vsd": "vsd",
}
_KEY_RE = re.compile(r"^([A-Za-z][A-Za-z0-9 ./_-]*?(?:\(\s*[A-Za-z]+\s*\))?)\s*:\s*(.*)$")
# "FW Version (Running)", "FW Version( Running )" -> "FW Version(Running)": one name per field
_KEY_PAREN_RE = re.compile(r"\s*\(\s*([A-Za-z]+)\s*\)$")
# "Description:" of the quick query heads the GUID/MAC table, it is no description
_TABLE_HEADER_RE = re.compile(r"^(?:UID\s+GuidsNumber|Node\s+Port1)\b")
_VERSION_RE = re.compile(r"^([0-9]+)\.([0-9]+)\.([0-9]+)$")
_PSID_RE = re.compile(r"^[A-Za-z0-9_]+$")  # and at most PSID_LEN characters
PSID_LEN = 16
_BURN_VERSIONS_RE = re.compile(r"^(Current FW version on flash|New FW version)\s*:\s*(\S+)")

# -E- messages -> kind (mstflint err_msgs.h and psid_utils.cpp: before 4.36 "PSID mismatch. The PSID on
# flash (A) differs from the PSID in the given image (B).", from 4.36 "PSID mismatch. Device PSID (A)
# differs from image PSID (B)." and the minor-PSID variants)
_ERRORS = (
    (re.compile(r"PSID (?:header |major )?mismatch|PSIDs? (?:do|does) not match|Minor PSID is locked|"
                r"minor PSID .*reserved|allow_psid_change", re.I), "psid_mismatch"),
    (re.compile(r"^Cannot open Image|^Cannot open .*(?:No such file|Permission denied)", re.I), "image_open"),
    (re.compile(r"^Cannot open Device|^Failed to open (?:the )?device|^No such device|MFE_CR_ERROR", re.I), "open"),
    (re.compile(r"^Burning \S+ (?:image|pldm component) failed|^Burning FS\S* image failed|burn failed", re.I),
     "burn_failed"),
    (re.compile(r"^Aborted by user", re.I), "aborted"),
    (re.compile(r"^Please specify (?:Device|Image)|^Missing argument|^Unknown command|^Bad argument", re.I), "usage"),
)

ACTIVATIONS = ("firmware reset", "reboot", "power cycle")

# the tool option of the firmware modules (doc fragment fabric.infiniband.flint_tool)
TOOL_ARG_SPEC = dict(
    tool=dict(type="str", default="auto", choices=list(TOOL_CHOICES)),
)

PSID_RISK = (
    "burning an image of another PSID cross-flashes the card: an OEM card (Dell, HPE, Lenovo...) gets the "
    "firmware of another board, which may not match its hardware (ports, power, thermal limits) and may "
    "leave it unusable or unsupported by its vendor"
)


# ---------------------------------------------------------------- tools

def select_tool(module, choice, device=None):
    """``(name, path, None)`` or ``(None, None, why not)`` for the ``tool`` option: ``auto`` takes
    MFT's ``flint`` when it is installed and ``mstflint`` otherwise; only ``flint`` opens MST paths."""
    return mlxconfig.select_tool(module, choice, device, names=FLINT_TOOLS)


# ---------------------------------------------------------------- argv

def query_args(device, full=False):
    """Arguments of the query of a device (``full`` adds part number and description)."""
    args = ["-d", device, "q"]
    if full:
        args.append("full")
    return args


def image_query_args(image):
    """Arguments of the query of an image file."""
    return ["-i", image, "q"]


def burn_args(device, image, allow_psid_change=False):
    """Arguments of one non-interactive burn; ``--allow_psid_change`` only when asked for."""
    args = ["-d", device, "-i", image, "-y"]
    if allow_psid_change is True:
        args.append("--allow_psid_change")
    args.append("burn")
    return args


# ---------------------------------------------------------------- versions and PSIDs

def version_tuple(text):
    """``16.35.3006`` -> ``(16, 35, 3006)``; None when ``text`` is not a firmware version."""
    if not isinstance(text, str):
        return None
    match = _VERSION_RE.match(text.strip())
    return tuple(int(part) for part in match.groups()) if match else None


def compare_versions(left, right):
    """-1, 0 or 1 as ``left`` is older than, the same as or newer than ``right`` (numeric per field,
    so ``16.35.3006`` is newer than ``16.9.9999``); ValueError when one is not a version."""
    a, b = version_tuple(left), version_tuple(right)
    if a is None or b is None:
        raise ValueError("not a firmware version: %r" % (left if a is None else right))
    return (a > b) - (a < b)


def version_problem(value, name):
    """Why ``value`` (of the variable or option ``name``) is not a firmware version, or None."""
    if isinstance(value, str) and version_tuple(value):
        return None
    if isinstance(value, float):
        return ("%s: %r is a number, not a firmware version: YAML reads an unquoted 16.35 as a number; give the "
                "three fields flint prints, quoted, for example \"16.35.3006\"" % (name, value))
    return ("%s: %r is not a firmware version: give three numbers separated by dots, as flint and mstflint print "
            "them, for example \"16.35.3006\"" % (name, value))


def psid_problem(value, name):
    """Why ``value`` (of ``name``) is not a PSID (``MT_0000000223``, ``DEL0000000004``), or None."""
    if isinstance(value, str) and _PSID_RE.match(value.strip()) and len(value.strip()) <= PSID_LEN:
        return None
    return ("%s: %r is not a PSID: give the board's PSID as flint prints it, up to 16 letters, digits or '_', "
            "for example \"MT_0000000223\"" % (name, value))


# ---------------------------------------------------------------- parsers

def _lines(text):
    """Lines of an output with CRLF, progress carriage returns, TABs and trailing blanks undone."""
    out = []
    for raw in (text or "").replace("\r\n", "\n").split("\n"):
        line = raw.rsplit("\r", 1)[-1] if "\r" in raw else raw
        out.append(line.expandtabs(8).rstrip())
    return out


def _message(line):
    """``(level, text)`` of a ``-E-``/``-W-``/``-I-`` line, or None."""
    text = line.strip()
    for level, mark in (("error", "-E-"), ("warning", "-W-"), ("info", "-I-")):
        # a progress line without its newline may precede the mark ("... -  37%-E- Burning ...")
        at = text.find(mark)
        if at == 0 or (at > 0 and level == "error"):
            return level, text[at + len(mark):].strip()
    return None


def parse_query(stdout, stderr=""):
    """The query of a device or an image file -> dict.

    Keys: ``image_type``, ``flash_version`` (``FW Version:``; the running one when an old MFT build
    printed only that), ``running_version`` (the running one: ``FW Version(Running):`` when printed,
    else the flash one), ``pending_version`` (the flash one when it differs from the running one, else
    None), ``psid``, ``orig_psid``, ``part_number``,
    ``description``, ``product_version``, ``release_date``, ``security_attributes`` (list),
    ``security_version``, ``fields`` (every ``Key: value`` as printed, continuation lines joined with
    ``\\n``), ``errors``, ``warnings``.
    """
    fields = {}
    errors, warnings = [], []
    last = None
    for line in _lines(stdout) + _lines(stderr):
        if not line.strip():
            last = None
            continue
        message = _message(line)
        if message:
            level, text = message
            if level == "error":
                errors.append(text)
            elif level == "warning":
                warnings.append(text)
            last = None
            continue
        if line[0] in " \t" and last is not None:
            fields[last] = (fields[last] + "\n" + line.strip()).strip()
            continue
        match = _KEY_RE.match(line.strip())
        if match:
            last = _KEY_PAREN_RE.sub(r"(\1)", re.sub(r"\s+", " ", match.group(1).strip()))
            value = (match.group(2) or "").strip()
            if last == "Description" and _TABLE_HEADER_RE.match(value):
                last = "Description (GUID table)"  # "q full" prints the card's Description: before it
            fields[last] = value
        else:
            last = None
    out = dict((key, None) for key in _FIELDS.values())
    for name, value in fields.items():
        key = _FIELDS.get(name.lower())
        if key:
            out[key] = value if value not in ("", "N/A") else None
    attributes = out["security_attributes"]
    out["security_attributes"] = [a.strip() for a in attributes.split(",") if a.strip()] if attributes else []
    # old MFT builds print only "FW Version(Running):" (issue 33): the flash holds what the card runs as
    # far as the tool tells, nothing is known to wait
    flash = out["flash_version"] or out["running_version"]
    out["flash_version"] = flash
    running = out["running_version"] or flash
    out["running_version"] = running
    out["pending_version"] = flash if flash and running and flash != running else None
    out["fields"] = fields
    out["errors"] = errors
    out["warnings"] = warnings
    return out


def image_error(rc, parsed):
    """Why an image query (``-i <image> q``, parsed with parse_query) did not read an image, or None."""
    if rc != 0 or parsed["errors"] or not version_tuple(parsed["flash_version"] or "") or not parsed["psid"]:
        return "; ".join(parsed["errors"]) or "no firmware version or PSID in the output"
    return None


def image_mismatches(parsed, version=None, psid=None):
    """``[(what, wanted, found)]`` for the image's ``version`` and ``psid`` (what an entry says it holds) that differ from
    what its query read (``parse_query``); a value not given is not compared. Case and blanks do not count."""
    out = []
    for what, wanted, found in (("version", version, parsed.get("flash_version")), ("psid", psid, parsed.get("psid"))):
        if wanted and str(wanted).strip().upper() != str(found).strip().upper():
            out.append((what, wanted, found))
    return out


def parse_burn(stdout, stderr=""):
    """A burn's output -> ``{current_version, new_version, errors, warnings, infos, done, activation,
    activation_message, skipped}``.

    ``done`` is True when the tool reported the image written (``Restoring signature - OK``, a
    component ``- OK`` line of the firmware-controlled update, or the ``-I- To load new FW`` line);
    ``activation`` is what the tool says activates the image (``activation_from_message``).
    """
    out = {"current_version": None, "new_version": None, "errors": [], "warnings": [], "infos": [],
           "done": False, "activation": None, "activation_message": None, "skipped": False}
    for line in _lines(stdout) + _lines(stderr):
        text = line.strip()
        if not text:
            continue
        message = _message(text)
        if message:
            level, body = message
            out[{"error": "errors", "warning": "warnings", "info": "infos"}[level]].append(body)
            if level == "info" and "load new fw" in body.lower():
                out["done"] = True
                out["activation_message"] = body
                out["activation"] = activation_from_message(body)
            continue
        match = _BURN_VERSIONS_RE.match(text)
        if match:
            key = "current_version" if match.group(1).startswith("Current") else "new_version"
            out[key] = None if match.group(2) == "N/A" else match.group(2)
            continue
        if re.match(r"^Restoring signature\s+- OK$", text) or re.match(r"^Writing .*component\s+-\s+OK$", text):
            out["done"] = True
        if text.startswith("Skipping burn because firmware versions match"):
            out["skipped"] = True
    if out["errors"]:
        out["done"] = False
    return out


def activation_from_message(text):
    """What activates a burnt image according to the tool's ``-I-`` line: ``firmware reset`` when it
    names mlxfwreset/mstfwreset, ``power cycle`` when it asks for one, ``reboot`` otherwise."""
    lower = str(text or "").lower()
    if "power cycle" in lower or "cold reboot" in lower:
        return "power cycle"
    if "fwreset" in lower:
        return "firmware reset"
    return "reboot"


def classify_error(message):
    """Kind of one ``-E-`` message: ``psid_mismatch``, ``open``, ``image_open``, ``burn_failed``,
    ``aborted``, ``usage`` or ``other``."""
    text = str(message).strip()
    if text.startswith("-E-"):
        text = text[3:].strip()
    for regex, kind in _ERRORS:
        if regex.search(text):
            return kind
    return "other"


def explain_failure(tool, device, errors, rc, stdout="", lockdown=None, image=None):
    """One sentence for a failed query or burn: the tool's error translated, with what to do."""
    kinds = [classify_error(err) for err in errors]
    kind = kinds[0] if kinds else "other"
    said = "; ".join(errors)
    if kind == "open" or (not errors and lockdown not in (None, "none")):
        if lockdown not in (None, "none"):
            return mlxconfig.LOCKDOWN_HELP.replace("mlxconfig and mstconfig", "flint and mstflint") % (
                lockdown, tool, device)
        hint = ": MST device paths exist only after 'mst start' (NVIDIA MFT)" if str(device).startswith("/dev/mst/") else ""
        return "%s cannot open device %s (%s)%s" % (tool, device, said or "rc %s" % rc, hint)
    if kind == "image_open":
        return "%s cannot read the image %s (%s)" % (tool, image, said)
    if kind == "psid_mismatch":
        return "%s refused to burn %s on device %s: %s" % (tool, image, device, said)
    if kind == "burn_failed":
        return ("burning %s on device %s failed (%s): the flash keeps the image it had, the card runs its old "
                "firmware; run again to retry" % (image, device, said))
    detail = said or ([ln for ln in (stdout or "").strip().splitlines() if ln.strip()][-1:] or ["no output"])[0]
    return "%s failed on device %s (rc %s): %s" % (tool, device, rc, detail)
