# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The topology role's one step: the fabric's tree to Slurm's topology.conf and Kubernetes node labels
(docs: plugins/modules/topology.py).

What is decided (the tree, the file, the labels, the reports) lives in ``plugin_utils/topology.py``; this file reads
the fabric, writes through ansible.builtin.copy (check mode, diff, backup), runs scontrol, and patches the Nodes.
"""

from __future__ import annotations

import re

from ansible_collections.fabric.infiniband.plugins.plugin_utils import topology
from ansible_collections.fabric.infiniband.plugins.plugin_utils.role_step import RoleAction, StepFailed


def expand_hostlist(text):
    """Slurm's compressed host list (``node[01-03,05],gpu1``) as names."""
    out, depth, token = [], 0, ""
    for char in (text or "") + ",":
        if char == "," and depth == 0:
            if token:
                found = re.match(r"^(.*?)\[([^\]]+)\](.*)$", token)
                if not found:
                    out.append(token)
                else:
                    head, ranges, tail = found.groups()
                    for part in ranges.split(","):
                        low, _sep, high = part.partition("-")
                        for number in range(int(low), int(high or low) + 1):
                            out.append("%s%0*d%s" % (head, len(low), number, tail))
            token = ""
            continue
        depth += {"[": 1, "]": -1}.get(char, 0)
        token += char
    return out


def parse_show_topology(text):
    """``scontrol show topology`` as [level {name: sorted children}] (nodes on level 0, switches above)."""
    levels = {}
    for line in (text or "").splitlines():
        fields = dict(word.partition("=")[::2] for word in line.split() if "=" in word)
        if "SwitchName" not in fields or not fields.get("Level", "").isdigit():
            continue
        level = int(fields["Level"])
        children = expand_hostlist(fields.get("Nodes") if level == 0 else fields.get("Switches"))
        levels.setdefault(level, {})[fields["SwitchName"]] = sorted(children)
    return [levels.get(i, {}) for i in range(max(levels) + 1)] if levels else []


def _port_guids(hca_fact):
    guids = []
    for hca in (hca_fact or {}).get("hcas") or []:
        for port in hca.get("ports") or []:
            if port.get("port_guid"):
                guids.append(port["port_guid"])
    return guids


