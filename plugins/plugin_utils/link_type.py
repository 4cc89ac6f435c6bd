# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The link_type role's decisions (controller side), for its action (plugins/action/link_type.py) and the verify role.

- :func:`plan`: the link type of every port of every card of a host, from the fact infiniband_hca and the role's settings
  (``link_type_default``, ``link_type_adapters``): one entry per card (a card is the PCI functions that share a bus and
  slot), with the ``LINK_TYPE_Pn`` parameters to set through its first function. A ``pci_address`` or ``model`` that
  matches no card of the host is refused (a selector that selects nothing would let the default apply to the card
  meant). A card of an Ethernet-only model that gets the default has ``query: false``: its firmware is not asked.
- :func:`status`: the mlxconfig results of the plan's cards, judged against the ports' link layers: which cards run
  their link types, which wait for a reboot (or a power cycle), which have no link type, and where the firmware and
  the driver disagree.
"""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.fabric.infiniband.plugins.module_utils import pci
from ansible_collections.fabric.infiniband.plugins.module_utils.sysfs import ETHERNET_ONLY_MODELS, model_problem

LINK_TYPES = ("ib", "eth")


def _card_of(address, where):
    try:
        return pci.parse(pci.require(address, where, "optional"), "optional").card
    except pci.PciAddressError as exc:
        raise AnsibleFilterError(str(exc)) from None


def _cards(hca):
    cards = {}
    for entry in hca.get("hcas") or []:
        if entry.get("is_vf") or not entry.get("pci_address") or not entry.get("model"):
            continue
        card = cards.setdefault(entry["card_address"].lower(), {"functions": [], "model": entry["model"]})
        card["functions"].append(entry["pci_address"].lower())
    for card in cards.values():
        card["functions"].sort()
    return cards


def _describe(cards):
    return ", ".join("%s (%s)" % (card, cards[card]["model"]) for card in sorted(cards)) or "none"


def _validate(default, adapters):
    if default is not None and default not in LINK_TYPES:
        raise AnsibleFilterError("link_type_default must be one of ib, eth or null, got %r" % (default,))
    if not isinstance(adapters, list):
        raise AnsibleFilterError("link_type_adapters must be a list, got %s" % type(adapters).__name__)
    for index, item in enumerate(adapters):
        where = "link_type_adapters[%d]" % index
        if not isinstance(item, dict):
            raise AnsibleFilterError("%s must be a mapping with pci_address or model, and ports" % where)
        unknown = sorted(set(item) - {"pci_address", "model", "ports"})
        if unknown:
            raise AnsibleFilterError("%s has unknown keys %s; accepted: pci_address, model, ports" % (where, ", ".join(unknown)))
        if ("pci_address" in item) == ("model" in item):
            raise AnsibleFilterError("%s needs exactly one of pci_address or model" % where)
        if "pci_address" in item:
            _card_of(item["pci_address"], where + ".pci_address")
        elif model_problem(item["model"], where):
            raise AnsibleFilterError(model_problem(item["model"], where))
        ports = item.get("ports")
        if not isinstance(ports, list) or not ports or any(str(port).lower() not in LINK_TYPES for port in ports):
            raise AnsibleFilterError("%s.ports must be a non-empty list of ib or eth (port 1, port 2), got %r" % (where, ports))


def plan(hca, default="ib", adapters=None):
    adapters = adapters or []
    if not isinstance(hca, dict) or "hcas" not in hca:
        raise AnsibleFilterError("link_type_plan expects the registered result of fabric.infiniband.hca_info")
    _validate(default, adapters)
    cards = _cards(hca)
    chosen = {}
    for index, item in enumerate(adapters):
        if "pci_address" in item:
            card = _card_of(item["pci_address"], "link_type_adapters[%d].pci_address" % index)
            if card not in cards:
                raise AnsibleFilterError("link_type_adapters[%d].pci_address %s is not a card of this host; its cards: %s" % (
                    index, item["pci_address"], _describe(cards)))
            matches = [card]
        else:
            matches = [card for card, info in cards.items() if info["model"].lower() == item["model"].strip().lower()]
            if not matches:
                # a selector that selects nothing would let the default apply to the card meant
                raise AnsibleFilterError("link_type_adapters[%d].model %s matches no card of this host; its cards: %s. Set "
                                         "link_type_adapters per host or group where the model is" % (
                                             index, item["model"], _describe(cards)))
        for card in matches:
            # The first entry that names a card wins, so put exceptions before general rules.
            chosen.setdefault(card, (index, [str(port).upper() for port in item["ports"]]))
    plan = []
    for card in sorted(cards):
        info = cards[card]
        if card in chosen:
            index, link_types = chosen[card]
            source = "link_type_adapters[%d]" % index
            if len(link_types) > len(info["functions"]):
                raise AnsibleFilterError("%s lists %d ports, but %s (%s) has %d" % (
                    source, len(link_types), card, info["model"], len(info["functions"])))
        elif default is None or info["model"].lower().startswith("bluefield"):
            continue
        else:
            link_types, source = [default.upper()] * len(info["functions"]), "default"
        plan.append({
            "card": card, "device": info["functions"][0], "model": info["model"], "ports": len(info["functions"]),
            "link_types": link_types, "source": source,
            "params": dict(("LINK_TYPE_P%d" % (port + 1), value) for port, value in enumerate(link_types)),
            "query": not (source == "default" and info["model"] in ETHERNET_ONLY_MODELS),
        })
    return plan


_LINK_LAYER = {"IB": "InfiniBand", "ETH": "Ethernet"}


def status(results, hca):
    """Judge a loop of mlxconfig over a link_type_plan against what hca_info saw."""
    ports = {}
    for entry in hca.get("hcas") or []:
        if entry.get("pci_address") and entry.get("ports"):
            ports[entry["pci_address"].lower()] = entry["ports"][0].get("link_layer")
    status = {"live": [], "pending": [], "unsupported": [], "power_cycle": False, "mismatches": [], "reason": ""}
    reasons = []
    for result in results:
        item = result.get("item") or {}
        # Only the link types count.
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
