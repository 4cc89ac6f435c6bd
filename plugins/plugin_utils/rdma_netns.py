# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The rdma_netns role's decisions (controller side), for its action (plugins/action/rdma_netns.py).

- :func:`settings` and :func:`check`: the role's settings with its defaults, and the values it refuses (each problem
  names the variable and the values it accepts);
- :func:`conflicts` and :func:`warning`: what ``rdma_netns_cluster_plugins`` lists that the mode does not suit;
- :func:`kernel_modules_args`: the one ``kernel_modules`` run that writes the ib_core option (and the GRUB drop-in);
- :func:`initramfs`: whether the running kernel's initramfs is regenerated (the stamp records for which kernel and
  option it last was), the commands that list and regenerate it;
- :func:`mode_may_differ` and :func:`pending_args`: whether the run-time switch runs (not when this run's reading of
  the node shows the mode) and what the pending-action record gets.
"""

from __future__ import annotations

MODES = ("exclusive", "shared")
RUNTIMES = ("try", "require")
UPDATE_INITRAMFS = ("auto", "always", "never")
CLUSTER_PLUGINS = ("rdma_shared_device_plugin", "ib_sriov_cni_rdma_isolation", "rdma_cni")
# what each mode does not suit
NEEDS_OTHER = {"exclusive": ("rdma_shared_device_plugin",), "shared": ("ib_sriov_cni_rdma_isolation", "rdma_cni")}

# the role's defaults (defaults/main.yml; tests/unit/plugins/plugin_utils/test_rdma_netns.py keeps them equal), for the
# step run outside the role (playbooks/preflight.yml), where the role's defaults are not loaded
DEFAULTS = {
    "rdma_netns_mode": "exclusive",
    "rdma_netns_runtime": "try",
    "rdma_netns_update_initramfs": "auto",
    "rdma_netns_kernel_cmdline": False,
    "rdma_netns_cluster_plugins": [],
}

MODPROBE_FILE = "/etc/modprobe.d/fabric-infiniband-rdma-netns.conf"
GRUB_FILE = "/etc/default/grub.d/fabric-infiniband-rdma-netns.cfg"
STAMP_PATH = "/var/lib/fabric-infiniband/rdma_netns.initramfs"

STUCK_MSG = ("The kernel still runs %s. The option in /etc/modprobe.d did not reach ib_core: check that the initramfs was "
             "regenerated for the running kernel (rdma_netns_update_initramfs), or set rdma_netns_kernel_cmdline: true.")

_TRUE = ("1", "true", "yes", "on", "y")
_FALSE = ("0", "false", "no", "off", "n")


def settings(values):
    """The role's settings: ``values`` (the task's variables of the role) over :data:`DEFAULTS`; a setting left null
    takes its default."""
    out = dict(DEFAULTS)
    out.update((name, value) for name, value in (values or {}).items() if name in DEFAULTS and value is not None)
    return out


def _word(settings, name, accepted, problems):
    value = settings[name]
    if value not in accepted:
        problems.append("%s must be one of %s, got %r" % (name, ", ".join(accepted), value))


def check(settings):
    """The problems of the settings (as the role's argument specs refuse them): each names the variable and the values
    it accepts. Empty when they are fine."""
    problems = []
    _word(settings, "rdma_netns_mode", MODES, problems)
    _word(settings, "rdma_netns_runtime", RUNTIMES, problems)
    _word(settings, "rdma_netns_update_initramfs", UPDATE_INITRAMFS, problems)
    cmdline = settings["rdma_netns_kernel_cmdline"]
    if not isinstance(cmdline, bool) and str(cmdline).strip().lower() not in _TRUE + _FALSE:
        problems.append("rdma_netns_kernel_cmdline must be true or false, got %r" % (cmdline,))
    plugins = settings["rdma_netns_cluster_plugins"]
    if isinstance(plugins, str) or not isinstance(plugins, (list, tuple)):
        problems.append("rdma_netns_cluster_plugins must be a list of %s, got %r" % (", ".join(CLUSTER_PLUGINS), plugins))
    else:
        strange = [plugin for plugin in plugins if plugin not in CLUSTER_PLUGINS]
        if strange:
            problems.append("rdma_netns_cluster_plugins lists %s; accepted: %s" % (
                ", ".join("%r" % (plugin,) for plugin in strange), ", ".join(CLUSTER_PLUGINS)))
    return problems


def kernel_cmdline(settings):
    value = settings["rdma_netns_kernel_cmdline"]
    return value if isinstance(value, bool) else str(value).strip().lower() in _TRUE


def conflicts(mode, plugins):
    """What ``rdma_netns_cluster_plugins`` lists that ``mode`` does not suit, in the order listed."""
    return [plugin for plugin in plugins or [] if plugin in NEEDS_OTHER.get(mode, ())]


def warning(mode, plugins):
    """The warning for :func:`conflicts`, or None."""
    found = conflicts(mode, plugins)
    if not found:
        return None
    needs = ('needs shared mode (it exits with "incorrect RDMA subsystem network namespace" in exclusive mode)'
             if mode == "exclusive" else "needs exclusive mode")
    return "rdma_netns_mode is %s, but rdma_netns_cluster_plugins lists %s, which %s." % (mode, ", ".join(found), needs)


def kernel_modules_args(settings):
    """The arguments of the kernel_modules run that writes the ib_core option (and the GRUB drop-in, or removes it)."""
    return dict(options={"ib_core": {"netns_mode": 0 if settings["rdma_netns_mode"] == "exclusive" else 1}},
                options_file=MODPROBE_FILE, cmdline=kernel_cmdline(settings), cmdline_file=GRUB_FILE, load=False)


def grub_changed(kmod):
    """Whether the kernel_modules run wrote or removed the GRUB drop-in (update-grub runs then)."""
    return bool((((kmod or {}).get("files") or {}).get("cmdline_file") or {}).get("changed"))


def stamp_wanted(kmod):
    """What the stamp says once the initramfs is regenerated for the running kernel and this option file."""
    checksum = (((kmod or {}).get("files") or {}).get("options_file") or {}).get("checksum")
    return "%s %s" % (kmod.get("kernel"), checksum)


def is_debian_image(image):
    return image.startswith("/boot/initrd.img")


def list_argv(image):
    """The command that lists the initramfs ``image``."""
    return ["lsinitramfs", image] if is_debian_image(image) else ["lsinitrd", image]


def regenerate_argv(image, kernel):
    """The command that regenerates the initramfs of ``kernel`` (``image`` tells the distribution's tool)."""
    return ["update-initramfs", "-u", "-k", kernel] if is_debian_image(image) else ["dracut", "-f", "--kver", kernel]


def loads_ib_core(listing):
    """Whether an initramfs listing (lines) holds ib_core.ko (compressed or not)."""
    return any("/ib_core.ko" in line for line in listing or [])


def initramfs(settings, kmod, stamp):
    """What to do about the initramfs: ``None`` (nothing: no initramfs, ``never``, or the stamp says it was regenerated
    for this kernel and option), ``"list"`` (``auto``: regenerate when the listing holds ib_core) or
    ``"regenerate"`` (``always``)."""
    image = (kmod or {}).get("initramfs")
    if not image or settings["rdma_netns_update_initramfs"] == "never":
        return None
    if (stamp or "").strip() == stamp_wanted(kmod):
        return None
    return "regenerate" if settings["rdma_netns_update_initramfs"] == "always" else "list"


def mode_may_differ(hca, current, mode):
    """Whether the running kernel's mode may differ from ``mode``: unless this run's current reading of the node (the
    fact infiniband_hca) shows it."""
    if not current or not isinstance(hca, dict):
        return True
    return (hca.get("rdma_system") or {}).get("netns_mode") != mode


def pending_args(mode, system, run_id):
    """The arguments of pending_action after the run-time switch (``system``, the rdma_system result, or None when it
    did not run): the entry present when only a reboot brings the mode, absent otherwise."""
    system = system or {}
    waits = bool(system.get("reboot_required"))
    after = (system.get("netns") or {}).get("after") or "another mode"
    return dict(
        name="rdma_netns", state="present" if waits else "absent", action="reboot",
        reason="RDMA netns mode %s at the next boot; now refused at run time (%s)" % (mode, system.get("reason") or "busy"),
        details={"netns": mode}, stuck_msg=STUCK_MSG % after, run_id=run_id)
