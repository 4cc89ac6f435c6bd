# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""verify_checks: a converged node passes, a node that is not converged fails with readable sentences,
checks a host's roles do not ask are "not asked", and the topology maps onto the hosts."""

from __future__ import annotations

import copy

from ansible_collections.fabric.infiniband.plugins.filter.verify_checks import verify_checks
from ansible_collections.fabric.infiniband.plugins.module_utils import ibnetdiscover
from ansible_collections.fabric.infiniband.plugins.module_utils import sriov
from ansible_collections.fabric.infiniband.plugins.plugin_utils import firmware
from ansible_collections.fabric.infiniband.tests.unit.conftest import read_fixture


def _port(guid, lid, layer="InfiniBand", state="ACTIVE", phys="LinkUp", sm_lid=1, pkeys=("0xffff",)):
    return {"port": 1, "link_layer": layer, "state": state, "physical_state": phys, "lid": lid, "sm_lid": sm_lid,
            "port_guid": guid, "pkeys": list(pkeys), "netdev": None}


# the lab's cards after a converge: running firmware version and PSID (sysfs fw_ver and board_id)
FIRMWARE = {"ConnectX-6": ("20.40.1000", "MT_0000000223"), "ConnectX-7": ("28.40.1000", "MT_0000000834"),
            "ConnectX-5": ("16.35.3006", "MT_0000000008"), "ConnectX-4 Lx": ("14.32.1010", "MT_2420110034")}
# what the lab inventory asks of them
LAB_FIRMWARE_VERSIONS = [{"psid": "MT_0000000223", "version": "20.40.1000"},
                         {"model": "ConnectX-7", "version": "28.39.1002", "at_least": True},
                         {"model": "ConnectX-5", "version": "16.35.3006"},
                         # never used: the PSID rule above names node01's ConnectX-6 first
                         {"model": "ConnectX-6", "version": "20.31.1014"}]


def _pf(bdf, dev, port, model="ConnectX-6", sriov_files=None):
    version, psid = FIRMWARE[model]
    return {"pci_address": bdf, "card_address": bdf[:-2], "rdma_device": dev, "is_vf": False, "model": model,
            "node_guid": port["port_guid"], "sriov": sriov_files, "ports": [port], "netdevs": [],
            "firmware_version": version, "psid": psid}


def _vf(bdf, guid):
    return {"pci_address": bdf, "card_address": bdf[:-2], "rdma_device": None, "is_vf": True, "model": "ConnectX-6 VF",
            "node_guid": guid, "sriov": None, "ports": [], "netdevs": []}


def _scheme(host, count, pf_index=0):
    return [sriov.format_guid(sriov.scheme_guid(0x02FA, sriov.host_id(host), pf_index, vf)) for vf in range(count)]


def _lab_nodes():
    """The lab's three nodes, converged: node01 two IB functions, node02 one with 2 VFs, node03 IB + Ethernet."""
    vfs = _scheme("node02", 2)
    node01 = {"hcas": [_pf("0000:3b:00.0", "mlx5_0", _port("0x0c42a10300aa0010", 2)),
                       _pf("0000:3b:00.1", "mlx5_1", _port("0x0c42a10300aa0011", 4))],
              "rdma_system": {"netns_mode": "exclusive"}}
    node02 = {"hcas": [_pf("0000:c1:00.0", "mlx5_0", _port("0xc470bd0300cf4960", 5, pkeys=("0xffff", "0x8001")), model="ConnectX-7",
                           sriov_files={"total_vfs": 16, "num_vfs": 2, "vfs": ["0000:c1:00.1", "0000:c1:00.2"]}),
                       _vf("0000:c1:00.1", vfs[0]), _vf("0000:c1:00.2", vfs[1])],
              "rdma_system": {"netns_mode": "exclusive"}}
    node03 = {"hcas": [_pf("0000:86:00.0", "mlx5_0", _port("0x98039b0300c0ff10", 3), model="ConnectX-5"),
                       _pf("0000:86:00.1", "mlx5_1", _port("0x9a039bfffec0ff11", 0, layer="Ethernet", sm_lid=0, pkeys=()),
                           model="ConnectX-5")],
              "rdma_system": {"netns_mode": "exclusive"}}
    expect = {"link_type_default": "ib", "link_type_adapters": [], "rdma_netns_mode": "exclusive", "sriov_pfs": []}
    empty = {"entries": {}}
    return {
        "node01": {"hca": node01, "pending": empty, "expect": dict(expect)},
        "node02": {"hca": node02, "pending": empty,
                   "expect": dict(expect, sriov_pfs=[{"pf": "0000:c1:00.0", "num_vfs": 2}])},
        "node03": {"hca": node03, "pending": empty,
                   "expect": dict(expect, link_type_adapters=[{"model": "ConnectX-5", "ports": ["ib", "eth"]}])},
    }


