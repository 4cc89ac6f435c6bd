# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
name: reboot_settings
short_description: Check the reboot settings, batch controls included, naming the variable the user set
version_added: 0.1.0
author: fabric.infiniband developers (@fabric-infiniband)
description:
  - Takes a dict of reboot settings by the name the user set them under, the playbooks' C(infiniband_*) names
    (C(playbooks/reboot.yml)) or the P(fabric.infiniband.node_reboot#role) role's C(node_reboot_*) names, and returns the
    list of problems, each naming its variable and the accepted values; empty when every setting is accepted.
  - The batch size C(infiniband_reboot_serial) is a number of nodes from 1, a percentage from 1% to 100%, or a list of
    those; C(infiniband_reboot_max_fail_percentage) a percentage from 0 to 100. Both are play keywords, templated before
    any host is known, so C(playbooks/reboot.yml) checks them in its first play, before any node is touched.
  - Booleans take the words of Ansible's argument specifications (V(true), V(false), V(yes), V(no), ...), as C(-e) and AWX
    surveys pass them; timeouts are whole seconds (C(drain_timeout) V(0) waits without limit); the method is V(reboot) or
    V(command), and V(command) needs a non-empty argument list.
  - A name the filter does not know is a problem too. A role variable whose value is that of its playbook name (the
    role's default maps one onto the other) is not told twice; the problem names the playbook name, which the user set.
    Give the playbook names first in the dict.
options:
  _input:
    description: Settings by variable name.
    type: dict
    required: true
"""

EXAMPLES = r"""
- name: Check the reboot settings before any node is touched
  ansible.builtin.assert:
    that: __problems | length == 0
    fail_msg: "{{ __problems | join('; ') }}"
  vars:
    __problems: "{{ {'infiniband_reboot_serial': infiniband_reboot_serial | default('20%')} | fabric.infiniband.reboot_settings }}"
"""

RETURN = r"""
_value:
  description: The problems, each a sentence that names the variable; empty when every setting is accepted.
  type: list
  elements: str
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.fabric.infiniband.plugins.module_utils import values

_SECONDS = "whole seconds"
# suffix of the setting -> (infiniband_* name, kind, bounds)
_SETTINGS = {
    "allow": ("infiniband_allow_reboot", "bool", None),
    "allow_fw_reset": ("infiniband_allow_fw_reset", "bool", None),
    "method": ("infiniband_reboot_method", "choice", ("reboot", "command")),
    "command": ("infiniband_reboot_command", "argv", None),
    "power_cycle_command": ("infiniband_power_cycle_command", "argv", None),
    "wait_delay": ("infiniband_reboot_wait_delay", "int", (0, _SECONDS + ", 0 or more")),
    "timeout": ("infiniband_reboot_timeout", "int", (1, _SECONDS + ", greater than 0")),
    "bmc_address": ("infiniband_bmc_address", "str", None),
    "bmc_username": ("infiniband_bmc_username", "str", None),
    "bmc_password": ("infiniband_bmc_password", "secret", None),
    "bmc_resource_id": ("infiniband_bmc_resource_id", "str", None),
    "bmc_validate_certs": ("infiniband_bmc_validate_certs", "bool", None),
    "drain": ("infiniband_drain", "bool", None),
    "k8s_node_name": ("infiniband_k8s_node_name", "str", None),
    "drain_timeout": ("infiniband_drain_timeout", "int", (0, _SECONDS + ", 0 or more (0: no limit)")),
    "fail_on_tried": ("infiniband_reboot_fail_on_tried", "bool", None),
    "serial": ("infiniband_reboot_serial", "batch", None),
    "max_fail_percentage": ("infiniband_reboot_max_fail_percentage", "percentage", None),
    "hosts": ("infiniband_reboot_hosts", "str", None),
}
_BY_NAME = {}
for _suffix, (_name, _kind, _bounds) in _SETTINGS.items():
    _BY_NAME[_name] = (_suffix, _kind, _bounds)
    # the role has no batch controls or host pattern: those are the play's
    if _kind != "batch" and _suffix not in ("max_fail_percentage", "hosts"):
        _BY_NAME["node_reboot_" + _suffix] = (_suffix, _kind, _bounds)


def _check(name, value, kind, bounds):
    if kind == "bool":
        values.parse_bool(value, name)
    elif kind == "int":
        values.parse_int(value, name, minimum=bounds[0], accepted=bounds[1])
    elif kind == "batch":
        values.parse_batch(value, name)
    elif kind == "percentage":
        values.parse_percentage(value, name)
    elif kind == "choice" and value not in bounds:
        raise ValueError("%s: %r is not accepted; accepted: %s" % (name, value, ", ".join(bounds)))
    elif kind == "argv" and (not isinstance(value, list) or not all(isinstance(item, str) for item in value)):
        raise ValueError("%s: %r is not accepted; accepted: an argument list, e.g. [ipmitool, -H, bmc01, power, reset]" % (name, value))
    elif kind == "str" and not isinstance(value, str):
        raise ValueError("%s: %r is not accepted; accepted: a string" % (name, value))
    elif kind == "secret" and not isinstance(value, str):
        raise ValueError("%s: a value of type %s is not accepted (not shown); accepted: a string" % (name, type(value).__name__))


def reboot_settings(settings):
    if not isinstance(settings, dict):
        raise AnsibleFilterError("reboot_settings expects a dict of settings by variable name, got %r" % (settings,))
    problems, refused = [], set()
    for name, value in settings.items():
        if name not in _BY_NAME:
            problems.append("%s: not a reboot setting; known: %s" % (name, ", ".join(sorted(_BY_NAME))))
            continue
        suffix, kind, bounds = _BY_NAME[name]
        # The role's variable that only carries the playbooks' value (its default maps one onto the other):
        # the problem is told once, under the name the user set.
        playbook_name = _SETTINGS[suffix][0]
        if name != playbook_name and playbook_name in settings and settings[playbook_name] == value \
                and playbook_name in refused:
            continue
        try:
            _check(name, value, kind, bounds)
        except ValueError as exc:
            problems.append(str(exc))
            refused.add(name)
    # what no single value says
    for method_name, command_name in (("infiniband_reboot_method", "infiniband_reboot_command"),
                                      ("node_reboot_method", "node_reboot_command")):
        if settings.get(method_name) == "command" and command_name in settings and not settings[command_name]:
            problems.append("%s is empty but %s is command; accepted: a non-empty argument list (for example "
                            "[ipmitool, -H, bmc01, power, reset]), or %s: reboot" % (command_name, method_name, method_name))
    return problems


class FilterModule:
    def filters(self):
        return {"reboot_settings": reboot_settings}
