# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The reboot_settings filter: reboot settings and batch controls, named by the variable the user set (issue 22, class 5)."""

from __future__ import annotations

import pytest

from ansible.errors import AnsibleFilterError
from ansible_collections.fabric.infiniband.plugins.filter.reboot_settings import reboot_settings

DEFAULTS = {
    "infiniband_reboot_serial": "20%", "infiniband_reboot_max_fail_percentage": 0, "infiniband_allow_reboot": False,
    "node_reboot_allow": False, "node_reboot_allow_fw_reset": False, "node_reboot_method": "reboot", "node_reboot_command": [],
    "node_reboot_power_cycle_command": [], "node_reboot_wait_delay": 15, "node_reboot_timeout": 900,
    "node_reboot_bmc_validate_certs": True, "node_reboot_drain": True, "node_reboot_drain_timeout": 600,
    "node_reboot_fail_on_tried": True,
}


def test_the_defaults_are_accepted():
    assert reboot_settings(DEFAULTS) == []


@pytest.mark.parametrize("settings", [
    {"infiniband_drain_timeout": 0, "node_reboot_drain_timeout": 0},  # documented as "no limit"
    {"infiniband_drain_timeout": "0"},
    {"infiniband_reboot_serial": 3}, {"infiniband_reboot_serial": "3"}, {"infiniband_reboot_serial": "100%"},
    {"infiniband_reboot_serial": [1, "50%"]},
    {"infiniband_reboot_max_fail_percentage": "5"}, {"infiniband_reboot_max_fail_percentage": 100},
    {"infiniband_allow_reboot": "true", "infiniband_allow_fw_reset": "false", "infiniband_drain": "no"},
    {"node_reboot_method": "command", "node_reboot_command": ["labctl", "reboot", "node01"]},
    {"infiniband_bmc_password": "secret", "infiniband_bmc_address": "https://bmc"},
])
def test_documented_values_are_accepted(settings):
    assert reboot_settings(settings) == []


@pytest.mark.parametrize("settings, says", [
    ({"infiniband_reboot_serial": 0}, "infiniband_reboot_serial: 0 is not accepted (Ansible would put every host in one batch)"),
    ({"infiniband_reboot_serial": "150%"}, "infiniband_reboot_serial: '150%' is not accepted (more than 100%"),
    ({"infiniband_reboot_serial": "abc"}, "infiniband_reboot_serial: 'abc' is not accepted; accepted: a number of nodes from 1"),
    ({"infiniband_reboot_max_fail_percentage": -5}, "infiniband_reboot_max_fail_percentage: -5 is not accepted; accepted: a percentage"),
    ({"infiniband_drain_timeout": -1}, "infiniband_drain_timeout: -1 is not accepted; accepted: whole seconds, 0 or more (0: no limit)"),
    ({"infiniband_reboot_timeout": 0}, "infiniband_reboot_timeout: 0 is not accepted; accepted: whole seconds, greater than 0"),
    ({"infiniband_allow_reboot": "maybe"}, "infiniband_allow_reboot: 'maybe' is not a boolean"),
    ({"infiniband_reboot_method": "ipmi"}, "infiniband_reboot_method: 'ipmi' is not accepted; accepted: reboot, command"),
    ({"infiniband_reboot_command": "reboot now"}, "infiniband_reboot_command: 'reboot now' is not accepted; accepted: an argument list"),
    ({"infiniband_reboot_method": "command", "infiniband_reboot_command": []},
     "infiniband_reboot_command is empty but infiniband_reboot_method is command"),
    ({"node_reboot_method": "command", "node_reboot_command": []}, "node_reboot_command is empty but node_reboot_method is command"),
    ({"node_reboot_drain_timeout": -1}, "node_reboot_drain_timeout: -1 is not accepted"),
    ({"node_reboot_serial": 5}, "node_reboot_serial: not a reboot setting"),
])
def test_bad_values_are_named(settings, says):
    problems = reboot_settings(settings)
    assert len(problems) == 1 and problems[0].startswith(says), problems


