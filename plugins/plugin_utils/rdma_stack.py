# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The rdma_stack role's decisions (controller side), for its action (plugins/action/rdma_stack.py).

- :func:`input_problems`: the settings' values (flavour, module and package names, the DOCA release and URLs);
- :func:`platform` and :func:`platform_vars`: the platform of a host (``Debian-12``, ``Ubuntu-24.04``, ``RedHat-9``) from
  its facts, and the package names of its family then of its release (``roles/rdma_stack/vars/<family>.yml``, then
  ``vars/<platform>.yml``);
- :func:`queried`: what node_facts asks the package database for, before the platform is known (every name a vars file
  can ask for, the DOCA profile and the extra packages);
- :func:`packages`, :func:`to_install`: what the package manager installs, and the part of it the query did not find;
- :func:`conflict_problem`: the refusal of a mixed stack (inbox and OFED/DOCA verbs packages together);
- :func:`kernel_module_problems`: the refusal of a module of ``rdma_stack_modules`` the running kernel does not have,
  from kernel_modules run in check mode;
- :func:`doca_repository`: the DOCA repository's URL, apt pin origin and key, as NVIDIA lays the repository out.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from urllib.parse import urlsplit

import yaml

ROLE_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "roles", "rdma_stack")

FLAVOURS = ("inbox", "doca")
# Platforms the role knows, by the name of their vars file: <family or distribution>-<release>.
SUPPORTED = ("Debian-12", "Debian-13", "Ubuntu-22.04", "Ubuntu-24.04", "RedHat-8", "RedHat-9")
SUPPORTED_TEXT = "Debian 12 and 13, Ubuntu 22.04 and 24.04, RHEL and Rocky Linux 8 and 9"

MODULES_FILE = "/etc/modules-load.d/fabric-infiniband-rdma.conf"
DOCA_KEYRING = "/etc/apt/keyrings/fabric-infiniband-doca.asc"
DOCA_SOURCES = "/etc/apt/sources.list.d/fabric-infiniband-doca.sources"
DOCA_PIN = "/etc/apt/preferences.d/fabric-infiniband-doca.pref"
DOCA_REPO_NAME = "fabric-infiniband-doca"

# Every package name that vars/<family>.yml and vars/<platform>.yml can ask for. node_facts reads the facts and what is
# installed in one run, before the platform (and so its vars files) is known, so it asks for all of them
# (tests/unit/plugins/plugin_utils/test_rdma_stack.py fails when a vars file names one that is missing here).
QUERY_NAMES = (
    # Debian and Ubuntu (vars/Debian.yml, vars/<platform>.yml)
    "rdma-core", "ibverbs-providers", "ibverbs-utils", "rdmacm-utils", "infiniband-diags", "perftest", "mstflint", "iproute2",
    "pciutils", "kmod", "libibverbs1", "librdmacm1", "librdmacm1t64", "doca-ofed", "mlnx-ofed-kernel-dkms",
    "mlnx-ofed-kernel-utils", "mlnx-ofed-kernel-modules", "mlnx-tools", "ofed-scripts",
    # RHEL and Rocky Linux (vars/RedHat.yml, vars/<platform>.yml), the names Debian does not have
    "libibverbs", "libibverbs-utils", "librdmacm", "librdmacm-utils", "iproute", "mlnx-ofa_kernel", "kmod-mlnx-ofa_kernel",
    "mlnx-ofa_kernel-dkms",
)

MODULE_NAME = re.compile(r"^[A-Za-z0-9_-]+$")
PACKAGE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9+._:~-]*$")
RELEASE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
URL = re.compile(r"^(https?://[^/]+|file:///)")
# OFED/DOCA builds carry "mlnx" or "OFED" in their version.
OFED_VERSION = re.compile(r"(mlnx|ofed)", re.IGNORECASE)


def _list(value):
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        return list(value)
    return [value]


def _text(value):
    return "" if value is None else str(value)


def input_problems(settings):
    """The refusal of the settings' values (one message naming every setting and what it accepts), or []."""
    flavour = settings.get("rdma_stack_flavour", "inbox")
    modules = _list(settings.get("rdma_stack_modules"))
    extra = _list(settings.get("rdma_stack_extra_packages"))
    ok = (flavour in FLAVOURS
          and all(MODULE_NAME.match(_text(m)) for m in modules)
          and all(PACKAGE_NAME.match(_text(p)) for p in extra)
          and RELEASE.match(_text(settings.get("rdma_stack_doca_version", "3.3.0")))
          and URL.match(_text(settings.get("rdma_stack_doca_repo_url", "https://")))
          and URL.match(_text(settings.get("rdma_stack_doca_key_url", "https://")))
          and len(_list(settings.get("rdma_stack_doca_packages", ["doca-ofed"]))) > 0)
    if ok:
        return []
    return ["Invalid input: rdma_stack_flavour must be inbox or doca (is %s); rdma_stack_modules must be module names (letters, "
            "digits, _ and -: %s); rdma_stack_extra_packages must be package names (%s); rdma_stack_doca_version must be a release "
            "directory such as 3.3.0 (%s); rdma_stack_doca_repo_url and rdma_stack_doca_key_url must be http://, https:// or "
            "file:/// URLs (%s, %s); rdma_stack_doca_packages must name at least one package"
            % (flavour, modules, extra, settings.get("rdma_stack_doca_version"), settings.get("rdma_stack_doca_repo_url"),
               settings.get("rdma_stack_doca_key_url"))]


