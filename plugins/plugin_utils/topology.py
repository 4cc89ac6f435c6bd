# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The topology role's decisions, pure: the fabric's tree for Slurm and Kubernetes (docs: plugins/modules/topology.py).

Input: the fabric as ``fabric_topology_info`` returns it (``module_utils/ibnetdiscover.parse``: ``switches``, ``hcas``,
``links``) and the inventory's hosts. Output: the leaf switches with their hosts, the switches above them with their
children, Slurm's ``topology.conf`` text, the node labels, and what could not be placed (inventory hosts the fabric
does not show, fabric hosts the inventory does not name): reported, never guessed.

The fabric also travels as the run-stamped host fact ``infiniband_fabric`` (:func:`fabric_fact`), published by the verify
role on the host that discovered it; the topology role takes a current one from any host (:func:`current_fabric`) and
discovers the fabric itself only when there is none.
"""

from __future__ import annotations

import re

from ansible.errors import AnsibleError

from ansible_collections.fabric.infiniband.plugins.module_utils import guid as _guid_utils
from ansible_collections.fabric.infiniband.plugins.plugin_utils import node_state

MAP_BY = ("description", "port_guid")
SWITCH_NAMES = ("description", "guid")
DEFAULT_PATTERN = r"^(\S+)"
# Topograph's (NVIDIA) keys for the tree's tiers, which KAI Scheduler reads and a Kueue Topology names as its levels.
DEFAULT_LABELS = {"leaf": "network.topology.nvidia.com/leaf", "spine": "network.topology.nvidia.com/spine"}
OWNER_ANNOTATION = "fabric.infiniband/topology-labels"
_SLURM_NAME = re.compile(r"[^A-Za-z0-9_.-]+")
# a qualified name of a Kubernetes label key: [prefix/]name, prefix a DNS subdomain, name 1-63 characters
_LABEL_NAME = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9_.-]{0,61}[A-Za-z0-9])?$")
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$")
_LABEL_VALUE = re.compile(r"[^A-Za-z0-9_.-]+")


def label_key_problem(key):
    """Why ``key`` is not a valid Kubernetes label key, or None."""
    if not isinstance(key, str) or not key:
        return "an empty key"
    prefix, _sep, name = key.rpartition("/")
    if _sep and (len(prefix) > 253 or not _DNS_SUBDOMAIN.match(prefix)):
        return "prefix %r is not a DNS subdomain" % prefix
    if not _LABEL_NAME.match(name):
        return "name %r is not 1-63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit" % name
    return None


def check(settings):
    """The role's settings that the argument spec cannot judge; a list of problems naming the variable."""
    problems = []
    pattern = settings.get("topology_hca_name_pattern", DEFAULT_PATTERN)
    try:
        compiled = re.compile(pattern)
        if compiled.groups < 1:
            problems.append("topology_hca_name_pattern must have a group that captures the host name, got %r" % pattern)
    except (re.error, TypeError) as exc:
        problems.append("topology_hca_name_pattern is not a regular expression (%s): %r" % (exc, pattern))
    if settings.get("topology_map_by", "description") not in MAP_BY:
        problems.append("topology_map_by must be one of %s, got %r" % (", ".join(MAP_BY), settings.get("topology_map_by")))
    if settings.get("topology_switch_names", "description") not in SWITCH_NAMES:
        problems.append("topology_switch_names must be one of %s, got %r"
                        % (", ".join(SWITCH_NAMES), settings.get("topology_switch_names")))
    labels = settings.get("topology_k8s_labels", DEFAULT_LABELS)
    if not isinstance(labels, dict):
        problems.append("topology_k8s_labels must be a mapping with the keys leaf and spine, got %r" % (labels,))
    else:
        for level in sorted(set(labels) - set(DEFAULT_LABELS)):
            problems.append("topology_k8s_labels has an unknown level %r (accepted: leaf, spine)" % level)
        for level in ("leaf", "spine"):
            if level in labels and labels[level] is not None:
                why = label_key_problem(labels[level])
                if why:
                    problems.append("topology_k8s_labels.%s is not a Kubernetes label key: %s" % (level, why))
    aliases = settings.get("topology_switch_aliases") or {}
    if not isinstance(aliases, dict):
        problems.append("topology_switch_aliases must be a mapping of switch GUID to name, got %r" % (aliases,))
    else:
        for guid_text, name in sorted(aliases.items(), key=str):
            if _guid_utils.normalize(str(guid_text)) is None:
                problems.append(_guid_utils.bad_guid(guid_text, "topology_switch_aliases:"))
            if not isinstance(name, str) or not name or _SLURM_NAME.search(name):
                problems.append("topology_switch_aliases[%s] must be a name of letters, digits, '_', '.', '-', got %r"
                                % (guid_text, name))
    return problems


