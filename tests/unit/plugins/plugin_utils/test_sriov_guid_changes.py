# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

from ansible_collections.fabric.infiniband.plugins.plugin_utils.sriov import guid_changes as sriov_guid_changes
from ansible_collections.fabric.infiniband.plugins.plugin_utils.sriov import plan as sriov_plan
from ansible_collections.fabric.infiniband.plugins.module_utils import sriov

PF = "0000:3b:00.0"


def _hca(vf_guids):
    """A ConnectX-6 PF with one VF per GUID given (None: no VF RDMA device, so no GUID to read)."""
    vfs = ["0000:3b:00.%d" % (2 + i) for i in range(len(vf_guids))]
    hcas = [{"pci_address": PF, "card_address": "0000:3b:00", "rdma_device": "mlx5_0", "model": "ConnectX-6", "is_vf": False,
             "node_guid": "0x0c42a10300aa0010", "netdevs": ["ibp59s0f0"],
             "sriov": {"total_vfs": 8, "num_vfs": len(vfs), "vfs": vfs},
             "ports": [{"port": 1, "link_layer": "InfiniBand", "netdev": "ibp59s0f0", "port_guid": "0x0c42a10300aa0010"}]}]
    for address, guid in zip(vfs, vf_guids):
        hcas.append({"pci_address": address, "card_address": "0000:3b:00", "is_vf": True, "physfn": PF, "model": "ConnectX-6 VF",
                     "node_guid": guid, "ports": []})
    return {"hcas": hcas}


def _guids(name, count=2, host=None):
    host = sriov.host_id(name) if host is None else host
    return [sriov.format_guid(sriov.scheme_guid(0x02FA, host, 0, vf)) for vf in range(count)]


def _changes(hca, name, pfs=None, **kwargs):
    pfs = pfs or [{"pf": PF, "num_vfs": 2}]
    plan = sriov_plan(hca, pfs, host_name=name, host_id=kwargs.get("host_id"))
    return sriov_guid_changes(plan, hca, host_name=name, pfs=pfs, **kwargs)


def test_a_renamed_host_is_told_the_old_and_new_source_and_how_to_keep_them():
    old, new = _guids("node01"), _guids("gpu-a01")
    lines = _changes(_hca(old), "gpu-a01", names=["gpu-a01", "gpu-a02"])
    old_id, new_id = sriov.host_id("node01"), sriov.host_id("gpu-a01")
    assert lines == [
        "%s: VFs 0, 1 carry %s (the scheme with host id 0x%08x, not derived from gpu-a01: the host was renamed in the inventory, "
        "or sriov_guid_host_id changed); this run gives them %s (the scheme with host id 0x%08x, derived from the inventory "
        "name gpu-a01)" % (PF, ", ".join(old), old_id, ", ".join(new), new_id),
        "to keep the GUIDs the VFs carry, set sriov_guid_host_id: %d (0x%08x) for gpu-a01" % (old_id, old_id)]
    # and with that setting, nothing changes
    assert _changes(_hca(old), "gpu-a01", host_id=old_id) == []


def test_two_hosts_that_swap_names_are_named():
    lines = _changes(_hca(_guids("node02")), "node01", names=["node01", "node02"])
    assert "(the scheme with host id 0x%08x (derived from the inventory name node02))" % sriov.host_id("node02") in lines[0]


def test_nothing_to_refuse_when_the_vfs_already_carry_the_plan_or_no_guid():
    assert _changes(_hca(_guids("node01")), "node01") == []
    # zero (never set), none (no RDMA device), VFs not made yet
    assert _changes(_hca(["0x0000000000000000", None]), "node01") == []
    assert _changes(_hca([]), "node01") == []
    # one VF already right, the other never set
    assert _changes(_hca([_guids("node01")[0], "0x0000000000000000"]), "node01") == []
    # the plan leaves GUIDs to others (guid_mode none): nothing of ours changes
    hca = _hca(_guids("node09"))
    plan = sriov_plan(hca, [{"pf": PF, "num_vfs": 2}], host_name="node01", guid_mode="none")
    assert sriov_guid_changes(plan, hca, host_name="node01") == []


def test_one_vf_of_a_list_changed():
    given = ["0x02fa00000000aa00", "0x02fa00000000aa01"]
    hca = _hca(["0x02fa00000000aa00", "0x02fa00000000bb01"])
    lines = _changes(hca, "node01", pfs=[{"pf": PF, "num_vfs": 2, "guids": given}])
    assert lines == ["%s: VFs 1 carry 0x02fa00000000bb01 (not this prefix's scheme at this position: a guids list of "
                     "sriov_pfs, another sriov_guid_prefix, or set outside this role); this run gives them 0x02fa00000000aa01 "
                     "(sriov_pfs[0].guids)" % PF]


def test_from_scheme_to_a_list_gives_no_host_id_hint():
    lines = _changes(_hca(_guids("node01")), "node01", pfs=[{"pf": PF, "num_vfs": 2, "guids": ["0x02fa00000000aa00", "0x02fa00000000aa01"]}])
    assert len(lines) == 1 and "(sriov_pfs[0].guids)" in lines[0]
    assert "(the scheme with host id 0x%08x (derived from the inventory name node01))" % sriov.host_id("node01") in lines[0]