def platform(facts):
    """The platform of a host by its facts (without the ``ansible_`` prefix): Ubuntu by its release (22.04; 22.10 is
    another one), Debian and the RHEL family (RHEL, Rocky) by their major version; ``unsupported`` for any other."""
    distribution = facts.get("distribution")
    if distribution == "Ubuntu":
        return "Ubuntu-%s" % facts.get("distribution_version")
    if distribution == "Debian":
        return "Debian-%s" % facts.get("distribution_major_version")
    if distribution in ("RedHat", "Rocky"):
        return "RedHat-%s" % facts.get("distribution_major_version")
    return "unsupported"


def platform_problem(facts, host):
    """The refusal of a platform the role does not know, or None."""
    if platform(facts) in SUPPORTED:
        return None
    return "rdma_stack supports %s; %s runs %s %s. Nothing was changed." % (
        SUPPORTED_TEXT, host, facts.get("distribution"), facts.get("distribution_version"))


def vars_files(facts):
    """The vars files of a host, in the order they are read (a later one wins): its family, then its platform."""
    return ["%s.yml" % facts.get("os_family"), "%s.yml" % platform(facts)]


def platform_vars(facts, role_dir=ROLE_DIR):
    """The variables of the host's vars files (``__rdma_stack_*``), merged in order, without the prefix."""
    merged = {}
    for name in vars_files(facts):
        path = os.path.join(role_dir, "vars", name)
        if not os.path.exists(path):
            continue
        with open(path) as handle:
            for key, value in (yaml.safe_load(handle) or {}).items():
                merged[key[len("__rdma_stack_"):] if key.startswith("__rdma_stack_") else key] = value
    return merged


def queried(settings):
    """What node_facts asks for: every name a vars file can ask for, then the DOCA profile and the extra packages that
    are plain names (a name with a version or a pattern is never reported installed: the package manager judges it)."""
    names = list(QUERY_NAMES)
    for name in _list(settings.get("rdma_stack_doca_packages", ["doca-ofed"])) + _list(settings.get("rdma_stack_extra_packages")):
        if isinstance(name, str) and PACKAGE_NAME.match(name) and name not in names:
            names.append(name)
    return names


def packages(settings, pvars):
    """The packages to install: the inbox list of the platform or the DOCA profile, perftest as rdma_stack_perftest
    says (DOCA's repository ships a package of that name), then the extra packages."""
    if settings.get("rdma_stack_flavour", "inbox") == "inbox":
        names = list(pvars.get("inbox_packages") or []) + list(pvars.get("verbs_libraries") or [])
    else:
        names = _list(settings.get("rdma_stack_doca_packages", ["doca-ofed"]))
        if settings.get("rdma_stack_perftest", True) and "perftest" not in names:
            names.append("perftest")
    if not settings.get("rdma_stack_perftest", True):
        names = [name for name in names if name != "perftest"]
    return names + _list(settings.get("rdma_stack_extra_packages"))


def to_install(wanted, installed):
    """The names the query did not find installed (a name with a version or a pattern is never found, so the package
    manager judges it)."""
    return [name for name in wanted if name not in installed]


def watched(pvars):
    return list(pvars.get("verbs_libraries") or []) + list(pvars.get("verbs_packages") or []) + list(pvars.get("ofed_packages") or [])


def judge(installed, pvars):
    """The installed packages of the verbs stack as ``"<name> <version>"``, split into OFED/DOCA's (a version with
    "mlnx" or "OFED", or a package only OFED/DOCA ships) and the inbox ones."""
    names = watched(pvars)
    lines = ["%s %s" % (name, version) for name, version in installed.items() if name in names]
    ofed_only = set(pvars.get("ofed_packages") or [])
    ofed = [line for line in lines if OFED_VERSION.search(line.split(" ", 1)[1]) or line.split(" ", 1)[0] in ofed_only]
    inbox = [line for line in lines if line not in ofed]
    return inbox, ofed


