# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

import pytest

from ansible.errors import AnsibleFilterError
from ansible_collections.fabric.infiniband.plugins.filter.hca_table import hca_table

RESULT = {
    "changed": False,
    "summary": [
        {"pci_address": "0000:3b:00.0", "rdma_device": "mlx5_0", "port": 1, "model": "ConnectX-6", "link_layer": "Ethernet",
         "state": "ACTIVE", "physical_state": "LinkUp", "lid": 0, "rate_gbps": 200.0, "netdev": "enp59s0f0np0",
         "firmware_version": "20.38.1002", "psid": "MT_0000000222"},
        {"pci_address": "0000:3b:00.1", "rdma_device": "mlx5_1", "port": 1, "model": "ConnectX-6", "link_layer": "InfiniBand",
         "state": "INIT", "physical_state": "LinkUp", "lid": 65535, "rate_gbps": 200.0, "netdev": "ibp59s0f1",
         "firmware_version": "20.38.1002", "psid": "MT_0000000222"},
    ],
    "firmware_tools": {"flavour": "mstflint"},
    "kernel_lockdown": "none",
    "rdma_system": {"netns_mode": "shared"},
}


def test_one_row_per_port_with_aligned_columns():
    lines = hca_table({"node01": RESULT}).splitlines()
    assert lines[0].split() == ["HOST", "RDMA", "PCI", "MODEL", "PORT", "LINK", "STATE", "PHYS", "LID", "GB/S", "NETDEV", "FIRMWARE", "PSID"]
    assert lines[1].split() == ["node01", "mlx5_0", "0000:3b:00.0", "ConnectX-6", "1", "Ethernet", "ACTIVE", "LinkUp", "-", "200",
                                "enp59s0f0np0", "20.38.1002", "MT_0000000222"]
    assert lines[2].split()[8] == "65535"
    # Columns line up: every row's PCI address starts where the header's PCI column does.
    assert lines[1].index("0000:3b:00.0") == lines[0].index("PCI") == lines[2].index("0000:3b:00.1")
    assert "node01: firmware tools mstflint, kernel lockdown none, RDMA netns shared" in lines


def test_failed_host_is_reported_not_dropped():
    text = hca_table({"node01": RESULT, "node02": {"failed": True, "msg": "unreachable"}})
    assert "node02: no result (unreachable)" in text


def test_host_without_adapters_gets_a_row():
    text = hca_table({"node09": dict(RESULT, summary=[])})
    assert "(no adapters)" in text.splitlines()[1]


def test_rejects_a_list():
    with pytest.raises(AnsibleFilterError, match="mapping of host name"):
        hca_table([RESULT])
