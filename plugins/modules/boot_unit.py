#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
module: boot_unit
short_description: Install a systemd unit that runs at every boot, with its program and configuration, in one task
version_added: 0.1.0
description:
  - Installs a systemd unit file under C(/etc/systemd/system), the files it needs (its program, its configuration), and
    enables it, or with O(state=absent) disables it and removes them all.
  - It exists so that a role installs its boot-time unit with one module run instead of five tasks (directories, each file,
    the unit, C(systemctl enable)); on a run that changes nothing it reads the files and runs C(systemctl is-enabled), nothing else.
  - Writes only the files whose content differs, each atomically (a temporary file in the same directory, then a rename),
    and sets the mode, owner and group (root) of those whose content is right and whose mode or owner is not.
    Directories that do not exist are created, mode C(0755).
  - Runs C(systemctl daemon-reload) when the unit file was written or removed, C(systemctl enable) when the unit is not
    enabled, and C(systemctl reenable) when a changed unit file was enabled already (its links then follow a changed
    C([Install]) section).
  - Never starts, stops or restarts the unit. It runs at the next boot; what it does, the caller does now if it is needed now.
author:
  - fabric.infiniband developers (@fabric-infiniband)
requirements:
  - systemd (C(systemctl)).
extends_documentation_fragment:
  - fabric.infiniband.attributes
attributes:
  check_mode:
    support: full
    details:
      - Writes, removes and runs nothing but C(systemctl is-enabled), and reports what it would change.
      - A unit file that does not exist yet would be enabled (when O(enabled=true)); C(systemctl is-enabled) is not run for it.
  diff_mode:
    support: full
    details:
      - One entry per file whose content would change (old and new text), per file whose mode or owner would change, and
        one for the enabled state of the unit.
options:
  name:
    description:
      - The unit's name, for example V(fabric-infiniband-sriov.service). The unit file is C(/etc/systemd/system/<name>).
    type: str
    required: true
  unit:
    description:
      - The content of the unit file. Written with mode C(0644).
      - Required with O(state=present).
    type: str
  files:
    description:
      - The files the unit needs, such as its program and its configuration, written before the unit file.
      - With O(state=absent) only their O(files[].path) is used, to remove them.
    type: list
    elements: dict
    default: []
    suboptions:
      path:
        description:
          - The file's absolute path.
        type: str
        required: true
      content:
        description:
          - The file's content. Required with O(state=present).
        type: str
      mode:
        description:
          - The file's mode, in octal, for example V(0755) for a program that the unit runs directly.
        type: str
        default: "0644"
  state:
    description:
      - V(present) installs the files and the unit, V(absent) disables the unit and removes it and the files.
    type: str
    choices: [present, absent]
    default: present
  enabled:
    description:
      - Whether the unit is enabled, that is whether it runs at the next boot. With V(false) the unit is installed but disabled.
      - Ignored with O(state=absent) (the unit is disabled before it is removed).
    type: bool
    default: true
notes:
  - Only the state C(enabled) of C(systemctl is-enabled) counts as enabled. C(enabled-runtime) links are under C(/run) and
    gone after a reboot, so such a unit is enabled (for good) again.
  - A unit that cannot be enabled (C(static), without an C([Install]) section; C(masked); C(indirect); C(generated);
    C(transient); C(alias); C(bad)) fails with O(enabled=true), naming the state and what to do, rather than report a change
    at every run.
  - The directories of the files are not removed with O(state=absent); other units may share them.
seealso:
  - module: ansible.builtin.systemd_service
  - name: systemctl(1)
    description: The C(is-enabled), C(enable) and C(daemon-reload) commands.
    link: https://www.freedesktop.org/software/systemd/man/latest/systemctl.html
