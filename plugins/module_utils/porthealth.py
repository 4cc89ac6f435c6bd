# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""A port's health as the kernel shows it: the ``rate`` file's width and speed, the error counters of
``ports/<n>/counters/``, their growth between two reads, and the link-downed count kept between runs.

The parsers are pure functions on the text of one attribute file (one per format); ``read_port``
reads one port through ``sysfs.Sysfs``; ``flap_record``/``flaps_since`` keep and compare the small
JSON record of the node's state directory.
"""

from __future__ import annotations

import json
import re

from ansible_collections.fabric.infiniband.plugins.module_utils import sysfs

DEFAULT_STATE_PATH = "/var/lib/fabric-infiniband/port_health.json"

# The error counters a health check judges (the kernel's file names, drivers/infiniband/core/sysfs.c;
# IBA PortCounters: SymbolErrorCounter, LinkErrorRecoveryCounter, LinkDownedCounter, PortRcvErrors,
# PortRcvRemotePhysicalErrors, ExcessiveBufferOverrunErrors, LocalLinkIntegrityErrors, PortXmitDiscards).
ERROR_COUNTERS = ("symbol_error", "link_error_recovery", "link_downed", "port_rcv_errors",
                  "port_rcv_remote_physical_errors", "excessive_buffer_overrun_errors",
                  "local_link_integrity_errors", "port_xmit_discards")
# Read along, not judged: traffic between the two reads tells a quiet link from a busy one.
DATA_COUNTERS = ("port_xmit_data", "port_rcv_data")
COUNTERS = ERROR_COUNTERS + DATA_COUNTERS

# ``200 Gb/sec (4X HDR)``; ``2.5 Gb/sec (1X SDR)``; older kernels print SDR as ``(4X)``.
_RATE_RE = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*Gb/sec\s*\((\d+)X\s*([A-Z0-9]*)\)\s*$")


def parse_rate_layout(text):
    """``50 Gb/sec (1X HDR)`` -> ``('1X', 'HDR')``; ``10 Gb/sec (4X)`` -> ``('4X', 'SDR')``; (None, None) otherwise."""
    if text is None:
        return None, None
    match = _RATE_RE.match(text)
    if not match:
        return None, None
    return "%sX" % int(match.group(2)), match.group(3) or "SDR"


def parse_counter(text):
    """A counter file (``0``, ``4294967295``) -> int, None when absent or not a number."""
    if text is None:
        return None
    text = text.strip()
    return int(text) if text.isdigit() else None


def growth(first, second):
    """Per counter, what it gained from ``first`` to ``second`` (dicts name -> int or None).

    A counter that went down was cleared in between (a driver reload, ``perfquery -R``): it gained at
    least its new value. None when either read failed.
    """
    out = {}
    for name, after in second.items():
        before = first.get(name)
        if before is None or after is None:
            out[name] = None
        else:
            out[name] = after - before if after >= before else after
    return out


def read_counters(fs, device, port):
    return dict((name, parse_counter(fs.read("class", "infiniband", device, "ports", str(port), "counters", name)))
                for name in COUNTERS)


def read_port(fs, device, port):
    """One port: state, physical state, rate with width and speed, link layer, port GUID (no counters)."""
    base = ("class", "infiniband", device, "ports", str(port))
    state_num, state = sysfs.parse_state(fs.read(*(base + ("state",))))
    phys_num, phys = sysfs.parse_state(fs.read(*(base + ("phys_state",))))
    rate, gbps = sysfs.parse_rate(fs.read(*(base + ("rate",))))
    width, speed = parse_rate_layout(rate)
    return {
        "device": device,
        "port": port,
        "name": "%s/%s" % (device, port),
        "state": state,
        "state_num": state_num,
        "physical_state": phys,
        "physical_state_num": phys_num,
        "rate": rate,
        "rate_gbps": gbps,
        "width": width,
        "speed": speed,
        "link_layer": fs.read(*(base + ("link_layer",))),
        "port_guid": sysfs.guid_from_gid(fs.read(*(base + ("gids", "0")))),
    }


def _key(port):
    return port.get("port_guid") or port["name"]


def flap_record(ports, boot, read_at):
    """The record kept for the next run: each port's link_downed now, with the boot it belongs to."""
    record = {"boot": boot, "read_at": read_at, "ports": {}}
    for port in ports:
        value = port.get("counters", {}).get("link_downed")
        if value is not None:
            record["ports"][_key(port)] = {"name": port["name"], "link_downed": value}
    return record


def load_record(text):
    """The previous run's record from its file's text; None when absent or not one (a damaged record is
    no reason to stop a health check: it starts again)."""
    if not text:
        return None
    try:
        data = json.loads(text)
    except ValueError:
        return None
    if not isinstance(data, dict) or not isinstance(data.get("ports"), dict):
        return None
    return data


def flaps_since(previous, port, boot):
    """How often the port's link went down since the last run: None when there was no last run for it.

    After a reboot (another ``boot``) the counter started again from 0, so all of it is new.
    """
    now = port.get("counters", {}).get("link_downed")
    if now is None or not previous:
        return None
    before = previous.get("ports", {}).get(_key(port), {}).get("link_downed")
    if before is None:
        return None
    if previous.get("boot") != boot or now < before:
        return now
    return now - before
