# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Parser of ``mlxfwmanager --query`` (NVIDIA MFT; ``mstfwmanager`` in mstflint, and ``mlxup``, print the
same layout: mstflint ``mlxfwupdate/mlxfwmanager.cpp`` ``printDeviceInfoQuery``).

One block per device, ``Device #N:`` then ``  Key:  value`` lines and a ``Versions:`` table of
``Current``/``Available`` per component (``FW``, ``PXE``, ``UEFI``). Unlike ``flint q`` it shows one
firmware version per card, the one on the flash, and no running version: a pending image cannot be
told from it, so the modules query each card with flint/mstflint (``flint.py``).
"""

from __future__ import annotations

import re

from ansible_collections.fabric.infiniband.plugins.module_utils import pci


_DEVICE_RE = re.compile(r"^Device #([0-9]+)\s*:?\s*$")
_KEY_RE = re.compile(r"^([A-Z][A-Za-z0-9 ]*?)\s*:\s*(.*)$")
_KEYS = {"device type": "device_type", "part number": "part_number", "description": "description", "psid": "psid",
         "pci device name": "pci_device_name", "base guid": "base_guid", "base mac": "base_mac", "status": "status"}


def _clean(value):
    value = (value or "").strip()
    return None if value in ("", "N/A") else value


def parse_query(stdout, stderr=""):
    """``{devices: [{device_type, part_number, description, psid, pci_device_name, pci_address,
    versions: {FW: {current, available}}, flash_version, available_version, status}], errors}``."""
    devices, errors = [], []
    dev = None
    in_versions = False
    for raw in (stdout or "").replace("\r\n", "\n").split("\n") + (stderr or "").splitlines():
        line = raw.expandtabs(8).rstrip()
        text = line.strip()
        if not text or set(text) == {"-"}:
            continue
        if text.startswith("-E-"):
            errors.append(text[3:].strip())
            continue
        match = _DEVICE_RE.match(text)
        if match:
            dev = {"index": int(match.group(1)), "versions": {}}
            dev.update((key, None) for key in _KEYS.values())
            devices.append(dev)
            in_versions = False
            continue
        if dev is None:
            continue
        match = _KEY_RE.match(text)
        if match and match.group(1).lower() == "versions":
            in_versions = True
            continue
        if match and match.group(1).lower() in _KEYS:
            in_versions = False
            dev[_KEYS[match.group(1).lower()]] = _clean(match.group(2))
            continue
        if in_versions:
            parts = text.split()
            if len(parts) >= 2:
                dev["versions"][parts[0]] = {"current": _clean(parts[1]),
                                             "available": _clean(parts[2]) if len(parts) > 2 else None}
    for dev in devices:
        fw = dev["versions"].get("FW", {})
        dev["flash_version"] = fw.get("current")
        dev["available_version"] = fw.get("available")
        dev["pci_address"] = pci.normalize(dev["pci_device_name"]) if dev["pci_device_name"] else None
    return {"devices": devices, "errors": errors}
