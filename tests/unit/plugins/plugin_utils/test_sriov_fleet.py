# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""plugin_utils/sriov.py: the fleet check sees the hosts outside the play (--limit, a job slice), or names them."""

from __future__ import annotations

from ansible_collections.fabric.infiniband.plugins.module_utils import sriov as sriov_utils
from ansible_collections.fabric.infiniband.plugins.plugin_utils import sriov

PF = "0000:3b:00.0"
LISTED = ["0x02fa00000000aa00", "0x02fa00000000aa01"]


def _hca(run_id=None):
    hca = {"hcas": [
        {"pci_address": "0000:3b:00.1", "card_address": "0000:3b:00", "rdma_device": "mlx5_1", "model": "ConnectX-6",
         "is_vf": False, "netdevs": ["ibp59s0f1"], "ports": [{"port": 1, "link_layer": "InfiniBand", "netdev": "ibp59s0f1"}]},
        {"pci_address": PF, "card_address": "0000:3b:00", "rdma_device": "mlx5_0", "model": "ConnectX-6", "is_vf": False,
         "netdevs": ["ibp59s0f0"], "ports": [{"port": 1, "link_layer": "InfiniBand", "netdev": "ibp59s0f0"}]}]}
    if run_id:
        hca["run_id"] = run_id
    return hca


def _scheme(name, pf_index, count, host=None):
    host = sriov_utils.host_id(name) if host is None else host
    return [sriov_utils.format_guid(sriov_utils.scheme_guid(0x02FA, host, pf_index, vf)) for vf in range(count)]


def test_inventory_guids_are_known_where_the_settings_fix_them():
    assert sriov.inventory_guids([{"pf": PF, "num_vfs": 2, "guids": LISTED + ["0x02fa00000000aa02"]}], "n") == LISTED
    # no VF, GUIDs left to others, nothing asked: no GUID, known without a reading
    assert sriov.inventory_guids([{"pf": PF, "num_vfs": 0}], "n") == []
    assert sriov.inventory_guids([{"pf": PF, "num_vfs": 4}], "n", guid_mode="none") == []
    assert sriov.inventory_guids([], "n") == []
    # the scheme's PF index is the PF's position among the host's PFs: it needs the reading
    assert sriov.inventory_guids([{"pf": PF, "num_vfs": 2}], "n") is None
    assert sriov.inventory_guids([{"pf": PF, "num_vfs": 2, "guids": LISTED}, {"pf": "mlx5_1", "num_vfs": 1}], "n") is None


def test_inventory_guids_of_settings_the_host_refuses_are_none_taken():
    # its own run refuses them: it takes no GUID
    for pfs, kwargs in (([{"pf": PF, "num_vfs": 2, "guids": ["0x0"]}], {}),
                        ([{"pf": PF, "num_vfs": 3, "guids": LISTED}], {}),
                        ([{"pf": PF, "num_vfs": 2, "guids": [LISTED[0], LISTED[0]]}], {}),
                        ([{"pf": PF, "num_vfs": "many"}], {}),
                        ([{"pf": PF, "vfs": 2}], {}),
                        ("mlx5_0", {}),
                        ([{"pf": PF, "num_vfs": 2}], {"guid_prefix": "0x00fa"}),
                        ([{"pf": PF, "num_vfs": 2}], {"guid_mode": "random"})):
        assert sriov.inventory_guids(pfs, "n", **kwargs) == [], pfs


def test_their_guids_from_a_reading_of_any_run_and_the_inventory():
    pfs = [{"pf": PF, "num_vfs": 2}]
    # a reading from a fact cache (another run's) still gives the PFs' order: PF 0000:3b:00.0 is index 0
    assert sriov.their_guids("node02", {"sriov_pfs": pfs}, hca=_hca()) == _scheme("node02", 0, 2)
    assert sriov.their_guids("node02", {"sriov_pfs": pfs, "sriov_guid_host_id": 7}, hca=_hca()) == _scheme("x", 0, 2, host=7)
    # null settings are the role's defaults
    assert sriov.their_guids("node02", {"sriov_pfs": pfs, "sriov_guid_prefix": None}, hca=_hca()) == _scheme("node02", 0, 2)
    # no reading: the scheme cannot be planned; lists can
    assert sriov.their_guids("node02", {"sriov_pfs": pfs}) is None
    assert sriov.their_guids("node02", {"sriov_pfs": [{"pf": PF, "num_vfs": 2, "guids": LISTED}]}) == LISTED
    # a PF the reading does not have: refused by its own run when the reading is current; an older reading may be out of
    # date, so the inventory decides
    gone = [{"pf": "0000:5e:00.0", "num_vfs": 2}]
    assert sriov.their_guids("node02", {"sriov_pfs": gone}, hca=_hca("r1"), current=True) == []
    assert sriov.their_guids("node02", {"sriov_pfs": gone}, hca=_hca()) is None


def test_their_guids_do_not_take_this_runs_extra_vars_for_the_hosts_own():
    pfs = [{"pf": PF, "num_vfs": 2}]
    assert sriov.their_guids("node02", {"sriov_pfs": pfs, "sriov_guid_host_id": 7}, hca=_hca(),
                             from_run=["sriov_guid_host_id"]) is None
    listed = [{"pf": PF, "num_vfs": 2, "guids": LISTED}]
    assert sriov.their_guids("node02", {"sriov_pfs": listed}, hca=_hca(), from_run=["sriov_guid_prefix"]) == LISTED
    assert sriov.their_guids("node02", {"sriov_pfs": listed}, hca=_hca(), from_run=["sriov_pfs"]) is None


