# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""One firmware write per card in a run: what roles publish (firmware_wanted, firmware_others) and what a later
role may take from an earlier role's set instead of querying the card (mlxconfig_state, mlxconfig_covered)."""

from __future__ import annotations

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.fabric.infiniband.plugins.filter.firmware_others import firmware_others
from ansible_collections.fabric.infiniband.plugins.filter.firmware_wanted import firmware_wanted
from ansible_collections.fabric.infiniband.plugins.filter.mlxconfig_covered import mlxconfig_covered
from ansible_collections.fabric.infiniband.plugins.filter.mlxconfig_state import mlxconfig_state
from ansible_collections.fabric.infiniband.plugins.plugin_utils import node_state

RUN = "ctl:42:777"
CARD = "0000:3b:00.0"
SRIOV = {"SRIOV_EN": "True", "NUM_OF_VFS": 8}


@pytest.fixture(autouse=True)
def this_run(monkeypatch):
    monkeypatch.setattr(node_state, "run_id", lambda: RUN)


def test_wanted_merges_roles_of_this_run_and_replaces_a_role_s_own():
    fact = firmware_wanted(None, "sriov", {CARD: SRIOV})
    assert fact == {"run_id": RUN, "roles": {"sriov": {CARD: SRIOV}}}
    fact = firmware_wanted(fact, "fwver", {CARD: {"X": 1}})
    fact = firmware_wanted(fact, "sriov", {})  # sriov planned again: nothing to change now
    assert fact["roles"] == {"fwver": {CARD: {"X": 1}}, "sriov": {}}


def test_wanted_from_another_run_is_dropped_not_merged():
    stale = {"run_id": "ctl:1:1", "roles": {"sriov": {CARD: {"NUM_OF_VFS": 64}}}}
    assert firmware_wanted(stale, "other", {}) == {"run_id": RUN, "roles": {"other": {}}}
    assert firmware_others(stale, "link_type") == {}


def test_wanted_refuses_a_non_dict():
    with pytest.raises(AnsibleFilterError, match="params must be a dict"):
        firmware_wanted(None, "sriov", ["0000:3b:00.0"])


def test_others_leaves_the_asking_role_out():
    fact = {"run_id": RUN, "roles": {"sriov": {CARD: SRIOV}, "link_type": {CARD: {"LINK_TYPE_P1": "IB"}}}}
    assert firmware_others(fact, "link_type") == {CARD: SRIOV}
    assert firmware_others(None, "link_type") == {}


def _result(device, own, reported, power=False, **extra):
    result = {"item": {"device": device, "params": own},
              "params": reported, "reboot_required": any(i.get("reboot_required") for i in reported.values()),
              "power_cycle_required": power}
    result.update(extra)
    return result


def test_state_records_what_the_set_was_given_and_what_waits():
    reported = {"LINK_TYPE_P1": {"reboot_required": False}, "SRIOV_EN": {"reboot_required": True},
                "NUM_OF_VFS": {"reboot_required": True}}
    results = [_result(CARD, {"LINK_TYPE_P1": "IB"}, reported, power=True),
               {"skipped": True, "item": {"device": "0000:86:00.0"}},
               {"failed": True, "item": {"device": "0000:c1:00.0"}}]
    fact = mlxconfig_state({"results": results}, others={CARD: {"SRIOV_EN": "True", "NUM_OF_VFS": 8}, "0000:99:00.0": {"X": 1}})
    assert fact["run_id"] == RUN and list(fact["devices"]) == [CARD]
    assert fact["devices"][CARD] == {"power_cycle_required": True, "params": {
        "LINK_TYPE_P1": {"requested": "IB", "reboot_required": False},
        "SRIOV_EN": {"requested": "True", "reboot_required": True},
        "NUM_OF_VFS": {"requested": "8", "reboot_required": True}}}
    # merged into the same run's fact, not into another run's
    again = mlxconfig_state([_result("0000:86:00.0", {"LINK_TYPE_P1": "IB"}, {"LINK_TYPE_P1": {}})], previous=fact)
    assert sorted(again["devices"]) == [CARD, "0000:86:00.0"]
    other = mlxconfig_state([], previous=dict(fact, run_id="ctl:1:1"))
    assert other["devices"] == {}


