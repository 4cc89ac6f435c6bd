# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The judgement of a node's InfiniBand ports, and the plan of the schedulers' health gate. Pure functions.

``check_settings`` refuses bad ``verify_health_*`` settings naming the variable; ``judge`` turns what
``port_health_info`` read into one row per port (a column per check) and the node's failures, each with a
reason; ``gate_plan`` decides, over the nodes of a run, which to drain or taint and which to return.

Defaults and their sources (docs/docsite/rst/health.rst repeats them for users):

- Width 4X and the highest speed the adapter model supports: ibdiagnet's speed/width check ("links run at the
  maximum supported speed and width"); NHC ``check_hw_ib`` and azurehpc check the rate per port.
- Counter growth thresholds 0 within the run: ibqueryerrors (rdma-core) reports every error counter above its
  threshold, "The default threshold is zero (0)"; ibdiagnet compares two snapshots of the port counters taken
  one second apart and reports a crossing.
- A flap: the link went down since the last run (``link_downed`` grew), as azurehpc-health-checks'
  ``check_ib_link_flapping`` counts carrier losses between checks.
"""

from __future__ import annotations

import math
import re

# The highest InfiniBand speed of each adapter model (4X links), from NVIDIA's product briefs and user manuals:
# ConnectX-3/Pro and Connect-IB FDR 56 Gb/s; ConnectX-4 and ConnectX-5 EDR 100 Gb/s; ConnectX-6 HDR 200 Gb/s
# (HDR100 cards run 2X HDR: set the width for them); ConnectX-7 NDR 400 Gb/s; ConnectX-8 XDR 800 Gb/s;
# BlueField-2 HDR 200 Gb/s; BlueField-3 NDR 400 Gb/s.
MODEL_SPEEDS = {
    "ConnectX-3": "FDR", "ConnectX-3 Pro": "FDR", "Connect-IB": "FDR",
    "ConnectX-4": "EDR", "ConnectX-5": "EDR", "ConnectX-5 Ex": "EDR",
    "ConnectX-6": "HDR", "ConnectX-7": "NDR", "ConnectX-8": "XDR",
    "BlueField-2": "HDR", "BlueField-3": "NDR",
}
SPEEDS = ("SDR", "DDR", "QDR", "FDR10", "FDR", "EDR", "HDR", "NDR", "XDR")
WIDTHS = ("1X", "2X", "4X", "8X", "12X")
DEFAULT_WIDTH = "4X"

# counter -> the most it may grow between the two reads of one run (ibqueryerrors' default: 0)
DEFAULT_THRESHOLDS = {
    "symbol_error": 0,
    "link_error_recovery": 0,
    "link_downed": 0,
    "port_rcv_errors": 0,
    "port_rcv_remote_physical_errors": 0,
    "excessive_buffer_overrun_errors": 0,
    "local_link_integrity_errors": 0,
    "port_xmit_discards": 0,
    # link_downed growth since the last run (a flapping port)
    "link_downed_since_last_run": 0,
}
# The verify role's health settings and their defaults (roles/verify/defaults/main.yml repeats them)
SETTINGS = {
    "verify_health": True,
    "verify_health_interval": 1,
    "verify_health_thresholds": {},
    "verify_health_expected": {},
    "verify_health_state_path": "/var/lib/fabric-infiniband/port_health.json",
    "verify_health_gate": False,
    "verify_health_max_drain": "10%",
    "verify_health_slurm_controller": "",
    "verify_health_k8s_from": "",
    "verify_health_kubeconfig": "",
    "verify_health_k8s_context": "",
    "verify_health_taint_key": "fabric.infiniband/fabric-unhealthy",
}
CHECKS = ("state", "physical_state", "width", "speed", "errors", "flaps")
# a failure's code: the value of the Kubernetes taint (a label value) and the start of the Slurm reason
CODES = {"state": "port-down", "physical_state": "port-down", "width": "link-degraded", "speed": "link-degraded",
         "errors": "port-errors", "flaps": "link-flapping", "missing": "port-missing"}
OK, FAIL, SKIP = "ok", "FAIL", "-"
SLURM_PREFIX = "fabric.infiniband:"
DEFAULT_TAINT_KEY = "fabric.infiniband/fabric-unhealthy"
_EXPECTED_KEYS = ("models", "rails", "ports")
_RULE_KEYS = ("width", "speed", "up")
# A Kubernetes taint key: an optional DNS subdomain prefix and '/', then a name of at most 63 characters.
_DNS_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_TAINT_PREFIX = re.compile(r"^%s(\.%s)*$" % (_DNS_LABEL, _DNS_LABEL))
_TAINT_NAME = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")
_PERCENT = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*%\s*$")


# ------------------------------------------------------------------------------------------------ settings
def _number(value):
    """A threshold as a number (ints, floats, their text), None when it is not one."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return value
    if isinstance(value, str):
        try:
            return float(value) if "." in value else int(value)
        except ValueError:
            return None
    return None


