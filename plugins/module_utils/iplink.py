# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""``ip link`` (iproute2) for the VFs of a PF: build the argv, parse the text.

Used where the upstream mlx5 driver sets an InfiniBand VF's GUIDs through netlink
(``IFLA_VF_IB_NODE_GUID``/``IFLA_VF_IB_PORT_GUID``), that is, where the PF has no
MLNX_OFED ``sriov/<n>/`` directory in sysfs. ``ip link show <pf>`` prints one line per VF::

    vf 0     link/infiniband 00:00:00:00:...  brd 00:ff:..., spoof checking off, NODE_GUID 02:00:00:00:00:00:00:00, \
PORT_GUID 02:00:00:00:00:00:00:00, link-state enable, trust off, query_rss off

Older iproute2, and Ethernet PFs, print no GUIDs (``vf 0 MAC 00:00:00:00:00:00, ... link-state disable, ...``);
the parser reports them as None. Any amount of whitespace is accepted between the fields.
"""

from __future__ import annotations

import re

from ansible_collections.fabric.infiniband.plugins.module_utils import guid


# ip link's word for a VF's link state, and MLNX_OFED's sysfs ``sriov/<n>/policy`` for the same
LINK_STATES = ("auto", "enable", "disable")
OFED_POLICY = {"auto": "Follow", "enable": "Up", "disable": "Down"}
POLICY_LINK_STATE = {"follow": "auto", "up": "enable", "down": "disable", "auto": "auto"}

_VF_RE = re.compile(r"^\s*vf\s+(\d+)\b(.*)$")
_GUID_FIELD_RE = re.compile(r"\b(NODE_GUID|PORT_GUID)\s+([^\s,]+)")
_LINK_STATE_RE = re.compile(r"\blink-state\s+(\w+)")


def guid_bytes(value):
    """``0x0200000000000001`` -> ``02:00:00:00:00:00:00:01`` (the form ``ip link`` and the OFED sysfs take)."""
    return guid.colon_form(value)


def show_args(netdev):
    """``ip -d link show dev <netdev>``: the PF's line and one line per VF."""
    return ["-d", "link", "show", "dev", netdev]


def set_vf_args(netdev, index, node_guid=None, port_guid=None, link_state=None):
    """``ip link set dev <pf> vf <n> [node_guid G] [port_guid G] [state S]`` in one call; None when nothing to set."""
    args = ["link", "set", "dev", netdev, "vf", str(index)]
    if node_guid is not None:
        args += ["node_guid", guid_bytes(node_guid)]
    if port_guid is not None:
        args += ["port_guid", guid_bytes(port_guid)]
    if link_state is not None:
        args += ["state", link_state]
    return args if len(args) > 6 else None


def parse_vfs(text):
    """The VF lines of ``ip link show`` -> ``{index: {node_guid, port_guid, link_state}}``.

    GUIDs are ``0x``-prefixed 16-digit hex, None when the line has none (old iproute2,
    Ethernet); an all-zero GUID is kept as ``0x0000000000000000`` (set to nothing yet).
    """
    vfs = {}
    for line in (text or "").splitlines():
        match = _VF_RE.match(line)
        if not match:
            continue
        rest = match.group(2)
        entry = {"node_guid": None, "port_guid": None, "link_state": None}
        for name, value in _GUID_FIELD_RE.findall(rest):
            entry["node_guid" if name == "NODE_GUID" else "port_guid"] = guid.normalize(value)
        state = _LINK_STATE_RE.search(rest)
        if state:
            entry["link_state"] = state.group(1).lower()
        vfs[int(match.group(1))] = entry
    return vfs


def link_state_from_policy(policy):
    """MLNX_OFED ``sriov/<n>/policy`` (``Follow``, ``Up``, ``Down``) -> ``auto``, ``enable``, ``disable``."""
    if policy is None:
        return None
    return POLICY_LINK_STATE.get(policy.strip().lower())


def classify_set_error(rc, stdout, stderr):
    """A failed ``ip link set ... vf``: a short hint for the message, None when nothing specific."""
    if rc == 0:
        return None
    text = "%s\n%s" % (stdout or "", stderr or "")
    if "Operation not supported" in text:
        return ("the driver does not set VF GUIDs through netlink (an Ethernet PF, a driver without IB VF support, "
                "or MLNX_OFED, which takes them in sysfs: device/sriov/<n>/node and port)")
    if "Cannot find device" in text:
        return "the PF netdev is gone (renamed, or moved to another network namespace)"
    if "Invalid argument" in text:
        return "the kernel refused the VF index or the value (is the VF still there?)"
    if "Operation not permitted" in text:
        return "setting VF attributes needs root (become: true)"
    return None
