# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The one GUID grammar (module_utils/guid.py) and the YAML traps of GUIDs (issue 22, class 8)."""

from __future__ import annotations

import os
import re

import pytest
import yaml

from ansible.parsing.yaml.loader import AnsibleLoader

from ansible_collections.fabric.infiniband.plugins.module_utils import guid, ibnetdiscover, iplink, opensm, sriov, sysfs

PLUGINS = os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "plugins")
WHERE = "sriov_pfs[0].guids[0]"


@pytest.mark.parametrize("value, expected", [
    ("0x0200000000000001", "0x0200000000000001"),
    ("  0X02FA0A0B0C0D0E0F ", "0x02fa0a0b0c0d0e0f"),
    ("02:00:00:00:00:00:00:01", "0x0200000000000001"),
    ("2:0:0:0:0:0:0:1", "0x0200000000000001"),
    ("0C:42:A1:03:00:AA:00:10", "0x0c42a10300aa0010"),
    ("0200:0000:0000:0001", "0x0200000000000001"),
    ("c470:bd03:cf:4964", "0xc470bd0300cf4964"),
])
def test_accepted_forms(value, expected):
    assert guid.require(value, WHERE) == expected


@pytest.mark.parametrize("value, says", [
    # a digit lost or added after 0x shifts every byte: refused, however it would read
    ("0x12", "'0x12' has 2 hex digits after 0x; a GUID has 16 (8 bytes): check for a lost or extra digit"),
    ("0x02fa00000000100", "has 15 hex digits after 0x"),
    ("0x02fa0000000001000", "has 17 hex digits after 0x"),
    ("0x", "'0x' is not hex after 0x"),
    ("0x02fa00000000zz00", "is not hex after 0x"),
    # bytes: the count and each byte
    ("02:fa:0a:0b:0c:0d:01", "'02:fa:0a:0b:0c:0d:01' has 7 groups; a GUID has 8 bytes"),
    ("02:fa:0a:0b:0c:0d:01:00:00", "has 9 groups"),
    ("02:fa:0a:0b:0c:0d:01:001", "has '001', more than 2 hex digits in one of its 8 groups"),
    ("02:fa:0a:0b:0c:0d:01:", "has '', which is not hex"),
    ("0200:0000:0000:00001", "has '00001', more than 4 hex digits in one of its 4 groups"),
    ("02:zz:0a:0b:0c:0d:01:00", "has 'zz', which is not hex"),
    # hex without 0x: hex or decimal?
    ("0c42a10300aa0010", "'0c42a10300aa0010' has no 0x: hex digits alone could be read as decimal"),
    ("02-fa-0a-0b-0c-0d-01-00", "is not a GUID"),
    ("", "'' is not a GUID"),
    (None, "None is not a GUID"),
    (True, "True is not a GUID"),
    (["0x0200000000000001"], "is not a GUID"),
    # the values ib-sriov-cni rejects, and no port has
    ("0x0000000000000000", "'0x0000000000000000' is the zero GUID, which is not valid"),
    ("00:00:00:00:00:00:00:00", "is the zero GUID"),
    ("0xFFFFFFFFFFFFFFFF", "is the all-ones GUID, which is not valid"),
    ("ff:ff:ff:ff:ff:ff:ff:ff", "is the all-ones GUID"),
])
def test_refused_with_what_is_wrong(value, says):
    with pytest.raises(guid.GuidError) as err:
        guid.require(value, WHERE)
    message = str(err.value)
    assert message.startswith(WHERE + " "), message
    assert says in message, message
    if "zero" not in says and "all-ones" not in says:
        assert message.endswith('write it as 8 bytes, 0x and 16 hex digits ("0x0c42a10300aa0010") or hex bytes joined by colons '
                                '("0c:42:a1:03:00:aa:00:10"), quoted in YAML'), message


# What the user wrote unquoted in an inventory, what YAML 1.1 made of it, and what the message asks to write.
YAML_TRAPS = [
    # 0x: hex, the GUID meant; refused all the same, as nothing in the number says it was written so
    ("0x0200000000000001", 144115188075855873, "0x0200000000000001", ['"0x0200000000000001"']),
    # bytes that are all decimal digits, the first from 10: base 60
    ("10:11:22:33:44:55:56:57", 28524360585417, "10:11:22:33:44:55:56:57 or 0637053030250311",
     ['"10:11:22:33:44:55:56:57"', '"0x0637053030250311"']),
    ("20:00:00:00:00:00:00:01", 55987200000001, "20:00:00:00:00:00:00:01", ['"20:00:00:00:00:00:00:01"']),
    # a leading 0 and digits 0 to 7: octal
    ("0200000000000001", 8796093022209, "0200000000000001", ['"0x0200000000000001"']),
    # 16 decimal digits without 0x: decimal (here QLogic's OUI 00:11:75, read back as hex)
    ("1200000000000001", 1200000000000001, "0x00044364c5bb0001 or 1200000000000001",
     ['"0x00044364c5bb0001"', '"0x1200000000000001"']),
    ("0x0011750000000001", 4913717464530945, "0x0011750000000001 or 4913717464530945",
     ['"0x0011750000000001"', '"0x4913717464530945"']),
    ("0x12", 18, "0x0000000000000012", ['"0x0000000000000012"']),
]


