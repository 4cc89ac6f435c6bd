#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
module: sriov_vfs
short_description: Set the number of SR-IOV VFs of a ConnectX PF, their InfiniBand GUIDs and link state
version_added: 0.1.0
description:
  - Sets the number of virtual functions (VFs) of one physical function (PF) through C(sriov_numvfs) in sysfs, with the
    kernel's rules. A new non-zero count while VFs exist goes through 0 (the kernel answers EBUSY otherwise), which destroys
    every VF and needs O(allow_recreate). The count never exceeds C(sriov_totalvfs), which the firmware's C(NUM_OF_VFS) sets.
  - Sets each VF's node GUID and port GUID and its link state, where they differ. With the upstream mlx5 driver through
    C(ip link set <pf> vf <n> node_guid ... port_guid ... state ...) (netlink); with MLNX_OFED or DOCA-OFED, whose PF has a
    C(sriov/<n>/) directory in sysfs, by writing C(sriov/<n>/node), C(port) and C(policy) there.
  - A VF takes new GUIDs when its driver binds, so a bound VF whose RDMA device still shows other GUIDs is unbound and bound
    again (O(rebind)). ib-sriov-cni refuses a VF whose GUID is zero ("VF GUID is not valid"); this module refuses zero and
    all-ones GUIDs, and the same GUID on two VFs of the PF.
  - Never touches the firmware (see M(fabric.infiniband.mlxconfig)) and never reboots. VFs do not survive a reboot; the
    P(fabric.infiniband.sriov#role) role installs a boot-time unit that makes them again.
author:
  - fabric.infiniband developers (@fabric-infiniband)
requirements:
  - Linux with the PF's driver loaded (mlx5_core) and SR-IOV enabled in the firmware (C(SRIOV_EN)).
  - C(ip) from iproute2 4.13 or later to set GUIDs with the upstream driver.
extends_documentation_fragment:
  - fabric.infiniband.attributes
  - fabric.infiniband.sysfs
attributes:
  check_mode:
    support: full
    details:
      - Reads the state and reports what would change; writes nothing and runs no C(ip link set).
  diff_mode:
    support: full
    details:
      - The diff shows the VF count and each VF's GUIDs and link state before and after; with O(boot_unit), also one entry per file
        of the unit that would change and one for its enabled state.
options:
  pf:
    description:
      - The PF, by PCI address (V(0000:3b:00.0)), RDMA device (V(mlx5_0)) or netdev (V(ib0)).
      - The PCI address does not change with driver load order or interface naming, so roles use it.
    type: str
    required: true
  num_vfs:
    description:
      - The number of VFs wanted. V(0) removes them all.
    type: int
    required: true
  vfs:
    description:
      - Settings per VF. VFs not listed keep their GUIDs; O(link_state) applies to them too when given.
    type: list
    elements: dict
    default: []
    suboptions:
      index:
        description: The VF's number, from V(0) to O(num_vfs) minus one.
        type: int
        required: true
      guid:
        description:
          - Node GUID and port GUID of the VF, the same value for both (as sriov-network-operator does).
          - 8 bytes, as V(0x0200000000000001) (all 16 digits), V(02:00:00:00:00:00:00:01) or V(0200:0000:0000:0001). Never zero
            or all ones.
          - Quote it in YAML. An unquoted GUID is a number to YAML (an unquoted V(10:11:22:33:44:55:56:57) is even a base-60 one),
            and a number is refused with what to write.
        type: str
      node_guid:
        description: The VF's node GUID, when it should differ from the port GUID. Not together with O(vfs[].guid).
        type: str
      port_guid:
        description: The VF's port GUID, when it should differ from the node GUID. Not together with O(vfs[].guid).
        type: str
      link_state:
        description:
          - The VF's link state. V(auto) follows the PF's port (MLNX_OFED policy C(Follow)), V(enable) is always up
            (C(Up)), V(disable) always down (C(Down)).
          - ib-sriov-cni's C(link_state) can override it per pod.
        type: str
        choices: [auto, enable, disable]
  link_state:
    description:
      - The link state of every VF not given one in O(vfs). Not managed when not given.
      - MLNX_OFED makes new VFs with the policy C(Down), so a VF stays down in a pod until this (or the CNI) says otherwise.
    type: str
    choices: [auto, enable, disable]
  drivers_autoprobe:
    description:
      - Value of C(sriov_drivers_autoprobe) of the PF, that is whether new VFs are bound to their driver at once.
      - V(false) keeps new VFs unbound, for example for vfio-pci. Not managed when not given.
      - Only written when VFs are made (it has no effect on existing ones); a change alone is written at once.
    type: bool
  allow_recreate:
    description:
      - Allow a change between two non-zero VF counts, which destroys every VF of the PF (0, then the new count).
    type: bool
    default: false
  rebind:
    description:
      - Unbind and bind again a VF whose RDMA device still shows GUIDs other than the ones wanted, so that they take effect.
      - With V(false), the change is reported in RV(rebind_pending) and takes effect when the VF's driver next binds.
    type: bool
    default: true
  boot_unit:
    description:
      - A systemd unit that makes the VFs again at every boot, with the files it needs, installed (or removed) after the VFs are
        set, in the same module run. What M(fabric.infiniband.boot_unit) does with the same options; the
        P(fabric.infiniband.sriov#role) role gives its unit here, so that the VFs now and at every boot cost one run on the node.
      - Never starts the unit.
    type: dict
    suboptions:
      name:
        description:
          - The unit's name, for example V(fabric-infiniband-sriov.service). The unit file is C(/etc/systemd/system/<name>).
        type: str
        required: true
      unit:
        description:
          - The content of the unit file. Written with mode C(0644). Required with O(boot_unit.state=present).
        type: str
      files:
        description:
          - The files the unit needs, such as its program and its configuration, written before the unit file.
          - With O(boot_unit.state=absent) only their O(boot_unit.files[].path) is used, to remove them.
        type: list
        elements: dict
        default: []
        suboptions:
          path:
            description:
              - The file's absolute path.
            type: str
            required: true
          content:
            description:
              - The file's content. Required with O(boot_unit.state=present).
            type: str
          mode:
            description:
              - The file's mode, in octal, for example V(0755).
            type: str
            default: "0644"
      state:
        description:
          - V(present) installs the files and the unit, V(absent) disables the unit and removes it and the files.
        type: str
        choices: [present, absent]
        default: present
      enabled:
        description:
          - Whether the unit is enabled, that is whether it runs at the next boot.
          - Ignored with O(boot_unit.state=absent).
        type: bool
        default: true
notes:
  - Writing C(sriov_numvfs) and binding drivers needs root (use become).
  - A VF moved into a pod keeps its PCI function; rebinding it takes it from the pod. Run with O(rebind=false) on nodes
    whose VFs are in use, or let the CNI own the GUIDs (ib-kubernetes), and do not give any here.
seealso:
  - module: fabric.infiniband.mlxconfig
  - module: fabric.infiniband.hca_info
  - name: Kernel documentation, PCI SR-IOV sysfs
    description: sriov_numvfs, sriov_totalvfs and sriov_drivers_autoprobe.
    link: https://docs.kernel.org/PCI/pci-iov-howto.html
"""

EXAMPLES = r"""
- name: Four VFs on the first port, GUIDs of our own, up when the PF is up
  fabric.infiniband.sriov_vfs:
    pf: "0000:3b:00.0"
    num_vfs: 4
    link_state: auto
    vfs:
      - {index: 0, guid: "0x02fa0a0b0c0d0000"}
      - {index: 1, guid: "0x02fa0a0b0c0d0001"}
      - {index: 2, guid: "0x02fa0a0b0c0d0002"}
      - {index: 3, guid: "0x02fa0a0b0c0d0003"}
  become: true

- name: From 4 VFs to 8, knowing that the 4 in use are destroyed
  fabric.infiniband.sriov_vfs:
    pf: mlx5_0
    num_vfs: 8
    allow_recreate: true
  become: true

- name: No VFs
  fabric.infiniband.sriov_vfs:
    pf: ib0
    num_vfs: 0
  become: true

- name: Two VFs now, and a unit that makes them again at every boot (the same run)
  fabric.infiniband.sriov_vfs:
    pf: "0000:3b:00.0"
    num_vfs: 2
    boot_unit:
      name: example-vfs.service
      unit: |
        [Unit]
        Description=Two VFs on 0000:3b:00.0
        [Service]
        Type=oneshot
        ExecStart=/bin/sh -c 'echo 2 > /sys/bus/pci/devices/0000:3b:00.0/sriov_numvfs'
        [Install]
        WantedBy=multi-user.target
  become: true
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
  description: Whether anything was written (in check mode, would be).
  returned: always
  type: bool
pf:
  description: The PF the module worked on.
  returned: always
  type: dict
  sample: {pci_address: "0000:3b:00.0", rdma_device: mlx5_0, netdev: ib0, link_layer: InfiniBand, total_vfs: 8}
method:
  description: How GUIDs and link state are set, V(netlink) (C(ip link)) or V(sysfs) (MLNX_OFED's C(sriov/<n>/)).
  returned: always
  type: str
  sample: netlink
before:
  description: The state before, as RV(after).
  returned: always
  type: dict
after:
  description:
    - The state at the end (in check mode, the prediction).
    - C(vfs) lists every VF with C(index), C(pci_address), C(driver), C(rdma_device), C(netdev), C(node_guid),
      C(port_guid) and C(link_state) (what is set, in effect once the VF binds), and C(active_node_guid) and
      C(active_port_guid) (what its RDMA device shows now).
  returned: always
  type: dict
  sample:
    num_vfs: 1
    drivers_autoprobe: true
    vfs:
      - index: 0
        pci_address: "0000:3b:00.2"
        driver: mlx5_core
        rdma_device: mlx5_2
        netdev: ib2
        node_guid: "0x02fa0a0b0c0d0000"
        port_guid: "0x02fa0a0b0c0d0000"
        link_state: auto
        active_node_guid: "0x02fa0a0b0c0d0000"
        active_port_guid: "0x02fa0a0b0c0d0000"
rebound:
  description: PCI addresses of the VFs unbound and bound again so that their GUIDs take effect.
  returned: always
  type: list
  elements: str
rebind_pending:
  description: PCI addresses of the VFs whose new GUIDs take effect only when they bind next (O(rebind=false)).
  returned: always
  type: list
  elements: str
writes:
  description: The sysfs writes done (in check mode, that would be), as C(path=value).
  returned: always
  type: list
  elements: str
  sample: ["/sys/bus/pci/devices/0000:3b:00.0/sriov_numvfs=4"]
cmds:
  description: Every command run, in order.
  returned: always
  type: list
  elements: list
cmd:
  description: The last command run, V([]) when none ran.
  returned: always
  type: list
  elements: str
boot_unit:
  description:
    - With O(boot_unit), what M(fabric.infiniband.boot_unit) returns for the unit (its diff is in the module's own).
  returned: when O(boot_unit) is given
  type: dict
  contains:
    written:
      description: The files written because their content differed (in check mode, that would be), the unit file last.
      type: list
      elements: str
    attributes_set:
      description: The files whose content was right and whose mode, owner or group was set.
      type: list
      elements: str
    removed:
      description: With O(boot_unit.state=absent), the files removed, the unit file first.
      type: list
      elements: str
    enabled:
      description: Whether the unit is enabled after the task (in check mode, would be).
      type: bool
    changed:
      description: Whether the unit or its files changed (in check mode, would).
      type: bool
    cmds:
      description: The C(systemctl) commands run, in order.
      type: list
      elements: list
  sample: {written: [], attributes_set: [], removed: [], enabled: true, changed: false,
           cmds: [[/usr/bin/systemctl, is-enabled, fabric-infiniband-sriov.service]]}
"""

import copy
import errno
import os

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.fabric.infiniband.plugins.module_utils import boot_unit
from ansible_collections.fabric.infiniband.plugins.module_utils import common
from ansible_collections.fabric.infiniband.plugins.module_utils import iplink
from ansible_collections.fabric.infiniband.plugins.module_utils import pci
from ansible_collections.fabric.infiniband.plugins.module_utils import sriov
from ansible_collections.fabric.infiniband.plugins.module_utils import sysfs
from ansible_collections.fabric.infiniband.plugins.module_utils._runner import Runner, ToolModule


def argument_spec():
    spec = common.merge_specs(common.SYSFS_ARG_SPEC)
    spec.update(
        pf=dict(type="str", required=True),
        num_vfs=dict(type="int", required=True),
        vfs=dict(type="list", elements="dict", default=[], options=dict(
            index=dict(type="int", required=True),
            guid=dict(type="str"),
            node_guid=dict(type="str"),
            port_guid=dict(type="str"),
            link_state=dict(type="str", choices=list(iplink.LINK_STATES)),
        )),
        link_state=dict(type="str", choices=list(iplink.LINK_STATES)),
        drivers_autoprobe=dict(type="bool"),
        allow_recreate=dict(type="bool", default=False),
        rebind=dict(type="bool", default=True),
        boot_unit=dict(type="dict", options=boot_unit.argument_spec(), required_if=boot_unit.REQUIRED_IF),
    )
    return spec


class SriovVfs(ToolModule):

    def __init__(self, module):
        self.module = module
        self.params = module.params
        self.tree = sysfs.Sysfs(module.params["sysfs_root"])
        self.runner = Runner(module, "ip", required=False)
        self.result = dict(changed=False, pf={}, method=None, before={}, after={}, rebound=[], rebind_pending=[],
                           writes=[], cmd=[], cmds=[])
        self.bdf = None
        self.netdev = None
        self.want = {}

    # ------------------------------------------------------------ reading
    def resolve_pf(self):
        """The PF's PCI address from a PCI address, an RDMA device or a netdev."""
        given = self.params["pf"].strip()
        try:
            selected = pci.selector(given, "pf")
        except pci.PciAddressError as exc:
            self.fail(str(exc))
        if pci.parse(selected):
            bdf = selected
        elif self.tree.exists("class", "infiniband", given):
            bdf = self.tree.ib_pci_address(given)
        elif self.tree.exists("class", "net", given):
            # /sys/class/net/<name> -> .../<bdf>/net/<name>
            bdf = os.path.basename(os.path.dirname(os.path.dirname(os.path.realpath(self.tree.path("class", "net", given)))))
        else:
            bdf = None
        if not bdf or not self.tree.exists("bus", "pci", "devices", bdf):
            self.fail("pf %s: no such PCI function, RDMA device or netdev under %s; give the PF by PCI address "
                      "(0000:3b:00.0), RDMA device (mlx5_0) or netdev (ib0)" % (given, self.tree.root))
        if self.tree.exists("bus", "pci", "devices", bdf, "physfn"):
            self.fail("pf %s (%s) is a VF; give its PF (%s)"
                      % (given, bdf, self.tree.link_name("bus", "pci", "devices", bdf, "physfn")))
        return bdf

    def pf_info(self):
        func = self.tree.pci_function(self.bdf)
        devices = self.tree.listdir("bus", "pci", "devices", self.bdf, "infiniband")
        rdma_device = devices[0] if devices else None
        link_layer = None
        netdev = None
        if rdma_device:
            port = self.tree.ib_port(rdma_device, 1, self.bdf)
            link_layer, netdev = port["link_layer"], port["netdev"]
        sriov_files = func["sriov"] or {}
        return {
            "pci_address": self.bdf,
            "rdma_device": rdma_device,
            "netdev": netdev,
            "link_layer": link_layer,
            "driver": func["driver"],
            "total_vfs": sriov_files.get("total_vfs"),
        }, func["sriov"]

    def read_vfs(self, count):
        """Every VF of the PF, with its administrative GUIDs and link state."""
        netlink = {}
        # ip link only when some VF setting is managed: a count change alone needs none
        if self.want and self.result["method"] == "netlink" and count and self.netdev and self.runner.available:
            res = self.run(iplink.show_args(self.netdev))
            if res.rc != 0:
                self.fail("could not read the VFs of %s" % self.netdev, res)
            netlink = iplink.parse_vfs(res.stdout)
        vfs = []
        for index in range(count):
            vf = self.tree.sriov_vf(self.bdf, index) or {"index": index, "pci_address": None, "driver": None,
                                                         "rdma_device": None, "netdev": None, "active_node_guid": None,
                                                         "active_port_guid": None, "ofed": None}
            admin = vf.pop("ofed", None)
            if admin is not None:
                vf.update(node_guid=admin["node_guid"], port_guid=admin["port_guid"],
                          link_state=iplink.link_state_from_policy(admin["policy"]))
            else:
                # iproute2 before 4.13 prints no GUIDs: what the VF's RDMA device shows is the best guess
                entry = netlink.get(index, {})
                vf.update(node_guid=entry.get("node_guid") or vf["active_node_guid"],
                          port_guid=entry.get("port_guid") or vf["active_port_guid"],
                          link_state=entry.get("link_state"))
            vfs.append(vf)
        return vfs

    def snapshot(self, sriov_files):
        count = sriov_files["num_vfs"] or 0
        return {"num_vfs": count, "drivers_autoprobe": sriov_files["drivers_autoprobe"], "vfs": self.read_vfs(count)}

    # ------------------------------------------------------------ writing
    def write(self, value, *parts):
        path = self.tree.path(*parts)
        self.result["writes"].append("%s=%s" % (path, value))
        self.result["changed"] = True
        if self.module.check_mode:
            return
        try:
            self.tree.write(value, *parts)
        except (IOError, OSError) as exc:
            hints = {
                errno.EBUSY: "the kernel changes a non-zero VF count only through 0",
                errno.ERANGE: "more VFs than sriov_totalvfs",
                errno.ENOENT: "the PF's driver does not support SR-IOV configuration, or is not bound",
                errno.EACCES: "needs root (become: true)",
                errno.EPERM: "needs root (become: true)",
            }
            hint = hints.get(exc.errno)
            self.fail("writing %s to %s failed: %s%s" % (value, path, exc.strerror or exc, "; %s" % hint if hint else ""))

    def set_count(self, before):
        want = self.params["num_vfs"]
        autoprobe = self.params["drivers_autoprobe"]
        total = self.result["pf"]["total_vfs"]
        writes, why = sriov.count_writes(before["num_vfs"], want, total, self.params["allow_recreate"])
        if why:
            self.fail("pf %s: %s" % (self.bdf, why))
        base = ("bus", "pci", "devices", self.bdf)
        if autoprobe is not None and autoprobe != before["drivers_autoprobe"]:
            self.write("1" if autoprobe else "0", *(base + ("sriov_drivers_autoprobe",)))
        for value in writes:
            self.write(str(value), *(base + ("sriov_numvfs",)))

    def set_vf(self, vf, changes):
        if self.result["method"] == "sysfs":
            base = ("bus", "pci", "devices", self.bdf, "sriov", str(vf["index"]))
            if "link_state" in changes:
                self.write(iplink.OFED_POLICY[changes["link_state"]], *(base + ("policy",)))
            for key, name in (("node_guid", "node"), ("port_guid", "port")):
                if key in changes:
                    self.write(iplink.guid_bytes(changes[key]), *(base + (name,)))
            return
        args = iplink.set_vf_args(self.netdev, vf["index"], changes.get("node_guid"), changes.get("port_guid"),
                                  changes.get("link_state"))
        self.result["changed"] = True
        res = self.run(args, mutating=True)
        if not res.skipped and res.rc != 0:
            hint = iplink.classify_set_error(res.rc, res.stdout, res.stderr)
            self.fail("setting VF %d of %s failed%s" % (vf["index"], self.netdev, ": %s" % hint if hint else ""), res)

    def rebind(self, vf):
        driver = vf["driver"]
        self.write(vf["pci_address"], "bus", "pci", "drivers", driver, "unbind")
        self.write(vf["pci_address"], "bus", "pci", "drivers", driver, "bind")
        self.result["rebound"].append(vf["pci_address"])

    # ------------------------------------------------------------ main
    def apply(self):
        if not self.tree.is_dir():
            self.fail("sysfs_root %s is not a directory" % self.tree.root)
        if self.params["num_vfs"] < 0:
            self.fail("num_vfs %d: accepted 0 or more" % self.params["num_vfs"])
        want, errors = sriov.desired_vfs(self.params["num_vfs"], self.params["vfs"], self.params["link_state"])
        self.want = want
        if errors:
            self.fail("invalid vfs for pf %s: %s" % (self.params["pf"], "; ".join(errors)))
        self.bdf = self.resolve_pf()
        pf, sriov_files = self.pf_info()
        self.result["pf"] = pf
        self.netdev = pf["netdev"]
        if sriov_files is None:
            if self.params["num_vfs"] == 0:
                self.result["before"] = self.result["after"] = {"num_vfs": 0, "drivers_autoprobe": None, "vfs": []}
                return self.result
            self.fail("pf %s has no sriov_numvfs in sysfs: SR-IOV is off in its firmware (SRIOV_EN) or its driver is not "
                      "bound; enable it with the fabric.infiniband.sriov role (or mlxconfig SRIOV_EN=1 NUM_OF_VFS=n) "
                      "and reboot" % self.bdf)
        wants_guids = any(e["node_guid"] or e["port_guid"] for e in want.values())
        if wants_guids and pf["link_layer"] and pf["link_layer"] != "InfiniBand":
            self.fail("pf %s: its port is %s; VF GUIDs exist on InfiniBand ports only (leave out guid, node_guid and "
                      "port_guid)" % (self.bdf, pf["link_layer"]))
        self.result["method"] = "sysfs" if self.tree.has_ofed_sriov(self.bdf) else "netlink"
        if want and self.result["method"] == "netlink":
            if not self.netdev:
                self.fail("pf %s has no netdev to set its VFs through (ip link set <pf> vf ...)" % self.bdf)
            if not self.runner.available:
                self.fail("setting VF GUIDs or link state on %s needs ip (iproute2), which is not installed" % self.bdf)

        before = self.snapshot(sriov_files)
        self.result["before"] = before
        self.set_count(before)
        count_changed = self.params["num_vfs"] != before["num_vfs"]
        if count_changed and not self.module.check_mode:
            current = self.snapshot(self.tree.pci_sriov(self.bdf))
        elif count_changed:
            current = self.predict_new_vfs(before)
        else:
            current = copy.deepcopy(before)
        to_rebind = []
        for vf in current["vfs"]:
            entry = want.get(vf["index"])
            if not entry:
                continue
            changes = sriov.vf_changes(vf, entry)
            if changes:
                self.set_vf(vf, changes)
                vf.update(changes)
            if sriov.needs_rebind(vf, entry):
                to_rebind.append(vf)
        for vf in to_rebind:
            if self.params["rebind"]:
                self.rebind(vf)
            else:
                self.result["rebind_pending"].append(vf["pci_address"])
        if self.module.check_mode or not self.result["changed"]:
            after = current
            for vf in to_rebind:
                if self.params["rebind"]:
                    vf.update(active_node_guid=vf["node_guid"], active_port_guid=vf["port_guid"])
        else:
            after = self.snapshot(self.tree.pci_sriov(self.bdf))
            self.check_after(after, want)
        self.result["after"] = after
        if self.module._diff:
            self.result["diff"] = {"before": self.diff_view(before), "after": self.diff_view(after),
                                   "before_header": "SR-IOV of %s" % self.bdf, "after_header": "SR-IOV of %s" % self.bdf}
        return self.result

    def predict_new_vfs(self, before):
        """Check mode, count changing: the new VFs have no GUIDs yet (the kernel makes them blank)."""
        autoprobe = self.params["drivers_autoprobe"]
        if autoprobe is None:
            autoprobe = before["drivers_autoprobe"]
        vfs = [{"index": i, "pci_address": None, "driver": None, "rdma_device": None, "netdev": None,
                "node_guid": None, "port_guid": None, "link_state": None, "active_node_guid": None,
                "active_port_guid": None} for i in range(self.params["num_vfs"])]
        return {"num_vfs": self.params["num_vfs"], "drivers_autoprobe": autoprobe, "vfs": vfs}

    def check_after(self, after, want):
        if after["num_vfs"] != self.params["num_vfs"]:
            self.fail("pf %s has %s VFs after writing sriov_numvfs=%d (the driver made fewer; see dmesg)"
                      % (self.bdf, after["num_vfs"], self.params["num_vfs"]))
        for vf in after["vfs"]:
            entry = want.get(vf["index"], {})
            for key in ("node_guid", "port_guid", "link_state"):
                if entry.get(key) is not None and vf.get(key) not in (None, entry[key]):
                    self.fail("VF %d of %s reads %s %s after setting %s" % (vf["index"], self.bdf, key, vf.get(key),
                                                                            entry[key]))
            if self.params["rebind"] and sriov.needs_rebind(vf, entry):
                self.fail("VF %d of %s (%s) still shows other GUIDs after it was bound again: node %s, port %s"
                          % (vf["index"], self.bdf, vf["pci_address"], vf["active_node_guid"], vf["active_port_guid"]))

    @staticmethod
    def diff_view(state):
        return {"num_vfs": state["num_vfs"], "vfs": {
            "vf%d" % vf["index"]: {"node_guid": vf.get("node_guid"), "port_guid": vf.get("port_guid"),
                                   "link_state": vf.get("link_state")} for vf in state["vfs"]}}


def with_boot_unit(module, unit, result):
    """The VFs' result with ``unit`` (O(boot_unit)) installed (or removed) after them, in the same run."""
    unit.outer = result
    done = unit.apply()
    diff = done.pop("diff", None)
    result["boot_unit"] = done
    if done["changed"]:
        result["changed"] = True
    if module._diff:
        result["diff"] = ([result["diff"]] if result.get("diff") else []) + list(diff or [])
    return result


def main():
    module = AnsibleModule(argument_spec=argument_spec(), supports_check_mode=True)
    unit = None
    if module.params["boot_unit"]:
        unit = boot_unit.BootUnit(module, module.params["boot_unit"], option="boot_unit")
        unit.wanted()  # its paths, modes and contents are refused before any VF is touched
    # the VFs' facts are stale when the VFs changed; the unit is no fact of the node
    result = common.mark_stale(module, SriovVfs(module).apply(), "hca")
    if unit is not None:
        result = with_boot_unit(module, unit, result)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
