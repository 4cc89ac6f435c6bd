# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""OpenSM: the partitions file from inventory, the ports it binds to, and what its log says.

Pure functions (no I/O) behind the ``opensm_*`` filters of the opensm role:

- ``check_partitions()`` validates ``opensm_partitions`` and ``opensm_default_partition`` and
  returns the inventory hosts whose port GUIDs the members need (discovered with hca_info);
- ``render_partitions()`` resolves the members to port GUIDs and writes ``partitions.conf``
  in the grammar of OpenSM's ``doc/partition-config.txt``;
- ``port_guids()`` picks the InfiniBand ports of a host's physical functions from hca_info;
- ``log_check()`` reads the part of OpenSM's log written since a reload or restart.

Every error is a ``ValueError`` whose message names the variable and the accepted values: the
role fails on it before anything is written.
"""

from __future__ import annotations

import re

from ansible_collections.fabric.infiniband.plugins.module_utils import guid
from ansible_collections.fabric.infiniband.plugins.module_utils import values

DEFAULT_PKEY = values.DEFAULT_PKEY
PKEY_MIN, PKEY_MAX = values.PKEY_MIN, values.PKEY_MAX
# The P_Key table of a ConnectX port holds 128 entries, the Default partition included.
MAX_PKEYS_PER_PORT = 128
MEMBERSHIPS = ("full", "limited", "both")
FUNCTIONS = ("all", "pf", "vf")
KEYWORDS = ("ALL", "ALL_CAS", "ALL_SWITCHES", "ALL_ROUTERS", "SELF")
# Keywords that make every channel adapter port a member (for the per-port count).
_ALL_CA_KEYWORDS = ("ALL", "ALL_CAS")
# Multicast group parameters as IBA encodes them: MTU in bytes and rate in Gb/s to their codes.
MTU_CODES = {256: 1, 512: 2, 1024: 3, 2048: 4, 4096: 5}
RATE_CODES = {2.5: 2, 10: 3, 30: 4, 5: 5, 20: 6, 40: 7, 60: 8, 80: 9, 120: 10, 14: 11, 56: 12, 112: 13,
              168: 14, 25: 15, 100: 16, 200: 17, 300: 18, 28: 19, 50: 20, 400: 21, 600: 22}
_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.+-]{0,63}$")
_PARTITION_KEYS = ("name", "pkey", "ipoib", "mtu", "rate", "sl", "scope", "defmember", "members")
_DEFAULT_KEYS = ("membership", "ipoib", "mtu", "rate", "sl", "scope")
_MEMBER_KEYS = ("guid", "host", "group", "membership", "functions")
# OpenSM's log lines about the partition configuration that mean it was not applied as written
# (osm_prtn_config.c, osm_prtn.c, osm_pkey_mgr.c): parse errors and warnings, the fallback to the
# default configuration, and errors (level 0x01) of the functions that build the P_Key tables.
_LOG_ERRORS = re.compile(
    r"PARSE ERROR|PARSE WARN|Partition configuration in error|"
    r" 0x01 -> [a-z_]*(?:prtn|part|pkey)[a-z_]*:", re.IGNORECASE)
_LOG_STATE = re.compile(r"Entering ([A-Z-]+) state")


def _fmt_list(values):
    return ", ".join(str(v) for v in values)


def normalize_guid(value, where, exact=True):
    """A port GUID in normal form (``0x`` and 16 lower-case digits): the collection's one grammar (module_utils/guid.py).
    ``exact=False`` for the GUIDs of facts (what the tools printed)."""
    return guid.require(value, where, "port GUID", exact=exact)


def parse_pkey(value, where):
    """A partition key: the collection's one grammar (module_utils/values.py), the same in every role."""
    return values.parse_pkey(value, where)


def _check_bool(value, where):
    return values.parse_bool(value, where)


def _check_choice(value, choices, where):
    if value not in choices:
        raise ValueError("%s: %r is not accepted; accepted: %s" % (where, value, _fmt_list(choices)))
    return value


def _check_int(value, low, high, where, hint=""):
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValueError("%s: %r is not accepted; accepted: an integer from %d to %d%s" % (where, value, low, high, hint))
    return value


def _unknown_keys(entry, allowed, where):
    unknown = sorted(set(entry) - set(allowed))
    if unknown:
        raise ValueError("%s: unknown key(s) %s; accepted: %s" % (where, _fmt_list(unknown), _fmt_list(allowed)))


