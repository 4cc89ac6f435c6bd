# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
name: firmware_pending
short_description: What the firmware role records in the pending record after its burns
version_added: 0.1.0
author: fabric.infiniband developers (@fabric-infiniband)
description:
  - Takes the plan of P(fabric.infiniband.firmware_plan#filter) and the results of M(fabric.infiniband.firmware_burn) over its
    C(burns), and returns the entry of the role for M(fabric.infiniband.pending_action).
  - The action is the strongest the tools named for this run's burns (V(fw_reset) for "run mlxfwreset or reboot", V(reboot),
    V(power_cycle)); a card that waits from an earlier run counts as a firmware reset's, which a reboot also gives.
options:
  _input:
    description: The plan.
    type: dict
    required: true
  burns:
    description: The C(results) of the burn loop.
    type: list
    elements: dict
    default: []
"""

EXAMPLES = r"""
- name: Record what waits
  fabric.infiniband.pending_action:
    name: firmware
    state: "{{ (__plan | fabric.infiniband.firmware_pending(__burnt.results)).state }}"
    action: "{{ (__plan | fabric.infiniband.firmware_pending(__burnt.results)).action }}"
"""

RETURN = r"""
_value:
  description: The entry.
  type: dict
  contains:
    state:
      description: V(present) when a card waits for an activation, else V(absent).
      type: str
    action:
      description: V(fw_reset), V(reboot) or V(power_cycle).
      type: str
    reason:
      description: One sentence per card that waits.
      type: str
    devices:
      description: The PCI addresses of the cards that wait (a firmware reset resets them).
      type: list
      elements: str
    versions:
      description: The version each of them waits to run, by PCI address.
      type: dict
"""

from ansible_collections.fabric.infiniband.plugins.plugin_utils import firmware


def firmware_pending(plan, burns=None):
    return firmware.pending(plan or {}, burns)


class FilterModule:
    def filters(self):
        return {"firmware_pending": firmware_pending}