def thresholds(value, name="verify_health_thresholds"):
    """(the thresholds with the defaults filled in, problems naming the variable)."""
    out, problems = dict(DEFAULT_THRESHOLDS), []
    if value in (None, ""):
        return out, problems
    if not isinstance(value, dict):
        return out, ["%s must be a mapping of counter names to numbers, not %s" % (name, type(value).__name__)]
    for key, raw in value.items():
        where = "%s.%s" % (name, key)
        if key not in DEFAULT_THRESHOLDS:
            problems.append("%s is not a counter this check knows; known: %s" % (where, ", ".join(sorted(DEFAULT_THRESHOLDS))))
            continue
        number = _number(raw)
        if number is None or (isinstance(number, float) and math.isnan(number)):
            problems.append("%s must be a number, not %r" % (where, raw))
        elif number < 0:
            problems.append("%s must be 0 or more, not %s" % (where, raw))
        else:
            out[key] = number
    return out, problems


def _width(value):
    text = str(value).strip().upper()
    text = text if text.endswith("X") else text + "X"
    return text if text in WIDTHS else None


def expected_rules(value, name="verify_health_expected"):
    """(rules {models, rails, ports} with normalised widths and speeds, problems naming the variable)."""
    rules, problems = {"models": {}, "rails": {}, "ports": {}}, []
    if value in (None, ""):
        return rules, problems
    if not isinstance(value, dict):
        return rules, ["%s must be a mapping with keys %s" % (name, ", ".join(_EXPECTED_KEYS))]
    for section, entries in value.items():
        if section not in _EXPECTED_KEYS:
            problems.append("%s.%s is unknown; known: %s" % (name, section, ", ".join(_EXPECTED_KEYS)))
            continue
        if not isinstance(entries, dict):
            problems.append("%s.%s must be a mapping" % (name, section))
            continue
        for key, rule in entries.items():
            where = "%s.%s.%s" % (name, section, key)
            if section == "rails" and _number(key) is None:
                problems.append("%s: a rail is a number (0 for the first InfiniBand port of the node)" % where)
                continue
            if not isinstance(rule, dict):
                problems.append("%s must be a mapping with keys %s" % (where, ", ".join(_RULE_KEYS)))
                continue
            clean = {}
            for field, raw in rule.items():
                if field not in _RULE_KEYS:
                    problems.append("%s.%s is unknown; known: %s" % (where, field, ", ".join(_RULE_KEYS)))
                elif field == "width":
                    clean["width"] = _width(raw)
                    if clean["width"] is None:
                        problems.append("%s.width must be one of %s, not %r" % (where, ", ".join(WIDTHS), raw))
                elif field == "speed":
                    clean["speed"] = str(raw).strip().upper()
                    if clean["speed"] not in SPEEDS:
                        problems.append("%s.speed must be one of %s, not %r" % (where, ", ".join(SPEEDS), raw))
                elif not isinstance(raw, bool):
                    problems.append("%s.up must be true or false, not %r" % (where, raw))
                else:
                    clean["up"] = raw
            rules[section][int(_number(key)) if section == "rails" else str(key)] = clean
    return rules, problems