def _guid(text):
    """A GUID from the tools or the aliases in its normal form (module_utils/guid.py)."""
    return _guid_utils.normalize(str(text)) or str(text)


def switch_names(switches, mode="description", aliases=None):
    """GUID -> a name Slurm accepts, stable over runs: the alias, the description's switch name, or ``ib-<GUID>``.

    A description such as ``MF0;spine01:MQM8700/U1`` (a managed switch) gives ``spine01``; any other its first word,
    with what Slurm does not accept in a name replaced. Empty or ambiguous names fall back to the GUID.
    """
    aliases = {_guid(k): v for k, v in (aliases or {}).items()}
    names = {}
    for switch in switches:
        guid = _guid(switch["guid"])
        name = None
        if guid in aliases:
            name = aliases[guid]
        elif mode == "description":
            text = (switch.get("description") or "").strip()
            managed = re.match(r"^MF0;([^:]+):", text)
            word = managed.group(1) if managed else (text.split() or [""])[0]
            name = _SLURM_NAME.sub("-", word).strip("-") or None
        names[guid] = name
    seen = {}
    for guid, name in names.items():
        seen.setdefault(name, []).append(guid)
    for name, guids in seen.items():
        if name is None or len(guids) > 1:
            for guid in guids:
                if guid not in aliases:
                    names[guid] = "ib-%s" % guid[2:]
    return names


def host_ports(hcas, inventory, map_by="description", pattern=DEFAULT_PATTERN, guids=None):
    """CA node GUID -> inventory host, and the fabric names the inventory does not hold.

    ``map_by: description``: the group of ``pattern`` in the CA's node description (``node01 mlx5_0`` -> ``node01``),
    compared with the inventory names and their short names. ``map_by: port_guid``: the CA's port GUIDs against
    ``guids`` (host -> port GUIDs, from each host's fact infiniband_hca).
    """
    inventory = list(inventory)
    short = {}
    for host in inventory:
        short.setdefault(host, host)
        short.setdefault(host.split(".")[0], host)
    by_guid = {}
    for host, values in (guids or {}).items():
        for value in values or []:
            by_guid[_guid(value)] = host
    compiled = re.compile(pattern)
    mapped, unknown = {}, []
    for hca in hcas:
        if hca.get("type", "ca") != "ca":
            continue
        host = None
        if map_by == "port_guid":
            for value in hca.get("port_guids") or []:
                host = host or by_guid.get(_guid(value))
            label = hca.get("description") or hca["guid"]
        else:
            found = compiled.search(hca.get("description") or "")
            label = found.group(1) if found else (hca.get("description") or hca["guid"])
            host = short.get(label) or short.get(label.split(".")[0]) if found else None
        if host:
            mapped[_guid(hca["guid"])] = host
        elif label not in unknown:
            unknown.append(label)
    return mapped, unknown


