# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

import pytest

from ansible.errors import AnsibleFilterError
from ansible_collections.fabric.infiniband.plugins.plugin_utils.link_type import plan as link_type_plan
from ansible_collections.fabric.infiniband.plugins.plugin_utils.link_type import status as link_type_status


def _fn(pci, model, is_vf=False):
    return {"pci_address": pci, "card_address": pci.rsplit(".", 1)[0], "model": model, "is_vf": is_vf}


HCA = {"hcas": [
    _fn("0000:3b:00.1", "ConnectX-6"), _fn("0000:3b:00.0", "ConnectX-6"),
    _fn("0000:3b:00.2", "ConnectX-6", is_vf=True),
    _fn("0000:c1:00.0", "ConnectX-7"),
    _fn("0000:e1:00.0", "BlueField-2"), _fn("0000:e1:00.1", "BlueField-2"),
    {"pci_address": None, "card_address": None, "model": None, "is_vf": False, "rdma_device": "rxe0"},
]}


def test_default_covers_every_card_but_bluefield_vfs_and_soft_devices():
    plan = link_type_plan(HCA, "ib")
    assert [(p["card"], p["device"], p["ports"], p["params"]) for p in plan] == [
        ("0000:3b:00", "0000:3b:00.0", 2, {"LINK_TYPE_P1": "IB", "LINK_TYPE_P2": "IB"}),
        ("0000:c1:00", "0000:c1:00.0", 1, {"LINK_TYPE_P1": "IB"}),
    ]
    assert {p["source"] for p in plan} == {"default"}


def test_adapter_by_short_address_of_any_function_and_by_model():
    plan = link_type_plan(HCA, None, [{"pci_address": "3b:00.1", "ports": ["ib", "eth"]}, {"model": "connectx-7", "ports": ["eth"]}])
    assert [(p["device"], p["link_types"], p["source"]) for p in plan] == [
        ("0000:3b:00.0", ["IB", "ETH"], "link_type_adapters[0]"), ("0000:c1:00.0", ["ETH"], "link_type_adapters[1]")]


@pytest.mark.parametrize("address", ["10000:3b:00.0", "10000:3B:00.1", "10000:3b:00"])
def test_vmd_domain_of_five_digits(address):
    """Issue 21: link_type refused a 5-digit domain (Intel VMD) that mlxconfig, sysfs and ipoib accept."""
    hca = {"hcas": [_fn("10000:3b:00.0", "ConnectX-6"), _fn("10000:3b:00.1", "ConnectX-6"), _fn("0000:3b:00.0", "ConnectX-7")]}
    plan = link_type_plan(hca, None, [{"pci_address": address, "ports": ["eth", "ib"]}])
    assert [(p["card"], p["device"], p["link_types"]) for p in plan] == [("10000:3b:00", "10000:3b:00.0", ["ETH", "IB"])]


def test_first_entry_naming_a_card_wins():
    plan = link_type_plan(HCA, "ib", [{"pci_address": "0000:3b:00.0", "ports": ["eth"]}, {"model": "ConnectX-6", "ports": ["ib", "ib"]}])
    assert plan[0]["params"] == {"LINK_TYPE_P1": "ETH"}


def test_bluefield_only_when_named():
    plan = link_type_plan(HCA, None, [{"model": "BlueField-2", "ports": ["eth", "eth"]}])
    assert [p["card"] for p in plan] == ["0000:e1:00"]


@pytest.mark.parametrize("default, adapters, message", [
    ("infiniband", [], "link_type_default must be one of ib, eth or null, got 'infiniband'"),
    ("ib", {"pci_address": "3b:00.0"}, "link_type_adapters must be a list"),
    ("ib", ["3b:00.0"], r"link_type_adapters\[0\] must be a mapping"),
    ("ib", [{"pci_address": "3b:00.0", "model": "ConnectX-6", "ports": ["ib"]}], r"link_type_adapters\[0\] needs exactly one of"),
    ("ib", [{"ports": ["ib"]}], r"link_type_adapters\[0\] needs exactly one of pci_address or model"),
    ("ib", [{"pci_address": "3b:00", "ports": ["ib"]}, {"pci_address": "zz:00.0", "ports": ["ib"]}], r"\[1\]\.pci_address 'zz:00.0' is not a PCI"),
    ("ib", [{"pci_address": "3b:00.0", "ports": []}], r"ports must be a non-empty list of ib or eth"),
    ("ib", [{"pci_address": "3b:00.0", "ports": ["ib", "roce"]}], r"ports must be a non-empty list of ib or eth"),
    ("ib", [{"pci_address": "3b:00.0", "ports": ["ib"], "link": "ib"}], r"unknown keys link; accepted: pci_address, model, ports"),
    ("ib", [{"pci_address": "0000:86:00.0", "ports": ["ib"]}],
     r"0000:86:00.0 is not a card of this host; its cards: 0000:3b:00 \(ConnectX-6\), 0000:c1:00 \(ConnectX-7\)"),
    # issue 22: a selector that selects nothing is an error (the default would apply to the card meant)
    ("ib", [{"model": "ConnectX5", "ports": ["ib"]}], r"\[0\]\.model 'ConnectX5' is no model this collection knows \(did you mean ConnectX-5\?\)"),
    ("ib", [{"model": "ConnectX-5", "ports": ["ib"]}], r"\[0\]\.model ConnectX-5 matches no card of this host; its cards: 0000:3b:00"),
    ("ib", [{"model": 5, "ports": ["ib"]}], r"\[0\]\.model 5 is no model"),
    # issue 22 class 8: YAML 1.1 reads an unquoted 86:00.0 as 5160.0
    ("ib", [{"pci_address": 5160.0, "ports": ["ib"]}],
     r'^link_type_adapters\[0\]\.pci_address is the number 5160.0, not a PCI address: YAML reads an unquoted 86:00.0 as a base-60 '
     r'number. Quote it: "86:00.0"$'),
    ("ib", [{"pci_address": "3b:00.9", "ports": ["ib"]}], r"'3b:00.9' is not a PCI address; write it as 0000:3b:00.0 or 3b:00.0"),
    ("ib", [{"model": "ConnectX-7", "ports": ["ib", "ib"]}], r"lists 2 ports, but 0000:c1:00 \(ConnectX-7\) has 1"),
])
def test_bad_input_names_the_variable_and_accepted_values(default, adapters, message):
    with pytest.raises(AnsibleFilterError, match=message):
        link_type_plan(HCA, default, adapters)


