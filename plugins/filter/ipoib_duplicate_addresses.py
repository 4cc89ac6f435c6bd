# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
name: ipoib_duplicate_addresses
short_description: The IPoIB addresses that more than one interface of the play uses
version_added: 0.1.0
author: fabric.infiniband developers (@fabric-infiniband)
description:
  - Takes a dict of host name to the plan of P(fabric.infiniband.ipoib_plan#filter) and returns one line per address given to
    more than one interface (on one host or on several), naming each C(host/interface).
  - Addresses are compared without their prefix length, so C(10.10.0.5/24) and C(10.10.0.5/16) are the same address.
options:
  _input:
    description: Host name to plan.
    type: dict
    required: true
"""

EXAMPLES = r"""
- name: No address twice in the play
  ansible.builtin.assert:
    that: (dict(ansible_play_hosts | zip(ansible_play_hosts | map('extract', hostvars, '__plan'))) | fabric.infiniband.ipoib_duplicate_addresses) == []
  run_once: true
"""

RETURN = r"""
_value:
  description: One line per duplicate address, C(<address> on <host>/<netdev>, <host>/<netdev>), sorted.
  type: list
  elements: str
"""


def _users(plans):
    users = {}
    for host in sorted(plans or {}):
        for entry in plans[host] or []:
            rails = [(entry.get("netdev"), entry.get("addresses") or [])]
            rails += [(c.get("name"), c.get("addresses") or []) for c in entry.get("children") or []]
            for netdev, addresses in rails:
                for text in addresses:
                    address = str(text).split("/", 1)[0].lower()
                    users.setdefault(address, []).append("%s/%s" % (host, netdev))
    return users


def ipoib_duplicate_addresses(plans):
    return sorted("%s on %s" % (address, ", ".join(where)) for address, where in _users(plans).items() if len(where) > 1)


class FilterModule:
    def filters(self):
        return {"ipoib_duplicate_addresses": ipoib_duplicate_addresses}
