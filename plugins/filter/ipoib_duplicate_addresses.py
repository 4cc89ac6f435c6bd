# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
name: ipoib_duplicate_addresses
short_description: The IPoIB addresses that more than one interface uses, in the play and on the other hosts of the inventory
version_added: 0.1.0
author: fabric.infiniband developers (@fabric-infiniband)
description:
  - Takes a dict of host name to the plan of P(fabric.infiniband.ipoib_plan#filter) (the hosts of the play) and returns one
    line per address given to more than one interface (on one host or on several), naming each C(host/interface).
  - With O(known) and O(asked), also against the hosts of the inventory outside the play, whatever C(--limit) or job slice
    this run has, by what each published (its fact C(ipoib_interfaces)), or, for a host that published nothing, what its
    inventory asks of it (planned with P(fabric.infiniband.ipoib_plan#filter) without a reading of its adapters; a host
    whose settings that refuses is left out, since its own run refuses them). Only addresses that a host of the play
    uses are reported (two other hosts that share one are not this run's to refuse).
  - Addresses are compared without their prefix length, so C(10.10.0.5/24) and C(10.10.0.5/16) are the same address.
options:
  _input:
    description: Host name to plan (the hosts of the play).
    type: dict
    required: true
  known:
    description:
      - Host name to the fact C(ipoib_interfaces) the host published (this run or Ansible's fact cache), for hosts not in
        O(_input).
    type: dict
    default: {}
  asked:
    description:
      - Host name to what its inventory asks, C(config) (its C(ipoib_config)), C(mtu) and C(mode) (its C(ipoib_mtu) and
        C(ipoib_mode), the role's defaults when not set), for hosts neither in O(_input) nor in O(known).
    type: dict
    default: {}
"""

EXAMPLES = r"""
- name: No address twice in the play
  ansible.builtin.assert:
    that: (dict(ansible_play_hosts | zip(ansible_play_hosts | map('extract', hostvars, '__plan'))) | fabric.infiniband.ipoib_duplicate_addresses) == []
  run_once: true
"""

RETURN = r"""
_value:
  description:
    - One line per duplicate address, C(<address> on <host>/<netdev>, <host>/<netdev>), sorted. An interface another host
      published is followed by C((published)), one its inventory asks for by C((inventory)), named C(<device> port <n>).
  type: list
  elements: str
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.fabric.infiniband.plugins.filter.ipoib_plan import ipoib_plan


def _add(users, host, plan, tag=""):
    for entry in plan or []:
        if not isinstance(entry, dict):
            continue
        rails = [(entry.get("name") or entry.get("netdev"), entry.get("addresses") or [])]
        rails += [(c.get("name"), c.get("addresses") or []) for c in entry.get("children") or [] if isinstance(c, dict)]
        for netdev, addresses in rails:
            for text in addresses:
                address = str(text).split("/", 1)[0].lower()
                users.setdefault(address, []).append(("%s/%s%s" % (host, netdev, tag), bool(not tag)))


def _planned(asked):
    """The plan of what the inventory asks of a host, or None when the plan refuses it."""
    asked = asked if isinstance(asked, dict) else {"config": asked}
    try:
        return ipoib_plan(None, asked.get("config") or [], mtu=asked.get("mtu") or 2044, mode=asked.get("mode") or "datagram")
    except AnsibleFilterError:
        return None


def ipoib_duplicate_addresses(plans, known=None, asked=None):
    users = {}
    plans = plans or {}
    for host in sorted(plans):
        _add(users, host, plans[host])
    for host in sorted(known or {}):
        if host not in plans:
            _add(users, host, known[host], " (published)")
    for host in sorted(asked or {}):
        if host not in plans and host not in (known or {}):
            _add(users, host, _planned(asked[host]), " (inventory)")
    return sorted("%s on %s" % (address, ", ".join(sorted(name for name, _in_play in where)))
                  for address, where in users.items() if len(where) > 1 and any(in_play for _name, in_play in where))


class FilterModule:
    def filters(self):
        return {"ipoib_duplicate_addresses": ipoib_duplicate_addresses}