def _mcast_flags(entry, where):
    """The multicast group parameters of a partition (``ipoib`` first), as ``key=code`` strings."""
    flags = []
    if _check_bool(entry.get("ipoib", False), where + ".ipoib"):
        flags.append("ipoib")
    if entry.get("mtu") is not None:
        mtu = entry["mtu"]
        if isinstance(mtu, bool) or mtu not in MTU_CODES:
            raise ValueError("%s.mtu: %r is not accepted; accepted (bytes): %s" % (where, mtu, _fmt_list(sorted(MTU_CODES))))
        flags.append("mtu=%d" % MTU_CODES[mtu])
    if entry.get("rate") is not None:
        rate = entry["rate"]
        if isinstance(rate, bool) or not isinstance(rate, (int, float)) or rate not in RATE_CODES:
            raise ValueError("%s.rate: %r is not accepted; accepted (Gb/s): %s" % (where, rate, _fmt_list(sorted(RATE_CODES))))
        flags.append("rate=%d" % RATE_CODES[rate])
    if entry.get("sl") is not None:
        flags.append("sl=%d" % _check_int(entry["sl"], 0, 15, where + ".sl"))
    if entry.get("scope") is not None:
        flags.append("scope=%d" % _check_int(entry["scope"], 1, 15, where + ".scope", " (2 link-local, 5 site-local, 8 organization-local, 14 global)"))
    return flags


def _membership(value, allow_both, where):
    _check_choice(value, MEMBERSHIPS, where)
    if value == "both" and not allow_both:
        raise ValueError("%s: 'both' needs opensm_allow_both_pkeys: true; accepted: full, limited" % where)
    return value


def _parse_member(member, groups, hosts, allow_both, where):
    """One member as a dict: exactly one of guid/host/group/keyword, membership, functions."""
    if isinstance(member, str):
        text = member.strip()
        if text in KEYWORDS:
            return {"keyword": text, "membership": None, "functions": "all"}
        if text.lower().startswith("0x"):
            return {"guid": normalize_guid(text, where), "membership": None, "functions": "all"}
        if text in hosts:
            return {"host": text, "membership": None, "functions": "all"}
        if text in groups:
            return {"group": text, "membership": None, "functions": "all"}
        if ":" in text or text.isdigit():
            # a GUID in bytes, or digits (hex without 0x, or a YAML number made text)
            return {"guid": normalize_guid(text, where), "membership": None, "functions": "all"}
        raise ValueError(
            "%s: %r is neither a port GUID (0x...), an inventory host, an inventory group nor one of %s"
            % (where, member, _fmt_list(KEYWORDS)))
    if isinstance(member, (int, float)) and not isinstance(member, bool):
        # an unquoted GUID, made a number by YAML: refused with what to write
        normalize_guid(member, where)
    if not isinstance(member, dict):
        raise ValueError("%s: %r is not accepted; accepted: a string (port GUID, host, group or keyword) or a dict with "
                         "one of guid, host, group" % (where, member))
    _unknown_keys(member, _MEMBER_KEYS, where)
    given = [key for key in ("guid", "host", "group") if member.get(key) is not None]
    if len(given) != 1:
        raise ValueError("%s: give exactly one of guid, host, group (got %s)" % (where, _fmt_list(given) or "none"))
    parsed = {"membership": None, "functions": _check_choice(member.get("functions", "all"), FUNCTIONS, where + ".functions")}
    if member.get("membership") is not None:
        parsed["membership"] = _membership(member["membership"], allow_both, where + ".membership")
    if "guid" in given:
        parsed["guid"] = normalize_guid(member["guid"], where + ".guid")
    elif "host" in given:
        if member["host"] not in hosts:
            raise ValueError("%s.host: %r is not a host of the inventory" % (where, member["host"]))
        parsed["host"] = member["host"]
    else:
        if member["group"] not in groups:
            raise ValueError("%s.group: %r is not a group of the inventory; groups: %s"
                             % (where, member["group"], _fmt_list(sorted(g for g in groups if g not in ("all", "ungrouped")))))
        parsed["group"] = member["group"]
    return parsed


