# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The opensm role's decisions on the controller: what its step (plugins/action/opensm.py) refuses, binds to, writes and
warns about. Pure functions, unit-tested; the step reads the node and runs the modules.

- :func:`setting_problems`: the settings the argument specs cannot judge (the priority and the group, the subnet prefix,
  the log flags, the keys of ``opensm_extra_options`` the role writes itself, virtualization without NVIDIA's OpenSM);
- :func:`partition_problems` and :func:`member_hosts`: the partitions (module_utils/opensm.py: names, P_Keys in the
  collection's one grammar, members, limits) and the inventory hosts whose port GUIDs their members need;
- :func:`port_guid_problems`: each GUID of ``opensm_port_guids`` must be a port of this host: one that another host owns
  (a port or VF GUID in its adapters' reading, its ``sriov_vf_guids``, or the ``opensm_port_guids`` its inventory gives
  it) is refused, as is one this host's own reading of this run does not have;
- :func:`plan`: the ports OpenSM binds to, the priority, partitions.conf, virtualization, the units and logs the handlers
  watch, and the warnings (partitions without a member yet, VFs that stay down);
- :func:`parts`: which of the role's parts (configure, install, service) the run's tags ask for.

Every check names the user's variable and what it accepts. The step runs them all before anything is written, and the
run's preflight (playbooks/preflight.yml) runs the same step with ``preflight: true``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from ansible_collections.fabric.infiniband.plugins.module_utils import opensm
from ansible_collections.fabric.infiniband.plugins.module_utils import values

ROLE = "opensm"
GIVEN = "opensm_port_guids"
CONF_PATH = "/etc/opensm/opensm.conf"
PARTITIONS_PATH = "/etc/opensm/partitions.conf"
CONF_DIR = "/etc/opensm"

# What differs between the distribution's OpenSM (Debian, Ubuntu) and NVIDIA's (DOCA, MLNX_OFED).
FLAVOURS = {
    # Debian's opensm.service is a oneshot unit that starts opensm@<port GUID>.service for each port in PORTS
    # (/etc/default/opensm).
    "distribution": {"package": "opensm", "service": "opensm", "defaults_file": "/etc/default/opensm"},
    "nvidia": {"package": "opensm", "service": "opensmd", "defaults_file": None},
}

# Keys the template writes; opensm_extra_options may not repeat them.
MANAGED_KEYS = ("guid", "subnet_prefix", "sm_priority", "routing_engine", "sweep_interval", "sminfo_polling_timeout",
                "polling_retry_number", "partition_config_file", "part_enforce", "allow_both_pkeys", "virt_enabled", "log_file",
                "log_flags", "log_max_size", "force_log_flush")

# The role's tags: the checks and decisions (always, when the step runs), the files, the package, the service.
TAGS = ("opensm_preflight", "opensm_configure", "opensm_install", "opensm_service")
PARTS = ("configure", "install", "service")

_HEX_DIGITS = frozenset("0123456789abcdefABCDEF")


# --------------------------------------------------------------------------------------- the settings

def _int(value):
    """An integer setting as the argument specs accept it (an int, or its digits as text); None otherwise."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and re.fullmatch(r"\s*[+-]?\d+\s*", value):
        return int(value)
    return None


def _hex(value, lengths):
    """Whether ``value`` is text of ``0x`` and as many hex digits as one of ``lengths`` says (the subnet prefix: 16, the log
    flags: 1 or 2); no blank around it."""
    return (isinstance(value, str) and value.startswith("0x") and len(value) - 2 in lengths
            and all(char in _HEX_DIGITS for char in value[2:]))


def priority_of(s):
    """``opensm_priority`` as a number, None when it is null (derived from the group)."""
    value = s.get("opensm_priority")
    return None if value is None else _int(value)


def setting_problems(s, host, groups):
    """Sentences about the settings ``s`` of ``host`` that the argument specs cannot judge (``groups``: the inventory's)."""
    problems = []
    group = s.get("opensm_group", "opensm")
    members = (groups or {}).get(group) or []
    given = s.get("opensm_priority")
    if given is None:
        if host not in members:
            problems.append("opensm_priority is null and the host is not in the group %s (opensm_group), so no priority can be "
                            "derived; set opensm_priority (0 to 15) or add the host to the group" % group)
    elif priority_of(s) is None or priority_of(s) not in range(16):
        problems.append("opensm_priority: %s is not accepted; accepted: 0 to 15, or null" % (given,))
    prefix = s.get("opensm_subnet_prefix", "0xfe80000000000000")
    if not _hex(prefix, (16,)):
        problems.append("opensm_subnet_prefix: %s is not accepted; accepted: 0x and 16 hex digits" % (prefix,))
    flags = s.get("opensm_log_flags", "0x03")
    if not _hex(flags, (1, 2)):
        problems.append("opensm_log_flags: %s is not accepted; accepted: a hex byte such as 0x03" % (flags,))
    extra = s.get("opensm_extra_options") or {}
    managed = [key for key in extra if key in MANAGED_KEYS] if isinstance(extra, Mapping) else []
    if managed:
        problems.append("opensm_extra_options: %s are written by the role; set them with their opensm_ variables" % ", ".join(managed))
    if s.get("opensm_virt_enabled", "auto") == "enabled" and s.get("opensm_flavour", "distribution") != "nvidia":
        problems.append("opensm_virt_enabled: enabled needs opensm_flavour: nvidia (virt_enabled exists only in NVIDIA's OpenSM)")
    return problems


def _allow_both(s):
    return values.parse_bool(s.get("opensm_allow_both_pkeys", False), "opensm_allow_both_pkeys")


def member_hosts(s, groups):
    """The inventory hosts (sorted) whose port GUIDs the members of ``opensm_partitions`` need, directly or through a group;
    ``ValueError`` naming the entry and what it accepts on bad partitions."""
    groups = groups or {}
    return opensm.check_partitions(s.get("opensm_partitions") or [], groups=groups, hosts=groups.get("all") or [],
                                   default=s.get("opensm_default_partition"), allow_both=_allow_both(s))


def partition_problems(s, groups):
    """Sentences about ``opensm_partitions`` and ``opensm_default_partition`` (at most one: the first found)."""
    try:
        member_hosts(s, groups)
    except ValueError as exc:
        return [str(exc)]
    return []


# --------------------------------------------------------------------------------------- port GUIDs

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


def port_guids(hca):
    """The port GUIDs an OpenSM can bind to, and what a host stands for as a partition member: the InfiniBand ports of the
    physical functions of a reading (infiniband_hca), in its order; [] without a reading."""
    return opensm.port_guids(hca) if isinstance(hca, Mapping) else []


def given_guids(value):
    """``opensm_port_guids`` as the user wrote it, in normal form (the collection's one GUID grammar); ``ValueError`` that
    names the item, for example when YAML made a number of an unquoted GUID."""
    if not isinstance(value, (list, tuple)):
        raise ValueError("%s: %r is not accepted; accepted: a list of this host's port GUIDs (\"0x0c42a10300aa0010\"), or [] for "
                         "every InfiniBand port of the host" % (GIVEN, value))
    return [opensm.normalize_guid(item, "%s[%d]" % (GIVEN, index)) for index, item in enumerate(value)]


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
    own = port_guids(own_hca)
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


def problems(s, host, groups, own_hca=None, own_current=False, others=None):
    """Every refusal of the settings of ``host`` before anything is written: the settings, the partitions, the port GUIDs
    (``others``: see :func:`owners`; only needed when ``opensm_port_guids`` lists some)."""
    out = setting_problems(s, host, groups)
    out += partition_problems(s, groups)
    out += port_guid_problems(host, s.get(GIVEN) or [], own_hca=own_hca, own_current=own_current, others=others)
    return out


def to_read(members, current):
    """The member hosts whose adapters must be read before the partitions can be written: those without a reading current
    for this run (``current``: host -> bool)."""
    return [host for host in members if not current.get(host)]


# --------------------------------------------------------------------------------------- the plan

def vf_warning(vf_hosts, flavour):
    """Why the VFs of ``vf_hosts`` stay down with this OpenSM (virtualization off)."""
    return ("VF GUIDs are configured (sriov_vf_guids of %s), but %s: InfiniBand VFs stay down until a subnet manager with "
            "virtualization runs (opensm_flavour: nvidia, or the switch's SM with virtualization on)." % (
                ", ".join(vf_hosts),
                "the distribution's OpenSM has no SR-IOV virtualization (virt_enabled)" if flavour == "distribution"
                else "opensm_virt_enabled is disabled"))


def bind_problem(guids, flavour):
    """Why OpenSM cannot bind (no port, or more than NVIDIA's opensmd binds), or None."""
    if not guids:
        return "no InfiniBand port found (hca_info); check the link type (role link_type) or set opensm_port_guids"
    if flavour != "distribution" and len(guids) != 1:
        return ("NVIDIA's opensmd binds one port, and opensm_port_guids/discovery gives %s; set opensm_port_guids to one"
                % ", ".join(guids))
    return None


def plan(s, host, groups, own_hca, pf_guids, vf_guids, vf_hosts, header=None):
    """What the step writes and runs on ``host``, from its settings ``s``, its reading ``own_hca``, the members' port GUIDs
    (``pf_guids``: host -> its reading's PF port GUIDs, for every host the members name) and VF GUIDs (``vf_guids``: host ->
    its sriov_vf_guids), and the hosts of the inventory that publish VF GUIDs (``vf_hosts``). ``ValueError`` on bad
    partitions (the step checked them before)."""
    groups = groups or {}
    flavour_name = s.get("opensm_flavour", "distribution")
    flavour = FLAVOURS[flavour_name]
    given = given_guids(s.get(GIVEN) or [])
    guids = given if given else port_guids(own_hca)
    priority = priority_of(s)
    if priority is None:
        group = groups.get(s.get("opensm_group", "opensm")) or []
        priority = max(15 - group.index(host), 0)
    partitions = opensm.render_partitions(
        s.get("opensm_partitions") or [], pf_guids=pf_guids, vf_guids=vf_guids, groups=groups, hosts=groups.get("all") or [],
        default=s.get("opensm_default_partition"), allow_both=_allow_both(s), header=header)
    virt_setting = s.get("opensm_virt_enabled", "auto")
    virt = flavour_name == "nvidia" and (virt_setting == "enabled" or (virt_setting == "auto" and bool(vf_hosts)))
    warnings = list(partitions["warnings"])
    if vf_hosts and not virt:
        warnings.append(vf_warning(vf_hosts, flavour_name))
    distribution = flavour_name == "distribution"
    return {
        "host": host,
        "flavour": flavour_name,
        "package": flavour["package"],
        "service": flavour["service"],
        "defaults_file": flavour["defaults_file"],
        "guids": guids,
        "priority": priority,
        "virt": virt,
        "partitions": partitions,
        "warnings": warnings,
        "problem": bind_problem(guids, flavour_name),
        # the running OpenSM processes: one per port with the distribution's units, one with opensmd; and their logs
        "units": ["opensm@%s.service" % guid for guid in guids] if distribution else [flavour["service"]],
        "logs": (["/var/log/opensm.%s.log" % guid for guid in guids] if distribution
                 else [s.get("opensm_log_file", "/var/log/opensm.log")]),
    }


def template_vars(the_plan):
    """The variables the role's templates read besides its settings."""
    return {
        "__opensm_guids": the_plan["guids"],
        "__opensm_priority": the_plan["priority"],
        "__opensm_virt": the_plan["virt"],
        "__opensm_partitions": {"content": the_plan["partitions"]["content"]},
        "__opensm_partitions_path": PARTITIONS_PATH,
    }


def parts(run_tags, skip_tags):
    """Which of ``configure``, ``install`` and ``service`` this run asks for, from ``ansible_run_tags`` and
    ``ansible_skip_tags``: a run that names none of the role's tags (``all``, or a play's tag such as ``opensm``) does all
    three; ``--tags opensm_preflight`` only checks and decides; ``--tags opensm_configure`` writes the files and installs
    nothing; ``--skip-tags`` leaves a part out. The checks and decisions run whenever the step does."""
    run_tags = set(run_tags or ("all",))
    skip_tags = set(skip_tags or ())
    named = run_tags & set(TAGS)
    out = set()
    for part in PARTS:
        tag = "opensm_" + part
        if tag in skip_tags:
            continue
        if not named or tag in named:
            out.add(part)
    return out


def restarts(results):
    """Whether OpenSM restarts (opensm.conf or the ports' list changed) and whether it re-reads the partitions (SIGHUP:
    partitions.conf changed), from the writes' ``changed`` (``conf``, ``defaults``, ``partitions``)."""
    restart = bool(results.get("conf") or results.get("defaults"))
    return restart, bool(results.get("partitions"))
