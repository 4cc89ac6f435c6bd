# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

import glob
import os

import pytest
import yaml

from ansible_collections.fabric.infiniband.plugins.action import preflight_vars as p

ROOT = os.path.join(os.path.dirname(__file__), "..", "..", "..", "..")
OPTIONS = p.role_options()
RESULT = {"changed": False, "failed": False}


def test_finds_every_role_and_its_options():
    assert sorted(OPTIONS) == sorted(os.listdir(os.path.join(ROOT, "roles")))
    assert "sriov_pfs" in OPTIONS["sriov"] and "link_type_adapters" in OPTIONS["link_type"]
    # every entry point counts
    assert all(OPTIONS[role] for role in OPTIONS)


@pytest.mark.parametrize("variables, roles, allow, expected", [
    # issue 22 class 2: the two examples
    ({"sriov_pf": [{"pf": "3b:00.0", "num_vfs": 4}], "sriov_pfs": []}, None, (), [("sriov_pf", "sriov", "sriov_pfs")]),
    ({"link_type_adapter": [{"model": "ConnectX-6", "ports": ["eth"]}]}, None, (), [("link_type_adapter", "link_type", "link_type_adapters")]),
    ({"rdma_netns_mod": "exclusive"}, None, (), [("rdma_netns_mod", "rdma_netns", "rdma_netns_mode")]),
    ({"rdma_stack_module": ["mlx5_ib"]}, None, (), [("rdma_stack_module", "rdma_stack", "rdma_stack_modules")]),
    ({"node_reboot_allowed": True}, None, (), [("node_reboot_allowed", "node_reboot", "node_reboot_allow")]),
    # no close option: still refused
    ({"opensm_zzz": 1}, None, (), [("opensm_zzz", "opensm", None)]),
    # only the roles asked for
    ({"sriov_pf": [], "link_type_adapter": []}, ["sriov"], (), [("sriov_pf", "sriov", "sriov_pfs")]),
    ({"sriov_pf": []}, ["link_type"], (), []),
    # let through: options, published facts, private names, registered results, other names, the allow list
    ({"sriov_pfs": [], "sriov_vf_guids": [], "sriov_state": {}, "ipoib_interfaces": [],
      "link_type_waiting": [], "gpudirect_report": {}, "ansible_facts": {"link_type_waiting": []}}, None, (), []),
    # a role's step publishes host facts: a name that is a fact is no setting
    ({"link_type_waiting": []}, None, (), [("link_type_waiting", "link_type", None)]),
    ({"__sriov_plan": {}, "_sriov_x": 1, "sriov": 1, "infiniband_reboot_serial": 1, "ansible_host": "x"}, None, (), []),
    ({"sriov_numvfs": RESULT, "verify_node": {"skipped": True}, "link_type_read": {"results": []}}, None, (), []),
    ({"verify_ssl": False}, None, ("verify_ssl",), []),
    ({"verify_ssl": False}, None, (), [("verify_ssl", "verify", "verify_fail")]),
    # a result-like key is needed: a plain mapping is a setting
    ({"sriov_pf": {"pf": "3b:00.0"}}, None, (), [("sriov_pf", "sriov", "sriov_pfs")]),
])
def test_unknown_vars(variables, roles, allow, expected):
    found = p.unknown_vars(variables, OPTIONS, roles, allow)
    assert [(f["name"], f["role"], f["did_you_mean"]) for f in found] == expected