def tree(fabric, inventory, map_by="description", pattern=DEFAULT_PATTERN, guids=None, switch_mode="description",
         aliases=None):
    """The fabric's tree: ``levels`` (level 0 = leaves: name -> hosts; level n: name -> switches of level n-1), the
    switches of each host, and the reports ``missing`` (inventory hosts not found) and ``unknown`` (fabric hosts not in
    the inventory)."""
    switches = fabric.get("switches") or []
    names = switch_names(switches, switch_mode, aliases)
    mapped, unknown = host_ports(fabric.get("hcas") or [], inventory, map_by, pattern, guids)
    kinds = {_guid(s["guid"]): "switch" for s in switches}
    neighbours = {guid: set() for guid in kinds}
    leaf_hosts = {}
    for link in fabric.get("links") or []:
        a, b = _guid(link["from"]["guid"]), _guid(link["to"]["guid"])
        for here, there in ((a, b), (b, a)):
            if here not in kinds:
                continue
            if there in kinds:
                neighbours[here].add(there)
            elif there in mapped:
                leaf_hosts.setdefault(here, set()).add(mapped[there])
            else:
                # a CA the inventory does not name still makes its switch a leaf
                leaf_hosts.setdefault(here, set())
    level = {guid: 0 for guid in leaf_hosts}
    frontier, depth = set(leaf_hosts), 0
    while frontier:
        depth += 1
        above = set()
        for guid in frontier:
            above |= {n for n in neighbours[guid] if n not in level}
        for guid in above:
            level[guid] = depth
        frontier = above
    levels = []
    for depth in range(max(level.values()) + 1 if level else 0):
        members = {}
        for guid in sorted(g for g, d in level.items() if d == depth):
            if depth == 0:
                children = sorted(leaf_hosts[guid])
            else:
                children = sorted(names[n] for n in neighbours[guid] if level.get(n) == depth - 1 and names[n] in levels[-1])
            if children:
                members[names[guid]] = children
        levels.append(members)
    host_leaves, host_spines = {}, {}
    for leaf, hosts in (levels[0] if levels else {}).items():
        for host in hosts:
            host_leaves.setdefault(host, []).append(leaf)
    if len(levels) > 1:
        for spine, leaves in levels[1].items():
            for leaf in leaves:
                for host in levels[0][leaf]:
                    if spine not in host_spines.setdefault(host, []):
                        host_spines[host].append(spine)
    found = set(mapped.values())
    return {"levels": levels, "leaves": host_leaves, "spines": host_spines,
            "missing": sorted(h for h in inventory if h not in found), "unknown": sorted(unknown)}


def topology_conf(levels, source="fabric.infiniband.topology"):
    """Slurm's topology.conf (topology/tree) for ``levels``, leaves first."""
    lines = ["# Managed by %s from the InfiniBand fabric (ibnetdiscover); local changes are replaced." % source]
    for depth, members in enumerate(levels):
        key = "Nodes" if depth == 0 else "Switches"
        for name in sorted(members):
            lines.append("SwitchName=%s %s=%s" % (name, key, ",".join(members[name])))
    return "\n".join(lines) + "\n"


def _label_value(name):
    value = _LABEL_VALUE.sub("-", name)[:63].strip("-_.")
    return value


def labels(result, keys=None):
    """host -> {label key: value} for the hosts placed: the leaf (spine) when all the host's ports share it.

    A host on several leaves (or spines) gets no label for that level (its ``multi`` entry says so): one value per
    node is all a label holds, and picking one would be a guess.
    """
    keys = dict(DEFAULT_LABELS if keys is None else keys)
    out, multi = {}, {}
    for host in sorted(set(result["leaves"]) | set(result["spines"])):
        out[host] = {}
        for level, placed in (("leaf", result["leaves"]), ("spine", result["spines"])):
            key = keys.get(level)
            values = placed.get(host) or []
            if not key or not values:
                continue
            if len(values) == 1:
                out[host][key] = _label_value(values[0])
            else:
                multi.setdefault(host, {})[level] = sorted(values)
    return out, multi


