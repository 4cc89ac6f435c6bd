#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
module: kernel_modules
short_description: Load kernel modules now and at every boot, and set their parameters, in one task
version_added: 0.1.0
description:
  - Loads with C(modprobe) each module of O(names) that the kernel does not have yet (no directory in C(/sys/module) and not
    built in), and reports which modules of O(names) and O(report) it had before.
  - Writes the files that make it last, each only when its content differs, atomically (a temporary file in the same directory,
    then a rename), mode C(0644), owner and group root (also set on a file whose content is right and whose mode or owner is not;
    missing directories are created, mode C(0755)).
  - O(boot_file), a C(modules-load.d) file listing O(names), which systemd-modules-load loads at every boot.
  - O(options_file), a C(modprobe.d) file with one C(options <module> <param>=<value> ...) line per module of O(options), applied
    whenever the module loads.
  - O(cmdline_file), a GRUB drop-in that adds the same parameters to the kernel command line (C(<module>.<param>=<value>)) with
    O(cmdline=true), removed with O(cmdline=false). The module never runs C(update-grub); RV(files.cmdline_file.changed) tells the
    caller to.
  - Also returns the running kernel's release and its initramfs, so that a caller that regenerates the initramfs after a change of
    O(options_file) needs no other task to find them.
  - It exists so that a role makes its modules load, or sets their parameters, with one module run instead of a template, a
    C(find) and a C(modprobe) per module; a run that changes nothing reads the files and C(/sys/module), nothing else.
  - Never unloads a module, and never reloads one whose parameters changed; the new parameters apply when it loads next (at the next
    boot, or from an initramfs generated again).
author:
  - fabric.infiniband developers (@fabric-infiniband)
requirements:
  - C(modprobe) (kmod) when a module of O(names) has to be loaded.
extends_documentation_fragment:
  - fabric.infiniband.attributes
  - fabric.infiniband.sysfs
attributes:
  check_mode:
    support: full
    details:
      - Writes and removes nothing. Each module that would be loaded is resolved with C(modprobe -n), which fails as C(modprobe)
        would for a module that is not installed for the running kernel.
  diff_mode:
    support: full
    details:
      - One entry per file whose content would change (old and new text), per file whose mode or owner would change, and one for
        the modules that would be loaded (the modules of O(names) and O(report) the kernel has, before and after).
