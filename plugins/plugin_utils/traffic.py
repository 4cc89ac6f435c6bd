# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The verify role's RDMA traffic step, on the controller: the pairs, their batches and thresholds, and the verdicts.

Used by the action ``verify`` (its ``traffic_plan`` step and the report) and the filters ``verify_traffic_plan`` and
``verify_traffic_rows`` (their documentation says the rules); the nodes run perftest through the module ``perftest``
(module_utils/perftest.py parses its output).
"""

from __future__ import annotations

import math
import re

PASS, FAIL, PLANNED, UNPAIRED = "pass", "fail", "planned", "unpaired"
_NATURAL = re.compile(r"(\d+)")


def _natural(name):
    return [int(part) if part.isdigit() else part for part in _NATURAL.split(name or "")]


def _rails(hca, roce=False):
    """(device, port entry) of every InfiniBand port of the host's physical functions (and Ethernet ones, RoCE, when
    ``roce``), in RDMA device name order."""
    layers = ("InfiniBand", "Ethernet") if roce else ("InfiniBand",)
    entries = [e for e in (hca or {}).get("hcas") or [] if not e.get("is_vf") and e.get("rdma_device")]
    rails = []
    for entry in sorted(entries, key=lambda e: _natural(e["rdma_device"])):
        for port in entry.get("ports") or []:
            if port.get("link_layer", "InfiniBand") in layers:
                rails.append((entry["rdma_device"], port))
    return rails


def _number(value):
    if value is None or isinstance(value, bool):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


# --- the thresholds, checked before any traffic (the verify step refuses them by these sentences) ----------------------

TABLE = "verify_traffic_thresholds"
# key of a row -> (the fixed setting that stands in for it, its unit, an example)
THRESHOLD_KEYS = {"min_bw_gbps": ("verify_traffic_min_bw_gbps", "Gb/s", "180"),
                  "max_lat_us": ("verify_traffic_max_lat_us", "microseconds", "6")}
RATE_ACCEPTED = "accepted: link rates in Gb/s as numbers greater than 0 (100, 200, 400), each with a row {min_bw_gbps: 180, max_lat_us: 6}"
# a number followed by a unit, as people write a rate or a bandwidth ("180 Gb/s", "180G", "6us", "200Gbps")
_WITH_UNIT = re.compile(r"^\s*([-+]?[0-9]+(?:\.[0-9]*)?)\s*([A-Za-z\u00b5/]+)\s*$")


def _unit_hint(value, unit):
    """`` (the unit ... : write 180)`` for a number written with a unit, else ``""``."""
    match = _WITH_UNIT.match(value) if isinstance(value, str) else None
    if not match:
        return ""
    return " (a number with a unit: the unit is %s, given by the name, so write %s)" % (unit, match.group(1))


def _threshold_problem(value, where, key):
    """Why ``value`` is no threshold ``key`` (``min_bw_gbps`` or ``max_lat_us``), or None."""
    _setting, unit, example = THRESHOLD_KEYS[key]
    number = _number(value)
    if number is not None and number > 0:
        return None
    if number is not None and number <= 0:
        why = (" (a negative or zero bandwidth lets every pair pass)" if key == "min_bw_gbps"
               else " (a negative or zero latency fails every pair)")
    else:
        why = _unit_hint(value, unit)
    return "%s: %r is not accepted%s; accepted: a number of %s greater than 0, such as %s" % (where, value, why, unit, example)


def truthy(value):
    """A boolean setting as the verify role reads it (verify_traffic, verify_fail, ...)."""
    if isinstance(value, bool):
        return value
    return str(value).strip().lower() in ("1", "true", "yes", "on", "y")


def _on(settings):
    """Whether the traffic step runs."""
    return truthy(settings.get("verify_traffic", False))


def timeout_problem(settings):
    """Why ``verify_traffic_timeout`` bounds no perftest run, or None (also None when the traffic step is off). It bounds
    each test, a server's wait for its client and a client's for its server: below one second nothing would run."""
    value = settings.get("verify_traffic_timeout")
    if not _on(settings) or value is None:
        return None
    number = _number(value)
    if number is not None and number >= 1 and number == int(number):
        return None
    return ("verify_traffic_timeout: %r is not accepted; accepted: a whole number of seconds from 1, such as 60 (it bounds "
            "each perftest run and a client's wait for its server)" % (value,))


def threshold_problems(settings):
    """Sentences about thresholds that would judge no pair as the user meant: ``verify_traffic_min_bw_gbps`` and
    ``verify_traffic_max_lat_us`` not positive, and rows of ``verify_traffic_thresholds`` whose rate or values are not
    positive numbers (a unit written into the value: ``"180 Gb/s"``, ``"180G"``), that lack a value the fixed setting does
    not stand in for (setting the table replaces it whole), or that name a key the step does not read. None when the
    traffic step is off."""
    if not _on(settings):
        return []
    problems = []
    fixed = {}
    for key, (name, _unit, _example) in THRESHOLD_KEYS.items():
        value = settings.get(name)
        fixed[key] = value is not None
        if value is not None:
            problems.append(_threshold_problem(value, name, key))
    table = settings.get(TABLE)
    if table is None:
        table = {}
    if not isinstance(table, dict):
        return [p for p in problems if p] + ["%s: %r is not accepted; it must be a mapping of link rate to row; %s" % (TABLE, table, RATE_ACCEPTED)]
    rates = {}
    for rate, row in table.items():
        where = "%s[%s]" % (TABLE, rate if _number(rate) is not None and not isinstance(rate, str) else repr(rate))
        number = _number(rate)
        if number is None or number <= 0:
            hint = _unit_hint(rate, "Gb/s") if number is None else " (not greater than 0)"
            problems.append("%s: the link rate %r is not accepted%s; %s" % (TABLE, rate, hint, RATE_ACCEPTED))
            continue
        if number in rates:
            problems.append("%s: the link rate %s is given twice (as %r and %r); one row per rate" % (TABLE, rate, rates[number], rate))
        rates.setdefault(number, rate)
        if not isinstance(row, dict):
            problems.append("%s: %r is not accepted; accepted: a mapping such as {min_bw_gbps: 180, max_lat_us: 6}" % (where, row))
            continue
        unknown = sorted(str(k) for k in row if k not in THRESHOLD_KEYS)
        if unknown:
            plural = "" if len(unknown) == 1 else "s"
            problems.append("%s: unknown key%s %s; accepted: min_bw_gbps, max_lat_us" % (where, plural, ", ".join(unknown)))
        for key, (name, _unit, _example) in THRESHOLD_KEYS.items():
            if row.get(key) is not None:
                problems.append(_threshold_problem(row[key], "%s.%s" % (where, key), key))
            elif not fixed[key]:
                problems.append("%s has no %s, so a pair at that rate would have no threshold (setting %s replaces the whole "
                                "table: give every row min_bw_gbps and max_lat_us, or set %s)" % (where, key, TABLE, name))
    return [p for p in problems if p]


def _table_row(thresholds, rate):
    """``(key, row)`` of the row of the highest rate at or below ``rate``, ``(None, {})`` when there is none."""
    if rate is None:
        return None, {}
    candidates = []
    for key, row in (thresholds or {}).items():
        value = _number(key)
        if value is not None and value <= rate:
            candidates.append((value, key, row))
    if not candidates:
        return None, {}
    _value, key, row = max(candidates, key=lambda item: item[0])
    return key, row if isinstance(row, dict) else {}


def _end_thresholds(node, rate):
    """``(min_bw_gbps, max_lat_us, why)`` of one end: its fixed values, else its row for ``rate``; ``why`` says which
    value of the row that was chosen is missing or no positive number (None when both are there)."""
    key, row = _table_row(node.get("thresholds"), rate)
    found, why = [], []
    for name in THRESHOLD_KEYS:
        fixed = _number(node.get(name))
        value = fixed if fixed is not None else _number(row.get(name))
        if value is not None and value <= 0:
            value = None
        if value is None and key is not None:
            why.append("%s[%s].%s is %r" % (TABLE, key, name, row.get(name)))
        found.append(value)
    return found[0], found[1], "; ".join(why) or None


def pair_problems(pairs, hosts):
    """Sentences about explicit pairs that cannot run, naming verify_traffic_pairs."""
    problems = []
    known = list(hosts or [])
    seen = set()
    for index, pair in enumerate(pairs or []):
        where = "verify_traffic_pairs[%d]" % index
        if not isinstance(pair, dict) or not pair.get("server") or not pair.get("client"):
            problems.append("%s: %r needs server and client, host names of the inventory" % (where, pair))
            continue
        server, client = str(pair["server"]), str(pair["client"])
        for key, host in (("server", server), ("client", client)):
            if host not in known:
                problems.append("%s.%s: %s is no host of the play (hosts: %s)" % (where, key, host, ", ".join(known) or "none"))
        if server == client:
            problems.append("%s: %s is paired with itself; server and client must be two nodes" % (where, server))
        key = (server, str(pair.get("server_hca") or ""), client, str(pair.get("client_hca") or ""))
        if key in seen:
            problems.append("%s: the pair %s - %s is given twice" % (where, server, client))
        seen.add(key)
    return problems


def _default_pairs(hosts):
    pairs = [(hosts[i], hosts[i + 1]) for i in range(0, len(hosts) - 1, 2)]
    if len(hosts) % 2 == 1 and len(hosts) > 2:
        pairs.append((hosts[-1], hosts[0]))
    return pairs


def _run(server, client, server_rail, client_rail, nodes):
    (server_hca, server_port), (client_hca, client_port) = server_rail, client_rail
    rates = [_number(p.get("rate_gbps")) for p in (server_port, client_port)]
    rate = min(rates) if None not in rates else None
    ends = [_end_thresholds(nodes[h], rate) for h in (server, client)]
    bws = [bw for bw, _lat, _why in ends if bw is not None]
    lats = [lat for _bw, lat, _why in ends if lat is not None]
    rows_why = ["%s: %s" % (host, why) for host, (_bw, _lat, why) in zip((server, client), ends) if why]
    run = {
        "server": server, "client": client, "server_hca": server_hca, "client_hca": client_hca,
        "server_port": server_port.get("port", 1), "client_port": client_port.get("port", 1),
        "server_address": nodes[server].get("address") or server, "rate_gbps": rate,
        "min_bw_gbps": min(bws) if len(bws) == 2 else (bws[0] if bws else None),
        "max_lat_us": max(lats) if len(lats) == 2 else (lats[0] if lats else None),
        # both ends must run the same iterations: the server's settings
        "bw_iterations": nodes[server].get("bw_iterations"), "lat_iterations": nodes[server].get("lat_iterations"),
        "problem": None,
    }
    down = ["%s %s/%s is %s" % (host, hca, port.get("port", 1), port.get("state"))
            for host, (hca, port) in ((server, server_rail), (client, client_rail)) if port.get("state") != "ACTIVE"]
    if down:
        run["problem"] = "; ".join(down)
    elif (run["min_bw_gbps"] is None or run["max_lat_us"] is None) and rows_why:
        # the row is there, but a value of it is no positive number (the verify step refuses these before any traffic)
        run["problem"] = "no usable threshold for a link rate of %g Gb/s: %s; accepted: numbers greater than 0, without a unit" % (
            rate, "; ".join(rows_why))
    elif run["min_bw_gbps"] is None or run["max_lat_us"] is None:
        run["problem"] = ("no threshold for a link rate of %s Gb/s: set verify_traffic_min_bw_gbps and verify_traffic_max_lat_us, "
                          "or a row of verify_traffic_thresholds at or below that rate" % (rate if rate is not None else "unknown"))
    return run


def _rail(host, hca, rails, where):
    for rail in rails:
        if rail[0] == hca:
            return rail, None
    return None, "%s: %s has no HCA %s (it has: %s)" % (where, host, hca, ", ".join(sorted({r[0] for r in rails}, key=_natural)) or "none")


def plan(nodes, pairs=None, port=18515):
    """The runs; ``nodes`` maps each host of the play, in order, to its hca, address and thresholds (a list of host
    names checks the explicit pairs only)."""
    if isinstance(nodes, (list, tuple)):
        return {"runs": [], "batches": 0, "problems": pair_problems(pairs, [str(h) for h in nodes]), "notes": []}
    if not isinstance(nodes, dict):
        raise ValueError("expected a dict of hosts, each with hca, address and thresholds, or a list of host names")
    hosts = list(nodes)
    problems = pair_problems(pairs, hosts)
    runs, notes = [], []
    if problems:
        return {"runs": [], "batches": 0, "problems": problems, "notes": notes}
    with_data = [h for h in hosts if isinstance((nodes[h] or {}).get("hca"), dict) and "hcas" in nodes[h]["hca"]]
    rails = {h: _rails(nodes[h]["hca"], roce=bool(nodes[h].get("roce"))) for h in with_data}
    if pairs:
        for index, pair in enumerate(pairs):
            server, client = str(pair["server"]), str(pair["client"])
            where = "verify_traffic_pairs[%d]" % index
            missing = [h for h in (server, client) if h not in rails]
            if missing:
                runs.append(dict(server=server, client=client, server_hca=pair.get("server_hca"), client_hca=pair.get("client_hca"),
                                 problem="no data from %s (unreachable, or its discovery failed)" % " and ".join(missing)))
                continue
            if pair.get("server_hca") or pair.get("client_hca"):
                chosen = []
                for host, key in ((server, "server_hca"), (client, "client_hca")):
                    wanted = pair.get(key) or (rails[host][0][0] if rails[host] else None)
                    rail, problem = _rail(host, wanted, rails[host], "%s.%s" % (where, key))
                    if problem:
                        problems.append(problem)
                    chosen.append(rail)
                if None not in chosen:
                    runs.append(_run(server, client, chosen[0], chosen[1], nodes))
                continue
            runs.extend(_rail_runs(server, client, rails, nodes))
    else:
        for server, client in _default_pairs(with_data):
            runs.extend(_rail_runs(server, client, rails, nodes))
        if len(with_data) < 2:
            notes.append("no pair: the play has %d node%s with data, traffic needs two" % (len(with_data), "" if len(with_data) == 1 else "s"))
    if problems:
        return {"runs": [], "batches": 0, "problems": problems, "notes": notes}
    batches = []
    for number, run in enumerate(runs):
        run["id"] = number
        if run.get("problem") or run.get("unpaired"):
            run["batch"] = None
            continue
        index = next((i for i, used in enumerate(batches) if run["server"] not in used and run["client"] not in used), None)
        if index is None:
            index = len(batches)
            batches.append(set())
        # two ports per run already in this batch
        run["tcp_port"] = port + len(batches[index])
        batches[index].update((run["server"], run["client"]))
        run["batch"] = index
    return {"runs": runs, "batches": len(batches), "problems": [], "notes": notes}


def _rail_runs(server, client, rails, nodes):
    runs = []
    count = max(len(rails[server]), len(rails[client]))
    for index in range(count):
        if index >= len(rails[server]) or index >= len(rails[client]):
            have, lack = (server, client) if index < len(rails[server]) else (client, server)
            hca = rails[have][index][0]
            # nodes of different kinds (a storage node beside a GPU node) have different rail counts: reported, not failed
            runs.append(dict(server=server, client=client,
                             server_hca=hca if have == server else None, client_hca=hca if have == client else None,
                             unpaired="%s has no HCA on rail %d to pair with %s %s" % (lack, index, have, hca)))
            continue
        runs.append(_run(server, client, rails[server][index], rails[client][index], nodes))
    return runs


def _ends(run):
    return "%s %s -> %s %s" % (run.get("server"), run.get("server_hca") or "(no HCA)", run.get("client"), run.get("client_hca") or "(no HCA)")


def _result(results, run_id, side):
    for item in results or []:
        if isinstance(item, dict) and item.get("run") == run_id and side in item:
            return item[side]
    return None


def rows(the_plan, results=None, planned_why=None):
    """Report rows: one per run, with its figures, thresholds and verdict.

    ``results``: what the nodes kept, items ``{"run": id, "client": <perftest result>}`` and
    ``{"run": id, "server": <perftest result>}``. ``planned_why``: the reason no traffic moved
    (check mode, plan only), or None when it did.
    """
    out = []
    for run in (the_plan or {}).get("runs") or []:
        row = {key: run.get(key) for key in ("server", "server_hca", "server_port", "client", "client_hca", "client_port",
                                             "rate_gbps", "min_bw_gbps", "max_lat_us")}
        row.update(bw_gbps=None, lat_us=None, reasons=[])
        if run.get("unpaired"):
            row.update(status=UNPAIRED, reasons=[run["unpaired"]])
        elif run.get("problem"):
            row.update(status=FAIL, reasons=[run["problem"]])
        elif planned_why:
            row.update(status=PLANNED, reasons=[planned_why])
        else:
            client = _result(results, run["id"], "client")
            server = _result(results, run["id"], "server")
            tests = (client or {}).get("tests") or {}
            row["bw_gbps"] = (tests.get("write_bw") or {}).get("bw_gbps")
            row["lat_us"] = (tests.get("read_lat") or {}).get("lat_us")
            reasons = row["reasons"]
            # a registered result with failed_when false: a run that failed has no ran, and says why in msg
            if client is None:
                reasons.append("no result from the client %s (unreachable, or it failed before the batch)" % run["client"])
            elif not client.get("ran"):
                reasons.append("client: %s" % (client.get("msg") or "failed"))
            if server is None and reasons:
                reasons.append("the server %s gave no result (unreachable, or it failed to start)" % run["server"])
            elif server is not None and not server.get("ran") and reasons:
                reasons.append("server: %s" % (server.get("msg") or "failed"))
            if row["bw_gbps"] is not None and row["min_bw_gbps"] is not None and row["bw_gbps"] < row["min_bw_gbps"]:
                reasons.append("bandwidth %g Gb/s is below %g Gb/s" % (row["bw_gbps"], row["min_bw_gbps"]))
            if row["lat_us"] is not None and row["max_lat_us"] is not None and row["lat_us"] > row["max_lat_us"]:
                reasons.append("latency %g us is above %g us" % (row["lat_us"], row["max_lat_us"]))
            if not reasons and (row["bw_gbps"] is None or row["lat_us"] is None):
                reasons.append("no figure in the client's result")
            row["status"] = FAIL if reasons else PASS
        row["pair"] = _ends(run)
        out.append(row)
    return out
