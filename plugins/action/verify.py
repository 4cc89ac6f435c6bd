# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The verify role's two steps (docs: plugins/modules/verify.py).

- per node: the traffic pairs checked, the node read (``hca_info`` with ``pending``, unless this run has current facts),
  and the fabric's topology read on one host (``fabric_topology_info``), published there as the run-stamped fact
  ``infiniband_fabric`` for the topology role; the task's result (registered by the role as ``__verify_step``) holds what
  the report needs of the node;
- ``report: true`` (``run_once``): every node's checks (filter ``verify_checks``), the report's three files written on the
  controller where they differ, the table shown, and the play failed with one summary when a check fails. A node that left
  the play before its read is reported as failed (in which step, with its message) or unreachable, from the results its
  tasks registered (``plugin_utils/verify.py: stopped``). The rules of ``firmware_versions`` that matched no card of the
  run (the firmware step's fact ``infiniband_firmware_unmatched``, where it is this run's) get a line each under the tables.

Where the checks and the files are decided: ``plugin_utils/verify.py``.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Mapping

from ansible.errors import AnsibleError

from ansible_collections.fabric.infiniband.plugins.action import port_health
from ansible_collections.fabric.infiniband.plugins.plugin_utils import health
from ansible_collections.fabric.infiniband.plugins.plugin_utils import topology
from ansible_collections.fabric.infiniband.plugins.plugin_utils import traffic
from ansible_collections.fabric.infiniband.plugins.plugin_utils import verify
from ansible_collections.fabric.infiniband.plugins.plugin_utils.role_step import RoleAction
from ansible_collections.fabric.infiniband.plugins.plugin_utils.role_step import StepFailed

STEP = verify.STEP
# the diff of a report file is shown up to this size (as ansible.builtin.copy's max_file_size_for_diff)
DIFF_LIMIT = 104448


