# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
name: verify_checks
short_description: Check every node of a fabric against what the inventory asks
version_added: 0.1.0
author: fabric.infiniband developers (@fabric-infiniband)
description:
  - Takes, per host, what M(fabric.infiniband.hca_info) and M(fabric.infiniband.pending_info) read on the node and what the
    inventory asks of it, and returns one verdict per check and per node, plus the fabric topology with the nodes mapped onto it.
  - "Checks: the firmware version of every RDMA device of a physical function that a rule of C(firmware_versions) names (the
    same version, or at least it with C(at_least)); the link layer of every port (C(link_type_default), C(link_type_adapters));
    state ACTIVE and physical state LinkUp of every InfiniBand port; a subnet manager (SM LID not 0, and one of O(sm_hosts) when given); the RDMA netns mode
    (C(rdma_netns_mode)); the number of VFs per C(sriov_pfs) and their GUIDs (not zero, unique over the fleet, equal to the sriov
    role's scheme); the P_Keys of the partitions the host is a member of (and the Default one) in every InfiniBand port's table;
    nothing pending on the node; every InfiniBand port seen in the fabric topology."
  - A check whose role the host does not use (for example no C(sriov_pfs)) is V(not asked), not a failure.
  - A node that waits for a reboot, a firmware reset or a power cycle (an entry of its pending-action record that no boot has tried
    yet, RV(fabric.infiniband.pending_info#module:entries.booted_since) false) is V(waiting), not failing. Its C(pending) check
    and each check that fails in a category the waiting entries change at the boot are V(waiting); the categories come from the
    entry's name, the role that recorded it. C(link_type) changes the link layer, port state, SM, P_Keys, in-fabric, VF and VF
    GUID checks (it also writes the SR-IOV firmware parameters in the same step), C(sriov) the VF and VF GUID checks,
    C(rdma_netns) the netns check, C(firmware) the firmware check, C(gpudirect)
    none; any other name (C(rdma_stack), a driver) all of them. A check that fails in
    another category still fails, and an entry that a boot has already tried fails the C(pending) check (the boot did not apply
    it).
options:
  _input:
    description:
      - Per inventory host, a dict with C(hca) (the registered result of M(fabric.infiniband.hca_info)), C(pending) (of
        M(fabric.infiniband.pending_info)) and C(expect), a dict with C(link_type_default), C(link_type_adapters),
        C(rdma_netns_mode), C(sriov_pfs), C(sriov_guid_mode), C(sriov_guid_prefix), C(sriov_guid_host_id) and
        C(firmware_versions) (the firmware role's rules; none or V([]) asks no firmware check).
      - A host without C(hca) (unreachable, or its discovery failed) fails every check.
    type: dict
    required: true
  topology:
    description: The registered result of M(fabric.infiniband.fabric_topology_info), or V(null) when there is none.
    type: dict
  topology_host:
    description: The host the topology was discovered from.
    type: str
  partitions:
    description: The partitions (C(opensm_partitions)).
    type: list
    elements: dict
    default: []
  groups:
    description: The inventory groups (C(groups)), to resolve partition members given by group.
    type: dict
    default: {}
  sm_hosts:
    description: The hosts of the play that run the subnet manager (group C(opensm)); the SM LID must be one of theirs.
    type: list
    elements: str
    default: []
  traffic:
    description:
      - The rows of the traffic step (filter C(fabric.infiniband.verify_traffic_rows)), or V(null) when it did not run.
      - A failing row fails the report and adds a sentence that names both ends and their HCAs; V(planned) rows do not fail.
    type: list
    elements: dict
"""

EXAMPLES = r"""
- name: Check the nodes
  ansible.builtin.set_fact:
    __report: >-
      {{ {'node01': {'hca': __hca, 'pending': __pending, 'expect': {'rdma_netns_mode': 'exclusive'}}}
         | fabric.infiniband.verify_checks(topology=__fabric) }}
"""

RETURN = r"""
_value:
  description: The verdicts.
  type: dict
  contains:
    ok:
      description: Whether every node passed every check it was asked (a node that waits has not).
      type: bool
    categories:
      description: The check categories in table order, each with C(key) and C(title).
      type: list
      elements: dict
    hosts:
      description:
        - One entry per host (sorted) with C(host), C(ok) and C(checks), each check with C(category), C(name), C(expected),
          C(actual), C(ok) (V(null) when not asked, V(false) when failing or waiting) and C(status) (V(ok), V(fail),
          V(waiting) or V(not asked)); a waiting check also has C(waits_for), the entries it waits for, and a firmware check
          C(hint), what brings the asked version (added to its failure's sentence).
        - Each host's C(firmware) lists the RDMA devices of its physical functions with C(device), C(pci_address), C(model),
          C(version) (the running firmware), C(psid), C(rule) (the index in C(firmware_versions) of the rule that names the card,
          or V(null)), C(wanted), C(at_least), C(ok) and C(status) (its firmware check's; V(not asked) where no rule names it).
        - Each host's C(status) is V(fail) when a check fails, else V(waiting) when a check waits, else V(ok) (then C(ok) is
          V(true)).
      type: list
      elements: dict
    failures:
      description: One sentence per failing check (waiting checks are not failures).
      type: list
      elements: str
    waiting:
      description: One sentence per node that waits, with what it waits for.
      type: list
      elements: str
    summary:
      description: One line for the play.
      type: str
    fabric:
      description:
        - The topology (C(switches), C(hcas), C(links), C(error), C(host)); each HCA carries the C(host) and C(rdma_device) it
          belongs to (V(null) when it is no host of the play) and C(status) (V(ok), V(fail), V(waiting) or V(unknown)).
      type: dict
    traffic:
      description: The rows of O(traffic), when given.
      type: list
      elements: dict
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.fabric.infiniband.plugins.plugin_utils.link_type import plan as link_type_plan
from ansible_collections.fabric.infiniband.plugins.filter.sriov_plan import sriov_plan
from ansible_collections.fabric.infiniband.plugins.module_utils import ibnetdiscover
from ansible_collections.fabric.infiniband.plugins.module_utils import opensm
from ansible_collections.fabric.infiniband.plugins.module_utils.sysfs import ETHERNET_ONLY_MODELS
from ansible_collections.fabric.infiniband.plugins.plugin_utils import firmware

CATEGORIES = (
    ("firmware", "firmware"),
    ("link_layer", "link layer"),
    ("port_state", "port state"),
    ("width", "width"),
    ("speed", "speed"),
    ("errors", "errors"),
    ("flaps", "flaps"),
    ("sm", "SM"),
    ("netns", "netns"),
    ("vfs", "VFs"),
    ("vf_guids", "VF GUIDs"),
    ("pkeys", "P_Keys"),
    ("pending", "pending"),
    ("fabric", "in fabric"),
)
OK = "ok"
FAIL = "fail"
WAITING = "waiting"
NOT_ASKED = "not asked"
_ACTIONS = {"reboot": "a reboot", "power_cycle": "a power cycle", "fw_reset": "a firmware reset"}
# What the boot a pending entry waits for changes, by the entry's name (the role that recorded it): the failing
# checks of these categories wait for that boot. A name not listed here (rdma_stack, a driver) changes all of them.
_BOOT_CHANGES = {
    # link_type also writes the SR-IOV firmware parameters when both change (playbooks/site.yml)
    "link_type": ("link_layer", "port_state", "sm", "pkeys", "fabric", "vfs", "vf_guids"),
    "sriov": ("vfs", "vf_guids"),
    "rdma_netns": ("netns",),
    # the firmware role's entry: an image burnt on the flash, which its activation (firmware reset or boot) runs
    "firmware": ("firmware",),
    "gpudirect": (),
}
_LINK_LAYERS = {"IB": "InfiniBand", "ETH": "Ethernet"}
_ZERO_GUID = "0x0000000000000000"


def _check(category, name, expected, actual, ok):
    return {"category": category, "name": name, "expected": expected, "actual": actual,
            "ok": ok, "status": NOT_ASKED if ok is None else (OK if ok else FAIL)}


def _not_asked(category, why):
    return _check(category, why, None, None, None)


def _pfs(hca):
    """The host's physical functions with an RDMA device."""
    return [e for e in hca.get("hcas") or [] if not e.get("is_vf") and e.get("rdma_device")]


def _ib_ports(hca):
    for entry in _pfs(hca):
        for port in entry.get("ports") or []:
            if port.get("link_layer") == "InfiniBand":
                yield entry, port


def _where(entry, port):
    return "%s/%s" % (entry.get("rdma_device") or entry.get("pci_address"), port.get("port", 1))


def _link_layer(hca, expect):
    try:
        plan = link_type_plan(hca, expect.get("link_type_default", "ib"), expect.get("link_type_adapters") or [])
    except AnsibleFilterError as exc:
        return [_check("link_layer", "link_type plan", "a valid link_type_adapters", str(exc), False)]
    # An Ethernet-only card has no link type to set (the link_type role learns it from the firmware tool).
    plan = [card for card in plan if card.get("model") not in ETHERNET_ONLY_MODELS]
    if not plan:
        return [_not_asked("link_layer", "no card with a link type to set")]
    by_card = {}
    for entry in hca.get("hcas") or []:
        if not entry.get("is_vf") and entry.get("pci_address"):
            by_card.setdefault(entry.get("card_address"), []).append(entry)
    checks = []
    for card in plan:
        functions = sorted(by_card.get(card["card"], []), key=lambda e: e["pci_address"])
        for entry, wanted in zip(functions, card["link_types"]):
            ports = entry.get("ports") or []
            actual = ports[0].get("link_layer") if ports else None
            name = "link layer %s" % _where(entry, ports[0] if ports else {})
            checks.append(_check("link_layer", name, _LINK_LAYERS.get(wanted, wanted), actual or "no RDMA device",
                                 actual == _LINK_LAYERS.get(wanted, wanted)))
    return checks


_FIRMWARE_HINT = ("the firmware role burns the asked image from firmware_images; a burnt image that waits for its activation "
                  "shows in the pending column and makes this check wait")


def _firmware(hca, expect):
    """The firmware checks (one per RDMA device of a physical function that a rule names) and the rows of the report's
    firmware table (every such device with its version and PSID, named by a rule or not)."""
    rules = expect.get("firmware_versions") or []
    problems = firmware.rule_problems(rules)
    # with invalid rules the table still shows each device's version, named by no rule
    rows = firmware.check(hca, [] if problems else rules)
    for row in rows:
        row["status"] = NOT_ASKED
    if problems:
        return [_check("firmware", firmware.VERSIONS, "valid %s" % firmware.VERSIONS, "; ".join(problems), False)], rows
    if not rules:
        return [_not_asked("firmware", "no %s" % firmware.VERSIONS)], rows
    checks = []
    for row in rows:
        if row["rule"] is None:
            continue
        name = "firmware of %s (%s, %s, PSID %s)" % (row["device"], row["pci_address"], row["model"], row["psid"] or "unknown")
        expected = "%s%s (%s[%d])" % ("at least " if row["at_least"] else "", row["wanted"], firmware.VERSIONS, row["rule"])
        check = _check("firmware", name, expected, row["version"] or "no version read", row["ok"])
        check["hint"] = _FIRMWARE_HINT
        # the row takes its check's status once the waiting checks are known
        row["status"], row["check"] = check["status"], check
        checks.append(check)
    return checks or [_not_asked("firmware", "no card that a rule of %s names" % firmware.VERSIONS)], rows


def _port_state(hca):
    checks = []
    for entry, port in _ib_ports(hca):
        actual = "%s/%s" % (port.get("state"), port.get("physical_state"))
        checks.append(_check("port_state", "port state %s" % _where(entry, port), "ACTIVE/LinkUp", actual, actual == "ACTIVE/LinkUp"))
    return checks or [_not_asked("port_state", "no InfiniBand port")]


_HEALTH_CHECKS = ("width", "speed", "errors", "flaps")


def _health(health):
    """The node's judged port health (the fact infiniband_health, plugins/plugin_utils/health.py): one check per port
    and health check with what was expected and found; state and physical state are the port_state column's."""
    if not isinstance(health, dict) or "rows" not in health:
        return []
    checks = []
    for row in health.get("rows") or []:
        for key in _HEALTH_CHECKS:
            status = row.get(key)
            if status in (None, "-"):
                continue
            checks.append(_check(key, "%s of %s" % (key, row.get("port")), (row.get("expected") or {}).get(key),
                                 (row.get("found") or {}).get(key), status != "FAIL"))
    return checks or [_not_asked(key, "no InfiniBand port") for key in _HEALTH_CHECKS]


def _sm(hca, sm_lids):
    checks = []
    for entry, port in _ib_ports(hca):
        sm_lid = port.get("sm_lid") or 0
        if sm_lids is None:
            ok, expected = sm_lid != 0, "SM LID not 0"
        else:
            ok = sm_lid in sm_lids
            expected = "SM LID of %s" % (", ".join("%s (%s)" % (h, lid) for lid, h in sorted(sm_lids.items()))
                                         or "an opensm host (their LIDs are unknown)")
        checks.append(_check("sm", "SM of %s" % _where(entry, port), expected, "SM LID %d" % sm_lid, ok))
    return checks or [_not_asked("sm", "no InfiniBand port")]


def _netns(hca, expect):
    wanted = expect.get("rdma_netns_mode")
    if not wanted:
        return [_not_asked("netns", "no rdma_netns_mode")]
    actual = (hca.get("rdma_system") or {}).get("netns_mode")
    return [_check("netns", "RDMA netns mode", wanted, actual, actual == wanted)]


def _sriov(host, hca, expect):
    """The VF count and VF GUID checks, and the VF GUIDs seen (for the fleet-wide uniqueness check)."""
    pfs = expect.get("sriov_pfs") or []
    if not pfs:
        return [_not_asked("vfs", "no sriov_pfs")], [_not_asked("vf_guids", "no sriov_pfs")], []
    try:
        plan = sriov_plan(hca, pfs, host, guid_mode=expect.get("sriov_guid_mode", "scheme"),
                          guid_prefix=expect.get("sriov_guid_prefix", "0x02fa"), host_id=expect.get("sriov_guid_host_id"))
    except AnsibleFilterError as exc:
        bad = _check("vfs", "sriov plan", "a valid sriov_pfs", str(exc), False)
        return [bad], [_not_asked("vf_guids", "no valid sriov_pfs")], []
    by_bdf = {e.get("pci_address"): e for e in hca.get("hcas") or []}
    counts, guids, seen = [], [], []
    for pf in plan["pfs"]:
        label = pf["rdma_device"] or pf["pf"]
        sriov = (by_bdf.get(pf["pf"]) or {}).get("sriov")
        have = sriov.get("num_vfs") if sriov else "SR-IOV off"
        counts.append(_check("vfs", "VFs of %s" % label, pf["num_vfs"], have, have == pf["num_vfs"]))
        if not pf["num_vfs"]:
            continue
        # one check per PF: the VFs' GUIDs in VF order against the scheme's (or just not zero without a scheme)
        vf_bdfs = (sriov or {}).get("vfs") or []
        actual = []
        for vf in range(pf["num_vfs"]):
            entry = by_bdf.get(vf_bdfs[vf]) if vf < len(vf_bdfs) else None
            found = None
            if entry:
                # the GUID the fabric sees (port GUID); the node GUID when the VF has no RDMA port yet
                ports = entry.get("ports") or []
                found = (ports[0].get("port_guid") if ports else None) or entry.get("node_guid")
            actual.append(found)
            if found and found != _ZERO_GUID:
                seen.append((found, "VF %d of %s" % (vf, label)))
        wanted = [vf["guid"] for vf in pf["vfs"]]
        if wanted:
            ok = actual == wanted
        else:
            ok, wanted = all(g and g != _ZERO_GUID for g in actual), "%d GUIDs, not zero" % pf["num_vfs"]
        guids.append(_check("vf_guids", "VF GUIDs of %s" % label, wanted, actual if any(actual) else "no VF", ok))
    return counts, guids or [_not_asked("vf_guids", "no VF asked")], seen


def _memberships(partitions, groups, hosts):
    """host -> P_Keys (ints) of the partitions it is a member of through its PF ports; raises ValueError."""
    parsed, _default = opensm._check_all(partitions, groups, hosts, None, True)  # pylint: disable=protected-access
    out = {host: set() for host in hosts}
    for partition in parsed:
        for member in partition["members"]:
            if member.get("keyword") in ("ALL", "ALL_CAS"):
                named = hosts
            elif member.get("functions") == "vf":
                continue
            elif "host" in member:
                named = [member["host"]]
            elif "group" in member:
                named = groups.get(member["group"], [])
            else:
                continue
            for host in named:
                if host in out:
                    out[host].add(partition["pkey"])
    return out


def _pkeys(hca, wanted):
    checks = []
    expected = ["0x%04x" % key for key in sorted({opensm.DEFAULT_PKEY} | wanted)]
    for entry, port in _ib_ports(hca):
        table = port.get("pkeys") or []
        have = {int(key, 16) & 0x7FFF for key in table}
        missing = [key for key in expected if int(key, 16) not in have]
        checks.append(_check("pkeys", "P_Keys of %s" % _where(entry, port), expected, table, not missing))
    return checks or [_not_asked("pkeys", "no InfiniBand port")]


def _waiting_entries(pending):
    """The entries of a pending-action record that wait for a boot no boot has tried yet, by name."""
    entries = (pending or {}).get("entries") or {}
    return {name: e for name, e in entries.items() if not (e or {}).get("booted_since")}


def _pending(pending):
    if pending is None:
        return [_check("pending", "pending actions", "nothing pending", "not read", False)]
    entries = pending.get("entries") or {}
    names = sorted(entries)
    tried = [name for name in names if (entries[name] or {}).get("booted_since")]
    check = _check("pending", "pending actions", "nothing pending",
                   ", ".join("%s (%s%s)" % (name, (entries[name] or {}).get("action"),
                                            ", not applied by the boot since" if name in tried else "") for name in names)
                   or "nothing pending", not names)
    if names and not tried:
        _wait(check, names)
    return [check]


def _wait(check, names):
    check["status"] = WAITING
    check["waits_for"] = sorted(names)


def _mark_waiting(checks, pending):
    """The failing checks that the boot the node waits for changes become waiting."""
    waiting = _waiting_entries(pending)
    if not waiting:
        return
    everything = [key for key, _title in CATEGORIES]
    for check in checks:
        if check["ok"] is not False or check["category"] == "pending" or check.get("duplicates"):
            continue
        names = [name for name in waiting if check["category"] in _BOOT_CHANGES.get(name, everything)]
        if names:
            _wait(check, names)


def _host_status(checks):
    statuses = {check["status"] for check in checks}
    return FAIL if FAIL in statuses else (WAITING if WAITING in statuses else OK)


def _in_fabric(hca, fabric_guids):
    if fabric_guids is None:
        return [_not_asked("fabric", "no topology")]
    checks = []
    for entry, port in _ib_ports(hca):
        guid = port.get("port_guid")
        checks.append(_check("fabric", "%s in the fabric" % _where(entry, port), guid, "seen" if guid in fabric_guids else "not seen",
                             guid in fabric_guids))
    return checks or [_not_asked("fabric", "no InfiniBand port")]


def _host_ports(nodes):
    """GUID -> (host, rdma_device, port) for every InfiniBand PF port of every host, and for the node GUID of
    every PF (the picture then still names a port the fabric sees while its host runs it as Ethernet)."""
    out = {}
    for host, node in nodes.items():
        hca = (node or {}).get("hca") or {}
        for entry in _pfs(hca):
            if entry.get("node_guid") and entry["node_guid"] != _ZERO_GUID:
                out.setdefault(entry["node_guid"], (host, entry.get("rdma_device"), None))
        for entry, port in _ib_ports(hca):
            if port.get("port_guid"):
                out[port["port_guid"]] = (host, entry.get("rdma_device"), port.get("port"))
    return out


def _sm_lids(nodes, sm_hosts, topology, owners):
    """LID -> SM host, from the SM hosts' own ports and from the topology; None when no SM host is in the play."""
    hosts = [h for h in sm_hosts or [] if h in nodes]
    if not hosts:
        return None
    lids = {}
    for host in hosts:
        for _entry, port in _ib_ports((nodes[host] or {}).get("hca") or {}):
            if port.get("lid") not in (None, 0, 0xFFFF):
                lids[port["lid"]] = host
    if topology:
        for lid, (_node, port_guid) in ibnetdiscover.lids(topology).items():
            owner = owners.get(port_guid)
            if owner and owner[0] in hosts:
                lids[lid] = owner[0]
    return lids


def _fabric(topology, topology_host, owners, verdicts):
    fabric = {"host": topology_host, "error": None, "switches": [], "hcas": [], "links": []}
    if not topology or "hcas" not in topology:
        fabric["error"] = (topology or {}).get("msg") or "no topology from %s (unreachable, or it did not run)" % (topology_host or "any host")
        return fabric
    fabric["switches"] = list(topology.get("switches") or [])
    fabric["links"] = list(topology.get("links") or [])
    for hca in topology.get("hcas") or []:
        entry = dict(hca, host=None, rdma_device=None, status="unknown")
        for guid in (hca.get("port_guids") or []) + [hca.get("guid")]:
            if guid in owners:
                entry["host"], entry["rdma_device"] = owners[guid][0], owners[guid][1]
                entry["status"] = verdicts.get(entry["host"], FAIL)
                break
        fabric["hcas"].append(entry)
    return fabric


def verify_checks(nodes, topology=None, topology_host=None, partitions=None, groups=None, sm_hosts=None, traffic=None):
    if not isinstance(nodes, dict):
        raise AnsibleFilterError("verify_checks expects a dict of hosts, each with hca, pending and expect")
    groups = groups or {}
    owners = _host_ports(nodes)
    topology_ok = bool(topology) and "hcas" in topology and not topology.get("failed")
    usable_topology = topology if topology_ok else None
    fabric_guids = None
    if usable_topology:
        fabric_guids = {g for h in topology.get("hcas") or [] for g in h.get("port_guids") or []}
    sm_lids = _sm_lids(nodes, sm_hosts, usable_topology, owners)
    hosts = sorted(nodes)
    member_error, memberships = None, {}
    try:
        memberships = _memberships(partitions or [], groups, hosts if not groups.get("all") else groups["all"])
    except ValueError as exc:
        member_error = str(exc)
    report = {"categories": [{"key": k, "title": t} for k, t in CATEGORIES], "hosts": [], "failures": []}
    seen_guids = {}
    for host in hosts:
        node = nodes[host] or {}
        hca = node.get("hca")
        if not isinstance(hca, dict) or "hcas" not in hca:
            why = (hca or {}).get("msg") if isinstance(hca, dict) else None
            checks = [_check(key, "%s (no data)" % title, "data from the node", why or "unreachable or discovery failed", False)
                      for key, title in CATEGORIES]
            report["hosts"].append({"host": host, "checks": checks, "no_data": why or "unreachable, or its discovery failed"})
            continue
        expect = node.get("expect") or {}
        counts, vf_guids, seen = _sriov(host, hca, expect)
        for guid, name in seen:
            seen_guids.setdefault(guid, []).append((host, name))
        if member_error:
            pkeys = [_check("pkeys", "opensm_partitions", "valid partitions", member_error, False)]
        else:
            pkeys = _pkeys(hca, memberships.get(host, set()))
        fw_checks, fw_rows = _firmware(hca, expect)
        checks = (fw_checks + _link_layer(hca, expect) + _port_state(hca) + _health(node.get("health"))
                  + _sm(hca, sm_lids) + _netns(hca, expect) + counts + vf_guids
                  + pkeys + _pending(node.get("pending")) + _in_fabric(hca, fabric_guids))
        report["hosts"].append({"host": host, "checks": checks, "firmware": fw_rows, "pending": node.get("pending")})
    _unique_guids(report, seen_guids)
    verdicts = {}
    report["waiting"] = []
    for entry in report["hosts"]:
        pending = entry.pop("pending", None)
        if not entry.get("no_data"):
            _mark_waiting(entry["checks"], pending)
        for row in entry.get("firmware") or []:
            if "check" in row:
                row["status"] = row.pop("check")["status"]
        entry["status"] = _host_status(entry["checks"])
        entry["ok"] = entry["status"] == OK
        verdicts[entry["host"]] = entry["status"]
        if entry.get("no_data"):
            # one sentence, not one per check
            report["failures"].append("%s: no data from the node: %s" % (entry["host"], entry.pop("no_data")))
            continue
        waits = _waiting_entries(pending)
        if any(check["status"] == WAITING for check in entry["checks"]):
            report["waiting"].append("%s: waits for %s" % (entry["host"], "; ".join(
                "%s for %s (%s)" % (_ACTIONS.get((waits[name] or {}).get("action"), "a boot"), name,
                                    (waits[name] or {}).get("reason") or "no reason recorded")
                for name in sorted(waits))))
        for check in entry["checks"]:
            if check["status"] == FAIL:
                sentence = "%s: %s: expected %s, found %s" % (entry["host"], check["name"], _text(check["expected"]), _text(check["actual"]))
                if check.get("duplicates"):
                    sentence += "; used more than once over the fleet: %s" % "; ".join(check["duplicates"])
                if check.get("hint"):
                    sentence += "; " + check["hint"]
                report["failures"].append(sentence)
    report["ok"] = all(status == OK for status in verdicts.values())
    report["summary"] = _summary(verdicts, len(report["failures"]))
    if traffic is not None:
        _traffic(report, traffic)
    report["fabric"] = _fabric(topology, topology_host, owners, verdicts)
    if topology is not None and not topology_ok:
        report["fabric"]["error"] = topology.get("msg") or "the topology discovery failed"
    return report


def _traffic(report, rows):
    """The traffic rows: a failing row fails the report, with one sentence naming both ends."""
    report["traffic"] = rows
    failing = [row for row in rows if row.get("status") == "fail"]
    for row in failing:
        report["failures"].append("traffic %s: %s" % (row.get("pair"), "; ".join(row.get("reasons") or ["failed"])))
    if failing:
        report["ok"] = False
    passed = len([row for row in rows if row.get("status") == "pass"])
    planned = len([row for row in rows if row.get("status") == "planned"])
    if planned:
        text = "traffic: %d run%s planned, not run (%s)" % (planned, "" if planned == 1 else "s",
                                                            (rows[0].get("reasons") or ["-"])[0])
    elif rows:
        unpaired = len([row for row in rows if row.get("status") == "unpaired"])
        text = "traffic: %d of %d runs pass" % (passed, len(rows) - unpaired)
        if unpaired:
            text += ", %d rails unpaired" % unpaired
    else:
        text = "traffic: no pair to run"
    report["summary"] += "; " + text


def _summary(verdicts, failures):
    hosts = len(verdicts)
    failing = sorted(h for h, status in verdicts.items() if status == FAIL)
    waiting = sorted(h for h, status in verdicts.items() if status == WAITING)
    if not failing and not waiting:
        return "all %d nodes pass" % hosts
    parts = []
    if failing:
        parts.append("%d of %d nodes fail %d checks: %s" % (len(failing), hosts, failures, ", ".join(failing)))
    if waiting:
        parts.append("%d of %d nodes wait for a reboot: %s" % (len(waiting), hosts, ", ".join(waiting)))
    return "; ".join(parts)


def _unique_guids(report, seen_guids):
    """A VF GUID used twice over the fleet fails the VF GUID check of every PF that has it."""
    dupes = {guid: users for guid, users in seen_guids.items() if len(users) > 1}
    for entry in report["hosts"]:
        for check in entry["checks"]:
            if check["category"] != "vf_guids" or not isinstance(check["actual"], list):
                continue
            clashes = sorted({"%s (%s)" % (guid, ", ".join("%s %s" % user for user in dupes[guid]))
                              for guid in check["actual"] if guid in dupes})
            if clashes:
                check["duplicates"] = clashes
                check["ok"], check["status"] = False, FAIL


def _text(value, limit=4):
    """A value for a sentence; long lists shortened to their first entries and their length."""
    if isinstance(value, (list, tuple)):
        shown = [str(v) for v in value[:limit]]
        if len(value) > limit:
            shown.append("... %d in all" % len(value))
        return "[%s]" % ", ".join(shown)
    return str(value)


class FilterModule:
    def filters(self):
        return {"verify_checks": verify_checks}
