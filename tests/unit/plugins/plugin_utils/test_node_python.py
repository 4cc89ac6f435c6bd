# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""plugin_utils/node_python: the node's Python judged from the raw probe's output, and the probe itself in a shell."""

from __future__ import annotations

import subprocess
import sys

import pytest

from ansible_collections.fabric.infiniband.plugins.plugin_utils import node_python

RHEL8 = 'NAME="Red Hat Enterprise Linux"\nVERSION="8.10 (Ootpa)"\nID="rhel"\nVERSION_ID="8.10"\nPRETTY_NAME="Red Hat Enterprise Linux 8.10 (Ootpa)"\n'
ROCKY9 = 'NAME="Rocky Linux"\nID="rocky"\nVERSION_ID="9.5"\nPRETTY_NAME="Rocky Linux 9.5 (Blue Onyx)"\n'
DEBIAN12 = 'PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nNAME="Debian GNU/Linux"\nVERSION_ID="12"\nID=debian\n'
UBUNTU1804 = 'NAME="Ubuntu"\nVERSION_ID="18.04"\nID=ubuntu\nPRETTY_NAME="Ubuntu 18.04.6 LTS"\n'


def _output(release, python):
    return "%s%s\n%s" % (release, node_python.MARKER, python)


@pytest.mark.parametrize("release, python", [(ROCKY9, "3.9\n"), (DEBIAN12, "3.11\n"), (RHEL8, "3.12\n")])
def test_new_enough(release, python):
    assert node_python.python_problem(_output(release, python)) is None


def test_rhel8_system_python_is_refused_with_what_to_do():
    message = node_python.python_problem(_output(RHEL8, "3.6\n"), interpreter="/usr/libexec/platform-python", host="n1")
    assert message == ("n1: Red Hat Enterprise Linux 8.10 (Ootpa) runs Python 3.6 as /usr/libexec/platform-python; this collection's "
                       "modules need Python 3.9 or newer on the node. Install a newer one (dnf install python3.11) and set "
                       "ansible_python_interpreter: /usr/bin/python3.11 for this host (or its group).")


def test_no_python_at_all():
    message = node_python.python_problem(_output(ROCKY9, ""))
    assert message.startswith("Rocky Linux 9.5 (Blue Onyx) runs no Python that runs as python3;")
    assert "Install Python 3.9 or newer and set ansible_python_interpreter" in message


def test_a_distribution_without_a_newer_python_package_is_told_to_upgrade():
    assert "or upgrade the distribution." in node_python.python_problem(_output(UBUNTU1804, "3.6\n"))


def test_no_os_release():
    assert node_python.python_problem(node_python.MARKER + "\n3.6\n").startswith("an unknown distribution runs Python 3.6")


def test_parse_os_release_strips_quotes():
    assert node_python.parse_os_release(RHEL8)["VERSION_ID"] == "8.10"
    assert node_python.parse_os_release(DEBIAN12)["ID"] == "debian"


def test_the_probe_runs_in_a_shell(tmp_path):
    """The raw command prints the marker and the interpreter's version; an interpreter that does not exist prints none."""
    out = subprocess.run(["sh", "-c", node_python.probe(sys.executable)], stdout=subprocess.PIPE, text=True, check=True).stdout
    assert node_python.MARKER in out
    assert node_python.python_problem(out) is None
    out = subprocess.run(["sh", "-c", node_python.probe(str(tmp_path / "no-python"))], stdout=subprocess.PIPE, text=True,
                         check=True).stdout
    assert "runs no Python that runs" in node_python.python_problem(out)