def _check_default(default, allow_both):
    where = "opensm_default_partition"
    if not isinstance(default, dict):
        raise ValueError("%s: %r is not accepted; accepted: a dict with keys %s" % (where, default, _fmt_list(_DEFAULT_KEYS)))
    _unknown_keys(default, _DEFAULT_KEYS, where)
    membership = default.get("membership", "full")
    _check_choice(membership, ("full", "limited"), where + ".membership")
    # IPoIB runs on the Default partition unless asked otherwise.
    return {"membership": membership, "flags": _mcast_flags(dict({"ipoib": True}, **default), where)}


def _check_all(partitions, groups, hosts, default, allow_both):
    """Validate everything that needs no port GUID; the partitions with their members parsed."""
    groups = groups or {}
    hosts = set(hosts or [])
    if not isinstance(partitions, list):
        raise ValueError("opensm_partitions: %r is not accepted; accepted: a list of dicts" % (partitions,))
    checked_default = _check_default(default if default is not None else {}, allow_both)
    parsed, names, keys = [], {}, {}
    for index, entry in enumerate(partitions):
        where = "opensm_partitions[%d]" % index
        if not isinstance(entry, dict):
            raise ValueError("%s: %r is not accepted; accepted: a dict with keys %s" % (where, entry, _fmt_list(_PARTITION_KEYS)))
        name = entry.get("name")
        if not isinstance(name, str) or not _NAME.match(name):
            raise ValueError("%s.name: %r is not accepted; accepted: 1 to 64 letters, digits, '_', '.', '+', '-' "
                             "(not starting with '.', '+' or '-')" % (where, name))
        where = "opensm_partitions[%d] (%s)" % (index, name)
        _unknown_keys(entry, _PARTITION_KEYS, where)
        if name.lower() == "default":
            raise ValueError("%s.name: the Default partition is always there; set it with opensm_default_partition" % where)
        if name in names:
            raise ValueError("%s.name: %s is also the name of opensm_partitions[%d]; names must be unique" % (where, name, names[name]))
        names[name] = index
        if "pkey" not in entry:
            raise ValueError("%s.pkey: missing; accepted: 0x0001 to 0x7ffe" % where)
        pkey = parse_pkey(entry["pkey"], where + ".pkey")
        if pkey in keys:
            raise ValueError("%s.pkey: 0x%04x is also the P_Key of opensm_partitions[%d]; P_Keys must be unique" % (where, pkey, keys[pkey]))
        keys[pkey] = index
        defmember = entry.get("defmember")
        if defmember is not None:
            _membership(defmember, allow_both, where + ".defmember")
        members = entry.get("members", [])
        if not isinstance(members, list):
            raise ValueError("%s.members: %r is not accepted; accepted: a list" % (where, members))
        parsed.append({
            "name": name, "pkey": pkey, "flags": _mcast_flags(entry, where), "defmember": defmember,
            "members": [_parse_member(m, groups, hosts, allow_both, "%s.members[%d]" % (where, i)) for i, m in enumerate(members)],
        })
    return parsed, checked_default


def _hosts_of(member, groups):
    if "host" in member:
        return [member["host"]]
    if "group" in member:
        return list(groups.get(member["group"], []))
    return []


def check_partitions(partitions, groups=None, hosts=None, default=None, allow_both=False):
    """Validate; return the inventory hosts (sorted) whose port GUIDs the members need."""
    allow_both = values.parse_bool(allow_both, "opensm_allow_both_pkeys")
    parsed, _default = _check_all(partitions, groups, hosts, default, allow_both)
    needed = set()
    for partition in parsed:
        for member in partition["members"]:
            needed.update(_hosts_of(member, groups or {}))
    return sorted(needed)


_STRENGTH = {"limited": 1, "full": 2, "both": 3}


