# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

import pytest

from ansible.errors import AnsibleFilterError
from ansible_collections.fabric.infiniband.plugins.plugin_utils.sriov import duplicate_guids as sriov_duplicate_guids
from ansible_collections.fabric.infiniband.plugins.plugin_utils.sriov import plan as sriov_plan
from ansible_collections.fabric.infiniband.plugins.plugin_utils.sriov import (
    duplicate_message, firmware_status, guid_change_message, short_message, short_pfs)


def _pf(pci, model, rdma, netdev, link_layer="InfiniBand", total=None):
    return {"pci_address": pci, "card_address": pci.rsplit(".", 1)[0], "model": model, "is_vf": False,
            "rdma_device": rdma, "netdevs": [netdev], "sriov": None if total is None else {"total_vfs": total},
            "ports": [{"port": 1, "link_layer": link_layer, "netdev": netdev}]}


HCA = {"hcas": [
    _pf("0000:3b:00.1", "ConnectX-6", "mlx5_1", "ibp59s0f1"),
    _pf("0000:3b:00.0", "ConnectX-6", "mlx5_0", "ibp59s0f0"),
    _pf("0000:c1:00.0", "ConnectX-7", "mlx5_2", "ibp193s0", total=16),
    _pf("0000:01:00.0", "ConnectX-4 Lx", "mlx5_3", "enp1s0f0np0", link_layer="Ethernet", total=8),
    {"pci_address": "0000:c1:00.2", "card_address": "0000:c1:00", "model": "ConnectX-7 VF", "is_vf": True},
]}


def plan(pfs, **kwargs):
    kwargs.setdefault("host_name", "node01")
    kwargs.setdefault("host_id", 0x0A0B0C0D)
    return sriov_plan(HCA, pfs, **kwargs)


def test_scheme_guids_pf_index_in_pci_order_and_one_firmware_write_per_card():
    out = plan([{"pf": "mlx5_0", "num_vfs": 2}, {"pf": "3b:00.1", "num_vfs": 3, "link_state": "enable"}])
    assert [(p["pf"], p["pf_index"], p["num_vfs"], p["link_state"], p["ready_now"]) for p in out["pfs"]] == [
        ("0000:3b:00.0", 1, 2, "auto", False), ("0000:3b:00.1", 2, 3, "enable", False)]
    assert out["pfs"][0]["vfs"] == [{"index": 0, "guid": "0x02fa0a0b0c0d0100"}, {"index": 1, "guid": "0x02fa0a0b0c0d0101"}]
    assert out["guids"][-1] == "0x02fa0a0b0c0d0202"
    # NUM_OF_VFS is per card: the busiest PF decides
    assert [(c["device"], c["params"]) for c in out["cards"]] == [("0000:3b:00.0", {"SRIOV_EN": "True", "NUM_OF_VFS": 3})]
    assert out["boot"]["pfs"][1] == {"pf": "0000:3b:00.1", "num_vfs": 3, "link_state": "enable",
                                     "vfs": out["pfs"][1]["vfs"]}
    assert out["operator_pool"][0] == {"pci_address": "0000:3b:00.0",
                                       "guids": ["02:fa:0a:0b:0c:0d:01:00", "02:fa:0a:0b:0c:0d:01:01"]}


def test_firmware_that_allows_enough_is_left_alone_and_the_floor_raises_it():
    assert plan([{"pf": "0000:c1:00.0", "num_vfs": 4}])["cards"] == []
    assert plan([{"pf": "0000:c1:00.0", "num_vfs": 4}])["pfs"][0]["ready_now"]
    cards = plan([{"pf": "0000:c1:00.0", "num_vfs": 4}], firmware_num_vfs=32)["cards"]
    assert [c["params"]["NUM_OF_VFS"] for c in cards] == [32]
    # no VFs asked for: the firmware is not touched, whatever it runs
    assert plan([{"pf": "mlx5_0", "num_vfs": 0}])["cards"] == []


def test_explicit_guids_none_mode_and_ethernet():
    out = plan([{"pf": "0000:c1:00.0", "num_vfs": 1, "guids": ["02:00:00:00:00:00:00:07", "0x0200000000000009"]}], guid_mode="none")
    assert out["guids"] == ["0x0200000000000007"]
    assert plan([{"pf": "0000:c1:00.0", "num_vfs": 2}], guid_mode="none")["guids"] == []
    # an Ethernet PF gets VFs but no GUIDs from the scheme
    assert plan([{"pf": "0000:01:00.0", "num_vfs": 2}])["guids"] == []


