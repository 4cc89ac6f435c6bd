# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The package database of a node, asked which of some packages are installed: the argv of
``dpkg-query`` (Debian family) and ``rpm`` (RedHat and Suse families), and the parser of what they print.

Both print one line per package found, in a format of our choosing, ``<name> <state> <version>``:

- ``dpkg-query -W -f='${Package} ${db:Status-Status} ${Version}\\n' -- NAME...`` prints a line for every
  package its database knows, whatever its state: ``installed``, or ``config-files`` (removed, its
  configuration kept), ``half-installed``, ``unpacked``, ``not-installed`` (then with an empty version)
  and the others of dpkg-query(1); only ``installed`` counts. The lines come sorted by name, not in the
  order asked. A name the database does not know prints ``dpkg-query: no packages found matching NAME``
  on stderr and makes the exit status 1 ("the requested query failed either fully or partially, due to
  no file or package being found"); 2 and above are errors. A name with an architecture qualifier
  (``libibverbs1:amd64``) or a pattern (``librdmacm*``) prints the plain names it matches.
- ``rpm -q --qf '%{NAME} installed %{VERSION}-%{RELEASE}\\n' -- NAME...`` prints a line for every installed
  package of a name (two for a name installed in two versions, as kernel module packages may be), in the
  order asked, and ``package NAME is not installed`` on stdout for a name that is not (rpm does not tell
  an unknown name from a name not installed); the exit status counts those names (at most 255). A
  database that cannot be opened prints ``error: ...`` lines on stderr, and then the same ``is not
  installed`` line for every name (rpm 4.18): an ``error:`` line fails the query whatever stdout says.

``--`` ends the options of both tools; the names are checked anyway (``check_names``), so that none
starts with ``-``, and none holds a blank or a line break that would make a line of output ambiguous.
"""

from __future__ import annotations

import re


DPKG_QUERY = "dpkg-query"
RPM = "rpm"

# The tool of each os_family fact value (ansible_facts['os_family']).
FAMILY_TOOLS = {"Debian": DPKG_QUERY, "RedHat": RPM, "Suse": RPM}

DPKG_FORMAT = "${Package} ${db:Status-Status} ${Version}\n"
RPM_FORMAT = "%{NAME} installed %{VERSION}-%{RELEASE}\n"
INSTALLED = "installed"

NAME_RE = re.compile(r"^[^\s\-][^\s]*\Z")
NAME_TEXT = "a name has no blank or line break and does not start with -"
# rpm's line for a name that is not installed (on stdout; the exit status counts them).
RPM_NOT_INSTALLED_RE = re.compile(r"^package (\S+) is not installed$", re.M)
# rpm's errors (on stderr), such as a database that cannot be opened; its warnings do not fail the query.
RPM_ERROR_RE = re.compile(r"^error: ", re.M)


def tool_for(os_family):
    """The query tool of an os_family, or None for a family this module has none for."""
    return FAMILY_TOOLS.get(os_family)


def check_names(names, where="packages"):
    """``names`` once each, in the given order; ValueError for a name that is not one."""
    out = []
    for index, name in enumerate(names):
        if not isinstance(name, str) or not NAME_RE.match(name):
            raise ValueError("%s[%d] %r is not a package name: %s" % (where, index, name, NAME_TEXT))
        if name not in out:
            out.append(name)
    return out


def query_args(tool, names):
    """Arguments (after the tool's path) that print a line per package of ``names``."""
    if tool == DPKG_QUERY:
        return ["-W", "-f=" + DPKG_FORMAT, "--"] + list(names)
    if tool == RPM:
        return ["-q", "--qf", RPM_FORMAT, "--"] + list(names)
    raise ValueError("no query for the tool %r" % (tool,))


def _lines(text):
    return [line.strip() for line in (text or "").splitlines() if line.strip()]


def parse_lines(stdout):
    """``{name: version}`` of the lines ``<name> installed <version>``; other lines are ignored."""
    found = {}
    for line in _lines(stdout):
        fields = line.split()
        if len(fields) == 3 and fields[1] == INSTALLED:
            found[fields[0]] = fields[2]
    return found


def parse(tool, rc, stdout, stderr):
    """(installed ``{name: version}``, None) or (None, why the query failed) for one run of ``tool``."""
    if tool == DPKG_QUERY:
        # 1: some name unknown to the database (said on stderr); the others are printed all the same.
        if rc not in (0, 1):
            return None, "dpkg-query failed with rc %d" % rc
        return parse_lines(stdout), None
    if RPM_ERROR_RE.search(stderr or ""):
        return None, "rpm failed with rc %d (error on stderr)" % rc
    if rc != 0 and not RPM_NOT_INSTALLED_RE.search(stdout or ""):
        # a non-zero status that no "package ... is not installed" line explains
        return None, "rpm failed with rc %d" % rc
    return parse_lines(stdout), None


def installed(names, found):
    """``found`` restricted to ``names`` (a pattern or qualified name asked prints other names), in their order."""
    return dict((name, found[name]) for name in names if name in found)
