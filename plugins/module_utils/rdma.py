# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The ``rdma`` tool of iproute2: argv builders and output parsers.

``rdma system show`` has printed more attributes with every iproute2
generation, and some versions print plain text even when asked for JSON
(``-j``), so the parser accepts both forms:

- 5.3 - 5.13: ``netns shared``
- 5.14 - 6.6: ``netns shared copy-on-fork on``
- 6.7 - 6.12: ``netns shared privileged-qkey off copy-on-fork on``
- 6.13+: ``netns shared privileged-qkey off monitor off copy-on-fork on``
- < 5.3: ``Unknown object 'system'.`` (no such command)
"""

from __future__ import annotations

import json


NETNS_MODES = ("shared", "exclusive")
UNKNOWN_OBJECT = "Unknown object"

_TRUE = ("on", "true", "yes", "enabled")
_FALSE = ("off", "false", "no", "disabled")


def system_show_args():
    """Arguments (after the tool path) that query the RDMA subsystem settings."""
    return ["-j", "system", "show"]


def _key(name):
    name = str(name).strip().lower().replace("-", "_")
    return "netns_mode" if name == "netns" else name


def _value(value):
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, (int, float)):
        return value
    text = str(value).strip()
    if text.lower() in _TRUE:
        return True
    if text.lower() in _FALSE:
        return False
    return text


def _from_json(data):
    if isinstance(data, dict):
        data = [data]
    if not isinstance(data, list):
        return None
    settings = {}
    for item in data:
        if isinstance(item, dict):
            for key, value in item.items():
                settings[_key(key)] = _value(value)
    return settings


def _from_text(text):
    # "<key> <value>" pairs starting at "netns"; anything before it (a
    # device prefix, a warning) is ignored.
    settings = {}
    words = text.split()
    if "netns" not in words:
        return settings
    start = words.index("netns")
    for index in range(start, len(words) - 1, 2):
        settings[_key(words[index])] = _value(words[index + 1])
    return settings


def parse_system_show(stdout):
    """Parse ``rdma [-j] system show`` output (JSON or text) into a dict.

    Keys use underscores (``copy_on_fork``), ``netns`` becomes
    ``netns_mode``, on/off become booleans. Returns None when the output
    holds no valid netns mode (for example the error of an old iproute2).
    """
    text = (stdout or "").strip()
    if not text:
        return None
    settings = None
    if text[0] in "[{":
        try:
            settings = _from_json(json.loads(text))
        except ValueError:
            settings = None
    if settings is None:
        settings = _from_text(text)
    mode = settings.get("netns_mode")
    if not isinstance(mode, str) or mode.lower() not in NETNS_MODES:
        return None
    settings["netns_mode"] = mode.lower()
    return settings


def system_unsupported(stdout, stderr):
    """True when iproute2 is too old to know the ``system`` object (< 5.3)."""
    return UNKNOWN_OBJECT in "%s\n%s" % (stdout or "", stderr or "")
