# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The verify role's health gate (docs: plugins/modules/health_gate.py): the nodes that fail the fabric health check
drained in Slurm or tainted in Kubernetes, and returned when healthy, only those the collection took out.

Run once per play, delegated to the Slurm controller (``scheduler: slurm``) or to the host that reaches the
Kubernetes API (``scheduler: kubernetes``); reads every play host's fact ``infiniband_health`` of this run. What is
decided lives in ``plugin_utils/health.py`` (``gate_plan``); this file reads the schedulers and acts.
"""

from __future__ import annotations

from ansible_collections.fabric.infiniband.plugins.plugin_utils import health
from ansible_collections.fabric.infiniband.plugins.plugin_utils import node_state
from ansible_collections.fabric.infiniband.plugins.action.port_health import settings_of
from ansible_collections.fabric.infiniband.plugins.plugin_utils.role_step import RoleAction, StepFailed


class ActionModule(RoleAction):
    ROLE = "verify"
    OPTIONS = ("preflight", "scheduler")

    def _health(self):
        """host -> its fact infiniband_health of this run (hosts without one are not judged)."""
        hosts = self.var("ansible_play_hosts_all") or []
        out, missing = {}, []
        for host in hosts:
            fact = self.hostvar(host, "infiniband_health")
            if node_state.is_current(fact, run=self.run_id):
                out[host] = fact
            else:
                missing.append(host)
        if missing:
            self.warn("No fabric health of this run for %s: the gate leaves them as they are" % ", ".join(missing))
        return out

    def _slurm(self, found):
        listed = self.module("ansible.builtin.command", dict(argv=health.SINFO_ARGV), check_mode=False,
                             what="read Slurm's nodes (sinfo)")
        nodes = health.parse_sinfo(listed.get("stdout"))
        slurm = {}
        for host in found:
            name = host.split(".")[0]
            if name in nodes:
                slurm[host] = nodes[name]
        return slurm

    def _auth(self):
        s, auth = settings_of(self), {}
        if s.get("verify_health_kubeconfig"):
            auth["kubeconfig"] = s["verify_health_kubeconfig"]
        if s.get("verify_health_k8s_context"):
            auth["context"] = s["verify_health_k8s_context"]
        return auth

    def _taints(self, found):
        listed = self.module("kubernetes.core.k8s_info", dict(self._auth(), api_version="v1", kind="Node"), check_mode=False,
                             what="read the Kubernetes Nodes")
        nodes = dict((item["metadata"]["name"], (item.get("spec") or {}).get("taints") or [])
                     for item in listed.get("resources") or [])
        return dict((host, nodes[host]) for host in found if host in nodes), nodes

    def step(self):
        try:
            self._step()
        except StepFailed as exc:
            # the verify role runs the gate with failed_when: false and fails its report step with this
            self.returns(error=str(exc))
            raise

    def _step(self):
        s = settings_of(self)
        scheduler = self.arg("scheduler")
        if scheduler not in ("slurm", "kubernetes"):
            raise StepFailed("scheduler must be slurm or kubernetes, not %r" % (scheduler,))
        if self.preflight:
            self.refuse(health.check_settings(s))
            return
        if not s["verify_health_gate"]:
            self.returns(skipped_reason="verify_health_gate is false")
            return
        found = self._health()
        self.refuse(health.check_settings(s, len(found)))
        limit = health.max_drain(s.get("verify_health_max_drain", "10%"), len(found))[0]
        key = s.get("verify_health_taint_key") or health.DEFAULT_TAINT_KEY
        slurm = taints = None
        nodes = {}
        if scheduler == "slurm":
            slurm = self._slurm(found)
        else:
            taints, nodes = self._taints(found)
        plan = health.gate_plan(found, limit, slurm=slurm, taints=taints, taint_key=key)
        self.returns(scheduler=scheduler, max_drain=limit, plan=plan,
                     not_in_scheduler=sorted(set(found) - set(slurm if slurm is not None else taints)))
        if plan["refused"]:
            raise StepFailed(plan["refused"])
        check = self._task.check_mode
        for item in plan["drain"] + plan["resume"]:
            action = "drain" if "reason" in item else "resume"
            self.changed()
            if check:
                continue
            self.module("ansible.builtin.command", dict(argv=health.slurm_argv(item["node"], action, item.get("reason"))),
                        what="%s %s in Slurm" % (action, item["node"]), label="%s %s" % (action, item["node"]))
        for item in plan["taint"] + plan["untaint"]:
            code = item.get("code")
            self.changed()
            if check:
                continue
            definition = dict(apiVersion="v1", kind="Node", metadata=dict(name=item["host"]),
                              spec=dict(taints=health.taints_after(nodes.get(item["host"]), key, code)))
            self.module("kubernetes.core.k8s", dict(self._auth(), state="patched", merge_type=["merge"], definition=definition),
                        what="%s the Node %s" % ("taint" if code else "untaint", item["host"]),
                        label="%s %s" % ("taint" if code else "untaint", item["host"]))
        for item in plan["left"]:
            self.warn("%s: %s" % (item["host"], item["why"]))
