# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""``mlxconfig`` (MFT) and ``mstconfig`` (mstflint): query, set, reset.

The table layout follows the tool's format strings per release generation (G1-G6, see
tool-outputs.md section 1.2), chosen from ``tools.firmware_version``.  Errors go to stdout
with ``-E- `` and the tool's exit codes (2 aborted by user, 3 error).
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field

from fabricsim import Result, catalog, mst, read_answer
from fabricsim import state as sim_state

RC_OK = 0
RC_ABORTED = 2
RC_ERROR = 3

NEXT_STR = "Next Boot"


@dataclass(frozen=True)
class Layout:
    """One format generation of the mlxconfig table."""

    gen: int
    label: int
    header_e: str
    header_next: str
    ro_column: bool
    name_width: int
    value_width: int
    space_from: int  # a space follows a value whose printed width is >= this


LAYOUTS = {
    1: Layout(1, 16, "%-16s%36s%16s%18s", "%-16s%38s", False, 36, 16, 17),
    2: Layout(2, 16, "%-16s%44s%16s%18s", "%-16s%46s", False, 44, 16, 17),
    3: Layout(3, 16, "%-16s%44s%16s%18s", "%-16s%46s", True, 44, 16, 17),
    4: Layout(4, 20, "%-20s%39s%21s%23s", "%-20s%41s", True, 44, 20, 20),
    5: Layout(5, 20, "%-20s%44s%20s%18s", "%-20s%46s", True, 44, 20, 20),
    6: Layout(6, 20, "", "", True, 48, 33, 33),
}


def generation(version):
    """Format generation from an MFT/mstflint version string (``4.21.0`` -> 1 ... ``4.36`` -> 6).

    MFT 4.30.1 already prints the G5 widths (a real capture, tool-outputs.md 1.3/1.4); mstflint
    has no 4.30.1 and prints them from 4.31 (tag v4.30.0-1 still has the G4 format strings)."""
    major, minor, patch = sim_state.version_tuple(version, (4, 21, 0))[:3]
    if major < 4 or (major == 4 and minor <= 21):
        return 1
    if major > 4 or minor >= 36:
        return 6
    if minor <= 24:
        return 2
    if minor == 25:
        return 3
    if minor < 30 or (minor == 30 and patch == 0):
        return 4
    return 5


@dataclass
class Row:
    """One line of the table (QueryOutputItem)."""

    name: str
    param: catalog.Param
    default: str = ""
    current: str = ""
    next: str = ""
    new: str = ""
    dval: int = 0
    cval: int = 0
    nval: int = 0
    ro: bool = False
    json_vals: dict = field(default_factory=dict)

    def differs(self, verbose):
        return verbose and (self.nval != self.dval or self.nval != self.cval)


class MlxError(Exception):
    """An error mlxconfig reports as ``-E- <message>``."""

    def __init__(self, message, rc=RC_ERROR):
        super().__init__(message)
        self.rc = rc


