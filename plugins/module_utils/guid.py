# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The one GUID grammar of the collection, for modules and filters alike.

A GUID (a node, port, system image or VF GUID: 8 bytes, an EUI-64) is written as text, in one of:

- ``0x`` and 16 hex digits: ``0x0c42a10300aa0010`` (ibstat, ibnetdiscover, OpenSM's ``partitions.conf``);
- 8 bytes of 1 or 2 hex digits joined by ``:``: ``0c:42:a1:03:00:aa:00:10`` (``ip link``, MLNX_OFED's sysfs,
  sriov-network-operator's GUID pool);
- 4 groups of 1 to 4 hex digits joined by ``:``: ``0c42:a103:00aa:0010`` (the kernel's ``node_guid`` in sysfs).

Any case; surrounding blanks ignored. Normal form: ``0x`` and 16 lower-case hex digits.

What a user writes (``require()``) must have all 16 digits after ``0x``: a digit lost or added there shifts every
byte after it and still looks like a GUID, so ``0x12`` is a typo, not 0x0000000000000012. The colon forms show
where each byte starts, so a byte may be written ``2`` for ``02``. Hex digits without ``0x`` or colons are refused:
``1200000000000001`` could be hex or decimal, and YAML makes a number of it when it is unquoted. The zero GUID and
the all-ones GUID are refused (ib-sriov-cni rejects them for a VF, and no port has them). What the tools print
(``normalize()``) is read more leniently: leading zeros may be left out, bare hex digits are accepted (ibnetdiscover
prints a port GUID in parentheses without ``0x``), and zero is kept (a VF whose GUID was never set).

A number where a GUID is expected is always refused, with a message that says what YAML 1.1 (PyYAML, Ansible) made
of the unquoted text and asks for quotes (``bad_guid()``). The number alone cannot say how the GUID was written:

- ``0x0200000000000001`` (hex) is 144115188075855873, the GUID meant;
- ``1200000000000001`` (16 hex digits that are all decimal digits) is a decimal number, 0x000443...;
- ``0200000000000001`` (a leading 0, digits 0 to 7) is an octal number, 0x000008...;
- ``10:11:22:33:44:55:56:57`` (bytes that are all decimal digits, the first not starting with 0) is a base-60
  number, 28524360585417;

The base-60 and octal readings stay below 2**48, but the decimal ones do not: 4913717464530945 is both an unquoted
``0x0011750000000001`` (a GUID of QLogic's OUI 00:11:75) and an unquoted ``4913717464530945`` (the GUID
0x4913717464530945 without its 0x). No range of numbers is safe to accept; quoted, each is what it says.

The same holds for the 2-byte prefix of the sriov role's GUID scheme (``require_prefix()``: ``0x`` and 4 hex digits,
or 2 bytes ``02:fa``): an unquoted ``12:00`` is the base-60 number 720, which is 0x02d0, a valid prefix.

Nothing else in ``plugins/`` parses a GUID (a unit test checks it).
"""

from __future__ import annotations

from collections import namedtuple

BITS = 64
ZERO = 0
ALL_ONES = (1 << BITS) - 1
ACCEPTED = ('8 bytes, 0x and 16 hex digits ("0x0c42a10300aa0010") or hex bytes joined by colons ("0c:42:a1:03:00:aa:00:10"), '
            "quoted in YAML")
PREFIX_ACCEPTED = '0x and 4 hex digits ("0x02fa") or 2 hex bytes joined by a colon ("02:fa"), quoted in YAML'

_HEX = frozenset("0123456789abcdef")
_DIGITS = frozenset("0123456789")


class GuidError(ValueError):
    """A bad GUID; ``str()`` is the one message for it."""


# One reading of a number: what the user may have written unquoted, and what to write instead.
Reading = namedtuple("Reading", "written quoted")


def _is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _hex_number(text, low, high):
    """``text`` as hex digits, ``low`` to ``high`` of them, or None."""
    if low <= len(text) <= high and set(text) <= _HEX:
        return int(text, 16)
    return None


def _groups(text, count, width):
    """``count`` groups of 1 to ``width`` hex digits joined by ``:`` -> the number, or None."""
    parts = text.split(":")
    if len(parts) != count or any(not 1 <= len(p) <= width or not set(p) <= _HEX for p in parts):
        return None
    return int("".join(p.zfill(width) for p in parts), 16)


def _parse_text(text, exact):
    """A GUID's text (stripped, lower case) -> its number, or None. ``exact``: 16 digits after ``0x``, no bare form."""
    if text.startswith("0x"):
        return _hex_number(text[2:], 16 if exact else 1, 16)
    if ":" in text:
        number = _groups(text, 8, 2)
        return number if number is not None else _groups(text, 4, 4)
    return None if exact else _hex_number(text, 1, 16)


def to_text(number):
    """``0x`` and 16 lower-case hex digits."""
    return "0x%016x" % number


def colon_form(guid):
    """``0x0200000000000001`` (or any GUID text) -> ``02:00:00:00:00:00:00:01``, the form ``ip link``, MLNX_OFED's sysfs
    and sriov-network-operator take; None when ``guid`` is not one."""
    text = normalize(guid)
    if text is None:
        return None
    digits = text[2:]
    return ":".join(digits[i:i + 2] for i in range(0, 16, 2))


def normalize(value):
    """A GUID as a tool prints it (``0x...`` with or without leading zeros, bare hex, the colon forms) -> normal form;
    None when ``value`` is not text or not a GUID. Zero is kept."""
    if not isinstance(value, str):
        return None
    number = _parse_text(value.strip().lower(), exact=False)
    return None if number is None else to_text(number)


def _readings(number, nbytes):
    """What the user may have written unquoted, an ``nbytes`` value, that YAML 1.1 reads as ``number``: 0x hex (when
    plausible), base 60, octal, decimal."""
    out = []
    if isinstance(number, bool) or not isinstance(number, int) or number < 0:
        return out
    digits = 2 * nbytes
    # base 60: bytes that are all decimal digits, the first from 10 (PyYAML reads 0-led groups as text)
    if 10 * 60 ** (nbytes - 1) <= number < 100 * 60 ** (nbytes - 1):
        groups, rest = [], number
        for _i in range(nbytes - 1):
            rest, group = divmod(rest, 60)
            groups.insert(0, "%02d" % group)
        text = ":".join(["%02d" % rest] + groups)
        out.append(Reading(text, text))
    # octal: a leading 0 then digits 0 to 7, the whole width (a first digit after the 0 that is not 0)
    if 8 ** (digits - 2) <= number < 8 ** (digits - 1):
        out.append(Reading("0%0*o" % (digits - 1, number), "0x0%0*o" % (digits - 1, number)))
    # decimal: hex digits that are all decimal digits, without 0x
    if 10 ** (digits - 1) <= number < 10 ** digits:
        out.append(Reading("%d" % number, "0x%d" % number))
    # hex: 0x and the digits, what the user most often means (for a GUID: when its first two bytes are not zero)
    if number < 1 << (8 * nbytes) and (not out or number >= 1 << (8 * nbytes - 16)):
        out.insert(0, Reading("0x%0*x" % (digits, number), "0x%0*x" % (digits, number)))
    return out


def _number_text(value):
    """The number a value stands for when it is one (or the decimal text of one, which is what a module's ``str``
    option makes of a YAML number); None otherwise."""
    if _is_number(value):
        return value
    if isinstance(value, str):
        text = value.strip()
        if text and set(text) <= _DIGITS:
            return int(text)
    return None


def _number_message(value, number, where, what, nbytes, example):
    readings = _readings(number, nbytes)
    if readings:
        wrote = " or ".join(r.written for r in readings)
        quoted = " or ".join('"%s"' % q for q in dict.fromkeys(r.quoted for r in readings))
    else:
        wrote, quoted = what, '"%s"' % example
    if isinstance(value, str):
        # digits as text: written so, or a YAML number that a module's str option turned into text
        return ("%s %r is digits only, not a %s: hex digits need 0x, and YAML reads an unquoted %s as this number. "
                "Quote it: %s" % (where, value.strip(), what, wrote, quoted))
    return ("%s is the number %s, not a %s: YAML reads an unquoted %s as a number, which no longer says how the %s was "
            "written. Quote it: %s" % (where, value, what, wrote, what, quoted))


def _text_problem(text):
    """Why the text (stripped, lower case) is not a GUID, for the message."""
    if text.startswith("0x"):
        digits = text[2:]
        if not digits or not set(digits) <= _HEX:
            return "is not hex after 0x"
        if len(digits) != 16:
            return "has %d hex digits after 0x; a GUID has 16 (8 bytes): check for a lost or extra digit" % len(digits)
    elif ":" in text:
        parts = text.split(":")
        if len(parts) not in (4, 8):
            return "has %d groups; a GUID has 8 bytes" % len(parts)
        width = 2 if len(parts) == 8 else 4
        for part in parts:
            if not part or not set(part) <= _HEX:
                return "has %r, which is not hex" % part
            if len(part) > width:
                return "has %r, more than %d hex digits in one of its %d groups" % (part, width, len(parts))
    elif text and set(text) <= _HEX:
        return "has no 0x: hex digits alone could be read as decimal"
    return "is not a GUID"


def bad_guid(value, where, what="GUID"):
    """The one message for a value that is not a GUID a user may write (see ``require``)."""
    number = _number_text(value)
    if number is not None:
        return _number_message(value, number, where, what, 8, "0x0c42a10300aa0010")
    if not isinstance(value, str):
        return "%s %r is not a %s; write it as %s" % (where, value, what, ACCEPTED)
    return "%s %r %s; write it as %s" % (where, value, _text_problem(value.strip().lower()), ACCEPTED)


def require(value, where, what="GUID", exact=True):
    """The normal form of a GUID written by a user, or ``GuidError`` with ``bad_guid()``'s message.

    ``exact=False`` for GUIDs that come from the tools (facts): leading zeros and bare hex allowed. A number, zero
    and all ones are always refused.
    """
    number = None
    if isinstance(value, str) and _number_text(value) is None:
        number = _parse_text(value.strip().lower(), exact)
    if number is None:
        raise GuidError(bad_guid(value, where, what))
    if number == ZERO:
        raise GuidError("%s %r is the zero GUID, which is not valid (ib-sriov-cni rejects it for a VF; no port has it)"
                        % (where, value))
    if number == ALL_ONES:
        raise GuidError("%s %r is the all-ones GUID, which is not valid (ib-sriov-cni rejects it for a VF; no port has it)"
                        % (where, value))
    return to_text(number)


def require_prefix(value, where):
    """A 2-byte prefix (``0x02fa`` or ``02:fa``) as an int, or ``GuidError``. Numbers are refused, as for GUIDs."""
    number = None
    if isinstance(value, str) and _number_text(value) is None:
        text = value.strip().lower()
        number = _hex_number(text[2:], 4, 4) if text.startswith("0x") else _groups(text, 2, 2) if ":" in text else None
    if number is not None:
        return number
    number = _number_text(value)
    if number is not None:
        raise GuidError(_number_message(value, number, where, "prefix", 2, "0x02fa"))
    why = "is not a 2-byte prefix"
    if isinstance(value, str) and value.strip().lower().startswith("0x") and set(value.strip().lower()[2:]) <= _HEX:
        why = "has %d hex digits after 0x; a 2-byte prefix has 4" % len(value.strip()[2:])
    raise GuidError("%s %r %s; write it as %s" % (where, value, why, PREFIX_ACCEPTED))
