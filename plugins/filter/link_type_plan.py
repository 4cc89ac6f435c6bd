# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
name: link_type_plan
short_description: Decide the firmware link type of every port of every adapter of a host
version_added: 0.1.0
author: fabric.infiniband developers (@fabric-infiniband)
description:
  - Takes the result of M(fabric.infiniband.hca_info) and returns one entry per card (a card is the PCI functions that share
    a bus and slot, one function per port) with the C(LINK_TYPE_Pn) firmware parameters to set through its first function.
  - An adapter named in O(adapters) by PCI address (any function of the card, with or without the domain) or by model gets the
    link types listed there; every other card gets O(default) on all its ports, or is left out when O(default) is V(null).
  - VFs, functions without an NVIDIA/Mellanox model and, unless named explicitly, BlueField cards are left out.
  - A card of a model whose silicon is Ethernet-only (ConnectX-4 Lx, ConnectX-6 Lx, ConnectX-6 Dx) that gets O(default) has no
    link type to set, so its entry has RV(_value[].query=false), unless O(other_params) has parameters for it, so that the role does
    not ask its firmware (a real query takes seconds). For every other card, whether it has link type parameters is for the
    firmware tool to say.
options:
  _input:
    description: The registered result of M(fabric.infiniband.hca_info).
    type: dict
    required: true
  default:
    description: Link type of every port of a card that O(adapters) does not name; V(ib), V(eth) or V(null).
    type: str
  adapters:
    description:
      - Per-card link types, each with exactly one of C(pci_address) or C(model), and C(ports), a list of V(ib)/V(eth) for port 1, 2.
      - A C(pci_address) is written as in M(fabric.infiniband.mlxconfig) (V(0000:3b:00.0), V(3b:00.0), V(10000:3b:00.0) behind
        Intel VMD; the function may be left out). A number (YAML's reading of an unquoted V(86:00.0)) is refused with the advice to quote it.
      - A C(pci_address) or C(model) that matches no card of the host is an error (a selector that selects nothing would let
        O(default) apply to the card meant); so is a C(model) that is no NVIDIA/Mellanox model, with the closest name.
    type: list
    elements: dict
    default: []
  other_params:
    description:
      - Other roles' firmware parameters per card (by the PCI address of its first function), written in the same set as the link
        types; a card listed here is always queried.
    type: dict
    default: {}
"""

EXAMPLES = r"""
- name: Plan the link types
  ansible.builtin.set_fact:
    __plan: "{{ __hca | fabric.infiniband.link_type_plan('ib', [{'pci_address': '3b:00.0', 'ports': ['ib', 'eth']}]) }}"
"""

RETURN = r"""
_value:
  description: One entry per card.
  type: list
  elements: dict
  contains:
    card:
      description: PCI address of the card without the function.
      type: str
    device:
      description: The first function's PCI address, through which the card's firmware is configured.
      type: str
    model:
      description: Model name from M(fabric.infiniband.hca_info).
      type: str
    ports:
      description: Number of ports (PCI functions) of the card.
      type: int
    link_types:
      description: Desired link type per port, V(IB) or V(ETH).
      type: list
      elements: str
    params:
      description: "The firmware parameters, for example C({LINK_TYPE_P1: IB, LINK_TYPE_P2: ETH})."
      type: dict
    source:
      description: V(default), or C(link_type_adapters[N]) for the entry that chose the link types.
      type: str
    query:
      description: Whether the role asks the card's firmware (V(false) for an Ethernet-only card that gets O(default) and nothing else).
      type: bool
"""

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


def link_type_plan(hca, default="ib", adapters=None, other_params=None):
    adapters = adapters or []
    other_params = other_params or {}
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
            "query": not (source == "default" and info["model"] in ETHERNET_ONLY_MODELS and info["functions"][0] not in other_params),
        })
    return plan


class FilterModule:
    def filters(self):
        return {"link_type_plan": link_type_plan}
