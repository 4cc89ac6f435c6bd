# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""ibnetdiscover (infiniband-diags): the argv and a parser of its topology file.

We read the default output (the "topology file"), not the ports report of ``-p``: only the
topology file names every node with its node GUID, number of ports and system image GUID, and
gives the port GUIDs of CA ports and the switch's LID; ``-p`` prints one line per port with the
port GUID only, so a CA's node GUID is lost. The topology file is also what ibnetdiscover has
printed since infiniband-diags 1.x (ibsim reads the same grammar), so old and new releases agree.

The grammar, as infiniband-diags prints it (ibnetdiscover.c, out_switch/out_ca/out_*_port)::

    vendid=0x2c9
    devid=0xd2f0
    sysimgguid=0x...
    switchguid=0x<node guid>(<port 0 guid>)
    Switch  40 "S-<node guid>"   # "<description>" enhanced port 0 lid 1 lmc 0
    [3]  "H-<node guid>"[1](<port guid>)   # "<description>" lid 5 4xHDR
    caguid=0x<node guid>
    Ca  1 "H-<node guid>"   # "<description>"
    [1](<port guid>)  "S-<node guid>"[3]   # lid 5 lmc 0 "<description>" lid 1 4xHDR

Tabs or spaces in any amount, ``[ext N]`` suffixes (``-g``), chassis headers, ``-f``'s
``s= w= v=`` and routers (``Rt``, ``rtguid``) are accepted. Pure functions, no I/O.
"""

from __future__ import annotations

import re

from ansible_collections.fabric.infiniband.plugins.module_utils import guid as _guid

TOOL = "ibnetdiscover"

_HEX = r"(?:0x)?[0-9a-fA-F]+"
_KEY = re.compile(r"^(vendid|devid|sysimgguid|switchguid|caguid|rtguid)\s*=\s*(0x[0-9a-fA-F]+)(?:\s*\(\s*(%s)\s*\))?" % _HEX)
_NODE = re.compile(r'^(Switch|Ca|Rt|Router)\s+(\d+)\s+"([SHR?])-(%s)"\s*(?:#\s*(.*))?$' % _HEX)
_PORT = re.compile(
    r'^\[(\d+)\](?:\s*\[ext\s+\d+\])?(?:\s*\(\s*(%s)\s*\))?'   # local port, its GUID (CA and router ports)
    r'\s*"([SHR?])-(%s)"\s*\[(\d+)\](?:\s*\[ext\s+\d+\])?'     # the peer node and port
    r'(?:\s*\(\s*(%s)\s*\))?\s*(?:#\s*(.*))?$' % (_HEX, _HEX, _HEX))  # the peer port's GUID, the comment
_FROM = re.compile(r"Initiated from node\s+(%s)\s+port\s+(%s)" % (_HEX, _HEX))
_SWITCH_TAIL = re.compile(r"(base|enhanced)\s+port\s+0\s+lid\s+(\d+)\s+lmc\s+(\d+)")
_LOCAL_LID = re.compile(r"^lid\s+(\d+)\s+lmc\s+(\d+)\s*")
_PEER_LID = re.compile(r"lid\s+(\d+)(?:\s+(\d+x)\s*([A-Za-z0-9?]+))?")
_TYPES = {"Switch": "switch", "Ca": "ca", "Rt": "router", "Router": "router"}


def argv(ca=None, port=None, timeout_ms=None):
    """Arguments of ``ibnetdiscover`` (without the program): the topology file on stdout."""
    args = []
    if ca:
        args += ["-C", ca]
    if port:
        args += ["-P", str(port)]
    if timeout_ms:
        args += ["-t", str(timeout_ms)]
    return args


def guid(text):
    """``0x`` and 16 lower-case hex digits, from ``0x...`` or bare hex digits; None if empty (module_utils/guid.py)."""
    return _guid.normalize(text)


def _split_comment(comment):
    """The quoted description and what follows it in a comment (the description may hold quotes)."""
    comment = (comment or "").strip()
    first, last = comment.find('"'), comment.rfind('"')
    if first < 0 or last <= first:
        return None, comment
    return comment[first + 1:last], comment[last + 1:].strip()


def _new_node(kind, nports, node_guid, ids):
    node = {
        "type": kind,
        "guid": node_guid,
        "description": None,
        "num_ports": nports,
        "sys_image_guid": ids.get("sysimgguid"),
        "vendor_id": ids.get("vendid"),
        "device_id": ids.get("devid"),
        "lid": None,
        "lmc": None,
        "port_guid": ids.get("port_guid"),
        "ports": [],
    }
    return node


def _port_line(node, match):
    local, local_guid, peer_kind, peer_guid, peer_port, peer_port_guid, comment = match.groups()
    port = {"port": int(local), "guid": guid(local_guid) if local_guid else None, "lid": None, "lmc": None,
            "peer_guid": guid(peer_guid), "peer_type": {"S": "switch", "H": "ca", "R": "router"}.get(peer_kind),
            "peer_port": int(peer_port), "peer_port_guid": guid(peer_port_guid) if peer_port_guid else None,
            "peer_description": None, "peer_lid": None, "width": None, "speed": None}
    description, rest = _split_comment(comment)
    port["peer_description"] = description
    head = (comment or "").strip()
    local_lid = _LOCAL_LID.match(head)
    if local_lid and description is not None:
        # a CA or router port: its own LID and LMC come before the peer's description
        port["lid"], port["lmc"] = int(local_lid.group(1)), int(local_lid.group(2))
    tail = _PEER_LID.search(rest if description is not None else head)
    if tail:
        port["peer_lid"] = int(tail.group(1))
        port["width"], port["speed"] = tail.group(2), tail.group(3)
    if node["type"] == "switch":
        port["guid"] = node["port_guid"]
    node["ports"].append(port)


def parse(text):
    """The fabric in a topology file: ``switches``, ``hcas`` (CAs and routers), ``links`` and where it was seen from.

    Every GUID is ``0x`` and 16 hex digits. Links appear once (each is printed from both ends),
    sorted, with both ends (``guid``, ``port``, ``type``) and the width and speed of the link.
    Raises ValueError when the text holds no node at all.
    """
    nodes, order = {}, []
    ids, current = {}, None
    seen_from = {"node_guid": None, "port_guid": None}
    for raw in (text or "").splitlines():
        line = raw.strip()
        if not line:
            continue
        if line.startswith("#"):
            found = _FROM.search(line)
            if found:
                seen_from = {"node_guid": guid(found.group(1)), "port_guid": guid(found.group(2))}
            continue
        key = _KEY.match(line)
        if key:
            name, value, extra = key.groups()
            if name == "vendid":
                ids, current = {}, None  # each node's block starts with vendid
            if name in ("vendid", "devid"):
                ids[name] = "0x%x" % int(value, 16)
            elif name == "sysimgguid":
                ids[name] = guid(value)
            else:
                ids["node_guid"] = guid(value)
                if extra:
                    ids["port_guid"] = guid(extra)
            continue
        node_line = _NODE.match(line)
        if node_line:
            kind, nports, _letter, node_guid, comment = node_line.groups()
            node_guid = guid(node_guid)
            current = nodes.get(node_guid)
            if current is None:
                current = _new_node(_TYPES[kind], int(nports), node_guid, ids)
                nodes[node_guid] = current
                order.append(node_guid)
            description, rest = _split_comment(comment)
            current["description"] = description
            tail = _SWITCH_TAIL.search(rest or "")
            if tail:
                current["lid"], current["lmc"] = int(tail.group(2)), int(tail.group(3))
            if current["type"] == "switch" and not current["port_guid"]:
                current["port_guid"] = node_guid
            ids = {}
            continue
        port_line = _PORT.match(line)
        if port_line and current is not None:
            _port_line(current, port_line)
        # anything else (Chassis headers, "Non-Chassis Nodes", vendor lines) carries no topology
    if not nodes:
        raise ValueError("no Switch or Ca line found: not the topology output of ibnetdiscover")
    return _result(nodes, order, seen_from)


def _fill_from_peers(nodes):
    """LIDs and port GUIDs a node's own lines leave out, from what its peers print about it."""
    for node in nodes.values():
        for port in node["ports"]:
            peer = nodes.get(port["peer_guid"])
            if peer is None:
                continue
            if peer["type"] == "switch":
                if peer["lid"] is None and port["peer_lid"] is not None:
                    peer["lid"] = port["peer_lid"]
                continue
            far = [p for p in peer["ports"] if p["port"] == port["peer_port"]]
            if not far:
                peer["ports"].append({"port": port["peer_port"], "guid": port["peer_port_guid"], "lid": port["peer_lid"],
                                      "lmc": None, "peer_guid": node["guid"], "peer_type": node["type"],
                                      "peer_port": port["port"], "peer_port_guid": port["guid"],
                                      "peer_description": node["description"], "peer_lid": None,
                                      "width": port["width"], "speed": port["speed"]})
                continue
            if far[0]["guid"] is None:
                far[0]["guid"] = port["peer_port_guid"]
            if far[0]["lid"] is None:
                far[0]["lid"] = port["peer_lid"]


