# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The opensm role's step: checks, this host's ports, opensm.conf, the ports' list, partitions.conf, the package, the
service (docs: plugins/modules/opensm.py).

What is refused and decided (the settings, the partitions, the port GUIDs, the ports, the priority, partitions.conf,
virtualization, the warnings) lives in ``plugins/plugin_utils/opensm.py``; this file reads the hosts and runs the modules
in that order. An action reads the node of its own host only: the adapters of the other hosts that partition members name
are read by the role's one delegated task (``hca_info`` with ``delegate_facts``) between ``preflight: true``, which says which
of them have no reading of this run (``read``), and this step. A run that changes nothing runs ``hca_info`` (unless this
run has a current reading), the three templates' checks, ``node_facts`` (is the package installed) and the service's check.
"""

from __future__ import annotations

import os


from ansible_collections.fabric.infiniband.plugins.plugin_utils import node_state
from ansible_collections.fabric.infiniband.plugins.plugin_utils import opensm as osm
from ansible_collections.fabric.infiniband.plugins.plugin_utils.role_step import RoleAction, StepFailed


class ActionModule(RoleAction):
    ROLE = osm.ROLE

    # --- the other hosts ------------------------------------------------------------------------------------------

    def _values(self, host, names):
        """Some variables of ``host`` (one reading of its hostvars), templated; missing ones left out. This host's facts are
        the step's (its own read included)."""
        if host == self.host:
            out = dict((name, self.var(name)) for name in names if name != "ansible_facts" and name in self._vars)
            if "ansible_facts" in names:
                out["ansible_facts"] = self._facts
            return out
        return self.hostvalues(host, names)

    def _hosts(self, s, members, everyone):
        """What the step needs of the inventory's hosts, in one reading of each: ``{host: {hca, current, vf_guids,
        port_guids}}`` for the members' hosts, every other host when ``opensm_port_guids`` lists GUIDs (whose owners are
        looked for), and every host with ``everyone`` (the VF GUIDs they publish)."""
        given = bool(s.get(osm.GIVEN))
        out = {}
        for host in (self.var("groups") or {}).get("all") or []:
            if host in out or not (everyone or host in members or (given and host != self.host)):
                continue
            values = self._values(host, ("ansible_facts", "sriov_vf_guids", osm.GIVEN))
            facts = values.get("ansible_facts") or {}
            hca = facts.get("infiniband_hca")
            published = facts.get("sriov_vf_guids") or values.get("sriov_vf_guids")
            out[host] = dict(
                hca=hca if isinstance(hca, dict) else None,
                current=node_state.is_current(hca, bool(facts.get("infiniband_hca_stale")), run=self.run_id),
                vf_guids=published if isinstance(published, (list, tuple, dict)) else None,
                port_guids=values.get(osm.GIVEN))
        return out

    @staticmethod
    def _others(hosts, me):
        return dict((host, seen) for host, seen in hosts.items() if host != me)

    # --- the node -------------------------------------------------------------------------------------------------

    def _template(self, src, dest, variables, what):
        """ansible.builtin.template from the role's templates/ (the task's check and diff mode, ansible_managed); OpenSM's
        configuration directory is made when the first write finds it missing."""
        args = dict(src=src, dest=dest, owner="root", group="root", mode="0644")
        try:
            return self.run_action("ansible.legacy.template", args, what, variables)
        except StepFailed as exc:
            directory = os.path.dirname(dest)
            if "Destination directory %s does not exist" % directory not in str(exc):
                raise
            # the failed attempt is no change: it leaves the list of what ran
            self._ran.pop()
        self.module("ansible.builtin.file", dict(path=directory, state="directory", owner="root", group="root", mode="0755"),
                    what="create OpenSM's configuration directory")
        return self.run_action("ansible.legacy.template", args, what, variables)

    def _configure(self, s, the_plan):
        """opensm.conf, the ports the distribution's units start OpenSM on, partitions.conf; which of them changed."""
        variables = dict(s, **osm.template_vars(the_plan))
        changed = {}
        changed["conf"] = self._template("opensm.conf.j2", osm.CONF_PATH, variables,
                                         "write opensm.conf (a change restarts OpenSM)").get("changed")
        if the_plan["defaults_file"]:
            # Debian's opensm.service starts one opensm@<port GUID> per port listed here (ALL by default).
            changed["defaults"] = self._template("default-opensm.j2", the_plan["defaults_file"], variables,
                                                 "list the ports the distribution's units start OpenSM on (a change restarts "
                                                 "OpenSM)").get("changed")
        changed["partitions"] = self._template("partitions.conf.j2", osm.PARTITIONS_PATH, variables,
                                               "write partitions.conf (a change alone makes OpenSM re-read it, SIGHUP)"
                                               ).get("changed")
        return changed

    def _install(self, the_plan):
        """The package, when the package database says it is missing (the configuration is in place already: dpkg keeps
        /etc/default/opensm as the role wrote it, and the service the package starts runs it). Whether it changed."""
        package = the_plan["package"]
        found = self.module("node_facts", dict(facts=False, packages=[package]), what="ask the package manager whether %s is "
                            "installed" % package, check_mode=False)
        if package in (found.get("packages") or {}):
            return False
        return bool(self.run_action("ansible.legacy.package", dict(name=package, state="present"),
                                    "install the OpenSM package").get("changed"))

    def _service(self, the_plan):
        self.module("ansible.builtin.systemd_service", dict(name=the_plan["service"], enabled=True, state="started"),
                    what="enable and start the subnet manager (%s)" % the_plan["service"])

    # --- the step ------------------------------------------------------------------------------------------------

    def step(self):
        s = self.settings
        groups = self.var("groups") or {}
        try:
            members = osm.member_hosts(s, groups)
        except ValueError:
            members = []  # refused below, with the message
        hosts = self._hosts(s, members, everyone=not self.preflight)
        others = self._others(hosts, self.host)
        # everything the settings alone refuse, before the node is read (a GUID that is no port of this host: where its
        # reading is of this run)
        self.refuse(osm.problems(s, self.host, groups, own_hca=self.fact("infiniband_hca"),
                                 own_current=self.current("infiniband_hca"), others=others))
        if self.preflight:
            # the member hosts to read before the step: the role's delegated hca_info, with this run's identity
            current = dict((host, (hosts.get(host) or {}).get("current")) for host in members)
            self.returns(read=osm.to_read(members, current), run_id=self.run_id, members=members)
            return

        hca = self.hca(what="read this host's adapters (the ports OpenSM binds to)")
        if s.get(osm.GIVEN):
            self.refuse(osm.port_guid_problems(self.host, s.get(osm.GIVEN), own_hca=hca, own_current=True, others=others))
        pf_guids, vf_guids = {}, {}
        for host in members:
            seen = hosts.get(host) or {}
            reading = hca if host == self.host else seen.get("hca")
            if reading is not None:
                pf_guids[host] = osm.port_guids(reading)
            # the sriov role publishes a list (a VF GUID each)
            vf_guids[host] = list(seen["vf_guids"]) if isinstance(seen.get("vf_guids"), (list, tuple)) else []
        vf_hosts = [host for host, seen in hosts.items() if seen.get("vf_guids")]
        try:
            the_plan = osm.plan(s, self.host, groups, hca, pf_guids, vf_guids, vf_hosts)
        except ValueError as exc:
            raise StepFailed("%s. Nothing was changed." % str(exc).rstrip(".")) from None
        self.refuse([the_plan["problem"]])
        for warning in the_plan["warnings"]:
            self.warn(warning)
        parts = osm.parts(self.var("ansible_run_tags"), self.var("ansible_skip_tags"))
        summary = dict((key, the_plan[key]) for key in ("host", "flavour", "service", "guids", "priority", "virt", "units", "logs"))
        summary.update(partitions=the_plan["partitions"]["partitions"], partitions_path=osm.PARTITIONS_PATH, parts=sorted(parts),
                       restart=False, reload=False, package_changed=False)
        self.returns(**summary)

        if "configure" in parts:
            restart, reload = osm.restarts(self._configure(s, the_plan))
            # for the handlers: a restart of the hosts in priority order, or a SIGHUP
            self.returns(restart=restart, reload=reload)
        package_changed = self._install(the_plan) if "install" in parts else False
        self.returns(package_changed=package_changed)
        # in check mode, a package that this run would install has no unit yet to look at
        if "service" in parts and not (self._task.check_mode and package_changed):
            self._service(the_plan)
