#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

# The documentation of the action plugin plugins/action/preflight_vars.py, which does the work on the controller.

from __future__ import annotations

DOCUMENTATION = r"""
module: preflight_vars
short_description: Refuse misspelt role settings (variables named like a role's options that no role has)
version_added: 0.1.0
description:
  - Looks at the host's variables (inventory, group_vars, host_vars, extra vars, facts) and fails when one is named like a
    setting of a role of this collection, C(<role>_...) for one of its roles, but is no option of that role (its
    C(meta/argument_specs.yml), every entry point), so that a misspelt setting (C(sriov_pf) for C(sriov_pfs),
    C(link_type_adapter) for C(link_type_adapters)) is refused, with the closest option, instead of being ignored while the
    role's default applies.
  - Every role of the collection runs it, for its own prefix, as its first task; a playbook can run it once for every role
    before the first change on any node.
  - Let through, besides the options, are the host's facts (what the roles' steps and modules publish, as C(link_type_waiting)),
    the facts the roles without a step publish with C(set_fact) (C(gpudirect_report), C(ipoib_interfaces)),
    names that start with C(_) (the roles' private variables), registered task results (a mapping with C(changed),
    C(failed), C(skipped), C(results) or C(unreachable)), and the names listed in the inventory variable
    C(infiniband_preflight_allow) (for a variable of your own that happens to start like a role's name, such as C(verify_ssl)).
  - Runs on the controller; reads no value but C(infiniband_preflight_allow) and changes nothing; with O(checks), the roles'
    steps read the node.
author:
  - fabric.infiniband developers (@fabric-infiniband)
extends_documentation_fragment:
  - fabric.infiniband.attributes
options:
  roles:
    description:
      - The roles whose prefixes are checked, by short name (V(sriov), V(link_type)). Default (or V(null)), every role of the
        collection; V([]), none.
      - Variables of the other roles' prefixes are let through.
      - A name that is no role of the collection, or a value that is no list of names, fails the task with a message that names
        the option and lists the roles, before any variable is looked at.
    type: list
    elements: str
  specs:
    description:
      - Also judge the values set for these roles (by short name) against the options of each role's entry point C(main), as the
        role's own argument validation will when it runs, so that a whole run refuses a bad value of a later role before an earlier
        role changes anything. Options not set keep their defaults; options a role requires are left to the role.
      - V(null) is the same as V([]). Checked as O(roles) is.
    type: list
    elements: str
    default: []
  checks:
    description:
      - Also run the own step of each of these roles (by short name; the action C(fabric.infiniband.<role>), see
        M(fabric.infiniband.link_type)) with its option C(preflight=true), that is every check the role makes when it runs, reading the
        node where a check needs it, writing nothing. A role without a step of its own is left to O(specs), except
        V(ipoib) and V(k8s_network), whose cross-field checks run on the controller (no node is read), named here
        (the role's first task) or in O(specs) (the run's preflight) - IPoIB addresses inside the pod range of a
        NetworkAttachmentDefinition on the same partition.
      - Only after O(specs) found nothing; a refusal names the role and the user's setting.
      - The facts the reads published (C(infiniband_hca)) are returned, so that the roles use this run's reading.
    type: list
    elements: str
    default: []
  run:
    description:
      - Also add to O(specs) and O(checks) every role of this collection that the playbooks of this run (those given to
        C(ansible-playbook)) run on this host, read as written - C(roles:), C(import_role) and C(include_role) of a role's main
        entry point, through C(import_playbook) - and matched against each play's C(hosts) (a group made during the run by
        C(group_by) holds the hosts of the play before it). A role added to a play is checked with no list to keep.
      - When the playbooks run no role of this collection (the preflight playbook alone), the collection's C(site.yml) stands
        for the run.
    type: bool
    default: false
attributes:
  action:
    support: full
    description: Runs on the controller as an action plugin.
  check_mode:
    support: full
    details:
      - The check only reads, so it behaves the same with and without check mode.
  diff_mode:
    support: none
  platform:
    support: full
    platforms: posix
seealso:
  - module: fabric.infiniband.hca_info
notes:
  - Ansible's own validation of a role's argument spec checks the values of the options a role has; this checks the names
    that no role has.
  - The options are read from the C(roles/*/meta/argument_specs.yml) files of the installed collection.
"""

EXAMPLES = r"""
- name: Refuse unknown settings of every role of the collection, before the first change on any node
  fabric.infiniband.preflight_vars:

- name: Refuse unknown sriov_* settings (the first task of the sriov role)
  fabric.infiniband.preflight_vars:
    roles: [sriov]

# group_vars/all.yml: a variable of your own that starts like a role's name
# infiniband_preflight_allow: [verify_ssl]
"""

RETURN = r"""
unknown:
  description: The refused variables, each with the role whose prefix it has and the closest option (or null).
  returned: always
  type: list
  elements: dict
  sample: [{name: sriov_pf, role: sriov, did_you_mean: sriov_pfs}]
problems:
  description: What the entry points C(main) of O(specs) refuse in the values set, one message each, starting with the role.
  returned: when no unknown setting was found
  type: list
  elements: str
  sample: ["rdma_netns: value of rdma_netns_mode must be one of: exclusive, shared, got: exclusive "]
roles:
  description: The roles whose prefixes were checked.
  returned: always
  type: list
  elements: str
  sample: [sriov]
msg:
  description: Why the task failed, naming every refused variable and the closest option.
  returned: failure
  type: str
  sample: >-
    unknown setting sriov_pf (did you mean sriov_pfs?): it is no option of the role sriov, whose default would apply instead.
    Rename it in the inventory, group_vars, host_vars or -e (the options: ansible-doc -t role fabric.infiniband.sriov), or list
    it in infiniband_preflight_allow if it is not meant for this collection. Nothing was changed.
"""