PARTITIONS = [{"name": "storage", "pkey": "0x0001", "members": ["node02"]}]


def _topology():
    return ibnetdiscover.parse(read_fixture("ibnetdiscover/lab_ibsim_diags44.txt"))


def _by(report, host):
    return [h for h in report["hosts"] if h["host"] == host][0]


def _status(report, host, category):
    return sorted({c["status"] for c in _by(report, host)["checks"] if c["category"] == category})


def test_converged_lab_passes_and_maps_the_topology():
    report = verify_checks(_lab_nodes(), topology=_topology(), topology_host="node01", partitions=PARTITIONS,
                           groups={"all": ["node01", "node02", "node03"]})
    assert report["failures"] == []
    assert report["ok"] is True
    assert report["summary"] == "all 3 nodes pass"
    assert _status(report, "node01", "vfs") == ["not asked"]
    assert _status(report, "node02", "vf_guids") == ["ok"]
    assert _status(report, "node03", "link_layer") == ["ok"]
    hosts = {(h["host"], h["rdma_device"]) for h in report["fabric"]["hcas"]}
    assert hosts == {("node01", "mlx5_0"), ("node01", "mlx5_1"), ("node02", "mlx5_0"), ("node03", "mlx5_0")}
    assert {h["status"] for h in report["fabric"]["hcas"]} == {"ok"}
    assert report["fabric"]["host"] == "node01" and report["fabric"]["error"] is None
    # the JSON shape: every check has name, expected, actual, ok
    for entry in report["hosts"]:
        for check in entry["checks"]:
            assert set(check) >= {"name", "expected", "actual", "ok", "status", "category"}


def test_not_converged_node_fails_with_sentences():
    nodes = _lab_nodes()
    node = nodes["node01"]["hca"]
    node["hcas"][0]["ports"][0].update(link_layer="Ethernet")
    node["hcas"][1]["ports"][0].update(state="INIT", sm_lid=0, lid=65535)
    node["rdma_system"]["netns_mode"] = "shared"
    # a boot has tried the entry and did not apply it: nothing waits, everything fails
    nodes["node01"]["pending"] = {"entries": {"link_type": {"action": "reboot", "booted_since": True}}}
    report = verify_checks(nodes, topology=_topology(), topology_host="node01", partitions=PARTITIONS,
                           groups={"all": sorted(nodes)})
    assert report["ok"] is False and report["waiting"] == []
    assert report["summary"] == "1 of 3 nodes fail 5 checks: node01"
    assert report["failures"] == [
        "node01: link layer mlx5_0/1: expected InfiniBand, found Ethernet",
        "node01: port state mlx5_1/1: expected ACTIVE/LinkUp, found INIT/LinkUp",
        "node01: SM of mlx5_1/1: expected SM LID not 0, found SM LID 0",
        "node01: RDMA netns mode: expected exclusive, found shared",
        "node01: pending actions: expected nothing pending, found link_type (reboot, not applied by the boot since)",
    ]
    assert _by(report, "node01")["status"] == "fail"
    # mlx5_0 runs Ethernet on the host but is still cabled: the picture names it by its node GUID
    assert sorted((h["host"], h["rdma_device"]) for h in report["fabric"]["hcas"] if h["host"] == "node01") == [
        ("node01", "mlx5_0"), ("node01", "mlx5_1")]
    assert {h["status"] for h in report["fabric"]["hcas"] if h["host"] == "node01"} == {"fail"}
    assert {h["status"] for h in report["fabric"]["hcas"] if h["host"] == "node02"} == {"ok"}


