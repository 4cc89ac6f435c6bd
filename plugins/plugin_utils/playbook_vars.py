# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The collection's own ``infiniband_*`` names: one list, for the unknown-settings check (preflight_vars).

The roles' settings carry the role's prefix and are read from their argument specs; the ``infiniband_*``
names are the playbooks' (``reboot.yml``, ``nodes.yml``, ``site.yml``), the node_reboot role's defaults
and the preflight's. Documented in docs/docsite/rst/variables.rst (scripts/gen_variables_doc.py).
tests/unit/plugins/plugin_utils/test_playbook_vars.py fails when a playbook, a role or a plugin uses an
``infiniband_*`` name missing here.
"""

from __future__ import annotations

PREFIX = "infiniband_"

# settings a user sets (inventory, group_vars, host_vars, -e, AWX extra vars)
SETTINGS = (
    "infiniband_allow_fw_reset",
    "infiniband_allow_reboot",
    "infiniband_bmc_address",
    "infiniband_bmc_password",
    "infiniband_bmc_resource_id",
    "infiniband_bmc_username",
    "infiniband_bmc_validate_certs",
    "infiniband_break_lock",
    "infiniband_drain",
    "infiniband_drain_timeout",
    "infiniband_k8s_node_name",
    "infiniband_power_cycle_command",
    "infiniband_preflight_allow",
    "infiniband_reboot_command",
    "infiniband_reboot_fail_on_tried",
    "infiniband_reboot_hosts",
    "infiniband_reboot_max_fail_percentage",
    "infiniband_reboot_method",
    "infiniband_reboot_run_lock",
    "infiniband_reboot_serial",
    "infiniband_reboot_timeout",
    "infiniband_reboot_wait_delay",
    "infiniband_run_lock_max_age",
    "infiniband_run_owner",
)

# host facts the modules, role steps and playbooks publish (also from a fact cache): no settings, never refused
FACTS = (
    # the fabric as fabric_topology_info returns it, run-stamped; the topology role reads it when current
    "infiniband_fabric",
    # the firmware rules that name no card of any host of the run (the firmware step), for the report
    "infiniband_firmware_unmatched",
    "infiniband_hca",
    "infiniband_hca_stale",
    # each node's judged port health (the verify role's port_health step), read by its health gate
    "infiniband_health",
    "infiniband_pending",
    "infiniband_pending_stale",
    "infiniband_preflight",
    # what the run's preflight read for a role's step later in the run, which takes it once (role_step.RoleAction.kept_read)
    "infiniband_preflight_reads",
)

# infiniband_* words that are no variables: a group the reboot play makes (group_by), a sysfs class
NOT_VARIABLES = (
    "infiniband_reboot_waiting",
    "infiniband_verbs",
)

KNOWN = frozenset(SETTINGS + FACTS)
