# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Firmware rules that name no card of any host of the run (issue 33, class 4): warned of, not refused, and published."""

from __future__ import annotations

from ansible_collections.fabric.infiniband.plugins.plugin_utils import firmware


def hca(*cards):
    return {"hcas": [{"pci_address": "0000:%02x:00.0" % (0x3b + i), "card_address": "0000:%02x:00" % (0x3b + i), "model": model,
                      "psid": psid, "firmware_version": "20.39.1002", "rdma_device": "mlx5_%d" % i, "is_vf": False}
                     for i, (model, psid) in enumerate(cards)]}


CX6 = ("ConnectX-6", "MT_0000000223")
CX7 = ("ConnectX-7", "MT_0000000834")
RULES = [{"psid": "MT_0000000223", "version": "20.40.1000"},
         {"psid": "mt_0000000233", "version": "20.40.1000"},                     # a digit swapped
         {"model": "ConnectX-7", "version": "28.39.1002", "at_least": True}]


def fleet(**hosts):
    return dict((host, None if reading is None else firmware.cards_from(reading)) for host, reading in hosts.items())


def test_a_rule_that_names_a_card_of_another_host_is_matched():
    found = firmware.unmatched(RULES, fleet(node01=hca(CX6), node02=hca(CX7)))
    assert [entry["where"] for entry in found["rules"]] == ["firmware_versions[1]"]
    assert found["rules"][0] == {"rule": 1, "where": "firmware_versions[1]", "psid": "MT_0000000233", "version": "20.40.1000",
                                 "at_least": False}
    assert (found["seen"], found["unseen"]) == (["node01", "node02"], [])


def test_the_warning_names_the_rule_the_hosts_and_their_cards():
    view = fleet(node01=hca(CX6), node02=hca(CX6))
    warning = firmware.unmatched_warning(firmware.unmatched(RULES, view), view)
    assert warning == (
        "firmware rules firmware_versions[1] (PSID MT_0000000233, 20.40.1000); firmware_versions[2] (model ConnectX-7, at least "
        "28.39.1002) match no card of this run's hosts (node01, node02): check the PSID or model (the cards: MT_0000000223 "
        "ConnectX-6). A rule that matches no card burns nothing; nothing was changed for it.")


def test_hosts_without_a_reading_are_named_and_every_rule_that_matches_gives_no_warning():
    view = fleet(node01=hca(CX6, CX7), node02=None)
    found = firmware.unmatched(RULES, view)
    assert found["unseen"] == ["node02"] and [e["rule"] for e in found["rules"]] == [1]
    assert "; not read: node02" in firmware.unmatched_warning(found, view)
    good = firmware.unmatched([RULES[0], RULES[2]], view)
    assert good["rules"] == [] and firmware.unmatched_warning(good, view) is None


def test_bad_rules_are_left_to_the_step_s_refusal():
    assert firmware.unmatched([{"psid": "MT_0000000223"}], fleet(node01=hca(CX6)))["rules"] == []