def label_patch(current_labels, current_annotations, wanted, keys):
    """The merge patch of one Node: set ``wanted``, remove the keys this role set before (named in its annotation) or
    owns (``keys``) that ``wanted`` no longer holds; None when nothing changes. Other labels are never touched."""
    current_labels = current_labels or {}
    owned = set(k for k in (current_annotations or {}).get(OWNER_ANNOTATION, "").split(",") if k)
    owned |= set(k for k in keys if k)
    patch = {}
    for key, value in wanted.items():
        if current_labels.get(key) != value:
            patch[key] = value
    for key in sorted(owned - set(wanted)):
        if key in current_labels:
            patch[key] = None
    annotation = ",".join(sorted(wanted))
    annotations = {}
    if (current_annotations or {}).get(OWNER_ANNOTATION) != (annotation or None):
        annotations[OWNER_ANNOTATION] = annotation or None
    if not patch and not annotations:
        return None
    metadata = {}
    if patch:
        metadata["labels"] = patch
    if annotations:
        metadata["annotations"] = annotations
    return {"metadata": metadata}


def plan(fabric, inventory, settings, guids=None):
    """Everything the role decides, from the settings (checked by :func:`check`)."""
    problems = check(settings)
    if problems:
        raise AnsibleError(" ".join(p.rstrip(".") + "." for p in problems) + " Nothing was changed.")
    result = tree(fabric, inventory, settings.get("topology_map_by", "description"),
                  settings.get("topology_hca_name_pattern", DEFAULT_PATTERN), guids,
                  settings.get("topology_switch_names", "description"), settings.get("topology_switch_aliases"))
    keys = settings.get("topology_k8s_labels", DEFAULT_LABELS)
    node_labels, multi = labels(result, keys)
    result.update(conf=topology_conf(result["levels"]), labels=node_labels, multi=multi)
    return result


def fabric_fact(found, run_id, host):
    """The fact ``infiniband_fabric`` of a discovery (``fabric_topology_info``'s result ``found`` on ``host``): what
    :func:`plan` reads of it (switches: guid, description; CAs: type, guid, description, port_guids; links: both ends' guid
    and port), stamped with the run (``run_id``) and the host. About a third of the module's result (LIDs, vendor and
    device ids, link widths and speeds left out), since a fact cache keeps it; None when the discovery failed."""
    if not isinstance(found, dict) or found.get("failed") or "switches" not in found:
        return None

    def end(value):
        return {"guid": value.get("guid"), "port": value.get("port")}

    return {
        "run_id": run_id,
        "host": host,
        "switches": [{"guid": s.get("guid"), "description": s.get("description")} for s in found.get("switches") or []],
        "hcas": [{"type": h.get("type", "ca"), "guid": h.get("guid"), "description": h.get("description"),
                  "port_guids": list(h.get("port_guids") or [])} for h in found.get("hcas") or []],
        "links": [{"from": end(link.get("from") or {}), "to": end(link.get("to") or {})} for link in found.get("links") or []],
    }


def fabric_candidates(discover_from, here, groups):
    """The hosts whose fact ``infiniband_fabric`` the topology role looks at, in order: ``topology_discover_from``, this host,
    the subnet manager hosts and the InfiniBand nodes (where the verify role discovers, verify_topology_host aside), then
    every other host of the inventory."""
    groups = groups or {}
    out = []
    for host in [discover_from, here] + list(groups.get("opensm") or []) + list(groups.get("ib_nodes") or []) \
            + list(groups.get("all") or []):
        if host and host not in out:
            out.append(host)
    return out


def current_fabric(candidates, read, run=None):
    """``(host, fact)`` of the first host of ``candidates`` whose fact ``infiniband_fabric`` (``read(host)``) is current
    for this run (``node_state.is_current``: stamped with this run), or ``(None, None)``."""
    for host in candidates:
        fact = read(host)
        if isinstance(fact, dict) and "switches" in fact and node_state.is_current(fact, run=run):
            return host, fact
    return None, None