"""

EXAMPLES = r"""
- name: Make the VFs again at every boot
  fabric.infiniband.boot_unit:
    name: fabric-infiniband-sriov.service
    unit: "{{ lookup('ansible.builtin.file', 'fabric-infiniband-sriov.service', rstrip=false) }}"
    files:
      - path: /etc/fabric-infiniband/sriov.json
        content: "{{ plan | to_nice_json(sort_keys=true) }}\n"
      - path: /usr/local/libexec/fabric-infiniband/sriov-apply
        content: "{{ lookup('ansible.builtin.file', 'sriov-apply', rstrip=false) }}"

- name: A program the unit runs directly, and a configuration from a template
  fabric.infiniband.boot_unit:
    name: fabric-infiniband-gpudirect-acs.service
    unit: "{{ lookup('ansible.builtin.file', 'fabric-infiniband-gpudirect-acs.service', rstrip=false) }}"
    files:
      - path: /etc/fabric-infiniband/gpudirect-acs.conf
        content: "{{ lookup('ansible.builtin.template', 'gpudirect-acs.conf.j2') }}"
      - path: /usr/local/libexec/fabric-infiniband/gpudirect-acs
        content: "{{ lookup('ansible.builtin.file', 'gpudirect-acs', rstrip=false) }}"
        mode: "0755"

- name: Nothing of ours runs at boot any more
  fabric.infiniband.boot_unit:
    name: fabric-infiniband-sriov.service
    state: absent
    files:
      - path: /etc/fabric-infiniband/sriov.json
      - path: /usr/local/libexec/fabric-infiniband/sriov-apply
"""

RETURN = r"""
written:
  description: The files written because their content differed (in check mode, that would be), the unit file last.
  returned: always
  type: list
  elements: str
  sample: [/etc/fabric-infiniband/sriov.json]
attributes_set:
  description: The files whose content was right and whose mode, owner or group was set (in check mode, would be).
  returned: always
  type: list
  elements: str
  sample: [/usr/local/libexec/fabric-infiniband/gpudirect-acs]
removed:
  description: With O(state=absent), the files removed (in check mode, that would be), the unit file first.
  returned: always
  type: list
  elements: str
  sample: [/etc/systemd/system/fabric-infiniband-sriov.service, /etc/fabric-infiniband/sriov.json]
enabled:
  description: Whether the unit is enabled after the task (in check mode, would be); V(false) with O(state=absent).
  returned: always
  type: bool
  sample: true
cmd:
  description: The last command run, V([]) when none ran.
  returned: always
  type: list
  elements: str
  sample: [/usr/bin/systemctl, is-enabled, fabric-infiniband-sriov.service]
cmds:
  description: Every command run, in order. Check mode runs none but C(systemctl is-enabled).
  returned: always
  type: list
  elements: list
  sample: [[/usr/bin/systemctl, daemon-reload], [/usr/bin/systemctl, is-enabled, fabric-infiniband-sriov.service],
           [/usr/bin/systemctl, enable, fabric-infiniband-sriov.service]]
diff:
  description: With C(--diff), a list of entries, one per file that changed (old and new text) and one for the enabled state.
  returned: when diff mode is on
  type: list
  elements: dict
  sample:
    - {before_header: /etc/fabric-infiniband/sriov.json, after_header: /etc/fabric-infiniband/sriov.json,
       before: "{\"pfs\": []}\n", after: "{\"pfs\": [{\"pf\": \"0000:3b:00.0\", \"num_vfs\": 4}]}\n"}
    - {before_header: "systemctl is-enabled fabric-infiniband-sriov.service",
       after_header: "systemctl is-enabled fabric-infiniband-sriov.service", before: "disabled\n", after: "enabled\n"}
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.fabric.infiniband.plugins.module_utils import boot_unit


def main():
    module = AnsibleModule(
        argument_spec=boot_unit.argument_spec(),
        required_if=boot_unit.REQUIRED_IF,
        supports_check_mode=True,
    )
    module.exit_json(**boot_unit.BootUnit(module).apply())


if __name__ == "__main__":
    main()
