# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Shared helpers for the simulator tests (run from the repository root: pytest lab/tests)."""

import copy
import json
import os
import sys

import pytest

LAB = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if LAB not in sys.path:
    sys.path.insert(0, LAB)

from fabricsim import state as sim_state  # noqa: E402  pylint: disable=wrong-import-position

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")
NODES = os.path.join(LAB, "nodes")

CX6 = {
    "hostname": "node01",
    "tools": {"firmware": "mstflint", "firmware_version": "4.21.0", "iproute2": "6.1.0", "ofed": False},
    "kernel": {"lockdown": "none", "netns_mode": "shared"},
    "fabric": {"switch": "Switch1", "ports": {"0000:3b:00.0": 1, "0000:3b:00.1": 2}},
    "adapters": [{"model": "ConnectX-6 VPI", "pci_address": "0000:3b:00.0", "node_guid": "0x0c42a10300aa0010"}],
}


def fixture_text(name):
    with open(os.path.join(FIXTURES, name), encoding="utf-8") as handle:
        return handle.read()


def node_file(name):
    with open(os.path.join(NODES, name), encoding="utf-8") as handle:
        return json.load(handle)


def rstrip_lines(text):
    return "\n".join(line.rstrip() for line in text.split("\n"))


@pytest.fixture(autouse=True)
def sim_env(tmp_path, monkeypatch):
    """Every test gets its own root (modprobe.d, /run/netns), state file and call log."""
    root = tmp_path / "root"
    (root / "etc" / "modprobe.d").mkdir(parents=True)
    (root / "run" / "netns").mkdir(parents=True)
    monkeypatch.setenv("FABRICSIM_ROOT", str(root))
    monkeypatch.setenv("FABRICSIM_STATE", str(tmp_path / "state.json"))
    monkeypatch.setenv("FABRICSIM_LOG", str(tmp_path / "calls.jsonl"))
    return tmp_path


@pytest.fixture
def make_state():
    """Normalised state from a description; ``tools``/``params`` overrides merge into the CX-6 default."""

    def _make(desc=None, tools=None, params=None, **adapter):
        d = copy.deepcopy(desc or CX6)
        if tools:
            d["tools"].update(tools)
        if params:
            d["adapters"][0].setdefault("params", {}).update(params)
        d["adapters"][0].update(adapter)
        return sim_state.normalize(d)

    return _make