def max_drain(value, total, name="verify_health_max_drain"):
    """(how many of ``total`` nodes one run may take out, problem): a number, or ``N%`` of the nodes (rounded down,
    at least one while there are nodes)."""
    if isinstance(value, str):
        match = _PERCENT.match(value)
        if match:
            percent = float(match.group(1))
            if percent > 100:
                return 0, "%s must be at most 100%%, not %s" % (name, value)
            return (max(1, int(total * percent / 100.0)) if total and percent else 0), None
    number = _number(value)
    if number is None or isinstance(number, float) and not number.is_integer():
        return 0, "%s must be a whole number of nodes or a percentage like '10%%', not %r" % (name, value)
    if number < 0:
        return 0, "%s must be 0 or more, not %s" % (name, value)
    return int(number), None


def taint_key_problem(key, name="verify_health_taint_key"):
    """Why ``key`` is no valid Kubernetes taint key (prefix/name), None when it is one."""
    if not isinstance(key, str) or not key:
        return "%s must be a taint key such as %s" % (name, DEFAULT_TAINT_KEY)
    prefix, _sep, base = key.rpartition("/")
    if key.count("/") > 1 or (_sep and (not prefix or len(prefix) > 253 or not _TAINT_PREFIX.match(prefix))):
        return "%s: %r has no valid DNS subdomain prefix (lower case, dots, at most 253 characters)" % (name, key)
    if len(base) > 63 or not _TAINT_NAME.match(base):
        return ("%s: %r: the name after the prefix must be at most 63 letters, digits, '-', '_' or '.', beginning and "
                "ending with a letter or digit" % (name, key))
    return None


def check_settings(settings, total_nodes=0):
    """Every problem of the ``verify_health_*`` settings (a list of messages naming the variables)."""
    problems = []
    problems += thresholds(settings.get("verify_health_thresholds"))[1]
    problems += expected_rules(settings.get("verify_health_expected"))[1]
    interval = _number(settings.get("verify_health_interval", 1))
    if interval is None or interval < 0 or interval > 300:
        problems.append("verify_health_interval must be a number of seconds from 0 to 300, not %r"
                        % settings.get("verify_health_interval"))
    problem = max_drain(settings.get("verify_health_max_drain", "10%"), total_nodes)[1]
    if problem:
        problems.append(problem)
    problem = taint_key_problem(settings.get("verify_health_taint_key", DEFAULT_TAINT_KEY))
    if problem:
        problems.append(problem)
    for name in ("verify_health", "verify_health_gate", "verify_health_slurm", "verify_health_kubernetes"):
        if name in settings and not isinstance(settings[name], bool):
            problems.append("%s must be true or false, not %r" % (name, settings[name]))
    return problems


# ------------------------------------------------------------------------------------------------ judgement
def expected_for(port, rail, rules):
    """(width, speed, up) expected of one port: the rule of its name (``mlx5_0/1``), else of its device
    (``mlx5_0``), else of its rail, else of its model; unset parts default to 4X and the model's highest speed."""
    out = {}
    for rule in (rules["models"].get(port.get("model") or ""), rules["rails"].get(rail),
                 rules["ports"].get(port["device"]), rules["ports"].get(port["name"])):
        out.update(rule or {})
    return (out.get("width", DEFAULT_WIDTH), out.get("speed", MODEL_SPEEDS.get(port.get("model") or "")),
            out.get("up", True))


