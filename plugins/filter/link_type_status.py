# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
name: link_type_status
short_description: Judge the firmware link types of a host after M(fabric.infiniband.mlxconfig) ran over a link type plan
version_added: 0.1.0
author: fabric.infiniband developers (@fabric-infiniband)
description:
  - Takes the registered loop of M(fabric.infiniband.mlxconfig) over the entries of P(fabric.infiniband.link_type_plan#filter)
    and the result of M(fabric.infiniband.hca_info), and says which cards run the desired link types, which wait for a reboot,
    which have no link type parameters (Ethernet-only), and whether the ports of the live cards show the link layer the
    firmware runs.
options:
  _input:
    description: The C(results) of the registered M(fabric.infiniband.mlxconfig) loop; each C(item) is a plan entry.
    type: list
    elements: dict
    required: true
  hca:
    description: The registered result of M(fabric.infiniband.hca_info).
    type: dict
    required: true
"""

EXAMPLES = r"""
- name: Judge the run
  ansible.builtin.set_fact:
    __status: "{{ __fw.results | fabric.infiniband.link_type_status(__hca) }}"
"""

RETURN = r"""
_value:
  description: The judgement.
  type: dict
  contains:
    live:
      description: First functions of the cards whose firmware runs the desired link types.
      type: list
      elements: str
    pending:
      description: First functions of the cards that wait for a reboot (or a power cycle).
      type: list
      elements: str
    unsupported:
      description: Cards without link type parameters (Ethernet-only), as C(<device> (<model>)).
      type: list
      elements: str
    power_cycle:
      description: Whether a card said that only a power cycle loads the new configuration.
      type: bool
    reason:
      description: One sentence naming the pending cards and parameters.
      type: str
    mismatches:
      description: Ports of live cards whose link layer in sysfs is not the one the firmware runs.
      type: list
      elements: str
"""

_LINK_LAYER = {"IB": "InfiniBand", "ETH": "Ethernet"}


def link_type_status(results, hca):
    """Judge a loop of mlxconfig over a link_type_plan against what hca_info saw."""
    ports = {}
    for entry in hca.get("hcas") or []:
        if entry.get("pci_address") and entry.get("ports"):
            ports[entry["pci_address"].lower()] = entry["ports"][0].get("link_layer")
    status = {"live": [], "pending": [], "unsupported": [], "power_cycle": False, "mismatches": [], "reason": ""}
    reasons = []
    for result in results:
        item = result.get("item") or {}
        # Only the link types count: other parameters written in the same set (other roles' published ones)
        # belong to the role that asked for them, which records its own reboot.
        params = dict((name, info) for name, info in (result.get("params") or {}).items()
                      if str(name).upper().startswith("LINK_TYPE"))
        actions = dict((name, info.get("action")) for name, info in params.items())
        if actions and all(action == "unsupported" for action in actions.values()):
            status["unsupported"].append("%s (%s)" % (item.get("device"), item.get("model")))
            continue
        waits = any(info.get("reboot_required", result.get("reboot_required")) for info in params.values()) \
            if params else result.get("reboot_required")
        if waits:
            status["pending"].append(item.get("device"))
            status["power_cycle"] = status["power_cycle"] or bool(result.get("power_cycle_required"))
            waiting = [name for name, info in sorted(params.items()) if info.get("action") in ("write", "pending_reboot")]
            reasons.append("%s: %s at the next boot" % (item.get("device"), ", ".join(
                "%s=%s" % (name, item.get("params", {}).get(name)) for name in waiting)))
            continue
        status["live"].append(item.get("device"))
        functions = sorted(address for address in ports if address.startswith(str(item.get("card", "")).lower() + "."))
        for index, link_type in enumerate(item.get("link_types") or []):
            if index >= len(functions):
                break
            seen = ports[functions[index]]
            if seen != _LINK_LAYER.get(link_type):
                status["mismatches"].append(
                    "%s port %d: the firmware runs LINK_TYPE_P%d=%s, but the port's link layer in sysfs is %s" % (
                        functions[index], index + 1, index + 1, link_type, seen))
    status["reason"] = "; ".join(reasons)
    return status


class FilterModule:
    def filters(self):
        return {"link_type_status": link_type_status}
