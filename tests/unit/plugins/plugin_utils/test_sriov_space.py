# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""plugin_utils/sriov.py: a host whose scheme GUIDs cannot be planned without a reading of its adapters (the role alone on
fresh hosts, or a host outside --limit with no fact cache) is checked by its scheme space, known from its settings: one
prefix and host id on two hosts, or a listed GUID inside another host's space, is refused (issue 33, class 1)."""

from __future__ import annotations

from ansible_collections.fabric.infiniband.plugins.module_utils import sriov as sriov_utils
from ansible_collections.fabric.infiniband.plugins.plugin_utils import sriov

PF = "0000:3b:00.0"
SCHEME = [{"pf": PF, "num_vfs": 2}]


def _hca(link_layer="InfiniBand", run_id=None):
    hca = {"hcas": [{"pci_address": PF, "card_address": "0000:3b:00", "rdma_device": "mlx5_0", "model": "ConnectX-6",
                     "is_vf": False, "netdevs": ["ibp59s0f0"], "sriov": {"total_vfs": 8, "num_vfs": 0},
                     "ports": [{"port": 1, "link_layer": link_layer, "netdev": "ibp59s0f0"}]}]}
    if run_id:
        hca["run_id"] = run_id
    return hca


def _guid(host, pf_index=0, vf=0, prefix=0x02FA):
    return sriov_utils.format_guid(sriov_utils.scheme_guid(prefix, host, pf_index, vf))


def _clash(settings, others, play=("node01", "node02"), preflight=False, host="node01"):
    """What node01's step finds, as the action asks it: its plan, the fleet's view, the collisions by scheme space."""
    s = dict(sriov.GUID_SETTINGS, **settings)
    the_plan = sriov.plan(_hca(), s["sriov_pfs"], host, guid_mode=s["sriov_guid_mode"], guid_prefix=s["sriov_guid_prefix"],
                          host_id=s["sriov_guid_host_id"])
    view = sriov.fleet(others, play=play, preflight=preflight)
    return view, sriov.space_collisions(host, the_plan, s["sriov_pfs"], s, view["space"])


def test_one_host_id_on_two_fresh_hosts_of_the_play_is_refused():
    """The role alone on two fresh hosts given sriov_guid_host_id 7: neither was read when the other's step ran."""
    others = {"node02": {"settings": {"sriov_pfs": SCHEME, "sriov_guid_host_id": 7}}}
    for preflight in (False, True):
        view, lines = _clash({"sriov_pfs": SCHEME, "sriov_guid_host_id": 7}, others, preflight=preflight)
        # node02 stays unseen for a GUID change (what its VFs carry now is not known); before, nothing else was checked
        assert list(view["unseen"]) == ([] if preflight else ["node02"])
        assert lines == ["node01 (sriov_guid_host_id: 7 of host node01) and node02 (sriov_guid_host_id: 7 of host node02) both "
                         "take prefix 0x02fa with host id 7 (0x00000007)"]
    message = sriov.space_message("node01", lines)
    assert message.startswith("node01: VF GUIDs of two hosts share a space of the scheme")
    assert "give each host its own sriov_guid_host_id, or leave it unset to derive it from the inventory name" in message
    assert "sriov_allow_guid_change does not allow this" in message and message.endswith("Nothing was changed.")


def test_a_host_id_set_to_another_hosts_derived_one_is_refused_naming_both_settings():
    """node01 is given the host id that node02, outside the play and never read, derives from its name."""
    others = {"node02": {"settings": {"sriov_pfs": SCHEME}}}
    derived = sriov_utils.host_id("node02")
    _view, lines = _clash({"sriov_pfs": SCHEME, "sriov_guid_host_id": derived}, others, play=("node01",))
    assert lines == ["node01 (sriov_guid_host_id: %d of host node01) and node02 (derived from the inventory name node02) both "
                     "take prefix 0x02fa with host id %d (0x%08x)" % (derived, derived, derived)]


def test_one_host_id_is_refused_also_when_both_hosts_were_read():
    """Both plans are exact and share no GUID now (node02 has its VFs on another PF index): the space is still one."""
    hca = _hca(run_id="r1")
    hca["hcas"].insert(0, dict(hca["hcas"][0], pci_address="0000:1a:00.0", card_address="0000:1a:00", rdma_device="mlx5_2"))
    others = {"node02": {"settings": {"sriov_pfs": [{"pf": "mlx5_2", "num_vfs": 0}, {"pf": PF, "num_vfs": 2}],
                                      "sriov_guid_host_id": 7}, "hca": hca, "current": True}}
    view, lines = _clash({"sriov_pfs": SCHEME, "sriov_guid_host_id": 7}, others)
    assert view["planned"]["node02"] == [_guid(7, 1, 0), _guid(7, 1, 1)]
    assert sriov.duplicate_guids(dict(view["planned"], node01=[_guid(7), _guid(7, 0, 1)]), host="node01") == []
    assert len(lines) == 1 and "both take prefix 0x02fa with host id 7" in lines[0]


