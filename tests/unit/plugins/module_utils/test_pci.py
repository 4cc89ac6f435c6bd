# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

import os
import re

import pytest

from ansible_collections.fabric.infiniband.plugins.module_utils import mlxconfig, pci, pcie, sysfs

PLUGINS = os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "plugins")

# value, function, normal form (None: refused)
CASES = [
    ("0000:3b:00.0", "required", "0000:3b:00.0"),
    ("3b:00.0", "required", "0000:3b:00.0"),
    ("  3B:00.1 ", "required", "0000:3b:00.1"),
    ("0000:AF:1F.7", "required", "0000:af:1f.7"),
    # Intel VMD: domains of 5 hex digits and more
    ("10000:3b:00.0", "required", "10000:3b:00.0"),
    ("10000:3B:00.1", "required", "10000:3b:00.1"),
    ("1000a:01:00.0", "required", "1000a:01:00.0"),
    ("ffffffff:01:00.0", "required", "ffffffff:01:00.0"),
    ("00000001:3b:00.0", "required", "0001:3b:00.0"),
    ("0001:af:00.0", "required", "0001:af:00.0"),
    # function left out: a card
    ("3b:00", "required", None),
    ("3b:00", "optional", "0000:3b:00"),
    ("10000:3b:00", "optional", "10000:3b:00"),
    ("3b:00.1", "optional", "0000:3b:00.1"),
    # garbage
    ("", "required", None),
    ("mlx5_0", "required", None),
    ("ib0", "optional", None),
    ("/dev/mst/mt4123_pciconf0", "required", None),
    ("3b:00.8", "required", None),
    ("3b:20.0", "required", None),
    ("3b:0.0", "required", None),
    ("b:00.0", "required", None),
    ("000:3b:00.0", "required", None),
    ("123456789:3b:00.0", "required", None),
    ("zz:00.0", "required", None),
    ("0000:3b:00.0.0", "required", None),
    ("0000-3b-00.0", "required", None),
    ("pci0000:3b", "required", None),
    (None, "required", None),
    (5160.0, "required", None),
    (5160, "optional", None),
    (True, "required", None),
]


@pytest.mark.parametrize("value, function, expected", CASES)
def test_grammar(value, function, expected):
    assert pci.normalize(value, function) == expected
    if expected is None:
        with pytest.raises(pci.PciAddressError) as err:
            pci.require(value, "x.pci_address", function)
        assert str(err.value).startswith("x.pci_address ")
        assert "0000:3b:00.0 or 3b:00.0" in str(err.value) or "Quote it" in str(err.value)
    else:
        assert pci.require(value, "x.pci_address", function) == expected


@pytest.mark.parametrize("value, card, short, first, full", [
    ("0000:3b:00.1", "0000:3b:00", "3b:00.1", "0000:3b:00.0", True),
    ("3b:00.1", "0000:3b:00", "3b:00.1", "0000:3b:00.0", False),
    ("10000:3b:00.1", "10000:3b:00", "10000:3b:00.1", "10000:3b:00.0", True),
    ("10000:3b:00", "10000:3b:00", "10000:3b:00", "10000:3b:00.0", False),
    ("mlx5_0", None, None, None, False),
])
def test_forms(value, card, short, first, full):
    assert pci.card(value) == card
    assert pci.short(value) == short
    assert pci.first_function(value) == first
    assert pci.is_full(value) is full


@pytest.mark.parametrize("name, expected", [
    ("pci0000:16", "0000:16"), ("pci10000:00", "10000:00"), ("PCI0000:3B", "0000:3b"),
    ("0000:16:00.0", None), ("pci0000", None), ("devices", None), (None, None),
])
def test_host_bridge(name, expected):
    assert pci.host_bridge(name) == expected


# What PyYAML (YAML 1.1, as Ansible reads it) makes of an unquoted address, and what the message recovers.
@pytest.mark.parametrize("written", ["86:00.0", "41:00.1", "05:00.0", "0001:41:00.0", "86:00", "99:19.7"])
def test_yaml_base60_reading_is_reversed(written):
    yaml = pytest.importorskip("yaml")
    value = yaml.safe_load("pf: %s" % written)["pf"]
    assert isinstance(value, (int, float)), "YAML 1.1 reads %s as a number" % written
    assert pci.base60_text(value) == written
    assert pci.base60_text(str(value)) == written
    message = pci.bad_address(value, "sriov_pfs[0].pf")
    assert message == ('sriov_pfs[0].pf is the number %s, not a PCI address: YAML reads an unquoted %s as a base-60 number. '
                       'Quote it: "%s"' % (value, written, written))


@pytest.mark.parametrize("value", [5160.0, 5160, 2460.1])
def test_yaml_number_is_refused_even_where_the_function_may_be_left_out(value):
    with pytest.raises(pci.PciAddressError, match=r"^link_type_adapters\[0\]\.pci_address is the number .* Quote it"):
        pci.require(value, "link_type_adapters[0].pci_address", "optional")