def test_pkeys_of_member_partitions_and_default():
    nodes = _lab_nodes()
    nodes["node02"]["hca"]["hcas"][0]["ports"][0]["pkeys"] = ["0xffff"]
    report = verify_checks(nodes, partitions=PARTITIONS + [{"name": "all", "pkey": 2, "members": ["ALL"]}],
                           groups={"all": sorted(nodes)})
    failures = [f for f in report["failures"] if "P_Keys" in f]
    assert failures == ["node01: P_Keys of mlx5_0/1: expected [0x0002, 0x7fff], found [0xffff]",
                        "node01: P_Keys of mlx5_1/1: expected [0x0002, 0x7fff], found [0xffff]",
                        "node02: P_Keys of mlx5_0/1: expected [0x0001, 0x0002, 0x7fff], found [0xffff]",
                        "node03: P_Keys of mlx5_0/1: expected [0x0002, 0x7fff], found [0xffff]"]


def test_vf_guids_wrong_missing_and_duplicated():
    nodes = _lab_nodes()
    vfs = nodes["node02"]["hca"]["hcas"]
    vfs[2]["node_guid"] = "0x0000000000000000"
    # node01 gets a VF that clashes with node02's first one
    nodes["node01"]["hca"]["hcas"][0]["sriov"] = {"total_vfs": 8, "num_vfs": 1, "vfs": ["0000:3b:00.2"]}
    nodes["node01"]["hca"]["hcas"].append(_vf("0000:3b:00.2", vfs[1]["node_guid"]))
    nodes["node01"]["expect"]["sriov_pfs"] = [{"pf": "mlx5_0", "num_vfs": 1, "guids": [vfs[1]["node_guid"]]}]
    report = verify_checks(nodes)
    guids = [f for f in report["failures"] if "GUID" in f]
    assert len(guids) == 2
    assert guids[0].startswith("node01: VF GUIDs of mlx5_0: expected [%s], found [%s]; used more than once over the fleet: %s (node01 VF 0"
                               % (vfs[1]["node_guid"], vfs[1]["node_guid"], vfs[1]["node_guid"]))
    assert guids[1] == ("node02: VF GUIDs of mlx5_0: expected [%s], found [%s, 0x0000000000000000]; used more than once over "
                        "the fleet: %s (node01 VF 0 of mlx5_0, node02 VF 0 of mlx5_0)") % (
        ", ".join(_scheme("node02", 2)), _scheme("node02", 2)[0], _scheme("node02", 2)[0])


def test_port_missing_from_the_fabric():
    topology = _topology()
    topology["hcas"] = [h for h in topology["hcas"] if not h["description"].startswith("node03")]
    report = verify_checks(_lab_nodes(), topology=topology, topology_host="node01")
    assert report["failures"] == ["node03: mlx5_0/1 in the fabric: expected 0x98039b0300c0ff10, found not seen"]


def test_vf_count_short_and_sriov_off():
    nodes = _lab_nodes()
    nodes["node02"]["hca"]["hcas"][0]["sriov"] = None
    report = verify_checks(nodes)
    assert "node02: VFs of mlx5_0: expected 2, found SR-IOV off" in report["failures"]
    assert "node02: VF GUIDs of mlx5_0: expected [%s], found no VF" % ", ".join(_scheme("node02", 2)) in report["failures"]


def test_sm_must_be_an_opensm_host_of_the_play():
    nodes = _lab_nodes()
    report = verify_checks(nodes, topology=_topology(), sm_hosts=["node03"])
    # the lab's SM is the switch (LID 1), not node03 (LID 3)
    assert "node01: SM of mlx5_0/1: expected SM LID of node03 (3), found SM LID 1" in report["failures"]
    for entry in nodes.values():
        for hca in entry["hca"]["hcas"]:
            for port in hca["ports"]:
                if port["link_layer"] == "InfiniBand":
                    port["sm_lid"] = 3
    assert verify_checks(nodes, topology=_topology(), sm_hosts=["node03"])["ok"] is True