@pytest.mark.parametrize("written, number, readings, quoted", YAML_TRAPS)
def test_yaml_number_is_refused_with_what_to_write(written, number, readings, quoted):
    for loaded in (yaml.safe_load("guid: %s" % written)["guid"], AnsibleLoader("guid: %s\n" % written).get_single_data()["guid"]):
        assert loaded == number and isinstance(loaded, int), "YAML 1.1 (PyYAML, Ansible) reads %s as %d" % (written, number)
        with pytest.raises(guid.GuidError) as err:
            guid.require(loaded, WHERE)
        assert str(err.value) == (
            "%s is the number %d, not a GUID: YAML reads an unquoted %s as a number, which no longer says how the GUID was "
            "written. Quote it: %s" % (WHERE, number, readings, " or ".join(quoted)))
    # quoted, the text the message asks for is accepted (when it is a GUID: the octal reading is one more candidate)
    assert guid.require(yaml.safe_load("guid: %s" % quoted[0])["guid"], WHERE)


def test_yaml_leaves_some_unquoted_guids_text():
    """YAML reads a 0-led or hex-lettered byte list as text; the same grammar then accepts it."""
    for written in ("02:00:00:00:00:00:00:01", "0c:42:a1:03:00:aa:00:10", "00:11:22:33:44:55:66:77"):
        assert yaml.safe_load("guid: %s" % written)["guid"] == written
        assert guid.require(written, WHERE)


def test_no_range_of_numbers_is_safe():
    """Why every number is refused: the readings overlap real GUIDs. Every base-60 reading of 8 bytes and every 16-digit
    octal reading is below 2**48, but a 16-digit decimal one (hex digits written without 0x) is not, and lands on
    vendor OUIs such as QLogic's 00:11:75."""
    def load(text):
        return yaml.safe_load("g: %s" % text)["g"]

    assert load("99:59:59:59:59:59:59:59") < 2 ** 48  # the largest base-60 reading of 8 bytes
    assert load("0777777777777777") < 2 ** 48  # the largest 16-character octal reading
    # an unquoted QLogic GUID and the GUID 0x4913717464530945 written without 0x: one number, above 2**48
    assert load("0x0011750000000001") == load("4913717464530945") >= 2 ** 48


def test_digits_as_text_are_a_yaml_number_made_text():
    """What a module's str option makes of an unquoted GUID: its decimal text."""
    with pytest.raises(guid.GuidError) as err:
        guid.require("144115188075855873", "vfs[0].guid")
    assert str(err.value) == ("vfs[0].guid '144115188075855873' is digits only, not a GUID: hex digits need 0x, and YAML reads "
                              'an unquoted 0x0200000000000001 as this number. Quote it: "0x0200000000000001"')


@pytest.mark.parametrize("value", [1.5, float("nan"), -1, 2 ** 64, 2 ** 70])
def test_other_numbers(value):
    with pytest.raises(guid.GuidError, match=r"^x is the number .*, not a GUID: YAML reads an unquoted .* Quote it: \""):
        guid.require(value, "x")


def test_what_is_named():
    with pytest.raises(guid.GuidError, match=r"^opensm_port_guids\[0\] is the number 7, not a port GUID: .*how the port GUID was"):
        guid.require(7, "opensm_port_guids[0]", "port GUID")


@pytest.mark.parametrize("value, expected", [
    # the tools: leading zeros may be left out, bare hex, zero kept
    ("0x1", "0x0000000000000001"), ("98039b0300867bba", "0x98039b0300867bba"), ("0x0", "0x0000000000000000"),
    ("00:00:00:00:00:00:00:00", "0x0000000000000000"), ("c470:bd03:cf:4964\n", "0xc470bd0300cf4964"),
    ("0x1ffffffffffffffff", None), ("zz", None), ("", None), (None, None), (5, None), ("02:00:00", None),
])
def test_normalize_what_the_tools_print(value, expected):
    assert guid.normalize(value) == expected


def test_facts_are_read_as_the_tools_print_them():
    assert guid.require("0x1", "sriov_vf_guids of c1", exact=False) == "0x0000000000000001"
    with pytest.raises(guid.GuidError, match="is the zero GUID"):
        guid.require("0x0", "sriov_vf_guids of c1", exact=False)
    with pytest.raises(guid.GuidError, match="is the number 1"):
        guid.require(1, "sriov_vf_guids of c1", exact=False)


def test_colon_form():
    assert guid.colon_form("0x02fa0a0b0c0d0103") == "02:fa:0a:0b:0c:0d:01:03"
    assert guid.colon_form("0x1") == "00:00:00:00:00:00:00:01"
    assert guid.colon_form("nope") is None


@pytest.mark.parametrize("value, expected", [("0x02fa", 0x02FA), ("02:FA", 0x02FA), (" 0x0A0B ", 0x0A0B), ("2:fa", 0x02FA)])
def test_prefix(value, expected):
    assert guid.require_prefix(value, "sriov_guid_prefix") == expected