def test_covered_only_when_this_run_asked_the_same_values():
    fact = mlxconfig_state([_result(CARD, {"LINK_TYPE_P1": "IB"},
                                    {"SRIOV_EN": {"reboot_required": True}, "NUM_OF_VFS": {"reboot_required": True}}, power=True)],
                           others={CARD: SRIOV})
    card = {"device": CARD, "card": "0000:3b:00", "params": SRIOV}
    split = mlxconfig_covered([card], fact)
    assert split["todo"] == []
    assert split["covered"] == [{"item": card, "changed": False, "reboot_required": True, "power_cycle_required": True,
                                 "from_fact": True}]
    assert split["power_cycle_devices"] == [CARD]
    # another value, another card, another run, no fact: the card is asked
    assert mlxconfig_covered([dict(card, params={"SRIOV_EN": "True", "NUM_OF_VFS": 16})], fact)["todo"]
    assert mlxconfig_covered([dict(card, device="0000:86:00.0")], fact)["todo"]
    assert mlxconfig_covered([card], dict(fact, run_id="ctl:1:1"))["todo"] == [card]
    assert mlxconfig_covered([card], None) == {"covered": [], "todo": [card], "power_cycle_devices": []}
    # a forgotten fact (node_reboot sets it to {} after a boot)
    assert mlxconfig_covered([card], {})["todo"] == [card]


def test_covered_card_that_is_live_does_not_wait():
    fact = mlxconfig_state([_result(CARD, dict(SRIOV), {"SRIOV_EN": {"reboot_required": False}, "NUM_OF_VFS": {"reboot_required": False}})])
    (entry,) = mlxconfig_covered([{"device": CARD, "params": SRIOV}], fact)["covered"]
    assert entry["reboot_required"] is False and entry["power_cycle_required"] is False


def test_a_new_reading_of_the_adapters_makes_the_fact_cover_nothing():
    """After a boot or a firmware reset node_reboot reads the adapters again: the cards are asked again."""
    before = {"boot": "b1:1", "read_at": 100.0}
    fact = mlxconfig_state([_result(CARD, dict(SRIOV), {"SRIOV_EN": {"reboot_required": True}})], hca=before)
    card = {"device": CARD, "params": SRIOV}
    assert mlxconfig_covered([card], fact, hca=before)["covered"]
    assert mlxconfig_covered([card], fact, hca={"boot": "b2:1", "read_at": 200.0})["todo"] == [card]
    assert mlxconfig_covered([card], fact, hca={"boot": "b1:1", "read_at": 150.0})["todo"] == [card]
    # and a state built on another reading starts afresh
    assert mlxconfig_state([], previous=fact, hca={"boot": "b2:1", "read_at": 200.0})["devices"] == {}


def test_a_power_cycle_asked_by_the_set_stays_asked_when_the_card_is_queried_again():
    """link_type's set said 'power cycle'; a later query of the same card in the same reading cannot tell it again."""
    first = mlxconfig_state([_result(CARD, {"LINK_TYPE_P1": "IB"}, {"LINK_TYPE_P1": {"reboot_required": True}}, power=True)])
    again = mlxconfig_state([_result(CARD, {"LINK_TYPE_P1": "IB"}, {"LINK_TYPE_P1": {"reboot_required": True}})], previous=first)
    assert again["devices"][CARD]["power_cycle_required"] is True
    split = mlxconfig_covered([{"device": CARD, "params": {"NUM_OF_VFS": 20}}], again)
    assert split["todo"] and split["power_cycle_devices"] == [CARD]