def test_unreachable_host_and_failed_topology():
    nodes = _lab_nodes()
    nodes["node03"] = {}
    report = verify_checks(nodes, topology={"failed": True, "msg": "ibnetdiscover could not discover the fabric"}, topology_host="node01")
    assert _by(report, "node03")["ok"] is False
    assert report["failures"] == ["node03: no data from the node: unreachable, or its discovery failed"]
    assert _status(report, "node03", "pkeys") == ["fail"]
    assert report["fabric"]["error"] == "ibnetdiscover could not discover the fabric"
    assert report["fabric"]["hcas"] == []
    assert _status(report, "node01", "fabric") == ["not asked"]


def test_bad_inventory_is_a_failing_check_not_a_crash():
    nodes = _lab_nodes()
    nodes["node01"]["expect"]["link_type_adapters"] = [{"pci_address": "0000:99:00.0", "ports": ["ib"]}]
    nodes["node02"]["expect"]["sriov_pfs"] = [{"pf": "0000:99:00.0", "num_vfs": 2}]
    report = verify_checks(copy.deepcopy(nodes), partitions=[{"name": "x", "pkey": "0x9999"}])
    text = "\n".join(report["failures"])
    assert "node01: link_type plan: expected a valid link_type_adapters" in text
    assert "node02: sriov plan: expected a valid sriov_pfs" in text
    assert "opensm_partitions: expected valid partitions" in text


def test_an_ethernet_only_card_is_not_expected_on_infiniband():
    """node02 of the lab also has a ConnectX-4 Lx, whose ports are Ethernet only: no link layer is asked of it."""
    nodes = _lab_nodes()
    lx = [_pf("0000:5e:00.%d" % f, "mlx5_%d" % (f + 1), _port("0x1c34da0300aa00%02x" % f, 0, layer="Ethernet", sm_lid=0, pkeys=()),
              model="ConnectX-4 Lx") for f in (0, 1)]
    nodes["node02"]["hca"]["hcas"].extend(lx)
    report = verify_checks(nodes, topology=_topology(), topology_host="node01", partitions=PARTITIONS,
                           groups={"all": ["node01", "node02", "node03"]})
    layers = [c for c in _by(report, "node02")["checks"] if c["category"] == "link_layer"]
    assert [c["status"] for c in layers] == ["ok"]
    assert not any("5e:00" in c["name"] for c in layers)


def _waiting_nodes():
    """node01 runs port 1 as Ethernet until the reboot that link_type recorded; node02 has no VFs until the boot that
    sriov recorded, and its netns mode is wrong (which no boot changes)."""
    nodes = _lab_nodes()
    nodes["node01"]["hca"]["hcas"][0]["ports"][0].update(link_layer="Ethernet", state="ACTIVE", sm_lid=0, lid=0, pkeys=[])
    nodes["node01"]["pending"] = {"entries": {"link_type": {
        "action": "reboot", "reason": "LINK_TYPE_P1 of 0000:3b:00.0 is IB at the next boot", "booted_since": False}}}
    nodes["node02"]["hca"]["hcas"][0]["sriov"] = {"total_vfs": 0, "num_vfs": 0, "vfs": []}
    del nodes["node02"]["hca"]["hcas"][1:]
    nodes["node02"]["hca"]["rdma_system"]["netns_mode"] = "shared"
    nodes["node02"]["pending"] = {"entries": {"sriov": {
        "action": "power_cycle", "reason": "NUM_OF_VFS of 0000:c1:00.0 is 2 at the next boot", "booted_since": False}}}
    return nodes


