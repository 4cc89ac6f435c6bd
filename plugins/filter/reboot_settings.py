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
  - The play keywords of C(playbooks/reboot.yml) (C(infiniband_reboot_serial), C(infiniband_reboot_max_fail_percentage),
    C(infiniband_reboot_hosts)) are templated once for the play, from extra vars and play vars. Set for a host (inventory
    host_vars or group_vars, a fact), they would be read, judged valid and ignored. With O(host_vars), the filter refuses
    such a value when it differs from what the play uses (the extra var, else the playbook's default), naming where to set
    it (C(-e), AWX survey or extra vars).
options:
  _input:
    description: Settings by variable name.
    type: dict
    required: true
  host_vars:
    description:
      - The host's own values of the play keywords' variables (C(hostvars[inventory_hostname]), which holds the inventory,
        facts and extra vars, not play vars), by name; a name absent there is a play var or unset.
    type: dict
    version_added: 0.3.0
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

import json

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
# play keywords of playbooks/reboot.yml -> (keyword, the playbook's default)
PLAY_KEYWORDS = {
    "infiniband_reboot_serial": ("serial", "20%"),
    "infiniband_reboot_max_fail_percentage": ("max_fail_percentage", 0),
    "infiniband_reboot_hosts": ("hosts", "ib_nodes"),
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


def extra_vars():
    """The run's extra vars (-e, AWX's extra vars file), as ansible-playbook read them; None when unknown."""
    try:
        from ansible.utils import vars as ansible_vars  # pylint: disable=import-outside-toplevel

        cached = getattr(ansible_vars.load_extra_vars, "extra_vars", None)
        if cached is not None:
            return cached
        from ansible.parsing.dataloader import DataLoader  # pylint: disable=import-outside-toplevel

        return ansible_vars.load_extra_vars(DataLoader())
    except Exception:  # pylint: disable=broad-except
        return None


def _same(left, right):
    """Whether two values of a play keyword are the same setting ('20%' and '20 %', 2 and '2')."""
    def norm(value):
        if isinstance(value, str):
            return value.replace(" ", "")
        if isinstance(value, list):
            return [norm(item) for item in value]
        return "%s" % value if isinstance(value, int) and not isinstance(value, bool) else value
    return norm(left) == norm(right)


def play_keyword_problems(host_vars, extra=None):
    """Problems of the play keywords' variables set for a host, where the play cannot see them: each one whose value
    differs from what the play uses (the extra var, else the default). ``extra``: the extra vars (default: the run's)."""
    if not isinstance(host_vars, dict):
        raise AnsibleFilterError("reboot_settings: host_vars must be a dict of the host's values by name, got %r" % (host_vars,))
    extra = extra_vars() if extra is None else extra
    if extra is None:
        return []  # cannot tell an extra var from a host's: no refusal on a guess
    problems = []
    for name, value in host_vars.items():
        if name not in PLAY_KEYWORDS or name in extra:
            continue
        keyword, default = PLAY_KEYWORDS[name]
        if _same(value, default):
            continue  # what the play uses anyway
        problems.append(
            "%s: %r is set for this host (inventory host_vars or group_vars, or a fact), where playbooks/reboot.yml cannot "
            "honour it: %s is a play keyword, templated once for the play from extra vars and play vars only, so the play "
            "would use %r. Set it for the run: -e %s (AWX: the survey or the job template's extra vars), and remove it "
            "from the inventory" % (name, value, keyword, default, _cli(name, value)))
    return problems


def _cli(name, value):
    """The -e argument that gives ``value``: key=value for a number or a word, the JSON form for a list (key=value
    gives a string)."""
    if isinstance(value, (list, dict)):
        return "'%s'" % json.dumps({name: value})
    return "%s=%s" % (name, value)


def reboot_settings(settings, host_vars=None):
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
    if host_vars is not None:
        # a value refused above is told once: where to set it comes after what to set
        problems.extend(play_keyword_problems(dict((name, value) for name, value in (host_vars or {}).items()
                                                   if name not in refused) if isinstance(host_vars, dict) else host_vars))
    return problems


class FilterModule:
    def filters(self):
        return {"reboot_settings": reboot_settings}