def test_a_value_mapped_onto_the_role_is_told_once_under_the_users_name():
    # the role's default carries infiniband_drain_timeout into node_reboot_drain_timeout
    problems = reboot_settings({"infiniband_drain_timeout": -1, "node_reboot_drain_timeout": -1})
    assert problems == ["infiniband_drain_timeout: -1 is not accepted; accepted: whole seconds, 0 or more (0: no limit)"]
    # the role's own variable, set to something else (in the inventory), is told under its name
    problems = reboot_settings({"infiniband_drain_timeout": 5, "node_reboot_drain_timeout": -1})
    assert problems == ["node_reboot_drain_timeout: -1 is not accepted; accepted: whole seconds, 0 or more (0: no limit)"]


def test_a_secret_is_not_shown():
    problems = reboot_settings({"infiniband_bmc_password": 123456789})
    assert problems == ["infiniband_bmc_password: a value of type int is not accepted (not shown); accepted: a string"]


def test_not_a_dict():
    with pytest.raises(AnsibleFilterError, match="expects a dict"):
        reboot_settings(["infiniband_reboot_serial"])


# Issue 33, class 5: the play keywords of reboot.yml set for a host, where the play cannot see them
@pytest.mark.parametrize("host_vars, extra, says", [
    ({"infiniband_reboot_serial": 1}, {},
     "infiniband_reboot_serial: 1 is set for this host (inventory host_vars or group_vars, or a fact), where "
     "playbooks/reboot.yml cannot honour it: serial is a play keyword, templated once for the play from extra vars and "
     "play vars only, so the play would use '20%'. Set it for the run: -e infiniband_reboot_serial=1 (AWX: the survey or "
     "the job template's extra vars), and remove it from the inventory"),
    ({"infiniband_reboot_max_fail_percentage": 50}, {"robustness_only": "x"},
     "infiniband_reboot_max_fail_percentage: 50 is set for this host"),
    ({"infiniband_reboot_serial": [1, "50%"]}, {}, "-e '{\"infiniband_reboot_serial\": [1, \"50%\"]}'"),
    ({"infiniband_reboot_hosts": "gpu_nodes"}, {}, "hosts is a play keyword"),
])
def test_play_keywords_set_for_a_host_are_refused(host_vars, extra, says):
    from ansible_collections.fabric.infiniband.plugins.filter import reboot_settings as module

    problems = module.play_keyword_problems(host_vars, extra)
    assert len(problems) == 1 and says in problems[0], problems


@pytest.mark.parametrize("host_vars, extra", [
    ({"infiniband_reboot_serial": 1}, {"infiniband_reboot_serial": 1}),  # an extra var: the play sees it
    ({"infiniband_reboot_serial": "20%", "infiniband_reboot_max_fail_percentage": "0"}, {}),  # what the play uses anyway
    ({"infiniband_reboot_serial": "20 %"}, {}),
    ({"infiniband_reboot_hosts": "ib_nodes", "infiniband_allow_reboot": True}, {}),  # not a play keyword: the role reads it
    ({}, {}),
])
def test_play_keywords_the_play_sees_are_accepted(host_vars, extra):
    from ansible_collections.fabric.infiniband.plugins.filter import reboot_settings as module

    assert module.play_keyword_problems(host_vars, extra) == []


def test_the_filter_refuses_them_beside_the_values(monkeypatch):
    from ansible_collections.fabric.infiniband.plugins.filter import reboot_settings as module

    monkeypatch.setattr(module, "extra_vars", lambda: {})
    problems = reboot_settings({"infiniband_reboot_serial": 1}, host_vars={"infiniband_reboot_serial": 1})
    assert len(problems) == 1 and problems[0].startswith("infiniband_reboot_serial: 1 is set for this host")
    # a bad value is told once, by what is wrong with it
    problems = reboot_settings({"infiniband_reboot_serial": 0}, host_vars={"infiniband_reboot_serial": 0})
    assert len(problems) == 1 and "every host in one batch" in problems[0]
    assert reboot_settings({"infiniband_reboot_serial": 2}, host_vars={}) == []  # a play var: not in hostvars
    monkeypatch.setattr(module, "extra_vars", lambda: None)  # unknown: no refusal on a guess
    assert reboot_settings({"infiniband_reboot_serial": 2}, host_vars={"infiniband_reboot_serial": 2}) == []
    with pytest.raises(AnsibleFilterError):
        reboot_settings({}, host_vars=[1])


def test_extra_vars_are_the_run_s():
    from ansible_collections.fabric.infiniband.plugins.filter import reboot_settings as module

    assert isinstance(module.extra_vars(), dict)