def test_needs_an_hca_info_result():
    with pytest.raises(AnsibleFilterError, match="registered result of fabric.infiniband.hca_info"):
        link_type_plan({"summary": []})


def _result(device, card, link_types, actions, reboot=False, power=False):
    params = dict(("LINK_TYPE_P%d" % (i + 1), {"action": a}) for i, a in enumerate(actions))
    item = {"device": device, "card": card, "model": "ConnectX-6", "link_types": link_types,
            "params": dict(("LINK_TYPE_P%d" % (i + 1), v) for i, v in enumerate(link_types))}
    return {"item": item, "params": params, "reboot_required": reboot, "power_cycle_required": power}


def _hca(*ports):
    return {"hcas": [{"pci_address": pci, "ports": [{"link_layer": layer}]} for pci, layer in ports]}


def test_status_separates_live_pending_and_ethernet_only_cards():
    results = [
        _result("0000:3b:00.0", "0000:3b:00", ["IB", "IB"], ["write", "none"], reboot=True),
        _result("0000:c1:00.0", "0000:c1:00", ["IB"], ["none"]),
        _result("0000:01:00.0", "0000:01:00", ["IB", "IB"], ["unsupported", "unsupported"]),
    ]
    status = link_type_status(results, _hca(("0000:c1:00.0", "InfiniBand")))
    assert status["pending"] == ["0000:3b:00.0"] and status["live"] == ["0000:c1:00.0"]
    assert status["unsupported"] == ["0000:01:00.0 (ConnectX-6)"]
    assert status["reason"] == "0000:3b:00.0: LINK_TYPE_P1=IB at the next boot"
    assert status["mismatches"] == [] and status["power_cycle"] is False


def test_status_reports_a_port_whose_link_layer_is_not_the_firmwares():
    results = [_result("0000:3b:00.0", "0000:3b:00", ["IB", "ETH"], ["none", "none"])]
    status = link_type_status(results, _hca(("0000:3b:00.0", "InfiniBand"), ("0000:3b:00.1", "InfiniBand")))
    assert status["mismatches"] == [
        "0000:3b:00.1 port 2: the firmware runs LINK_TYPE_P2=ETH, but the port's link layer in sysfs is InfiniBand"]


def test_status_power_cycle_when_a_card_says_so():
    results = [_result("0000:c1:00.0", "0000:c1:00", ["IB"], ["pending_reboot"], reboot=True, power=True)]
    assert link_type_status(results, _hca())["power_cycle"] is True


def test_status_judges_only_the_link_types_of_a_set_that_carried_other_parameters():
    """Parameters other than the link types in the same answer (a card's set from an earlier run): they wait for a reboot, the link
    types do not; only the link types are judged."""
    result = _result("0000:3b:00.0", "0000:3b:00", ["IB"], ["none"], reboot=True, power=True)
    result["params"]["LINK_TYPE_P1"]["reboot_required"] = False
    result["params"]["SRIOV_EN"] = {"action": "write", "reboot_required": True}
    result["params"]["NUM_OF_VFS"] = {"action": "write", "reboot_required": True}
    status = link_type_status([result], _hca(("0000:3b:00.0", "InfiniBand")))
    assert status["pending"] == [] and status["live"] == ["0000:3b:00.0"]
    assert status["reason"] == "" and status["power_cycle"] is False

    result["params"]["LINK_TYPE_P1"] = {"action": "write", "reboot_required": True}
    status = link_type_status([result], _hca(("0000:3b:00.0", "Ethernet")))
    assert status["pending"] == ["0000:3b:00.0"] and status["power_cycle"] is True
    assert status["reason"] == "0000:3b:00.0: LINK_TYPE_P1=IB at the next boot"


def test_ethernet_only_cards_are_not_queried_unless_named():
    hca = {"hcas": [_fn("0000:01:00.0", "ConnectX-4 Lx"), _fn("0000:01:00.1", "ConnectX-4 Lx"),
                    _fn("0000:02:00.0", "ConnectX-6 Dx"), _fn("0000:c1:00.0", "ConnectX-7")]}
    plan = link_type_plan(hca, "ib")
    assert [(p["device"], p["query"]) for p in plan] == [("0000:01:00.0", False), ("0000:02:00.0", False), ("0000:c1:00.0", True)]
    # named by the inventory: the firmware tool says whether it has link types
    plan = link_type_plan(hca, "ib", [{"model": "ConnectX-4 Lx", "ports": ["eth", "eth"]}])
    assert [(p["device"], p["query"]) for p in plan][0] == ("0000:01:00.0", True)
