# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Kernel modules (kmod): the ``modprobe`` argv, which modules the kernel has, and the files that load
them or set their parameters at boot.

- ``modprobe NAME`` loads a module and what it depends on; ``-n`` (dry run) only resolves it, which fails
  the same way for a module that is not installed for the running kernel (modprobe(8)).
- A loaded module has a directory ``/sys/module/<name>``, where the name is spelt with ``_`` even when it
  was asked for with ``-`` (``rdma-ucm`` is ``/sys/module/rdma_ucm``). A module built into the kernel has
  one only when it has parameters; ``/lib/modules/<release>/modules.builtin`` lists every built-in one.
- ``/etc/modules-load.d/*.conf`` lists modules that systemd-modules-load loads at every boot, one per
  line, ``#`` and ``;`` starting comments (modules-load.d(5)).
- ``/etc/modprobe.d/*.conf`` holds ``options <module> <param>=<value> ...`` lines, applied whenever the
  module loads (modprobe.d(5)); an initramfs holds a copy of them, made when it was generated.
- The kernel command line takes ``<module>.<param>=<value>`` for a module, loaded or built in; on
  Debian and Ubuntu a drop-in in ``/etc/default/grub.d`` adds to ``GRUB_CMDLINE_LINUX``, which
  ``update-grub`` puts into ``grub.cfg`` (the kernel-parameters documentation of Linux).

The functions are pure but for the readers, which take their paths from the constants below (tests
point them elsewhere) and never raise for a missing file.
"""

from __future__ import annotations

import hashlib
import os
import re


OSRELEASE = "/proc/sys/kernel/osrelease"
BOOT_DIR = "/boot"
MODULES_DIR = "/lib/modules"

# Every file the module writes starts with these lines.
HEADER = "# Managed by Ansible (fabric.infiniband.kernel_modules): changes made here are overwritten.\n"
BOOT_FILE_HEADER = HEADER + "# Kernel modules that systemd-modules-load loads at every boot, one per line (modules-load.d(5)).\n"
OPTIONS_FILE_HEADER = HEADER + "# Parameters applied when the module loads (modprobe.d(5)); an initramfs holds a copy made when it was generated.\n"
CMDLINE_FILE_HEADER = HEADER + "# Module parameters on the kernel command line; update-grub puts them into grub.cfg.\n"

NAME_RE = re.compile(r"^[A-Za-z0-9_-]+\Z")
NAME_TEXT = "letters, digits, _ and -"
PARAM_RE = NAME_RE
# What a value may hold without quoting in modprobe.d, on the kernel command line and in the shell
# variable of the GRUB drop-in: no blank, quote, $, backslash or backquote.
VALUE_RE = re.compile(r"^[A-Za-z0-9_.,:+/@%-]+\Z")
VALUE_TEXT = "a bool, a number, a string of letters, digits and _.,:+/@%-, or a list of those (joined with commas)"


# ---------------------------------------------------------------- names

def sysfs_name(name):
    """The name of a module's directory in /sys/module: ``rdma-ucm`` -> ``rdma_ucm``."""
    return name.replace("-", "_")


def check_name(name, where):
    """``name`` when it is a module name, else ValueError naming ``where`` and what a name may hold."""
    if not isinstance(name, str) or not NAME_RE.match(name):
        raise ValueError("%s %r is not a kernel module name (%s)" % (where, name, NAME_TEXT))
    return name


def unique_names(names, where):
    """``names`` checked, each module once (``rdma-ucm`` and ``rdma_ucm`` are one), in the given order."""
    out, seen = [], set()
    for index, name in enumerate(names):
        check_name(name, "%s[%d]" % (where, index))
        if sysfs_name(name) not in seen:
            seen.add(sysfs_name(name))
            out.append(name)
    return out


def modprobe_args(name, dry_run=False):
    """Arguments of ``modprobe`` (after the tool path) that load ``name``; ``-n`` only resolves it."""
    return (["-n"] if dry_run else []) + [name]


# ---------------------------------------------------------------- options

def format_value(value, where, in_list=False):
    """A parameter value as modprobe.d and the kernel command line take it: a bool is 1 or 0, a list is
    joined with commas (an array parameter); ValueError naming ``where`` for anything else."""
    if isinstance(value, (list, tuple)) and not in_list:
        if not value:
            raise ValueError("%s is an empty list; it must be %s" % (where, VALUE_TEXT))
        return ",".join(format_value(item, where, in_list=True) for item in value)
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, (int, float)):
        text = str(value)
    elif isinstance(value, str):
        text = value
    else:
        raise ValueError("%s is %r; it must be %s" % (where, value, VALUE_TEXT))
    if not VALUE_RE.match(text):
        raise ValueError("%s is %r; it must be %s" % (where, text, VALUE_TEXT))
    return text


def normalize_options(options, where="options"):
    """``{module: {param: value}}`` -> ``[(module, [(param, text), ...]), ...]``, sorted by module and
    parameter, modules spelt with ``_``; ValueError naming the option that is wrong."""
    if options is None:
        return []
    if not isinstance(options, dict):
        raise ValueError("%s must be a dict of module names to dicts of parameters and values" % where)
    merged = {}
    for module, params in options.items():
        check_name(module, "%s key" % where)
        here = "%s.%s" % (where, module)
        if not isinstance(params, dict):
            raise ValueError("%s must be a dict of parameters and values, is %r" % (here, params))
        target = merged.setdefault(sysfs_name(module), {})
        for param, value in params.items():
            if not isinstance(param, str) or not PARAM_RE.match(param):
                raise ValueError("%s key %r is not a parameter name (%s)" % (here, param, NAME_TEXT))
            key = sysfs_name(param)
            if key in target:
                # the kernel does not tell - from _ in module and parameter names
                raise ValueError("%s.%s: the parameter %s of module %s is given twice" % (here, param, key, sysfs_name(module)))
            target[key] = format_value(value, "%s.%s" % (here, param))
    return [(module, sorted(params.items())) for module, params in sorted(merged.items()) if params]


# ---------------------------------------------------------------- file contents

def boot_file_content(names):
    """modules-load.d: the header, then the modules one per line."""
    return BOOT_FILE_HEADER + "".join("%s\n" % name for name in names)


def options_file_content(normalized):
    """modprobe.d: the header, then one ``options <module> <param>=<value> ...`` line per module."""
    lines = ["options %s %s\n" % (module, " ".join("%s=%s" % item for item in params)) for module, params in normalized]
    return OPTIONS_FILE_HEADER + "".join(lines)


def cmdline_words(normalized):
    """``<module>.<param>=<value>`` for every parameter, in the order of the options file."""
    return ["%s.%s=%s" % (module, param, value) for module, params in normalized for param, value in params]


def cmdline_file_content(normalized):
    """GRUB drop-in (a shell fragment that /etc/default/grub reads): adds the parameters to GRUB_CMDLINE_LINUX."""
    return CMDLINE_FILE_HEADER + 'GRUB_CMDLINE_LINUX="$GRUB_CMDLINE_LINUX %s"\n' % " ".join(cmdline_words(normalized))


def checksum(data):
    """SHA-1 hex digest of ``data`` (bytes), as ansible.builtin.copy and template return it."""
    return hashlib.sha1(data).hexdigest()


# ---------------------------------------------------------------- the running kernel

def _read_text(path):
    try:
        with open(path, "rb") as handle:
            return handle.read().decode("utf-8", "replace")
    except (IOError, OSError):
        return None


def kernel_release():
    """The running kernel's release (``uname -r``): /proc/sys/kernel/osrelease, else os.uname()."""
    text = (_read_text(OSRELEASE) or "").strip()
    return text or os.uname()[2]


def initramfs_path(release):
    """The running kernel's initramfs: Debian's and Ubuntu's ``/boot/initrd.img-<release>``, else the
    RHEL family's ``/boot/initramfs-<release>.img``; None when there is neither (a container)."""
    for name in ("initrd.img-%s" % release, "initramfs-%s.img" % release):
        path = os.path.join(BOOT_DIR, name)
        if os.path.isfile(path):
            return path
    return None


def parse_builtin(text):
    """modules.builtin (``kernel/drivers/.../ib_core.ko`` per line) -> the set of module names, spelt with ``_``."""
    names = set()
    for line in (text or "").splitlines():
        base = os.path.basename(line.strip())
        for suffix in (".ko", ".ko.xz", ".ko.zst", ".ko.gz"):
            if base.endswith(suffix):
                names.add(sysfs_name(base[:-len(suffix)]))
                break
    return names


def builtin_modules(release):
    """The modules built into the kernel ``release``; empty when its modules.builtin is not there."""
    return parse_builtin(_read_text(os.path.join(MODULES_DIR, release, "modules.builtin")))


def present(tree, names, builtin=frozenset()):
    """The names (as given) of the modules the kernel has: a /sys/module directory (``tree``: a
    module_utils.sysfs.Sysfs), or built in."""
    return [name for name in names if sysfs_name(name) in builtin or tree.module_loaded(sysfs_name(name))]
