# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A P_Key written one way means one partition in opensm, ipoib and k8s_network (issue 22, class 4).

Before: "20" was 0x0014 for opensm and ipoib and 0x0020 for k8s_network's NetworkAttachmentDefinitions, so pods
landed on a partition the subnet manager never defined. Now a string is hex with 0x in all three, and "20" is refused
by all three with the same words; so is a bare number from 10 on (issue 33: 20 is 0x0014 in decimal but 0x0020 as
people write P_Keys, and YAML makes the same number of 16 and of an unquoted 0x10).
"""

from __future__ import annotations

import json

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.fabric.infiniband.plugins.plugin_utils.ipoib import plan as ipoib_plan
from ansible_collections.fabric.infiniband.plugins.filter.k8s_network_nads import k8s_network_nads
from ansible_collections.fabric.infiniband.plugins.plugin_utils import opensm as opensm_step

HCA = {"hcas": [{"pci_address": "0000:3b:00.0", "rdma_device": "mlx5_0", "model": "ConnectX-6",
                 "ports": [{"port": 1, "link_layer": "InfiniBand", "netdev": "ibp59s0f0"}]}]}
GROUPS = {"all": ["c1"]}


def _opensm(pkey):
    # the opensm step's plan (a refusal is the step's failure; the same words as the other readers' errors)
    settings = {"opensm_priority": 5, "opensm_partitions": [{"name": "p", "pkey": pkey, "members": ["ALL"]}]}
    try:
        the_plan = opensm_step.plan(settings, "c1", GROUPS, {"hcas": []}, {}, {}, [])
    except ValueError as exc:
        raise AnsibleFilterError(str(exc)) from None
    return int(the_plan["partitions"]["partitions"][0]["pkey"], 16)


def _ipoib(pkey):
    child = ipoib_plan(HCA, [{"device": "mlx5_0", "children": [{"pkey": pkey}]}])[0]["children"][0]
    return int(child["pkey"], 16) & 0x7FFF


def _k8s_sriov(pkey):
    nad = k8s_network_nads([{"name": "vf", "type": "ib-sriov", "resource_name": "mellanox.com/mlnx_sriov_rdma_ib",
                             "pkey": pkey, "ipam": {"range": "10.56.0.0/16"}}])[0]
    return int(json.loads(nad["spec"]["config"])["pkey"], 16)


def _k8s_ipoib(pkey):
    nad = k8s_network_nads([{"name": "rail", "type": "ipoib", "master": "ibp59s0f0", "pkey": pkey,
                             "ipam": {"range": "10.57.0.0/16"}}])[0]
    return int(json.loads(nad["spec"]["config"])["master"].split(".")[1], 16) & 0x7FFF


READERS = [_opensm, _ipoib, _k8s_sriov, _k8s_ipoib]


@pytest.mark.parametrize("pkey, partition", [(5, 0x0005), ("0x20", 0x0020), ("0x0014", 0x0014), ("0x7ffe", 0x7FFE)])
@pytest.mark.parametrize("reader", READERS)
def test_one_partition_everywhere(reader, pkey, partition):
    assert reader(pkey) == partition


@pytest.mark.parametrize("pkey", ["20", "0x8014", 0x7FFF, "p20", "80:01", "0x00014", 20, 0x20, 32769])
@pytest.mark.parametrize("reader", READERS)
def test_refused_everywhere_with_the_same_words(reader, pkey):
    with pytest.raises(AnsibleFilterError, match=r"pkey: %r is not an accepted P_Key.*accepted: 0x0001 to 0x7ffe" % (pkey,)):
        reader(pkey)
