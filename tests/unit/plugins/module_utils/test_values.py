# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""module_utils/values.py: one parser per kind of value (issue 22, class 4 and 5)."""

from __future__ import annotations

import pytest

from ansible_collections.fabric.infiniband.plugins.module_utils import values


@pytest.mark.parametrize("value, expected", [
    ("0x20", 0x0020), ("0x0014", 0x0014), ("0X7FFE", 0x7FFE), (" 0x0001 ", 1), (1, 1), (9, 9), ("0x8", 8),
])
def test_pkey_accepted(value, expected):
    assert values.parse_pkey(value, "pkey") == expected


@pytest.mark.parametrize("value, says", [
    ("20", "'20' is not an accepted P_Key (a P_Key string is hexadecimal with the 0x prefix: write '0x20' if 20 is hex, "
           "or 20 unquoted, a number, if it is decimal)"),
    ("0x8001", "(0x8001 carries the full-membership bit 0x8000: write 0x0001)"),
    # issue 33 class 4: a bare number from 10 on has two readings (decimal, and the hex P_Keys are written in), and YAML
    # makes the same number of an unquoted 0x...: refused, with the quoted hex string of each reading
    (0x8001, "32769 is not an accepted P_Key (a bare number: P_Keys are written in hex, YAML makes the same number 32769 "
             "of an unquoted 0x8001"),
    (0x8001, "quote it as a hex string: '0x0001' (without the membership bit of 0x8001) for decimal 32769)"),
    (8001, "quote it as a hex string: '0x1f41' for decimal 8001, or '0x0001' (without the membership bit of 0x8001) for hex 8001)"),
    (20, "'0x0014' for decimal 20, or '0x0020' for hex 20)"),
    (0x10, "16 is not an accepted P_Key (a bare number"),
    (10, "'0x000a' for decimal 10, or '0x0010' for hex 10)"),
    (0x7FFE, "'0x7ffe' for decimal 32766)"),
    ("0x7fff", "(0x7fff is the Default partition"),
    (0, "0 is not an accepted P_Key; accepted: 0x0001 to 0x7ffe"),
    ("0x", "'0x' is not an accepted P_Key"),
    ("0x10000", "'0x10000' is not an accepted P_Key (5 hex digits after 0x; a P_Key has at most 4)"),
    ("0x00014", "(5 hex digits after 0x; a P_Key has at most 4)"),
    # issue 22 class 8: a P_Key written as its two bytes (quoted; unquoted, 80:01 is the base-60 number 4801)
    ("80:01", "'80:01' is not an accepted P_Key (a P_Key is one hex number, not two bytes, and 0x8000 is the full-membership "
              "bit, which OpenSM and the kernel set: write '0x0001')"),
    ("00:14", "'00:14' is not an accepted P_Key (a P_Key is one hex number, not two bytes: write '0x0014')"),
    ("7F:FE", "(a P_Key is one hex number, not two bytes: write '0x7ffe')"),
    ("full", "'full' is not an accepted P_Key"),
    (True, "True is not an accepted P_Key"),
    (1.0, "1.0 is not an accepted P_Key"),
    (None, "None is not an accepted P_Key"),
])
def test_pkey_refused(value, says):
    with pytest.raises(ValueError) as info:
        values.parse_pkey(value, "x.pkey")
    assert str(info.value).startswith("x.pkey: ")
    assert says in str(info.value)


@pytest.mark.parametrize("written, number", [("80:01", 4801), ("0020", 16), ("0x8001", 0x8001), ("0x0010", 16), ("16", 16),
                                             ("00:14", "00:14"), ("'0x0010'", "0x0010"), ("5", 5)])