@pytest.mark.parametrize("variables, roles, expected", [
    # issue 33 class 3: the collection's own infiniband_* names, whatever roles the check is for
    ({"infiniband_allow_reboots": True}, None, [("infiniband_allow_reboots", "node_reboot", "infiniband_allow_reboot")]),
    ({"infiniband_allow_reboots": True}, ["sriov"], [("infiniband_allow_reboots", "node_reboot", "infiniband_allow_reboot")]),
    ({"infiniband_reboot_serail": 2}, None, [("infiniband_reboot_serail", "node_reboot", "infiniband_reboot_serial")]),
    ({"infiniband_run_lock_maxage": 60}, None, [("infiniband_run_lock_maxage", "node_reboot", "infiniband_run_lock_max_age")]),
    ({"infiniband_zzz": 1}, None, [("infiniband_zzz", "node_reboot", None)]),
    # known settings, facts (also outside ansible_facts, as a fact cache may give them), results, the allow list
    ({"infiniband_allow_reboot": True, "infiniband_reboot_serial": 1, "infiniband_run_lock_max_age": 0,
      "infiniband_hca": {}, "infiniband_pending_stale": True, "infiniband_preflight": {}, "infiniband_x": RESULT,
      "ansible_facts": {"infiniband_new_fact": {}}, "infiniband_new_fact": {}}, None, []),
])
def test_unknown_infiniband_vars(variables, roles, expected):
    found = p.unknown_vars(variables, OPTIONS, roles)
    assert [(f["name"], f["role"], f["did_you_mean"]) for f in found] == expected
    assert p.unknown_vars(dict(variables, infiniband_mine=1), OPTIONS, roles, ("infiniband_mine",)) == found


def test_unknown_infiniband_var_message():
    assert p.message(p.unknown_vars({"infiniband_allow_reboots": True}, OPTIONS)).startswith(
        "unknown setting infiniband_allow_reboots (did you mean infiniband_allow_reboot?): it is no setting of the collection's "
        "playbooks, whose default would apply instead (the settings: docs/docsite/rst/variables.rst)")


def test_longest_prefix_wins():
    options = {"rdma": {"rdma_x"}, "rdma_netns": {"rdma_netns_mode"}}
    assert p.unknown_vars({"rdma_netns_mod": 1}, options) == [{"name": "rdma_netns_mod", "role": "rdma_netns",
                                                               "did_you_mean": "rdma_netns_mode"}]


def test_message():
    found = p.unknown_vars({"sriov_pf": []}, OPTIONS)
    assert p.message(found) == (
        "unknown setting sriov_pf (did you mean sriov_pfs?): it is no option of the role sriov, whose default would apply "
        "instead (the options: ansible-doc -t role fabric.infiniband.sriov). Rename it in the inventory, group_vars, host_vars "
        "or -e, or list it in infiniband_preflight_allow if it is not meant for this collection. Nothing was changed.")
    two = p.message(p.unknown_vars({"sriov_pf": [], "opensm_zzz": 1}, OPTIONS))
    assert two.startswith("unknown settings opensm_zzz; sriov_pf (did you mean sriov_pfs?): they are no option of the roles "
                          "opensm, sriov")


def _set_facts():
    """Every variable a role sets with set_fact that is not private (no leading _)."""
    names = {}

    def walk(node, role):
        if isinstance(node, list):
            for item in node:
                walk(item, role)
        elif isinstance(node, dict):
            for key, value in node.items():
                if key in ("ansible.builtin.set_fact", "set_fact") and isinstance(value, dict):
                    for name in value:
                        if name != "cacheable" and not name.startswith("_"):
                            names.setdefault(role, set()).add(name)
                walk(value, role)

    for path in glob.glob(os.path.join(ROOT, "roles", "*", "tasks", "*.yml")):
        with open(path) as handle:
            walk(yaml.safe_load(handle), path.split(os.sep)[-3])
    return names


def test_every_published_fact_is_let_through():
    """A role that publishes a new fact must list it in PUBLISHED (and document it), or its next run refuses it."""
    # a role's step publishes its facts as facts (ansible_facts), let through as such: the walk may find no set_fact
    published = _set_facts()
    for role, names in published.items():
        # only a role-prefixed name can be refused; the collection's facts (infiniband_*) are not
        prefixed = set(n for n in names if any(n.startswith(r + "_") for r in OPTIONS))
        assert prefixed <= set(p.PUBLISHED.get(role, ())) | OPTIONS[role], role