def test_a_node_that_waits_for_its_reboot_is_waiting_not_failing():
    report = verify_checks(_waiting_nodes(), topology=_topology(), topology_host="node01", partitions=PARTITIONS,
                           groups={"all": ["node01", "node02", "node03"]})
    node01 = _by(report, "node01")
    assert (node01["status"], node01["ok"]) == ("waiting", False)
    # port 1 of the first function waits, the second function passes
    assert _status(report, "node01", "link_layer") == ["ok", "waiting"]
    assert _status(report, "node01", "pending") == ["waiting"]
    # the second function passes: only the checks that fail wait
    assert _status(report, "node01", "port_state") == ["ok"]
    assert _status(report, "node01", "netns") == ["ok"]
    waiting = [c for c in node01["checks"] if c["status"] == "waiting"]
    assert {c["waits_for"][0] for c in waiting} == {"link_type"} and all(c["ok"] is False for c in waiting)
    # node02: the VF checks wait for sriov's power cycle; the netns mode fails (no boot changes it)
    node02 = _by(report, "node02")
    assert node02["status"] == "fail"
    assert _status(report, "node02", "vfs") == ["waiting"] and _status(report, "node02", "vf_guids") == ["waiting"]
    assert _status(report, "node02", "netns") == ["fail"]
    assert report["failures"] == ["node02: RDMA netns mode: expected exclusive, found shared"]
    assert report["waiting"] == [
        "node01: waits for a reboot for link_type (LINK_TYPE_P1 of 0000:3b:00.0 is IB at the next boot)",
        "node02: waits for a power cycle for sriov (NUM_OF_VFS of 0000:c1:00.0 is 2 at the next boot)"]
    assert report["ok"] is False
    # a node with a failing check counts as failing; what it waits for is still listed above
    assert report["summary"] == "1 of 3 nodes fail 1 checks: node02; 1 of 3 nodes wait for a reboot: node01"
    # the picture: node01's HCAs are waiting, node02's fail, node03's pass
    by_host = {}
    for hca in report["fabric"]["hcas"]:
        by_host.setdefault(hca["host"], set()).add(hca["status"])
    assert by_host == {"node01": {"waiting"}, "node02": {"fail"}, "node03": {"ok"}}


def test_only_waiting_nodes_make_no_failure():
    nodes = _waiting_nodes()
    nodes["node02"]["hca"]["rdma_system"]["netns_mode"] = "exclusive"
    report = verify_checks(nodes, topology=_topology(), topology_host="node01", partitions=PARTITIONS,
                           groups={"all": ["node01", "node02", "node03"]})
    assert report["failures"] == [] and report["ok"] is False
    assert [h["status"] for h in report["hosts"]] == ["waiting", "waiting", "ok"]
    assert report["summary"] == "2 of 3 nodes wait for a reboot: node01, node02"


def test_a_tried_entry_fails_and_nothing_waits_for_it():
    """The boot-loop guard: an entry a boot has already tried is no reason to wait."""
    nodes = _waiting_nodes()
    nodes["node01"]["pending"]["entries"]["link_type"]["booted_since"] = True
    report = verify_checks(nodes, topology=_topology(), topology_host="node01")
    assert _by(report, "node01")["status"] == "fail"
    assert _status(report, "node01", "link_layer") == ["fail", "ok"] and _status(report, "node01", "pending") == ["fail"]
    assert not report["waiting"][0].startswith("node01")


def test_a_failure_the_waiting_role_does_not_change_still_fails():
    nodes = _waiting_nodes()
    # sriov waits for a boot; a wrong link layer on node02 is not sriov's
    nodes["node02"]["hca"]["hcas"][0]["ports"][0]["link_layer"] = "Ethernet"
    report = verify_checks(nodes)
    assert _status(report, "node02", "link_layer") == ["fail"]
    # an entry of a role that is not known (a driver update) may change everything
    nodes["node02"]["pending"]["entries"] = {"rdma_stack": {"action": "reboot", "reason": "driver", "booted_since": False}}
    nodes["node02"]["hca"]["rdma_system"]["netns_mode"] = "exclusive"
    report = verify_checks(nodes)
    assert _status(report, "node02", "link_layer") == ["waiting"] and _by(report, "node02")["status"] == "waiting"
    assert _status(report, "node02", "netns") == ["ok"]
    # gpudirect's reboot (IOMMU) changes none of the checks
    nodes["node02"]["pending"]["entries"] = {"gpudirect": {"action": "reboot", "reason": "iommu", "booted_since": False}}
    report = verify_checks(nodes)
    assert _status(report, "node02", "link_layer") == ["fail"] and _status(report, "node02", "pending") == ["waiting"]


