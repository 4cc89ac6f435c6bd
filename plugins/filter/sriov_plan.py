# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
name: sriov_plan
short_description: Decide the VFs, VF GUIDs and SR-IOV firmware settings of a host
version_added: 0.1.0
author: fabric.infiniband developers (@fabric-infiniband)
description:
  - Takes the result of M(fabric.infiniband.hca_info) and the P(fabric.infiniband.sriov#role) role's C(sriov_pfs), and returns
    what the role writes, per PF (VF count, GUIDs, link state) and per card (the firmware's C(SRIOV_EN) and C(NUM_OF_VFS)).
  - C(NUM_OF_VFS) is one value per card, applied to each of its PFs, so it is the largest VF count any PF of the card asks
    for (or O(firmware_num_vfs) when that is larger). A card is left out of C(cards) when the firmware it runs already allows
    that many (C(sriov_totalvfs) in sysfs), since lowering C(NUM_OF_VFS) would cost a reboot and gain nothing.
  - GUIDs come from the PF's C(guids) list when given, else from the scheme C(<prefix 2 bytes><host id 4 bytes><PF index>
    <VF index>) with O(guid_mode=scheme), else none (O(guid_mode=none), for sites where ib-kubernetes or the CNI sets them).
    The PF index is the PF's position among the host's NVIDIA/Mellanox PFs in PCI order.
  - Bad input fails with a message that names the variable and what it accepts.
  - The role's own step (M(fabric.infiniband.sriov)) plans with the same code, C(plugins/plugin_utils/sriov.py).
options:
  _input:
    description: The registered result of M(fabric.infiniband.hca_info).
    type: dict
    required: true
  pfs:
    description: The role's C(sriov_pfs).
    type: list
    elements: dict
    required: true
  guid_mode:
    description: V(scheme) or V(none).
    type: str
    default: scheme
  guid_prefix:
    description: The scheme's 2-byte prefix, locally administered.
    type: str
    default: "0x02fa"
  host_id:
    description: The scheme's host id (0 to 4294967295); derived from O(host_name) when V(null).
    type: int
  host_name:
    description: The inventory name, from which the host id is derived.
    type: str
    required: true
  link_state:
    description: The link state of VFs whose PF entry does not give one (V(auto), V(enable), V(disable)).
    type: str
    default: auto
  firmware_num_vfs:
    description: A floor for C(NUM_OF_VFS) of every card with a PF in O(pfs) (0 for none).
    type: int
    default: 0
  allow_vf_recreate:
    description:
      - The role's C(sriov_allow_vf_recreate). Without it, a PF that has VFs now and is asked for another non-zero count is
        refused here, before any firmware write or reboot, since the kernel changes the count only through 0, which destroys every
        VF of the PF (M(fabric.infiniband.sriov_vfs) refuses the same change when its turn comes).
    type: bool
    default: true
"""

EXAMPLES = r"""
- name: Plan the VFs of this host
  ansible.builtin.set_fact:
    __plan: "{{ __hca | fabric.infiniband.sriov_plan([{'pf': '0000:3b:00.0', 'num_vfs': 4}], host_name=inventory_hostname) }}"
"""

RETURN = r"""
_value:
  description: The plan.
  type: dict
  contains:
    pfs:
      description:
        - One entry per PF in O(pfs) with C(pf) (PCI address), C(card), C(pf_index), C(rdma_device), C(netdev), C(num_vfs),
          C(link_state), C(total_vfs) (what sysfs allows now, V(null) while SR-IOV is off), C(ready_now) (whether the
          firmware allows the VFs now) and C(vfs) (the module's C(vfs)).
      type: list
      elements: dict
    cards:
      description:
        - One entry per card whose firmware must change, with C(device), C(card), C(model), C(total_vfs) (what it runs now)
          and C(params) for M(fabric.infiniband.mlxconfig).
      type: list
      elements: dict
    guids:
      description: Every VF GUID of the host, V(0x) and 16 hex digits, in PF and VF order.
      type: list
      elements: str
    boot:
      description: What the role's boot-time unit reads, C(pfs) with C(pf), C(num_vfs), C(link_state) and C(vfs) per PF.
      type: dict
    operator_pool:
      description: The entries of sriov-network-operator's static GUID pool file, C(pci_address) and C(guids) per PF.
      type: list
      elements: dict
"""

from ansible_collections.fabric.infiniband.plugins.plugin_utils.sriov import plan


def sriov_plan(hca, pfs, host_name, guid_mode="scheme", guid_prefix="0x02fa", host_id=None, link_state="auto",
               firmware_num_vfs=0, allow_vf_recreate=True):
    return plan(hca, pfs, host_name, guid_mode=guid_mode, guid_prefix=guid_prefix, host_id=host_id, link_state=link_state,
                firmware_num_vfs=firmware_num_vfs, allow_vf_recreate=allow_vf_recreate)


class FilterModule:
    def filters(self):
        return {"sriov_plan": sriov_plan}