def test_every_role_runs_the_check_first():
    """A role's first task refuses its unknown settings: preflight_vars, or the role's own step (plugins/action/<role>.py,
    over plugin_utils/role_step.py, checks them before anything else)."""
    for role in OPTIONS:
        with open(os.path.join(ROOT, "roles", role, "tasks", "main.yml")) as handle:
            first = yaml.safe_load(handle)[0]
        if "fabric.infiniband.%s" % role in first:
            assert os.path.isfile(os.path.join(ROOT, "plugins", "action", role + ".py")), role
            continue
        assert first["fabric.infiniband.preflight_vars"] == {"roles": [role]}, role
        assert first["tags"] == ["always"], role


def test_spec_problems_judge_the_values_set_as_each_role_would():
    """A whole run refuses a later role's bad value before an earlier role writes (issue 22, class 1)."""
    specs = p.main_specs()
    problems = p.spec_problems({"rdma_netns_mode": "exclusive ", "sriov_allow_vf_recreate": "false", "link_type_default": "ib"},
                               specs, ["rdma_netns", "sriov", "link_type"])
    assert problems == ["rdma_netns: value of rdma_netns_mode must be one of: exclusive, shared, got: exclusive "]
    assert p.spec_problems({"link_type_allow_fw_reset": "maybe"}, specs, ["link_type"])[0].startswith(
        "link_type: argument 'link_type_allow_fw_reset' is of type")
    # options not set keep their defaults, required ones are left to the role
    assert p.spec_problems({}, specs, sorted(specs)) == []


def test_a_string_for_a_list_or_dict_says_that_extra_vars_give_strings():
    """Issue 33, class 3: `-e link_type_adapters=...` gives a string; Ansible's "dictionary requested, could not parse JSON or
    key=value" names nothing the user set: the message names the variable and shows the JSON form."""
    specs = p.main_specs()
    problems = p.spec_problems({"link_type_adapters": "pci_address=0000:3b:00.0"}, specs, ["link_type"])
    assert problems[-1].startswith("link_type: link_type_adapters: 'pci_address=0000:3b:00.0' is a string, and a list is expected")
    assert "-e '{\"link_type_adapters\": [...]}'" in problems[-1]
    assert "link_type: dictionary requested, could not parse JSON or key=value" not in problems
    # a string where a string is expected, or a list given as a list, gets no hint
    assert not any("is a string" in problem for problem in p.spec_problems({"link_type_default": "fc"}, specs, ["link_type"]))
    assert p.spec_problems({"link_type_adapters": []}, specs, ["link_type"]) == []


@pytest.mark.parametrize("values, says", [
    ({"infiniband_run_lock_max_age": "6h"}, ["run lock: infiniband_run_lock_max_age (max_age) must be 0", "got '6h'"]),
    ({"infiniband_run_lock_max_age": -1}, ["infiniband_run_lock_max_age (max_age) must be 0", "got -1"]),
    ({"infiniband_break_lock": "maybe"}, ["run lock: infiniband_break_lock must be true or false", "got 'maybe'"]),
    ({"infiniband_run_lock_max_age": 21600, "infiniband_break_lock": "yes"}, []),
    ({"infiniband_run_lock_max_age": "0", "infiniband_break_lock": False}, []),
])
def test_the_run_lock_settings_are_judged_in_the_preflight(values, says):
    """Issue 33, class 2: the run lock's own settings were judged only by the lock task, after the preflight passed."""
    problems = p.run_lock_problems(values)
    assert len(problems) == (1 if says else 0), problems
    for text in says:
        assert text in problems[0]


# ------------------------------------------------------------------ the action's own options (issue 22)
ROLES_LIST = "(firmware, gpudirect, ipoib, k8s_network, link_type, node_reboot, opensm, rdma_netns, rdma_stack, sriov, topology, verify)"