class Tool:
    """One invocation of mlxconfig/mstconfig."""

    def __init__(self, state, argv, name, stdin=None):
        self.state = state
        self.argv = list(argv)
        self.name = name
        self.stdin = stdin
        self.out = []
        self.err = []
        self.device = None
        self.verbose = False
        self.yes = 0
        self.json_file = None
        self.cmd = None
        self.params = []
        self.kind = "query"
        self.log_device = None
        tools = state.get("tools", {})
        self.mft = name == "mlxconfig"
        self.layout = LAYOUTS[generation(tools.get("firmware_version", "4.21.0"))]

    # ------------------------------------------------------------------ output helpers
    def p(self, text):
        self.out.append(text)

    def e(self, message):
        self.p("-E- %s\n" % message)

    def usage(self):
        self.p("\n    %s [Options] <Commands> [Parameters]\n\n" % self.name)
        self.p("    Options:\n")
        self.p("        -d|--dev <device>           : the device to work on (PCI address, RDMA name%s).\n"
               % (" or MST device" if self.mft else ""))
        self.p("        -e|--enable_verbosity        : show default and current configurations.\n")
        self.p("        -y|--yes                     : answer yes in the prompt.\n")
        self.p("        -j|--json_format <file>      : write the query output to a JSON file.\n\n")
        self.p("    Commands:\n")
        self.p("        q[uery]                      : query the configurations.\n")
        self.p("        s[et]                        : set configurations to a specific device.\n")
        self.p("        r[eset]                      : reset all configurations to their default value.\n\n")

    # ------------------------------------------------------------------ argument parsing
    def parse(self):
        argv = self.argv
        i = 0
        while i < len(argv):
            arg = argv[i]
            if arg in ("-v", "--version"):
                self.p("%s, %s %s, built on the fabric.infiniband simulator\n"
                       % (self.name, "mft" if self.mft else "mstflint", self.state["tools"].get("firmware_version")))
                return RC_OK, True
            if arg in ("-h", "--help"):
                self.usage()
                return RC_OK, True
            if arg in ("-d", "--dev"):
                i += 1
                if i == len(argv):
                    raise MlxError("missing device name")
                self.device = argv[i]
            elif arg in ("-b", "--db", "-f", "--file", "-p", "--private_key", "-u", "--key_uuid", "-t", "--device_type"):
                i += 1
                if i == len(argv):
                    raise MlxError("missing file name")
            elif arg in ("-j", "--json_format"):
                i += 1
                if i == len(argv):
                    raise MlxError("missing .json output file")
                self.json_file = argv[i]
            elif arg in ("-yy", "--yyes"):
                self.yes = 2
            elif arg in ("-y", "--yes"):
                self.yes = max(self.yes, 1)
            elif arg in ("-e", "--enable_verbosity"):
                self.verbose = True
            elif arg in ("-a", "--all_attrs", "--force"):
                pass
            elif arg in ("set", "s"):
                self.cmd = "set"
                break
            elif arg in ("query", "q"):
                self.cmd = "query"
                break
            elif arg in ("reset", "r"):
                self.cmd = "reset"
                break
            elif arg in ("clear_semaphore", "set_raw", "get_raw", "backup", "gen_tlvs_file", "t", "gen_xml_template", "g",
                         "raw2xml", "xml2raw", "x", "xml2bin", "create_conf", "apply", "show_confs", "i"):
                raise MlxError("The command %s is not available in the simulator." % arg)
            else:
                raise MlxError("invalid argument: %s" % arg)
            i += 1
        if self.cmd is None:
            raise MlxError("No command found. For more information please read the help message:")
        rest = argv[i + 1:]
        if self.cmd == "set" and not rest:
            raise MlxError("missing configuration arguments. For more information please run %s -h|--help." % self.name)
        if self.cmd != "query" and self.json_file:
            raise MlxError("Json format is only supported for query command.")
        if self.cmd == "set" and not self.device:
            raise MlxError("set command expects device to be specified.")
        if self.cmd == "query":
            self.params = self._query_args(rest)
        elif self.cmd == "set":
            self.params = self._set_args(rest)
        return None, False

    @staticmethod
    def _indexes(text):
        out = []
        for part in text.split(","):
            if ".." in part:
                lo, hi = part.split("..", 1)
                out.extend(range(int(lo), int(hi) + 1))
            else:
                out.append(int(part))
        return out

    def _split_index(self, name):
        m = re.fullmatch(r"([A-Za-z0-9_]+)\[([0-9.,]+)\]", name)
        if not m:
            return name, None
        try:
            return m.group(1), self._indexes(m.group(2))
        except ValueError:
            raise MlxError("Invalid index %s" % m.group(2)) from None

    def _query_args(self, rest):
        out = []
        for arg in rest:
            base, idx = self._split_index(arg)
            if idx is None:
                out.append((arg, None, None))
            else:
                out.extend(("%s[%d]" % (base, i), i, None) for i in idx)
        return out

    def _set_args(self, rest):
        out = []
        seen = set()
        for arg in rest:
            parts = [x for x in arg.split("=") if x != ""]
            if len(parts) != 2:
                raise MlxError("Invalid Configuration argument %s" % arg)
            tag, value = parts
            if tag in seen:
                raise MlxError("Duplicate parameter, %s." % tag)
            seen.add(tag)
            base, idx = self._split_index(tag)
            if idx is None:
                out.append((tag, None, value))
            else:
                out.extend(("%s[%d]" % (base, i), i, value) for i in idx)
        return out

    # ------------------------------------------------------------------ devices
    def open_device(self, dev):
        """The function a ``-d`` argument names, or MlxError("Failed to open the device")."""
        if sim_state.lockdown(self.state) != "none":
            raise MlxError("Failed to open the device")
        func = None
        if dev.startswith("/dev/mst/"):
            if self.mft and sim_state.mst_started(self.state):
                bdf = mst.device_map(self.state).get(dev)
                func = sim_state.find_function(self.state, bdf) if bdf else None
        elif sim_state.parse_bdf(dev):
            func = sim_state.find_function(self.state, dev)
        elif re.fullmatch(r"mlx5_\d+", dev):
            func = sim_state.find_rdma(self.state, dev)
        if func is None or func.is_vf:
            raise MlxError("Failed to open the device")
        return func

    def all_devices(self):
        """What mdevices_info lists: every PF, labelled by MST device (after mst start) or BDF."""
        labels = {}
        if self.mft and sim_state.mst_started(self.state):
            labels = {bdf: path for path, bdf in mst.device_map(self.state).items()}
        return [(labels.get(f.bdf, f.bdf), f) for f in sim_state.functions(self.state, include_vfs=False)]

    # ------------------------------------------------------------------ formatting
    def fmt_value(self, text):
        """printValue: the value left-aligned in the generation's width; returns (text, printed width)."""
        s = "%-*s" % (self.layout.value_width, text)
        return s, len(s)

    def opening(self, label, func, index):
        lw = self.layout.label
        model = func.model
        out = "\nDevice #%d:\n----------\n\n" % index
        out += "%-*s%-*s\n" % (lw, "Device type:", lw, model.dev_type)
        out += "%-*s%-*s\n" % (lw, "Name:", lw, func.adapter.get("part_name", model.part_name))
        out += "%-*s%-*s\n" % (lw, "Description:", lw, func.adapter.get("description", model.description))
        out += "%-*s%-*s\n" % (lw, "Device:", lw, label)
        out += "\n"
        return out

    def conf_header(self, verbose, new):
        lay = self.layout
        if lay.gen == 6:
            cols = ["Default", "Current", NEXT_STR] if verbose else [NEXT_STR]
            if new:
                cols.append("New")
            return "%-56s" % "Configurations:" + " ".join("%-33s" % c for c in cols)
        if verbose:
            text = lay.header_e % ("Configurations:", "Default", "Current", NEXT_STR)
        else:
            text = lay.header_next % ("Configurations:", NEXT_STR)
        if new:
            text += "       New"
        return text

    def row_text(self, row, verbose, new):
        lay = self.layout
        diff = "*" if row.differs(verbose) else " "
        if lay.ro_column:
            prefix = diff + ("RO" if row.ro else "  ") + "     "
        else:
            prefix = diff + "        "
        line = prefix + "%-*s" % (lay.name_width, row.name)
        values = [row.default, row.current, row.next] if verbose else [row.next]
        if new:
            values.append(row.new)
        width = 0
        for n, value in enumerate(values):
            if n and width >= lay.space_from:
                line += " "
            text, width = self.fmt_value(value)
            line += text
        return line + "\n"

    # ------------------------------------------------------------------ rows
    def _lookup(self, func, name):
        """(param, index) for a (possibly indexed) name; MlxError for unknown/unsupported names."""
        base, idx = self._split_index(name)
        if not catalog.known_param(base):
            raise MlxError("Unknown Parameter %s" % base)
        param = func.model.param(base)
        if param is None:
            raise MlxError("The Device doesn't support %s parameter" % name)
        if idx is not None:
            if param.kind != "array":
                raise MlxError("The Device doesn't support %s parameter" % name)
            if idx[0] >= param.length:
                raise MlxError("Index %d of the parameter %s is out of range. Maximal index is %d" % (idx[0], base, param.length - 1))
            return param, idx[0]
        return param, None

    def make_row(self, func, name, param, index):
        ad = func.adapter
        row = Row(name=name, param=param, ro=param.ro)
        vals = {w: sim_state.param_value(ad, param.name, w) for w in ("default", "current", "next")}
        if param.kind == "array" and index is None:
            text = "Array[0..%d]" % (param.length - 1)
            row.default = row.current = row.next = text
            row.json_vals = {w: text for w in vals}
            return row
        if index is not None:
            vals = {w: v[index] for w, v in vals.items()}
        row.dval, row.cval, row.nval = vals["default"], vals["current"], vals["next"]
        row.default = sim_state.display_value(param, row.dval)
        row.current = sim_state.display_value(param, row.cval)
        row.next = sim_state.display_value(param, row.nval)
        row.json_vals = {w: (vals[w] if param.kind not in ("bool", "enum") else sim_state.display_value(param, vals[w])) for w in vals}
        return row

    def rows_for(self, func, names):
        """Rows for a query: all parameters (database order) or the named ones (command-line order)."""
        if not names:
            return [self.make_row(func, p.name, p, None) for p in func.model.params()]
        for name, _idx, _value in names:
            base = self._split_index(name)[0]
            if not catalog.known_param(base):
                raise MlxError("Unknown Parameter %s" % base)
        rows = []
        for name, _idx, _value in names:
            param, index = self._lookup(func, name)
            rows.append(self.make_row(func, name, param, index))
        return rows

    # ------------------------------------------------------------------ query
    def query_device(self, label, func, index, json_doc):
        verbose = self.verbose
        if json_doc is None:
            self.p(self.opening(label, func, index))
            self.p(self.conf_header(verbose, False) + "\n")
        key = "Device #%d" % index
        try:
            rows = self.rows_for(func, self.params)
        except MlxError as exc:
            self.e(str(exc))
            return False
        if json_doc is not None:
            dev = {"device_type": func.model.dev_type, "name": func.adapter.get("part_name", func.model.part_name),
                   "description": func.adapter.get("description", func.model.description), "device": label,
                   "tlv_configuration": {}}
            for row in rows:
                item = {"read_only": row.ro, "next_value": row.json_vals["next"]}
                if verbose:
                    item["modified"] = row.differs(True)
                    item["default_value"] = row.json_vals["default"]
                    item["current_value"] = row.json_vals["current"]
                dev["tlv_configuration"][row.name] = item
            json_doc[key] = dev
            return True
        differ = False
        ro = False
        for row in rows:
            self.p(self.row_text(row, verbose, False))
            differ |= row.differs(verbose)
            ro |= row.ro and self.layout.ro_column
        if differ:
            self.p("The '*' shows parameters with next value different from default/current value.\n")
        if ro:
            self.p("\nThe 'RO' shows parameters which are for read only and cannot be changed\n")
        return True

    def query(self):
        json_doc = None
        if self.json_file:
            try:
                with open(self.json_file, "w", encoding="utf-8") as handle:
                    handle.write("{}\n")
            except OSError as exc:
                self.err.append('Failed to open "%s". Reason: %s\n' % (self.json_file, os.strerror(exc.errno or 5)))
                return RC_ERROR
            json_doc = {}
        failed = False
        if self.device:
            try:
                func = self.open_device(self.device)
            except MlxError as exc:
                self.e(str(exc))
                failed = True
            else:
                self.log_device = func.bdf
                failed = not self.query_device(self.device, func, 1, json_doc)
        else:
            devices = self.all_devices()
            if sim_state.lockdown(self.state) != "none":
                devices = []
                self.e("Failed to open the device")
                failed = True
            elif not devices:
                self.e("No devices found, mst might be stopped. You may need to run 'mst start' to load MST modules. "
                       if self.mft else "No devices found.")
                return RC_ERROR
            for n, (label, func) in enumerate(devices, start=1):
                if not self.query_device(label, func, n, json_doc):
                    failed = True
        if json_doc is not None:
            with open(self.json_file, "w", encoding="utf-8") as handle:
                handle.write(jsoncpp_dumps(json_doc) + "\n")
            if failed:
                self.p("Query output saved to %s but one or more devices had an error.\n" % self.json_file)
            else:
                self.p("Query output saved to %s successfully\n" % self.json_file)
        return RC_ERROR if failed else RC_OK

    # ------------------------------------------------------------------ set / reset
    def ask(self, question):
        """askUser: prints the question; -y answers y; otherwise one line of stdin (EOF is no)."""
        self.p("\n %s (y/n) [n] : " % question)
        if self.yes >= 1:
            self.p("y\n")
            return True
        answer = read_answer(self.stdin, self.out)
        if answer.strip().lower() not in ("y", "yes"):
            self.e("Aborted by user.")
            return False
        return True

    def set(self):
        try:
            func = self.open_device(self.device)
        except MlxError as exc:
            self.e(str(exc))
            return RC_ERROR
        self.log_device = func.bdf
        self.p(self.opening(self.device, func, 1))
        self.p(self.conf_header(self.verbose, True) + "\n")
        changes = []
        try:
            for name, _idx, _value in self.params:
                base = self._split_index(name)[0]
                if not catalog.known_param(base):
                    raise MlxError("Unknown Parameter %s" % base)
            rows = []
            for name, _idx, value in self.params:
                param, index = self._lookup(func, name)
                try:
                    parsed = sim_state.parse_value(param, value)
                except sim_state.ValueErrorMlx as exc:
                    raise MlxError(str(exc)) from None
                if param.kind == "array" and index is None:
                    raise MlxError("Cannot set the value %s for the parameter %s: Operation not supported" % (value, name))
                row = self.make_row(func, name, param, index)
                row.new = sim_state.display_value(param, parsed)
                rows.append(row)
                changes.append((param, index, parsed))
        except MlxError as exc:
            self.e(str(exc))
            return RC_ERROR
        differ = False
        for row in rows:
            self.p(self.row_text(row, self.verbose, True))
            differ |= row.differs(self.verbose)
        if differ:
            self.p("The '*' shows parameters with next value different from default/current value.\n")
        if not self.ask("Apply new Configuration?"):
            return RC_ABORTED
        self.p("Applying... ")
        for param, _idx, _value in changes:
            if param.ro:
                self.p("Failed!\n")
                self.e("Operation is not supported (Read only TLV: %s)" % param.tlv)
                return RC_ERROR
        if sim_state.take_fault(self.state, "firmware_set"):
            # An injected fault (faults.firmware_set): the write fails, nothing changes; the wording is the
            # simulator's own, not a recorded output.
            self.kind = "write"
            self.p("Failed!\n")
            self.e("Failed to set configuration: the device did not complete the command (injected fault)")
            return RC_ERROR
        for param, index, parsed in changes:
            sim_state.set_param(self.state, func.adapter, param.name, parsed, index)
        self.kind = "write"
        self.p("Done!\n")
        if func.adapter.get("needs_power_cycle"):
            self.p("-I- Please power cycle machine to load new configurations.\n")
        else:
            self.p("-I- Please reboot machine to load new configurations.\n")
        return RC_OK

    def reset(self):
        if self.device:
            if not self.ask("Reset configuration for device %s?" % self.device):
                return RC_ABORTED
            self.p("Applying... ")
            try:
                func = self.open_device(self.device)
            except MlxError as exc:
                self.p("Failed!\n")
                self.e(str(exc))
                return RC_ERROR
            self.log_device = func.bdf
            adapters = [func.adapter]
        else:
            devices = self.all_devices()
            if not devices:
                self.e("No devices found, mst might be stopped. You may need to run 'mst start' to load MST modules. "
                       if self.mft else "No devices found.")
                return RC_ERROR
            if not self.ask("Reset configuration for all devices?"):
                return RC_ABORTED
            self.p("Applying... ")
            if sim_state.lockdown(self.state) != "none":
                self.p("Failed!\n")
                return RC_ERROR
            adapters = []
            for _label, f in devices:
                if f.adapter not in adapters:
                    adapters.append(f.adapter)
        for ad in adapters:
            sim_state.reset_params(self.state, ad)
        self.kind = "reset"
        self.p("Done!\n")
        self.p("-I- Please reboot machine to load new configurations.\n")
        return RC_OK

    # ------------------------------------------------------------------ main
    def execute(self):
        try:
            rc, done = self.parse()
        except MlxError as exc:
            self.e(str(exc))
            self.usage()
            return exc.rc
        if done:
            return rc
        if self.cmd == "query":
            return self.query()
        if self.cmd == "set":
            return self.set()
        return self.reset()


def jsoncpp_dumps(value, indent=""):
    """JSON the way jsoncpp's StreamWriterBuilder writes it (tab indent, ``" : "``, sorted keys)."""
    if isinstance(value, dict):
        if not value:
            return "{}"
        inner = indent + "\t"
        parts = []
        for key in sorted(value):
            child = value[key]
            text = json.dumps(key) + " : "
            if isinstance(child, dict) and child:
                text += "\n" + inner + jsoncpp_dumps(child, inner)
            else:
                text += jsoncpp_dumps(child, inner)
            parts.append(inner + text)
        return "{\n" + ",\n".join(parts) + "\n" + indent + "}"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    return json.dumps(value)


def run(state, argv, tool="mstconfig", stdin=None):
    """Run mlxconfig (``tool="mlxconfig"``) or mstconfig; returns a Result."""
    t = Tool(state, argv, tool, stdin)
    rc = t.execute()
    return Result(rc, "".join(t.out), "".join(t.err), t.kind, t.log_device)