def test_derived_ids_of_two_names_and_other_prefixes_are_not_refused():
    others = {"node02": {"settings": {"sriov_pfs": SCHEME}},                                   # derived, not read
              "node03": {"settings": {"sriov_pfs": SCHEME, "sriov_guid_host_id": 7, "sriov_guid_prefix": "0x06fa"}},
              "node04": {"settings": {"sriov_pfs": SCHEME, "sriov_guid_host_id": 7, "sriov_guid_mode": "none"}},
              "node05": {"settings": {"sriov_pfs": SCHEME, "sriov_guid_host_id": 7}, "hca": _hca("Ethernet", "r1"),
                         "current": True},                                                    # read: an Ethernet PF, no GUID
              "opensm01": {}}
    view, lines = _clash({"sriov_pfs": SCHEME}, others)
    assert lines == [] and sorted(view["unseen"]) == ["node02", "node03"]  # not read: a GUID change would wait for them
    _view, lines = _clash({"sriov_pfs": SCHEME, "sriov_guid_host_id": 7}, others)
    assert lines == []


def test_a_listed_guid_inside_another_hosts_scheme_space_is_refused_naming_the_list():
    derived = sriov_utils.host_id("node02")
    # node01's list takes a GUID of node02's space (node02 outside the play, never read: VF 5 of PF 3 is not planned)
    listed = [{"pf": PF, "num_vfs": 2, "guids": ["0x02fa00000000aa00", _guid(derived, 3, 5)]}]
    _view, lines = _clash({"sriov_pfs": listed}, {"node02": {"settings": {"sriov_pfs": SCHEME}}}, play=("node01",))
    assert lines == ["sriov_pfs[0].guids[1] of node01 (%s) falls in the scheme space of node02: prefix 0x02fa with host id %d "
                     "(0x%08x, derived from the inventory name node02)" % (_guid(derived, 3, 5), derived, derived)]
    message = sriov.space_message("node01", lines)
    assert "list GUIDs of a prefix or host id that no host takes" in message and "sriov_guid_host_id" not in message
    # and the other way: node02's list inside node01's space
    mine = sriov_utils.host_id("node01")
    others = {"node02": {"settings": {"sriov_pfs": [{"pf": PF, "num_vfs": 1, "guids": [_guid(mine, 0, 9)]}]}}}
    _view, lines = _clash({"sriov_pfs": SCHEME}, others)
    assert lines == ["sriov_pfs[0].guids[0] of node02 (%s) falls in the scheme space of node01: prefix 0x02fa with host id %d "
                     "(0x%08x, derived from the inventory name node01)" % (_guid(mine, 0, 9), mine, mine)]


def test_a_host_whose_settings_come_from_this_runs_extra_vars_stays_unseen():
    others = {"node02": {"settings": {"sriov_pfs": SCHEME, "sriov_guid_host_id": 7}, "from_run": ["sriov_pfs"]},
              "node03": {"settings": {"sriov_pfs": SCHEME}, "from_run": ["sriov_guid_host_id"]}}
    view, lines = _clash({"sriov_pfs": SCHEME, "sriov_guid_host_id": 7}, others, play=("node01",))
    assert lines == [] and view["space"] == {}
    assert sorted(view["unseen"]) == ["node02", "node03"]
    assert view["unseen"]["node02"].startswith("outside this play; sriov_pfs of this run's extra vars (-e) is not its own")
    assert sriov.their_space("node02", {"sriov_pfs": SCHEME}, from_run=["sriov_pfs"]) is None


def test_their_space_from_settings_and_from_a_reading():
    assert sriov.their_space("node02", {"sriov_pfs": SCHEME}) == {
        "listed": {}, "scheme": True, "prefix": 0x02FA, "host_id": sriov_utils.host_id("node02"),
        "source": "derived from the inventory name node02"}
    # settings its own plan refuses, or no VF: no space
    for settings in ({"sriov_pfs": SCHEME, "sriov_guid_prefix": "0x00fa"}, {"sriov_pfs": SCHEME, "sriov_guid_host_id": -1},
                     {"sriov_pfs": [{"pf": PF, "num_vfs": 0}]}, {}, {"sriov_pfs": SCHEME, "sriov_guid_mode": "none"}):
        assert sriov.their_space("node02", settings) is None, settings
    # a list and the scheme: both
    space = sriov.their_space("node02", {"sriov_pfs": [{"pf": PF, "num_vfs": 1, "guids": ["0x02fa00000000aa00"]},
                                                       {"pf": "mlx5_1", "num_vfs": 1}], "sriov_guid_host_id": "9"})
    assert space["listed"] == {"0x02fa00000000aa00": "sriov_pfs[0].guids[0]"} and space["scheme"]
    assert space["host_id"] == 9 and space["source"] == "sriov_guid_host_id: 9 of host node02"
    # a current reading decides: its Ethernet PF takes no GUID
    assert sriov.their_space("node02", {"sriov_pfs": SCHEME}, hca=_hca("Ethernet", "r1"), current=True) is None
