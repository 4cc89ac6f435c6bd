# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The rdma_stack role's one step: checks, DOCA repository, packages, kernel modules, DOCA driver, tools check
(docs: plugins/modules/rdma_stack.py).

Where a write is decided: ``plugin_utils/rdma_stack.py`` (the input, the platform and its package names, a mixed stack,
a missing kernel module, what to install, the tools' check); this file runs the modules in that order. A run that changes
nothing runs node_facts and kernel_modules (in check mode), nothing else (DOCA: the repository's key, files and the
pending record too).
"""

from __future__ import annotations

from ansible.module_utils.parsing.convert_bool import boolean

from ansible_collections.fabric.infiniband.plugins.plugin_utils import node_state
from ansible_collections.fabric.infiniband.plugins.plugin_utils import rdma_stack as rs
from ansible_collections.fabric.infiniband.plugins.plugin_utils.role_step import RoleAction, StepFailed

KMOD = "fabric.infiniband.kernel_modules"


def _unprefixed(facts):
    return dict((key[len("ansible_"):] if key.startswith("ansible_") else key, value) for key, value in (facts or {}).items())


class ActionModule(RoleAction):
    ROLE = "rdma_stack"

    # --- runs the base does not offer ----------------------------------------------------------------------------

    def _raw(self, name, args, what, check_mode=None):
        """Run a module and return its result as it is, failed or not (a read whose failure the step judges)."""
        saved = self._task.check_mode
        if check_mode is not None:
            self._task.check_mode = check_mode
        try:
            result = self._execute_module(module_name=name, module_args=dict(args), task_vars=self._vars)
        finally:
            self._task.check_mode = saved
        self._ran.append(dict(module=name, label=what, changed=False, failed=bool(result.get("failed"))))
        if result.get("unreachable"):
            raise StepFailed("%s: %s" % (what, result.get("msg")))
        return result

    def _template(self, src, dest, variables, what):
        """ansible.builtin.template from the role's templates/ (the task's check and diff mode, ansible_managed)."""
        return self.run_action("ansible.legacy.template", dict(src=src, dest=dest, owner="root", group="root", mode="0644"),
                               what, variables)

    # --- the parts of the step -----------------------------------------------------------------------------------

    def _read(self, s):
        """Facts (unless the host has them) and the installed packages, in one node_facts run."""
        have = self._vars.get("ansible_facts") or {}
        gather = "distribution" not in have or "architecture" not in have
        packages = rs.queried(s)
        what = "read the distribution and which RDMA packages are installed"
        # compared without ``facts``: the preflight gathered them into the host's facts, so the step asks for none
        result = self.kept_read("packages", dict(packages=packages), what=what, read=lambda: self.module(
            "node_facts", dict(facts=gather, packages=packages), what=what, check_mode=False))
        facts = dict(have)
        facts.update(_unprefixed(result.get("ansible_facts")))
        return facts, dict(result.get("packages") or {})

    def _probe(self, s, doca_kernel):
        """kernel_modules in check mode: the modules of rdma_stack_modules the kernel does not have are resolved
        (modprobe -n), so that a misspelt one is refused before anything is written; it also tells whether the boot file
        or a load has work. DOCA-OFED's modules exist only once its package is installed: before that, not resolved."""
        load = s.get("rdma_stack_flavour") == "inbox" or doca_kernel
        args = dict(names=s["rdma_stack_modules"], boot_file=rs.MODULES_FILE, report=["mlx_compat"], load=load)
        what = "resolve the kernel modules of rdma_stack_modules, loading nothing"
        result = self.kept_read("modules", args, what=what, read=lambda: self._raw(KMOD, args, what=what, check_mode=True))
        self.refuse(rs.kernel_module_problems(result, "rdma_stack_modules"), suffix=None)
        return result

    def _repository(self, s, pvars, family, repo):
        """The DOCA repository, signed and preferred to the distribution's packages; whether it changed."""
        before = self._changed
        self._changed = False
        if family == "Debian":
            # /etc/apt/keyrings comes with apt 2.4 and newer (Debian 12, Ubuntu 22.04)
            self.module("ansible.builtin.get_url", dict(url=repo["key_url"], dest=rs.DOCA_KEYRING, owner="root", group="root",
                                                        mode="0644", force=True),
                        what="fetch the key that signs the DOCA repository")
            variables = dict(__rdma_stack_doca_url=repo["url"], __rdma_stack_doca_keyring=repo["keyring"],
                             __rdma_stack_doca_origin=repo["origin"])
            self._template("doca.sources.j2", rs.DOCA_SOURCES, variables, "add the DOCA repository (deb822, signed-by its own key)")
            self._template("doca.pref.j2", rs.DOCA_PIN, variables,
                           "pin the DOCA repository above the distribution's packages of the same names")
        else:
            self.module("ansible.builtin.rpm_key", dict(key=repo["key_url"], state="present"),
                        what="import the key that signs the DOCA repository")
            self.module("ansible.builtin.yum_repository", dict(
                name=rs.DOCA_REPO_NAME, description="NVIDIA DOCA-OFED %s (fabric.infiniband.rdma_stack)" % s["rdma_stack_doca_version"],
                baseurl=repo["url"], gpgkey=repo["key_url"], gpgcheck=True, repo_gpgcheck=False, priority="10", enabled=True),
                what="add the DOCA repository (signed, preferred to the distribution's packages)")
        changed = self._changed
        self._changed = before or changed
        return changed

    def _install(self, s, names, family, repo_changed):
        """The package manager, for the packages missing or after a change of the DOCA repository; whether it changed."""
        if self._task.check_mode and repo_changed:
            # a repository that is not there yet has no packages to look at: the install is only announced
            self.changed()
            self.warn("Check mode: the DOCA repository is not configured yet, so %s would be installed from it%s."
                      % (", ".join(names), ", then openibd restarted" if s.get("rdma_stack_allow_driver_restart") else ""))
            return False
        if family == "Debian":
            result = self.module("ansible.builtin.apt", dict(name=names, state="present", update_cache=True,
                                                             cache_valid_time=0 if repo_changed else 3600),
                                 what="install the RDMA packages (apt)")
        else:
            result = self.module("ansible.builtin.dnf", dict(name=names, state="present", update_cache=repo_changed),
                                 what="install the RDMA packages (dnf)")
        return bool(result.get("changed"))

    def _doca_driver(self, s, pvars, present, missing, doca_kernel, repo_changed, packages_changed):
        """DOCA-OFED's driver: openibd restarted with consent, else a pending reboot; then the modules. Returns whether the
        driver restarted and the modules loaded now."""
        check = self._task.check_mode
        waits = "mlx_compat" not in present and (doca_kernel or (check and (repo_changed or packages_changed)))
        pending = waits and not s.get("rdma_stack_allow_driver_restart")
        restarted = False
        # in check mode before DOCA is installed, openibd does not exist yet
        if waits and s.get("rdma_stack_allow_driver_restart") and not (check and (packages_changed or repo_changed)):
            result = self.module("ansible.builtin.systemd_service", dict(name="openibd", state="restarted", daemon_reload=True),
                                 what="restart the driver stack so that the DOCA modules replace the running ones")
            restarted = bool(result.get("changed"))
        loaded = []
        # after a restart, or when a module is missing; not while the driver waits for a reboot (the DOCA modules do not load
        # next to the inbox ones)
        if not pending and (restarted or missing):
            result = self.module(KMOD, dict(names=s["rdma_stack_modules"], report=["mlx_compat"]),
                                 what="load the modules that are not loaded yet")
            loaded = list(result.get("loaded") or [])
            if restarted and not check and "mlx_compat" not in (result.get("present") or []):
                self.refuse(["openibd restarted, but /sys/module/mlx_compat is still absent: the DOCA kernel modules did not load. "
                             "Check that DKMS built them for the running kernel (dkms status) and journalctl -u openibd"], suffix=None)
        if pending or node_state.may_hold(self.fact("infiniband_pending"), "rdma_stack", bool(self.fact("infiniband_pending_stale")),
                                          self.run_id):
            version = s["rdma_stack_doca_version"]
            self.module("pending_action", dict(
                name="rdma_stack", state="present" if pending else "absent", action="reboot",
                reason="DOCA-OFED %s kernel modules are installed, the running kernel still uses the inbox driver; a reboot (or "
                       "rdma_stack_allow_driver_restart, which restarts openibd) brings them in" % version,
                details=dict(flavour="doca", version=version),
                stuck_msg="The inbox driver still runs (/sys/module/mlx_compat is absent). Rebooting again will not help: check that "
                          "DKMS built the modules for the running kernel (dkms status) and that openibd is enabled "
                          "(systemctl is-enabled openibd).",
                run_id=self.run_id), what="record that the DOCA driver waits for a reboot, or that nothing does any more")
        if pending:
            self.warn("The DOCA driver waits for a reboot (rdma_stack_allow_driver_restart is false): %s load with it, not now "
                      "(the DOCA modules do not load next to the running inbox ones)." % ", ".join(s["rdma_stack_modules"]))
        return restarted, loaded, pending

    def _verify(self, family):
        """ibv_devinfo -l lists every RDMA device of the kernel, and rdma system show works."""
        found = self.module("ansible.builtin.find", dict(paths="/sys/class/infiniband", file_type="any"),
                            what="find the RDMA devices the kernel has", check_mode=False)
        devices = [entry["path"].rsplit("/", 1)[-1] for entry in found.get("files") or []]
        devinfo = self._raw("ansible.builtin.command", dict(argv=["ibv_devinfo", "-l"]), what="list the adapters libibverbs sees",
                            check_mode=False)
        rdma = self._raw("ansible.builtin.command", dict(argv=["rdma", "system", "show"]), what="ask rdma for the RDMA system settings",
                         check_mode=False)
        self.refuse(rs.verify_problems(devices, devinfo, rdma, family), suffix=None)

    # --- the step ------------------------------------------------------------------------------------------------

    def step(self):
        s = dict(self.settings)
        s.setdefault("rdma_stack_flavour", "inbox")
        s.setdefault("rdma_stack_modules", ["mlx5_core", "mlx5_ib", "ib_uverbs", "ib_umad", "ib_ipoib", "rdma_ucm"])
        s.setdefault("rdma_stack_doca_version", "3.3.0")
        # the argument specs validated them; as the role's YAML did (| bool)
        s["rdma_stack_perftest"] = boolean(s.get("rdma_stack_perftest", True), strict=False)
        s["rdma_stack_allow_driver_restart"] = boolean(s.get("rdma_stack_allow_driver_restart", False), strict=False)
        self.refuse(rs.input_problems(s), suffix=None)
        doca = s["rdma_stack_flavour"] == "doca"

        facts, installed = self._read(s)
        self.refuse([rs.platform_problem(facts, self.host)], suffix=None)
        pvars = rs.platform_vars(facts)
        self.refuse([rs.conflict_problem(s["rdma_stack_flavour"], installed, pvars, self.host)], suffix=None)
        doca_kernel = rs.doca_kernel_installed(installed, pvars)
        probe = self._probe(s, doca_kernel)
        names = rs.packages(s, pvars)
        missing_packages = rs.to_install(names, installed)
        self.returns(platform=rs.platform(facts), packages=names, packages_missing=missing_packages)
        if self.preflight:
            return

        family = facts.get("os_family")
        repo_changed = False
        if doca:
            repo = rs.doca_repository(s, pvars, facts.get("architecture"))
            repo_changed = self._repository(s, pvars, family, repo)
        packages_changed = False
        if missing_packages or repo_changed:
            packages_changed = self._install(s, names, family, repo_changed)
            if doca and packages_changed and not self._task.check_mode:
                # ask again, for the DOCA kernel package that came with the profile
                result = self.module("node_facts", dict(facts=False, packages=pvars.get("doca_kernel_packages") or []),
                                     what="ask the package manager for DOCA's kernel package", check_mode=False)
                doca_kernel = rs.doca_kernel_installed(result.get("packages") or {}, pvars)

        # the boot-time list, which modules the kernel has (mlx_compat: the OFED/DOCA driver runs) and, inbox, the missing
        # ones loaded now; when the check-mode run above found nothing to do, its answer stands
        boot = (probe.get("files") or {}).get("boot_file") or {}
        if probe.get("failed") or boot.get("changed") or (not doca and probe.get("loaded")):
            kmod = self.module(KMOD, dict(names=s["rdma_stack_modules"], boot_file=rs.MODULES_FILE, report=["mlx_compat"], load=not doca),
                               what="load the modules at every boot, and the missing ones now")
        else:
            kmod = probe
        present = list(kmod.get("present") or [])
        missing = [name for name in s["rdma_stack_modules"] if name not in present]
        loaded = list(kmod.get("loaded") or []) if not doca and kmod is not probe else []
        restarted = pending = False
        if doca:
            restarted, doca_loaded, pending = self._doca_driver(s, pvars, present, missing, doca_kernel, repo_changed, packages_changed)
            loaded += doca_loaded
        loaded_now = bool(loaded) and not self._task.check_mode
        self.returns(repository_changed=repo_changed, packages_changed=packages_changed, modules_loaded=loaded if loaded_now else [],
                     driver_restarted=restarted, driver_pending=pending)

        if s.get("rdma_stack_verify") == "always" or packages_changed or loaded_now or restarted:
            # in check mode the packages may not be there yet: nothing to ask them
            if not (self._task.check_mode and (packages_changed or repo_changed)):
                self._verify(family)