class ActionModule(RoleAction):
    ROLE = "topology"

    def _current_fabric(self):
        """``(host, fact)``: a current fact infiniband_fabric of any host (the verify role publishes it where it discovered
        the fabric in this run), topology_discover_from's first, or ``(None, None)``."""
        candidates = topology.fabric_candidates(self.settings.get("topology_discover_from"), self.host, self._vars.get("groups"))
        checked = self.var("__topology_check") if not self.preflight else None
        if isinstance(checked, dict) and "fabric_from" in checked:
            # the role's first task looked (and its discovery ran, or was skipped for the host it found): that host only
            candidates = [checked["fabric_from"]] if checked["fabric_from"] else []

        def read(host):
            return self.fact("infiniband_fabric") if host == self.host else self.hostvar(host, "infiniband_fabric")

        return topology.current_fabric(candidates, read, run=self.run_id)

    def _fabric(self):
        """The fabric: a current fact infiniband_fabric (published in this run, on any host), else this play's discovery."""
        host, fact = self._current_fabric()
        if fact:
            return fact, "fact infiniband_fabric of %s (discovered in this run)" % host
        found = self.var("__topology_discovery") or {}
        if found.get("failed") or found.get("skipped") or "switches" not in found:
            raise StepFailed("No fabric to place the hosts in: set topology_discover_from to an InfiniBand node whose port is up "
                             "(%s). Nothing was changed." % (found.get("msg") or "no discovery ran"))
        return found, "ibnetdiscover on %s" % self.var("topology_discover_from")

    def _slurm(self, plan):
        s = self.settings
        if not plan["levels"] or not plan["levels"][0]:
            self.refuse(["No host of topology_hosts was found in the fabric: topology.conf would list no switch "
                         "(check topology_map_by and topology_hca_name_pattern against the fabric's node descriptions)"])
        path = s.get("topology_slurm_conf_path", "/etc/slurm/topology.conf")
        task = self._task.copy()
        task.args = dict(content=plan["conf"], dest=path, mode="0644", owner="root", group="root",
                         backup=bool(s.get("topology_slurm_backup")))
        copy = self._shared_loader_obj.action_loader.get("ansible.builtin.copy", task=task, connection=self._connection,
                                                         play_context=self._play_context, loader=self._loader,
                                                         templar=self._templar, shared_loader_obj=self._shared_loader_obj)
        written = copy.run(task_vars=self._vars)
        self._ran.append(dict(module="ansible.builtin.copy", label="write %s" % path, changed=bool(written.get("changed")),
                              failed=bool(written.get("failed"))))
        if written.get("failed"):
            raise StepFailed("write %s: %s" % (path, written.get("msg")))
        if written.get("diff") and self._task.diff:
            self._diff.extend(written["diff"] if isinstance(written["diff"], list) else [written["diff"]])
        changed = bool(written.get("changed"))
        if changed:
            self.changed()
        self.returns(slurm=dict(path=path, changed=changed, backup_file=written.get("backup_file")))
        if self._task.check_mode:
            return
        if changed:
            self.module("ansible.builtin.command", dict(argv=["scontrol", "reconfigure"]), what="scontrol reconfigure")
        shown = self._read(["scontrol", "show", "topology"])
        seen = parse_show_topology(shown.get("stdout"))
        wanted = [level for level in plan["levels"] if level]
        self.returns(slurm=dict(path=path, changed=changed, backup_file=written.get("backup_file"), shown=shown.get("stdout_lines")))
        if seen != wanted:
            self.refuse(["Slurm does not show the topology written to %s: scontrol show topology gives %r, the fabric %r "
                         "(see slurmctld's log)" % (path, seen, wanted)], suffix=None)

    def _read(self, argv):
        """A command that only reads (run in check mode too, never ``changed``)."""
        saved = self._task.check_mode
        self._task.check_mode = False
        try:
            result = self._execute_module(module_name="ansible.builtin.command", module_args=dict(argv=argv), task_vars=self._vars)
        finally:
            self._task.check_mode = saved
        self._ran.append(dict(module="ansible.builtin.command", label=" ".join(argv), changed=False,
                              failed=bool(result.get("failed"))))
        if result.get("failed") or result.get("unreachable"):
            raise StepFailed("%s: %s" % (" ".join(argv), result.get("stderr") or result.get("msg")))
        return result

    def _k8s(self, plan, hosts):
        s = self.settings
        auth = {}
        if s.get("topology_kubeconfig"):
            auth["kubeconfig"] = s["topology_kubeconfig"]
        if s.get("topology_k8s_context"):
            auth["context"] = s["topology_k8s_context"]
        keys = [k for k in (s.get("topology_k8s_labels") or {}).values() if k]
        listed = self.module("kubernetes.core.k8s_info", dict(auth, api_version="v1", kind="Node"), check_mode=False,
                             what="read the Kubernetes Nodes")
        existing = dict((item["metadata"]["name"], item["metadata"]) for item in listed.get("resources") or [])
        patched, absent = [], []
        for host in sorted(set(hosts) | set(plan["labels"])):
            if host not in existing:
                absent.append(host)
                continue
            meta = existing[host]
            patch = topology.label_patch(meta.get("labels"), meta.get("annotations"), plan["labels"].get(host, {}), keys)
            if patch is None:
                continue
            definition = dict(apiVersion="v1", kind="Node", metadata=dict(patch["metadata"], name=host))
            self.module("kubernetes.core.k8s", dict(auth, state="patched", merge_type=["merge"], definition=definition),
                        what="label the Node %s" % host, label="label %s" % host)
            patched.append(host)
        self.returns(k8s=dict(labelled=patched, nodes_not_in_kubernetes=absent))
        if absent:
            self.warn("No Kubernetes Node for: %s" % ", ".join(absent))

    def step(self):
        s = self.settings
        problems = topology.check(s)
        hosts = s.get("topology_hosts") or []
        if not isinstance(hosts, list) or not all(isinstance(h, str) for h in hosts):
            problems.append("topology_hosts must be a list of inventory host names, got %r" % (hosts,))
        self.refuse(problems)
        if self.preflight:
            # the checks alone, before the discovery and any change (the role's first task, playbooks/preflight.yml); and
            # where a current fact infiniband_fabric is, so that the role's discovery is skipped (its when)
            self.returns(fabric_from=self._current_fabric()[0])
            return
        fabric, source = self._fabric()
        guids = None
        if s.get("topology_map_by") == "port_guid":
            guids = dict((host, _port_guids(self.hostvar(host, "infiniband_hca"))) for host in hosts)
        plan = topology.plan(fabric, hosts, s, guids=guids)
        self.returns(source=source, levels=plan["levels"], conf=plan["conf"], labels=plan["labels"],
                     missing=plan["missing"], unknown=plan["unknown"], multi=plan["multi"])
        if plan["missing"]:
            message = "Not found in the fabric: %s" % ", ".join(plan["missing"])
            if s.get("topology_fail_on_missing"):
                self.refuse([message + " (topology_fail_on_missing)"])
            self.warn(message)
        if plan["unknown"]:
            self.warn("In the fabric but not in topology_hosts: %s" % ", ".join(plan["unknown"]))
        groups = self._vars.get("groups") or {}
        if self.host in (groups.get(s.get("topology_slurm_group") or "") or []):
            self._slurm(plan)
        if self.host in (groups.get(s.get("topology_k8s_group") or "") or []):
            self._k8s(plan, hosts)