def _result(nodes, order, seen_from):
    _fill_from_peers(nodes)
    switches, hcas, links, seen = [], [], [], set()
    for node_guid in order:
        node = nodes[node_guid]
        node["ports"].sort(key=lambda p: p["port"])
        for port in node["ports"]:
            ends = sorted([(node_guid, port["port"]), (port["peer_guid"], port["peer_port"])])
            if tuple(ends) in seen:
                continue
            seen.add(tuple(ends))
            peer = nodes.get(port["peer_guid"])
            links.append({
                "from": {"guid": ends[0][0], "port": ends[0][1], "type": (nodes.get(ends[0][0]) or {}).get("type", port["peer_type"])},
                "to": {"guid": ends[1][0], "port": ends[1][1], "type": (nodes.get(ends[1][0]) or {}).get("type", port["peer_type"])},
                "width": port["width"],
                "speed": port["speed"],
                "complete": peer is not None,
            })
        if node["type"] == "switch":
            switches.append({key: node[key] for key in ("guid", "description", "num_ports", "sys_image_guid", "vendor_id",
                                                        "device_id", "lid", "lmc", "port_guid")})
        else:
            entry = {key: node[key] for key in ("type", "guid", "description", "num_ports", "sys_image_guid", "vendor_id", "device_id")}
            entry["ports"] = [{key: port[key] for key in ("port", "guid", "lid", "lmc")} for port in node["ports"]]
            entry["port_guids"] = [port["guid"] for port in node["ports"] if port["guid"]]
            entry["lids"] = [port["lid"] for port in node["ports"] if port["lid"] is not None]
            hcas.append(entry)
    links.sort(key=lambda link: (link["from"]["guid"], link["from"]["port"], link["to"]["guid"], link["to"]["port"]))
    return {"switches": switches, "hcas": hcas, "links": links, "seen_from": seen_from}


def lids(topology):
    """Every LID of the fabric: LID -> (node GUID, port GUID or None) (a switch answers on its port 0 LID)."""
    out = {}
    for switch in topology.get("switches") or []:
        if switch.get("lid") is not None:
            out[switch["lid"]] = (switch["guid"], switch.get("port_guid"))
    for hca in topology.get("hcas") or []:
        for port in hca.get("ports") or []:
            if port.get("lid") is not None:
                count = 1 << (port.get("lmc") or 0)
                for offset in range(count):
                    out[port["lid"] + offset] = (hca["guid"], port.get("guid"))
    return out