def _firmware_nodes(rules=None):
    nodes = _lab_nodes()
    for node in nodes.values():
        node["expect"]["firmware_versions"] = copy.deepcopy(LAB_FIRMWARE_VERSIONS if rules is None else rules)
    return nodes


def _firmware_checks(report, host):
    return [c for c in _by(report, host)["checks"] if c["category"] == "firmware"]


def test_firmware_the_lab_asks_passes_with_every_version_in_the_json():
    report = verify_checks(_firmware_nodes(), topology=_topology(), topology_host="node01", partitions=PARTITIONS,
                           groups={"all": ["node01", "node02", "node03"]})
    assert report["failures"] == [] and report["summary"] == "all 3 nodes pass"
    # one check per RDMA device of a physical function: node01's two functions, node02's PF (not its VFs), node03's two
    assert [(c["name"], c["expected"], c["actual"], c["status"]) for c in _firmware_checks(report, "node01")] == [
        ("firmware of mlx5_0 (0000:3b:00.0, ConnectX-6, PSID MT_0000000223)", "20.40.1000 (firmware_versions[0])", "20.40.1000", "ok"),
        ("firmware of mlx5_1 (0000:3b:00.1, ConnectX-6, PSID MT_0000000223)", "20.40.1000 (firmware_versions[0])", "20.40.1000", "ok")]
    assert [(c["expected"], c["actual"]) for c in _firmware_checks(report, "node02")] == [
        ("at least 28.39.1002 (firmware_versions[1])", "28.40.1000")]
    assert [c["expected"] for c in _firmware_checks(report, "node03")] == ["16.35.3006 (firmware_versions[2])"] * 2
    rows = _by(report, "node02")["firmware"]
    assert rows == [{"device": "mlx5_0", "pci_address": "0000:c1:00.0", "model": "ConnectX-7", "version": "28.40.1000",
                     "psid": "MT_0000000834", "rule": 1, "wanted": "28.39.1002", "at_least": True, "ok": True, "status": "ok"}]


def test_firmware_another_version_fails_naming_device_rule_and_pending():
    nodes = _firmware_nodes()
    for entry in nodes["node01"]["hca"]["hcas"]:
        entry["firmware_version"] = "20.39.1002"  # the lab card's version before its burn
    report = verify_checks(nodes)
    assert report["ok"] is False and report["summary"] == "1 of 3 nodes fail 2 checks: node01"
    assert report["failures"] == [
        "node01: firmware of mlx5_%d (0000:3b:00.%d, ConnectX-6, PSID MT_0000000223): expected 20.40.1000 (firmware_versions[0]), "
        "found 20.39.1002; the firmware role burns the asked image from firmware_images; a burnt image that waits for its "
        "activation shows in the pending column and makes this check wait" % (fn, fn) for fn in (0, 1)]
    assert [row["status"] for row in _by(report, "node01")["firmware"]] == ["fail", "fail"]
    assert _status(report, "node02", "firmware") == ["ok"] and _status(report, "node01", "link_layer") == ["ok"]
    # exact unless at_least: a newer version than asked fails too
    for entry in nodes["node01"]["hca"]["hcas"]:
        entry["firmware_version"] = "20.41.1000"
    assert _status(verify_checks(nodes), "node01", "firmware") == ["fail"]


def test_firmware_at_least_takes_a_newer_version_not_an_older_one():
    nodes = _firmware_nodes()
    node02 = nodes["node02"]["hca"]["hcas"][0]
    for version, status in (("28.39.1002", "ok"), ("28.40.1000", "ok"), ("29.0.1", "ok"), ("28.39.1001", "fail"),
                            ("28.38.9999", "fail"), (None, "fail")):
        node02["firmware_version"] = version
        report = verify_checks(copy.deepcopy(nodes))
        assert _status(report, "node02", "firmware") == [status], version
    assert report["failures"][0].startswith(
        "node02: firmware of mlx5_0 (0000:c1:00.0, ConnectX-7, PSID MT_0000000834): expected at least 28.39.1002 "
        "(firmware_versions[1]), found no version read; ")


