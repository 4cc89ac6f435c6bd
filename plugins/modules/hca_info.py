#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
module: hca_info
short_description: Discover the InfiniBand and RDMA adapters of a host
version_added: 0.1.0
description:
  - Reports every RDMA device of the host (one per PCI function, so a dual-port card shows up twice), with its PCI identity, firmware,
    GUIDs, SR-IOV state and ports, read from sysfs.
  - Also reports NVIDIA/Mellanox PCI functions that have no RDMA device, for example because no driver is bound, with RV(hcas[].rdma_device) set to V(null).
  - Reports host-level facts the other modules of this collection depend on, namely the installed firmware tools (MFT or mstflint),
    the kernel lockdown mode and the RDMA network namespace mode.
  - With O(pending), also reads what the node waits for, as M(fabric.infiniband.pending_info) does, so that the plays that need both
    read them in one module run.
  - Publishes what it read as the facts RV(ansible_facts.infiniband_hca) and, with O(pending), RV(ansible_facts.infiniband_pending), for the
    roles that run later in the same run and for fleet-wide checks in later runs (Ansible's fact cache).
  - Never changes anything. Runs C(rdma -j system show) at most once, and only when C(rdma) is installed.
author:
  - fabric.infiniband developers (@fabric-infiniband)
requirements:
  - Linux with sysfs
  - Optional, C(rdma) from iproute2 5.3 or later. Without it, or with an older one, the RDMA network namespace mode is read from
    C(/sys/module/ib_core/parameters/netns_mode) and the copy-on-fork and other settings are not reported
extends_documentation_fragment:
  - fabric.infiniband.attributes
  - fabric.infiniband.attributes.info_module
  - fabric.infiniband.sysfs
options:
  devices:
    description:
      - Report only the adapters matching one of these names.
      - Each entry may be an RDMA device name (V(mlx5_0)), a PCI address with or without domain (V(0000:3b:00.0), V(3b:00.0)),
        a card address that selects every function of one card (V(0000:3b:00)) or a netdev name (V(ibp59s0f0)).
      - When omitted or empty, every adapter is reported.
    type: list
    elements: str
  pending:
    description:
      - Also read the record of what the node waits for (a reboot, a firmware reset or a power cycle), kept by
        M(fabric.infiniband.pending_action), and return it as RV(pending).
    type: bool
    default: false
  pending_path:
    description:
      - The file holding that record, read with O(pending). An absent file is an empty record.
    type: path
    default: /var/lib/fabric-infiniband/pending.json
  pending_writable:
    description:
      - With O(pending), also prove that the record can be written, as M(fabric.infiniband.pending_info) does with
        O(fabric.infiniband.pending_info#module:writable=true), and fail naming the path, the system's error and what to do when it
        cannot. C(playbooks/nodes.yml) reads the nodes this way before any change, so that a read-only or full state directory stops
        the run before a change that nothing could record.
    type: bool
    default: false
  pending_fail_on_tried:
    description:
      - With O(pending), fail when the node has booted since an entry of the record was recorded and that entry still waits
        (RV(fabric.infiniband.pending_info#module:tried)); that boot did not apply the change, and another boot will not.
        The message names each such entry with its reason.
      - C(playbooks/report.yml) reads the nodes this way after the last change of a run (the boot-loop guard).
    type: bool
    default: false
  run_id:
    description:
      - The run this reading belongs to, stamped on the facts RV(ansible_facts.infiniband_hca) and RV(ansible_facts.infiniband_pending).
        The roles pass P(fabric.infiniband.run_id#lookup), and use the facts instead of reading the node again only when
        P(fabric.infiniband.fact_current#filter) says they belong to the current run.
      - Empty, the facts are published unstamped and never count as current.
    type: str
    default: ""
notes:
  - The host-level results (RV(firmware_tools), RV(kernel_lockdown), RV(rdma_system)) are not affected by O(devices).
  - A port's netdev comes from the netdev of its GID 0 (RoCE) or from the netdevs of the PCI function (IPoIB); it is V(null) when neither
    tells.
seealso:
  - name: Linux kernel sysfs ABI for InfiniBand
    description: The files under C(/sys/class/infiniband) this module reads.
    link: https://www.kernel.org/doc/Documentation/ABI/stable/sysfs-class-infiniband
"""

EXAMPLES = r"""
- name: Discover the adapters
  fabric.infiniband.hca_info:
  register: __hca

- name: Show one line per port
  ansible.builtin.debug:
    msg: "{{ item.pci_address }} {{ item.rdma_device }}/{{ item.port }} {{ item.link_layer }} {{ item.state }} {{ item.rate_gbps }} Gb/s"
  loop: "{{ __hca.summary }}"

- name: Only the two functions of one card
  fabric.infiniband.hca_info:
    devices:
      - "0000:3b:00"
  register: __card

- name: Discover the adapters and what the node waits for, in one module run
  fabric.infiniband.hca_info:
    pending: true
  register: __node

- name: Tell whether a reboot waits
  ansible.builtin.debug:
    msg: "{{ __node.pending.next_action or 'nothing waits' }}"

- name: Read the host's sysfs from a container that mounts it at /host/sys
  fabric.infiniband.hca_info:
    sysfs_root: /host/sys

- name: Require exclusive RDMA netns mode and active InfiniBand ports
  ansible.builtin.assert:
    that:
      - __hca.rdma_system.netns_mode == 'exclusive'
      - __hca.summary | selectattr('link_layer', 'equalto', 'InfiniBand') | rejectattr('state', 'equalto', 'ACTIVE') | list | length == 0
"""

RETURN = r"""
hcas:
  description:
    - One entry per RDMA device, and one per NVIDIA/Mellanox PCI function without an RDMA device.
    - Sorted by PCI address; RDMA devices without a PCI function (for example soft-RoCE) come last.
    - Values the kernel does not expose are V(null).
  returned: always
  type: list
  elements: dict
  contains:
    pci_address:
      description: PCI address of the function, V(null) for an RDMA device that is not a PCI function.
      type: str
      sample: "0000:3b:00.0"
    card_address:
      description: PCI address without the function, the same for every port of one card. For a VF, the card of its PF.
      type: str
      sample: "0000:3b:00"
    rdma_device:
      description: Name of the RDMA device, V(null) when the function has none (no driver bound, or C(mlx5_ib) not loaded).
      type: str
      sample: mlx5_0
    netdevs:
      description: Network interfaces of the PCI function (and of the ports).
      type: list
      elements: str
      sample: ["ibp59s0f0"]
    vendor_id:
      description: PCI vendor id.
      type: str
      sample: "0x15b3"
    device_id:
      description: PCI device id.
      type: str
      sample: "0x101b"
    pci_class:
      description: PCI class code; C(0x020700) is an InfiniBand controller, C(0x020000) an Ethernet controller.
      type: str
      sample: "0x020700"
    model:
      description: Model name for the NVIDIA/Mellanox PCI device id, V(null) when the id is not known.
      type: str
      sample: ConnectX-6
    driver:
      description: Kernel driver bound to the PCI function.
      type: str
      sample: mlx5_core
    is_vf:
      description: Whether the function is an SR-IOV virtual function.
      type: bool
      sample: false
    physfn:
      description: PCI address of the physical function of a VF.
      type: str
      sample: null
    firmware_version:
      description: Running firmware version.
      type: str
      sample: "20.31.1014"
    psid:
      description: Board id (PSID) of the firmware.
      type: str
      sample: MT_0000000222
    hca_type:
      description: HCA type as C(ibstat) prints it.
      type: str
      sample: MT4123
    node_type:
      description: RDMA node type.
      type: str
      sample: CA
    node_guid:
      description: Node GUID, 16 hex digits. All zeros for a VF whose GUID was never set.
      type: str
      sample: "0x0c42a10300aa0010"
    sys_image_guid:
      description: System image GUID, 16 hex digits.
      type: str
      sample: "0x0c42a10300aa0010"
    numa_node:
      description: NUMA node of the PCI function, V(null) when the platform reports none.
      type: int
      sample: 0
    sriov:
      description:
        - SR-IOV state of a physical function.
        - V(null) for VFs and when the kernel exposes no SR-IOV files, for example while SR-IOV is disabled in the firmware (C(SRIOV_EN)).
      type: dict
      contains:
        total_vfs:
          description: Maximum number of VFs (C(sriov_totalvfs)).
          type: int
          sample: 8
        num_vfs:
          description: Number of VFs now enabled (C(sriov_numvfs)).
          type: int
          sample: 0
        drivers_autoprobe:
          description: Whether new VFs are bound to a driver automatically (C(sriov_drivers_autoprobe)).
          type: bool
          sample: true
        vfs:
          description: PCI addresses of the enabled VFs, by VF index.
          type: list
          elements: str
          sample: []
    ports:
      description: Ports of the RDMA device; empty without one.
      type: list
      elements: dict
      contains:
        port:
          description: Port number.
          type: int
          sample: 1
        state:
          description: Logical port state (V(DOWN), V(INIT), V(ARMED), V(ACTIVE), V(ACTIVE_DEFER)).
          type: str
          sample: ACTIVE
        state_num:
          description: Number of the logical port state.
          type: int
          sample: 4
        physical_state:
          description: Physical port state (V(Sleep), V(Polling), V(Disabled), V(LinkUp), V(LinkErrorRecovery), ...).
          type: str
          sample: LinkUp
        physical_state_num:
          description: Number of the physical port state.
          type: int
          sample: 5
        link_layer:
          description: V(InfiniBand) or V(Ethernet).
          type: str
          sample: InfiniBand
        lid:
          description: Base LID. 65535 until a subnet manager assigns one; 0 on Ethernet.
          type: int
          sample: 48
        sm_lid:
          description: LID of the subnet manager, 0 when none was seen.
          type: int
          sample: 1
        lmc:
          description: LID mask count.
          type: int
          sample: 0
        rate:
          description: Rate as the kernel reports it.
          type: str
          sample: 200 Gb/sec (4X HDR)
        rate_gbps:
          description: Rate in Gb/s.
          type: float
          sample: 200
        port_guid:
          description: Port GUID (the lower half of GID 0), 16 hex digits.
          type: str
          sample: "0x0c42a10300aa0010"
        pkeys:
          description: Non-empty entries of the P_Key table, in table order.
          type: list
          elements: str
          sample: ["0xffff", "0x8001"]
        netdev:
          description: Network interface of this port, V(null) when unknown.
          type: str
          sample: ibp59s0f0
summary:
  description: One flat row per port (and one per function without ports), for tables and C(selectattr).
  returned: always
  type: list
  elements: dict
  sample:
    - pci_address: "0000:3b:00.0"
      card_address: "0000:3b:00"
      rdma_device: mlx5_0
      port: 1
      netdev: ibp59s0f0
      model: ConnectX-6
      is_vf: false
      link_layer: InfiniBand
      state: ACTIVE
      physical_state: LinkUp
      rate_gbps: 200
      lid: 48
      port_guid: "0x0c42a10300aa0010"
      firmware_version: "20.31.1014"
      psid: MT_0000000222
firmware_tools:
  description: Firmware configuration tools found on the target.
  returned: always
  type: dict
  contains:
    flavour:
      description:
        - V(mft), V(mstflint), V(both) or V(none).
        - A flavour counts as installed when its configuration tool (C(mlxconfig) or C(mstconfig)) is found.
      type: str
      sample: mstflint
    mft:
      description: Paths of C(mlxconfig), C(mlxfwreset) and C(mst), V(null) when missing.
      type: dict
      sample: {"mlxconfig": null, "mlxfwreset": null, "mst": null}
    mstflint:
      description: Paths of C(mstconfig) and C(mstfwreset), V(null) when missing.
      type: dict
      sample: {"mstconfig": "/usr/bin/mstconfig", "mstfwreset": "/usr/bin/mstfwreset"}
kernel_lockdown:
  description:
    - Kernel lockdown mode (V(none), V(integrity) or V(confidentiality)); firmware tools cannot open the device unless it is V(none).
    - V(null) when securityfs is not mounted.
  returned: always
  type: str
  sample: none
rdma_system:
  description: Settings of the RDMA subsystem.
  returned: always
  type: dict
  contains:
    netns_mode:
      description: RDMA network namespace mode, V(shared) or V(exclusive); V(null) when neither C(rdma) nor sysfs tells (C(ib_core) not loaded).
      type: str
      sample: shared
    source:
      description: Where the settings come from, V(rdma) (C(rdma system show)), V(sysfs) (the C(ib_core) parameter) or V(null).
      type: str
      sample: rdma
    copy_on_fork:
      description: Whether copy-on-fork is on; V(null) when not reported (iproute2 before 5.14, or read from sysfs).
      type: bool
      sample: true
    privileged_qkey:
      description: Whether privileged Q_Keys are allowed; V(null) when not reported (iproute2 before 6.7 or an older kernel).
      type: bool
      sample: false
    monitor:
      description: Whether the RDMA monitor is on; V(null) when not reported (iproute2 before 6.13).
      type: bool
      sample: false
ansible_facts:
  description: What the module read, as node facts.
  returned: always
  type: complex
  contains:
    infiniband_hca:
      description:
        - RV(hcas), RV(firmware_tools), RV(kernel_lockdown) and RV(rdma_system), with C(run_id) (O(run_id)), C(boot), the identity of
          the node's current boot, and C(read_at), when it was read (seconds since the epoch).
      type: dict
    infiniband_hca_stale:
      description: Always V(false). Modules that change the adapters, the VFs or the RDMA netns mode set it to V(true).
      type: bool
    infiniband_pending:
      description:
        - RV(pending), with C(run_id), when O(pending=true); with O(pending_writable=true) also C(writable=true), so that a role's
          step that needs the record writable does not read the node again in the same run.
      type: dict
    infiniband_pending_stale:
      description: V(false) when O(pending=true).
      type: bool
pending:
  description:
    - What the node waits for, with the keys M(fabric.infiniband.pending_info) returns (RV(fabric.infiniband.pending_info#module:entries),
      RV(fabric.infiniband.pending_info#module:action), RV(fabric.infiniband.pending_info#module:next_action),
      RV(fabric.infiniband.pending_info#module:actionable), RV(fabric.infiniband.pending_info#module:tried),
      RV(fabric.infiniband.pending_info#module:fw_reset_sufficient) and RV(fabric.infiniband.pending_info#module:boot)).
  returned: when O(pending=true)
  type: dict
  sample:
    entries: {}
    action: null
    next_action: null
    actionable: []
    tried: []
    fw_reset_sufficient: false
    boot: "8c7e0d5e-2f7e-4b43-9a4b-2c3f0c8a5e61:1"
"""

import time

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.fabric.infiniband.plugins.module_utils import common
from ansible_collections.fabric.infiniband.plugins.module_utils import mlxconfig
from ansible_collections.fabric.infiniband.plugins.module_utils import pci as pciaddr
from ansible_collections.fabric.infiniband.plugins.module_utils import pending
from ansible_collections.fabric.infiniband.plugins.module_utils import rdma
from ansible_collections.fabric.infiniband.plugins.module_utils import sysfs
from ansible_collections.fabric.infiniband.plugins.module_utils._runner import Runner


_DEVICE_FIELDS = ("firmware_version", "psid", "hca_type", "node_type", "node_guid", "sys_image_guid")
_SUMMARY_DEVICE = ("pci_address", "card_address", "rdma_device")
_SUMMARY_PORT = ("port", "netdev")
_SUMMARY_HCA = ("model", "is_vf")
_SUMMARY_LINK = ("link_layer", "state", "physical_state", "rate_gbps", "lid", "port_guid")
_SUMMARY_FW = ("firmware_version", "psid")


def argument_spec():
    spec = common.merge_specs(common.SYSFS_ARG_SPEC)
    spec.update(
        devices=dict(type="list", elements="str"),
        pending=dict(type="bool", default=False),
        pending_path=dict(type="path", default=pending.DEFAULT_PATH),
        pending_writable=dict(type="bool", default=False),
        pending_fail_on_tried=dict(type="bool", default=False),
        run_id=dict(type="str", default=""),
    )
    return spec


def _empty_pci():
    return {
        "pci_address": None, "card_address": None, "vendor_id": None, "device_id": None, "pci_class": None,
        "model": None, "driver": None, "is_vf": False, "physfn": None, "numa_node": None, "sriov": None, "netdevs": [],
    }


def _hca_entry(pci, device, ports):
    """One result entry in a fixed key order."""
    netdevs = set(pci["netdevs"])
    netdevs.update(port["netdev"] for port in ports if port["netdev"])
    entry = {
        "pci_address": pci["pci_address"],
        "card_address": pci["card_address"],
        "rdma_device": device.get("rdma_device"),
        "netdevs": sorted(netdevs),
    }
    for key in ("vendor_id", "device_id", "pci_class", "model", "driver", "is_vf", "physfn"):
        entry[key] = pci[key]
    for key in _DEVICE_FIELDS:
        entry[key] = device.get(key)
    entry["numa_node"] = pci["numa_node"]
    entry["sriov"] = pci["sriov"]
    entry["ports"] = ports
    return entry


def summary_rows(hcas):
    rows = []
    for hca in hcas:
        for port in hca["ports"] or [None]:
            row = dict((key, hca[key]) for key in _SUMMARY_DEVICE)
            row.update((key, port[key] if port else None) for key in _SUMMARY_PORT)
            row.update((key, hca[key]) for key in _SUMMARY_HCA)
            row.update((key, port[key] if port else None) for key in _SUMMARY_LINK)
            row.update((key, hca[key]) for key in _SUMMARY_FW)
            rows.append(row)
    return rows


def _match_keys(hca):
    keys = set([hca["rdma_device"], hca["pci_address"], hca["card_address"], sysfs.short_bdf(hca["pci_address"])])
    keys.update(hca["netdevs"])
    keys.discard(None)
    return set(key.lower() for key in keys)


class HcaInfo(object):

    def __init__(self, module):
        self.module = module
        self.sysfs = sysfs.Sysfs(module.params["sysfs_root"])
        self.filters = module.params["devices"]

    def adapters(self):
        hcas = []
        seen = set()
        for name in self.sysfs.ib_devices():
            device = self.sysfs.ib_device(name)
            bdf = device["pci_address"]
            pci = self.sysfs.pci_function(bdf) if bdf else _empty_pci()
            seen.add(bdf)
            hcas.append(_hca_entry(pci, device, self.sysfs.ib_ports(name, bdf)))
        for bdf in self.sysfs.pci_functions(sysfs.MELLANOX_VENDOR_ID):
            if bdf not in seen:
                hcas.append(_hca_entry(self.sysfs.pci_function(bdf), {}, []))
        hcas.sort(key=lambda hca: (hca["pci_address"] is None, hca["pci_address"] or "", hca["rdma_device"] or ""))
        return hcas

    def select(self, hcas):
        # a PCI address in any accepted form (see module_utils/pci.py) is compared in its normal form
        wanted = dict((pciaddr.normalize(item, "optional") or item.strip().lower(), item) for item in self.filters)
        selected = [hca for hca in hcas if _match_keys(hca).intersection(wanted)]
        matched = set()
        for hca in selected:
            matched.update(_match_keys(hca))
        for key, item in wanted.items():
            if key not in matched:
                self.module.warn("devices: no adapter matches %r" % item.strip().lower())
        return selected

    def rdma_system(self):
        sysfs_mode = self.sysfs.ib_core_netns_mode()
        runner = Runner(self.module, "rdma", required=False)
        show = None
        if runner.available:
            res = runner.run(rdma.system_show_args())
            show = (res.rc, res.stdout, res.stderr)
        settings, problem = rdma.system_settings(show, sysfs_mode)
        # Without ib_core, rdma always fails: that is no news worth a warning.
        if problem and sysfs_mode:
            self.module.warn("'%s' failed (%s); netns mode read from sysfs instead" % (" ".join(res.cmd), problem))
        return settings

    def gather(self):
        if not self.sysfs.is_dir():
            self.module.fail_json(msg="sysfs_root %s is not a directory" % self.sysfs.root)
        hcas = self.adapters()
        if self.filters:
            hcas = self.select(hcas)
        result = dict(
            changed=False,
            hcas=hcas,
            summary=summary_rows(hcas),
            firmware_tools=mlxconfig.find_tools(self.module),
            kernel_lockdown=self.sysfs.lockdown(),
            rdma_system=self.rdma_system(),
        )
        stamp = dict(run_id=self.module.params["run_id"], boot=pending.boot_identity(), read_at=time.time())
        facts = dict(infiniband_hca_stale=False)
        facts["infiniband_hca"] = dict(
            (key, result[key]) for key in ("hcas", "firmware_tools", "kernel_lockdown", "rdma_system"))
        facts["infiniband_hca"].update(stamp)
        if self.module.params["pending"]:
            path = self.module.params["pending_path"]
            result["pending"] = pending.read(self.module, path)
            if self.module.params["pending_writable"]:
                reason = pending.check_writable(path)
                if reason:
                    self.module.fail_json(msg=pending.unwritable_message(
                        path, reason, "A change that waits for a reboot must not be made on this node until it can be recorded."))
            facts["infiniband_pending"] = dict(result["pending"], run_id=stamp["run_id"])
            if self.module.params["pending_writable"]:
                facts["infiniband_pending"]["writable"] = True
            facts["infiniband_pending_stale"] = False
            if self.module.params["pending_fail_on_tried"] and result["pending"]["tried"]:
                self.module.fail_json(msg=pending.tried_message(
                    result["pending"], "Another boot will not apply them: see docs/docsite/rst/reboots.rst."), **result)
        result["ansible_facts"] = facts
        return result


def main():
    module = AnsibleModule(argument_spec=argument_spec(), supports_check_mode=True)
    module.exit_json(**HcaInfo(module).gather())


if __name__ == "__main__":
    main()
