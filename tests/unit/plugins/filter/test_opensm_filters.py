# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The opensm_* filters, and the role's templates rendered as Ansible renders them.

The NVIDIA flavour (opensmd, virt_enabled) has no OpenSM in the lab; these renders are its test.
"""

from __future__ import annotations

import os

import pytest
import yaml

from ansible.errors import AnsibleFilterError
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template
from ansible_collections.fabric.infiniband.plugins.filter.opensm_log_check import opensm_log_check
from ansible_collections.fabric.infiniband.plugins.filter.opensm_partition_hosts import opensm_partition_hosts
from ansible_collections.fabric.infiniband.plugins.filter.opensm_partitions import opensm_partitions
from ansible_collections.fabric.infiniband.plugins.filter.opensm_port_guids import opensm_port_guids

ROLE = os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "roles", "opensm")
GROUPS = {"all": ["sm1", "c1"], "opensm": ["sm1"], "compute": ["c1"]}


def test_filters_wrap_value_errors():
    with pytest.raises(AnsibleFilterError, match=r"opensm_partitions\[0\] \(a\)\.pkey: '0x8001' is not an accepted P_Key"):
        opensm_partitions([{"name": "a", "pkey": "0x8001"}], groups=GROUPS, hosts=GROUPS["all"])
    with pytest.raises(AnsibleFilterError, match=r"opensm_partitions\[0\] \(a\)\.pkey: '0x8001'"):
        opensm_partition_hosts([{"name": "a", "pkey": "0x8001"}], groups=GROUPS, hosts=GROUPS["all"])
    with pytest.raises(AnsibleFilterError, match=r"opensm_port_guids: '0x0c42a10300aa0010' is not accepted; accepted: a list of "
                                                 r"port GUIDs .* or the result of fabric.infiniband.hca_info"):
        opensm_port_guids("0x0c42a10300aa0010")


def test_port_guids_given_by_the_user_one_grammar():
    """opensm_port_guids as written: the collection's GUID grammar, YAML numbers refused with what to write (issue 22)."""
    assert opensm_port_guids([]) == []
    assert opensm_port_guids(["0x0C42A10300AA0010", " 0c:42:a1:03:00:aa:00:11 "]) == ["0x0c42a10300aa0010", "0x0c42a10300aa0011"]
    with pytest.raises(AnsibleFilterError, match=r"^opensm_port_guids\[1\] '0x12' has 2 hex digits after 0x; a GUID has 16"):
        opensm_port_guids(["0x0c42a10300aa0010", "0x12"])
    with pytest.raises(AnsibleFilterError, match=r'^opensm_port_guids\[0\] is the number 883445511186153488, not a port GUID: '
                                                 r'YAML reads an unquoted 0x0c42a10300aa0010 as a number.* Quote it: "0x0c42a10300aa0010"$'):
        opensm_port_guids([0x0C42A10300AA0010])


def test_filters_pass_the_values_through():
    partitions = [{"name": "a", "pkey": 1, "members": ["compute"]}]
    assert opensm_partition_hosts(partitions, groups=GROUPS, hosts=GROUPS["all"]) == ["c1"]
    # facts (what the tools printed) are read leniently: leading zeros may be left out
    result = opensm_partitions(partitions, pf_guids={"c1": ["0x1"]}, vf_guids={"c1": ["0x2"]}, groups=GROUPS, hosts=GROUPS["all"],
                               default={"membership": "limited"}, header="managed\nsecond")
    assert result["content"].splitlines()[:2] == ["# managed", "# second"]
    assert "Default=0x7fff, ipoib : ALL=limited, ALL_SWITCHES=full, SELF=full ;" in result["content"]
    assert "a=0x0001 : 0x0000000000000001, 0x0000000000000002 ;" in result["content"]
    hca = {"hcas": [{"is_vf": False, "ports": [{"link_layer": "InfiniBand", "port_guid": "0x1"}]}]}
    assert opensm_port_guids(hca) == ["0x0000000000000001"]
    assert opensm_log_check("x 0x80 -> Entering MASTER state\ny 0x02 -> SUBNET UP\n") == {"states": ["MASTER"], "subnet_up": True, "errors": []}


def _render(template, **overrides):
    with open(os.path.join(ROLE, "defaults", "main.yml"), encoding="utf-8") as handle:
        variables = yaml.safe_load(handle)
    variables.update({
        "ansible_managed": "Ansible managed",
        "__opensm_guids": ["0xb8cef60300a10010"],
        "__opensm_priority": 15,
        "__opensm_virt": False,
        "__opensm_partitions_path": "/etc/opensm/partitions.conf",
    })
    variables.update(overrides)
    with open(os.path.join(ROLE, "templates", template), encoding="utf-8") as handle:
        source = handle.read()
    templar = Templar(loader=DataLoader(), variables=variables)
    return [line for line in templar.template(trust_as_template(source)).splitlines() if line and not line.startswith("#")]


def test_opensm_conf_distribution():
    assert _render("opensm.conf.j2") == [
        "guid 0xb8cef60300a10010",
        "subnet_prefix 0xfe80000000000000",
        "sm_priority 15",
        "sminfo_polling_timeout 10000",
        "polling_retry_number 4",
        "sweep_interval 10",
        "partition_config_file /etc/opensm/partitions.conf",
        "part_enforce both",
        "allow_both_pkeys FALSE",
        "log_file /var/log/opensm.log",
        "log_flags 0x03",
        "log_max_size 0",
        "force_log_flush TRUE",
    ]


def test_opensm_conf_nvidia_with_virtualization_and_extra_options():
    lines = _render("opensm.conf.j2", opensm_flavour="nvidia", __opensm_virt=True, __opensm_priority=14, opensm_routing_engine="ftree,updn",
                    opensm_allow_both_pkeys=True, opensm_extra_options={"qos": True, "lmc": 2, "root_guid_file": "/etc/opensm/roots"})
    assert "virt_enabled 2" in lines
    assert "sm_priority 14" in lines
    assert "routing_engine ftree,updn" in lines
    assert "allow_both_pkeys TRUE" in lines
    assert lines[-3:] == ["lmc 2", "qos TRUE", "root_guid_file /etc/opensm/roots"]


def test_opensm_conf_nvidia_without_virtualization_says_so():
    assert "virt_enabled 0" in _render("opensm.conf.j2", opensm_flavour="nvidia")


def test_opensm_conf_distribution_never_has_virt_enabled():
    assert not [line for line in _render("opensm.conf.j2", __opensm_virt=True) if line.startswith("virt_")]


def test_opensm_conf_several_ports_leave_guid_to_the_units():
    lines = _render("opensm.conf.j2", __opensm_guids=["0x1", "0x2"])
    assert not [line for line in lines if line.startswith("guid ")]


def test_default_file_lists_the_ports():
    assert _render("default-opensm.j2", __opensm_guids=["0xb8cef60300a10010", "0xb8cef60300a10011"]) == [
        'PORTS="0xb8cef60300a10010 0xb8cef60300a10011"']
