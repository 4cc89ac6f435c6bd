#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
module: rdma_system
short_description: Set the RDMA network namespace mode (shared or exclusive) at run time
version_added: 0.1.0
description:
  - Sets the network namespace mode of the RDMA subsystem at run time with C(rdma system set netns), when it differs from O(netns).
    In V(shared) mode every RDMA device is visible in every network namespace; in V(exclusive) mode a device belongs to one
    namespace and can be moved into a pod (what ib-sriov-cni with C(rdmaIsolation) and rdma-cni need).
  - Reads the mode with C(rdma -j system show), which prints JSON or, with some iproute2 versions (Debian 12's 6.1), plain text;
    falls back to C(/sys/module/ib_core/parameters/netns_mode) when C(rdma) is not installed or too old for the C(system) object.
  - The kernel refuses the change (EBUSY) while any network namespace other than the initial one exists, for example one made by
    C(ip netns add), a container, or a systemd service with C(PrivateNetwork=) such as systemd-hostnamed. The module does not
    pretend then. It reports RV(applied=false), names the namespaces in the way in RV(blocked_by) and RV(reason), and sets
    RV(reboot_required) when O(persistent_in_place) says that the boot-time setting is in place. With O(runtime=require) it fails instead.
  - Does not write the persistent setting (C(options ib_core netns_mode=0) in C(/etc/modprobe.d), and the initramfs that holds
    a copy of it); the P(fabric.infiniband.rdma_netns#role) role does that, and tells this module through O(persistent_in_place).
  - Never reboots. To read the mode without changing it, use M(fabric.infiniband.hca_info) (RV(fabric.infiniband.hca_info#module:rdma_system)).
author:
  - fabric.infiniband developers (@fabric-infiniband)
requirements:
  - Linux 5.3 or later with C(ib_core) loaded.
  - C(rdma) from iproute2 5.3 or later, to change the mode at run time. Without it the mode is only read, from sysfs.
extends_documentation_fragment:
  - fabric.infiniband.attributes
  - fabric.infiniband.sysfs
attributes:
  check_mode:
    support: full
    details:
      - Reads the mode and never runs C(rdma system set).
      - When the mode differs, predicts the kernel's answer from the network namespaces it can see (the entries of C(/run/netns)
        and the processes whose network namespace is not PID 1's). If it sees one, it reports what a real run would on EBUSY
        (RV(changed=false), RV(applied=false), RV(blocked_by), and with O(runtime=require) a failure); otherwise RV(changed=true).
      - A namespace held only by an open file descriptor or a bind mount outside C(/run/netns) is not seen, so a real run can still
        end in EBUSY after a check mode run that predicted a change.
  diff_mode:
    support: full
    details:
      - The diff shows the run-time mode before and after.
options:
  netns:
    description:
      - The RDMA network namespace mode wanted at run time.
      - V(exclusive) is the mode of C(ib_core netns_mode=0), V(shared) of C(netns_mode=1) (the kernel's default).
    type: str
    required: true
    choices: [shared, exclusive]
  runtime:
    description:
      - What to do when the mode cannot be changed at run time, because the kernel answers EBUSY, C(rdma) is missing or too old,
        or C(ib_core) is not loaded.
      - V(try) reports it (RV(applied=false), RV(reason)) and succeeds, with a warning when O(persistent_in_place=false)
        (except when C(ib_core) is not loaded and O(netns=shared), the mode it loads in by default).
      - V(require) fails, naming what is in the way.
      - Other failures of C(rdma system set) (permissions, a kernel without RDMA netns modes) fail with either value.
    type: str
    default: try
    choices: [try, require]
  persistent_in_place:
    description:
      - Whether the caller has put the boot-time setting in place, that is C(options ib_core netns_mode=0) (or V(1)) in
        C(/etc/modprobe.d) and the initramfs regenerated when it contains C(ib_core), or the kernel argument C(ib_core.netns_mode).
      - The module does not check this itself; which file holds the option, and whether the initramfs holds a copy, is the role's business.
      - When the mode differs and cannot be changed at run time, V(true) gives RV(reboot_required=true) (the next boot applies
        it), V(false) gives RV(reboot_required=false), a warning, and a RV(reason) that says the persistent part is missing.
    type: bool
    default: false
notes:
  - When neither C(rdma) nor sysfs tells the mode because C(ib_core) is not loaded, there is no run-time mode to change and the
    mode is chosen from the C(netns_mode) option when C(ib_core) loads. The module then returns RV(netns) V(null) before and
    after, RV(applied=false), RV(reboot_required=false) (no reboot is needed, loading C(ib_core) is enough) and a RV(reason);
    with O(runtime=require) it fails. When C(ib_core) is loaded and its mode still cannot be read (a kernel before 5.3, which
    has no RDMA netns modes), it fails with either O(runtime).
  - The network namespaces listed in RV(blocked_by) are found by listing C(/run/netns) and by reading C(/proc/<pid>/ns/net) of
    every process, which needs root (use become) and is done only when they matter (EBUSY, or a predicted change in check mode).
  - Changing the mode needs root.
seealso:
  - module: fabric.infiniband.hca_info
  - name: rdma-system(8)
    description: The C(rdma system) command of iproute2.
    link: https://man7.org/linux/man-pages/man8/rdma-system.8.html
"""

EXAMPLES = r"""
- name: Exclusive RDMA netns mode now, if no other network namespace is in the way
  fabric.infiniband.rdma_system:
    netns: exclusive
  register: __rdma_netns

- name: Show why it is not applied yet
  ansible.builtin.debug:
    msg: "{{ __rdma_netns.reason }}"
  when: not __rdma_netns.applied

- name: After writing options ib_core netns_mode=0 and regenerating the initramfs
  fabric.infiniband.rdma_system:
    netns: exclusive
    persistent_in_place: true
  register: __rdma_netns

- name: Reboot when only the next boot can apply it
  ansible.builtin.reboot:
  when: __rdma_netns.reboot_required

- name: Fail unless the node is exclusive right now
  fabric.infiniband.rdma_system:
    netns: exclusive
    runtime: require

- name: Back to shared mode (what the RDMA shared device plugin needs)
  fabric.infiniband.rdma_system:
    netns: shared
"""

RETURN = r"""
ansible_facts:
  description:
    - V(infiniband_hca_stale=true) when the module changed the node (not in check mode), so that the roles read the adapters again with
      M(fabric.infiniband.hca_info) before they decide anything from the fact C(infiniband_hca).
  returned: when changed
  type: dict
  sample: {infiniband_hca_stale: true}
changed:
  description: Whether the mode was changed at run time (in check mode, would be).
  returned: always
  type: bool
netns:
  description:
    - The run-time RDMA netns mode before and after, V(shared), V(exclusive), or V(null) when C(ib_core) is not loaded.
    - V(after) is read back after a change; in check mode it is the prediction.
  returned: always
  type: dict
  sample: {before: shared, after: exclusive}
applied:
  description: Whether O(netns) is the run-time mode at the end of the task (in check mode, would be).
  returned: always
  type: bool
  sample: true
reboot_required:
  description:
    - Whether only a reboot can apply O(netns); V(true) when the mode differs, cannot be changed at run time, and
      O(persistent_in_place=true).
  returned: always
  type: bool
  sample: false
reason:
  description: Why O(netns) is not applied at run time, and what to do; V(null) when it is.
  returned: always
  type: str
  sample: >-
    the kernel does not change the RDMA netns mode from shared to exclusive while a network namespace other than the initial
    one exists (rdma: error: Device or resource busy): /run/netns/x; net:[4026532305] held by systemd-hostnam (pid 812).
    The persistent setting is in place (persistent_in_place), so the next boot starts in exclusive mode: reboot, or close
    those namespaces (ip netns delete NAME, stop the services that hold one) and run again
blocked_by:
  description:
    - The network namespaces other than the initial one that were found when the kernel answered EBUSY (or, in check mode,
      would); empty otherwise, and also when the one in the way could not be found.
    - Named ones (C(ip netns add)) come first, then the unnamed ones processes are in.
  returned: always
  type: list
  elements: dict
  sample:
    - {name: x, inode: 4026532400, process_count: 0, processes: []}
    - {name: null, inode: 4026532305, process_count: 1, processes: [{pid: 812, comm: systemd-hostnam}]}
  contains:
    name:
      description: Name under C(/run/netns), V(null) for an unnamed namespace.
      type: str
    inode:
      description: Inode of the namespace (as C(lsns -t net) shows it), V(null) when unknown.
      type: int
    process_count:
      description: Number of processes in the namespace.
      type: int
    processes:
      description: The first ten of them, by pid, with their C(comm) (the kernel cuts it to 15 characters).
      type: list
      elements: dict
rdma_system:
  description:
    - Settings of the RDMA subsystem as read last (after a change, the read-back), with the keys of
      RV(fabric.infiniband.hca_info#module:rdma_system) and whatever else the installed iproute2 prints.
  returned: always
  type: dict
  sample: {netns_mode: exclusive, source: rdma, copy_on_fork: true, privileged_qkey: null, monitor: null}
  contains:
    netns_mode:
      description: V(shared), V(exclusive), or V(null) when nothing tells.
      type: str
    source:
      description: V(rdma) (C(rdma system show)), V(sysfs) (the C(ib_core) parameter) or V(null).
      type: str
    copy_on_fork:
      description: Whether copy-on-fork is on; V(null) when not reported (iproute2 before 5.14, or read from sysfs).
      type: bool
    privileged_qkey:
      description: Whether privileged Q_Keys are allowed; V(null) when not reported (iproute2 before 6.7 or an older kernel).
      type: bool
    monitor:
      description: Whether the RDMA monitor is on; V(null) when not reported (iproute2 before 6.13).
      type: bool
set_cmd:
  description: The C(rdma system set) command that ran (in check mode, would run); V(null) when none is needed or possible.
  returned: always
  type: list
  elements: str
  sample: ["/usr/sbin/rdma", "system", "set", "netns", "exclusive"]
cmd:
  description: The last command run, V([]) when none ran.
  returned: always
  type: list
  elements: str
  sample: ["/usr/sbin/rdma", "-j", "system", "show"]
cmds:
  description: Every command run, in order (the read, then the C(set) and the read that checks it).
  returned: always
  type: list
  elements: list
diff:
  description: With C(--diff), the run-time mode before and after.
  returned: when diff mode is on
  type: dict
  sample: {before: {netns: shared}, after: {netns: exclusive}}
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.fabric.infiniband.plugins.module_utils import common
from ansible_collections.fabric.infiniband.plugins.module_utils import rdma
from ansible_collections.fabric.infiniband.plugins.module_utils import sysfs
from ansible_collections.fabric.infiniband.plugins.module_utils._runner import Runner, ToolModule


ROLE = "fabric.infiniband.rdma_netns"


def argument_spec():
    spec = common.merge_specs(common.SYSFS_ARG_SPEC)
    spec.update(
        netns=dict(type="str", required=True, choices=list(rdma.NETNS_MODES)),
        runtime=dict(type="str", default="try", choices=["try", "require"]),
        persistent_in_place=dict(type="bool", default=False),
    )
    return spec


class RdmaSystem(ToolModule):

    def __init__(self, module):
        self.module = module
        self.want = module.params["netns"]
        self.require = module.params["runtime"] == "require"
        self.persistent = module.params["persistent_in_place"]
        self.tree = sysfs.Sysfs(module.params["sysfs_root"])
        self.runner = Runner(module, "rdma", required=False)
        # False when rdma is missing or answers "Unknown object 'system'"
        self.can_set = self.runner.available
        self.result = dict(changed=False, netns=dict(before=None, after=None), applied=False, reboot_required=False,
                           reason=None, blocked_by=[], rdma_system=rdma.empty_settings(), set_cmd=None, cmd=[], cmds=[])

    # ------------------------------------------------------------ helpers
    def read(self):
        """(settings, problem) from rdma, else from sysfs; see rdma.system_settings."""
        show = None
        if self.runner.available:
            res = self.run(rdma.system_show_args())
            show = (res.rc, res.stdout, res.stderr)
            if rdma.system_unsupported(res.stdout, res.stderr):
                self.can_set = False
        return rdma.system_settings(show, self.tree.ib_core_netns_mode())

    def persistence(self, busy=False):
        """The second half of a reason: what happens next, given persistent_in_place."""
        if self.persistent:
            text = ("The persistent setting is in place (persistent_in_place), so the next boot starts in %s mode: reboot"
                    % self.want)
            if busy:
                text += ", or close those namespaces (ip netns delete NAME, stop the services that hold one) and run again"
            return text
        return ("The persistent part is missing (persistent_in_place is false), so a reboot would not apply it either: put "
                "'options ib_core netns_mode=%d' in a file under /etc/modprobe.d, regenerate the initramfs when it holds "
                "ib_core (the %s role does both) and reboot%s"
                % (rdma.modprobe_netns_mode(self.want), ROLE,
                   ", or close those namespaces and run again" if busy else ""))

    def not_applied(self, reason, res=None, reboot=None, warn=None):
        """The mode differs and stays so: report it (with a warning unless the persistent part
        is in place), or fail with runtime=require."""
        self.result.update(applied=False, reason=reason, reboot_required=self.persistent if reboot is None else reboot)
        if self.require:
            self.fail("netns %s is required at run time (runtime: require), but %s" % (self.want, reason), res)
        if warn is None:
            warn = not self.persistent
        if warn:
            self.module.warn("netns %s is not applied: %s" % (self.want, reason))

    # ------------------------------------------------------------ outcomes
    def unknown(self, problem):
        """Neither rdma nor sysfs tells the mode."""
        rdma_said = " (rdma: %s)" % problem if problem else ""
        if self.tree.module_loaded("ib_core"):
            self.fail("cannot read the RDMA netns mode: ib_core is loaded but has no netns_mode parameter under %s%s; "
                      "RDMA netns modes need Linux 5.3 or later" % (self.tree.path("module", "ib_core", "parameters"), rdma_said))
        reason = ("ib_core is not loaded (no %s)%s, so there is no run-time mode to change; ib_core takes its netns_mode "
                  "option when it loads" % (self.tree.path("module", "ib_core"), rdma_said))
        if self.persistent:
            reason += ", and the persistent setting is in place (persistent_in_place), so it will load in %s mode" % self.want
        else:
            reason += (", which without the persistent setting (persistent_in_place is false) is shared, the kernel's default, "
                       "unless /etc/modprobe.d or the kernel command line says otherwise")
        # no reboot needed: loading ib_core is enough; without the persistent part it loads shared
        self.not_applied(reason, reboot=False, warn=not self.persistent and self.want != "shared")

    def cannot_set(self):
        """The mode differs but rdma is missing or too old to change it."""
        if self.runner.available:
            why = "rdma (iproute2 before 5.3) answers \"Unknown object 'system'\""
        else:
            why = "rdma (iproute2) is not installed"
        reason = ("the run-time mode is %s and %s, so it cannot be changed at run time (the ib_core netns_mode parameter in "
                  "sysfs is read-only); install iproute2 5.3 or later. %s"
                  % (self.result["netns"]["before"], why, self.persistence()))
        self.not_applied(reason)

    def blocked(self, blockers, inspected, res=None):
        """EBUSY (res given), or EBUSY predicted in check mode (res None)."""
        self.result["blocked_by"] = blockers
        before = self.result["netns"]["before"]
        if res is not None:
            said = (res.stderr or "").strip() or (res.stdout or "").strip()
            head = ("the kernel does not change the RDMA netns mode from %s to %s while a network namespace other than the "
                    "initial one exists (rdma: %s)" % (before, self.want, said))
        else:
            head = ("check mode: the kernel would not change the RDMA netns mode from %s to %s (EBUSY), because network "
                    "namespaces other than the initial one exist" % (before, self.want))
        reason = "%s: %s. %s" % (head, rdma.describe_blockers(blockers, inspected), self.persistence(busy=True))
        self.not_applied(reason, res)

    # ------------------------------------------------------------ main
    def apply(self):
        if not self.tree.is_dir():
            self.fail("sysfs_root %s is not a directory" % self.tree.root)
        settings, problem = self.read()
        self.result["rdma_system"] = settings
        before = settings["netns_mode"]
        self.result["netns"] = dict(before=before, after=before)
        if problem and before is not None:
            self.module.warn("'%s' failed (%s); netns mode read from sysfs instead" % (" ".join(self.result["cmd"]), problem))
        if before is None:
            self.unknown(problem)
        elif before == self.want:
            self.result["applied"] = True
        else:
            self.change()
        if self.module._diff:
            self.result["diff"] = {
                "before": {"netns": before}, "after": {"netns": self.result["netns"]["after"]},
                "before_header": "RDMA netns mode (run time)", "after_header": "RDMA netns mode (run time)",
            }
        return self.result

    def change(self):
        if not self.can_set:
            self.cannot_set()
            return
        args = rdma.system_set_args(self.want)
        self.result["set_cmd"] = self.runner.argv(args)
        if self.module.check_mode:
            blockers, inspected = rdma.netns_blockers()
            if blockers:
                self.blocked(blockers, inspected)
            else:
                self.result["netns"]["after"] = self.want
                self.result.update(changed=True, applied=True)
            return
        res = self.run(args)
        kind = rdma.classify_set_error(res.rc, res.stdout, res.stderr)
        if kind == "busy":
            blockers, inspected = rdma.netns_blockers()
            self.blocked(blockers, inspected, res)
            return
        if kind is not None:
            self.fail("could not set the RDMA netns mode to %s: %s" % (self.want, rdma.SET_ERROR_HELP[kind]), res)
        settings, problem = self.read()
        after = settings["netns_mode"]
        self.result["rdma_system"] = settings
        self.result["netns"]["after"] = after
        # rc 0 and nothing to read back: it may have changed
        self.result["changed"] = after is None or after != self.result["netns"]["before"]
        if after is None:
            self.fail("'%s' succeeded, but the RDMA netns mode cannot be read back%s"
                      % (" ".join(self.result["set_cmd"]), " (rdma: %s)" % problem if problem else ""))
        if after != self.want:
            self.fail("'%s' succeeded, but the RDMA netns mode read back is still %s"
                      % (" ".join(self.result["set_cmd"]), after))
        self.result["applied"] = True


def main():
    module = AnsibleModule(argument_spec=argument_spec(), supports_check_mode=True)
    module.exit_json(**common.mark_stale(module, RdmaSystem(module).apply(), "hca"))


if __name__ == "__main__":
    main()
