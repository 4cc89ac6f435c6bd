#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
module: gpudirect_info
short_description: Report whether a node is ready for GPUDirect RDMA, and why not
version_added: 0.1.0
description:
  - Finds the NVIDIA GPUs and the NVIDIA/Mellanox HCAs (InfiniBand and Ethernet physical functions; VFs are left out) in sysfs,
    and the PCIe bridges above each of them, from the resolved C(/sys/bus/pci/devices/<address>) links.
  - Pairs every GPU with its closest HCA, named as C(nvidia-smi topo -m) names the path between them (V(PIX), V(PXB), V(PHB),
    V(NODE), V(SYS)). With at least as many HCAs as GPUs the pairing is one-to-one, closest first, then by PCI address.
  - Reads the ACS control bits of the bridges on those paths from their config space, the IOMMU mode, whether C(nvidia-peermem)
    is installed and loaded, and whether the DMA-BUF path (kernel 5.12 or later and the open NVIDIA kernel module 515 or later) can
    replace it.
  - Returns RV(ready) and, when not ready, one sentence per thing to change in RV(reasons), naming the devices and, where the
    P(fabric.infiniband.gpudirect#role) role can make the change, the variable that allows it.
  - Never changes anything. Runs C(modinfo -n nvidia-peermem) once, when C(modinfo) is installed.
author:
  - fabric.infiniband developers (@fabric-infiniband)
requirements:
  - Linux with sysfs. Run as root; without root the kernel shows only the first 64 bytes of a bridge's config space and ACS is
    reported as unknown (V(null)).
  - Optional, C(modinfo) from kmod, to tell whether C(nvidia-peermem) is installed while it is not loaded.
extends_documentation_fragment:
  - fabric.infiniband.attributes
  - fabric.infiniband.attributes.info_module
options:
  require_pairs:
    description:
      - Whether every GPU must have an HCA under the same PCIe switch (relation V(PIX) or V(PXB)) for RV(ready).
      - With V(false) such pairs are still reported with RV(pairs[].ok=false) and their reasons, but do not make the node not ready.
        ACS redirect on a pair's path always does.
    type: bool
    default: true
  files:
    description:
      - Files to read as well, returned in RV(files) by path (whether each exists, its mode and owner, and the text of a regular
        file of at most 64 KiB). It lets the P(fabric.infiniband.gpudirect#role) role tell with this one read whether its own files
        on the node are as it would write them.
    type: list
    elements: path
    default: []
    version_added: 0.3.0
notes:
  - The relation is computed from the sysfs paths, not by C(nvidia-smi). V(PIX) means both devices sit right below ports of one
    PCIe switch; V(PXB) that more switches are in the way but no host bridge; V(PHB) that the path goes through a root port or
    the host bridge; V(NODE) that it crosses host bridges of one NUMA node; V(SYS) that it crosses NUMA nodes.
  - ACS redirect (C(ReqRedir) or C(CmpltRedir)) on a bridge below the common switch of a pair sends the pair's peer-to-peer traffic
    up to the root complex. Only bridges below the common switch are checked; a pair through the host bridge is not ready anyway.
  - The IOMMU mode is read from the C(type) of the IOMMU groups of the GPUs and HCAs (kernel 5.11 or later), else from C(iommu=pt)
    on the kernel command line.
seealso:
  - name: GPUDirect RDMA
    description: NVIDIA's documentation of GPUDirect RDMA, nvidia-peermem and DMA-BUF.
    link: https://docs.nvidia.com/cuda/gpudirect-rdma/
"""

EXAMPLES = r"""
- name: Check GPUDirect RDMA readiness
  fabric.infiniband.gpudirect_info:
  register: __gpudirect

- name: Show the GPU/HCA pairs
  ansible.builtin.debug:
    msg: "GPU {{ item.gpu }} <-> HCA {{ item.hca }}: {{ item.relation }}{{ '' if item.ok else ' (not ready)' }}"
  loop: "{{ __gpudirect.pairs }}"

- name: Stop when the node is not ready
  ansible.builtin.assert:
    that: __gpudirect.ready
    fail_msg: "{{ __gpudirect.reasons | join('; ') }}"
"""

RETURN = r"""
gpus:
  description: NVIDIA GPUs (VGA or 3D controller functions), sorted by PCI address.
  returned: always
  type: list
  elements: dict
  contains:
    pci_address:
      description: PCI address.
      type: str
      sample: "0000:1b:00.0"
    vendor_id:
      description: PCI vendor id, 4 hex digits.
      type: str
      sample: "10de"
    device_id:
      description: PCI device id, 4 hex digits.
      type: str
      sample: "2330"
    numa_node:
      description: NUMA node, V(null) when the platform reports none.
      type: int
      sample: 0
    driver:
      description: Kernel driver bound to the function, V(null) when none.
      type: str
      sample: nvidia
    path:
      description: PCI addresses of the bridges above the function, from the root port down.
      type: list
      elements: str
      sample: ["0000:16:01.0", "0000:17:00.0", "0000:18:00.0"]
    iommu_group:
      description: IOMMU group number, V(null) without an IOMMU.
      type: str
      sample: "12"
hcas:
  description: NVIDIA/Mellanox InfiniBand and Ethernet physical functions, sorted by PCI address.
  returned: always
  type: list
  elements: dict
  contains:
    pci_address:
      description: PCI address.
      type: str
      sample: "0000:1a:00.0"
    device_id:
      description: PCI device id, 4 hex digits.
      type: str
      sample: "1021"
    rdma_device:
      description: RDMA device of the function, V(null) when it has none.
      type: str
      sample: mlx5_0
    netdev:
      description: Network interface of the function (IPoIB child interfaces left out), V(null) when none.
      type: str
      sample: ibp26s0
    numa_node:
      description: NUMA node, V(null) when the platform reports none.
      type: int
      sample: 0
    driver:
      description: Kernel driver bound to the function, V(null) when none.
      type: str
      sample: mlx5_core
    path:
      description: PCI addresses of the bridges above the function, from the root port down.
      type: list
      elements: str
      sample: ["0000:16:01.0", "0000:17:00.0", "0000:18:01.0"]
    iommu_group:
      description: IOMMU group number, V(null) without an IOMMU.
      type: str
      sample: "13"
bridges:
  description: The bridges on the path of some GPU or HCA, sorted by PCI address.
  returned: always
  type: list
  elements: dict
  contains:
    pci_address:
      description: PCI address.
      type: str
      sample: "0000:18:00.0"
    port_type:
      description:
        - PCI Express port type, V(root_port), V(upstream) or V(downstream) (switch ports), V(pcie_to_pci) and others.
        - V(null) when the config space cannot be read.
      type: str
      sample: downstream
    acs:
      description:
        - Access Control Services of the bridge.
        - V(null) when unknown, because the config space read was shorter than 256 bytes (not root).
        - Without the ACS capability, RV(bridges[].acs.capable) is V(false) and every bit V(false).
      type: dict
      contains:
        capable:
          description: Whether the bridge has the ACS extended capability.
          type: bool
        src_valid:
          description: ACS Source Validation enabled (C(SrcValid)).
          type: bool
        trans_blk:
          description: ACS Translation Blocking enabled (C(TransBlk)).
          type: bool
        req_redir:
          description: ACS P2P Request Redirect enabled (C(ReqRedir)).
          type: bool
        cmplt_redir:
          description: ACS P2P Completion Redirect enabled (C(CmpltRedir)).
          type: bool
        upstream_fwd:
          description: ACS Upstream Forwarding enabled (C(UpstreamFwd)).
          type: bool
        egress_ctrl:
          description: ACS P2P Egress Control enabled (C(EgressCtrl)).
          type: bool
        direct_trans:
          description: ACS Direct Translated P2P enabled (C(DirectTrans)).
          type: bool
pairs:
  description: One entry per GPU, in GPU order, with the HCA it is paired with.
  returned: always
  type: list
  elements: dict
  contains:
    gpu:
      description: PCI address of the GPU.
      type: str
      sample: "0000:1b:00.0"
    hca:
      description: PCI address of the HCA.
      type: str
      sample: "0000:1a:00.0"
    relation:
      description: V(PIX), V(PXB), V(PHB), V(NODE) or V(SYS), as C(nvidia-smi topo -m) names them.
      type: str
      sample: PIX
    common_bridge:
      description: The closest bridge above both, V(null) when they share none (different root ports or host bridges).
      type: str
      sample: "0000:17:00.0"
    acs_redirect:
      description: Bridges below the common bridge, on the path between the two, with ACS C(ReqRedir) or C(CmpltRedir) set.
      type: list
      elements: str
      sample: []
    ok:
      description: Whether the pair is fit for GPUDirect RDMA (relation V(PIX) or V(PXB) and no ACS redirect).
      type: bool
      sample: true
    reasons:
      description: What is wrong with the pair, empty when RV(pairs[].ok).
      type: list
      elements: str
      sample: []
iommu:
  description: The IOMMU.
  returned: always
  type: dict
  contains:
    enabled:
      description: Whether an IOMMU is on (C(/sys/class/iommu) is not empty).
      type: bool
      sample: true
    mode:
      description: V(off), V(passthrough), V(translated) or V(unknown).
      type: str
      sample: passthrough
    cmdline:
      description: The IOMMU arguments of the kernel command line.
      type: list
      elements: str
      sample: ["intel_iommu=on", "iommu=pt"]
    units:
      description: The IOMMU units, the entries of C(/sys/class/iommu).
      type: list
      elements: str
      sample: ["dmar0", "dmar1"]
peermem:
  description: The C(nvidia-peermem) kernel module.
  returned: always
  type: dict
  contains:
    installed:
      description: Whether C(modinfo -n nvidia-peermem) finds the module file (or it is loaded).
      type: bool
      sample: true
    loaded:
      description: Whether the module is loaded.
      type: bool
      sample: true
    refcnt:
      description: Its reference count, V(null) when not loaded.
      type: int
      sample: 0
    holders:
      description: The modules that use it.
      type: list
      elements: str
      sample: []
dmabuf:
  description: Whether the DMA-BUF path can serve GPUDirect RDMA instead of C(nvidia-peermem).
  returned: always
  type: dict
  contains:
    kernel:
      description: Whether the running kernel is 5.12 or later.
      type: bool
      sample: true
    driver:
      description: Whether the loaded NVIDIA driver is the open kernel module, version 515 or later.
      type: bool
      sample: true
    driver_version:
      description: Version of the loaded NVIDIA driver, V(null) when it is not loaded.
      type: str
      sample: "550.54.15"
    open_kernel_module:
      description: Whether the NVIDIA driver is the open kernel module (its C(/sys/module/nvidia/taint) has no P, proprietary, flag); V(null) when unknown.
      type: bool
      sample: true
    usable:
      description: Both RV(dmabuf.kernel) and RV(dmabuf.driver).
      type: bool
      sample: true
gpudirect_path:
  description: V(peermem) when C(nvidia-peermem) is loaded, else V(dmabuf) when usable, else V(null).
  returned: always
  type: str
  sample: peermem
nvidia_loaded:
  description: Whether the NVIDIA GPU driver (kernel module C(nvidia)) is loaded.
  returned: always
  type: bool
  sample: true
acs_unknown:
  description: Bridges on the path of a V(PIX) or V(PXB) pair whose ACS could not be read; the module warns about them.
  returned: always
  type: list
  elements: str
  sample: []
ready:
  description: Whether the node is ready for GPUDirect RDMA.
  returned: always
  type: bool
  sample: false
reasons:
  description: Why not, one sentence per thing to change; empty when RV(ready).
  returned: always
  type: list
  elements: str
  sample:
    - "GPU 0000:1b:00.0 and HCA 0000:1a:00.0 (mlx5_0): ACS ReqRedir+ CmpltRedir+ on bridge 0000:19:01.0 sends their peer-to-peer
      traffic through the root complex; clear it (gpudirect_allow_acs_change)"
files:
  description: The files of O(files), by path.
  returned: always
  type: dict
  version_added: 0.3.0
  sample: {/etc/modules-load.d/fabric-infiniband-gpudirect.conf: {exists: true, mode: "0644", uid: 0, gid: 0,
           content: "nvidia_peermem\n"}}
"""

import os
import stat

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.fabric.infiniband.plugins.module_utils import gpudirect
from ansible_collections.fabric.infiniband.plugins.module_utils._runner import Runner


# Where the host's sysfs and procfs are; module-level so that unit tests can point them at a fake tree.
SYSFS_ROOT = "/sys"
PROC_ROOT = "/proc"


def argument_spec():
    return dict(
        require_pairs=dict(type="bool", default=True),
        files=dict(type="list", elements="path", default=[]),
    )


# The largest file whose text is returned.
FILE_LIMIT = 65536


def read_files(paths):
    """For each path: whether it exists (a dangling link does), its mode, owner and group, and the text of a regular file of at
    most FILE_LIMIT bytes (None otherwise, or when it cannot be read)."""
    out = {}
    for path in paths:
        entry = dict(exists=False, mode=None, uid=None, gid=None, content=None)
        try:
            st = os.lstat(path)
        except OSError:
            out[path] = entry
            continue
        entry.update(exists=True, mode="%04o" % stat.S_IMODE(st.st_mode), uid=st.st_uid, gid=st.st_gid)
        if stat.S_ISREG(st.st_mode) and st.st_size <= FILE_LIMIT:
            try:
                with open(path, "rb") as handle:
                    entry["content"] = handle.read().decode("utf-8", "replace")
            except (IOError, OSError):
                pass
        out[path] = entry
    return out


def kernel_release():
    return os.uname()[2]


class GpudirectInfo(object):

    def __init__(self, module):
        self.module = module

    def peermem_installed(self):
        """Whether modinfo finds nvidia-peermem; any failure counts as not installed."""
        runner = Runner(self.module, "modinfo", required=False)
        if not runner.available:
            return False
        return runner.run(["-n", "nvidia-peermem"]).ok

    def gather(self):
        reader = gpudirect.GpuDirect(SYSFS_ROOT, PROC_ROOT)
        report = reader.report(
            peermem_installed=self.peermem_installed(),
            kernel_release=kernel_release(),
            require_pairs=self.module.params["require_pairs"],
        )
        if report["acs_unknown"]:
            self.module.warn("cannot read the ACS control bits of bridge(s) %s (config space shorter than 256 bytes: run as root); "
                             "ACS redirect on them is not checked" % ", ".join(report["acs_unknown"]))
        if report["iommu"]["mode"] == "unknown":
            self.module.warn("the IOMMU is on but its mode is unknown (no IOMMU group type and no iommu=pt on the kernel command line)")
        report["files"] = read_files(self.module.params["files"])
        report["changed"] = False
        return report


def main():
    module = AnsibleModule(argument_spec=argument_spec(), supports_check_mode=True)
    module.exit_json(**GpudirectInfo(module).gather())


if __name__ == "__main__":
    main()