def test_derived_host_id_is_stable():
    a = sriov_plan(HCA, [{"pf": "mlx5_2", "num_vfs": 1}], host_name="node01")["guids"]
    b = sriov_plan(HCA, [{"pf": "mlx5_2", "num_vfs": 1}], host_name="node01")["guids"]
    c = sriov_plan(HCA, [{"pf": "mlx5_2", "num_vfs": 1}], host_name="node02")["guids"]
    assert a == b != c


G1 = "0x0200000000000001"
G5 = "0x0200000000000005"


@pytest.mark.parametrize("pfs, kwargs, says", [
    ("x", {}, "sriov_pfs must be a list"),
    ([{"pf": "mlx5_0"}], {}, "sriov_pfs[0] needs pf"),
    ([{"pf": "mlx5_0", "num_vfs": 2, "vlan": 3}], {}, "unknown keys vlan"),
    ([{"pf": "mlx5_0", "num_vfs": 128}], {}, "sriov_pfs[0].num_vfs must be from 0 to 127, got 128"),
    ([{"pf": "mlx5_0", "num_vfs": -1}], {}, "must be from 0 to 127"),
    ([{"pf": "mlx5_0", "num_vfs": "four"}], {}, "must be a whole number"),
    ([{"pf": "mlx5_9", "num_vfs": 2}], {}, "sriov_pfs[0].pf mlx5_9 is not a PF of this host; its PFs: 0000:01:00.0"),
    ([{"pf": "0000:c1:00.2", "num_vfs": 2}], {}, "is not a PF of this host"),
    # one PCI grammar (module_utils/pci.py): a bad address is named as such, not as an unknown PF
    ([{"pf": "3b:00", "num_vfs": 2}], {}, "sriov_pfs[0].pf '3b:00' is not a PCI address; write it as 0000:3b:00.0 or 3b:00.0"),
    ([{"pf": "3b:00.8", "num_vfs": 2}], {}, "sriov_pfs[0].pf '3b:00.8' is not a PCI address"),
    # issue 22 class 8: an unquoted pf: 86:00.0 arrives as 5160.0
    ([{"pf": 5160.0, "num_vfs": 2}], {},
     'sriov_pfs[0].pf is the number 5160.0, not a PCI address: YAML reads an unquoted 86:00.0 as a base-60 number. Quote it: "86:00.0"'),
    ([{"pf": 2460.1, "num_vfs": 2}], {}, 'Quote it: "41:00.1"'),
    ([{"pf": "mlx5_0", "num_vfs": 2}, {"pf": "ibp59s0f0", "num_vfs": 2}], {}, "is the same PF as sriov_pfs[0]"),
    ([{"pf": "mlx5_0", "num_vfs": 2, "link_state": "up"}], {}, "sriov_pfs[0].link_state must be one of auto, enable"),
    ([{"pf": "mlx5_0", "num_vfs": 2, "guids": [G1]}], {}, "sriov_pfs[0].guids must list at least num_vfs (2)"),
    ([{"pf": "mlx5_0", "num_vfs": 1, "guids": ["0x0000000000000000"]}], {},
     "sriov_pfs[0].guids[0] '0x0000000000000000' is the zero GUID, which is not valid"),
    ([{"pf": "mlx5_0", "num_vfs": 2, "guids": [G5, G5]}], {}, "0x0200000000000005 are given to more than one VF"),
    ([{"pf": "mlx5_0", "num_vfs": 1, "guids": [G5]}, {"pf": "mlx5_1", "num_vfs": 1, "guids": [G5]}], {},
     "more than one VF"),
    ([{"pf": "mlx5_3", "num_vfs": 1, "guids": [G5]}], {}, "is not an InfiniBand port (Ethernet)"),
    # issue 22 class 8, YAML traps: what YAML 1.1 makes of unquoted GUIDs, and GUIDs with a digit lost or added
    ([{"pf": "mlx5_0", "num_vfs": 1, "guids": [28524360585417]}], {},
     "sriov_pfs[0].guids[0] is the number 28524360585417, not a GUID: YAML reads an unquoted 10:11:22:33:44:55:56:57 or "
     '0637053030250311 as a number, which no longer says how the GUID was written. Quote it: "10:11:22:33:44:55:56:57" or '
     '"0x0637053030250311"'),
    ([{"pf": "mlx5_0", "num_vfs": 1, "guids": [0x02FA000000000100]}], {},
     'sriov_pfs[0].guids[0] is the number 214483932253520128, not a GUID: YAML reads an unquoted 0x02fa000000000100 as a '
     'number, which no longer says how the GUID was written. Quote it: "0x02fa000000000100"'),
    ([{"pf": "mlx5_0", "num_vfs": 1, "guids": ["0x02fa00000000100"]}], {},
     "sriov_pfs[0].guids[0] '0x02fa00000000100' has 15 hex digits after 0x; a GUID has 16 (8 bytes)"),
    ([{"pf": "mlx5_0", "num_vfs": 1, "guids": ["0x02fa0000000001000"]}], {}, "has 17 hex digits after 0x"),
    ([{"pf": "mlx5_0", "num_vfs": 1, "guids": ["02:fa:00:00:00:01:00"]}], {},
     "sriov_pfs[0].guids[0] '02:fa:00:00:00:01:00' has 7 groups; a GUID has 8 bytes"),
    # every GUID listed is checked, also one beyond num_vfs
    ([{"pf": "mlx5_0", "num_vfs": 1, "guids": [G1, "0x5"]}], {}, "sriov_pfs[0].guids[1] '0x5' has 1 hex digits"),
    ([], {"guid_mode": "random"}, "sriov_guid_mode must be scheme or none"),
    ([], {"link_state": "on"}, "sriov_link_state must be one of"),
    ([], {"guid_prefix": "0x0cfa"}, "sriov_guid_prefix '0x0cfa': its first byte 0x0c is not locally administered"),
    ([], {"guid_prefix": "fa"}, "not a 2-byte prefix"),
    # an unquoted prefix is a number to YAML: 0x02fa is 762, 12:00 the base-60 720 (0x02d0, locally administered too)
    ([], {"guid_prefix": 762}, 'sriov_guid_prefix is the number 762, not a prefix: YAML reads an unquoted 0x02fa or 12:42 as a number'),
    ([], {"guid_prefix": 720}, 'Quote it: "0x02d0" or "12:00"'),
    ([], {"guid_prefix": "02fa"}, "sriov_guid_prefix '02fa' is not a 2-byte prefix; write it as 0x and 4 hex digits"),
    ([], {"host_id": 2 ** 32}, "sriov_guid_host_id must be from 0 to 4294967295"),
    ([], {"firmware_num_vfs": 200}, "sriov_firmware_num_vfs must be from 0 to 127"),
])
def test_bad_input(pfs, kwargs, says):
    with pytest.raises(AnsibleFilterError) as err:
        plan(pfs, **kwargs)
    assert says in str(err.value)


