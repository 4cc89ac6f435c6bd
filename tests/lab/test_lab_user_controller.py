# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""README.md's "Your controller" path on two lab nodes, with the lowest ansible-core the collection claims.

What a user with a controller of their own does, and nothing of this checkout's tooling:
  - a virtualenv outside the checkout with the lowest ansible-core of tests/ansible-core-releases.txt (2.19.x; the
    main lab test runs the newest, that of .venv), from PyPI; kept in ~/.cache/fabric-infiniband/user-controller/
    per release and Python (outside every checkout; about 80 s to make, reused afterwards);
  - the artifact `ansible-galaxy collection build` makes of the checkout (git's files), installed with that
    virtualenv's `ansible-galaxy collection install --offline` into a temporary collections path, its dependency
    collections first copied there from .collections (Galaxy is not reachable here; ansible-galaxy checks them against
    the artifact's ranges), then `pip install -r <installed collection>/meta/ee-requirements.txt`;
  - a copy of inventories/minimal whose two hosts become node01 and node02 of the lab: the hosts' own lab wiring
    (SSH port, key and user, reboots as container restarts through lab/labctl.py, the verify tools' simulator
    settings, the PF address of each node's card) goes into host_vars of the copy, never into inventories/minimal;
  - `ansible-playbook -i inventory fabric.infiniband.site -e infiniband_allow_reboot=true` from a directory outside the
    checkout, with ANSIBLE_COLLECTIONS_PATH the temporary path alone and no ansible.cfg of the checkout; then again:
    nothing changes and nothing reboots.

node01 (ConnectX-6 VPI, port 1 on Ethernet, SR-IOV off, both ports cabled to the switch) gets both ports on InfiniBand
and SR-IOV in its firmware, and one reboot; node02 (ConnectX-7, SR-IOV on with 16 VFs allowed, and an Ethernet-only
ConnectX-4 Lx) gets its 4 VFs at once, no firmware write, no reboot. node03 stays out: its port 2 has no InfiniBand cable
in the lab, and the minimal inventory, which names no exception, would put it on InfiniBand (verify then fails it).
Both end with 4 VFs and the exclusive RDMA netns mode.
"""

import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

import labhost as lab

NODES = ("node01", "node02")
# The InfiniBand PF of each node's card (lab/nodes/<state>.json): the minimal inventory's group value names one slot.
PFS = {"node01": "0000:3b:00.0", "node02": "0000:c1:00.0"}
# The boot count after the first run (1: the lab's power-on): node01's firmware changes need a reboot, node02's none.
BOOTS = {"node01": 2, "node02": 1}
LOWEST = re.findall(r"^ansible-core==(\S+)$", (lab.REPO / "tests" / "ansible-core-releases.txt").read_text(encoding="utf-8"),
                    re.MULTILINE)[0]
VENVS = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "fabric-infiniband" / "user-controller"


def _base_python():
    """The interpreter .venv was made from (a virtualenv is not made from another one's python)."""
    return getattr(sys, "_base_executable", None) or sys.executable


def user_venv():
    """A virtualenv with ansible-core LOWEST and meta/ee-requirements.txt, made once per release, Python and requirements."""
    requirements = (lab.REPO / "meta" / "ee-requirements.txt").read_bytes()
    version = subprocess.run([_base_python(), "-c", "import sys; print('%d.%d' % sys.version_info[:2])"], stdout=subprocess.PIPE,
                             text=True, check=True).stdout.strip()
    venv = VENVS / ("ansible-core-%s-py%s-%s" % (LOWEST, version, hashlib.sha256(requirements).hexdigest()[:12]))
    VENVS.mkdir(parents=True, exist_ok=True)
    with open(VENVS / ".lock", "w", encoding="utf-8") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another test run making the same one waits for it
        if not (venv / "complete").exists():
            shutil.rmtree(venv, ignore_errors=True)
            made = lab.run([_base_python(), "-m", "venv", venv], environment=_clean_env())
            assert made.returncode == 0, made.stdout
            pip = lab.run([venv / "bin" / "python", "-m", "pip", "install", "-q", "--disable-pip-version-check",
                           "ansible-core==" + LOWEST, "-r", lab.REPO / "meta" / "ee-requirements.txt"], environment=_clean_env())
            assert pip.returncode == 0, pip.stdout[-3000:]
            (venv / "complete").write_text(LOWEST, encoding="utf-8")
    return venv


def _clean_env(venv=None, **extra):
    """The environment of a user's shell: no ANSIBLE_* setting and no virtualenv of this checkout; venv's bin first."""
    environment = {k: v for k, v in os.environ.items()
                   if not k.startswith(("ANSIBLE_", "PYTHON", "VIRTUAL_ENV", "PIP_")) and k != "MOLECULE_EPHEMERAL_DIRECTORY"}
    path = [p for p in environment.get("PATH", "").split(os.pathsep) if p and not p.startswith(str(lab.REPO))]
    if venv is not None:
        path.insert(0, str(venv / "bin"))
        environment["VIRTUAL_ENV"] = str(venv)
    environment.update(PATH=os.pathsep.join(path), ANSIBLE_NOCOLOR="1", ANSIBLE_FORCE_COLOR="0")
    # labctl (the reboots of the lab) finds the lab instance through these.
    if lab.INSTANCE != "lab":
        environment.update(FABRIC_LAB_INSTANCE=lab.INSTANCE, FABRIC_LAB_INVENTORY=str(lab.INVENTORY))
    environment.update(extra)
    return environment


def _run(argv, cwd, environment, timeout=2400):
    """A command of the user's, from their directory; its output is echoed so that a failed test shows it."""
    start = time.monotonic()
    # PWD as a shell sets it (the verify role writes its report relative to it).
    proc = subprocess.run([str(a) for a in argv], cwd=cwd, env=dict(environment, PWD=str(cwd)), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, timeout=timeout, check=False)
    line = "$ %s   (%.0f s, exit %d)" % (" ".join(str(a) for a in argv), time.monotonic() - start, proc.returncode)
    sys.stdout.write("%s\n%s\n" % (line, proc.stdout))
    return proc


def _project_files(target):
    """The checkout's files a fresh clone holds (git's, as the working tree has them), so that the artifact is a clone's."""
    listing = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=lab.REPO,
                             stdout=subprocess.PIPE, check=True).stdout.decode()
    for name in sorted(set(listing.split("\0")) - {""}):
        source, copy = lab.REPO / name, target / name
        if not os.path.lexists(source):
            continue
        copy.parent.mkdir(parents=True, exist_ok=True)
        if source.is_symlink():
            os.symlink(os.readlink(source), copy)
        else:
            shutil.copy2(source, copy)
    return target


def _lab_host_vars(node, ports):
    """What the lab needs of a host beyond the user's inventory: how to reach it, how it reboots, where the verify tools
    find the simulated fabric, and its card's PF address. Absolute paths: nothing of the checkout is the user's."""
    minimal = yaml.safe_load((lab.REPO / "inventories" / "minimal" / "group_vars" / "ib_nodes.yml").read_text(encoding="utf-8"))
    labctl = [str(lab.REPO / "lab" / "labctl.py")]
    state = "(lookup('ansible.builtin.file', '%s/nodes/%s/state/state.json') | from_json)" % (lab.CACHE, node)
    return {
        "ansible_host": "127.0.0.1",
        "ansible_port": ports[node],
        "ansible_user": "root",
        "ansible_ssh_private_key_file": str(lab.CACHE / "ssh" / "id_ed25519"),
        "ansible_ssh_common_args": "-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR",
        "ansible_python_interpreter": "/usr/bin/python3",
        "infiniband_reboot_method": "command",
        "infiniband_reboot_command": ["{{ ansible_playbook_python }}"] + labctl + ["reboot", node],
        "infiniband_power_cycle_command": ["{{ ansible_playbook_python }}"] + labctl + ["power-cycle", node],
        "infiniband_reboot_wait_delay": 0,
        "verify_tool_environment": {
            "LD_PRELOAD": "/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so",
            "SIM_HOST": "{{ '%s-' ~ (%s.fabric.ports | dict2items | sort(attribute='value') | first).key }}" % (node, state),
            "IBSIM_SERVER_NAME": "{{ %s.fabric.ibsim.rsplit(':', 1) | first }}" % state,
            "IBSIM_SERVER_PORT": "{{ %s.fabric.ibsim.rsplit(':', 1) | last }}" % state,
        },
        "sriov_pfs": [dict(pf, pf=PFS[node]) for pf in minimal["sriov_pfs"]],
    }


@pytest.fixture(scope="module")
def controller(fresh_lab, tmp_path_factory):
    """The user's controller: a virtualenv with LOWEST, the artifact installed, an inventory, a working directory."""
    root = tmp_path_factory.mktemp("user-controller")
    assert not str(root).startswith(str(lab.REPO))
    start = time.monotonic()
    venv = user_venv()
    environment = _clean_env(venv)
    work = root / "work"  # the user's directory: no ansible.cfg, not the checkout
    work.mkdir()
    collections = root / "collections"
    environment["ANSIBLE_COLLECTIONS_PATH"] = str(collections)

    built = _run([venv / "bin" / "ansible-galaxy", "collection", "build", "--output-path", root / "build",
                  _project_files(root / "clone")], work, environment)
    assert built.returncode == 0
    (artifact,) = (root / "build").glob("fabric-infiniband-*.tar.gz")
    # The dependencies as Galaxy would give them (copies of .collections'), then the artifact: ansible-galaxy resolves
    # its dependencies against what the path holds, offline.
    with open(lab.REPO / "galaxy.yml", encoding="utf-8") as handle:
        wanted = list(yaml.safe_load(handle)["dependencies"])
    while wanted:
        name = wanted.pop()
        copy = collections / "ansible_collections" / name.replace(".", "/")
        if copy.exists():
            continue
        shutil.copytree(lab.REPO / ".collections" / "ansible_collections" / name.replace(".", "/"), copy, symlinks=True)
        wanted += list(json.loads((copy / "MANIFEST.json").read_text(encoding="utf-8"))["collection_info"].get("dependencies") or {})
    installed = _run([venv / "bin" / "ansible-galaxy", "collection", "install", "--offline", "-p", collections, artifact],
                     work, environment)
    assert installed.returncode == 0
    collection = collections / "ansible_collections" / "fabric" / "infiniband"
    assert not collection.is_symlink() and (collection / "MANIFEST.json").exists()
    pip = _run([venv / "bin" / "pip", "install", "-q", "--disable-pip-version-check", "-r",
                collection / "meta" / "ee-requirements.txt"], work, environment)
    assert pip.returncode == 0

    # Only the installed collection is seen, by the lowest ansible-core, without the checkout's configuration.
    version = _run([venv / "bin" / "ansible-playbook", "--version"], work, environment)
    assert "[core %s]" % LOWEST in version.stdout, version.stdout
    config = re.search(r"config file = (.*)", version.stdout).group(1).strip()
    assert config == "None" or not config.startswith(str(lab.REPO)), config
    listed = json.loads(subprocess.run([str(venv / "bin" / "ansible-galaxy"), "collection", "list", "--format", "json"], cwd=work,
                                       env=environment, stdout=subprocess.PIPE, text=True, check=True).stdout)
    # (ansible-core's own internal collection, ansible._protomatter, lives in its package.)
    assert [p for p in listed if not p.startswith(str(venv))] == [str(collections / "ansible_collections")], listed
    assert "fabric.infiniband" in listed[str(collections / "ansible_collections")]

    # The user's inventory: a copy of inventories/minimal whose two hosts are the lab's node01 and node03.
    inventory = shutil.copytree(lab.REPO / "inventories" / "minimal", work / "inventory")
    hosts = yaml.safe_load((inventory / "hosts.yml").read_text(encoding="utf-8"))
    assert len(hosts["all"]["children"]["ib_nodes"]["hosts"]) == len(NODES)
    hosts["all"]["children"]["ib_nodes"]["hosts"] = {node: None for node in NODES}
    (inventory / "hosts.yml").write_text("---\n" + yaml.safe_dump(hosts, sort_keys=False), encoding="utf-8")
    ports = {name: spec["port"] for name, spec in _lab_nodes().items()}
    (inventory / "host_vars").mkdir()
    for node in NODES:
        (inventory / "host_vars" / ("%s.yml" % node)).write_text(
            "---\n# The lab's wiring for this host (tests/lab/test_lab_user_controller.py).\n"
            + yaml.safe_dump(_lab_host_vars(node, ports), sort_keys=False, width=1000), encoding="utf-8")
    print("user controller ready in %.0f s: ansible-core %s, %s" % (time.monotonic() - start, LOWEST, venv))
    return {"venv": venv, "environment": environment, "work": work, "inventory": inventory}


def _lab_nodes():
    """The lab instance's nodes and their SSH ports (its inventory's hosts.yml)."""
    hosts = yaml.safe_load((lab.INVENTORY / "hosts.yml").read_text(encoding="utf-8"))
    found = {}

    def walk(group):
        for name, values in ((group or {}).get("hosts") or {}).items():
            if values and "ansible_port" in values:
                found[name] = {"port": int(values["ansible_port"])}
        for child in ((group or {}).get("children") or {}).values():
            walk(child)

    walk(hosts["all"])
    return found


def _site(controller):
    return _run([controller["venv"] / "bin" / "ansible-playbook", "-i", "inventory", "fabric.infiniband.site",
                 "-e", "infiniband_allow_reboot=true"], controller["work"], controller["environment"])


def test_site_from_the_artifact_prepares_two_nodes(controller):
    """The first run: every change, one reboot per node where the firmware needs it, the report passes."""
    proc = _site(controller)
    counts = lab.recap(proc.stdout)
    assert proc.returncode == 0, proc.stdout[-4000:]
    assert sorted(counts) == sorted(NODES), counts
    assert all(c["failed"] == 0 and c["unreachable"] == 0 and c["changed"] > 0 for c in counts.values()), counts
    # The roles that ran were the installed collection's, under the temporary path.
    assert str(lab.REPO) not in proc.stdout.replace(str(lab.REPO / "lab" / "labctl.py"), "").replace(str(lab.CACHE), "")
    for node in NODES:
        assert lab.sysfs(node, "/sys/bus/pci/devices/%s/sriov_numvfs" % PFS[node]) == "4", node
        rdma = lab.state(node)["runtime"]["functions"][PFS[node]]["rdma"]
        assert lab.sysfs(node, "/sys/class/infiniband/%s/ports/1/link_layer" % rdma) == "InfiniBand", node
        assert lab.state(node)["runtime"]["netns_mode"] == "exclusive", node
        assert lab.boot_count(node) == BOOTS[node], node
    # node01's second port too: the minimal inventory sets no exception to link_type_default ib.
    rdma = lab.state("node01")["runtime"]["functions"]["0000:3b:00.1"]["rdma"]
    assert lab.sysfs("node01", "/sys/class/infiniband/%s/ports/1/link_layer" % rdma) == "InfiniBand"
    assert "all 2 nodes pass" in proc.stdout
    # The report went to the user's directory (verify_report_dir, relative to where ansible-playbook runs).
    assert (controller["work"] / "fabric-report" / "fabric-report.json").exists()


def test_second_run_changes_nothing(controller):
    boots = {n: lab.boot_count(n) for n in NODES}
    proc = _site(controller)
    assert proc.returncode == 0, proc.stdout[-4000:]
    counts = lab.recap(proc.stdout)
    assert sorted(counts) == sorted(NODES), counts
    assert all(c["changed"] == 0 and c["failed"] == 0 for c in counts.values()), counts
    assert {n: lab.boot_count(n) for n in NODES} == boots
