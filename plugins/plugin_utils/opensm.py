# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The opensm role's checks on the controller, before any change (plugin_utils/controller_checks.py runs them: the role's
first task and the run's preflight).

- the partitions (module_utils/opensm.py: names, P_Keys in the collection's one grammar, members, limits);
- :func:`port_guid_problems`: each GUID of ``opensm_port_guids`` must be a port of this host: one that another host owns
  (a port or VF GUID in its adapters' reading, its ``sriov_vf_guids``, or the ``opensm_port_guids`` its inventory gives
  it) is refused, as is one this host's own reading of this run does not have.
"""

from __future__ import annotations

from collections.abc import Mapping

from ansible_collections.fabric.infiniband.plugins.module_utils import opensm
from ansible_collections.fabric.infiniband.plugins.module_utils import values

GIVEN = "opensm_port_guids"


def _guid(value):
    try:
        return opensm.normalize_guid(value, "guid", exact=False)
    except ValueError:
        return None


def hca_guids(hca):
    """Every port GUID of a host's adapters' reading (infiniband_hca): every port of every function, VFs included."""
    out = set()
    for entry in (hca or {}).get("hcas") or [] if isinstance(hca, Mapping) else []:
        for port in entry.get("ports") or []:
            guid = _guid(port.get("port_guid")) if isinstance(port, Mapping) and port.get("port_guid") else None
            if guid:
                out.add(guid)
    return out


def _vf_guids(published):
    """The GUIDs in what the sriov role published (a list of GUIDs, or of mappings with ``guid``, or a mapping of those)."""
    out = set()
    if isinstance(published, Mapping):
        items = [published["guid"]] if "guid" in published else list(published.values())
    else:
        items = list(published) if isinstance(published, (list, tuple)) else []
    for item in items:
        if isinstance(item, (list, tuple, Mapping)):
            out |= _vf_guids(item)
        elif isinstance(item, str):
            guid = _guid(item)
            if guid:
                out.add(guid)
    return out


def owners(others):
    """``{guid: [(host, where)]}`` from ``others``: host name to ``{hca, vf_guids, port_guids}`` (its infiniband_hca, its
    sriov_vf_guids, its opensm_port_guids from the inventory; None where it has none)."""
    out = {}
    for host in sorted(others or {}):
        seen = others[host] or {}
        for guid in hca_guids(seen.get("hca")):
            out.setdefault(guid, []).append((host, "a port of its adapters, infiniband_hca"))
        for guid in _vf_guids(seen.get("vf_guids")):
            out.setdefault(guid, []).append((host, "a VF GUID it published, sriov_vf_guids"))
        for value in seen.get("port_guids") or [] if isinstance(seen.get("port_guids"), (list, tuple)) else []:
            guid = _guid(value)
            if guid:
                out.setdefault(guid, []).append((host, "its opensm_port_guids in the inventory"))
    return out


def port_guid_problems(host, given, own_hca=None, own_current=False, others=None):
    """Sentences about ``opensm_port_guids`` of ``host``: GUIDs that are malformed, belong to another host (``others``, see
    :func:`owners`), or, when ``own_current`` (this host's reading is of this run), are no port of this host."""
    if not given:
        return []
    if not isinstance(given, (list, tuple)):
        return ["%s: %r is not accepted; accepted: a list of this host's port GUIDs (\"0x0c42a10300aa0010\"), or [] for every "
                "InfiniBand port of the host" % (GIVEN, given)]
    own = opensm.port_guids(own_hca) if isinstance(own_hca, Mapping) else []
    accepted = ("accepted: port GUIDs of %s's own InfiniBand ports (%s), or [] to bind to every one of them" % (
        host, ", ".join(own) if own else "its reading lists none yet"))
    claimed = owners(others)
    problems = []
    for index, value in enumerate(given):
        where = "%s[%d]" % (GIVEN, index)
        try:
            guid = opensm.normalize_guid(value, where)
        except ValueError as exc:
            problems.append(str(exc))
            continue
        if guid in claimed:
            problems.append("%s: %s belongs to %s, not to %s: OpenSM binds to a port of its own host, and would bind "
                            "nowhere, or the subnet would get a second SM on that port; %s" % (
                                where, guid, "; ".join("%s (%s)" % item for item in claimed[guid]), host, accepted))
        elif own_current and guid not in hca_guids(own_hca):
            problems.append("%s: %s is no port of %s (read in this run); %s" % (where, guid, host, accepted))
    return problems


def check(ctx):
    """The opensm role's controller checks of ``ctx``'s host (plugin_utils/controller_checks.py)."""
    problems = []
    groups = ctx.groups
    try:
        allow_both = values.parse_bool(ctx.var("opensm_allow_both_pkeys", False), "opensm_allow_both_pkeys")
        opensm.check_partitions(ctx.var("opensm_partitions") or [], groups=groups, hosts=groups.get("all") or [],
                                default=ctx.var("opensm_default_partition"), allow_both=allow_both)
    except ValueError as exc:
        problems.append(str(exc))
    others = dict((host, {"hca": ctx.fact(host, "infiniband_hca"), "vf_guids": ctx.fact(host, "sriov_vf_guids") or ctx.hostvar(host, "sriov_vf_guids"),
                          "port_guids": ctx.hostvar(host, GIVEN)}) for host in ctx.others())
    own = ctx.fact(ctx.host, "infiniband_hca")
    problems += port_guid_problems(ctx.host, ctx.var(GIVEN) or [], own_hca=own, own_current=ctx.current(own), others=others)
    return problems
