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

import grp
import os
import pwd
import re
import stat

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.common.text.converters import to_bytes, to_native, to_text

from ansible_collections.fabric.infiniband.plugins.module_utils import _files, systemctl
from ansible_collections.fabric.infiniband.plugins.module_utils._runner import Runner, ToolModule


UNIT_DIR = "/etc/systemd/system"
UNIT_MODE = 0o644
OWNER = "root"
GROUP = "root"
_MODE_RE = re.compile(r"^[0-7]{3,4}$")


def argument_spec():
    return dict(
        name=dict(type="str", required=True),
        unit=dict(type="str"),
        files=dict(type="list", elements="dict", default=[], options=dict(
            path=dict(type="str", required=True),
            content=dict(type="str"),
            mode=dict(type="str", default="0644"),
        )),
        state=dict(type="str", choices=["present", "absent"], default="present"),
        enabled=dict(type="bool", default=True),
    )


def _text(data):
    return "" if data is None else to_text(data, errors="surrogate_or_replace")


class BootUnit(ToolModule):

    def __init__(self, module):
        self.module = module
        self.params = module.params
        self.name = self.params["name"]
        self.unit_path = os.path.join(UNIT_DIR, self.name)
        self.runner = Runner(module, "systemctl", required=False)
        self.result = dict(changed=False, written=[], attributes_set=[], removed=[], enabled=False, cmd=[], cmds=[])
        self.diff = []

    # ------------------------------------------------------------ input
    def wanted(self):
        """[(path, content bytes or None, mode)] of the files, then the unit file; checks what the spec cannot."""
        name = self.name
        if not name or "/" in name or name in (".", ".."):
            self.fail("name %r is not a unit name (it must not contain a /)" % name)
        present = self.params["state"] == "present"
        out = []
        seen = set([self.unit_path])
        for index, item in enumerate(self.params["files"]):
            where = "files[%d]" % index
            path = item["path"]
            if not os.path.isabs(path) or path.endswith("/"):
                self.fail("%s.path %r is not the absolute path of a file" % (where, path))
            path = os.path.normpath(path)
            if path in seen:
                self.fail("%s.path %s is listed twice, or is the unit file" % (where, path))
            seen.add(path)
            mode = item["mode"]
            if not _MODE_RE.match(mode or ""):
                self.fail("%s.mode %r is not an octal mode such as 0644 or 0755" % (where, mode))
            if present and item["content"] is None:
                self.fail("%s (%s) has no content; content is required with state=present" % (where, path))
            content = None if item["content"] is None else to_bytes(item["content"], errors="surrogate_or_strict")
            out.append((path, content, int(mode, 8)))
        unit = self.params["unit"]
        out.append((self.unit_path, None if unit is None else to_bytes(unit, errors="surrogate_or_strict"), UNIT_MODE))
        return out

    # ------------------------------------------------------------ files
    def inspect(self, path):
        """(content bytes, mode, uid, gid) of the file at ``path``, or None when there is none."""
        if not os.path.lexists(path):
            return None
        try:
            st = os.stat(path)
            if not stat.S_ISREG(st.st_mode):
                self.fail("%s exists and is not a regular file" % path)
            with open(path, "rb") as handle:
                return handle.read(), stat.S_IMODE(st.st_mode), st.st_uid, st.st_gid
        except (IOError, OSError) as exc:
            self.fail("cannot read %s: %s" % (path, to_native(exc)))

    def owner_ids(self):
        try:
            return pwd.getpwnam(OWNER).pw_uid, grp.getgrnam(GROUP).gr_gid
        except KeyError as exc:
            self.fail("cannot find the owner of the files: %s" % to_native(exc))

    def set_attributes(self, path, mode):
        file_args = dict(path=path, mode=mode, owner=OWNER, group=GROUP, secontext=[None, None, None], attributes=None)
        self.module.set_fs_attributes_if_different(file_args, True, expand=False)

    def write(self, path, content, mode):
        try:
            _files.write_atomic(self.module, path, content, mode)
        except (IOError, OSError) as exc:
            self.fail("cannot write %s: %s" % (path, to_native(exc)))
        self.set_attributes(path, mode)

    def add_diff(self, header, before, after):
        if self.module._diff:
            self.diff.append(dict(before_header=header, after_header=header, before=before, after=after))

    def install(self, path, content, mode, uid, gid):
        """Write the file when its content differs, else set its mode and owner when they differ."""
        current = self.inspect(path)
        if current is None or current[0] != content:
            self.result["written"].append(path)
            self.add_diff(path, _text(current and current[0]), _text(content))
            if not self.module.check_mode:
                self.write(path, content, mode)
            return current is not None
        old_mode, old_uid, old_gid = current[1:]
        if (old_mode, old_uid, old_gid) != (mode, uid, gid):
            self.result["attributes_set"].append(path)
            self.add_diff(path, "mode %04o, owner %d:%d\n" % (old_mode, old_uid, old_gid), "mode %04o, owner %d:%d\n" % (mode, uid, gid))
            if not self.module.check_mode:
                self.set_attributes(path, mode)
        return False

    def remove(self, path):
        if not os.path.lexists(path):
            return False
        self.result["removed"].append(path)
        if self.module._diff:
            current = self.inspect(path) if not os.path.islink(path) else None
            self.add_diff(path, _text(current and current[0]), "")
        if not self.module.check_mode:
            try:
                os.remove(path)
            except (IOError, OSError) as exc:
                self.fail("cannot remove %s: %s" % (path, to_native(exc)))
        return True

    # ------------------------------------------------------------ systemctl
    def systemctl(self, args, what):
        """Run systemctl with ``args``; fail naming ``what`` was being done when it fails."""
        if not self.runner.available:
            self.fail("cannot %s: systemctl is not installed (boot_unit needs systemd)" % what)
        res = self.run(args)
        if not res.ok:
            said = (res.stderr or "").strip() or (res.stdout or "").strip()
            self.fail("cannot %s: '%s' failed with rc %d: %s" % (what, " ".join(res.cmd), res.rc, said), res)
        return res

    def unit_state(self):
        """The unit file state that systemctl is-enabled prints (see module_utils/systemctl.py)."""
        if not self.runner.available:
            self.fail("cannot tell whether %s is enabled: systemctl is not installed (boot_unit needs systemd)" % self.name)
        res = self.run(systemctl.is_enabled_args(self.name))
        state = systemctl.parse_is_enabled(res.rc, res.stdout, res.stderr)
        if state is None:
            said = (res.stderr or "").strip() or "no output"
            self.fail("cannot tell whether %s is enabled: '%s' failed with rc %d: %s" % (self.name, " ".join(res.cmd), res.rc, said), res)
        return state

    def set_enabled(self, state, want):
        """Enable or disable the unit (state: what is-enabled said); returns whether it is enabled after."""
        now = systemctl.enabled_at_boot(state)
        if now == want:
            return now
        if want and state in systemctl.CANNOT_ENABLE:
            self.fail("cannot enable %s: systemctl is-enabled says %s: %s" % (self.name, state, systemctl.CANNOT_ENABLE[state]))
        self.result["changed"] = True
        self.add_diff("systemctl is-enabled %s" % self.name, "%s\n" % state, "%s\n" % ("enabled" if want else "disabled"))
        if not self.module.check_mode:
            if want:
                self.systemctl(systemctl.enable_args(self.name), "enable %s" % self.name)
            else:
                self.systemctl(systemctl.disable_args(self.name), "disable %s" % self.name)
        return want

    # ------------------------------------------------------------ states
    def present(self, wanted):
        uid, gid = self.owner_ids()
        unit_replaced = False
        unit_existed = os.path.lexists(self.unit_path)
        for path, content, mode in wanted:
            replaced = self.install(path, content, mode, uid, gid)
            if path == self.unit_path:
                unit_replaced = replaced
        unit_written = self.unit_path in self.result["written"]
        if unit_written and not self.module.check_mode:
            self.systemctl(systemctl.daemon_reload_args(), "reload the unit files after writing %s" % self.unit_path)
        if self.module.check_mode and not unit_existed:
            # not installed yet: it would be, and then be enabled or not as asked
            state = systemctl.NOT_FOUND
        else:
            state = self.unit_state()
        enabled = self.set_enabled(state, self.params["enabled"])
        if unit_replaced and enabled and systemctl.enabled_at_boot(state) and not self.module.check_mode:
            # its links follow the [Install] section of the new unit file
            self.systemctl(systemctl.reenable_args(self.name), "enable %s again after changing its unit file" % self.name)
        self.result["enabled"] = enabled

    def absent(self, wanted):
        if os.path.lexists(self.unit_path):
            self.set_enabled(self.unit_state(), False)
        unit_removed = self.remove(self.unit_path)
        for item in wanted[:-1]:
            self.remove(item[0])
        if unit_removed and not self.module.check_mode:
            self.systemctl(systemctl.daemon_reload_args(), "reload the unit files after removing %s" % self.unit_path)
        self.result["enabled"] = False

    def apply(self):
        wanted = self.wanted()
        if self.params["state"] == "present":
            self.present(wanted)
        else:
            self.absent(wanted)
        result = self.result
        if result["written"] or result["attributes_set"] or result["removed"]:
            result["changed"] = True
        if self.module._diff:
            result["diff"] = self.diff
        return result


def main():
    module = AnsibleModule(
        argument_spec=argument_spec(),
        required_if=[("state", "present", ["unit"])],
        supports_check_mode=True,
    )
    module.exit_json(**BootUnit(module).apply())


if __name__ == "__main__":
    main()