@pytest.mark.parametrize("pf", ["0000:3B:00.1", "3b:00.1", " 3b:00.1 ", "mlx5_1", "ibp59s0f1"])
def test_pf_by_any_form_of_its_address_or_name(pf):
    assert [p["pf"] for p in plan([{"pf": pf, "num_vfs": 1}])["pfs"]] == ["0000:3b:00.1"]


def test_pf_behind_vmd():
    hca = {"hcas": [_pf("10000:3b:00.0", "ConnectX-6", "mlx5_0", "ibp59s0f0")]}
    for pf in ("10000:3b:00.0", "10000:3B:00.0"):
        assert sriov_plan(hca, [{"pf": pf, "num_vfs": 1}], "node01", host_id=1)["pfs"][0]["pf"] == "10000:3b:00.0"
    with pytest.raises(AnsibleFilterError, match="3b:00.0 is not a PF of this host"):
        sriov_plan(hca, [{"pf": "3b:00.0", "num_vfs": 1}], "node01", host_id=1)


def test_not_hca_info():
    with pytest.raises(AnsibleFilterError, match="registered result of fabric.infiniband.hca_info"):
        sriov_plan({}, [], host_name="x")


def test_duplicates_across_hosts():
    assert sriov_duplicate_guids({"a": ["0x1", "0x2"], "b": ["0x2"], "c": None, "d": ["0x1"]}) == [
        "0x1 on a, d", "0x2 on a, b"]
    assert sriov_duplicate_guids({"a": ["0x1"], "b": ["0x2"]}) == []


def test_duplicates_against_the_inventory_and_physical_functions():
    """Hosts outside the play (--limit, a job slice) count through their published GUIDs, PF GUIDs of any host too."""
    hca = {"c": {"hcas": [
        {"is_vf": False, "node_guid": "0xaa", "ports": [{"port_guid": "0xAB"}]},
        {"is_vf": True, "node_guid": "0x9", "ports": [{"port_guid": "0x9"}]},  # a VF of c: its GUID is c's own VF GUID
    ]}}
    assert sriov_duplicate_guids({"a": ["0x1", "0xab"]}, known={"b": ["0x1"], "c": ["0x9"]}, hca=hca) == [
        "0x1 on a, b", "0xab on a, c PF"]
    # what a host published and its plan are the same host: never a duplicate of itself
    assert sriov_duplicate_guids({"b": ["0x2"]}, known={"b": ["0x1"]}) == []
    # a host's own VF GUID equal to its own PF GUID
    assert sriov_duplicate_guids({"c": ["0xaa"]}, hca=hca) == ["0xaa on c, c PF"]
    assert sriov_duplicate_guids({"c": ["0x9"]}, hca=hca) == []


