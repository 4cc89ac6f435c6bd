# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The verify role's decisions (controller side), for its action (plugins/action/verify.py).

- :func:`pair_problems`: explicit traffic pairs that cannot run (hosts outside the play, a node paired with itself);
- :func:`expect` and :func:`traffic_node`: what the inventory asks of a node, and what the traffic step knows of it;
- :func:`sm_hosts`, :func:`topology_host`: the play's subnet manager hosts, the host that runs ibnetdiscover;
- :func:`stopped`: why a host left the play before its read (failed in a step, with the step and its message, or unreachable),
  from the results its tasks registered;
- :func:`unmatched_firmware`: the rules of ``firmware_versions`` that matched no card of the run (the firmware step's fact
  ``infiniband_firmware_unmatched`` of this run), one line each for the report;
- :func:`report`: the checks of every node (the filter ``verify_checks``, which users may template too);
- :func:`files`, :func:`stale`, :func:`write`: the report's three files on the controller, written (atomically) only where
  their content differs.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Mapping

from ansible.plugins.filter.core import to_nice_json

from ansible_collections.fabric.infiniband.plugins.filter.verify_checks import verify_checks
from ansible_collections.fabric.infiniband.plugins.filter.verify_report import verify_report
from ansible_collections.fabric.infiniband.plugins.plugin_utils import node_state
from ansible_collections.fabric.infiniband.plugins.plugin_utils import traffic

# What the other roles' variables default to when the host does not set them (their roles' defaults).
EXPECT_DEFAULTS = (
    ("link_type_default", "ib"),
    ("link_type_adapters", []),
    ("rdma_netns_mode", "exclusive"),
    ("sriov_pfs", []),
    ("sriov_guid_mode", "scheme"),
    ("sriov_guid_prefix", "0x02fa"),
    ("sriov_guid_host_id", None),
    ("firmware_versions", []),
)
TRAFFIC_SETTINGS = (("address", "verify_traffic_address"), ("roce", "verify_traffic_roce"),
                    ("min_bw_gbps", "verify_traffic_min_bw_gbps"), ("max_lat_us", "verify_traffic_max_lat_us"),
                    ("thresholds", "verify_traffic_thresholds"), ("bw_iterations", "verify_traffic_bw_iterations"),
                    ("lat_iterations", "verify_traffic_lat_iterations"))
FILES = ("fabric-report.txt", "fabric-report.json", "fabric-report.html")
# The step result of the report's per-node task (tasks/main.yml registers it).
STEP = "__verify_step"
# What the playbooks' own registered steps are, for a report row; a role's register (``__<role>_...``) names its role.
REGISTERED = {
    STEP: "verify's read of the node",
    "nodes_run_lock": "the run lock (nodes.yml)",
    "reboot_run_lock": "the run lock (reboot.yml)",
    "nodes_hca": "the discovery of the adapters (nodes.yml)",
    "reboot_pending": "the read of what waits for a reboot (reboot.yml)",
    "site_node": "the read of the node and its boot-loop guard (report.yml)",
}
ROLES = ("firmware", "gpudirect", "ipoib", "k8s_network", "link_type", "node_reboot", "opensm", "rdma_netns", "rdma_stack",
         "sriov", "topology", "verify")
# a message longer than this is cut in the report (the run's output has it whole)
MESSAGE_LIMIT = 400
UNKNOWN = ("left the play before verify: failed or unreachable in a task that registers no result "
           "(the run's output names the task)")


truthy = traffic.truthy


def pair_problems(settings, hosts):
    """Sentences about the explicit pairs of ``verify_traffic_pairs`` that cannot run among ``hosts`` (none when the
    traffic step is off)."""
    if not truthy(settings.get("verify_traffic", False)):
        return []
    return traffic.pair_problems(settings.get("verify_traffic_pairs") or [], [str(host) for host in hosts or []])


def expect(var):
    """What the inventory asks of the node: the other roles' variables (``var(name, default)`` reads one)."""
    return dict((name, var(name, default)) for name, default in EXPECT_DEFAULTS)