def judge(ports, settings):
    """One row per InfiniBand port of the node's physical functions, and the node's failures.

    Returns ``{"passed", "rows": [{"port", "model", "rate", "state", "physical_state", "width", "speed", "errors",
    "flaps", "result", "reasons"}], "failures": [{"port", "check", "code", "reason"}]}``.
    """
    limits = thresholds(settings.get("verify_health_thresholds"))[0]
    rules = expected_rules(settings.get("verify_health_expected"))[0]
    ib = [p for p in ports or [] if p.get("link_layer") == "InfiniBand" and not p.get("is_vf")]
    rows, failures = [], []
    for rail, port in enumerate(ib):
        width, speed, up = expected_for(port, rail, rules)
        name = port["name"]
        row = {"port": name, "model": port.get("model"), "rate": port.get("rate"), "result": OK, "reasons": []}
        if not up:
            row.update(dict.fromkeys(CHECKS, SKIP), result=SKIP, reasons=["not expected up"], expected={}, found={})
            rows.append(row)
            continue

        def fail(check, reason, row, name):
            row[check] = FAIL
            row["reasons"].append(reason)
            failures.append({"port": name, "check": check, "code": CODES[check], "reason": "%s: %s" % (name, reason)})

        row.update(dict.fromkeys(CHECKS, OK))
        if port.get("state") != "ACTIVE":
            fail("state", "state %s, expected ACTIVE" % (port.get("state") or "unknown"), row, name)
        if port.get("physical_state") != "LinkUp":
            fail("physical_state", "physical state %s, expected LinkUp" % (port.get("physical_state") or "unknown"), row, name)
        link_up = port.get("state") == "ACTIVE"
        if not link_up:
            row["width"] = row["speed"] = SKIP  # a port that is down has no width to judge
        elif port.get("width") != width:
            fail("width", "width %s, expected %s" % (port.get("width") or "unknown", width), row, name)
        if link_up and speed is None:
            row["speed"] = SKIP
        elif link_up and port.get("speed") != speed:
            fail("speed", "speed %s, expected %s" % (port.get("speed") or "unknown", speed), row, name)
        grown = ["%s +%d (threshold %s)" % (counter, value, limits[counter])
                 for counter, value in sorted((port.get("growth") or {}).items())
                 if counter in limits and value is not None and value > limits[counter]]
        if grown:
            fail("errors", "%s in %ss" % (", ".join(grown), settings.get("verify_health_interval", 1)), row, name)
        flaps = port.get("link_downed_since_last_run")
        if flaps is not None and flaps > limits["link_downed_since_last_run"]:
            fail("flaps", "link went down %d time%s since the last run" % (flaps, "" if flaps == 1 else "s"), row, name)
        if row["reasons"]:
            row["result"] = FAIL
        # what a report shows per check: expected, found
        row["expected"] = {"state": "ACTIVE", "physical_state": "LinkUp", "width": width, "speed": speed or "any",
                           "errors": "no growth above the thresholds",
                           "flaps": "at most %s since the last run" % limits["link_downed_since_last_run"]}
        row["found"] = {"state": port.get("state"), "physical_state": port.get("physical_state"),
                        "width": port.get("width"), "speed": port.get("speed"),
                        "errors": ", ".join(grown) if grown else "no growth",
                        "flaps": "unknown (no last run)" if flaps is None else "%d since the last run" % flaps}
        rows.append(row)
    return {"passed": not failures, "rows": rows, "failures": failures}


def node_reason(failures):
    """(code, text) of a node's failures: the first failure's code (a taint value), all reasons joined."""
    if not failures:
        return None, ""
    return failures[0]["code"], "; ".join(f["reason"] for f in failures)


# ------------------------------------------------------------------------------------------------ the gate
def ours_in_slurm(reason):
    """Whether a Slurm drain reason is the collection's (an administrator's drain is never resumed)."""
    return bool(reason) and reason.startswith(SLURM_PREFIX)


