# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
name: opensm_port_guids
short_description: The port GUIDs of a host's InfiniBand ports, from hca_info
version_added: 0.1.0
author: fabric.infiniband developers (@fabric-infiniband)
description:
  - Takes the result of M(fabric.infiniband.hca_info) and returns the port GUIDs (C(0x) and 16 hex digits) of the ports
    whose link layer is InfiniBand, on physical functions only, in the module's order (PCI order, then port number).
  - What an OpenSM binds to, and what a host stands for as a partition member (its VF GUIDs come from the sriov role).
  - Given a list instead (the opensm role's C(opensm_port_guids), as the user wrote it), returns its GUIDs in the same form,
    or fails with a message naming O(name) and the item, for example when YAML made a number of an unquoted GUID.
options:
  _input:
    description: The registered result of M(fabric.infiniband.hca_info), or a list of port GUIDs written by the user.
    type: raw
    required: true
  name:
    description: The variable the list comes from, for the messages.
    type: str
    default: opensm_port_guids
"""

EXAMPLES = r"""
- name: The ports an OpenSM can bind to
  ansible.builtin.debug:
    msg: "{{ __hca | fabric.infiniband.opensm_port_guids }}"

- name: The port GUIDs the user gave, checked and in normal form
  ansible.builtin.debug:
    msg: "{{ opensm_port_guids | fabric.infiniband.opensm_port_guids }}"
"""

RETURN = r"""
_value:
  description: Port GUIDs.
  type: list
  elements: str
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.fabric.infiniband.plugins.module_utils import opensm


def opensm_port_guids(hca_info, name="opensm_port_guids"):
    try:
        if isinstance(hca_info, list):
            return [opensm.normalize_guid(value, "%s[%d]" % (name, index)) for index, value in enumerate(hca_info)]
        if not isinstance(hca_info, dict):
            raise ValueError("%s: %r is not accepted; accepted: a list of port GUIDs (quoted in YAML: \"0x0c42a10300aa0010\"), "
                             "or the result of fabric.infiniband.hca_info" % (name, hca_info))
        return opensm.port_guids(hca_info)
    except ValueError as exc:
        raise AnsibleFilterError(str(exc)) from None


class FilterModule:
    def filters(self):
        return {"opensm_port_guids": opensm_port_guids}
