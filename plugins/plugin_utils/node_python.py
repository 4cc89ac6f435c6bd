# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Whether a node's Python can run this collection's modules, decided on the controller before any module runs.

The modules need Python 3.9 or newer on the node. A node whose Python is older cannot even run the module that would
report it (on RHEL 8 the system Python, /usr/libexec/platform-python, is 3.6), so the preflight reads the node without
Python: :data:`PROBE` is a shell command for ``ansible.builtin.raw`` that prints ``/etc/os-release`` and the version of
the interpreter Ansible will use, and :func:`python_problem` turns its output into the message that refuses the node,
naming the distribution and what to do, or ``None`` when the node is fine.
"""

from __future__ import annotations

import re
import shlex

MIN_PYTHON = (3, 9)
MARKER = "--- fabric.infiniband python ---"

# Where the system Python is too old but the distribution ships a newer one: the command that installs it, and its
# path. Per os-release ID and major VERSION_ID.
INSTALL = {
    ("rhel", "8"): ("dnf install python3.11", "/usr/bin/python3.11"),
    ("rocky", "8"): ("dnf install python3.11", "/usr/bin/python3.11"),
    ("almalinux", "8"): ("dnf install python3.11", "/usr/bin/python3.11"),
    ("ol", "8"): ("dnf install python3.11", "/usr/bin/python3.11"),
    ("centos", "8"): ("dnf install python3.11", "/usr/bin/python3.11"),
    ("sles", "15"): ("zypper install python311", "/usr/bin/python3.11"),
}


def probe(interpreter="python3"):
    """The ``raw`` command: os-release, a marker, then ``major.minor`` of ``interpreter`` (nothing if it does not run)."""
    quoted = shlex.quote(interpreter)
    return ("cat /etc/os-release 2>/dev/null; echo %s; %s -c 'import sys; print(\"%%d.%%d\" %% sys.version_info[:2])' 2>/dev/null || true"
            % (shlex.quote(MARKER), quoted))


PROBE = probe()


def parse_os_release(text):
    """``/etc/os-release`` as a dict (quotes removed)."""
    result = {}
    for line in (text or "").splitlines():
        match = re.match(r"^([A-Z0-9_]+)=(.*)$", line.strip())
        if match:
            value = match.group(2).strip()
            if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
                value = value[1:-1]
            result[match.group(1)] = value
    return result


def _version(text):
    match = re.match(r"^\s*(\d+)\.(\d+)\s*$", text or "")
    return (int(match.group(1)), int(match.group(2))) if match else None


def python_problem(output, interpreter="python3", host=None):
    """The message refusing the node from the output of :func:`probe`, or ``None`` when its Python is new enough.

    ``interpreter`` is what the probe ran (``ansible_python_interpreter`` when set), named in the message.
    """
    release_text, _sep, python_text = (output or "").partition(MARKER)
    release = parse_os_release(release_text)
    name = release.get("PRETTY_NAME") or " ".join(v for v in (release.get("NAME"), release.get("VERSION_ID")) if v) or "an unknown distribution"
    version = _version(python_text.strip().splitlines()[-1] if python_text.strip() else "")
    if version is not None and version >= MIN_PYTHON:
        return None
    distro = release.get("ID", "").lower()
    install = INSTALL.get((distro, release.get("VERSION_ID", "").split(".")[0]))
    need = "%d.%d" % MIN_PYTHON
    found = "Python %d.%d" % version if version else "no Python that runs"
    if install:
        what = ("Install a newer one (%s) and set ansible_python_interpreter: %s for this host (or its group)"
                % install)
    else:
        what = ("Install Python %s or newer and set ansible_python_interpreter to it for this host, or upgrade the "
                "distribution" % need)
    return ("%s%s runs %s as %s; this collection's modules need Python %s or newer on the node. %s."
            % ("%s: " % host if host else "", name, found, interpreter, need, what))