@pytest.mark.parametrize("written, says", [
    ("0x02fa", 'sriov_guid_prefix is the number 762, not a prefix: YAML reads an unquoted 0x02fa or 12:42 as a number, which no '
               'longer says how the prefix was written. Quote it: "0x02fa" or "12:42"'),
    # base 60: 0x02d0, a locally administered prefix, were the number taken
    ("12:00", 'is the number 720, not a prefix: YAML reads an unquoted 0x02d0 or 12:00 as a number'),
    ("0200", 'is the number 128, not a prefix: YAML reads an unquoted 0x0080 or 0200 as a number, which no longer says how '
             'the prefix was written. Quote it: "0x0080" or "0x0200"'),
    ("'0x2fa'", "sriov_guid_prefix '0x2fa' has 3 hex digits after 0x; a 2-byte prefix has 4; write it as 0x and 4 hex digits"),
    ("'02fa'", "sriov_guid_prefix '02fa' is not a 2-byte prefix; write it as"),
    ("'02:fa:00'", "sriov_guid_prefix '02:fa:00' is not a 2-byte prefix"),
    ("'762'", "sriov_guid_prefix '762' is digits only, not a prefix: hex digits need 0x, and YAML reads an unquoted 0x02fa"),
])
def test_prefix_refused(written, says):
    with pytest.raises(guid.GuidError) as err:
        guid.require_prefix(yaml.safe_load("p: %s" % written)["p"], "sriov_guid_prefix")
    assert says in str(err.value), str(err.value)


def test_every_user_agrees():
    """The module_utils that read GUIDs answer through guid: one value, one normal form."""
    assert sysfs.format_guid("c470:bd03:00cf:4964") == "0xc470bd0300cf4964"
    assert ibnetdiscover.guid("98039B0300867BBA") == "0x98039b0300867bba"
    assert iplink.guid_bytes("0x02fa000000000102") == "02:fa:00:00:00:00:01:02"
    assert iplink.parse_vfs("    vf 0     link/infiniband 00, NODE_GUID 2:fa:0:0:0:0:1:2, PORT_GUID 02:fa:00:00:00:00:01:03, "
                            "link-state auto")[0] == {"node_guid": "0x02fa000000000102", "port_guid": "0x02fa000000000103",
                                                      "link_state": "auto"}
    assert opensm.normalize_guid("02:FA:00:00:00:00:01:02", "m") == "0x02fa000000000102"
    assert sriov.format_guid(0x02FA000000000102) == "0x02fa000000000102"
    for reader in (lambda v: opensm.normalize_guid(v, "m"), lambda v: guid.require(v, "m")):
        with pytest.raises(ValueError, match="is the number"):
            reader(0x02FA000000000102)


# A GUID written as a regular expression or formatted by hand: 16 hex digits, 8 colon-joined bytes (or 4 groups), "%016x".
_GUID_REGEX = re.compile(r"\{[01]?,?16\}|:[^)]*\)\{[37]\}|%016x|:016x")


def test_no_other_guid_grammar_in_plugins():
    """Issue 22: one GUID grammar. A regular expression for a GUID, or a GUID formatted by hand, anywhere in plugins/ but
    module_utils/guid.py fails this test: use guid.require/normalize/to_text/colon_form instead."""
    found = []
    for base, _dirs, files in os.walk(PLUGINS):
        for name in files:
            path = os.path.join(base, name)
            if not name.endswith(".py") or os.path.relpath(path, PLUGINS) == os.path.join("module_utils", "guid.py"):
                continue
            with open(path) as handle:
                for number, line in enumerate(handle, 1):
                    if _GUID_REGEX.search(line):
                        found.append("%s:%d: %s" % (os.path.relpath(path, PLUGINS), number, line.strip()))
    assert found == []


def test_the_grep_finds_the_grammars_it_replaced():
    """The check above can fail: each GUID grammar removed from the collection by issue 22 is caught."""
    removed = [
        r'_GUID = re.compile(r"^0x[0-9a-fA-F]{1,16}$")',  # module_utils/opensm.py
        r'_GUID_FIELD_RE = re.compile(r"\b(NODE_GUID|PORT_GUID)\s+([0-9a-fA-F]{1,2}(?::[0-9a-fA-F]{1,2}){7})\b")',  # iplink.py
        r"""- ok: "{{ opensm_port_guids | reject('match', '^0x[0-9a-fA-F]{16}$') | list == [] }}" """,  # opensm preflight
        r'return "0x%016x" % int(text, 16) if text else None',  # ibnetdiscover.py
        r'return "0x%016x" % value',  # opensm.normalize_guid
        r'digits = "%016x" % int(guid, 16)',  # iplink.guid_bytes
    ]
    for line in removed:
        assert _GUID_REGEX.search(line), line
    with open(os.path.join(PLUGINS, "module_utils", "guid.py")) as handle:
        assert _GUID_REGEX.search(handle.read())
