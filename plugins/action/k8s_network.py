# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The k8s_network role's one step: check the input, render every manifest, then make or remove the objects through the
Kubernetes API (docs: plugins/modules/k8s_network.py).

What is refused, the values of the templates and what is sent in which order: ``plugin_utils/k8s_network.py``; this file
renders the role's templates and runs kubernetes.core's ``k8s`` and ``k8s_info`` (their action plugins, as a task of its
own would) in the task's check mode (a server-side dry run) and diff mode. The kubeconfig is a path handed to them; its
content never enters a variable or the result.
"""

from __future__ import annotations

import os

from ansible.template import trust_as_template
from ansible.utils.display import Display

from ansible_collections.fabric.infiniband.plugins.plugin_utils import k8s_network as kn
from ansible_collections.fabric.infiniband.plugins.plugin_utils.role_step import ROLES_DIR, RoleAction

display = Display()

PREFLIGHT_TAG = "k8s_network_preflight"
APPLY_TAG = "k8s_network_apply"


class _Context:
    """What the checks see of the run (the shape of plugin_utils/controller_checks.py's Context)."""

    def __init__(self, action):
        self._action = action
        self.host = action.host

    def var(self, name, default=None):
        if name in self._action.settings:
            return self._action.settings[name]
        return self._action.var(name, default)

    @property
    def groups(self):
        return self._action.var("groups") or {}

    def hostvar(self, host, name, default=None):
        return self._action.hostvar(host, name, default)

    def hostvalues(self, host, names):
        return self._action.hostvalues(host, names)

    def fact(self, host, name):
        facts = self._action.hostvar(host, "ansible_facts") or {}
        return facts.get(name) if hasattr(facts, "get") else None


class ActionModule(RoleAction):
    ROLE = kn.ROLE
    # what the step says besides its changes (a CRD that stays, NADs a dry run cannot send), one sentence each
    _notes_text = None

    # --- helpers -------------------------------------------------------------------------------------------------

    def _checks_only(self):
        """--tags k8s_network_preflight (without k8s_network_apply), or --skip-tags k8s_network_apply: the checks alone."""
        run_tags = set(self.var("ansible_run_tags") or ())
        skip_tags = set(self.var("ansible_skip_tags") or ())
        if APPLY_TAG in skip_tags:
            return True
        return PREFLIGHT_TAG in run_tags and APPLY_TAG not in run_tags and "all" not in run_tags

    def _kube(self, args):
        """``args`` with the cluster's kubeconfig and context, where given (the path only: the module reads the file)."""
        args = dict(args)
        for option in ("kubeconfig", "context"):
            value = self.settings.get("k8s_network_%s" % option)
            if value:
                args[option] = value
        return args

    def _call(self, module, args, what, read=False):
        """kubernetes.core's ``module`` (its action plugin, then the module on the host that runs the role), in the task's check
        and diff mode; a read runs for real in check mode too."""
        saved = self._task.action, self._task.check_mode
        self._task.action = "kubernetes.core.%s" % module
        if read:
            self._task.check_mode = False
        try:
            return self.run_action("kubernetes.core.%s" % module, self._kube(args), what)
        finally:
            self._task.action, self._task.check_mode = saved

    def _find(self, api_version, kind, what, name=None, selector=None):
        args = dict(api_version=api_version, kind=kind)
        if name:
            args["name"] = name
        if selector:
            args["label_selectors"] = [selector]
        return self._call("k8s_info", args, what, read=True).get("resources") or []

    def _wait(self):
        return dict(wait=not self._task.check_mode, wait_timeout=self.settings["k8s_network_wait_timeout"], wait_sleep=1)

    def _note(self, text):
        self._notes_text.append(text)
        display.display("%s: %s" % (self.host, text))

    def _kubeconfig(self):
        """The kubeconfig given is a file on the host that runs the role (only its path is looked at)."""
        path = self.settings.get("k8s_network_kubeconfig")
        if not path:
            return
        if self._connection.transport == "local" and not self._play_context.become:
            found = os.path.isfile(path)
        else:
            stat = self.module("ansible.builtin.stat", dict(path=path, get_checksum=False), what="look for the kubeconfig",
                               check_mode=False).get("stat") or {}
            found = stat.get("exists") and not stat.get("isdir")
        if not found:
            self.refuse(["k8s_network_kubeconfig: %s is not a file on %s" % (path, self.host)])

    def _render(self, names):
        """The objects of the role's templates ``names``, rendered as the template lookup renders them."""
        variables = dict(self._vars)
        variables.update(self.settings)
        variables.update(kn.template_vars(self.settings))
        templar = self._templar.copy_with_new_env(available_variables=variables)
        texts = []
        for name in names:
            path = os.path.join(ROLES_DIR, kn.ROLE, "templates", name)
            texts.append(templar.template(trust_as_template("{{ lookup('ansible.builtin.template', %r) }}" % path)))
        return kn.objects(texts)

    def _apply(self, batches, what, **extra):
        for batch in batches:
            self._call("k8s", dict(extra, state="present", definition=kn.definition(batch)),
                       "%s (%s)" % (what, kn.batch_names(batch)))

    def _remove(self, objs, what, **extra):
        """Delete ``objs`` in one module run (each alone with --diff, as _apply does): one run of the module per object
        cost about a second each on the controller, most of it the Kubernetes client's import."""
        for batch in kn.batches([kn.reference(obj) for obj in objs], bool(self._task.diff)):
            self._call("k8s", dict(extra, state="absent", definition=kn.definition(batch)),
                       "%s %s" % (what, ", ".join(kn.reference_text(obj) for obj in batch)))

    # --- the two states ------------------------------------------------------------------------------------------

    def _present(self, crds, workloads, nads):
        """CRDs first, each waited for until Established; the workloads; the NADs (where their CRD exists), then the NADs
        of the role that are no longer listed removed."""
        diff = bool(self._task.diff)
        check = bool(self._task.check_mode)
        self._apply(kn.batches(crds, diff), "make the CustomResourceDefinitions and wait until they are Established",
                    wait_condition={"type": "Established", "status": "True"}, **self._wait())
        # a real run that just made the NAD CRD knows it exists; a dry run on a cluster without it cannot send NADs
        crd_known = not check and any(c["metadata"]["name"] == kn.NAD_CRD for c in crds)
        if not crd_known and not self._find(kn.CRD_API, "CustomResourceDefinition", "look for the NetworkAttachmentDefinition CRD",
                                            name=kn.NAD_CRD):
            self._apply(kn.batches(workloads, diff), "make the service accounts, RBAC, ConfigMaps, DaemonSets and the reconciler")
            if nads:
                self._note("the CRD %s does not exist yet; a real run would make %s" % (kn.NAD_CRD, kn.batch_names(nads)))
            return
        # one module run for the workloads and the networks (in this order), or one per object with --diff
        self._apply(kn.batches(workloads + nads, diff),
                    "make the service accounts, RBAC, ConfigMaps, DaemonSets, the reconciler and the NetworkAttachmentDefinitions")
        found = self._find(kn.NAD_API, "NetworkAttachmentDefinition", "find the NetworkAttachmentDefinitions this role made",
                           selector=kn.SELECTOR)
        stale = kn.stale_nads(found, nads)
        if stale:
            self._remove(stale, "remove, no longer listed,")

    def _absent(self):
        """The objects with the role's label, in the reverse order of their making; then each CRD of the role that no object
        of another owner uses (removing it would remove those too)."""
        made = []
        for api_version, kind in kn.KINDS:
            made.extend(self._find(api_version, kind, "find the %ss this role made" % kind, selector=kn.SELECTOR))
        if made:
            self._remove(made, "remove", **self._wait())
        unused = []
        for crd in self._find(kn.CRD_API, "CustomResourceDefinition", "find the CustomResourceDefinitions this role made",
                              selector=kn.SELECTOR):
            api_version, kind = kn.crd_users_query(crd)
            users = self._find(api_version, kind, "find the %ss the role did not make" % kind,
                               selector=kn.SELECTOR.replace("=", "!="))
            if users:
                self._note("%s stays: %d object(s) of its kind were not made by this role" % (crd["metadata"]["name"], len(users)))
                continue
            unused.append(crd)
        if unused:
            self._remove(unused, "remove", **self._wait())

    # --- the step ------------------------------------------------------------------------------------------------

    def step(self):
        self._notes_text = []
        s = self.settings
        # the nodes' published state is the role's own check: in the run's preflight, this run's node roles may still change it
        ctx = _Context(self)
        nodes = None if self.preflight else kn.node_facts(s.get("k8s_network_nodes"), self.hostvar, ctx.fact)
        problems, nads = kn.checks(ctx, s, nodes)
        self.refuse(problems)
        if self.preflight:
            return
        self._kubeconfig()
        crd_templates, workload_templates = kn.templates(s)
        crds, workloads = self._render(crd_templates), self._render(workload_templates)
        self.returns(objects=["%s %s" % (o["kind"], o["metadata"]["name"]) for o in crds + workloads + nads])
        if self._checks_only():
            return
        if s["k8s_network_state"] == "absent":
            self._absent()
        else:
            self._present(crds, workloads, nads)
        if self._notes_text:
            self.returns(msg="; ".join(self._notes_text))
