# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""iproute2's ``rdma``: ``system``, ``link``, ``dev`` in text and JSON (tool-outputs.md section 4).

The output of ``rdma system`` depends on the iproute2 version (``tools.iproute2``) and on what
the kernel reports (``kernel.release``, which defaults to the iproute2 version).
"""

from __future__ import annotations

import json

from fabricsim import Result
from fabricsim import state as sim_state

LINK_STATES = {0: "NOP", 1: "DOWN", 2: "INIT", 3: "ARMED", 4: "ACTIVE", 5: "ACTIVE_DEFER"}
PHYS_STATES = {0: "NOP", 1: "SLEEP", 2: "POLLING", 3: "DISABLED", 4: "ARMED", 5: "LINK_UP", 6: "LINK_ERROR_RECOVER",
               7: "PHY_TEST"}
OBJECTS = ("help", "dev", "link", "resource", "system", "statistic", "monitor")


class RdmaError(Exception):
    """Printed on stderr; rc 1."""


def _matches(word, pattern):
    """iproute2's strcmpx: ``word`` is a prefix of ``pattern``."""
    return 0 < len(word) <= len(pattern) and pattern.startswith(word)


class JsonWriter:
    """iproute2 json_writer: compact, or pretty with 4-space indent, ``[ {`` ... ``} ]``."""

    def __init__(self, pretty):
        self.pretty = pretty

    def dumps(self, objects):
        if not self.pretty:
            return "[" + ",".join(json.dumps(o, separators=(",", ":")) for o in objects) + "]\n"
        if not objects:
            return "[ ]\n"
        parts = []
        for obj in objects:
            fields = ",".join("\n        %s: %s" % (json.dumps(k), json.dumps(v)) for k, v in obj.items())
            parts.append("{" + fields + "\n    }")
        return "[ " + ",".join(parts) + " ]\n"