def traffic_node(settings, hca):
    """What the traffic step knows of the node (plugins/plugin_utils/traffic.py); {} when the step is off."""
    if not truthy(settings.get("verify_traffic", False)):
        return {}
    node = dict((key, settings.get(name)) for key, name in TRAFFIC_SETTINGS)
    node["hca"] = hca
    return node


def sm_hosts(play_hosts_all, groups):
    """The subnet manager hosts of the play; the SM LID of every port must be one of theirs when there are any."""
    opensm = (groups or {}).get("opensm") or []
    return [host for host in play_hosts_all or [] if host in opensm]


def topology_host(setting, play_hosts, sms):
    """The host that runs ibnetdiscover: ``verify_topology_host``, else the first subnet manager host still in the play,
    else the play's first host (by default among the hosts still in the play, so that an unreachable node does not cost
    the picture)."""
    if setting:
        return setting
    hosts = [host for host in play_hosts or [] if host in sms] + list(play_hosts or [])
    return hosts[0] if hosts else None


def report_dir(setting, pwd, playbook_dir):
    """The directory of the report files: ``verify_report_dir``, relative to the directory ansible-playbook runs in."""
    if os.path.isabs(setting):
        return setting
    return "%s/%s" % (pwd or playbook_dir, setting)


def step_name(register):
    """What a registered step is, for a report row: the playbooks' own (:data:`REGISTERED`), a role's (``__<role>_...``),
    else the variable."""
    if register in REGISTERED:
        return REGISTERED[register]
    for role in sorted(ROLES, key=len, reverse=True):
        if register.startswith("__%s_" % role):
            return "the %s role (%s)" % (role, register)
    return "the task registered as %s" % register


def _message(result):
    """A failed or unreachable result's message, on one line (a loop's: its first failed item's)."""
    msg = result.get("msg")
    if not msg and isinstance(result.get("results"), list):
        for item in result["results"]:
            if isinstance(item, Mapping) and (item.get("failed") is True or item.get("unreachable") is True) and item.get("msg"):
                msg = item["msg"]
                break
    if isinstance(msg, (list, tuple)):
        msg = " ".join(str(part) for part in msg)
    text = re.sub(r"\s+", " ", str(msg or "no message")).strip()
    return text if len(text) <= MESSAGE_LIMIT else text[:MESSAGE_LIMIT - 3] + "..."


def stopped(registered):
    """Why a host that left the play before its read did, from the results its tasks registered in this run (``registered``:
    name -> result; Ansible keeps a task's registered result when the task failed or the host was unreachable, never the
    facts of a failed task). ``{"state": "unreachable"|"failed"|"unknown", "steps": [{"step", "register", "msg"}]}``: an
    unreachable result wins (the host was lost there), else every failed one (one stopped the host; another may have been
    ignored), else unknown (the task that stopped it registers nothing)."""
    found = {"unreachable": [], "failed": []}
    for name in sorted(registered or {}):
        result = registered[name]
        if not isinstance(result, Mapping):
            continue
        state = "unreachable" if result.get("unreachable") is True else "failed" if result.get("failed") is True else None
        if state:
            found[state].append({"step": step_name(name), "register": name, "msg": _message(result)})
    for state in ("unreachable", "failed"):
        if found[state]:
            return {"state": state, "steps": found[state]}
    return {"state": "unknown", "steps": []}


def stopped_text(why):
    """The report's sentence for :func:`stopped`'s answer."""
    if why["state"] == "unreachable":
        return "unreachable: " + "; ".join("%s in %s" % (s["msg"], s["step"]) for s in why["steps"])
    if why["state"] == "failed":
        return "failed before verify: " + "; ".join("%s: %s" % (s["step"], s["msg"]) for s in why["steps"])
    return UNKNOWN


def _rule_text(rule):
    what = "psid %s" % rule["psid"] if rule.get("psid") else "model %s" % rule.get("model")
    return "%s, version %s%s" % (what, "at least " if rule.get("at_least") else "", rule.get("version"))


