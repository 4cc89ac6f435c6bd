# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
name: firmware_plan
short_description: Decide which cards of a host get which firmware image
version_added: 0.1.0
author: fabric.infiniband developers (@fabric-infiniband)
description:
  - Takes the result of M(fabric.infiniband.hca_info) (the cards, their models) and, with O(devices), the C(devices) of
    M(fabric.infiniband.firmware_info) (the versions on each card's flash and the one it runs), and returns what each card
    gets under the rules of P(fabric.infiniband.firmware#role).
  - A rule of O(versions) names cards by PSID or by model; the first rule that names a card wins. A card whose flash does not hold
    the version asked (or, with C(at_least), a newer one) is burnt with the image of O(images) that has the card's PSID and that
    version; a card whose flash holds it but runs another version waits for an activation.
  - Without O(devices) (a run's preflight, before the firmware tools may be installed) the running version and PSID in sysfs
    stand for the flash's.
  - Returns the problems instead of failing, each naming the variable and its entry, so that the role fails with all of them.
options:
  _input:
    description: The registered result of M(fabric.infiniband.hca_info), or the fact C(infiniband_hca).
    type: dict
    required: true
  versions:
    description: The role's C(firmware_versions).
    type: list
    elements: dict
    required: true
  images:
    description: The role's C(firmware_images).
    type: list
    elements: dict
    required: true
  devices:
    description: The C(devices) of M(fabric.infiniband.firmware_info); V(null) in the preflight.
    type: list
    elements: dict
  host:
    description: The host's name, which starts each problem.
    type: str
    default: ""
"""

EXAMPLES = r"""
- name: Plan the burns
  ansible.builtin.set_fact:
    __plan: "{{ ansible_facts.infiniband_hca | fabric.infiniband.firmware_plan(firmware_versions, firmware_images, devices=__fw.devices) }}"
"""

RETURN = r"""
_value:
  description: The plan.
  type: dict
  contains:
    cards:
      description:
        - One entry per card, with C(card), C(device), C(model), C(psid), C(running), C(flash), C(rule) (the index of the rule in
          O(versions), or V(null)), C(wanted), C(at_least), C(image) (the entry of O(images) to burn, with its C(index)), and
          C(action)
        - C(action) is V(ok) (it runs what is asked), V(burn), V(waits) (its flash holds it, an activation runs it) or V(unmatched).
      type: list
      elements: dict
    burns:
      description: The cards to burn, with their images.
      type: list
      elements: dict
    waiting:
      description: The cards whose version waits for an activation after this run's burns (to burn, or burnt).
      type: list
      elements: dict
    problems:
      description: Sentences that name the variable and the entry at fault; empty when the plan holds.
      type: list
      elements: str
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.fabric.infiniband.plugins.plugin_utils import firmware


def firmware_plan(hca, versions, images, devices=None, host=""):
    if not isinstance(hca, dict) or "hcas" not in hca:
        raise AnsibleFilterError("firmware_plan expects the registered result of fabric.infiniband.hca_info")
    return firmware.plan(firmware.cards_from(hca, devices), versions, images, host=host)


class FilterModule:
    def filters(self):
        return {"firmware_plan": firmware_plan}