options:
  names:
    description:
      - Kernel modules that must be loaded, by name (letters, digits, C(_) and C(-); C(rdma-ucm) and C(rdma_ucm) are one module).
      - Each one that the kernel does not have is loaded with C(modprobe <name>), in this order, unless O(load=false).
      - The same names, in this order, are the content of O(boot_file).
    type: list
    elements: str
    default: []
  load:
    description:
      - Whether to load the modules of O(names) that the kernel does not have. With V(false) the module only reports them
        (RV(present)) and writes the files.
    type: bool
    default: true
  report:
    description:
      - More modules whose presence is reported in RV(present), never loaded nor written anywhere. For example V(mlx_compat),
        which exists only when the kernel runs the OFED or DOCA-OFED driver.
    type: list
    elements: str
    default: []
  boot_file:
    description:
      - Absolute path of a C(modules-load.d) file, for example V(/etc/modules-load.d/fabric-infiniband-rdma.conf), written with a
        header comment and the modules of O(names), one per line.
      - Not written when not given.
    type: path
  options:
    description:
      - Parameters of kernel modules, as a dict of module names to dicts of parameter names and values (see the examples).
      - A value is a bool (written V(1) or V(0)), a number, a string of letters, digits and C(_.,:+/@%-), or a list of those
        (an array parameter, joined with commas). Module and parameter names are written with C(_).
      - Requires O(options_file).
    type: dict
  options_file:
    description:
      - Absolute path of a C(modprobe.d) file, for example V(/etc/modprobe.d/fabric-infiniband-rdma-netns.conf), written with a
        header comment and one C(options) line per module of O(options), sorted by module and parameter.
      - Requires O(options).
    type: path
  cmdline:
    description:
      - Whether the parameters of O(options) also go on the kernel command line, through the GRUB drop-in O(cmdline_file), for a
        module that is loaded before C(/etc/modprobe.d) is read.
      - With V(false) the drop-in is removed when it exists.
      - V(true) requires O(cmdline_file) and O(options).
    type: bool
    default: false
  cmdline_file:
    description:
      - Absolute path of the GRUB drop-in, for example V(/etc/default/grub.d/fabric-infiniband-rdma-netns.cfg), written with a header
        comment and C(GRUB_CMDLINE_LINUX="$GRUB_CMDLINE_LINUX <module>.<param>=<value> ...") with O(cmdline=true), removed with
        O(cmdline=false).
      - Debian and Ubuntu read C(/etc/default/grub.d/*.cfg). The caller runs C(update-grub) when RV(files.cmdline_file.changed).
    type: path
notes:
  - A module built into the kernel has a directory in C(/sys/module) only when it has parameters; the module also reads
    C(/lib/modules/<release>/modules.builtin), so that a built-in module counts as present and C(modprobe) is not run for it
    at every run.
  - The content of the files is fixed by the module (a header naming the collection, then the entries), so that the same input
    gives the same file on every node and RV(files) checksums can be compared.
  - The O(options_file) does not reach a module that loads from the initramfs until the initramfs is generated again
    (C(update-initramfs -u -k <release>), C(dracut -f --kver <release>)); RV(initramfs) and RV(kernel) name it, the caller decides.
seealso:
  - module: community.general.modprobe
  - name: modules-load.d(5)
    description: The files systemd-modules-load reads at boot.
    link: https://www.freedesktop.org/software/systemd/man/latest/modules-load.d.html
  - name: modprobe.d(5)
    description: The C(options) lines of modprobe's configuration.
    link: https://man7.org/linux/man-pages/man5/modprobe.d.5.html
"""

EXAMPLES = r"""
- name: Load the RDMA modules now and at every boot, and tell whether the DOCA driver runs
  fabric.infiniband.kernel_modules:
    names: [mlx5_core, mlx5_ib, ib_uverbs, ib_umad, ib_ipoib, rdma_ucm]
    boot_file: /etc/modules-load.d/fabric-infiniband-rdma.conf
    report: [mlx_compat]
  register: rdma_modules

- name: Exclusive RDMA netns mode at the next load of ib_core, also on the kernel command line
  fabric.infiniband.kernel_modules:
    options:
      ib_core:
        netns_mode: 0
    options_file: /etc/modprobe.d/fabric-infiniband-rdma-netns.conf
    cmdline: true
    cmdline_file: /etc/default/grub.d/fabric-infiniband-rdma-netns.cfg
    load: false
  register: netns_option
  notify: Regenerate the GRUB configuration

- name: Regenerate the running kernel's initramfs, which holds a copy of modprobe.d
  ansible.builtin.command:
    argv: [update-initramfs, -u, -k, "{{ netns_option.kernel }}"]
  changed_when: true
  when:
    - netns_option.files.options_file.changed
    - netns_option.initramfs is not none
    - netns_option.initramfs.startswith('/boot/initrd.img-')

- name: Only report which modules are loaded
  fabric.infiniband.kernel_modules:
    report: [mlx_compat, nvidia_peermem]
  register: loaded
"""

RETURN = r"""
ansible_facts:
  description:
    - V(infiniband_hca_stale=true) when the module changed the node (not in check mode), so that the roles read the adapters again with
      M(fabric.infiniband.hca_info) before they decide anything from the fact C(infiniband_hca).
  returned: when changed
  type: dict
  sample: {infiniband_hca_stale: true}
present:
  description:
    - The modules of O(names) and O(report) that the kernel had before this run loaded any (a directory in C(/sys/module), or
      built in), spelt as they were given, in the order of O(names) then O(report).
  returned: always
  type: list
  elements: str
  sample: [mlx5_core, mlx5_ib, ib_uverbs]
loaded:
  description: The modules of O(names) this run loaded (in check mode, would load), in order.
  returned: always
  type: list
  elements: str
  sample: [ib_umad, ib_ipoib, rdma_ucm]
files:
  description:
    - What became of each file given (O(boot_file), O(options_file), O(cmdline_file)), by the option's name.
    - A checksum is the SHA-1 of the file's content, as M(ansible.builtin.copy) and M(ansible.builtin.template) return it, also
      in check mode, so that a caller can record for which content it did something (an initramfs generated again).
  returned: always
  type: dict
  contains:
    boot_file:
      description: The C(modules-load.d) file.
      returned: when O(boot_file) is given
      type: dict
      contains:
        path:
          description: The file's path.
          type: str
        state:
          description: V(present).
          type: str
        changed:
          description: Whether the file was written or had its mode or owner set (in check mode, would be).
          type: bool
        checksum:
          description: SHA-1 of the file's content.
          type: str
    options_file:
      description: The C(modprobe.d) file.
      returned: when O(options_file) is given
      type: dict
      contains:
        path:
          description: The file's path.
          type: str
        state:
          description: V(present).
          type: str
        changed:
          description: Whether the file was written or had its mode or owner set (in check mode, would be).
          type: bool
        checksum:
          description: SHA-1 of the file's content.
          type: str
    cmdline_file:
      description: The GRUB drop-in.
      returned: when O(cmdline_file) is given
      type: dict
      contains:
        path:
          description: The file's path.
          type: str
        state:
          description: V(present), or V(absent) with O(cmdline=false).
          type: str
        changed:
          description: Whether the file was written, removed or had its mode or owner set (in check mode, would be).
          type: bool
        checksum:
          description: SHA-1 of the file's content; V(null) when absent.
          type: str
  sample:
    options_file: {path: /etc/modprobe.d/fabric-infiniband-rdma-netns.conf, state: present, changed: false,
                   checksum: 8b0f0d0bb8b3c1b6c5a52bdf5e6a3de0bf6a3e52}
    cmdline_file: {path: /etc/default/grub.d/fabric-infiniband-rdma-netns.cfg, state: absent, changed: true, checksum: null}
kernel:
  description: The running kernel's release (C(/proc/sys/kernel/osrelease)).
  returned: always
  type: str
  sample: 6.1.0-28-amd64
initramfs:
  description:
    - The running kernel's initramfs, C(/boot/initrd.img-<release>) (Debian, Ubuntu) or C(/boot/initramfs-<release>.img) (RHEL
      family), or V(null) when there is none (a container).
  returned: always
  type: str
  sample: /boot/initrd.img-6.1.0-28-amd64
cmd:
  description: The last command run, V([]) when none ran.
  returned: always
  type: list
  elements: str
  sample: [/usr/sbin/modprobe, rdma_ucm]
cmds:
  description: Every command run, in order. Check mode runs C(modprobe -n) instead of C(modprobe).
  returned: always
  type: list
  elements: list
  sample: [[/usr/sbin/modprobe, ib_umad], [/usr/sbin/modprobe, ib_ipoib], [/usr/sbin/modprobe, rdma_ucm]]
diff:
  description: With C(--diff), a list of entries, one per file that changed (old and new text) and one for the modules loaded.
  returned: when diff mode is on
  type: list
  elements: dict
  sample:
    - {before_header: /etc/modprobe.d/fabric-infiniband-rdma-netns.conf, after_header: /etc/modprobe.d/fabric-infiniband-rdma-netns.conf,
       before: "", after: "# Managed by Ansible (fabric.infiniband.kernel_modules) ...\noptions ib_core netns_mode=0\n"}
    - {before_header: modules loaded (/sys/module), after_header: modules loaded (/sys/module),
       before: "mlx5_core\n", after: "mlx5_core\nib_umad\n"}
"""

import grp
import os
import pwd

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.common.text.converters import to_bytes, to_native, to_text

from ansible_collections.fabric.infiniband.plugins.module_utils import _files, common, kmod, sysfs
from ansible_collections.fabric.infiniband.plugins.module_utils._runner import Runner, ToolModule


FILE_MODE = 0o644
OWNER = "root"
GROUP = "root"
FILE_OPTIONS = ("boot_file", "options_file", "cmdline_file")
MODULES_HEADER = "modules loaded (/sys/module)"


def argument_spec():
    spec = common.merge_specs(common.SYSFS_ARG_SPEC)
    spec.update(
        names=dict(type="list", elements="str", default=[]),
        load=dict(type="bool", default=True),
        report=dict(type="list", elements="str", default=[]),
        boot_file=dict(type="path"),
        options=dict(type="dict"),
        options_file=dict(type="path"),
        cmdline=dict(type="bool", default=False),
        cmdline_file=dict(type="path"),
    )
    return spec


def _text(data):
    return "" if data is None else to_text(data, errors="surrogate_or_replace")


def _lines(names):
    return "".join("%s\n" % name for name in names)


class KernelModules(ToolModule):

    def __init__(self, module):
        self.module = module
        self.params = module.params
        self.tree = sysfs.Sysfs(self.params["sysfs_root"])
        self.runner = Runner(module, "modprobe", required=False)
        self.result = dict(changed=False, present=[], loaded=[], files={}, kernel=None, initramfs=None, cmd=[], cmds=[])
        self.diff = []

    # ------------------------------------------------------------ input
    def wanted(self):
        """(names, reported names, [(option, path, content bytes or None for absent)]); fails on what the spec cannot check."""
        params = self.params
        try:
            names = kmod.unique_names(params["names"], "names")
            report = kmod.unique_names(params["report"], "report")
            options = kmod.normalize_options(params["options"])
        except ValueError as exc:
            self.fail(to_native(exc))
        seen = {}
        for option in FILE_OPTIONS:
            path = params[option]
            if path is None:
                continue
            if not os.path.isabs(path) or path.endswith("/"):
                self.fail("%s %r is not the absolute path of a file" % (option, path))
            path = os.path.normpath(path)
            if path in seen:
                self.fail("%s and %s are the same file (%s); each needs a file of its own" % (seen[path], option, path))
            seen[path] = option
            params[option] = path
        plans = []
        if params["boot_file"]:
            plans.append(("boot_file", params["boot_file"], kmod.boot_file_content(names)))
        if params["options_file"]:
            plans.append(("options_file", params["options_file"], kmod.options_file_content(options)))
        if params["cmdline_file"]:
            if params["cmdline"] and not options:
                self.fail("cmdline=true puts the parameters of options on the kernel command line, but options has none")
            content = kmod.cmdline_file_content(options) if params["cmdline"] else None
            plans.append(("cmdline_file", params["cmdline_file"], content))
        plans = [(option, path, None if text is None else to_bytes(text, errors="surrogate_or_strict")) for option, path, text in plans]
        return names, report, plans

    # ------------------------------------------------------------ files
    def inspect(self, path):
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

    def set_attributes(self, path):
        file_args = dict(path=path, mode=FILE_MODE, owner=OWNER, group=GROUP, secontext=[None, None, None], attributes=None)
        self.module.set_fs_attributes_if_different(file_args, True, expand=False)

    def add_diff(self, header, before, after):
        if self.module._diff:
            self.diff.append(dict(before_header=header, after_header=header, before=before, after=after))

    def install(self, path, content, owner):
        """Write the file when its content differs, else set its mode and owner when they differ; whether it changed."""
        current = self.inspect(path)
        if current is None or current[0] != content:
            self.add_diff(path, _text(current and current[0]), _text(content))
            if not self.module.check_mode:
                try:
                    _files.write_atomic(self.module, path, content, FILE_MODE)
                except (IOError, OSError) as exc:
                    self.fail("cannot write %s: %s" % (path, to_native(exc)))
                self.set_attributes(path)
            return True
        old = current[1:]
        if old != (FILE_MODE,) + owner:
            self.add_diff(path, "mode %04o, owner %d:%d\n" % old, "mode %04o, owner %d:%d\n" % ((FILE_MODE,) + owner))
            if not self.module.check_mode:
                self.set_attributes(path)
            return True
        return False

    def remove(self, path):
        if not os.path.lexists(path):
            return False
        if self.module._diff:
            current = None if os.path.islink(path) else self.inspect(path)
            self.add_diff(path, _text(current and current[0]), "")
        if not self.module.check_mode:
            try:
                os.remove(path)
            except (IOError, OSError) as exc:
                self.fail("cannot remove %s: %s" % (path, to_native(exc)))
        return True

    def sync_files(self, plans):
        owner = self.owner_ids() if any(content is not None for _option, _path, content in plans) else None
        for option, path, content in plans:
            entry = dict(path=path, state="absent" if content is None else "present", changed=False, checksum=None)
            self.result["files"][option] = entry
            if content is None:
                entry["changed"] = self.remove(path)
            else:
                entry["checksum"] = kmod.checksum(content)
                entry["changed"] = self.install(path, content, owner)
            if entry["changed"]:
                self.result["changed"] = True

    # ------------------------------------------------------------ modprobe
    def load(self, missing, present):
        if not missing:
            return
        for name in missing:
            # check mode: modprobe -n resolves the module (and fails as modprobe would) without loading it
            res = self.run(kmod.modprobe_args(name, dry_run=self.module.check_mode))
            if not res.ok:
                said = (res.stderr or "").strip() or (res.stdout or "").strip() or "no output"
                done = ("; loaded before it: %s" % ", ".join(self.result["loaded"])) if self.result["loaded"] else ""
                self.fail("cannot load the kernel module %s: '%s' failed with rc %d: %s%s" % (name, " ".join(res.cmd), res.rc, said, done), res)
            self.result["loaded"].append(name)
        self.result["changed"] = True
        self.add_diff(MODULES_HEADER, _lines(present), _lines(present + self.result["loaded"]))

    # ------------------------------------------------------------ run
    def apply(self):
        names, report, plans = self.wanted()
        if not self.tree.is_dir():
            self.fail("sysfs_root %s is not a directory" % self.tree.root)
        release = kmod.kernel_release()
        self.result["kernel"] = release
        self.result["initramfs"] = kmod.initramfs_path(release)
        asked = kmod.unique_names(names + report, "names and report")
        present = kmod.present(self.tree, asked, kmod.builtin_modules(release))
        self.result["present"] = present
        missing = [name for name in names if name not in present] if self.params["load"] else []
        if missing and not self.runner.available:
            self.fail("cannot load %s: modprobe is not installed (package kmod)" % ", ".join(missing))
        self.sync_files(plans)
        self.load(missing, [name for name in asked if name in present])
        if self.module._diff:
            self.result["diff"] = self.diff
        return self.result


def main():
    module = AnsibleModule(
        argument_spec=argument_spec(),
        required_together=[("options", "options_file")],
        required_if=[("cmdline", True, ["cmdline_file", "options"])],
        supports_check_mode=True,
    )
    module.exit_json(**common.mark_stale(module, KernelModules(module).apply(), "hca"))


if __name__ == "__main__":
    main()