def test_no_firmware_rules_no_check_but_every_version():
    for rules in (None, []):
        nodes = _lab_nodes()
        if rules is not None:
            for node in nodes.values():
                node["expect"]["firmware_versions"] = rules
        report = verify_checks(nodes, topology=_topology(), topology_host="node01", partitions=PARTITIONS,
                               groups={"all": ["node01", "node02", "node03"]})
        assert report["ok"] is True and report["failures"] == []
        for host in nodes:
            assert [(c["name"], c["status"]) for c in _firmware_checks(report, host)] == [("no firmware_versions", "not asked")]
        assert [(r["device"], r["version"], r["psid"], r["rule"], r["status"]) for r in _by(report, "node03")["firmware"]] == [
            ("mlx5_0", "16.35.3006", "MT_0000000008", None, "not asked"), ("mlx5_1", "16.35.3006", "MT_0000000008", None, "not asked")]


def test_firmware_a_card_no_rule_names_has_no_check():
    nodes = _firmware_nodes([{"model": "ConnectX-7", "version": "28.40.1000"}])
    report = verify_checks(nodes)
    assert report["ok"] is True
    assert [c["name"] for c in _firmware_checks(report, "node01")] == ["no card that a rule of firmware_versions names"]
    assert _status(report, "node02", "firmware") == ["ok"]
    assert [(r["device"], r["version"], r["wanted"], r["status"]) for r in _by(report, "node01")["firmware"]] == [
        ("mlx5_0", "20.40.1000", None, "not asked"), ("mlx5_1", "20.40.1000", None, "not asked")]


def test_invalid_firmware_rules_fail_naming_firmware_versions():
    nodes = _firmware_nodes([{"version": "20.40.1000"}, {"psid": "MT_0000000223", "version": "twenty"}])
    report = verify_checks(nodes)
    assert report["ok"] is False
    assert [f for f in report["failures"] if f.startswith("node01:")] == [
        "node01: firmware_versions: expected valid firmware_versions, found firmware_versions[0] needs exactly one of psid or "
        "model; %s" % firmware.rule_problems([{"psid": "MT_0000000223", "version": "twenty"}])[0].replace("[0]", "[1]")]
    assert "firmware_versions[1].version" in report["failures"][0]
    assert len(report["failures"]) == 3  # one per host, nothing more
    # the table still has the versions, named by no rule
    assert [(r["version"], r["rule"]) for r in _by(report, "node01")["firmware"]] == [("20.40.1000", None), ("20.40.1000", None)]


def test_firmware_waits_for_the_firmware_roles_activation_only():
    nodes = _firmware_nodes()
    nodes["node01"]["hca"]["hcas"][0]["firmware_version"] = "20.39.1002"
    nodes["node01"]["pending"] = {"entries": {"firmware": {
        "action": "fw_reset", "reason": "0000:3b:00 (ConnectX-6) has firmware 20.40.1000 on its flash and runs 20.39.1002",
        "booted_since": False}}}
    report = verify_checks(copy.deepcopy(nodes))
    assert report["failures"] == [] and _by(report, "node01")["status"] == "waiting"
    assert _status(report, "node01", "firmware") == ["ok", "waiting"]
    assert [r["status"] for r in _by(report, "node01")["firmware"]] == ["waiting", "ok"]
    assert report["waiting"] == ["node01: waits for a firmware reset for firmware (0000:3b:00 (ConnectX-6) has firmware 20.40.1000 "
                                 "on its flash and runs 20.39.1002)"]
    # the firmware role's activation changes only the firmware: a wrong netns mode still fails
    nodes["node01"]["hca"]["rdma_system"]["netns_mode"] = "shared"
    assert _status(verify_checks(copy.deepcopy(nodes)), "node01", "netns") == ["fail"]
    # another role's boot does not bring the firmware
    nodes["node01"]["pending"]["entries"] = {"link_type": {"action": "reboot", "reason": "link type", "booted_since": False}}
    assert _status(verify_checks(copy.deepcopy(nodes)), "node01", "firmware") == ["fail", "ok"]
    # a boot that tried the entry and left the old version: it fails
    nodes["node01"]["pending"]["entries"] = {"firmware": {"action": "fw_reset", "reason": "x", "booted_since": True}}
    assert _status(verify_checks(nodes), "node01", "firmware") == ["fail", "ok"]
