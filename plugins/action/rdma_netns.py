# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The rdma_netns role's one step: checks, the ib_core option (modprobe.d, GRUB, initramfs), the run-time switch and the
record of what waits for a reboot (docs: plugins/modules/rdma_netns.py).

Where a write is decided: ``plugin_utils/rdma_netns.py``; this file only runs the modules in that order.
"""

from __future__ import annotations

import base64
import posixpath

from ansible_collections.fabric.infiniband.plugins.plugin_utils import node_state
from ansible_collections.fabric.infiniband.plugins.plugin_utils import rdma_netns
from ansible_collections.fabric.infiniband.plugins.plugin_utils.role_step import RoleAction, StepFailed


class ActionModule(RoleAction):
    ROLE = "rdma_netns"

    def _read(self, module, args, what):
        """A read on the node (slurp, a listing command): run for real in check mode too, never counted as a change.
        Returns the module's result (``failed`` in it when the read failed)."""
        saved = self._task.check_mode
        self._task.check_mode = False
        try:
            result = self._execute_module(module_name=module, module_args=args, task_vars=self._vars)
        finally:
            self._task.check_mode = saved
        self._ran.append(dict(module=module, label=what, changed=False, failed=bool(result.get("failed"))))
        return result

    def _stamp(self):
        """What the stamp says (for which kernel and option the initramfs was last regenerated), '' when there is none."""
        result = self._read("ansible.builtin.slurp", dict(src=rdma_netns.STAMP_PATH), "read the initramfs stamp")
        if result.get("failed") or not result.get("content"):
            return ""
        return base64.b64decode(result["content"]).decode("utf-8", "replace").strip()

    def _write_stamp(self, content):
        """Record for which kernel and option the initramfs was regenerated (ansible.builtin.copy, as template does)."""
        self.module("ansible.builtin.file", dict(path=posixpath.dirname(rdma_netns.STAMP_PATH), state="directory", owner="root",
                                                 group="root", mode="0755"), what="make the directory of the initramfs stamp")
        task = self._task.copy()
        task.args = dict(content=content + "\n", dest=rdma_netns.STAMP_PATH, owner="root", group="root", mode="0644")
        copy = self._shared_loader_obj.action_loader.get(
            "ansible.legacy.copy", task=task, connection=self._connection, play_context=self._play_context,
            loader=self._loader, templar=self._templar, shared_loader_obj=self._shared_loader_obj)
        result = copy.run(task_vars=self._vars)
        self._ran.append(dict(module="ansible.builtin.copy", label="write the initramfs stamp",
                              changed=bool(result.get("changed")), failed=bool(result.get("failed"))))
        if result.get("failed"):
            raise StepFailed("write the initramfs stamp %s: %s" % (rdma_netns.STAMP_PATH, result.get("msg")))
        if result.get("changed"):
            self.changed()
            if self._task.diff and result.get("diff"):
                self._diff.extend(result["diff"] if isinstance(result["diff"], list) else [result["diff"]])

    def _initramfs(self, s, kmod):
        """Regenerate the running kernel's initramfs where ib_core loads from it (or always); returns what was done."""
        image = kmod.get("initramfs")
        if not image or s["rdma_netns_update_initramfs"] == "never":
            return None
        todo = rdma_netns.initramfs(s, kmod, self._stamp())
        if todo is None:
            return "current"
        if todo == "list":
            listing = self._read("ansible.builtin.command", dict(argv=rdma_netns.list_argv(image)), "list the initramfs")
            if listing.get("failed"):
                raise StepFailed("list the initramfs %s: %s" % (image, listing.get("msg") or listing.get("stderr")))
            if not rdma_netns.loads_ib_core(listing.get("stdout_lines") or (listing.get("stdout") or "").splitlines()):
                return "without ib_core"
        if self._task.check_mode:
            self.changed()
            return "would regenerate"
        self.module("ansible.builtin.command", dict(argv=rdma_netns.regenerate_argv(image, kmod["kernel"])),
                    what="regenerate the initramfs %s" % image)
        self._write_stamp(rdma_netns.stamp_wanted(kmod))
        return "regenerated"

    def step(self):
        s = rdma_netns.settings(self.settings)
        self.refuse(rdma_netns.check(s))
        mode = s["rdma_netns_mode"]
        warning = rdma_netns.warning(mode, s["rdma_netns_cluster_plugins"])
        if warning:
            self.warn(warning)
        if self.preflight:
            return
        # one run on a run that changes nothing: the option, the GRUB drop-in, the running kernel and its initramfs
        kmod = self.module("kernel_modules", rdma_netns.kernel_modules_args(s),
                           what="write the ib_core option to %s" % rdma_netns.MODPROBE_FILE)
        if rdma_netns.grub_changed(kmod) and not self._task.check_mode:
            self.module("ansible.builtin.command", dict(argv=["update-grub"]),
                        what="regenerate the GRUB configuration for the changed %s" % rdma_netns.GRUB_FILE)
        self.returns(kernel=kmod.get("kernel"), initramfs=self._initramfs(s, kmod))
        system = None
        if rdma_netns.mode_may_differ(self.fact("infiniband_hca"), self.current("infiniband_hca"), mode):
            system = self.module("rdma_system", dict(netns=mode, runtime=s["rdma_netns_runtime"], persistent_in_place=True),
                                 what="switch the running kernel to netns %s" % mode)
            self.returns(netns=system.get("netns"), applied=system.get("applied"), reason=system.get("reason"),
                         reboot_required=bool(system.get("reboot_required")))
        waits = bool((system or {}).get("reboot_required"))
        if waits or node_state.may_hold(self.fact("infiniband_pending"), "rdma_netns",
                                        bool(self.fact("infiniband_pending_stale", False)), self.run_id):
            self.module("pending_action", rdma_netns.pending_args(mode, system, self.run_id),
                        what="record what waits for a reboot")
