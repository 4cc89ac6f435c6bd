# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""NVIDIA/Mellanox firmware configuration tools.

Two flavours ship the same user interface under different names: MFT
(``mlxconfig``, ``mlxfwreset``, ``mst``; closed source, also in DOCA-OFED)
and mstflint (``mstconfig``, ``mstfwreset``; open source, in the distros).

This file holds, for ``mlxconfig``/``mstconfig``:

- tool detection (``find_tools``, ``select_tool``);
- argv builders (``query_args``, ``set_args``), never command strings;
- parsers, pure functions on the tool's output returning plain dicts
  (``parse_query``, ``parse_query_json``, ``parse_set``, ``parse_value``,
  ``classify_error``);
- the comparator (``desired_value``, ``value_matches``, ``decide``) and the
  checks the modules run before any write (``bluefield_mode``,
  ``is_per_card``, ``first_function``).

The table parser does not depend on column widths, which changed with every
release (G1 <= 4.21, G2 4.22-4.24, G3 4.25, G4 4.26-4.30.0, G5 MFT 4.30.1 and
mstflint 4.31 to 4.35, G6 4.36+; MFT 4.30.1 already prints the G5 widths, which
mstflint took over in 4.31) and which publishers squeeze: parameter names and
values never contain blanks, so a row is split on whitespace. The only place
where whitespace is missing is a value exactly as wide as its column in G1-G3
(the tool adds a separating blank only to wider values); such ``NAME(n)``
values are split after their ``)``. The column widths are still used to name
the generation (``layout``), which tells whether the tool prints an ``RO``
column at all (G3 and later).