def render_partitions(partitions, pf_guids=None, vf_guids=None, groups=None, hosts=None, default=None, allow_both=False, header=None):
    """``partitions.conf`` and a summary, from the inventory's partitions and the members' GUIDs.

    ``pf_guids`` maps each inventory host that members name to the port GUIDs of its physical
    functions (discovered), ``vf_guids`` a host to its VF GUIDs (the sriov role's facts).  A GUID
    listed more than once in a partition keeps the strongest membership (full over limited).
    """
    pf_guids = pf_guids or {}
    vf_guids = vf_guids or {}
    groups = groups or {}
    allow_both = values.parse_bool(allow_both, "opensm_allow_both_pkeys")
    parsed, checked_default = _check_all(partitions, groups, hosts if hosts is not None else list(pf_guids), default, allow_both)
    lines = ["# " + line if line else "#" for line in (header or "").splitlines()]
    lines.append("# Default partition: every port; the subnet manager's own port as a full member.")
    lines.append("Default=0x%04x%s : ALL=%s, ALL_SWITCHES=full, SELF=full ;"
                 % (DEFAULT_PKEY, "".join(", " + f for f in checked_default["flags"]), checked_default["membership"]))
    summary, per_port, all_ca = [], {}, 1  # the Default partition counts on every port
    warnings = []
    for partition in parsed:
        guids, keywords = {}, {}
        for member in partition["members"]:
            membership = member["membership"]
            if "keyword" in member:
                keywords[member["keyword"]] = membership
                continue
            if "guid" in member:
                found = [member["guid"]]
            else:
                found = []
                for host in _hosts_of(member, groups):
                    if host not in pf_guids:
                        raise ValueError("opensm_partitions (%s): the port GUIDs of %s are not known (not discovered)" % (partition["name"], host))
                    if member["functions"] in ("all", "pf"):
                        found += [normalize_guid(g, "port GUID of %s" % host, exact=False) for g in pf_guids[host] or []]
                    if member["functions"] in ("all", "vf"):
                        found += [normalize_guid(g, "sriov_vf_guids of %s" % host, exact=False) for g in vf_guids.get(host) or []]
            for port_guid in found:
                old = guids.get(port_guid, "unset")
                if old == "unset" or _STRENGTH.get(membership or "", 0) > _STRENGTH.get(old or "", 0):
                    guids[port_guid] = membership
        definition = "%s=0x%04x" % (partition["name"], partition["pkey"])
        definition += "".join(", " + f for f in partition["flags"])
        if partition["defmember"]:
            definition += ", defmember=" + partition["defmember"]
        ports = ["%s=%s" % (k, m) if m else k for k, m in keywords.items()]
        ports += ["%s=%s" % (g, m) if m else g for g, m in guids.items()]
        if not ports:
            warnings.append("partition %s (0x%04x) has no member yet; left out of partitions.conf" % (partition["name"], partition["pkey"]))
            lines.append("# %s : no member yet (left out)" % definition)
        else:
            lines.append("%s : %s ;" % (definition, ", ".join(ports)))
        if any(k in _ALL_CA_KEYWORDS for k in keywords):
            all_ca += 1
        for port_guid in guids:
            per_port[port_guid] = per_port.get(port_guid, 0) + 1
        summary.append({"name": partition["name"], "pkey": "0x%04x" % partition["pkey"], "guids": sorted(guids),
                        "keywords": sorted(keywords), "flags": partition["flags"]})
    worst = max([count + all_ca for count in per_port.values()] + [all_ca])
    if worst > MAX_PKEYS_PER_PORT:
        crowded = sorted(g for g, count in per_port.items() if count + all_ca > MAX_PKEYS_PER_PORT) or ["every port"]
        raise ValueError("opensm_partitions: %s would be in %d partitions (the Default one included); accepted: at most %d per port"
                         % (_fmt_list(crowded), worst, MAX_PKEYS_PER_PORT))
    return {"content": "\n".join(lines) + "\n", "partitions": summary, "max_per_port": worst, "warnings": warnings}


def port_guids(hca_info):
    """Port GUIDs of the InfiniBand ports of a host's physical functions, in hca_info's order."""
    guids = []
    for hca in (hca_info or {}).get("hcas", []):
        if hca.get("is_vf"):
            continue
        for port in hca.get("ports", []):
            if port.get("link_layer") == "InfiniBand" and port.get("port_guid"):
                found = normalize_guid(port["port_guid"], "port GUID of %s" % hca.get("rdma_device"), exact=False)
                if found not in guids:
                    guids.append(found)
    return guids


def log_check(text):
    """What OpenSM logged: the SM states it entered, whether a sweep completed, partition errors."""
    lines = (text or "").splitlines()
    return {
        "states": [m.group(1) for m in (_LOG_STATE.search(line) for line in lines) if m],
        "subnet_up": any("SUBNET UP" in line for line in lines),
        "errors": [line.strip() for line in lines if _LOG_ERRORS.search(line)],
    }