def test_fleet_plans_what_it_can_and_names_what_it_cannot():
    scheme = {"sriov_pfs": [{"pf": PF, "num_vfs": 2}]}
    others = {
        "node02": {"settings": scheme, "hca": _hca()},                      # fact cache: a reading of another run
        "node03": {"settings": {"sriov_pfs": [{"pf": PF, "num_vfs": 2, "guids": LISTED}]}},
        "node04": {"settings": scheme, "published": ["0x02fa000000000400"]},  # published (a fact cache)
        "node05": {"settings": scheme},                                     # nothing: its space, and unseen
        "node06": {"settings": scheme, "from_run": ["sriov_guid_host_id"]},
        "opensm01": {},                                                     # asks no VF
        "node07": {"settings": scheme},                                     # in the play, not read yet: its space, unseen
    }
    view = sriov.fleet(others, play=["node01", "node07"])
    assert view["planned"] == {"node02": _scheme("node02", 0, 2), "node03": LISTED, "opensm01": []}
    assert view["known"] == {"node04": ["0x02fa000000000400"]}
    assert view["hca"] == {"node02": _hca()}
    # node05 and node07: what their VFs carry now is not known (a GUID change is refused), but where their GUIDs fall is
    assert sorted(view["unseen"]) == ["node05", "node06", "node07"]
    assert view["unseen"]["node05"].startswith("outside this play, with neither a reading of its adapters nor sriov_vf_guids")
    assert "sriov_guid_host_id of this run's extra vars (-e) is not its own setting" in view["unseen"]["node06"]
    assert view["unseen"]["node07"] == "in this play, but its adapters were not read in this run before this step"
    assert sorted(view["space"]) == ["node02", "node03", "node04", "node05", "node07"]
    assert view["space"]["node05"] == {"listed": {}, "scheme": True, "prefix": 0x02FA, "host_id": sriov_utils.host_id("node05"),
                                       "source": "derived from the inventory name node05"}
    assert view["space"]["node03"]["listed"] == {LISTED[0]: "sriov_pfs[0].guids[0]", LISTED[1]: "sriov_pfs[0].guids[1]"}
    assert not view["space"]["node03"]["scheme"]
    # in the preflight, a host of the play is read by its own check; the role's step after the preflight sees it
    assert sorted(sriov.fleet(others, play=["node01", "node07"], preflight=True)["unseen"]) == ["node05", "node06"]


def test_published_and_planned_both_count_and_a_host_never_collides_with_itself():
    assert sriov.duplicate_guids({"a": ["0x1"], "b": ["0x2"]}, known={"b": ["0x1", "0x2"]}, host="a") == ["0x1 on a, b"]
    assert sriov.duplicate_guids({"b": ["0x2"]}, known={"b": ["0x2"]}) == []


def test_unseen_hosts_are_grouped_by_why_and_counted():
    unseen = dict(("n%03d" % i, "outside") for i in range(25))
    unseen["m1"] = "in this play"
    text = sriov.unseen_text(unseen)
    assert text.startswith("m1 (in this play); n000, n001") and "n019 and 5 more (outside)" in text


def test_a_guid_change_is_refused_while_hosts_cannot_be_seen_even_with_consent():
    changes = ["0000:3b:00.0: VFs 0 carry 0x02fb000000000000 (...); this run gives them 0x02fa000000000000 (...)"]
    unseen = {"node05": "outside this play, with no reading"}
    message = sriov.guid_change_message("node01", changes, unseen=unseen, allowed=True)
    assert message.startswith("node01: this run would change the GUIDs of existing VFs and rebind them: 0000:3b:00.0: VFs 0")
    assert "But the new GUIDs cannot be checked against the VF GUIDs of 1 host of the inventory that this run cannot see: " \
           "node05 (outside this play, with no reading)" in message
    assert "sriov_allow_guid_change does not waive that" in message and "run without --limit" in message
    assert "sriov_pfs[].guids" in message and "use_fact_cache" in message
    assert "Set sriov_allow_guid_change: true" not in message and message.endswith("Nothing was changed.")
    # without consent: both what to set and what to include
    message = sriov.guid_change_message("node01", changes, unseen=unseen)
    assert "Set sriov_allow_guid_change: true for this host" in message and "Even with it, the new GUIDs" in message
    assert message.endswith("Nothing was changed.")
    assert "cannot see" not in sriov.guid_change_message("node01", changes)


def test_a_collision_names_this_hosts_setting_and_no_consent_lifts_it():
    plan = sriov.plan(_hca(), [{"pf": PF, "num_vfs": 2, "guids": LISTED}, {"pf": "mlx5_1", "num_vfs": 1}], "node01", host_id=9)
    sources = sriov.guid_sources(plan, [{"pf": PF, "num_vfs": 2, "guids": LISTED}, {"pf": "mlx5_1", "num_vfs": 1}])
    assert sources[LISTED[1]] == "sriov_pfs[0].guids[1]"
    assert sources[_scheme("x", 1, 1, host=9)[0]] == "sriov_pfs[1] VF 0 (the scheme: sriov_guid_prefix, host id, PF index 1)"
    message = sriov.duplicate_message(["%s on node01, node02" % LISTED[1]], sources)
    assert "This host's: %s is sriov_pfs[0].guids[1]." % LISTED[1] in message
    assert "sriov_allow_guid_change does not allow this" in message and message.endswith("Nothing was changed.")
