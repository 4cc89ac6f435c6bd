# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The one PCI address grammar of the collection, for modules and filters alike.

An address is ``[domain:]bus:device[.function]``: the domain 4 to 8 hex digits
(``0000``; ``10000`` and up behind Intel VMD), bus and device 2 hex digits each
(device ``00`` to ``1f``), the function one digit ``0`` to ``7``; any case,
surrounding blanks ignored. The domain may always be left out (it is then
``0000``); the function only where the caller says so (a card is named by
``bus:device``). Normal form: lowercase, the domain in at least 4 digits, as
the kernel writes it under ``/sys/bus/pci/devices``.

A bad address gets one message, ``bad_address()``. A number where an address
is expected is almost always YAML 1.1 reading an unquoted ``86:00.0`` as a
base-60 number (5160.0); ``bad_address()`` says so, with the address recovered
where it can be, and asks for quotes.

Nothing else in ``plugins/`` parses a PCI address (a unit test checks it).
"""

from __future__ import annotations

import math
import re
from collections import namedtuple


ACCEPTED = "0000:3b:00.0 or 3b:00.0"
_RULES = ("domain optional, 4 to 8 hex digits (10000 and up behind Intel VMD); bus and device 2 hex digits, "
          "device at most 1f; function 0 to 7")

_ADDRESS_RE = re.compile(r"^(?:([0-9a-f]{4,8}):)?([0-9a-f]{2}):([0-1][0-9a-f])(?:\.([0-7]))?$")
_HOST_BRIDGE_RE = re.compile(r"^pci([0-9a-f]{4,8}):([0-9a-f]{2})$")
# What YAML 1.1 (PyYAML, Ansible) resolves as a base-60 int or float: digits and colons, the
# later groups 0 to 59, a float with a fraction
_BASE60_TEXT_RE = re.compile(r"^[0-9]+(?:\.[0-9]+)?$")


class PciAddress(namedtuple("PciAddress", "domain bus device function")):
    """A parsed address; ``function`` is None when it was left out."""

    __slots__ = ()

    @property
    def card(self):
        """``0000:3b:00``: the address without the function (the card of a multi-function adapter)."""
        return "%04x:%02x:%02x" % (self.domain, self.bus, self.device)

    @property
    def full(self):
        """``0000:3b:00.0``, or the card address when the function was left out."""
        return self.card if self.function is None else "%s.%d" % (self.card, self.function)

    @property
    def short(self):
        """``3b:00.0`` (the form lspci and mlxconfig print for domain 0000); the full form in another domain."""
        text = self.full
        return text.split(":", 1)[1] if self.domain == 0 else text


class PciAddressError(ValueError):
    """A bad address; ``str()`` is the one message for it."""


def parse(value, function="required"):
    """A ``PciAddress``, or None when ``value`` is not an address.

    ``function``: ``required`` (``3b:00.0``) or ``optional`` (``3b:00``, a card, too). Only text is
    parsed: a number (YAML's reading of an unquoted address) is None.
    """
    if not isinstance(value, str):
        return None
    match = _ADDRESS_RE.match(value.strip().lower())
    if not match:
        return None
    domain, bus, device, fn = match.groups()
    if function == "required" and fn is None:
        return None
    return PciAddress(int(domain or "0", 16), int(bus, 16), int(device, 16), None if fn is None else int(fn))


def normalize(value, function="required"):
    """``3B:00.0`` -> ``0000:3b:00.0``; ``10000:3b:00.0`` stays; None when not an address."""
    address = parse(value, function)
    return address.full if address else None


def card(value):
    """``0000:3b:00`` for any function's address (or a card address); None when not an address."""
    address = parse(value, "optional")
    return address.card if address else None


def short(value):
    """``0000:3b:00.0`` -> ``3b:00.0``; None when not an address."""
    address = parse(value, "optional")
    return address.short if address else None


def is_full(value):
    """Whether ``value`` is an address in the kernel's own form: domain and function present, any case."""
    return bool(isinstance(value, str) and parse(value) and value.strip().count(":") == 2)


def first_function(value):
    """``0000:3b:00.1`` -> ``0000:3b:00.0``; None when not an address."""
    address = parse(value, "optional")
    return "%s.0" % address.card if address else None


def host_bridge(name):
    """``pci0000:16`` (a host bridge in a sysfs device path) -> ``0000:16``; None for anything else."""
    match = _HOST_BRIDGE_RE.match(str(name or "").strip().lower())
    if not match:
        return None
    return "%04x:%s" % (int(match.group(1), 16), match.group(2))


def base60_text(value):
    """What the user wrote, when ``value`` is YAML 1.1's base-60 reading of an unquoted address.

    ``5160.0`` (``86:00.0``) -> ``86:00.0``; ``2460.1`` -> ``41:00.1``; ``5160`` (``86:00``) -> ``86:00``;
    an int or float too large for a bus (a domain was written: ``1:01:00.0``) -> ``0001:01:00.0``.
    Also takes the text of such a number (what a module's ``str`` option makes of it). None when
    ``value`` cannot be such a reading (negative, a fraction that is no function, not a number).
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        text = value.strip()
        if not _BASE60_TEXT_RE.match(text):
            return None
        value = float(text) if "." in text else int(text)
    if isinstance(value, float):
        if value < 0 or math.isnan(value) or math.isinf(value):
            return None
        whole = int(value)
        fraction = round((value - whole) * 10, 6)
        if fraction != int(fraction) or fraction > 7:
            return None
        fn = ".%d" % int(fraction)
    elif isinstance(value, int):
        if value < 0:
            return None
        whole, fn = value, ""
    else:
        return None
    # the device group was 00 to 59 in YAML's eyes; written in digits only, a PCI device is at most 19
    device, rest = whole % 60, whole // 60
    if device > 19:
        return None
    if rest <= 99:
        return "%02d:%02d%s" % (rest, device, fn)
    bus, domain = rest % 60, rest // 60
    return "%04d:%02d:%02d%s" % (domain, bus, device, fn)


def bad_address(value, where, function="required"):
    """The one message for a value that is not a PCI address (see ``parse``)."""
    accepted = ACCEPTED
    if function == "optional":
        accepted += " (the function, .0, may be left out)"
    written = base60_text(value) if not isinstance(value, str) or _BASE60_TEXT_RE.match(value.strip()) else None
    if written is not None or (isinstance(value, (int, float)) and not isinstance(value, bool)):
        wrote = ('an unquoted %s' % written) if written else 'an unquoted address'
        return ("%s is the number %s, not a PCI address: YAML reads %s as a base-60 number. Quote it: "
                '"%s"' % (where, value, wrote, written or "0000:3b:00.0"))
    return "%s %r is not a PCI address; write it as %s (%s)" % (where, value, accepted, _RULES)


def require(value, where, function="required"):
    """The normal form of ``value``, or ``PciAddressError`` with ``bad_address()``'s message."""
    address = parse(value, function)
    if address is None:
        raise PciAddressError(bad_address(value, where, function))
    return address.full


def selector(value, where):
    """For an option that takes a PCI address or a name (RDMA device, netdev): the normal address,
    the name as given (stripped), or ``PciAddressError``. Names never contain a colon and are never
    numbers, so a number or a text with a colon must be an address."""
    if isinstance(value, bool) or isinstance(value, (int, float)) or base60_text(value) is not None:
        raise PciAddressError(bad_address(value, where))
    text = str(value).strip()
    if ":" in text:
        return require(text, where)
    return text
