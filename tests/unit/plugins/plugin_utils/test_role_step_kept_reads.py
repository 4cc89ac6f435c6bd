# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""plugin_utils/role_step.py: what the run's preflight reads serves the role steps after it in the same run.

- RoleAction.hca: the preflight reads the pending-action record with the adapters; a record proved writable says so, and a
  step that needs it writable does not read again; one not proved is read again.
- RoleAction.kept_read: the preflight keeps a reading (the fact infiniband_preflight_reads); the role's step takes it once,
  only with the same options and in the same run.

The node is replaced: ``_execute_module`` records the module runs and answers as the module would."""

from __future__ import annotations

import pytest

from ansible_collections.fabric.infiniband.plugins.plugin_utils import role_step
from ansible_collections.fabric.infiniband.plugins.plugin_utils.role_step import RoleAction
from ansible_collections.fabric.infiniband.tests.unit.plugins.action.step_harness import bare_step

RUN = "ctl:1:1"


class _Step(RoleAction):
    ROLE = "rdma_stack"


def _action(facts, preflight=False, answers=None):
    action = bare_step(_Step, {"inventory_hostname": "node01"}, facts=facts, preflight=preflight, run_id=RUN)
    runs = []

    def execute(module_name, module_args, task_vars):
        runs.append((module_name, dict(module_args)))
        return dict((answers or {}).get(module_name) or {}, changed=False)

    action._execute_module = execute
    return action, runs


def _hca_answer(pending_writable):
    pending = {"entries": {}, "tried": [], "run_id": RUN}
    if pending_writable:
        pending["writable"] = True
    return {"ansible_facts": {"infiniband_hca": {"hcas": [], "run_id": RUN}, "infiniband_hca_stale": False,
                              "infiniband_pending": pending, "infiniband_pending_stale": False}}


def test_the_preflight_reads_the_record_with_the_adapters():
    action, runs = _action({}, preflight=True, answers={"fabric.infiniband.hca_info": _hca_answer(False)})
    action.hca()
    assert runs == [("fabric.infiniband.hca_info", {"run_id": RUN, "pending": True})]
    assert action.fact("infiniband_pending")["run_id"] == RUN


@pytest.mark.parametrize("proved, reads", [(True, 0), (False, 1)])
def test_a_step_that_needs_the_record_writable_reads_again_unless_this_run_proved_it(proved, reads):
    facts = dict(_hca_answer(proved)["ansible_facts"])
    action, runs = _action(facts, answers={"fabric.infiniband.hca_info": _hca_answer(True)})
    action.hca(pending=True, writable=True)
    assert len(runs) == reads
    if reads:
        assert runs[0][1] == {"run_id": RUN, "pending": True, "pending_writable": True}


def test_a_reading_of_another_run_is_read_again():
    facts = dict(_hca_answer(True)["ansible_facts"])
    facts["infiniband_hca"] = dict(facts["infiniband_hca"], run_id="ctl:2:2")
    action, runs = _action(facts, answers={"fabric.infiniband.hca_info": _hca_answer(True)})
    action.hca(pending=True, writable=True)
    assert len(runs) == 1


def _read(action, match, answer):
    return action.kept_read("packages", match, what="read the packages",
                            read=lambda: action.module("node_facts", dict(match), check_mode=False))


def test_the_preflight_keeps_a_reading_and_the_step_takes_it_once():
    answer = {"packages": {"rdma-core": "50.0"}, "ansible_facts": {"ansible_distribution": "Debian"}, "invocation": {}}
    preflight, runs = _action({}, preflight=True, answers={"fabric.infiniband.node_facts": answer})
    assert _read(preflight, {"packages": ["rdma-core"]}, answer)["packages"] == {"rdma-core": "50.0"}
    assert len(runs) == 1
    kept = preflight._out_facts[role_step.KEPT_READS]
    assert kept["run_id"] == RUN
    # what the module published went to the host's facts already; Ansible's own keys are not kept
    assert set(kept["reads"]["rdma_stack:packages"]["result"]) == {"packages", "changed"}

    step, runs = _action(preflight._out_facts, answers={"fabric.infiniband.node_facts": answer})
    assert _read(step, {"packages": ["rdma-core"]}, answer)["packages"] == {"rdma-core": "50.0"}
    assert runs == []
    assert step._out_facts[role_step.KEPT_READS]["reads"] == {}
    # taken once: the same step again (a later play of the run) reads the node
    again, runs = _action(step._out_facts, answers={"fabric.infiniband.node_facts": answer})
    _read(again, {"packages": ["rdma-core"]}, answer)
    assert len(runs) == 1


@pytest.mark.parametrize("change", ["options", "run"])
def test_a_kept_reading_with_other_options_or_of_another_run_is_not_taken(change):
    answer = {"packages": {"rdma-core": "50.0"}}
    preflight, runs = _action({}, preflight=True, answers={"fabric.infiniband.node_facts": answer})
    _read(preflight, {"packages": ["rdma-core"]}, answer)
    facts = dict(preflight._out_facts)
    match = {"packages": ["rdma-core"]}
    if change == "options":
        match = {"packages": ["rdma-core", "perftest"]}
    else:
        facts[role_step.KEPT_READS] = dict(facts[role_step.KEPT_READS], run_id="ctl:2:2")
    step, runs = _action(facts, answers={"fabric.infiniband.node_facts": answer})
    _read(step, match, answer)
    assert len(runs) == 1
