# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""systemd's ``systemctl``: argv builders and the parser of ``is-enabled``.

``systemctl is-enabled <unit>`` prints one word on stdout, the unit file state, and exits 0 for
some states and non-zero for the others, so the exit code alone does not tell (systemctl(1)):

- 0: ``enabled``, ``enabled-runtime``, ``static``, ``indirect``, ``generated``, ``transient``, ``alias``;
- non-zero: ``disabled``, ``linked``, ``linked-runtime``, ``masked``, ``masked-runtime``, ``bad``,
  ``not-found`` (systemd 254 and later print it; systemd 252 of Debian 12 prints nothing on stdout and
  ``Failed to get unit file state for <unit>: No such file or directory`` on stderr, rc 1).

Only ``enabled`` means that the links of the unit's ``[Install]`` section (``WantedBy=``) exist
under ``/etc``, so that the unit runs at the next boot:

- ``enabled-runtime`` links live under ``/run`` and are gone after a reboot (``enable`` makes the
  persistent ones; ``disable`` leaves the runtime ones, which a reboot removes);
- ``static``, ``indirect``, ``generated``, ``transient`` and ``alias`` report 0 without any link of
  the unit's own: ``enable`` succeeds (``static``: with a notice, rc 0) and changes nothing, so a
  caller that enabled on anything but ``enabled`` would change something at every run. Those, and
  ``masked`` and ``bad``, are in ``CANNOT_ENABLE`` with what to do.
"""

from __future__ import annotations


ENABLED = "enabled"
NOT_FOUND = "not-found"

# The states ``systemctl enable`` cannot turn into ``enabled``, and why.
CANNOT_ENABLE = {
    "static": "the unit file has no [Install] section (WantedBy=), so it cannot be enabled",
    "indirect": "the unit is enabled only through Also= or an alias, not by its own [Install] section",
    "generated": "the unit is made by a systemd generator at boot, not by a unit file that can be enabled",
    "transient": "the unit is transient (made at run time through the API), not a unit file that can be enabled",
    "alias": "the name is an alias of another unit (a symlink to its unit file); enable the unit it points to",
    "masked": "the unit is masked (linked to /dev/null); run systemctl unmask first",
    "masked-runtime": "the unit is masked until the next boot (a link to /dev/null under /run); run systemctl unmask --runtime first",
    "bad": "systemd cannot parse the unit file; systemd-analyze verify names the error",
}


def daemon_reload_args():
    """Arguments (after the tool path) that make systemd read the unit files again."""
    return ["daemon-reload"]


def is_enabled_args(name):
    return ["is-enabled", name]


def enable_args(name):
    return ["enable", name]


def reenable_args(name):
    """Disable and enable again: the links follow a changed ``[Install]`` section."""
    return ["reenable", name]


def disable_args(name):
    return ["disable", name]


def parse_is_enabled(rc, stdout, stderr):
    """The unit file state printed by ``systemctl is-enabled``, or None when it printed none.

    A unit systemd does not know is ``not-found`` whichever way the installed systemd says it.
    None means that the command failed for another reason (rc, stdout and stderr tell which).
    """
    lines = [line.strip() for line in (stdout or "").splitlines() if line.strip()]
    if lines:
        return lines[0]
    if rc != 0 and "No such file or directory" in (stderr or ""):
        return NOT_FOUND
    return None


def enabled_at_boot(state):
    """Whether the state means that the unit's persistent [Install] links exist."""
    return state == ENABLED