@pytest.mark.parametrize("value", [-60.0, 60.9, 1.23, float("nan"), float("inf"), "mlx5_0", "3b:00.0", None, True, 50])
def test_not_a_base60_address(value):
    assert pci.base60_text(value) is None


def test_number_that_is_no_base60_address_still_asks_for_quotes():
    assert pci.bad_address(60.9, "pf") == ('pf is the number 60.9, not a PCI address: YAML reads an unquoted address as a base-60 '
                                           'number. Quote it: "0000:3b:00.0"')


def test_one_message_for_a_bad_address():
    assert pci.bad_address("3b:00.8", "ipoib_config[0].device") == (
        "ipoib_config[0].device '3b:00.8' is not a PCI address; write it as 0000:3b:00.0 or 3b:00.0 (domain optional, 4 to 8 hex "
        "digits (10000 and up behind Intel VMD); bus and device 2 hex digits, device at most 1f; function 0 to 7)")
    assert "(the function, .0, may be left out)" in pci.bad_address("3b", "a", "optional")


@pytest.mark.parametrize("value, expected", [
    ("mlx5_0", "mlx5_0"), (" ib0 ", "ib0"), ("3B:00.0", "0000:3b:00.0"), ("10000:3b:00.1", "10000:3b:00.1"),
    ("3b:00", pci.PciAddressError), ("3b:00.9", pci.PciAddressError), (5160.0, pci.PciAddressError), ("5160.0", pci.PciAddressError),
])
def test_selector(value, expected):
    if expected is pci.PciAddressError:
        with pytest.raises(pci.PciAddressError):
            pci.selector(value, "pf")
    else:
        assert pci.selector(value, "pf") == expected


def test_every_user_agrees():
    """sysfs, mlxconfig and pcie answer through pci: a VMD domain is one address everywhere."""
    assert sysfs.is_bdf("10000:3b:00.0") and sysfs.card_address("10000:3b:00.1") == "10000:3b:00"
    assert mlxconfig.normalize_pci_address("10000:3B:00.0") == "10000:3b:00.0"
    assert mlxconfig.first_function("10000:3b:00.1") == "10000:3b:00.0"
    assert not sysfs.is_bdf("3b:00.0")
    assert pcie is not None


@pytest.mark.parametrize("device, says", [
    ("5160.0", 'device is the number 5160.0, not a PCI address: YAML reads an unquoted 86:00.0 as a base-60 number'),
    ("3b:00.9", "device '3b:00.9' is not a PCI address"),
    ("-y", "is not a device"),
    ("", "is not a device"),
])
def test_mlxconfig_device_problem(device, says):
    assert says in mlxconfig.device_problem(device)


@pytest.mark.parametrize("device", ["3b:00.0", "10000:3b:00.0", "mlx5_0", "/dev/mst/mt4123_pciconf0", "/dev/fwctl/fwctl1"])
def test_mlxconfig_device_fine(device):
    assert mlxconfig.device_problem(device) is None


# A PCI address written as a regular expression: hex pairs joined by ':' and a '.' with a function digit.
_PCI_REGEX = re.compile(r"""\{2\}\)?:|\{2\}\):\(|:\[0-9a-f[^\]]*\]\{2\}|\\\.\[0-7\]|pci\(\[0-9a-f\]|pci\[0-9a-f""", re.I)


def test_no_other_pci_grammar_in_plugins():
    """Issue 21: one PCI address grammar. A regular expression for a PCI address anywhere in plugins/ but
    module_utils/pci.py fails this test: use pci.parse/normalize/require/selector instead."""
    found = []
    for base, _dirs, files in os.walk(PLUGINS):
        for name in files:
            path = os.path.join(base, name)
            if not name.endswith(".py") or os.path.relpath(path, PLUGINS) == os.path.join("module_utils", "pci.py"):
                continue
            with open(path) as handle:
                for number, line in enumerate(handle, 1):
                    if _PCI_REGEX.search(line):
                        found.append("%s:%d: %s" % (os.path.relpath(path, PLUGINS), number, line.strip()))
    assert found == []


def test_the_grep_finds_the_grammars_it_replaced():
    """The check above can fail: each grammar removed from plugins/ by issue 21 is caught."""
    removed = [
        r'_BDF_RE = re.compile(r"^[0-9a-f]{4,8}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$")',
        r'_BDF_RE = re.compile(r"^(?:([0-9a-fA-F]{4,8}):)?([0-9a-fA-F]{2}):([0-9a-fA-F]{2})\.([0-7])$")',
        r'_BDF = re.compile(r"^(?:([0-9a-fA-F]{4}):)?([0-9a-fA-F]{2}):([0-9a-fA-F]{2})(?:\.([0-7]))?$")',
        r'_HOST_BRIDGE_RE = re.compile(r"^pci([0-9a-f]{4,8}):([0-9a-f]{2})$")',
    ]
    for line in removed:
        assert _PCI_REGEX.search(line), line
    with open(os.path.join(PLUGINS, "module_utils", "pci.py")) as handle:
        assert _PCI_REGEX.search(handle.read())