def _with_vfs(num_vfs, total=16):
    hca = {"hcas": [dict(entry) for entry in HCA["hcas"]]}
    hca["hcas"][2]["sriov"] = {"total_vfs": total, "num_vfs": num_vfs}
    return hca


@pytest.mark.parametrize("now, want", [(4, 4), (4, 0), (0, 8)])
def test_vf_count_that_needs_no_recreate_is_planned(now, want):
    out = sriov_plan(_with_vfs(now), [{"pf": "mlx5_2", "num_vfs": want}], host_name="node01", allow_vf_recreate=False)
    assert [(p["pf"], p["num_vfs"]) for p in out["pfs"]] == [("0000:c1:00.0", want)]


@pytest.mark.parametrize("want, total", [(8, 16), (2, 16), (20, 16)])
def test_vf_count_change_through_zero_is_refused_without_consent(want, total):
    # also when the firmware must grow first (20 > 16): the boot-time unit would make the old count after the reboot
    with pytest.raises(AnsibleFilterError) as err:
        sriov_plan(_with_vfs(4, total), [{"pf": "mlx5_2", "num_vfs": want}], host_name="node01", allow_vf_recreate=False)
    assert ("sriov_pfs[0].num_vfs is %d, but PF 0000:c1:00.0 (mlx5_2) has 4 VFs now" % want) in str(err.value)
    assert "Accepted: num_vfs 4 (as now) or 0 (remove them); any other count with sriov_allow_vf_recreate: true" in str(err.value)
    # with consent (the role passes sriov_allow_vf_recreate; "yes" as the inventory may spell it) it is planned
    for consent in (True, "yes"):
        out = sriov_plan(_with_vfs(4, total), [{"pf": "mlx5_2", "num_vfs": want}], host_name="node01", allow_vf_recreate=consent)
        assert out["pfs"][0]["num_vfs"] == want


def test_duplicates_of_one_host_only_name_that_host():
    both = {"a": ["0x1"], "b": ["0x2"]}
    known = {"c": ["0x2"], "d": ["0x1"]}
    assert sriov_duplicate_guids(both, known=known, host="a") == ["0x1 on a, d"]
    assert sriov_duplicate_guids(both, known=known, host="b") == ["0x2 on b, c"]
    assert sriov_duplicate_guids({"a": ["0x9"]}, known=known, host="a") == []
    hca = {"a": {"hcas": [{"is_vf": False, "node_guid": "0x9", "ports": []}]}}
    assert sriov_duplicate_guids({"a": ["0x9"]}, hca=hca, host="a") == ["0x9 on a, a PF"]


def test_firmware_status_names_the_cards_that_wait_and_a_power_cycle():
    card = {"device": "0000:3b:00.0", "card": "0000:3b:00", "model": "ConnectX-6", "params": {"SRIOV_EN": "True", "NUM_OF_VFS": 4}}
    other = dict(card, device="0000:c1:00.0", card="0000:c1:00")
    status = firmware_status([dict(item=card, reboot_required=True, power_cycle_required=True),
                              dict(item=other, reboot_required=False)])
    assert status["waiting"] == ["0000:3b:00.0"] and status["cards"] == ["0000:3b:00"] and status["power_cycle"]
    assert "0000:3b:00.0 is set for the next boot" in status["reason"]
    assert firmware_status([]) == dict(firmware_status([]), waiting=[], cards=[], power_cycle=False)


def test_short_pfs_leave_out_the_cards_whose_firmware_change_waits():
    out = plan([{"pf": "mlx5_0", "num_vfs": 2}, {"pf": "mlx5_2", "num_vfs": 20}], allow_vf_recreate=True)
    assert [pf["pf"] for pf in short_pfs(out, [])] == ["0000:3b:00.0", "0000:c1:00.0"]
    assert [pf["pf"] for pf in short_pfs(out, ["0000:3b:00"])] == ["0000:c1:00.0"]
    message = short_message(short_pfs(out, ["0000:3b:00"]))
    assert "0000:c1:00.0 wants 20, sriov_totalvfs is 16; set sriov_firmware: true" in message


def test_refusals_name_the_variable():
    assert "sriov_guid_host_id" in duplicate_message(["0x1 on a, b"]) and "Nothing was changed" in duplicate_message(["x"])
    message = guid_change_message("node01", ["0000:3b:00.0: VFs 0 carry ..."])
    assert message.startswith("node01: this run would change the GUIDs") and "sriov_allow_guid_change: true" in message