@pytest.mark.parametrize("value, expected", [
    (["sriov"], ["sriov"]), ("sriov", ["sriov"]), ("sriov, link_type", ["sriov", "link_type"]), ([" verify "], ["verify"]),
    ([], []), (("opensm",), ["opensm"]),
])
def test_role_names_accepted(value, expected):
    assert p.role_names(value, "roles", OPTIONS) == expected


@pytest.mark.parametrize("value, says", [
    ({"sriov": True}, "roles: {'sriov': True} is not accepted (a mapping); accepted: a list of roles of fabric.infiniband by "
                      "short name " + ROLES_LIST),
    (5, "roles: 5 is not accepted (a number)"),
    (True, "roles: True is not accepted (a boolean)"),
    ([["sriov"]], "roles[0]: ['sriov'] is not a role name; accepted"),
    (["sriov", None], "roles[1]: None is not a role name"),
    ([""], "roles[0]: '' is not a role name"),
    (["sriovs"], "roles: sriovs (did you mean sriov?) is no role of fabric.infiniband; accepted"),
    (["fabric.infiniband.sriov"], "roles: fabric.infiniband.sriov (did you mean sriov?) is no role"),
    (["nosuch", "zzz"], "roles: nosuch, zzz are no role of fabric.infiniband"),
])
def test_role_names_refused(value, says):
    with pytest.raises(ValueError) as err:
        p.role_names(value, "roles", OPTIONS)
    assert says in str(err.value), str(err.value)


def _action(args):
    from unittest.mock import MagicMock

    from ansible.parsing.dataloader import DataLoader
    from ansible.template import Templar

    task = MagicMock()
    task.args, task.async_val, task.check_mode, task.diff = args, 0, False, False
    return p.ActionModule(task, MagicMock(), MagicMock(), loader=DataLoader(), templar=Templar(loader=DataLoader()),
                          shared_loader_obj=None)


@pytest.mark.parametrize("args, says", [
    ({"roles": {"a": 1}}, "roles: {'a': 1} is not accepted (a mapping)"),
    ({"roles": [None]}, "roles[0]: None is not a role name"),
    ({"specs": {"a": 1}}, "specs: {'a': 1} is not accepted (a mapping)"),
    ({"specs": ["nosuch"]}, "specs: nosuch is no role of fabric.infiniband"),
    ({"specs": [["sriov"]]}, "specs[0]: ['sriov'] is not a role name"),
    ({"roles": ["sriov"], "specs": 5}, "specs: 5 is not accepted (a number)"),
])
def test_bad_options_fail_with_a_message_not_a_traceback(args, says):
    """Issue 22: a wrong type or an unknown role in roles/specs is a failed result naming the option, before anything is read."""
    result = _action(args).run(task_vars={"sriov_pf": []})
    assert result["failed"] and not result["changed"]
    assert result["msg"].startswith(says) and result["msg"].endswith(ROLES_LIST + ". Nothing was checked or changed."), result["msg"]
    assert "unknown" not in result  # the variables were not looked at


@pytest.mark.parametrize("args, roles", [({"roles": None}, sorted(OPTIONS)), ({"specs": None}, sorted(OPTIONS)), ({}, sorted(OPTIONS)),
                                         ({"roles": "sriov"}, ["sriov"]), ({"roles": ["sriov"], "specs": []}, ["sriov"])])
def test_null_means_the_default(args, roles):
    """null for roles is every role; null for specs none (a playbook's expression for a host in no group)."""
    result = _action(args).run(task_vars={"rdma_netns_mode": "bad"})
    assert not result.get("failed") and result["roles"] == roles and result["problems"] == []


def test_the_action_still_judges_names_and_values():
    result = _action({"roles": ["sriov"], "specs": "rdma_netns"}).run(task_vars={"rdma_netns_mode": "bad"})
    assert result["failed"] and result["problems"] == ["rdma_netns: value of rdma_netns_mode must be one of: exclusive, shared, got: bad"]
    result = _action({"roles": "sriov"}).run(task_vars={"sriov_pf": []})
    assert result["failed"] and [u["name"] for u in result["unknown"]] == ["sriov_pf"]
