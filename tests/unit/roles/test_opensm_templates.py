# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The opensm role's templates rendered as Ansible renders them, with the variables its step gives them
(plugins/plugin_utils/opensm.py: template_vars).

The NVIDIA flavour (opensmd, virt_enabled) has no OpenSM in the lab; these renders are its test.
"""

from __future__ import annotations

import os

import yaml

from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template
from ansible_collections.fabric.infiniband.plugins.plugin_utils import opensm

ROLE = os.path.join(os.path.dirname(__file__), "..", "..", "..", "roles", "opensm")
GROUPS = {"all": ["sm1", "c1"], "opensm": ["sm1"], "compute": ["c1"]}
HCA = {"hcas": [{"rdma_device": "mlx5_0", "is_vf": False, "ports": [{"link_layer": "InfiniBand", "port_guid": "0xb8cef60300a10010"}]}]}


def _defaults():
    with open(os.path.join(ROLE, "defaults", "main.yml"), encoding="utf-8") as handle:
        return yaml.safe_load(handle)


def _render(template, vf_hosts=(), **overrides):
    """``template`` as the step renders it on sm1 (first of the group opensm): the role's defaults with the ``opensm_*``
    overrides, the plan's variables, then the ``__opensm_*`` overrides; the lines that are no comment."""
    settings = _defaults()
    settings.update((k, v) for k, v in overrides.items() if k.startswith("opensm_"))
    the_plan = opensm.plan(settings, "sm1", GROUPS, HCA, {"c1": ["0xb8cef60300a30030"]}, {"c1": ["0xb8cef60300a3f001"]},
                           list(vf_hosts))
    variables = dict(settings, ansible_managed="Ansible managed", **opensm.template_vars(the_plan))
    variables.update((k, v) for k, v in overrides.items() if k.startswith("__"))
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
    # virt_enabled 2: NVIDIA's OpenSM, and a host publishes VF GUIDs (opensm_virt_enabled: auto)
    lines = _render("opensm.conf.j2", vf_hosts=["c1"], opensm_flavour="nvidia", opensm_priority=14, opensm_routing_engine="ftree,updn",
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


def test_partitions_conf_from_the_plan():
    lines = _render("partitions.conf.j2", opensm_partitions=[
        {"name": "compute", "pkey": "0x0010", "ipoib": True, "mtu": 4096, "members": ["compute"]},
        {"name": "storage", "pkey": "0x0020", "members": [{"group": "compute", "functions": "pf"}, "ALL_SWITCHES"]}])
    assert lines == [
        "Default=0x7fff, ipoib : ALL=full, ALL_SWITCHES=full, SELF=full ;",
        "compute=0x0010, ipoib, mtu=5 : 0xb8cef60300a30030, 0xb8cef60300a3f001 ;",
        "storage=0x0020 : ALL_SWITCHES, 0xb8cef60300a30030 ;",
    ]