def test_pkey_yaml_readings_are_documented(written, number):
    """What YAML 1.1 makes of unquoted P_Keys, as values.py's docstring says: 80:01, 0020, 0x0010 and 16 are numbers before
    the parser sees them, and nothing in a number tells how it was written: refused from 10 on (issue 33); 00:14 stays text
    (refused with a hint); the quoted '0x0010' is the one form taken, and a bare 1 to 9."""
    yaml = pytest.importorskip("yaml")
    loaded = yaml.safe_load("pkey: %s" % written)["pkey"]
    assert loaded == number
    if loaded in ("0x0010", 5):
        assert values.parse_pkey(loaded, "pkey") == int(str(loaded), 16)
    else:
        with pytest.raises(ValueError):
            values.parse_pkey(loaded, "pkey")


@pytest.mark.parametrize("value, expected", [
    (True, True), (False, False), ("false", False), ("False", False), ("no", False), ("off", False), ("0", False),
    ("n", False), ("f", False), (0, False), ("true", True), ("YES", True), ("on", True), ("1", True), (1, True),
    (" true ", True),
])
def test_bool_accepted(value, expected):
    assert values.parse_bool(value, "b") is expected


@pytest.mark.parametrize("value", ["maybe", "", 2, None, [], "truee", 0.5])
def test_bool_refused(value):
    with pytest.raises(ValueError, match=r"^flag: .* is not a boolean; accepted: true or false"):
        values.parse_bool(value, "flag")


@pytest.mark.parametrize("value", [1, 5, "5", "1%", "20%", "100%", [1, "20%"], ["1", 5, "100%"]])
def test_batch_accepted_unchanged(value):
    # unchanged: Ansible's serial reads an accepted value the same way
    assert values.parse_batch(value, "s") == value


@pytest.mark.parametrize("value, says", [
    (0, "s: 0 is not accepted (Ansible would put every host in one batch)"),
    ("0", "s: '0' is not accepted (Ansible would put every host in one batch)"),
    (-2, "s: -2 is not accepted (Ansible would put every host in one batch)"),
    ("150%", "s: '150%' is not accepted (more than 100%: Ansible would put every host in one batch)"),
    ("0%", "s: '0%' is not accepted (less than one node)"),
    ("abc", "s: 'abc' is not accepted; accepted: a number of nodes from 1"),
    ("20 %", "s: '20 %' is not accepted"),
    ("12.5%", "s: '12.5%' is not accepted"),
    (2.5, "s: 2.5 is not accepted"),
    (True, "s: True is not accepted"),
    ([], "s: [] is not accepted (an empty list)"),
    ([1, "abc"], "s[1]: 'abc' is not accepted"),
    ({"a": 1}, "s: {'a': 1} is not accepted"),
])
def test_batch_refused(value, says):
    with pytest.raises(ValueError) as info:
        values.parse_batch(value, "s")
    assert str(info.value).startswith(says)
    assert "or a list of those" in str(info.value)


@pytest.mark.parametrize("value, expected", [(0, 0), (100, 100), ("5", 5), ("5%", 5), (12.5, 12.5), ("12.5%", 12.5), ("0", 0)])
def test_percentage_accepted(value, expected):
    assert values.parse_percentage(value, "m") == expected


@pytest.mark.parametrize("value", [-5, "-5", 101, "101%", "abc", "", True, None, float("nan"), "5 %"])
def test_percentage_refused(value):
    with pytest.raises(ValueError, match=r"^m: .* is not accepted; accepted: a percentage from 0 to 100"):
        values.parse_percentage(value, "m")


def test_int():
    assert values.parse_int("0", "t", minimum=0) == 0
    assert values.parse_int(600, "t", minimum=0) == 600
    with pytest.raises(ValueError, match=r"^t: -1 is not accepted; accepted: a whole number from 0$"):
        values.parse_int(-1, "t", minimum=0)
    with pytest.raises(ValueError, match=r"^t: 'ten' is not accepted; accepted: seconds$"):
        values.parse_int("ten", "t", minimum=0, accepted="seconds")
    with pytest.raises(ValueError, match=r"from 1 to 9"):
        values.parse_int(True, "t", minimum=1, maximum=9)
