# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
name: mlxconfig_covered
short_description: Split a role's firmware cards into those this run already wrote or read and those to ask
version_added: 0.2.0
author: fabric.infiniband developers (@fabric-infiniband)
description:
  - Takes a role's cards (each with C(device) and C(params)) and the fact C(infiniband_firmware) (P(fabric.infiniband.mlxconfig_state#filter)).
    A card is covered when the fact belongs to the current run and holds the same value for every one of the card's parameters. An
    earlier role of the run wrote them (or found them) in its own C(set), so querying the card again would only cost time.
  - Returns V({covered, todo, power_cycle_devices}). C(covered) has one entry per covered card, shaped like a registered loop result of
    M(fabric.infiniband.mlxconfig) (C(item), C(reboot_required), C(power_cycle_required)), C(todo) the other cards, for the module.
    C(power_cycle_devices) names the cards whose C(set) in this run said that only a power cycle loads it, which a later query of
    the card (of a card in C(todo)) cannot tell.
options:
  _input:
    description: The cards, each a dict with C(device) and C(params).
    type: list
    elements: dict
    required: true
  fact:
    description: The fact C(infiniband_firmware), or nothing.
    type: raw
    default: null
  hca:
    description:
      - The fact C(infiniband_hca) this run planned from. The firmware fact names the reading it was made with; a later reading (after
        a boot, a firmware reset, or a module that changed the adapters) makes it cover nothing, so that the cards are asked again.
    type: raw
"""

EXAMPLES = r"""
- name: Set SR-IOV's parameters on the cards no earlier role of this run wrote them to
  fabric.infiniband.mlxconfig:
    device: "{{ item.device }}"
    params: "{{ item.params }}"
  loop: "{{ (__cards | fabric.infiniband.mlxconfig_covered(infiniband_firmware | default(none), ansible_facts.infiniband_hca)).todo }}"
"""

RETURN = r"""
_value:
  description: V({covered, todo, power_cycle_devices}).
  type: dict
"""

from ansible_collections.fabric.infiniband.plugins.plugin_utils import node_state


def mlxconfig_covered(cards, fact=None, hca=None):
    same = node_state.is_current(fact) and fact.get("hca_read") == node_state.reading(hca)
    devices = (fact.get("devices") or {}) if same else {}
    covered, todo = [], []
    for card in cards or []:
        known = devices.get(str(card.get("device"))) or {}
        params = dict((str(name).upper(), value) for name, value in (card.get("params") or {}).items())
        seen = known.get("params") or {}
        if params and all(name in seen and str(seen[name].get("requested")).lower() == str(value).lower()
                          for name, value in params.items()):
            covered.append({
                "item": card,
                "changed": False,
                "reboot_required": any(seen[name].get("reboot_required") for name in params),
                "power_cycle_required": bool(known.get("power_cycle_required")),
                "from_fact": True,
            })
        else:
            todo.append(card)
    power = sorted(device for device, known in devices.items() if (known or {}).get("power_cycle_required"))
    return {"covered": covered, "todo": todo, "power_cycle_devices": power}


class FilterModule:
    def filters(self):
        return {"mlxconfig_covered": mlxconfig_covered}