def conflict_problem(flavour, installed, pvars, host):
    """The refusal of a mixed stack (the other stack's verbs packages are installed), with what to remove, or None."""
    inbox, ofed = judge(installed, pvars)
    conflicts = inbox if flavour == "doca" else ofed
    if not conflicts:
        return None
    remove = "%s %s" % (pvars.get("remove_command"), " ".join(line.split(" ")[0] for line in conflicts))
    if flavour == "doca":
        way_out = "Remove them first (%s) and run the role again, or keep rdma_stack_flavour: inbox." % remove
    else:
        way_out = ("Remove DOCA-OFED first (/usr/sbin/ofed_uninstall.sh --force, or %s) and run the role again, or set "
                   "rdma_stack_flavour: doca." % remove)
    return ("rdma_stack_flavour is %s, but %s has %s RDMA packages installed: %s. Installing the other stack over them mixes two "
            "libibverbs and providers, which fails at run time. Nothing was changed. %s"
            % (flavour, host, "inbox" if flavour == "doca" else "OFED/DOCA", ", ".join(conflicts), way_out))


def doca_kernel_installed(installed, pvars):
    """Whether DOCA-OFED's kernel modules package (DKMS) is installed: then openibd must bring its driver in."""
    return any(name in installed for name in pvars.get("doca_kernel_packages") or [])


def doca_repository(settings, pvars, architecture):
    """The DOCA repository of a node: ``<base>/<version>/<distribution>/<architecture>/`` (NVIDIA's layout), the key's
    URL, and the origin apt pins by (the repository's host; a file: repository has the empty origin)."""
    base = _text(settings.get("rdma_stack_doca_repo_url", "https://linux.mellanox.com/public/repo/doca"))
    arch = {"aarch64": "arm64-sbsa"}.get(architecture, architecture)
    return dict(
        url="%s/%s/%s/%s/" % (base.rstrip("/"), settings.get("rdma_stack_doca_version", "3.3.0"), pvars.get("doca_distro"), arch),
        key_url=_text(settings.get("rdma_stack_doca_key_url") or base.rstrip("/") + "/GPG-KEY-Mellanox.pub"),
        origin="" if base.startswith("file:") else (urlsplit(base).hostname or ""),
        keyring=DOCA_KEYRING,
    )


def kernel_module_problems(result, setting):
    """The refusal of the setting ``setting`` from kernel_modules run in check mode (which resolves every module the kernel
    does not have with ``modprobe -n`` and stops at the first it cannot resolve), or []. Any other failure (no modprobe yet,
    no sysfs) tells nothing about the names: the step that loads them reports it."""
    if not isinstance(result, Mapping):
        raise TypeError("kernel_module_problems expects the result of fabric.infiniband.kernel_modules")
    if result.get("skipped"):
        return []
    cmd = result.get("cmd") or []
    # a failed modprobe -n NAME (check mode): NAME is not installed for the running kernel; the module's rc (returned only
    # with a failure) tells
    if len(cmd) < 3 or cmd[-2] != "-n" or result.get("rc") in (None, 0):
        return []
    name = cmd[-1]
    said = (result.get("stderr") or result.get("stdout") or "").strip() or "rc %s" % result.get("rc")
    found = list(result.get("present") or []) + list(result.get("loaded") or [])
    return ["%s: %s is not a kernel module of the running kernel %s (%s: %s). Accepted: the names of modules installed for "
            "that kernel (modinfo <name> finds them)%s. Nothing was changed."
            % (setting, name, result.get("kernel") or "", "modprobe -n " + name, said,
               "; of the list, these exist: %s" % ", ".join(found) if found else "")]


def verify_problems(devices, devinfo, rdma, os_family):
    """The checks after a change: ``ibv_devinfo -l`` lists every RDMA device of the kernel (``devices``, the names in
    /sys/class/infiniband), and ``rdma system show`` works (iproute2 5.3 or newer). ``devinfo`` and ``rdma`` are the
    command results (rc, stdout, stderr, msg)."""
    problems = []
    listed = [line.strip() for line in (devinfo.get("stdout") or "").splitlines() if re.match(r"^\s+\S", line)]
    missing = [device for device in sorted(devices) if device not in listed]
    if devinfo.get("rc") != 0 or missing:
        problems.append(
            "ibv_devinfo -l (rc %s) lists %s, but the kernel has %s (/sys/class/infiniband). Without %s no RDMA program can open "
            "the adapter: check that the user-space provider is installed (%s, or DOCA's) and that ib_uverbs is loaded "
            "(/sys/module/ib_uverbs). %s"
            % (devinfo.get("rc"), ", ".join(listed) or "no adapter", ", ".join(sorted(devices)), ", ".join(missing),
               "ibverbs-providers" if os_family == "Debian" else "libibverbs", (devinfo.get("stderr") or devinfo.get("msg") or "").strip()))
    if rdma.get("rc") != 0:
        said = (rdma.get("stderr") or rdma.get("stdout") or rdma.get("msg") or "").strip()
        if "Unknown object" in "%s%s" % (rdma.get("stderr") or "", rdma.get("stdout") or ""):
            hint = "This iproute2 is older than 5.3, which has no rdma system; the netns mode (fabric.infiniband.rdma_netns) needs it."
        else:
            hint = "Check that %s is installed." % ("iproute2" if os_family == "Debian" else "iproute")
        problems.append("rdma system show failed (rc %s): %s. %s" % (rdma.get("rc"), said, hint))
    return problems
