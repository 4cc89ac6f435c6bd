# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A port's health: its error and data counters, a degraded link (width, speed) and flaps.

The state's ``port_health`` section, keyed by the PCI function of the port::

    "port_health": {"0000:3b:00.0": {"width": 1, "speed": "EDR", "link": "down",
                                     "counters": {"symbol_error": 12},
                                     "rising": {"symbol_error": 5}, "since": 1700000000.0}}

- ``counters``: the value of each counter when ``since`` was stamped; ``rising``: how many it gains per
  second after that (a bad cable keeps counting), so two reads some seconds apart see it grow, as a
  health check's two snapshots do on a real port.
- ``width`` (1, 2, 4, 8, 12) and ``speed`` (SDR ... XDR) replace the model's in the ``rate`` file
  (the kernel's ``rate_show`` layout: "50 Gb/sec (1X HDR)") and in ibstat's ``Rate:``.
- ``link: down``: the port is DOWN / Disabled until ``link up`` (going down counts one link_downed).
- ``fabricsim port <dev|bdf> flap [N]``: the link went down and came back N times: link_downed + N,
  the state is ACTIVE again (what a health check finds afterwards; the kernel counts a flap there).

Counter names are the kernel's (drivers/infiniband/core/sysfs.c, ``pma_counter_attrs``); a power-on
(the driver loading again) starts them from 0, the link faults stay (they are the cable's).
"""

import copy
import re
import time

# The kernel's files under ports/<n>/counters/ (drivers/infiniband/core/sysfs.c)
ERROR_COUNTERS = ("symbol_error", "link_error_recovery", "link_downed", "port_rcv_errors",
                  "port_rcv_remote_physical_errors", "port_rcv_switch_relay_errors", "port_xmit_discards",
                  "port_xmit_constraint_errors", "port_rcv_constraint_errors", "local_link_integrity_errors",
                  "excessive_buffer_overrun_errors", "VL15_dropped")
DATA_COUNTERS = ("port_xmit_data", "port_rcv_data", "port_xmit_packets", "port_rcv_packets", "port_xmit_wait",
                 "unicast_xmit_packets", "unicast_rcv_packets", "multicast_xmit_packets", "multicast_rcv_packets")
COUNTERS = ERROR_COUNTERS + DATA_COUNTERS
# speed name -> Gb/s per lane times 10, as the kernel's rate_show() computes it
SPEEDS = {"SDR": 25, "DDR": 50, "QDR": 100, "FDR10": 100, "FDR": 140, "EDR": 250, "HDR": 500, "NDR": 1000,
          "XDR": 2000}
GENERATIONS = ("SDR", "DDR", "QDR", "FDR", "EDR", "HDR", "NDR", "XDR")
WIDTHS = (1, 2, 4, 8, 12)
_RATE = re.compile(r"^\s*[0-9.]+ Gb/sec \((\d+)X ?([A-Z0-9]*)\)")


class PortHealthError(ValueError):
    """A port_health entry or a ``fabricsim port`` command that makes no sense."""


def rate_text(width, speed):
    """The ``rate`` file's text of a port at ``width`` lanes of ``speed`` (the kernel's rate_show)."""
    rate = SPEEDS[speed] * width
    return "%d%s Gb/sec (%dX %s)" % (rate // 10, ".5" if rate % 10 else "", width, speed)


def parse_rate(text):
    """(width, speed) of a ``rate`` text; (4, "SDR") when it cannot tell."""
    m = _RATE.match(text or "")
    if not m:
        return 4, "SDR"
    return int(m.group(1)), m.group(2) or "SDR"


def one_down(speed):
    """The generation below ``speed`` (FDR10 counts as FDR)."""
    speed = "FDR" if speed == "FDR10" else speed
    i = GENERATIONS.index(speed)
    return GENERATIONS[max(i - 1, 0)]


def check(section):
    """Refuse a ``port_health`` section that is not what the docstring says."""
    if not isinstance(section, dict):
        raise PortHealthError("port_health must be an object keyed by PCI function")
    for bdf, entry in section.items():
        where = "port_health.%s" % bdf
        if not isinstance(entry, dict):
            raise PortHealthError("%s must be an object" % where)
        unknown = set(entry) - {"width", "speed", "link", "counters", "rising", "since"}
        if unknown:
            raise PortHealthError("%s: unknown keys %s" % (where, ", ".join(sorted(unknown))))
        if "width" in entry and entry["width"] not in WIDTHS:
            raise PortHealthError("%s.width must be one of %s" % (where, ", ".join(map(str, WIDTHS))))
        if "speed" in entry and entry["speed"] not in SPEEDS:
            raise PortHealthError("%s.speed must be one of %s" % (where, ", ".join(SPEEDS)))
        if entry.get("link", "up") not in ("up", "down"):
            raise PortHealthError("%s.link must be up or down" % where)
        for key in ("counters", "rising"):
            values = entry.get(key, {})
            if not isinstance(values, dict):
                raise PortHealthError("%s.%s must be an object" % (where, key))
            for name, value in values.items():
                if name not in COUNTERS:
                    raise PortHealthError("%s.%s.%s: no such counter; known: %s" % (where, key, name, ", ".join(COUNTERS)))
                if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
                    raise PortHealthError("%s.%s.%s must be a number, 0 or more" % (where, key, name))


def adjust(entry, status):
    """``status`` (from state.port_status) of a port with this health entry."""
    if not entry:
        return status
    out = dict(status)
    if entry.get("link") == "down":
        out.update(state=1, phys_state=3, lid=0xFFFF, sm_lid=0)
    if "width" in entry or "speed" in entry:
        width, speed = parse_rate(out["rate"])
        out["rate"] = rate_text(entry.get("width", width), entry.get("speed", speed))
    return out


class LiveCounter(object):
    """A counter file's content, read at the time of the read (a rising counter grows between reads)."""

    def __init__(self, base, per_second, since, clock=time.time):
        self.base, self.per_second, self.since, self.clock = base, per_second, since, clock

    def value(self):
        grown = self.per_second * max(self.clock() - self.since, 0) if self.per_second else 0
        return int(self.base + grown)

    def __call__(self):
        return "%d\n" % self.value()

    def __eq__(self, other):
        return self() == other if isinstance(other, str) else NotImplemented

    def __hash__(self):
        return hash((self.base, self.per_second, self.since))

    def __repr__(self):
        return "LiveCounter(%r)" % self()


def counter_content(entry, name):
    """A counter file's content: plain text, or a LiveCounter while it rises."""
    entry = entry or {}
    base = entry.get("counters", {}).get(name, 0)
    rising = entry.get("rising", {}).get(name, 0)
    if rising:
        return LiveCounter(base, rising, entry.get("since", 0))
    return "%d\n" % int(base)


def _settle(entry, now):
    """Fold what the rising counters gained so far into ``counters`` and stamp ``since`` = now."""
    counters = entry.setdefault("counters", {})
    for name, rate in entry.get("rising", {}).items():
        counters[name] = int(counters.get(name, 0) + rate * max(now - entry.get("since", now), 0))
    entry["since"] = now


def power_on(state):
    """The driver loads again: every counter starts from 0; a rising one keeps rising from now."""
    now = time.time()
    for entry in state.get("port_health", {}).values():
        entry.pop("counters", None)
        if entry.get("rising"):
            entry["since"] = now


USAGE = ("usage: fabricsim port <mlx5_N|bdf> {counter <name> <value> [<per-second>] | width <1|2|4|8|12> | "
         "speed <SDR..XDR|down> | flap [<count>] | link <up|down> | clear}\n")


def command(state, func, argv, model_rate, now=None):
    """``fabricsim port <dev> ...`` on ``func``'s port; mutates ``state``; returns what it says."""
    now = time.time() if now is None else now
    section = copy.deepcopy(state.get("port_health", {}))  # the state changes only if all is well
    entry = section.setdefault(func.bdf, {})
    _settle(entry, now)
    if not argv:
        raise PortHealthError("no action")
    action, args = argv[0], argv[1:]
    try:
        if action == "counter":
            name, value = args[0], int(args[1])
            entry["counters"][name] = value
            rising = entry.setdefault("rising", {})
            rising[name] = float(args[2]) if len(args) > 2 else 0  # without a rate it stops rising
            if not rising[name]:
                del rising[name]
        elif action == "width":
            entry["width"] = int(args[0].upper().rstrip("X"))
        elif action == "speed":
            speed = args[0].upper()
            if speed == "DOWN":
                speed = one_down(entry.get("speed") or parse_rate(model_rate)[1])
            entry["speed"] = speed
        elif action == "flap":
            count = int(args[0]) if args else 1
            if count < 1:
                raise PortHealthError("flap needs a count of 1 or more")
            entry["counters"]["link_downed"] = entry["counters"].get("link_downed", 0) + count
        elif action == "link":
            if args[0] not in ("up", "down"):
                raise PortHealthError("link takes up or down")
            if args[0] == "down" and entry.get("link") != "down":
                entry["link"] = "down"
                entry["counters"]["link_downed"] = entry["counters"].get("link_downed", 0) + 1
            elif args[0] == "up":
                entry.pop("link", None)
        elif action == "clear":
            section.pop(func.bdf, None)
        else:
            raise PortHealthError("unknown action %s" % action)
    except (IndexError, ValueError) as exc:
        if isinstance(exc, PortHealthError):
            raise
        raise PortHealthError("bad arguments for %s" % action) from None
    if func.bdf in section:
        for key in ("counters", "rising"):
            if not entry.get(key):
                entry.pop(key, None)
        if "rising" not in entry:
            entry.pop("since", None)
        if not entry:
            section.pop(func.bdf)
    check(section)
    if section:
        state["port_health"] = section
    else:
        state.pop("port_health", None)