class Tool:
    def __init__(self, state, argv):
        self.state = state
        self.argv = list(argv)
        self.json = False
        self.pretty = False
        self.details = False
        self.kind = "read"
        tools = state.get("tools", {})
        self.version = sim_state.version_tuple(tools.get("iproute2", "6.1.0"))
        self.kernel = sim_state.version_tuple(state.get("kernel", {}).get("release") or tools.get("iproute2", "6.1.0"))

    # --------------------------------------------------------------------- helpers
    def emit(self, objects, text_lines):
        if self.json:
            return JsonWriter(self.pretty).dumps(objects)
        return "".join(text_lines)

    def _devices(self, name=None):
        funcs = sim_state.rdma_functions(self.state)
        if name is None:
            return funcs
        for f in funcs:
            if f.rdma == name:
                return [f]
        raise RdmaError("Wrong device name")

    # --------------------------------------------------------------------- system
    def system(self, args):
        if self.version < (5, 3, 0):
            raise RdmaError("Unknown object 'system'.")
        if not args or _matches(args[0], "show") or _matches(args[0], "list"):
            return self.system_show()
        if _matches(args[0], "set"):
            return self.system_set(args[1:])
        if _matches(args[0], "help"):
            return "Usage: rdma system show [ netns ]\n       rdma system set netns { shared | exclusive }\n", ""
        raise RdmaError("Unknown command '%s'." % args[0])

    def system_show(self):
        mode = sim_state.netns_mode(self.state)
        obj = {"netns": mode}
        text = "netns %s" % mode
        if self.version >= (5, 14, 0):
            if self.version >= (6, 7, 0) and self.kernel >= (6, 6, 0):
                obj["privileged-qkey"] = False
                text += " privileged-qkey off"
            if self.version >= (6, 13, 0):
                obj["monitor"] = False
                text += " monitor off"
            obj["copy-on-fork"] = True
            text += " copy-on-fork on"
        text += "\n"
        if self.json and self.version[:2] != (6, 1):
            return JsonWriter(self.pretty).dumps([obj]), ""
        return text, ""

    def system_set(self, args):
        if not args or not _matches(args[0], "netns"):
            raise RdmaError("Unknown parameter '%s'." % (args[0] if args else ""))
        if len(args) < 2 or args[1] not in ("shared", "exclusive"):
            raise RdmaError("valid options are: { shared | exclusive }")
        self.kind = "write"
        try:
            sim_state.set_netns_mode(self.state, args[1])
        except OSError as exc:
            raise RdmaError("error: %s" % exc.strerror) from None
        return "", ""

    # --------------------------------------------------------------------- link
    def link(self, args):
        if args and _matches(args[0], "set"):
            raise RdmaError("rdma link set is not modelled by the simulator")
        if args and (_matches(args[0], "show") or _matches(args[0], "list")):
            args = args[1:]
        name, port = None, None
        if args:
            name, _sep, port_text = args[0].partition("/")
            if port_text:
                if not port_text.isdigit():
                    raise RdmaError("Wrong port number")
                port = int(port_text)
        funcs = self._devices(name)
        if port is not None and port != 1:
            raise RdmaError("Wrong device name")
        objects, lines = [], []
        for f in funcs:
            obj, text = self._link_line(f)
            objects.append(obj)
            lines.append(text)
        return self.emit(objects, lines), ""

    def _link_line(self, f):
        ps = sim_state.port_status(self.state, f)
        obj = {"ifindex": f.ibindex, "ifname": f.rdma, "port": 1}
        if self.version < (5, 0, 0):
            text = "%d/1: %s/1: " % (f.ibindex, f.rdma)
        else:
            text = "link %s/1 " % f.rdma
        if f.ib:
            prefix = "fe80:0000:0000:0000"
            obj.update({"subnet_prefix": prefix, "lid": ps["lid"], "sm_lid": ps["sm_lid"], "lmc": ps["lmc"]})
            text += "subnet_prefix %s lid %d sm_lid %d lmc %d " % (prefix, ps["lid"], ps["sm_lid"], ps["lmc"])
        state_name = LINK_STATES.get(ps["state"], "UNKNOWN")
        phys_name = PHYS_STATES.get(ps["phys_state"], "UNKNOWN")
        obj.update({"state": state_name, "physical_state": phys_name})
        text += "state %s physical_state %s " % (state_name, phys_name)
        if f.netdev and (not f.ib or self.kernel >= (6, 7, 0)):
            obj.update({"netdev": f.netdev, "netdev_index": f.ifindex})
            text += "netdev %s " % f.netdev
            if self.details:
                text += "netdev_index %d " % f.ifindex
        return obj, text + "\n"

    # --------------------------------------------------------------------- dev
    def dev(self, args):
        if args and _matches(args[0], "set"):
            raise RdmaError("rdma dev set is not modelled by the simulator")
        if args and (_matches(args[0], "show") or _matches(args[0], "list")):
            args = args[1:]
        funcs = self._devices(args[0] if args else None)
        objects, lines = [], []
        for f in funcs:
            fw = f.adapter.get("firmware_version", f.model.fw_version)
            obj = {"ifindex": f.ibindex, "ifname": f.rdma, "node_type": "ca"}
            text = "%d: %s: node_type ca " % (f.ibindex, f.rdma)
            if self.version >= (6, 5, 0) and self.kernel >= (6, 6, 0):
                proto = "ib" if f.ib else "roce"
                obj["protocol"] = proto
                text += "protocol %s " % proto
            node = sim_state.guid_colon(f.node_guid)
            sysimg = sim_state.guid_colon(f.sys_image_guid)
            obj.update({"fw": fw, "node_guid": node, "sys_image_guid": sysimg})
            text += "fw %s node_guid %s sys_image_guid %s \n" % (fw, node, sysimg)
            objects.append(obj)
            lines.append(text)
        return self.emit(objects, lines), ""

    # --------------------------------------------------------------------- main
    def usage(self):
        return ("Usage: rdma [ OPTIONS ] OBJECT { COMMAND | help }\n"
                "       rdma [ -f[orce] ] -b[atch] filename\n"
                "where  OBJECT := { dev | link | resource | monitor | system | statistic | help }\n"
                "       OPTIONS := { -V[ersion] | -d[etails] | -j[son] | -p[retty] | -r[aw]}\n")

    def execute(self):
        args = self.argv
        while args and args[0].startswith("-") and len(args[0]) > 1:
            opt = args[0].lstrip("-")
            if opt in ("V", "Version", "version"):
                return 0, "rdma utility, iproute2-%s\n" % self.state.get("tools", {}).get("iproute2", "6.1.0"), ""
            if opt in ("h", "help"):
                return 0, self.usage(), ""
            if opt in ("json", "pretty", "details", "raw", "force", "n"):
                letters = opt[0]
            else:
                letters = opt
            for ch in letters:
                if ch == "j":
                    self.json = True
                elif ch == "p":
                    self.pretty = True
                elif ch == "d":
                    self.details = True
                elif ch in "rfn":
                    pass
                else:
                    return 1, "", "Option \"%s\" is unknown, try \"rdma -help\".\n" % args[0]
            args = args[1:]
        if not args or _matches(args[0], "help"):
            return 0, self.usage(), ""
        obj = next((o for o in OBJECTS if _matches(args[0], o)), None)
        if obj is None or (obj == "system" and self.version < (5, 3, 0)):
            return 1, "", "Unknown object '%s'.\n" % args[0]
        try:
            if obj == "system":
                out, err = self.system(args[1:])
            elif obj == "link":
                out, err = self.link(args[1:])
            elif obj == "dev":
                out, err = self.dev(args[1:])
            else:
                raise RdmaError("rdma %s is not modelled by the simulator" % obj)
        except RdmaError as exc:
            return 1, "", "%s\n" % exc
        return 0, out, err


def run(state, argv):
    t = Tool(state, argv)
    rc, out, err = t.execute()
    return Result(rc, out, err, t.kind, None)
