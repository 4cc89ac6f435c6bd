# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The verify role's RDMA traffic step, on the controller: the pairs, their batches and thresholds, and the verdicts.

Used by the filters ``verify_traffic_plan`` and ``verify_traffic_rows`` (their documentation says the rules); the
nodes run perftest through the module ``perftest`` (module_utils/perftest.py parses its output).
"""

from __future__ import annotations

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
        return float(value)
    except (TypeError, ValueError):
        return None


def _table_row(thresholds, rate):
    if rate is None:
        return {}
    candidates = []
    for key, row in (thresholds or {}).items():
        value = _number(key)
        if value is not None and value <= rate and isinstance(row, dict):
            candidates.append((value, row))
    return max(candidates, key=lambda item: item[0])[1] if candidates else {}


def _end_thresholds(node, rate):
    row = _table_row(node.get("thresholds"), rate)
    bw = _number(node.get("min_bw_gbps"))
    lat = _number(node.get("max_lat_us"))
    return (bw if bw is not None else _number(row.get("min_bw_gbps")),
            lat if lat is not None else _number(row.get("max_lat_us")))


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
    bws = [bw for bw, _lat in ends if bw is not None]
    lats = [lat for _bw, lat in ends if lat is not None]
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
