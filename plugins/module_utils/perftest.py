# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""perftest (``ib_write_bw``, ``ib_read_lat``): argv builders, the result table parser, errors.

The result tables (linux-rdma/perftest ``src/perftest_parameters.h``, ``RESULT_FMT*``), by
generation:

- bandwidth: `` #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]``
  (4.x, where MB is 2^20 bytes); ``[MiB/sec]`` in the same place in the newest releases;
  ``[Gb/sec]`` (10^9 bits) with ``--report_gbits``, which every run of this collection asks for.
  ``--report-both`` and dual-port runs add columns (``BW Port1[...]`` and so on); ``-q``/``--sl``
  runs add ``#sl`` after ``#bytes``.
- latency, iterations mode (every 4.x and later release): `` #bytes #iterations    t_min[usec]
  t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]   99% percentile[usec]   99.9%
  percentile[usec]``; older releases print fewer columns, duration mode (``-D``) prints
  `` #bytes        #iterations       t_avg[usec]    tps average``.

The header names its columns with single spaces inside a name and two or more (or tabs) between
names, except `` #bytes #iterations`` of the latency tables; the rows are numbers separated by spaces and tabs in varying amounts. So the parser reads
the column names from the header line and the numbers from the row under it, whatever the
whitespace. ``--out_json`` exists only from perftest 23.04; Debian 12 ships 4.5, so the text is
what a node prints.

The client connects to the server over TCP (``-p PORT``) to exchange the queue pair details and
then moves the data over RDMA; a server waits for one client, runs the test once and exits.
"""

from __future__ import annotations

import re


TESTS = {
    # test name: (tool, kind)
    "write_bw": ("ib_write_bw", "bw"),
    "read_lat": ("ib_read_lat", "lat"),
}

# Gb/s per unit of a bandwidth column (perftest's MB is 2^20 bytes: format_factor 0x100000).
_BW_UNITS = {"gb/sec": 1.0, "mb/sec": 1048576 * 8 / 1e9, "mib/sec": 1048576 * 8 / 1e9}
_COLUMN_RE = re.compile(r"^(?P<name>[^\[]+?)\s*(?:\[(?P<unit>[^\]]+)\])?$")
_NUMBER_RE = re.compile(r"^-?[0-9]+(?:\.[0-9]+)?$")
_HEADER_SPLIT = re.compile(r"\s{2,}|\t")

# What the client prints when no server listens (yet) on the address and port it was given.
CONNECT_ERRORS = ("Couldn't connect to", "Unable to open file descriptor for socket connection")
# What perftest prints when it cannot use the RDMA device.
DEVICE_ERRORS = ("No IB devices found", "IB device", "Unable to find the Infiniband/RoCE device",
                 "Couldn't get context for the device", "Port number")


def tool(test):
    """The perftest program of ``test`` (``write_bw`` -> ``ib_write_bw``)."""
    return TESTS[test][0]


def args(test, device, ib_port, tcp_port, server=None, iterations=None, size=None):
    """Arguments after the program's path: the server's when ``server`` is None, else the client's.

    ``-F`` keeps a CPU frequency governor that is not at its maximum from turning into a warning
    that latency tests print instead of running on some versions; the client and the server must
    be given the same ``-n``/``-s``.
    """
    out = ["-d", device, "-i", str(ib_port), "-p", str(tcp_port), "-F"]
    if TESTS[test][1] == "bw":
        out.append("--report_gbits")
    if iterations:
        out += ["-n", str(iterations)]
    if size:
        out += ["-s", str(size)]
    if server:
        out.append(server)
    return out


def _column_key(name):
    match = _COLUMN_RE.match(name.strip())
    base = match.group("name").strip().lower() if match else name.strip().lower()
    unit = (match.group("unit") or "").strip().lower() if match else ""
    base = base.lstrip("#").replace("%", "").replace(" percentile", "").strip()
    base = re.sub(r"[^a-z0-9.]+", "_", base).replace(".", "_")
    if base[:1].isdigit():
        base = "p" + base
    return base, unit


def parse_table(text):
    """The result rows of a perftest run: a list of dicts, one per row of its last result table.

    Each dict maps the column's key to its number: ``bytes``, ``iterations``, ``bw_peak_gbps``,
    ``bw_average_gbps``, ``msgrate_mpps``, ``t_min_us``, ``t_typical_us``, ``p99_us``,
    ``p99_9_us`` and so on (bandwidth converted to Gb/s, latency in microseconds). Rows whose
    fields are not all numbers end the table. An output without a table gives ``[]``.
    """
    lines = (text or "").replace("\r\n", "\n").replace("\r", "\n").split("\n")
    rows = []
    columns = None
    for line in lines:
        stripped = line.strip()
        if stripped.startswith("#bytes") or stripped.startswith("#flows"):
            # `#bytes #iterations` of the latency header are one space apart: a `#` starts a name too
            columns = [_column_key(name) for part in _HEADER_SPLIT.split(stripped)
                       for name in re.split(r"\s+(?=#)", part) if name.strip()]
            rows = []
            continue
        if columns is None:
            continue
        fields = stripped.split()
        if not fields or not all(_NUMBER_RE.match(field) for field in fields):
            if rows:
                columns = None
            continue
        row = {}
        for (key, unit), field in zip(columns, fields):
            value = float(field)
            if unit in _BW_UNITS:
                row[key + "_gbps"] = round(value * _BW_UNITS[unit], 6)
            elif unit == "usec":
                row[key + "_us"] = value
            elif unit == "mpps":
                row[key + "_mpps"] = value
            else:
                row[key] = int(value) if value.is_integer() else value
        rows.append(row)
    return rows


def result(test, text):
    """The figure that judges ``test`` from its output, or None when the output holds no result.

    ``write_bw``: ``{"bw_gbps": <BW average>, "bw_peak_gbps": ..., "bytes": ..., "iterations": ...}``;
    ``read_lat``: ``{"lat_us": <t_typical, else t_avg>, "lat_avg_us": ..., "lat_p99_us": ...}``.
    The last row counts (a run with several sizes, ``-a``, prints one row per size).
    """
    rows = parse_table(text)
    if not rows:
        return None
    row = rows[-1]
    if TESTS[test][1] == "bw":
        if "bw_average_gbps" not in row:
            return None
        return {"bw_gbps": row["bw_average_gbps"], "bw_peak_gbps": row.get("bw_peak_gbps"),
                "bytes": row.get("bytes"), "iterations": row.get("iterations")}
    lat = row.get("t_typical_us", row.get("t_avg_us"))
    if lat is None:
        return None
    return {"lat_us": lat, "lat_avg_us": row.get("t_avg_us"), "lat_p99_us": row.get("p99_us"),
            "bytes": row.get("bytes"), "iterations": row.get("iterations")}


def _lines(stdout, stderr):
    return [line.strip() for line in ((stdout or "") + "\n" + (stderr or "")).splitlines() if line.strip()]


def connect_refused(stdout, stderr):
    """Whether a client run failed because no server listened (yet) on the port it was given."""
    return any(line.startswith(CONNECT_ERRORS) for line in _lines(stdout, stderr))


def error(stdout, stderr):
    """The line of the output that says why a run failed, or None."""
    lines = _lines(stdout, stderr)
    for line in lines:
        if line.startswith(CONNECT_ERRORS + DEVICE_ERRORS) or "Failed to" in line or "Unable to" in line:
            return line
    return lines[-1] if lines else None