class ActionModule(RoleAction):
    ROLE = "verify"
    OPTIONS = ("preflight", "report", "traffic_plan")

    @property
    def reporting(self):
        return verify.truthy(self._task.args.get("report", False))

    @property
    def planning(self):
        return verify.truthy(self._task.args.get("traffic_plan", False))

    def _traffic_plan(self, s):
        """The traffic runs, their HCAs, TCP ports, batches and thresholds, from every node's read of this run (what the step
        registered as ``__verify_step``); pairs that cannot run are refused before any traffic. The plan carries a ``stamp``
        of its own: the results the nodes keep name it, so that a second traffic step in one run reads only its own."""
        nodes = {}
        for host in self.var("ansible_play_hosts_all") or []:
            node = (self.hostvar(host, "__verify_step", {}) or {}).get("node")
            nodes[host] = (node.get("traffic") if isinstance(node, Mapping) else None) or {}
        try:
            plan = traffic.plan(nodes, pairs=s.get("verify_traffic_pairs") or [], port=int(s.get("verify_traffic_port", 18515)))
        except (TypeError, ValueError) as exc:
            raise StepFailed("verify_traffic_pairs: %s" % exc) from exc
        self.refuse(plan["problems"], suffix="No traffic moved.")
        self.returns(stamp=uuid.uuid4().hex, **plan)

    def _topology(self, environment):
        """ibnetdiscover on this host; a failure is reported (the picture says why), not raised."""
        saved_env, saved_check = self._task.environment, self._task.check_mode
        if environment:
            self._task.environment = list(saved_env or []) + [dict(environment)]
        self._task.check_mode = False
        try:
            result = self._execute_module(module_name="fabric.infiniband.fabric_topology_info", module_args={},
                                          task_vars=self._vars)
        finally:
            self._task.environment, self._task.check_mode = saved_env, saved_check
        self._ran.append(dict(module="fabric.infiniband.fabric_topology_info", label="discover the fabric topology",
                              changed=False, failed=bool(result.get("failed"))))
        result.pop("ansible_facts", None)
        fact = topology.fabric_fact(result, self.run_id, self.host)
        if fact:
            # the fabric for the topology role of this run (plugin_utils/topology.py: current_fabric), which then does not
            # discover it again
            self.publish(infiniband_fabric=fact)
        return result

    def _read_node(self, s):
        hca = self.hca(pending=True, what="read the adapters and what the node waits for")
        node = dict(hca=hca, pending=self.fact("infiniband_pending"), expect=verify.expect(self.var),
                    traffic=verify.traffic_node(s, hca))
        checks = port_health.settings_of(self)
        if checks["verify_health"]:
            # the ports judged (plugins/plugin_utils/health.py), published as the fact infiniband_health
            node["health"] = port_health.judge_node(self, checks)
        self.returns(node=node)
        sms = verify.sm_hosts(self.var("ansible_play_hosts_all"), self.var("groups"))
        host = verify.topology_host(s.get("verify_topology_host"), self.var("ansible_play_hosts"), sms)
        if self.host == host:
            self.returns(topology=self._topology(s.get("verify_tool_environment")), topology_host=host)

    def _traffic_rows(self, s, hosts):
        if not verify.truthy(s.get("verify_traffic", False)) or "__verify_traffic" not in self._vars:
            return None
        the_plan = self.var("__verify_traffic") or {}
        results = []
        for host in hosts:
            results.extend(r for r in self.hostvar(host, "__verify_traffic_results", []) or []
                           if isinstance(r, Mapping) and r.get("plan") == the_plan.get("stamp"))
        why = ("check mode" if self._task.check_mode
               else "verify_traffic_plan_only" if verify.truthy(s.get("verify_traffic_plan_only", False)) else None)
        return traffic.rows(the_plan, results=results, planned_why=why)

    def _registered(self, host):
        """The results ``host``'s tasks registered that say failed or unreachable: Ansible keeps a task's registered result
        whatever its outcome (the strategy registers after handling a failed or unreachable result), and hostvars holds it
        for the rest of the run. Read raw (no templating: a registered result is data)."""
        hostvars = self._vars.get("hostvars")
        try:
            values = hostvars.raw_get(host) if hasattr(hostvars, "raw_get") else (hostvars or {}).get(host)
        except AnsibleError:
            return {}
        if not isinstance(values, Mapping):
            return {}
        return dict((name, value) for name, value in values.items()
                    if isinstance(value, Mapping) and (value.get("failed") is True or value.get("unreachable") is True))

    def _report(self, s):
        hosts = list(self.var("ansible_play_hosts_all") or [])
        groups = self.var("groups") or {}
        sms = verify.sm_hosts(hosts, groups)
        steps = dict((host, self.hostvar(host, STEP) or {}) for host in hosts)
        # hosts that failed or were unreachable before the report have no node: they fail every check, and their row says
        # which, and where (from what their tasks registered)
        nodes = dict((host, steps[host].get("node") or {}) for host in hosts)
        still = set(self.var("ansible_play_hosts") or [])
        stops = dict((host, verify.stopped(self._registered(host))) for host in hosts if host not in still and not nodes[host])
        topology_host = next((host for host in hosts if "topology" in steps[host]), None)
        partitions = (self.hostvar(sms[0], "opensm_partitions", []) if sms else self.var("opensm_partitions", [])) or []
        unmatched = verify.unmatched_firmware(
            dict((host, (self.hostvar(host, "ansible_facts", {}) or {}).get("infiniband_firmware_unmatched")) for host in hosts),
            self.run_id)
        the_report = verify.report(nodes, topology=steps[topology_host]["topology"] if topology_host else None,
                                   topology_host=topology_host or verify.topology_host(
                                       s.get("verify_topology_host"), self.var("ansible_play_hosts"), sms),
                                   partitions=partitions, groups=groups, sms=sms, rows=self._traffic_rows(s, hosts),
                                   stops=stops, unmatched=unmatched)
        contents = verify.files(the_report)
        directory = verify.report_dir(s.get("verify_report_dir") or "fabric-report", os.environ.get("PWD"),
                                      self.var("playbook_dir"))
        # written in check mode too: the report is the point of a check-mode run
        written = []
        for name, content, before in verify.stale(directory, contents):
            path = os.path.join(directory, name)
            verify.write(directory, name, content)
            written.append(path)
            self.changed()
            if self._task.diff:
                diff = dict(before_header=path, after_header=path)
                if len(content) <= DIFF_LIMIT and len(before or "") <= DIFF_LIMIT:
                    diff.update(before=before or "", after=content)
                self._diff.append(diff)
        self.returns(report=contents[0][1].splitlines(), report_dir=directory, written=written,
                     summary=the_report.get("summary"), ok=the_report.get("ok"))
        # only the loop's results are templated: an empty loop's result also carries ansible-core's deprecated
        # skipped_reason, whose templating prints a deprecation warning
        registered = self._vars.get("__verify_health_gate")
        results = self._templar.template(registered.get("results") or []) if isinstance(registered, Mapping) else []
        gate = [r.get("error") for r in results if isinstance(r, Mapping) and r.get("error")]
        if gate:
            # the health gate refused (a fabric-wide fault suspected) or failed: the run fails, verify_fail or not
            self.returns(failed=True, msg=["health gate: %s" % error for error in gate] + (verify.failure(the_report) or []))
            return
        message = verify.failure(the_report)
        if message and verify.truthy(s.get("verify_fail", True)):
            self.returns(failed=True, msg=message)
        else:
            self.returns(msg=the_report.get("summary"))

    def step(self):
        s = self.settings
        if self.reporting:
            self._report(s)
            return
        if self.planning:
            self._traffic_plan(s)
            return
        hosts = self.var("groups", {}).get("ib_nodes", []) if self.preflight else self.var("ansible_play_hosts_all")
        self.refuse(verify.pair_problems(s, hosts) + traffic.threshold_problems(s) + [traffic.timeout_problem(s)]
                    + health.check_settings(port_health.settings_of(self)))
        if self.preflight:
            return
        self._read_node(s)

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        if self.reporting and "report" in result:
            # shown as ansible.builtin.debug shows its message: the table is what the play prints
            result["_ansible_verbose_always"] = True
            if not result.get("ran"):
                result.pop("ran", None)
        return result