def unmatched_firmware(facts, run):
    """The report's lines for the rules of ``firmware_versions`` that match no card of any host of the run: the fact
    ``infiniband_firmware_unmatched`` that the firmware step published (``facts``: host -> that fact), taken only where it is
    this run's (``run``, as :func:`node_state.is_current`); a fact cache's from an earlier run says nothing of this one.
    Hosts may have rules of their own: each rule is told once, with the hosts that the fact which saw the most of them saw.
    ``[]`` when no host has a current fact, or every rule names a card."""
    found = {}
    for host in sorted(facts or {}):
        fact = facts[host]
        if not node_state.is_current(fact, run=run) or not isinstance(fact.get("rules"), list):
            continue
        seen, unseen = list(fact.get("seen") or []), list(fact.get("unseen") or [])
        for rule in fact["rules"]:
            if not isinstance(rule, Mapping):
                continue
            key = (rule.get("where"), _rule_text(rule))
            if key not in found or len(seen) > len(found[key][0]):
                found[key] = (seen, unseen)
    return ["%s (%s) matches no card of %s%s" % (where, text, ", ".join(seen) or "any host (none was read)",
                                                 " (not seen: %s)" % ", ".join(unseen) if unseen else "")
            for (where, text), (seen, unseen) in sorted(found.items(), key=lambda item: _rule_order(item[0][0]))]


def _rule_order(where):
    match = re.search(r"\[(\d+)\]$", str(where or ""))
    return (int(match.group(1)) if match else -1, str(where))


def report(nodes, topology=None, topology_host=None, partitions=None, groups=None, sms=None, rows=None, stops=None,
           unmatched=None):
    """The verdicts of every node (filter ``verify_checks``). ``stops``: host -> :func:`stopped` for the hosts that left the
    play before their read; their rows say what failed (or that the host was unreachable) instead of "no data", and carry
    it as ``stopped``. ``unmatched``: :func:`unmatched_firmware`'s lines, shown under the tables as ``unmatched_firmware``
    (a rule that names no card burns nothing and fails no check)."""
    stops = stops or {}
    nodes = dict(nodes)
    for host, why in stops.items():
        if host in nodes and not (nodes[host] or {}).get("hca"):
            nodes[host] = dict(nodes[host] or {}, hca={"msg": stopped_text(why)})
    the_report = verify_checks(nodes, topology=topology, topology_host=topology_host, partitions=partitions or [],
                               groups=groups, sm_hosts=sms, traffic=rows)
    for entry in the_report.get("hosts") or []:
        if entry.get("host") in stops and not entry.get("ok"):
            entry["stopped"] = stops[entry["host"]]
    if unmatched:
        the_report["unmatched_firmware"] = list(unmatched)
    return the_report


def files(the_report):
    """``[(name, content)]`` of the report's three files: the table, the JSON and the HTML page."""
    return [(FILES[0], verify_report(the_report, "text")),
            (FILES[1], to_nice_json(the_report, sort_keys=False) + "\n"),
            (FILES[2], verify_report(the_report, "html"))]


def _read(path):
    try:
        with open(path, encoding="utf-8", newline="") as handle:
            return handle.read()
    except (IOError, OSError, UnicodeDecodeError):
        return None


def stale(directory, contents):
    """``[(name, content, before)]`` of the files of ``contents`` whose file in ``directory`` does not hold it (``before``:
    what it holds, None when it is missing)."""
    out = []
    for name, content in contents:
        before = _read(os.path.join(directory, name))
        if before != content:
            out.append((name, content, before))
    return out


def write(directory, name, content):
    """Write ``content`` to ``directory/name`` atomically (a temporary file in the same directory, then a rename),
    mode 0644; the directory is made (0755) when missing."""
    os.makedirs(directory, mode=0o755, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=directory, prefix=".%s." % name)
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="") as out:
            out.write(content)
        os.chmod(temporary, 0o644)
        os.replace(temporary, os.path.join(directory, name))
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise


def failure(the_report):
    """The failure message of a report with failing checks (its summary, then each failure), or None."""
    if not the_report.get("failures"):
        return None
    return [the_report.get("summary")] + list(the_report["failures"])
