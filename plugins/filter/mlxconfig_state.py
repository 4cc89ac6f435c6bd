# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
name: mlxconfig_state
short_description: The fact of what this run wrote to or read from each card's firmware
version_added: 0.2.0
author: fabric.infiniband developers (@fabric-infiniband)
description:
  - Takes the registered results of a loop of M(fabric.infiniband.mlxconfig) and returns the fact C(infiniband_firmware), per card
    the parameters the module was given, whether each waits for a reboot, and whether the card loads them only on a power cycle,
    stamped with the current run (P(fabric.infiniband.run_id#lookup)).
  - Merged into O(previous) when that belongs to the same run, so that a later role of the run knows every card asked so far. A role
    that needs a card's parameters that this fact already holds takes its answer from it instead of querying the card again
    (P(fabric.infiniband.mlxconfig_covered#filter)).
  - Skipped and failed results are left out.
options:
  _input:
    description: The registered loop (its C(results)), or the list of results.
    type: raw
    required: true
  previous:
    description: The fact before, or nothing.
    type: raw
    default: null
  others:
    description:
      - The other roles' parameters per card that the loop added to each card's C(set) (P(fabric.infiniband.firmware_others#filter)),
        so that the fact names every parameter the card was given; the loop's C(item.params) holds the role's own.
    type: dict
    default: {}
  hca:
    description:
      - The fact C(infiniband_hca) this run planned from. The firmware fact names the reading it was made with; a later reading (after
        a boot, a firmware reset, or a module that changed the adapters) makes it cover nothing, so that the cards are asked again.
    type: raw
"""

EXAMPLES = r"""
- name: Publish what the firmware loop wrote and read
  ansible.builtin.set_fact:
    infiniband_firmware: >-
      {{ __fw | fabric.infiniband.mlxconfig_state(infiniband_firmware | default(none), hca=ansible_facts.infiniband_hca, others=__others) }}
"""

RETURN = r"""
_value:
  description: V({run_id, hca_read, devices}); C(devices) by the card's PCI address, each V({params, power_cycle_required}), C(params) by name
    (upper case), each V({requested, reboot_required}).
  type: dict
"""

from ansible_collections.fabric.infiniband.plugins.plugin_utils import node_state


def mlxconfig_state(results, previous=None, hca=None, others=None):
    if isinstance(results, dict):
        results = results.get("results") or []
    same = node_state.is_current(previous) and previous.get("hca_read") == node_state.reading(hca)
    devices = dict(previous.get("devices") or {}) if same else {}
    for result in results or []:
        if not isinstance(result, dict) or result.get("skipped") or result.get("failed"):
            continue
        item = result.get("item") or {}
        device = item.get("device") or result.get("device")
        if not device:
            continue
        # what the set was given: the role's own parameters and the other roles' for the same card, as the task merged them
        asked = dict(item.get("params") or {})
        asked.update((others or {}).get(device) or {})
        reported = dict((str(name).upper(), info) for name, info in (result.get("params") or {}).items())
        params = {}
        for name, value in asked.items():
            info = reported.get(str(name).upper()) or {}
            params[str(name).upper()] = {
                "requested": str(value),
                "reboot_required": bool(info.get("reboot_required", result.get("reboot_required"))),
            }
        # A power cycle asked by any set of this reading stays asked: a later query of the same card cannot tell.
        power = bool(result.get("power_cycle_required")) or bool((devices.get(str(device)) or {}).get("power_cycle_required"))
        devices[str(device)] = {"params": params, "power_cycle_required": power}
    return {"run_id": node_state.run_id(), "hca_read": node_state.reading(hca), "devices": devices}


class FilterModule:
    def filters(self):
        return {"mlxconfig_state": mlxconfig_state}
