# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The simulated lab of `make demo`, seen from the controller: run playbooks, read what the simulator recorded.

Everything here reads the host side of the lab (.cache/lab/nodes/<node>/), never the nodes through
Ansible, so a test can prove what a playbook did or did not do.
"""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
# The demo lab, or the lab instance FABRIC_LAB_INSTANCE (lab/labctl.py: its containers fabric-<name>-*, its cache
# .cache/lab-<name>/ and the inventory `labctl inventory` writes there, or FABRIC_LAB_INVENTORY).
INSTANCE = os.environ.get("FABRIC_LAB_INSTANCE", "") or "lab"
if INSTANCE == "lab":
    INVENTORY = REPO / "inventories" / "lab"
    CACHE = REPO / ".cache" / "lab"
else:
    CACHE = REPO / ".cache" / ("lab-" + INSTANCE)
    INVENTORY = Path(os.environ.get("FABRIC_LAB_INVENTORY") or CACHE / "inventory")
PREFIX = "fabric-%s-" % INSTANCE
NODES = ("node01", "node02", "node03")
BIN = Path(sys.executable).parent

RECAP = re.compile(r"^(?P<host>\S+)\s*:\s*ok=(?P<ok>\d+)\s+changed=(?P<changed>\d+)\s+unreachable=(?P<unreachable>\d+)\s+failed=(?P<failed>\d+)",
                   re.MULTILINE)


def env(**extra):
    """The environment `make demo` gives Ansible: .collections and the venv's tools, no colour."""
    result = dict(os.environ)
    result.update(
        ANSIBLE_COLLECTIONS_PATH=str(REPO / ".collections"),
        PATH="%s:%s" % (BIN, os.environ.get("PATH", "")),
        ANSIBLE_NOCOLOR="1",
        ANSIBLE_FORCE_COLOR="0",
        ANSIBLE_RETRY_FILES_ENABLED="0",
    )
    result.update(extra)
    return result


def run(argv, timeout=1800, environment=None, echo=True):
    """Run a command from the repository root; its output is echoed so that a failed test shows it."""
    proc = subprocess.run([str(a) for a in argv], cwd=REPO, env=environment or env(), stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=timeout, check=False)
    sys.stdout.write("$ %s\n%s\n" % (" ".join(str(a) for a in argv), proc.stdout if echo else "(%d lines)" % len(proc.stdout.splitlines())))
    return proc


def labctl(*args):
    proc = run([sys.executable, REPO / "lab" / "labctl.py", *args])
    assert proc.returncode == 0, "labctl %s failed:\n%s" % (" ".join(args), proc.stdout[-3000:])
    return proc


def playbook(name, *args, inventories=(INVENTORY,)):
    argv = [BIN / "ansible-playbook"]
    for inventory in inventories:
        argv += ["-i", inventory]
    return run(argv + [REPO / "playbooks" / name, *args])


def recap(output):
    """{host: {ok, changed, unreachable, failed}} from the PLAY RECAP of ansible-playbook's output."""
    return {m.group("host"): {k: int(m.group(k)) for k in ("ok", "changed", "unreachable", "failed")}
            for m in RECAP.finditer(output)}


def state(node):
    with open(CACHE / "nodes" / node / "state" / "state.json", encoding="utf-8") as handle:
        return json.load(handle)


def durable_state(node):
    """The node's simulated hardware without what the fabric sync rewrites every 2 s."""
    return {k: v for k, v in state(node).items() if k not in ("fabric_view",)}


def calls(node):
    path = CACHE / "nodes" / node / "log" / "calls.jsonl"
    if not path.exists():
        return []
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def firmware_writes(node):
    return [c for c in calls(node) if c.get("kind") in ("write", "reset")]


def adapters(node, with_link_type=False):
    """The PCI addresses of the node's adapters (its simulator state); with_link_type: not the Ethernet-only
    ones (ConnectX-4 Lx, -6 Lx, -6 Dx), whose firmware has no link type and which link_type does not query."""
    return [a["pci_address"] for a in state(node).get("adapters", [])
            if not (with_link_type and str(a.get("model", "")).startswith(("ConnectX-4 Lx", "ConnectX-6 Lx", "ConnectX-6 Dx")))]


def boot_count(node):
    return state(node)["runtime"]["boot_count"]


def files(node, *roots):
    """Path, size and modification time of every file under roots inside the node's container."""
    proc = run(["podman", "exec", PREFIX + node, "find", *roots, "-xdev", "-type", "f", "-printf", r"%p %s %T@\n"], echo=False)
    assert proc.returncode == 0, proc.stdout
    return sorted(proc.stdout.splitlines())


def sysfs(node, path):
    """One sysfs attribute as the node shows it."""
    proc = run(["podman", "exec", PREFIX + node, "cat", path], echo=False)
    assert proc.returncode == 0, "%s: %s" % (node, proc.stdout)
    return proc.stdout.strip()
