# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

import pytest

from ansible_collections.fabric.infiniband.plugins.module_utils import iplink, sriov
from ansible_collections.fabric.infiniband.tests.unit.conftest import read_fixture


@pytest.mark.parametrize("current, want, total, allow, writes", [
    (0, 0, 8, False, []), (4, 4, 8, False, []), (0, 4, 8, False, [4]), (4, 0, 8, False, [0]),
    (4, 8, 8, True, [0, 8]), (0, 8, None, False, [8]),
])
def test_count_writes(current, want, total, allow, writes):
    assert sriov.count_writes(current, want, total, allow) == (writes, None)


def test_count_writes_refuses_more_than_total_and_recreate_without_consent():
    assert "sriov_totalvfs is 8" in sriov.count_writes(0, 9, 8, False)[1]
    assert "allow_recreate" in sriov.count_writes(2, 4, 8, False)[1]


def test_desired_vfs_guid_sets_both_and_default_link_state_fills_the_rest():
    want, errors = sriov.desired_vfs(3, [{"index": 1, "guid": "02:00:00:00:00:00:00:01", "link_state": "enable"}], "auto")
    assert errors == []
    assert want == {
        0: {"node_guid": None, "port_guid": None, "link_state": "auto"},
        1: {"node_guid": "0x0200000000000001", "port_guid": "0x0200000000000001", "link_state": "enable"},
        2: {"node_guid": None, "port_guid": None, "link_state": "auto"},
    }


G1 = "0x0200000000000001"
G2 = "0x0200000000000002"
G5 = "0x0200000000000005"


@pytest.mark.parametrize("vfs, says", [
    ([{"index": 4, "guid": G1}], "vfs[0].index 4 is not a VF of this PF: accepted 0 to 3"),
    ([{"index": 0, "guid": G1}, {"index": 0, "guid": G2}], "appears twice"),
    ([{"index": 0, "guid": G1, "node_guid": G2}], "not both"),
    ([{"index": 0, "guid": "0x0000000000000000"}], "vfs[0].guid '0x0000000000000000' is the zero GUID, which is not valid"),
    ([{"index": 0, "guid": G5}, {"index": 1, "guid": G5}], "given to VF 0 and VF 1"),
    ([{"index": 0, "port_guid": "0x5"}], "vfs[0].port_guid '0x5' has 1 hex digits after 0x; a GUID has 16"),
    # what a module's str option makes of an unquoted 0x0200000000000001 (a YAML number)
    ([{"index": 0, "node_guid": "144115188075855873"}],
     'vfs[0].node_guid \'144115188075855873\' is digits only, not a GUID: hex digits need 0x, and YAML reads an unquoted '
     '0x0200000000000001 as this number. Quote it: "0x0200000000000001"'),
])
def test_desired_vfs_errors(vfs, says):
    _want, errors = sriov.desired_vfs(4, vfs)
    assert any(says in e for e in errors), errors
    assert len(set(errors)) == len(errors), errors  # guid is read for the node and the port GUID, and told once


def test_vf_changes_and_rebind():
    have = {"node_guid": "0x1", "port_guid": "0x1", "link_state": "auto", "driver": "mlx5_core", "rdma_device": "mlx5_2",
            "active_node_guid": "0x0000000000000000", "active_port_guid": "0x1"}
    want = {"node_guid": "0x1", "port_guid": "0x1", "link_state": "enable"}
    assert sriov.vf_changes(have, want) == {"link_state": "enable"}
    assert sriov.needs_rebind(have, want)
    assert not sriov.needs_rebind(dict(have, active_node_guid="0x1"), want)
    assert not sriov.needs_rebind(dict(have, driver=None), want)


def test_scheme():
    assert sriov.parse_prefix("02:fa", "p") == 0x02FA
    assert sriov.parse_prefix(" 0x02FA ", "p") == 0x02FA
    with pytest.raises(ValueError, match=r"^p '0x0cfa': its first byte 0x0c is not locally administered"):
        sriov.parse_prefix("0x0cfa", "p")
    with pytest.raises(ValueError, match=r"^p '0x2fa00' has 5 hex digits after 0x; a 2-byte prefix has 4"):
        sriov.parse_prefix("0x2fa00", "p")
    host = sriov.host_id("node01")
    assert host == int("dc8c7c3e", 16) or 0 <= host < 2 ** 32
    assert sriov.format_guid(sriov.scheme_guid(0x02FA, 0x0A0B0C0D, 1, 3)) == "0x02fa0a0b0c0d0103"


IPLINK_NEW = read_fixture("iplink_vfs_ib.txt")
IPLINK_OLD = read_fixture("iplink_vfs_old.txt")


def test_iplink_parse_vfs_generations_and_whitespace():
    assert iplink.parse_vfs(IPLINK_NEW) == {
        0: {"node_guid": "0x0200000000000000", "port_guid": "0x0200000000000001", "link_state": "enable"},
        1: {"node_guid": "0x0200000000000002", "port_guid": "0x0200000000000002", "link_state": "auto"},
    }
    assert iplink.parse_vfs(IPLINK_OLD) == {0: {"node_guid": None, "port_guid": None, "link_state": "disable"}}
    assert iplink.parse_vfs("") == {}


def test_iplink_args():
    assert iplink.set_vf_args("ib0", 2, "0x02fa000000000102", "0x02fa000000000102", "auto") == [
        "link", "set", "dev", "ib0", "vf", "2", "node_guid", "02:fa:00:00:00:00:01:02",
        "port_guid", "02:fa:00:00:00:00:01:02", "state", "auto"]
    assert iplink.set_vf_args("ib0", 0) is None
    assert iplink.show_args("ib0") == ["-d", "link", "show", "dev", "ib0"]
    assert iplink.link_state_from_policy("Follow\n") == "auto"
    assert iplink.link_state_from_policy("Down") == "disable"
    assert "netlink" in iplink.classify_set_error(2, "", "RTNETLINK answers: Operation not supported")
