# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""One meaning per kind of value: the parsers every role, filter and module of the collection uses.

A value written the same way means the same thing everywhere:

- ``parse_pkey()``: a partition key, written in hex as everyone writes P_Keys (``partitions.conf``, ``ibstat``,
  ``ip link ... pkey 0x8001``): a string with ``0x`` (``"0x0014"``, quoted in YAML). A bare number is refused from 10
  on (issue 33): YAML gives the same number for ``16`` and for an unquoted ``0x10``, and decimal ``8001`` is not
  ``0x8001``, so nothing in the number says which the user meant; the message shows both readings to quote. Only 1
  to 9, the same in decimal and hex, are taken as numbers. A string without ``0x`` (``"20"``) is refused as well:
  OpenSM would read it as decimal and ib-kubernetes refuses it.
  Accepted: 0x0001 to 0x7ffe; 0x7fff is the Default partition, and the full-membership bit 0x8000 is set by
  OpenSM and the kernel, never written here. Refused with a hint: two bytes (``"80:01"``: write ``0x8001``, or
  ``0x0001`` without the membership bit) and more than 4 hex digits after ``0x``.
  YAML traps (class 8): an unquoted ``80:01`` is the base-60 number 4801 to YAML 1.1, and an unquoted ``0020`` the
  octal number 16; they are numbers before any parser sees them, and refused as bare numbers like any other.
- ``parse_bool()``: a boolean, with the words Ansible's argument specifications accept (``true``/``false``,
  ``yes``/``no``, ``on``/``off``, ``1``/``0``, any case): what ``-e key=value`` and AWX surveys pass as text.
- ``parse_batch()``: a batch size, Ansible's ``serial``: a number of hosts from 1, a percentage from 1% to
  100% (a whole number followed by ``%``), or a non-empty list of those. Refused: 0, a negative number and
  more than 100% (Ansible puts every host in one batch then), and anything else (Ansible fails with a
  traceback). Written exactly: an accepted value means the same to Ansible unchanged.