Releases before 2018 (mstflint up to 4.8, MFT up to 4.8) print the G1 widths
with another device header: ``PCI device:`` where later ones print ``Device:``,
and no ``Name:`` nor ``Description:`` line (mstflint tag v4.8.0-2,
``mlxconfig/mlxcfg_ui.cpp`` ``printOpening``; changed in v4.9.0-1). Any other
``Words: value`` header line is kept in ``lines``, never taken for a row.
"""

from __future__ import annotations

import difflib
import json
import re

from ansible_collections.fabric.infiniband.plugins.module_utils import pci
from ansible_collections.fabric.infiniband.plugins.module_utils._runner import find_tool
from ansible_collections.fabric.infiniband.plugins.module_utils.sysfs import PCI_MODELS, normalize_hex_id


FLAVOURS = {
    "mft": ("mlxconfig", "mlxfwreset", "mst"),
    "mstflint": ("mstconfig", "mstfwreset"),
}
# the tool whose presence makes a flavour count as installed
CONFIG_TOOL = {"mft": "mlxconfig", "mstflint": "mstconfig"}

# ``tool`` option: auto prefers MFT's mlxconfig when both are installed
TOOL_CHOICES = ("auto", "mlxconfig", "mstconfig")
# (MFT name, mstflint name) of one tool; choose_tool/select_tool take either pair
CONFIG_TOOLS = ("mlxconfig", "mstconfig")
RESET_TOOLS = ("mlxfwreset", "mstfwreset")
TOOL_PACKAGES = {
    "mlxconfig": "NVIDIA MFT (or the mft package of DOCA-OFED)",
    "mstconfig": "mstflint",
    "mlxfwreset": "NVIDIA MFT (or the mft package of DOCA-OFED)",
    "mstfwreset": "mstflint",
    "flint": "NVIDIA MFT (or the mft package of DOCA-OFED)",
    "mstflint": "mstflint",
}

# Parameters kept once per card whatever function they are read through: the
# SR-IOV switches and every parameter that names its port (``*_P1``, ``*_P2``).
PER_CARD_PARAMS = frozenset(("NUM_OF_VFS", "SRIOV_EN", "NUM_OF_PF"))
_PORT_PARAM_RE = re.compile(r"^[A-Z0-9_]+_P[0-9]+$")

# Enumerations whose every value is known, so that a name missing from the
# query can be refused before writing. Other enums accept any name the query
# shows, and leave names it does not show to the tool.
BOOL_VALUES = (("False", 0), ("True", 1))
_LINK_TYPE_VALUES = (("IB", 1), ("ETH", 2))
# ConnectX-3 also offers VPI(3); accepted only where the query shows it
_LINK_TYPE_VPI = ("VPI", 3)
_LINK_TYPE_RE = re.compile(r"^LINK_TYPE_P[0-9]+$")

# Well-known parameter names: when one of them is missing from a device's
# query, the device does not support it (rather than the name being wrong).
KNOWN_PARAMS = frozenset((
    "LINK_TYPE_P1", "LINK_TYPE_P2", "SRIOV_EN", "NUM_OF_VFS", "NUM_OF_PF", "SRIOV_IB_ROUTING_MODE_P1",
    "SRIOV_IB_ROUTING_MODE_P2", "IB_ROUTING_MODE_P1", "IB_ROUTING_MODE_P2", "KEEP_IB_LINK_UP_P1", "KEEP_IB_LINK_UP_P2",
    "NUM_OF_VL_P1", "NUM_OF_VL_P2", "VL15_BUFFER_SIZE_P1", "VL15_BUFFER_SIZE_P2", "BOOT_PKEY", "ROCE_CONTROL",
    "INTERNAL_CPU_MODEL", "INTERNAL_CPU_OFFLOAD_ENGINE", "INTERNAL_CPU_PAGE_SUPPLIER", "INTERNAL_CPU_ESWITCH_MANAGER",
    "INTERNAL_CPU_IB_VPORT0", "PF_TOTAL_SF", "PF_BAR2_ENABLE", "ADVANCED_PCI_SETTINGS", "MPFS_UC_LOOPBACK_DISABLE_P1",
    "MPFS_UC_LOOPBACK_DISABLE_P2", "ROCE_CC_LEGACY_DCQCN", "MAX_ACC_OUT_READ", "PCI_ATOMIC_MODE", "MULTI_PORT_VHCA_EN",
))

# BlueField mode parameters (sriov-network-operator GetMellanoxBlueFieldMode)
BF_MODEL = "INTERNAL_CPU_MODEL"
BF_OFFLOAD = "INTERNAL_CPU_OFFLOAD_ENGINE"
BF_ECPF_PARAMS = ("INTERNAL_CPU_PAGE_SUPPLIER", "INTERNAL_CPU_ESWITCH_MANAGER", "INTERNAL_CPU_IB_VPORT0")
BF_PARAMS = (BF_MODEL, BF_OFFLOAD) + BF_ECPF_PARAMS

# table columns: header title -> key
COLUMNS = (("Default", "default"), ("Current", "current"), ("Next Boot", "next_boot"), ("New", "new"))
VALUE_COLUMNS = ("default", "current", "next_boot")

# Where "Next Boot" ends in the Configurations: header, counted from the start
# of "Configurations:", per generation; G2 and G3 share their header.
_HEADER_NEXT_END = {
    (True, 86): "G1", (True, 94): "G2/G3", (True, 103): "G4", (True, 102): "G5", (True, 133): "G6",
    (False, 54): "G1", (False, 62): "G2/G3", (False, 61): "G4", (False, 66): "G5", (False, 65): "G6",
}
# Generations that print the RO column.
RO_LAYOUTS = frozenset(("G3", "G4", "G5", "G6"))

_PARAM_NAME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_]*(?:\[[0-9]+(?:\.\.[0-9]+)?\])?$")
_ROW_NAME_RE = re.compile(r"^[A-Z][A-Za-z0-9_]*(?:\[[0-9]+\])?$")
_VALUE_TOKEN_RE = re.compile(r"[^\s()]*\([^()\s]*\)|\S+")
_ENUM_RE = re.compile(r"^(.*)\((-?[0-9]+)\)$")
_ARRAY_RE = re.compile(r"^Array\[([0-9]+)\.\.([0-9]+)\]$")
_INT_RE = re.compile(r"^-?[0-9]+$")
_HEX_RE = re.compile(r"^0[xX][0-9a-fA-F]+$")
_IDENT_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_DEVICE_NO_RE = re.compile(r"^Device #([0-9]+):$")
_LABEL_RE = re.compile(r"^([A-Z][A-Za-z ]*[a-z]):(?:\s+(.*))?$")
# "PCI device:" is the device line of mstflint and MFT before 4.9 (2018), which print no Name: nor Description:
_LABELS = {"device type": "device_type", "name": "name", "description": "description", "device": "device",
           "pci device": "device"}
_MST_FUNCTION_RE = re.compile(r"^(/dev/mst/[^/]+)\.([0-9]+)$")
_TRUE_WORDS = ("true", "yes", "on", "1")
_FALSE_WORDS = ("false", "no", "off", "0")

# -E- messages -> kind, with the parameter (or TLV) named in the message
_ERRORS = (
    (re.compile(r"^Failed to open (?:the )?device", re.I), "open"),
    (re.compile(r"^Cannot open Device", re.I), "open"),
    (re.compile(r"^Failed to identify the device", re.I), "identify"),
    (re.compile(r"^Device in Livefish mode", re.I), "livefish"),
    (re.compile(r"^Unsupported device", re.I), "unsupported_device"),
    (re.compile(r"^MTUSB device is not supported", re.I), "unsupported_device"),
    (re.compile(r"^The Device doesn't support (?P<param>\S+) parameter", re.I), "unsupported_param"),
    (re.compile(r"^Unknown Parameter:? (?P<param>\S+)", re.I), "unknown_param"),
    (re.compile(r"^Operation is not supported \(Read only TLV: (?P<param>[^)]+)\)", re.I), "read_only"),
    (re.compile(r"^Device doesn't support any configuration changes", re.I), "no_config"),
    (re.compile(r"^Cannot set the value \S+ for the parameter (?P<param>[^:\s]+)", re.I), "invalid_value"),
    (re.compile(r"^No devices found", re.I), "no_devices"),
    (re.compile(r"^Aborted by user", re.I), "aborted"),
    (re.compile(r"^(?:missing device name|invalid argument|No command found|Invalid Configuration argument"
                r"|Duplicate parameter|missing configuration arguments)", re.I), "usage"),
    (re.compile(r"^Error when trying to check if NV access registers are supported", re.I), "nv_access"),
    (re.compile(r"^Json format is only supported", re.I), "usage"),
)


# ---------------------------------------------------------------- tools

def flavour_name(paths):
    """``mft``, ``mstflint``, ``both`` or ``none`` from the result of ``find_tools``."""
    installed = [name for name in ("mft", "mstflint") if paths[name].get(CONFIG_TOOL[name])]
    if len(installed) == 2:
        return "both"
    return installed[0] if installed else "none"


def find_tools(module):
    """Paths of every firmware tool (None when missing) and the flavour."""
    result = {}
    for name, tools in FLAVOURS.items():
        result[name] = dict((tool, find_tool(module, tool)) for tool in tools)
    result["flavour"] = flavour_name(result)
    return result


def choose_tool(choice, installed, device=None, names=CONFIG_TOOLS):
    """Which tool to run: ``(name, None)`` or ``(None, why not)``.

    ``names`` is the (MFT, mstflint) pair of one tool: ``CONFIG_TOOLS``
    (``mlxconfig``/``mstconfig``, the default) or ``RESET_TOOLS``
    (``mlxfwreset``/``mstfwreset``); ``installed`` maps both to their path
    (or None). ``auto`` prefers the MFT tool, the only one that opens MST
    device paths, and takes the mstflint one otherwise.
    """
    mft, mstflint = names
    choices = ("auto",) + tuple(names)
    mst = bool(device) and str(device).startswith("/dev/mst/")
    if choice not in choices + (None,):
        return None, "tool=%s is not one of %s" % (choice, ", ".join(choices))
    if choice in (None, "auto"):
        for name in names:
            if installed.get(name):
                if mst and name == mstflint:
                    return None, ("device %s is an MST device path, which only MFT's %s opens (after 'mst start'); "
                                  "mstflint's %s is installed: give the PCI address instead" % (device, mft, mstflint))
                return name, None
        return None, ("neither %s (%s) nor %s (%s) is installed"
                      % (mft, TOOL_PACKAGES[mft], mstflint, TOOL_PACKAGES[mstflint]))
    if not installed.get(choice):
        return None, "tool=%s but %s is not installed (package: %s)" % (choice, choice, TOOL_PACKAGES[choice])
    if mst and choice == mstflint:
        return None, ("device %s is an MST device path, which mstflint's %s cannot open: give the PCI address, "
                      "or use tool=%s (MFT, after 'mst start')" % (device, mstflint, mft))
    return choice, None


def select_tool(module, choice, device=None, names=CONFIG_TOOLS):
    """``(name, path, None)`` or ``(None, None, why not)`` for the ``tool`` option (see ``choose_tool``)."""
    installed = dict((name, find_tool(module, name)) for name in names)
    name, problem = choose_tool(choice, installed, device, names)
    return name, installed.get(name) if name else None, problem


# ---------------------------------------------------------------- argv

def query_args(device=None, params=None, verbose=True):
    """Arguments (after the tool path) of a query; without ``device`` every device."""
    args = []
    if device:
        args.extend(["-d", device])
    if verbose:
        args.append("-e")
    args.append("q")
    args.extend(params or [])
    return args


def set_args(device, assignments):
    """Arguments of one non-interactive ``set``; ``assignments`` is a list of (name, value)."""
    args = ["-d", device, "-y", "set"]
    args.extend("%s=%s" % (name, value) for name, value in assignments)
    return args


# ---------------------------------------------------------------- addresses

def normalize_pci_address(text):
    """``3b:00.0``/``0000:3B:00.0`` -> ``0000:3b:00.0``; None when not a PCI address."""
    return pci.normalize(text)


def device_problem(device):
    """Why the ``device`` option of a module cannot name a device, or None: empty, an option, a
    number (YAML's base-60 reading of an unquoted address) or a text with a colon that is no PCI
    address (see ``pci.bad_address``)."""
    text = str(device if device is not None else "").strip()
    if not text or text.startswith("-"):
        return "device %r is not a device: give a PCI address, an MST device path or an RDMA device name" % device
    if pci.base60_text(text) is not None or (":" in text and not text.startswith("/") and pci.parse(text) is None):
        return pci.bad_address(device, "device")
    return None


def first_function(device, pci_address=None):
    """The device that addresses function 0 of the same card, or None when ``device`` already does
    (or nothing tells): ``0000:3b:00.1`` -> ``0000:3b:00.0``, ``/dev/mst/mt4123_pciconf0.1`` ->
    ``/dev/mst/mt4123_pciconf0``; an RDMA name resolved to ``pci_address`` -> that address's .0."""
    match = _MST_FUNCTION_RE.match(str(device))
    if match:
        return match.group(1) if match.group(2) != "0" else None
    address = normalize_pci_address(device) or normalize_pci_address(pci_address)
    if address and not address.endswith(".0"):
        return pci.first_function(address)
    return None


def is_per_card(name):
    """Whether a parameter is kept once per card (written through function 0 of a multi-function card)."""
    name = str(name).upper()
    return name in PER_CARD_PARAMS or bool(_PORT_PARAM_RE.match(name))


def is_param_name(name):
    """Whether ``name`` is spelled like a parameter (``LINK_TYPE_P1``, ``ARRAY[0..7]``)."""
    return bool(_PARAM_NAME_RE.match(str(name)))


def is_array_element(name):
    return "[" in str(name)


# ---------------------------------------------------------------- values

def _int(text):
    if _INT_RE.match(text):
        return int(text)
    if _HEX_RE.match(text):
        return int(text, 16)
    return None


def parse_value(text):
    """One printed value -> ``{text, type, name, number}`` (None for None).

    ``IB(1)`` -> enum IB/1, ``True(1)`` -> bool True/1, ``8`` -> number 8,
    ``Array[0..7]`` -> array (``length`` 8), ``ETH`` (no number, as some
    fixtures print) -> enum ETH/None, anything else -> string.
    """
    if text is None:
        return None
    text = str(text).strip()
    out = {"text": text, "type": "string", "name": None, "number": None}
    match = _ARRAY_RE.match(text)
    if match:
        out.update(type="array", length=int(match.group(2)) - int(match.group(1)) + 1)
        return out
    match = _ENUM_RE.match(text)
    if match and match.group(1):
        name = match.group(1)
        out.update(name=name, number=int(match.group(2)))
        out["type"] = "bool" if name.lower() in ("true", "false") else "enum"
        return out
    number = _int(text)
    if number is not None:
        out.update(type="number", number=number)
        return out
    if text.lower() in ("true", "false"):
        out.update(type="bool", name=text, number=1 if text.lower() == "true" else 0)
    elif _IDENT_RE.match(text):
        out.update(type="enum", name=text)
    return out


def builtin_values(name):
    """(name, number) pairs every value of a parameter is among, or None when not known here."""
    if _LINK_TYPE_RE.match(str(name).upper()):
        return _LINK_TYPE_VALUES + (_LINK_TYPE_VPI,)
    return None


def _fill_number(param, value):
    """``ETH`` printed without its number gets it from the known enumeration."""
    if value and value["number"] is None and value["name"]:
        for vname, number in builtin_values(param) or ():
            if vname.lower() == value["name"].lower():
                value = dict(value, number=number)
    return value


def param_entry(name, values, marked=None, ro=None, ro_known=False, verbose=True):
    """Result entry of one parameter from its printed values (a dict column -> text)."""
    parsed = dict((col, _fill_number(name, parse_value(values.get(col)))) for col in VALUE_COLUMNS)
    kinds = [p["type"] for p in (parsed["next_boot"], parsed["current"], parsed["default"]) if p]
    entry = {col: values.get(col) for col in VALUE_COLUMNS}
    if ro:
        entry["read_only"] = True
    else:
        entry["read_only"] = False if ro_known else None
    entry["modified"] = bool(marked) if verbose else None
    entry["type"] = kinds[0] if kinds else None
    for col in VALUE_COLUMNS:
        entry["%s_name" % col] = parsed[col]["name"] if parsed[col] else None
        entry["%s_number" % col] = parsed[col]["number"] if parsed[col] else None
    if entry["type"] == "array":
        entry["length"] = parsed["next_boot"]["length"] if parsed["next_boot"] else None
    cur, nxt = parsed["current"], parsed["next_boot"]
    entry["pending"] = None if cur is None or nxt is None else not _same(cur, nxt)
    return entry


def _same(left, right):
    if left["number"] is not None and right["number"] is not None:
        return left["number"] == right["number"]
    if left["name"] and right["name"]:
        return left["name"].lower() == right["name"].lower()
    return left["text"].lower() == right["text"].lower()


# ---------------------------------------------------------------- text parser

def _new_device(index=None):
    return {
        "index": index, "device": None, "device_type": None, "name": None, "description": None,
        "columns": None, "layout": None, "params": {}, "errors": [], "unparsed": [],
        "_header_at": None, "_header_next_end": None, "_header_verbose": None, "_rows": [], "_row_data": [],
    }


def _header_columns(line):
    """Column keys of a ``Configurations:`` header and where "Next Boot" ends."""
    start = line.find("Configurations:")
    found = []
    for title, key in COLUMNS:
        pos = line.find(title, start)
        if pos >= 0:
            found.append((pos, key, pos + len(title) - start))
    found.sort()
    next_end = [end for _pos, key, end in found if key == "next_boot"]
    return [key for _pos, key, _end in found], (next_end[0] if next_end else None), start


def _split_row(line):
    """``(marked, ro, name, values, name_column)`` of a table row, None for any other line."""
    text = line.rstrip()
    body = text.lstrip()
    marked = body.startswith("*")
    if marked:
        body = body[1:]
    ro = False
    stripped = body.lstrip()
    if stripped.startswith("RO") and len(stripped) > 2 and stripped[2] in " \t":
        ro = True
        stripped = stripped[2:].lstrip()
    parts = stripped.split(None, 1)
    if len(parts) != 2:
        return None
    name, rest = parts
    if not _ROW_NAME_RE.match(name) or not ("_" in name or name.upper() == name):
        return None
    values = _VALUE_TOKEN_RE.findall(rest)
    if not values:
        return None
    return marked, ro, name, values, len(text) - len(stripped)


def _infer_columns(count, default_columns):
    for columns in default_columns:
        if len(columns) == count:
            return list(columns)
    return None


def _layout(dev):
    end, verbose = dev["_header_next_end"], dev["_header_verbose"]
    if end is None:
        return None
    layout = _HEADER_NEXT_END.get((verbose, end))
    if layout != "G2/G3":
        return layout
    # G3 added the 2-character RO column: names start one column further left
    offsets = set(col - dev["_header_at"] for col in dev["_rows"])
    if offsets == {8}:
        return "G3"
    if offsets == {9}:
        return "G2"
    return None


def _finish(dev, default_columns):
    layout = _layout(dev)
    dev["layout"] = layout
    ro_seen = any(row[1] for row in dev["_row_data"])
    ro_known = ro_seen or layout in RO_LAYOUTS
    columns = dev["columns"]
    for marked, ro, name, values, _col in dev["_row_data"]:
        cols = columns or _infer_columns(len(values), default_columns)
        if cols and len(values) != len(cols):
            cols = None
        if not cols:
            dev["unparsed"].append(name)
            continue
        mapped = dict(zip(cols, values))
        verbose = "default" in cols or "current" in cols
        entry = param_entry(name, mapped, marked, ro, ro_known, verbose)
        if "new" in mapped:
            entry["new"] = mapped["new"]
        dev["params"][name] = entry
    for key in ("_header_at", "_header_next_end", "_header_verbose", "_rows", "_row_data"):
        dev.pop(key, None)
    if dev["columns"] is None and dev["params"]:
        first = next(iter(dev["params"].values()))
        dev["columns"] = [col for col in VALUE_COLUMNS + ("new",) if col in first and first[col] is not None]
    return dev


def _message(line):
    return line.strip()[3:].strip()


def parse_table(stdout, stderr="", default_columns=(("next_boot",), ("default", "current", "next_boot"))):
    """Parse the device blocks of a ``query`` or ``set`` output.

    Returns ``{devices: [...], errors: [...], infos: [...], warnings: [...], lines: [...]}``:
    ``errors`` are the ``-E-`` messages printed outside a device block and on
    stderr, ``infos``/``warnings`` the ``-I-``/``-W-`` messages, ``lines`` the
    other lines no table row accounts for (prompts, ``Applying... Done!``).
    Each device has ``index``, ``device``, ``device_type``, ``name``,
    ``description`` (None when not printed or ``N/A``), ``columns``,
    ``layout`` (``G1``..``G6`` or None when the widths do not tell),
    ``params`` (name -> entry, in the tool's order), its own ``errors`` (an
    error printed after its headers) and ``unparsed`` (rows whose values
    could not be assigned to columns).
    """
    result = {"devices": [], "errors": [], "infos": [], "warnings": [], "lines": []}
    dev = None
    after_error = False
    for raw in (stdout or "").splitlines():
        line = raw.expandtabs(8)
        stripped = line.strip()
        if not stripped:
            continue
        if stripped.startswith(("-E-", "-I-", "-W-")):
            kind = {"-E-": "errors", "-I-": "infos", "-W-": "warnings"}[stripped[:3]]
            if kind == "errors" and dev is not None:
                dev["errors"].append(_message(stripped))
                after_error = True
            elif kind == "errors":
                result["errors"].append(_message(stripped))
                after_error = True
            else:
                result[kind].append(_message(stripped))
            continue
        match = _DEVICE_NO_RE.match(stripped)
        if match:
            dev = _new_device(int(match.group(1)))
            result["devices"].append(dev)
            after_error = False
            continue
        if stripped.startswith("---") or stripped.startswith("The '") or stripped.startswith("#"):
            continue
        if stripped.startswith("Configurations:"):
            if dev is None:
                dev = _new_device()
                result["devices"].append(dev)
            columns, next_end, at = _header_columns(line)
            dev["columns"] = columns or None
            dev["_header_at"] = at
            dev["_header_next_end"] = next_end
            dev["_header_verbose"] = "default" in columns
            continue
        match = _LABEL_RE.match(stripped)
        if match and match.group(1).lower() in _LABELS:
            if dev is None:
                dev = _new_device()
                result["devices"].append(dev)
            value = (match.group(2) or "").strip()
            dev[_LABELS[match.group(1).lower()]] = value if value and value != "N/A" else None
            continue
        if match:
            # a header line this parser does not know ("Words: value"): never a parameter row
            result["lines"].append(stripped)
            continue
        row = None if after_error else _split_row(line)
        if row is None:
            result["lines"].append(stripped)
            continue
        if dev is None:
            dev = _new_device()
            result["devices"].append(dev)
        dev["_row_data"].append(row)
        dev["_rows"].append(row[4])
    for dev in result["devices"]:
        _finish(dev, default_columns)
    for raw in (stderr or "").splitlines():
        stripped = raw.strip()
        if stripped.startswith("-E-"):
            result["errors"].append(_message(stripped))
        elif stripped.startswith("-W-"):
            result["warnings"].append(_message(stripped))
        elif stripped.startswith("-I-"):
            result["infos"].append(_message(stripped))
        elif stripped:
            result["lines"].append(stripped)
    return result


def parse_query(stdout, stderr=""):
    """Parse the output of ``q``/``query`` (with or without ``-e``); see ``parse_table``."""
    return parse_table(stdout, stderr)


def parse_set(stdout, stderr=""):
    """Parse the output of ``set``: the table (columns ``next_boot``, ``new``), and

    - ``applied``: True after ``Applying... Done!``, False after ``Failed!``, None if not reached;
    - ``aborted``: the prompt was answered no;
    - ``load``: ``reboot`` (``-I- Please reboot machine ...``), ``power_cycle``
      (``-I- Please power cycle machine ...``) or None;
    - ``skipped_reset_preparation``: ``-I- Skipped reset preparation``.

    The table shows what the tool was asked, not the state: re-query after a set.
    """
    result = parse_table(stdout, stderr, default_columns=(("next_boot", "new"), ("default", "current", "next_boot", "new")))
    result["applied"] = None
    for line in result["lines"]:
        if line.startswith("Applying..."):
            if "Done" in line:
                result["applied"] = True
            elif "Failed" in line:
                result["applied"] = False
    result["aborted"] = any(classify_error(msg)[0] == "aborted" for msg in all_errors(result))
    result["load"] = None
    result["skipped_reset_preparation"] = False
    for info in result["infos"]:
        low = info.lower()
        if "power cycle" in low:
            result["load"] = "power_cycle"
        elif "reboot" in low and result["load"] is None:
            result["load"] = "reboot"
        elif "skipped reset preparation" in low:
            result["skipped_reset_preparation"] = True
    return result


def all_errors(parsed):
    """Every ``-E-`` message of a parse result, device ones first."""
    errors = []
    for dev in parsed.get("devices", []):
        errors.extend(dev["errors"])
    errors.extend(parsed.get("errors", []))
    return errors


def classify_error(message):
    """``(kind, parameter)`` of one ``-E-`` message; kind ``other`` when not known."""
    text = str(message).strip()
    if text.startswith("-E-"):
        text = text[3:].strip()
    for regex, kind in _ERRORS:
        match = regex.match(text)
        if match:
            return kind, match.groupdict().get("param")
    return "other", None


# ---------------------------------------------------------------- JSON parser

def _json_text(value):
    if value is None:
        return None
    if isinstance(value, bool):
        return "True(1)" if value else "False(0)"
    return str(value)


def parse_query_json(text):
    """Parse the file ``mlxconfig -j FILE query`` writes, into the ``parse_table`` structure.

    Keys are matched without regard to case or blanks (lower-case since mstflint
    2025-01); ``default_value``, ``current_value`` and ``modified`` exist only
    with ``-e``. Numbers come as JSON numbers, enums as ``NAME(n)`` strings.
    """
    data = json.loads(text)
    result = {"devices": [], "errors": [], "infos": [], "warnings": [], "lines": []}
    if not isinstance(data, dict):
        raise ValueError("mlxconfig JSON: expected an object, got %s" % type(data).__name__)

    def keyed(obj):
        return dict((str(k).strip().lower().replace(" ", "_"), v) for k, v in obj.items()) if isinstance(obj, dict) else {}

    for key, raw in data.items():
        match = re.match(r"^Device #([0-9]+)$", str(key).strip(), re.I)
        dev = _new_device(int(match.group(1)) if match else None)
        info = keyed(raw)
        for field in ("device_type", "name", "description", "device"):
            value = info.get(field)
            dev[field] = value if value not in (None, "", "N/A") else None
        params = keyed(info).get("tlv_configuration") or {}
        verbose = False
        for name, item in params.items():
            item = keyed(item)
            values = {"next_boot": _json_text(item.get("next_value"))}
            if "current_value" in item or "default_value" in item:
                verbose = True
                values["default"] = _json_text(item.get("default_value"))
                values["current"] = _json_text(item.get("current_value"))
            entry = param_entry(name, values, item.get("modified"), bool(item.get("read_only")), "read_only" in item,
                                "current_value" in item)
            if "modified" not in item:
                entry["modified"] = None
            dev["params"][name] = entry
        dev["columns"] = list(VALUE_COLUMNS) if verbose else ["next_boot"]
        dev["layout"] = "json"
        for key_ in ("_header_at", "_header_next_end", "_header_verbose", "_rows", "_row_data"):
            dev.pop(key_, None)
        result["devices"].append(dev)
    result["devices"].sort(key=lambda d: (d["index"] is None, d["index"] or 0))
    return result


# ---------------------------------------------------------------- BlueField

def bluefield_mode(params, column="current"):
    """Mode of a BlueField from its ``INTERNAL_CPU_*`` parameters in one column
    (falling back to Next Boot when the column was not printed).

    None when the device has none of them (not a BlueField); ``dpu`` when the
    offload engine is enabled or any of page supplier, e-switch manager and IB
    vport 0 is ``ECPF`` (the Arm side owns the NIC); ``nic`` when the offload
    engine is disabled and none is ``ECPF``; ``separated_host``; ``unknown``
    otherwise.
    """
    upper = dict((str(k).upper(), v) for k, v in (params or {}).items())
    present = [name for name in BF_PARAMS if name in upper]
    if not present:
        return None

    def name_of(param):
        entry = upper.get(param)
        if not entry:
            return None
        text = entry.get(column)
        if text is None:
            text = entry.get("next_boot")
        value = parse_value(text)
        return (value["name"] or value["text"]).upper() if value else None

    model = name_of(BF_MODEL)
    if model in ("SEPERATED_HOST", "SEPARATED_HOST"):
        return "separated_host"
    ecpf = [name_of(p) for p in BF_ECPF_PARAMS]
    offload = name_of(BF_OFFLOAD)
    if offload == "ENABLED" or "ECPF" in ecpf:
        return "dpu"
    if offload == "DISABLED" or "EXT_HOST_PF" in ecpf:
        return "nic"
    return "unknown"


def bluefield_evidence(params):
    """``NAME VALUE`` of the BlueField mode parameters, for messages."""
    out = []
    for name, entry in (params or {}).items():
        if str(name).upper() in BF_PARAMS:
            out.append("%s %s" % (name, entry.get("current") or entry.get("next_boot")))
    return ", ".join(out)


# ---------------------------------------------------------------- comparator

class ValueProblem(ValueError):
    """A desired value that does not fit its parameter; ``accepted`` says what would."""

    def __init__(self, message, accepted):
        super(ValueProblem, self).__init__(message)
        self.accepted = accepted


def known_values(name, entry):
    """Enum/bool values of one parameter as (canonical name, number), and whether the list is complete."""
    kind = entry.get("type")
    if kind == "bool":
        return list(BOOL_VALUES), True
    seen = []
    for col in VALUE_COLUMNS:
        vname, number = entry.get("%s_name" % col), entry.get("%s_number" % col)
        if vname and (vname, number) not in seen:
            seen.append((vname, number))
    builtin = builtin_values(name)
    if builtin is not None:
        values = list(_LINK_TYPE_VALUES)
        if any(v[0].upper() == _LINK_TYPE_VPI[0] for v in seen):
            values.append(_LINK_TYPE_VPI)
        return values, True
    return seen, False


def describe_accepted(name, entry):
    kind = entry.get("type")
    if kind == "bool":
        return "true or false (also yes/no, 1/0, True(1)/False(0))"
    if kind == "number":
        return "a non-negative integer"
    if kind == "enum":
        values, complete = known_values(name, entry)
        listed = ", ".join("%s (%s)" % (v, n) if n is not None else v for v, n in values)
        if complete:
            return listed
        return "a value name or its number; the query shows %s" % listed
    if kind == "array":
        return "nothing: arrays are not set by this module"
    return "a value as the tool prints it"


def _display(vname, number):
    if vname is not None and number is not None:
        return "%s(%d)" % (vname, number)
    return vname if vname is not None else str(number)


def desired_value(name, value, entry):
    """Normalize one desired value against the parameter's query entry.

    Returns ``{name, number, arg, display}``: ``arg`` is what ``set`` gets
    (the value name when known, else the number), ``display`` how the tool
    would print the value. Raises ValueProblem when the value cannot be valid.
    Booleans accept YAML booleans, ``true``/``yes``/``on``/``1`` and their
    opposites; enums a name (any case), a number or ``NAME(n)``; numbers an
    integer or a string of digits (``0x`` hex too).
    """
    kind = entry.get("type")
    accepted = describe_accepted(name, entry)

    def bad(why):
        raise ValueProblem("%r %s" % (value, why), accepted)

    if value is None or isinstance(value, (dict, list, tuple, float)):
        bad("is not a valid value")
    text = value if isinstance(value, str) else None
    if kind == "array":
        bad("cannot be set: %s is an array (%s); set its elements with mlxconfig directly" % (name, entry.get("next_boot")))
    if kind == "number":
        if isinstance(value, bool):
            bad("is a boolean, but %s is a number" % name)
        number = value if isinstance(value, int) else _int(text.strip())
        if number is None or number < 0:
            bad("is not a non-negative integer")
        return {"name": None, "number": number, "arg": str(number), "display": str(number)}
    if kind == "bool":
        if isinstance(value, bool):
            number = int(value)
        elif isinstance(value, int):
            number = value if value in (0, 1) else None
        else:
            low = text.strip().lower()
            enum = _ENUM_RE.match(low)
            if enum and enum.group(1) in ("true", "false") and int(enum.group(2)) == (enum.group(1) == "true"):
                low = enum.group(1)
            number = 1 if low in _TRUE_WORDS else 0 if low in _FALSE_WORDS else None
        if number is None:
            bad("is not a boolean")
        vname = BOOL_VALUES[number][0]
        return {"name": vname, "number": number, "arg": vname, "display": _display(vname, number)}
    if kind == "enum":
        values, complete = known_values(name, entry)
        if isinstance(value, bool):
            bad("is a boolean, but %s is an enumeration" % name)
        if isinstance(value, int):
            vname, number = None, value
        else:
            stripped = text.strip()
            enum = _ENUM_RE.match(stripped)
            if enum and _IDENT_RE.match(enum.group(1)):
                vname, number = enum.group(1), int(enum.group(2))
            elif _int(stripped) is not None:
                vname, number = None, _int(stripped)
            elif _IDENT_RE.match(stripped):
                vname, number = stripped, None
            else:
                bad("is neither a value name nor a number")
        if number is not None and number < 0:
            bad("is negative")
        match = None
        for known_name, known_number in values:
            if vname is not None and known_name.lower() == vname.lower():
                match = (known_name, known_number)
            elif vname is None and known_number is not None and known_number == number:
                match = (known_name, known_number)
        if match is not None:
            if vname is not None and number is not None and match[1] is not None and match[1] != number:
                bad("does not match: %s is %s(%s)" % (match[0], match[0], match[1]))
            vname, number = match[0], match[1] if match[1] is not None else number
        elif complete:
            bad("is not one of the values of %s" % name)
        arg = vname if vname is not None else str(number)
        return {"name": vname, "number": number, "arg": arg, "display": _display(vname, number)}
    # a value form this module does not know: compare the text, pass it on as given
    if isinstance(value, bool):
        value = "True" if value else "False"
    text = str(value).strip()
    if not text or any(c.isspace() for c in text) or "=" in text:
        bad("is not a valid value")
    parsed = parse_value(text)
    return {"name": parsed["name"] if parsed["name"] is not None else text, "number": parsed["number"], "arg": text,
            "display": text}


def value_matches(desired, printed, param=None):
    """Whether a desired value (from ``desired_value``) equals a printed value, by number or name."""
    observed = _fill_number(param, parse_value(printed))
    if observed is None:
        return None
    if desired["number"] is not None and observed["number"] is not None:
        return desired["number"] == observed["number"]
    if desired["name"] is not None and observed["name"] is not None:
        return desired["name"].lower() == observed["name"].lower()
    return str(desired["arg"]).lower() == observed["text"].lower()


def decide(name, entry, desired):
    """The three-way decision for one parameter: ``(action, reboot_required)``.

    - desired not in Next Boot -> ``write``; a reboot is needed unless Current
      already has it (the write only undoes someone else's staged change);
    - desired in Next Boot but not in Current -> ``pending_reboot``;
    - in both (or Current not printed) -> ``none``.
    """
    in_next = value_matches(desired, entry.get("next_boot"), name)
    in_current = value_matches(desired, entry.get("current"), name)
    if not in_next:
        return "write", in_current is not True
    if in_current is False:
        return "pending_reboot", True
    return "none", False


def close_names(name, params, count=3):
    """Parameter names of the query that look like ``name`` (for "did you mean")."""
    return difflib.get_close_matches(str(name).upper(), [str(p).upper() for p in params], n=count, cutoff=0.75)


def missing_param_reason(name, params, device_type=None):
    """Why ``name`` is not in a device's query output, in words."""
    upper = str(name).upper()
    names = set(str(p).upper() for p in params)
    what = device_type or "the device"
    if _LINK_TYPE_RE.match(upper) and not any(_LINK_TYPE_RE.match(n) for n in names):
        return ("not supported: %s has no LINK_TYPE parameters (an Ethernet-only card, whose ports are always Ethernet)"
                % what)
    port = re.match(r"^(.*_P)([0-9]+)$", upper)
    if port and port.group(2) != "1" and (port.group(1) + "1") in names:
        return "not supported: %s has no port %s (it has %s)" % (what, port.group(2), port.group(1) + "1")
    hint = close_names(upper, names)
    suffix = " (did you mean %s?)" % " or ".join(hint) if hint else ""
    if upper in KNOWN_PARAMS:
        return "not supported by %s%s" % (what, suffix)
    return "unknown parameter: %s does not report it%s" % (what, suffix)


# ---------------------------------------------------------------- devices and failures

LOCKDOWN_HELP = (
    "the kernel is locked down (%s): Secure Boot lockdown blocks the direct PCI access that mlxconfig and mstconfig use, "
    "so %s cannot open %s. Either lift the lockdown for the maintenance (disable Secure Boot in the firmware setup, or "
    "with 'mokutil --disable-validation', and reboot), or use NVIDIA MFT with its signed kernel module ('mst start') or "
    "mlxconfig through /dev/fwctl where the kernel and MFT support it"
)


# PCI device ids of NVIDIA/Mellanox virtual functions
VF_DEVICE_IDS = frozenset(dev_id for dev_id, (_model, is_vf) in PCI_MODELS.items() if is_vf)


def sysfs_functions(tree):
    """Physical functions of NVIDIA/Mellanox adapters in a ``sysfs.Sysfs`` tree:
    ``[{pci_address, rdma_devices}]``, sorted. VFs are left out (they cannot be configured)."""
    rdma = {}
    for name in tree.ib_devices():
        bdf = tree.ib_pci_address(name)
        if bdf:
            rdma.setdefault(bdf, []).append(name)
    out = []
    for bdf in tree.pci_functions():
        if tree.link_name("bus", "pci", "devices", bdf, "physfn"):
            continue
        if normalize_hex_id(tree.read("bus", "pci", "devices", bdf, "device")) in VF_DEVICE_IDS:
            continue
        out.append({"pci_address": bdf, "rdma_devices": sorted(rdma.get(bdf, []))})
    return out


def describe_functions(functions):
    if not functions:
        return "sysfs shows no NVIDIA/Mellanox PCI function"
    items = []
    for fn in functions:
        names = ", ".join(fn["rdma_devices"])
        items.append("%s (%s)" % (fn["pci_address"], names) if names else fn["pci_address"])
    return "NVIDIA/Mellanox PCI functions in sysfs: %s" % ", ".join(items)


def resolve_device(device, tree=None):
    """What to pass to ``-d`` for a ``device`` option, and what is known about it.

    A PCI address (full or short) becomes the full form; an RDMA name that
    sysfs resolves becomes its PCI address (older tools do not take RDMA names);
    anything else (MST device path, ``/dev/fwctl/...``, an RDMA name sysfs does
    not know) goes to the tool as given: the tool is the authority.
    Returns ``{device, target, pci_address, rdma_devices, physfn}``.
    """
    device = str(device).strip()
    out = {"device": device, "target": device, "pci_address": None, "rdma_devices": [], "physfn": None}
    bdf = normalize_pci_address(device)
    if bdf is None and tree is not None and _IDENT_RE.match(device):
        bdf = tree.ib_pci_address(device)
    if bdf:
        out["target"] = out["pci_address"] = bdf
    if bdf and tree is not None:
        out["rdma_devices"] = sorted(name for name in tree.ib_devices() if tree.ib_pci_address(name) == bdf)
        physfn = tree.link_name("bus", "pci", "devices", bdf, "physfn")
        out["physfn"] = normalize_pci_address(physfn) if physfn else None
    return out


def explain_failure(tool, device, parsed, rc, stdout="", lockdown=None, functions=None, physfn=None):
    """One sentence for a failed query or set on ``device``: the tool's error
    translated, with what to do (lockdown, unknown device, MST not started...)."""
    errors = all_errors(parsed)
    kinds = [classify_error(err) for err in errors]
    kind, param = kinds[0] if kinds else ("other", None)
    said = "; ".join(errors)
    if kind == "open" or (not errors and lockdown not in (None, "none")):
        if lockdown not in (None, "none"):
            return LOCKDOWN_HELP % (lockdown, tool, device)
        hints = []
        if physfn:
            hints.append("it is an SR-IOV virtual function of %s: firmware is configured through the physical function" % physfn)
        if str(device).startswith("/dev/mst/"):
            hints.append("MST device paths exist only after 'mst start' (NVIDIA MFT)")
        if functions is not None:
            hints.append(describe_functions(functions))
        detail = ": " + "; ".join(hints) if hints else ""
        return "%s cannot open device %s (%s)%s" % (tool, device, said or "rc %s" % rc, detail)
    if kind == "livefish":
        return "device %s is in livefish (flash recovery) mode: burn its firmware before configuring it (%s)" % (device, said)
    if kind in ("unsupported_param", "unknown_param"):
        what = "does not support parameter" if kind == "unsupported_param" else "does not know parameter"
        return "device %s: %s %s %s (%s)" % (device, tool, what, param, said)
    if kind == "read_only":
        return "device %s: a parameter is read-only and cannot be changed (%s)" % (device, said)
    if kind == "invalid_value":
        return "device %s: %s refused the value of %s (%s)" % (device, tool, param, said)
    if kind == "no_devices":
        return "%s found no device (%s); with NVIDIA MFT run 'mst start' first, or name the device" % (tool, said)
    if kind in ("identify", "unsupported_device", "no_config"):
        return "%s cannot configure device %s (%s)" % (tool, device, said)
    detail = said or (stdout or "").strip().splitlines()[-1:] or ["no output"]
    return "%s failed on device %s (rc %s): %s" % (tool, device, rc, detail if isinstance(detail, str) else detail[0])
