# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The ipoib role's one step: checks, plan, duplicate addresses across the inventory, the network stack, its files, the
interfaces brought up now (docs: plugins/modules/ipoib.py).

What is decided and how it is named: ``plugin_utils/ipoib.py``; this file runs the modules in that order. A run that changes
nothing runs hca_info (unless this run read the adapters already), one systemctl show (ipoib_network_stack auto), one find for
other configurations of the interfaces, one find that lists the role's files with their checksums (a file is templated only
where it differs from what the role renders), and one ip -json address show (ifupdown: ifquery --state and the interfaces
file too).
"""

from __future__ import annotations

import base64
import time

from ansible.module_utils.parsing.convert_bool import boolean
from ansible.plugins.filter.core import to_uuid
from ansible.template import trust_as_template
try:
    from ansible.plugins.action import VariableLayer
except ImportError:  # ansible-core before 2.21: the fact alone
    VariableLayer = None

from ansible_collections.fabric.infiniband.plugins.plugin_utils import controller_checks
from ansible_collections.fabric.infiniband.plugins.plugin_utils import ipoib
from ansible_collections.fabric.infiniband.plugins.plugin_utils.role_step import RoleAction, StepFailed

# the inventory's settings of another host that the duplicate check reads (never its other variables: they may hold secrets)
ASKED = ("ipoib_config", "ipoib_mtu", "ipoib_mode")
# how long the stack may take to apply before ip applies what is still missing (attempts, one second apart)
ATTEMPTS = 6


class ActionModule(RoleAction):
    ROLE = ipoib.ROLE

    # --- helpers -------------------------------------------------------------------------------------------------

    def _read(self, name, args, what):
        """A read on the node (the same in check mode) whose failure the step judges: the module's result as it is."""
        saved = self._task.check_mode
        self._task.check_mode = False
        try:
            result = self._execute_module(module_name=name, module_args=dict(args), task_vars=self._vars)
        finally:
            self._task.check_mode = saved
        self._ran.append(dict(module=name, label=what, changed=False, failed=bool(result.get("failed"))))
        if result.get("unreachable"):
            raise StepFailed("%s: %s" % (what, result.get("msg")))
        return result

    def _command(self, argv, what):
        """A command that changes the node; in check mode only announced."""
        self.changed()
        if self._task.check_mode:
            self._ran.append(dict(module="ansible.builtin.command", label=what, changed=True, failed=False))
            return
        self.module("ansible.builtin.command", dict(argv=argv), what=what)

    def _render(self, src, variables):
        """A template of the role's templates/, rendered as the template lookup renders it."""
        templar = self._templar.copy_with_new_env(available_variables=dict(self._vars, **variables))
        return templar.template(trust_as_template("{{ lookup('ansible.builtin.template', '%s') }}" % src))

    # --- the parts of the step -----------------------------------------------------------------------------------

    def _duplicates(self, entries):
        """An address of this host used by another interface: of this host, of the other hosts of the play (planned from
        their inventory here: their own steps run beside this one), of the inventory's other hosts (what they published,
        else what their inventory asks)."""
        if not any(link["addresses"] for link in ipoib.links(entries)):
            return
        hostvars = self._vars.get("hostvars") or {}
        play = [h for h in self._vars.get("ansible_play_hosts") or [] if h in hostvars and h != self.host]
        plans, known, asked = {self.host: entries}, {}, {}
        for host in (self._vars.get("groups") or {}).get("all") or []:
            if host == self.host or host not in hostvars:
                continue
            values = self.hostvalues(host, ASKED + ("ipoib_interfaces",))
            settings = dict((name, values.get(name)) for name in ASKED)
            if host in play:
                plans[host] = ipoib.planned({"config": settings["ipoib_config"], "mtu": settings["ipoib_mtu"],
                                             "mode": settings["ipoib_mode"]}) or []
                continue
            published = values.get("ipoib_interfaces")
            if published is not None:
                known[host] = published
            else:
                asked[host] = {"config": settings["ipoib_config"], "mtu": settings["ipoib_mtu"], "mode": settings["ipoib_mode"]}
        self.refuse([ipoib.duplicate_message(ipoib.duplicate_addresses(plans, known, asked, host=self.host))], suffix=None)

    def _stack(self, s):
        """The network stack (ipoib_network_stack, or found), refused when none is found."""
        units, ifupdown_present = {}, False
        if s["ipoib_network_stack"] == "auto":
            result = self._read("ansible.builtin.command", dict(argv=ipoib.UNITS_ARGV), "read the state of the network services")
            units = ipoib.parse_units(result.get("stdout"))
            if not ipoib.choose_stack("auto", units):
                ifupdown_present = all(
                    (self._read("ansible.builtin.stat", dict(path=path, get_checksum=False), "look for ifupdown").get("stat") or {})
                    .get("exists") for path in ipoib.IFUPDOWN_FILES)
        stack = ipoib.choose_stack(s["ipoib_network_stack"], units, ifupdown_present)
        if not stack:
            raise StepFailed(ipoib.NO_STACK)
        return stack

    def _conflicts(self, s, stack, names):
        """Files of another tool or person that name one of the interfaces: the stack would apply both."""
        found = self.module("ansible.builtin.find", ipoib.conflict_search(stack, names),
                            what="find other files that configure the same interfaces", check_mode=False)
        paths = [entry["path"] for entry in found.get("files") or []]
        if paths and not s["ipoib_take_over"]:
            raise StepFailed(ipoib.conflict_message(paths, names, stack))
        if stack == "ifupdown":
            slurp = self.module("ansible.builtin.slurp", dict(src="/etc/network/interfaces"),
                                what="read /etc/network/interfaces (it must include interfaces.d)", check_mode=False)
            if not ipoib.sources_interfaces_d(base64.b64decode(slurp.get("content") or "").decode("utf-8", "replace")):
                raise StepFailed(ipoib.NO_SOURCE)

    def _persist(self, stack, entries):
        """The stack's files: templated where they differ from what the role renders, the role's files no interface needs
        removed; NetworkManager reloads its profiles after a change. Whether anything changed."""
        wanted = ipoib.wanted_files(stack, entries)
        found = self.module("ansible.builtin.find", ipoib.own_files_search(stack), what="read the role's files of the stack",
                            check_mode=False).get("files") or []
        by_path = dict((entry.get("path"), entry) for entry in found)
        changed = False
        for entry in wanted:
            variables = dict(entry["variables"])
            if "profile" in entry:
                variables["__ipoib_uuid"] = to_uuid(entry["profile"])
            if ipoib.file_current(by_path.get(entry["path"]), self._render(entry["src"], variables), entry["mode"]):
                continue
            result = self.run_action("ansible.legacy.template", dict(src=entry["src"], dest=entry["path"], owner="root",
                                                                     group="root", mode=entry["mode"]),
                                     "write %s" % entry["path"], variables)
            changed = changed or bool(result.get("changed"))
        if stack != "ifupdown":
            for path in ipoib.stale_files(found, wanted):
                result = self.module("ansible.builtin.file", dict(path=path, state="absent"),
                                     what="remove %s, which no interface needs any more" % path)
                changed = changed or bool(result.get("changed"))
        if stack == "networkmanager" and changed:
            # only makes NetworkManager read the files (nmcli shows them); activating is ipoib_apply_now's
            self._command(["nmcli", "connection", "reload"], "reload NetworkManager's profiles")
        return changed

    def _state(self, attempts=1, wanted=None):
        """The interfaces' MTU, state and addresses (``ip -json address show``), waiting up to ``attempts`` seconds for the
        stack to apply ``wanted``."""
        for attempt in range(attempts):
            result = self._read("ansible.builtin.command", dict(argv=["ip", "-json", "address", "show"]),
                                "read the interfaces' MTU, state and addresses")
            if result.get("failed"):
                raise StepFailed("read the interfaces' MTU, state and addresses: %s" % (result.get("stderr") or result.get("msg")))
            state = ipoib.link_state(result.get("stdout"))
            if wanted is None or attempt == attempts - 1 or ipoib.settled(wanted, state):
                return state
            time.sleep(1)
        return {}

    def _runtime(self, stack, entries, persisted):
        """The stack applies first (networkd: the children it does not make, a reload after a change; NetworkManager: the
        profiles activated after a change; ifupdown: ifup of what it has not brought up), then ip what is still missing."""
        wanted = ipoib.links(entries)
        state = self._state()
        stacked = False
        if stack == "networkd":
            # networkd makes a Kind=ipoib child when it configures the parent, which a reload does only when the parent's
            # .network changed; made here, networkd finds it (EEXIST) and configures it
            for link in wanted:
                if "parent" in link and link["name"] not in state:
                    self._command(["ip", "link", "add", "link", link["parent"], "name", link["name"], "type", "ipoib", "pkey",
                                   link["pkey"]], "make the PKey child %s" % link["name"])
                    stacked = True
            if persisted:
                self._command(["networkctl", "reload"], "reload systemd-networkd (it reconfigures the interfaces whose files changed)")
                stacked = True
        elif stack == "networkmanager":
            if persisted:
                for link in wanted:
                    self._command(["nmcli", "connection", "up", "id", ipoib.PREFIX + link["name"]],
                                  "activate the profile of %s" % link["name"])
                stacked = True
        else:
            result = self._read("ansible.builtin.command", dict(argv=["ifquery", "--state"]),
                                "read which interfaces ifupdown has brought up")
            up = ipoib.ifupdown_up(result.get("stdout"))
            for link in wanted:
                if link["name"] not in up:
                    self._command(["ifup", link["name"]], "bring %s up with ifup" % link["name"])
                    stacked = True
        if stacked and not self._task.check_mode:
            state = self._state(ATTEMPTS if persisted else 1, wanted)
        for argv, what in ipoib.fixes(wanted, state):
            self._command(argv, what)

    # --- the step ------------------------------------------------------------------------------------------------

    def step(self):
        s = dict(self.settings)
        s.setdefault("ipoib_config", [])
        s.setdefault("ipoib_mtu", ipoib.DEFAULT_MTU)
        s.setdefault("ipoib_mode", ipoib.DEFAULT_MODE)
        s.setdefault("ipoib_network_stack", "auto")
        s["ipoib_take_over"] = boolean(s.get("ipoib_take_over", False), strict=False)
        s["ipoib_apply_now"] = boolean(s.get("ipoib_apply_now", True), strict=False)
        config = s["ipoib_config"] or []

        # what needs no node: the plan without a reading (keys, P_Keys, MTUs, addresses, overlaps) and the pods' ranges
        ctx = controller_checks.Context(self.ROLE, dict(self._vars, **s), self._templar, run_id=self.run_id)
        self.refuse(ipoib.check(ctx))
        if self.preflight:
            self._duplicates(ipoib.plan(None, config, mtu=s["ipoib_mtu"], mode=s["ipoib_mode"]))
            return

        hca = self.hca(what="read the adapters") if config else None
        entries = ipoib.plan(hca if config else {"hcas": []}, config, mtu=s["ipoib_mtu"], mode=s["ipoib_mode"])
        self._duplicates(entries)
        # what other roles and later jobs read of it (k8s_network's masters, this check in runs that leave this host out),
        # kept in Ansible's fact cache where one is configured
        interfaces = [entry["fact"] for entry in entries]
        self.publish(ipoib_interfaces=interfaces)
        if VariableLayer is not None and hasattr(self, "register_host_variables"):
            self.register_host_variables({"ipoib_interfaces": interfaces}, VariableLayer.EPHEMERAL_FACT)
        self.returns(plan=entries)
        phases = ipoib.phases(self._vars.get("ansible_run_tags"), self._vars.get("ansible_skip_tags"))
        # with no port in ipoib_config the role changes nothing (and needs no network stack); the files it wrote before stay,
        # and are removed by a run that lists other ports
        if not entries or not phases:
            return
        stack = self._stack(s)
        names = [link["name"] for link in ipoib.links(entries)]
        self._conflicts(s, stack, names)
        self.returns(stack=stack)
        persisted = self._persist(stack, entries) if "persist" in phases else False
        if s["ipoib_apply_now"] and "runtime" in phases:
            self._runtime(stack, entries, persisted)
