# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
name: hca_table
short_description: Render the results of M(fabric.infiniband.hca_info) of several hosts as a text table
version_added: 0.1.0
author: fabric.infiniband developers (@fabric-infiniband)
description:
  - Takes a mapping of host name to the registered result of M(fabric.infiniband.hca_info) and returns a table with one row
    per port (and per PCI function without ports), followed by one line per host with its firmware tools, kernel lockdown
    and RDMA netns mode.
  - Hosts whose result failed or was skipped get one line saying so.
options:
  _input:
    description: Host name to registered M(fabric.infiniband.hca_info) result.
    type: dict
    required: true
"""

EXAMPLES = r"""
- name: Show the adapters of every host of the play
  ansible.builtin.debug:
    msg: "{{ dict(ansible_play_hosts | zip(ansible_play_hosts | map('extract', hostvars, 'hca'))) | fabric.infiniband.hca_table }}"
  run_once: true
"""

RETURN = r"""
_value:
  description: The table, lines separated by newlines.
  type: str
"""

from ansible.errors import AnsibleFilterError

COLUMNS = (
    ("HOST", "host"), ("RDMA", "rdma_device"), ("PCI", "pci_address"), ("MODEL", "model"), ("PORT", "port"),
    ("LINK", "link_layer"), ("STATE", "state"), ("PHYS", "physical_state"), ("LID", "lid"), ("GB/S", "rate_gbps"),
    ("NETDEV", "netdev"), ("FIRMWARE", "firmware_version"), ("PSID", "psid"),
)


def _cell(row, key):
    value = row.get(key)
    if value is None or value == "":
        return "-"
    if key == "lid" and row.get("link_layer") != "InfiniBand":
        return "-"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def hca_table(results):
    if not isinstance(results, dict):
        raise AnsibleFilterError("hca_table expects a mapping of host name to hca_info result, got %s" % type(results).__name__)
    rows, notes = [], []
    for host in sorted(results):
        result = results[host] or {}
        if result.get("failed") or result.get("skipped") or "summary" not in result:
            notes.append("%s: no result (%s)" % (host, result.get("msg") or ("skipped" if result.get("skipped") else "failed")))
            continue
        for entry in result["summary"]:
            rows.append(dict(entry, host=host))
        if not result["summary"]:
            rows.append({"host": host, "rdma_device": "(no adapters)"})
        tools = result.get("firmware_tools") or {}
        system = result.get("rdma_system") or {}
        notes.append("%s: firmware tools %s, kernel lockdown %s, RDMA netns %s" % (
            host, tools.get("flavour") or "none", result.get("kernel_lockdown") or "unknown", system.get("netns_mode") or "unknown"))
    table = [[title for title, _key in COLUMNS]] + [[_cell(row, key) for _title, key in COLUMNS] for row in rows]
    widths = [max(len(line[i]) for line in table) for i in range(len(COLUMNS))]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(line, widths)).rstrip() for line in table]
    return "\n".join(lines + [""] + notes)


class FilterModule:
    def filters(self):
        return {"hca_table": hca_table}
