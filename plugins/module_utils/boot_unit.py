# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""A systemd unit that runs at every boot, with the files it needs: read, compared and written (or removed) in one run.

fabric.infiniband.boot_unit is this alone (gpudirect's unit); sriov_vfs takes it as its ``boot_unit`` option, so that the
VFs now and the unit that makes them at every boot are one module run. ``systemctl``'s argv and its ``is-enabled`` parser
are module_utils/systemctl.py.
"""

from __future__ import annotations

import grp
import os
import pwd
import re

from ansible.module_utils.common.text.converters import to_bytes, to_native, to_text

from ansible_collections.fabric.infiniband.plugins.module_utils import _files, systemctl
from ansible_collections.fabric.infiniband.plugins.module_utils._runner import Runner, ToolModule, fail_with


UNIT_DIR = "/etc/systemd/system"
UNIT_MODE = 0o644
OWNER = "root"
GROUP = "root"
_MODE_RE = re.compile(r"^[0-7]{3,4}$")


def argument_spec():
    """The options of fabric.infiniband.boot_unit, and of the ``boot_unit`` option of the modules that install their own
    unit in the same run (sriov_vfs)."""
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


# With state present the unit's content is required (the module's required_if, and the nested option's).
REQUIRED_IF = [("state", "present", ["unit"])]


class BootUnit(ToolModule):
    """Install (or remove) the unit of ``params`` (the module's own, or the dict of another module's ``boot_unit`` option,
    named ``option`` in messages)."""

    def __init__(self, module, params=None, option=None, outer=None):
        self.module = module
        self.params = module.params if params is None else params
        self.option = option
        self.where = "%s." % option if option else ""
        # the result of the module whose option this unit is: a failure returns it, with this unit's under the option's name
        self.outer = outer
        self.name = self.params["name"]
        self.unit_path = os.path.join(UNIT_DIR, self.name)
        self.runner = Runner(module, "systemctl", required=False)
        self.result = dict(changed=False, written=[], attributes_set=[], removed=[], enabled=False, cmd=[], cmds=[])
        self.diff = []

    def fail(self, msg, res=None):
        if self.outer is None:
            super(BootUnit, self).fail(msg, res)
        result = dict(self.outer)
        result[self.option] = self.result
        if res is not None:
            fail_with(self.module, msg, res, **result)
        self.module.fail_json(msg=msg, **result)

    # ------------------------------------------------------------ input
    def wanted(self):
        """[(path, content bytes or None, mode)] of the files, then the unit file; checks what the spec cannot."""
        name = self.name
        if not name or "/" in name or name in (".", ".."):
            self.fail("%sname %r is not a unit name (it must not contain a /)" % (self.where, name))
        present = self.params["state"] == "present"
        out = []
        seen = set([self.unit_path])
        for index, item in enumerate(self.params["files"]):
            where = "%sfiles[%d]" % (self.where, index)
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
        try:
            return _files.inspect(path)
        except ValueError as exc:
            self.fail(to_native(exc))
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
