# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

import pytest

from ansible_collections.fabric.infiniband.plugins.module_utils import rdma
from ansible_collections.fabric.infiniband.tests.unit.conftest import read_fixture


GEN_5_3 = {"netns_mode": "shared"}
GEN_5_14 = {"netns_mode": "shared", "copy_on_fork": True}
GEN_6_7 = {"netns_mode": "shared", "privileged_qkey": False, "copy_on_fork": True}
GEN_6_13 = {"netns_mode": "shared", "privileged_qkey": False, "monitor": False, "copy_on_fork": True}


def test_system_show_args():
    assert rdma.system_show_args() == ["-j", "system", "show"]


@pytest.mark.parametrize("fixture, expected", [
    ("rdma_system_iproute2-5.3.txt", GEN_5_3),
    ("rdma_system_iproute2-5.3.json", GEN_5_3),
    ("rdma_system_iproute2-5.14.txt", GEN_5_14),
    ("rdma_system_iproute2-5.14.json", GEN_5_14),
    ("rdma_system_iproute2-6.7.txt", GEN_6_7),
    ("rdma_system_iproute2-6.7.json", GEN_6_7),
    ("rdma_system_iproute2-6.13.txt", GEN_6_13),
    ("rdma_system_iproute2-6.13.json", GEN_6_13),
    ("rdma_system_iproute2-6.13-pretty.json", dict(GEN_6_13, netns_mode="exclusive")),
    ("rdma_system_real_shared.txt", GEN_5_14),
    ("rdma_system_real_exclusive_indented.txt", dict(GEN_5_14, netns_mode="exclusive")),
])
def test_parse_recorded_outputs(fixture, expected):
    assert rdma.parse_system_show(read_fixture(fixture)) == expected


@pytest.mark.parametrize("text, expected", [
    ("\tnetns   exclusive\tcopy-on-fork  off \n\n", {"netns_mode": "exclusive", "copy_on_fork": False}),
    ("netns shared\ncopy-on-fork on\n", GEN_5_14),
    ("NETNS Shared", None),  # keys are case sensitive in iproute2; an unknown key is not the mode
    ("netns Shared", {"netns_mode": "shared"}),
    ("rdma: extra notice\nnetns exclusive copy-on-fork on\n", {"netns_mode": "exclusive", "copy_on_fork": True}),
    ("netns shared future-knob 7", {"netns_mode": "shared", "future_knob": "7"}),
    ("netns shared copy-on-fork", {"netns_mode": "shared"}),
    ('{"netns": "exclusive"}', {"netns_mode": "exclusive"}),
    ('[{"netns": "shared"}, {"copy-on-fork": false}]', {"netns_mode": "shared", "copy_on_fork": False}),
    ('[{"netns": "shared", "copy-on-fork": "on"}]', GEN_5_14),
    ('[{"netns": "bogus"}]', None),
    ('[{"copy-on-fork": true}]', None),
    ("[not json", None),
    ("netns bogus", None),
    ("", None),
    (None, None),
])
def test_parse_variants(text, expected):
    assert rdma.parse_system_show(text) == expected


def test_old_iproute2_is_detected():
    err = read_fixture("rdma_system_real_old_iproute2.err")
    assert rdma.parse_system_show(err) is None
    assert rdma.system_unsupported("", err)
    assert rdma.system_unsupported(err, "")
    assert not rdma.system_unsupported("", "error: Protocol not supported")