- ``parse_percentage()``: a percentage from 0 to 100, a number or a string with an optional ``%``
  (Ansible's ``max_fail_percentage``; a negative one stops the play at once without a word).
- ``parse_int()``: a whole number within bounds, from a number or its decimal text.

Every parser raises ``ValueError`` with a message that starts with ``where`` (the variable the user set)
and ends with the accepted values; filters turn it into ``AnsibleFilterError``.
"""

from __future__ import annotations

import math
import re

PKEY_MIN, PKEY_MAX = 0x0001, 0x7FFE
DEFAULT_PKEY = 0x7FFF
FULL_MEMBER = 0x8000
PKEY_ACCEPTED = ("accepted: 0x0001 to 0x7ffe, as a quoted hex string with the 0x prefix ('0x0010'; a bare number only from "
                 "1 to 9, where decimal and hex agree); 0x7fff is the Default partition, and the full-membership bit 0x8000 is "
                 "set by OpenSM and the kernel")
# the largest bare number taken as a P_Key: its decimal and hex readings agree
PKEY_BARE_MAX = 9
BOOL_ACCEPTED = "accepted: true or false (also yes/no, on/off, 1/0)"
BATCH_ACCEPTED = ("accepted: a number of nodes from 1 (5), a percentage of the nodes from 1% to 100% (20%), "
                  "or a list of those (batches that grow: [1, '20%'])")
PERCENT_ACCEPTED = "accepted: a percentage from 0 to 100 (a number, or text such as 5 or 5%)"

# The words of Ansible's boolean (ansible.module_utils.parsing.convert_bool), which role argument
# specifications of type bool accept: the same set here, so that what passes the spec means one thing.
_TRUE = frozenset(("y", "yes", "on", "1", "true", "t"))
_FALSE = frozenset(("n", "no", "off", "0", "false", "f"))
_HEX_PKEY = re.compile(r"^0[xX][0-9a-fA-F]{1,4}$")
_BYTES_PKEY = re.compile(r"^[0-9a-fA-F]{1,2}:[0-9a-fA-F]{1,2}$")
_LONG_HEX_PKEY = re.compile(r"^0[xX][0-9a-fA-F]{5,}$")
_DECIMAL = re.compile(r"^[0-9]+$")
_PERCENT = re.compile(r"^([0-9]+)%$")
_NUMBER_PERCENT = re.compile(r"^[0-9]+(\.[0-9]+)?%?$")
_INT_TEXT = re.compile(r"^[+-]?[0-9]+$")


def _is_int(value):
    return isinstance(value, int) and not isinstance(value, bool)


def parse_bool(value, where):
    """True or False from a bool, 0/1 or one of Ansible's boolean words (any case)."""
    if isinstance(value, bool):
        return value
    if _is_int(value) or isinstance(value, float):
        if value in (0, 1):
            return bool(value)
    elif isinstance(value, str):
        word = value.strip().lower()
        if word in _TRUE:
            return True
        if word in _FALSE:
            return False
    raise ValueError("%s: %r is not a boolean; %s" % (where, value, BOOL_ACCEPTED))


def parse_pkey(value, where):
    """A partition key as an int, 0x0001 to 0x7ffe: a number, or a hex string with the 0x prefix."""
    number = None
    hint = ""
    if _is_int(value) and value > PKEY_BARE_MAX:
        # 16 and an unquoted 0x10 are the same number to YAML; the user's form is lost, so nothing is guessed
        raise ValueError("%s: %r is not an accepted P_Key%s; %s" % (where, value, _bare_hint(value), PKEY_ACCEPTED))
    if _is_int(value):
        number = value
    elif isinstance(value, str):
        text = value.strip()
        if _HEX_PKEY.match(text):
            number = int(text, 16)
        elif _DECIMAL.match(text):
            # "20": decimal to OpenSM, refused by ib-kubernetes; never guessed.
            hint = (" (a P_Key string is hexadecimal with the 0x prefix: write '0x%s' if %s is hex, or %d unquoted, "
                    "a number, if it is decimal)" % (text, text, int(text)))
        elif _BYTES_PKEY.match(text):
            # "80:01": the two bytes of a P_Key, as a packet dump shows them
            hint = _bytes_hint(int("".join(part.zfill(2) for part in text.split(":")), 16))
        elif _LONG_HEX_PKEY.match(text):
            hint = " (%d hex digits after 0x; a P_Key has at most 4)" % (len(text) - 2)
    if number is not None and number & FULL_MEMBER and PKEY_MIN <= number & 0x7FFF <= PKEY_MAX:
        hint = " (0x%04x carries the full-membership bit 0x8000: write 0x%04x)" % (number, number & 0x7FFF)
    elif number is not None and PKEY_MIN <= number <= PKEY_MAX:
        return number
    elif number == DEFAULT_PKEY:
        hint = " (0x7fff is the Default partition: configure it with opensm_default_partition)"
    raise ValueError("%s: %r is not an accepted P_Key%s; %s" % (where, value, hint, PKEY_ACCEPTED))


def _reading(number):
    """``'0x0010'`` (the membership bit stripped, and said so), or None when no P_Key reads so."""
    if number & FULL_MEMBER and PKEY_MIN <= number & 0x7FFF <= PKEY_MAX and number <= 0xFFFF:
        return "'0x%04x' (without the membership bit of 0x%04x)" % (number & 0x7FFF, number)
    if PKEY_MIN <= number <= PKEY_MAX:
        return "'0x%04x'" % number
    return None


def _bare_hint(value):
    """Why a bare number is refused, with the quoted hex string of each reading of its digits."""
    readings = []
    if _reading(value):
        readings.append("%s for decimal %d" % (_reading(value), value))
    if _reading(int(str(value), 16)):
        readings.append("%s for hex %d" % (_reading(int(str(value), 16)), value))
    return (" (a bare number: P_Keys are written in hex, YAML makes the same number %d of an unquoted 0x%x, and its digits "
            "read as hex give another value, so which you meant is lost; quote it as a hex string%s)" % (
                value, value, ": " + ", or ".join(readings) if readings else ""))


def _bytes_hint(number):
    if number & FULL_MEMBER:
        return (" (a P_Key is one hex number, not two bytes, and 0x8000 is the full-membership bit, which OpenSM and the "
                "kernel set: write '0x%04x')" % (number & 0x7FFF))
    return " (a P_Key is one hex number, not two bytes: write '0x%04x')" % number


def format_pkey(number):
    """``0x`` and 4 lower-case hex digits."""
    return "0x%04x" % number


def parse_int(value, where, minimum=None, maximum=None, accepted=None):
    """A whole number from an int or its decimal text, within [minimum, maximum] (None: no bound)."""
    number = None
    if _is_int(value):
        number = value
    elif isinstance(value, str) and _INT_TEXT.match(value):
        number = int(value)
    if number is not None and (minimum is None or number >= minimum) and (maximum is None or number <= maximum):
        return number
    if accepted is None:
        accepted = "a whole number" + (
            " from %d to %d" % (minimum, maximum) if minimum is not None and maximum is not None
            else " from %d" % minimum if minimum is not None
            else " up to %d" % maximum if maximum is not None else "")
    raise ValueError("%s: %r is not accepted; accepted: %s" % (where, value, accepted))


def _batch_item(value, where):
    number, why = None, ""
    if _is_int(value):
        number = value
    elif isinstance(value, str) and _DECIMAL.match(value):
        number = int(value)
    elif isinstance(value, str) and _PERCENT.match(value):
        number = int(_PERCENT.match(value).group(1))
        if 1 <= number <= 100:
            return value
        why = " (more than 100%: Ansible would put every host in one batch)" if number > 100 else " (less than one node)"
        number = None
    if number is not None:
        if number >= 1:
            return value
        why = " (Ansible would put every host in one batch)"
    raise ValueError("%s: %r is not accepted%s; %s" % (where, value, why, BATCH_ACCEPTED))


def parse_batch(value, where):
    """Ansible's ``serial``: a number of hosts (int or decimal text) from 1, ``N%`` with N from 1 to 100, or a list.

    Returned unchanged when accepted (Ansible reads it the same way); lists item by item.
    """
    if isinstance(value, list):
        if not value:
            raise ValueError("%s: [] is not accepted (an empty list); %s" % (where, BATCH_ACCEPTED))
        return [_batch_item(item, "%s[%d]" % (where, index)) for index, item in enumerate(value)]
    return _batch_item(value, where)


def parse_percentage(value, where, minimum=0, maximum=100):
    """A percentage as an int (or a float when not whole), from a number or text with an optional ``%``."""
    number = None
    if _is_int(value) or (isinstance(value, float) and not math.isnan(value)):
        number = value
    elif isinstance(value, str) and _NUMBER_PERCENT.match(value):
        number = float(value.rstrip("%"))
    if number is not None and minimum <= number <= maximum:
        return int(number) if float(number).is_integer() else float(number)
    raise ValueError("%s: %r is not accepted; %s" % (where, value, PERCENT_ACCEPTED))
