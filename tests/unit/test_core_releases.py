# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""tests/ansible-core-releases.txt, the releases scripts/releases.sh tests ansible-core's internals against, names one
release of every minor line from meta/runtime.yml's requires_ansible up to the ansible-core of requirements-dev.txt,
that one exactly; and every place that states the supported range states the same one."""

from __future__ import annotations

import os
import re

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _read(*path):
    with open(os.path.join(ROOT, *path)) as handle:
        return handle.read()


def _listed():
    pins = re.findall(r"^ansible-core==(\d+)\.(\d+)\.(\d+)$", _read("tests", "ansible-core-releases.txt"), re.MULTILINE)
    return [tuple(int(x) for x in pin) for pin in pins]


def test_every_supported_minor_is_listed_once():
    required = yaml.safe_load(_read("meta", "runtime.yml"))["requires_ansible"]
    lowest = re.fullmatch(r">=(\d+)\.(\d+)\.\d+,<\d+\.\d+", required)
    assert lowest, "requires_ansible %r: expected >=X.Y.Z,<X.W (update this test with the range's new form)" % required
    dev = re.search(r"^ansible-core==(\d+)\.(\d+)\.(\d+)$", _read("requirements-dev.txt"), re.MULTILINE)
    newest = tuple(int(x) for x in dev.groups())
    listed = _listed()
    minors = [pin[:2] for pin in listed]
    wanted = [(newest[0], minor) for minor in range(int(lowest.group(2)), newest[1] + 1)]
    assert int(lowest.group(1)) == newest[0]
    assert minors == wanted, "tests/ansible-core-releases.txt lists %s; wanted one release of each of %s" % (minors, wanted)
    assert listed[-1] == newest, "the newest line is tested at requirements-dev.txt's %s, the list says %s" % (newest, listed[-1])


def test_the_python_311_fallback_is_listed():
    """requirements-dev-py311.txt (Python 3.11, ansible-core 2.19) is a release the list tests."""
    fallback = re.search(r"^ansible-core==(\d+)\.(\d+)\.(\d+)$", _read("requirements-dev-py311.txt"), re.MULTILINE)
    assert tuple(int(x) for x in fallback.groups()) in _listed()


def _range():
    """requires_ansible's bounds: ((X, Y, Z), (X, W)) for ">=X.Y.Z,<X.W"."""
    match = re.fullmatch(r">=(\d+)\.(\d+)\.(\d+),<(\d+)\.(\d+)", yaml.safe_load(_read("meta", "runtime.yml"))["requires_ansible"])
    assert match
    numbers = [int(x) for x in match.groups()]
    return tuple(numbers[:3]), tuple(numbers[3:])


def test_the_upper_bound_is_the_line_after_the_newest_tested():
    """requires_ansible stops before the next minor line: the newest one tested is the last the collection claims."""
    _lowest, upper = _range()
    newest = _listed()[-1]
    assert upper == (newest[0], newest[1] + 1), "requires_ansible's upper bound %s; the newest line tested is %s" % (upper, newest[:2])


def test_one_range_everywhere():
    """The EE definition and the air-gapped guide install the range of meta/runtime.yml."""
    (major, minor, patch), (umajor, uminor) = _range()
    spec = "ansible-core>=%d.%d.%d,<%d.%d" % (major, minor, patch, umajor, uminor)
    ee = yaml.safe_load(_read("ee", "execution-environment.yml"))
    assert ee["dependencies"]["ansible_core"]["package_pip"] == spec
    assert "``%s``" % spec in _read("docs", "docsite", "rst", "awx.rst")
    short = "'ansible-core>=%d.%d,<%d.%d'" % (major, minor, umajor, uminor)
    assert _read("docs", "docsite", "rst", "airgapped.rst").count(short) == 2
    assert "'ansible-core>=%d.%d,<%d.%d'" % (major, minor, umajor, uminor) in _read("README.md")