def gate_plan(health, limit, slurm=None, taints=None, taint_key=DEFAULT_TAINT_KEY):
    """What the gate does over one run's nodes.

    ``health``: host -> {passed, failures}; ``slurm``: host -> {"state", "reason"} for the hosts Slurm knows (its
    node name as ``node``); ``taints``: host -> the Kubernetes node's taints (list of {key, value, effect}) for the
    hosts Kubernetes knows. Returns ``{"refused": message or None, "drain": [...], "resume": [...], "taint": [...],
    "untaint": [...], "left": [...]}``, each a list of {host, reason|code}. ``left``: failing nodes already out, and
    healthy nodes an administrator drained (never resumed).
    """
    slurm, taints = slurm or {}, taints or {}
    failing = sorted(h for h, r in health.items() if not r.get("passed"))
    plan = {"refused": None, "drain": [], "resume": [], "taint": [], "untaint": [], "left": []}
    if len(failing) > limit:
        plan["refused"] = (
            "%d of %d nodes fail the fabric health check (%s), more than verify_health_max_drain allows (%d): a "
            "fabric-wide fault (a subnet manager down, a spine switch lost) is suspected, so no node is drained or "
            "tainted. Fix the fabric, or raise verify_health_max_drain if these nodes really are each at fault."
            % (len(failing), len(health), ", ".join(failing), limit))
        return plan
    for host in sorted(health):
        code, text = node_reason(health[host].get("failures") or [])
        node = slurm.get(host)
        if node is not None:
            drained = "DRAIN" in str(node.get("state", "")).upper()  # sinfo: drained, draining; scontrol: IDLE+DRAIN
            ours = ours_in_slurm(node.get("reason"))
            if code:
                if not drained:
                    plan["drain"].append({"host": host, "node": node.get("node", host),
                                          "reason": "%s %s" % (SLURM_PREFIX, text)})
                else:
                    plan["left"].append({"host": host, "why": "already drained (%s)" % (node.get("reason") or "")})
            elif drained and ours:
                plan["resume"].append({"host": host, "node": node.get("node", host)})
            elif drained:
                plan["left"].append({"host": host, "why": "drained by someone else (%s): left as it is"
                                     % (node.get("reason") or "no reason")})
        if host in taints:
            mine = [t for t in taints[host] or [] if t.get("key") == taint_key]
            if code and not any(t.get("value") == code and t.get("effect") == "NoSchedule" for t in mine):
                plan["taint"].append({"host": host, "code": code})
            elif not code and mine:
                plan["untaint"].append({"host": host})
    return plan


def fact(run_id, judged):
    """The node fact ``infiniband_health``: stamped with the run, whether it passed, its failures and rows."""
    return {"run_id": run_id, "passed": judged["passed"], "failures": judged["failures"], "rows": judged["rows"]}


SINFO_ARGV = ["sinfo", "--noheader", "--Node", "--format", "%N|%T|%300E"]


def parse_sinfo(text):
    """``sinfo -h -N -o '%N|%T|%300E'`` as {node: {"node", "state", "reason"}} (a node of several partitions once;
    a reason of ``none`` is no reason)."""
    out = {}
    for line in (text or "").splitlines():
        parts = line.split("|", 2)
        if len(parts) != 3 or not parts[0].strip():
            continue
        reason = parts[2].strip()
        out[parts[0].strip()] = {"node": parts[0].strip(), "state": parts[1].strip().rstrip("*~#!%$@^-").upper(),
                                 "reason": None if reason in ("", "none") else reason}
    return out


def slurm_argv(node, action, reason=None):
    """``scontrol update`` of one node: drain with our reason, or resume."""
    argv = ["scontrol", "update", "nodename=%s" % node, "state=%s" % action]
    if reason:
        argv.append("reason=%s" % reason)
    return argv


def taints_after(taints, key, code):
    """The Node's taint list with ours (``key``) set to ``code`` (NoSchedule), or removed when ``code`` is None;
    every other taint kept as it is."""
    kept = [t for t in taints or [] if t.get("key") != key]
    if code:
        kept.append({"key": key, "value": code, "effect": "NoSchedule"})
    return kept
