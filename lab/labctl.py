# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Start, stop and inspect the simulated lab (the host side).

    python lab/labctl.py image         build the node image if needed; print its tag
                                       (--suite trixie: the Debian 13 image; default bookworm,
                                       or FABRIC_LAB_SUITE)
    python lab/labctl.py up            build the node image if needed, start ibsim and the nodes
    python lab/labctl.py down          stop and remove the nodes and ibsim (node state is kept)
    python lab/labctl.py reset         down, and forget the nodes' state (next up starts fresh)
    python lab/labctl.py status        one line per node
    python lab/labctl.py calls NODE    the node's firmware-tool call counts (from its call log)
    python lab/labctl.py reboot NODE   warm reboot (the container restarts; cards that need a cold
                                       boot keep their old configuration)
    python lab/labctl.py power-cycle NODE   cold power cycle: firmware Next Boot becomes Current
    python lab/labctl.py inventory [--fleet N [--firmware-from DIR] [--images NAME]]
                                       write an instance's own inventory (see below); print its path
    python lab/labctl.py slurm up      Debian's Slurm on the running nodes: the same munge key and
                                       slurm.conf on every node, slurmctld on the inventory's
                                       ``slurm_control`` host (the first node without one) with the
                                       only topology.conf, slurmd on every node (configless: it takes
                                       the files from slurmctld); waits until ``sinfo`` shows every
                                       node idle
    python lab/labctl.py slurm status  ``sinfo`` and ``scontrol show topology`` on the controller
    python lab/labctl.py slurm up      Debian's Slurm on the running nodes: the same munge key and
                                       slurm.conf on every node, slurmctld on the inventory's
                                       ``slurm_control`` host (the first node without one) with the
                                       only topology.conf, slurmd on every node (configless: it takes
                                       the files from slurmctld); waits until ``sinfo`` shows every
                                       node idle
    python lab/labctl.py slurm status  ``sinfo`` and ``scontrol show topology`` on the controller

The nodes are those of ``inventories/lab/hosts.yml``; each names its state description in
``lab/nodes/`` with ``fabric_lab_state``.  Everything the lab keeps lives in ``.cache/lab/``.

Instances: ``FABRIC_LAB_INSTANCE=<name>`` gives a second lab beside the demo lab, with its own
containers (``fabric-<name>-``), network, SSH ports, ibsim port and ``.cache/lab-<name>/``; unset
(or ``lab``) is the demo lab with the names above.  ``FABRIC_LAB_INVENTORY`` (a directory or its
``hosts.yml``) names the inventory labctl reads, ``inventories/lab`` by default.  ``inventory``
writes ``.cache/lab-<name>/inventory/``: the demo lab's nodes on the instance's ports, or with
``--fleet N`` N nodes ``fleet001``.. that cycle the demo nodes' descriptions and host_vars without
switch ports (no ibsim, so no port sync: ibsim serves at most 10 clients).  ``--firmware-from``
takes their firmware values from converged nodes (``<DIR>/<node>/state/state.json``), so that a
fleet converges without reboots; ``--images NAME`` starts each from the image ``NAME:<demo node>``
(a ``podman commit`` of a converged node: its packages and files), so that a fleet converges
without installing anything.  ``scripts/bench.py`` uses both.
"""

import argparse
import hashlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import zlib

import yaml

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "lab"))

from fabricsim import fabric  # noqa: E402  pylint: disable=wrong-import-position
from fabricsim import state as sim_state  # noqa: E402  pylint: disable=wrong-import-position

DEMO_INVENTORY = os.path.join(REPO, "inventories", "lab")
NODES_DIR = os.path.join(REPO, "lab", "nodes")
BUILD_SCRIPT = os.path.join(REPO, "lab", "image", "build.sh")
SUITE = os.environ.get("FABRIC_LAB_SUITE", "bookworm")


SSH_PORTS_START = 10001
SLOTS = 70  # 10001 + 70 * 300 = 31001 ports at most: below 32768


def instance_settings(name):
    """Names, ports and cache of a lab instance; the demo lab (``lab``) keeps its historical ones."""
    if name in ("", "lab"):
        return {"name": "lab", "network": "fabric-lab", "prefix": "fabric-lab-", "ibsim_port": 7070,
                "ssh_base": 2201, "cache": os.path.join(REPO, ".cache", "lab")}
    if not name.isalnum() or not name.islower():
        raise SystemExit("lab: FABRIC_LAB_INSTANCE must be lower-case letters and digits, not %r" % name)
    # Derived from the name so that two instances do not collide without any registry of them. The SSH
    # ports (300 per instance) stay below Linux's ephemeral range (32768-60999 by default): there,
    # outgoing connections take their local ports, and one of Ansible's SSH connections to a fleet's
    # first nodes can hold the port a later node is to publish (the likely reason why a fleet of 200
    # once failed to start its 52nd node, with ports from 47101 up).
    slot = zlib.crc32(name.encode()) % SLOTS
    return {"name": name, "network": "fabric-" + name, "prefix": "fabric-%s-" % name,
            "ibsim_port": int(os.environ.get("FABRIC_LAB_IBSIM_PORT", 7100 + slot)),
            "ssh_base": SSH_PORTS_START + slot * 300, "cache": os.path.join(REPO, ".cache", "lab-" + name)}


INSTANCE = instance_settings(os.environ.get("FABRIC_LAB_INSTANCE", ""))
DEFAULT_INSTANCE = INSTANCE["name"] == "lab"
INVENTORY = os.environ.get("FABRIC_LAB_INVENTORY") or DEMO_INVENTORY
if os.path.isdir(INVENTORY):
    INVENTORY = os.path.join(INVENTORY, "hosts.yml")
CACHE = INSTANCE["cache"]
NETWORK = INSTANCE["network"]
PREFIX = INSTANCE["prefix"]
IBSIM_PORT = INSTANCE["ibsim_port"]


def log(message):
    print("lab: " + message, flush=True)


def run(argv, check=True, capture=True):
    result = subprocess.run(argv, check=False, text=True,
                            stdout=subprocess.PIPE if capture else None,
                            stderr=subprocess.STDOUT if capture else None)
    if check and result.returncode != 0:
        raise SystemExit("lab: %s failed (rc %d):\n%s" % (" ".join(argv), result.returncode, result.stdout or ""))
    return result


def nodes(inventory=None):
    """The lab's nodes from the inventory: name -> {port, state file}."""
    with open(inventory or INVENTORY, encoding="utf-8") as handle:
        inventory = yaml.safe_load(handle)
    found = {}

    def walk(group):
        for name, hostvars in (group.get("hosts") or {}).items():
            hostvars = hostvars or {}
            if "fabric_lab_state" in hostvars:
                found[name] = {"port": int(hostvars["ansible_port"]), "state": hostvars["fabric_lab_state"]}
                if "fabric_lab_image" in hostvars:  # an instance's node started from another image (a fleet clone)
                    found[name]["image"] = hostvars["fabric_lab_image"]
        for child in (group.get("children") or {}).values():
            walk(child or {})

    walk(inventory["all"])
    return found


# --- image -------------------------------------------------------------------------------
def image_tag():
    with open(BUILD_SCRIPT, "rb") as handle:
        digest = hashlib.sha256(handle.read() + SUITE.encode()).hexdigest()[:12]
    return "localhost/fabric-lab-node:%s-%s" % (SUITE, digest)


def ensure_image():
    tag = image_tag()
    if run(["podman", "image", "exists", tag], check=False).returncode == 0:
        return tag
    log("building the node image %s (about a minute, once)" % tag)
    started = time.monotonic()
    run(["bash", BUILD_SCRIPT, SUITE, tag], capture=False)
    log("image built in %.0f s" % (time.monotonic() - started))
    return tag


# --- ssh ---------------------------------------------------------------------------------
def ssh_key():
    key = os.path.join(CACHE, "ssh", "id_ed25519")
    if not os.path.exists(key):
        os.makedirs(os.path.dirname(key), exist_ok=True)
        run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "fabric-lab", "-f", key])
    return key


# --- ibsim -------------------------------------------------------------------------------
def ibsim_pidfile():
    return os.path.join(CACHE, "ibsim", "ibsim.pid")


def ibsim_running():
    return _pid_alive(ibsim_pidfile(), "ibsim")


def ensure_ibsim(states):
    directory = os.path.join(CACHE, "ibsim")
    os.makedirs(directory, exist_ok=True)
    try:
        net = fabric.netfile(states)
    except ValueError as exc:
        raise SystemExit("lab: %s" % exc) from None
    path = os.path.join(directory, "net")
    old = open(path, encoding="utf-8").read() if os.path.exists(path) else None
    if ibsim_running() and old == net:
        return False
    _stop(ibsim_pidfile(), "ibsim")
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(net)
    fifo = os.path.join(directory, "console")
    if not os.path.exists(fifo):
        os.mkfifo(fifo)
    # The console reads a FIFO that we hold open, so ibsim never sees EOF on it.
    console = os.open(fifo, os.O_RDWR)
    with open(os.path.join(directory, "ibsim.log"), "w", encoding="utf-8") as out:
        proc = subprocess.Popen(["ibsim", "-r", "-l", str(IBSIM_PORT), "-s", path], stdin=console,
                                stdout=out, stderr=subprocess.STDOUT, cwd=directory, start_new_session=True)
    with open(ibsim_pidfile(), "w", encoding="utf-8") as handle:
        handle.write(str(proc.pid))
    log("ibsim serving the fabric (%d ports) on UDP %d" % (net.count("Hca\t"), IBSIM_PORT))
    time.sleep(0.5)
    return True


def _pid_alive(pidfile, program):
    """The PID in ``pidfile`` if that process is alive and is ``program`` (PIDs get reused)."""
    try:
        with open(pidfile, encoding="utf-8") as handle:
            pid = int(handle.read().strip())
        with open("/proc/%d/cmdline" % pid, "rb") as handle:
            argv0 = handle.read().split(b"\0")[0].decode(errors="replace")
        with open("/proc/%d/stat" % pid, encoding="utf-8") as handle:
            zombie = handle.read().rpartition(")")[2].split()[0] == "Z"
    except (OSError, ValueError):
        return None
    return pid if os.path.basename(argv0) == program and not zombie else None


def _stop(pidfile, program):
    """SIGTERM, wait until it is gone (SIGKILL after 5 s)."""
    pid = _pid_alive(pidfile, program)
    if not pid:
        return
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 5
    while _pid_alive(pidfile, program):
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            deadline += 5
        time.sleep(0.1)


def ensure_switch_sm(restart=False):
    """The switch's own subnet manager: the real OpenSM, attached to the simulated switch.

    Many sites run the SM on a managed switch; the lab does the same so that ports become ACTIVE
    with a LID.  It runs at priority 0, so an OpenSM that the collection deploys on a node (with
    a higher priority) takes MASTER over, as it would on a real fabric.
    """
    directory = os.path.join(CACHE, "ibsim")
    pidfile = os.path.join(directory, "opensm.pid")
    if _pid_alive(pidfile, "opensm") and not restart:
        return
    _stop(pidfile, "opensm")
    env = dict(os.environ, LD_PRELOAD=fabric.UMAD2SIM, IBSIM_SERVER_NAME=gateway(), IBSIM_SERVER_PORT=str(IBSIM_PORT),
               SIM_HOST=fabric.SWITCH, OSM_CACHE_DIR=directory)
    with open(os.path.join(directory, "opensm.out"), "w", encoding="utf-8") as out:
        proc = subprocess.Popen(["opensm", "-p", "0", "-f", os.path.join(directory, "opensm.log")], env=env, cwd=directory,
                                stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    with open(pidfile, "w", encoding="utf-8") as handle:
        handle.write(str(proc.pid))
    time.sleep(1)
    if proc.poll() is not None:
        with open(os.path.join(directory, "opensm.out"), encoding="utf-8") as out:
            raise SystemExit("lab: the switch's OpenSM exited at once:\n" + out.read())
    log("switch subnet manager (OpenSM, priority 0) started")


def stop_ibsim():
    _stop(os.path.join(CACHE, "ibsim", "opensm.pid"), "opensm")
    _stop(ibsim_pidfile(), "ibsim")


# --- nodes -------------------------------------------------------------------------------
def node_dir(name):
    return os.path.join(CACHE, "nodes", name)


def seed_state(name, spec):
    """The node's state lives on the host so that it outlives the container (a reboot)."""
    directory = node_dir(name)
    os.makedirs(os.path.join(directory, "state"), exist_ok=True)
    os.makedirs(os.path.join(directory, "log"), exist_ok=True)
    target = os.path.join(directory, "state", "state.json")
    if not os.path.exists(target):
        with open(os.path.join(NODES_DIR, spec["state"]), encoding="utf-8") as handle:
            description = json.load(handle)
        description["hostname"] = name
        with open(target, "w", encoding="utf-8") as handle:
            json.dump(description, handle, indent=2)
    return target


def gateway():
    out = run(["podman", "network", "inspect", NETWORK]).stdout
    return json.loads(out)[0]["subnets"][0]["gateway"]


def container_args(name, spec, image, key):
    directory = node_dir(name)
    return [
        "podman", "run", "-d", "--name", PREFIX + name, "--hostname", name,
        "--label", "fabric-lab=%s" % image, *instance_label(), "--runtime", "runc", "--systemd", "always",
        "--network", NETWORK, "--publish", "127.0.0.1:%d:22" % spec["port"],
        "--ulimit", "nofile=1024:20000", "--ulimit", "nproc=4096:8192",
        # The simulated sysfs is a FUSE filesystem mounted inside the node; nothing else is
        # granted (the container is not privileged, so the host's /sys stays out of sight).
        "--device", "/dev/fuse", "--cap-add", "SYS_ADMIN",
        "--volume", "%s:/usr/lib/fabricsim/fabricsim:ro" % os.path.join(REPO, "lab", "fabricsim"),
        "--volume", "%s:/var/lib/fabricsim:rw" % os.path.join(directory, "state"),
        "--volume", "%s:/var/log/fabricsim:rw" % os.path.join(directory, "log"),
        "--volume", "%s.pub:/root/.ssh/authorized_keys:ro" % key,
        image,
    ]


def instance_label():
    """Containers of another instance carry its name, so that ``down`` finds all of them."""
    return [] if DEFAULT_INSTANCE else ["--label", "fabric-lab-instance=%s" % INSTANCE["name"]]


def container_state(name):
    result = run(["podman", "container", "inspect", PREFIX + name], check=False)
    if result.returncode != 0:
        return None
    info = json.loads(result.stdout)[0]
    return {"running": info["State"]["Running"], "image": info["Config"]["Labels"].get("fabric-lab")}


def wait_ready(name, port, timeout=90):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=2) as sock:
                sock.settimeout(3)
                if sock.recv(4).startswith(b"SSH-"):
                    active = run(["podman", "exec", PREFIX + name, "systemctl", "is-active", "fabricsim"], check=False)
                    if active.stdout.strip() == "active":
                        return
        except OSError:
            pass
        time.sleep(0.5)
    journal = run(["podman", "exec", PREFIX + name, "journalctl", "-u", "fabricsim", "--no-pager", "-n", "30"], check=False)
    raise SystemExit("lab: %s did not become ready in %d s\n%s" % (name, timeout, journal.stdout))


def wait_fabric_active(lab, timeout=60):
    """Wait until the subnet manager has swept: every cabled InfiniBand port is ACTIVE."""
    deadline = time.monotonic() + timeout
    while True:
        waiting = []
        for name in lab:
            state = sim_state.load(os.path.join(node_dir(name), "state", "state.json"))
            cabled = state.get("fabric", {}).get("ports", {})
            for func in sim_state.functions(state, include_vfs=False):
                if func.bdf in cabled and func.ib and state.get("fabric_view", {}).get(func.bdf, {}).get("state") != "ACTIVE":
                    waiting.append("%s %s" % (name, func.bdf))
        if not waiting:
            return
        if time.monotonic() > deadline:
            raise SystemExit("lab: InfiniBand ports not ACTIVE after %d s: %s (see .cache/lab/ibsim/opensm.log)" % (timeout, ", ".join(waiting)))
        time.sleep(0.5)


def up(switch_sm=True):
    started = time.monotonic()
    image = ensure_image()
    key = ssh_key()
    if run(["podman", "network", "exists", NETWORK], check=False).returncode != 0:
        run(["podman", "network", "create", NETWORK])
    lab = nodes()
    address = "%s:%d" % (gateway(), IBSIM_PORT)
    states = {}
    for name, spec in lab.items():
        path = seed_state(name, spec)
        wiring = sim_state.load(path).get("fabric", {})
        if wiring.get("ports") and wiring.get("ibsim") != address:
            sim_state.mutate(path, lambda st: st.setdefault("fabric", {}).update(ibsim=address))
        states[name] = sim_state.load(path)
    # A fleet without switch ports has no fabric to serve (the demo lab always has one).
    wired = bool(fabric.cabled_ports(states))
    restarted = ensure_ibsim(states) if wired else False
    for name, spec in lab.items():
        current = container_state(name)
        if current and current["image"] != spec.get("image", image):
            run(["podman", "rm", "-f", PREFIX + name])
            current = None
        if current is None:
            run(container_args(name, spec, spec.get("image", image), key))
        elif not current["running"]:
            run(["podman", "start", PREFIX + name])
    for name, spec in lab.items():
        wait_ready(name, spec["port"])
    if switch_sm and wired:
        # After the nodes: the bridge, and so the address the SM reaches ibsim at, exists only
        # while a container is on the network.
        ensure_switch_sm(restart=restarted)
        wait_fabric_active(lab)
    log("%d nodes up in %.1f s: %s" % (len(lab), time.monotonic() - started, ", ".join(sorted(lab))))


def down(forget=False):
    if not DEFAULT_INSTANCE:
        # All of this instance's nodes in one podman call (a fleet has hundreds), also those an
        # earlier, larger inventory of it started; then its network.
        left = run(["podman", "ps", "-aq", "--filter", "label=fabric-lab-instance=%s" % INSTANCE["name"]], check=False).stdout.split()
        if left:
            run(["podman", "rm", "-f", "-t", "5", *left], check=False)
    # An instance's generated inventory may not exist yet (a first `reset`): its containers carry its label.
    for name in (nodes() if os.path.exists(INVENTORY) else {}):
        run(["podman", "rm", "-f", "-t", "5", PREFIX + name], check=False)
    if not DEFAULT_INSTANCE:
        run(["podman", "network", "rm", "-f", NETWORK], check=False)
    stop_ibsim()
    if forget:
        shutil.rmtree(os.path.join(CACHE, "nodes"), ignore_errors=True)
    log("down" + (" (node state forgotten)" if forget else ""))


def status():
    for name, spec in sorted(nodes().items()):
        current = container_state(name)
        print("%-10s %-8s ssh 127.0.0.1:%d  state %s" % (
            name, "running" if current and current["running"] else "stopped", spec["port"],
            os.path.join(node_dir(name), "state", "state.json")))
    print("ibsim      %s" % ("running" if ibsim_running() else "stopped"))


def calls(name):
    counts = {}
    path = os.path.join(node_dir(name), "log", "calls.jsonl")
    if os.path.exists(path):
        with open(path, encoding="utf-8") as handle:
            for line in handle:
                entry = json.loads(line)
                key = "%s %s" % (entry["tool"], entry.get("kind", ""))
                counts[key] = counts.get(key, 0) + 1
    print(json.dumps(counts, indent=2, sort_keys=True))


def reboot(name):
    """A warm reboot: the node's container restarts and its adapters power on again."""
    run(["podman", "restart", "-t", "10", PREFIX + name])
    wait_ready(name, nodes()[name]["port"])
    log("%s rebooted" % name)


def power_cycle(name):
    """A cold power cycle: the firmware loads Next Boot even where a warm reboot does not."""
    path = os.path.join(node_dir(name), "state", "state.json")
    run(["podman", "stop", "-t", "10", PREFIX + name])
    sim_state.mutate(path, sim_state.power_cycle)
    run(["podman", "start", PREFIX + name])
    wait_ready(name, nodes()[name]["port"])
    log("%s power-cycled" % name)


# --- slurm -------------------------------------------------------------------------------
# A user's Slurm exists before the collection runs: the lab writes it here, never through the collection.
SLURM_CLUSTER = "fabriclab"


def slurm_controller(lab, inventory=None):
    """The inventory's first ``slurm_control`` host that is a lab node, else the first node."""
    with open(inventory or INVENTORY, encoding="utf-8") as handle:
        tree = yaml.safe_load(handle)
    found = []

    def walk(group, name):
        if name == "slurm_control":
            found.extend(h for h in (group.get("hosts") or {}) if h in lab)
        for child, sub in (group.get("children") or {}).items():
            walk(sub or {}, child)

    walk(tree["all"], "all")
    return found[0] if found else sorted(lab)[0]


def slurm_conf(lab, controller):
    """slurm.conf of the lab: the nodes reach each other by their container names (podman's DNS)."""
    lines = [
        "# Written by lab/labctl.py slurm up: the lab's Slurm, as a site has it before this collection runs.",
        "ClusterName=%s" % SLURM_CLUSTER,
        "SlurmctldHost=%s(%s)" % (controller, PREFIX + controller),
        "SlurmUser=slurm",
        "AuthType=auth/munge",
        "StateSaveLocation=/var/lib/slurm/slurmctld",
        "SlurmdSpoolDir=/var/lib/slurm/slurmd",
        "SlurmctldPidFile=/run/slurmctld.pid",
        "SlurmdPidFile=/run/slurmd.pid",
        "ProctrackType=proctrack/linuxproc",
        "TaskPlugin=task/none",
        "SelectType=select/cons_tres",
        "SchedulerType=sched/backfill",
        "TopologyPlugin=topology/tree",
        # slurmd reads topology.conf too: configless, each slurmd takes slurm.conf and topology.conf from
        # slurmctld (and again at `scontrol reconfigure`), so the files live on the controller only
        "SlurmctldParameters=enable_configless",
        "ReturnToService=2",
        "SlurmctldLogFile=/var/log/slurm/slurmctld.log",
        "SlurmdLogFile=/var/log/slurm/slurmd.log",
    ]
    lines += ["NodeName=%s NodeAddr=%s CPUs=1 State=UNKNOWN" % (name, PREFIX + name) for name in sorted(lab)]
    lines.append("PartitionName=lab Nodes=ALL Default=YES MaxTime=INFINITE State=UP")
    return "\n".join(lines) + "\n"


def _node_exec(name, argv, data=None, check=True):
    result = subprocess.run(["podman", "exec", "-i", PREFIX + name, *argv], input=data, check=False,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if check and result.returncode != 0:
        raise SystemExit("lab: %s on %s failed (rc %d):\n%s" % (" ".join(argv), name, result.returncode,
                                                               result.stdout.decode(errors="replace")))
    return result.stdout.decode(errors="replace")


def _put(name, path, data, mode, owner):
    """Write ``data`` (bytes) to ``path`` on the node; True if it changed."""
    old = subprocess.run(["podman", "exec", PREFIX + name, "cat", path], check=False, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL).stdout
    if old == data:
        return False
    _node_exec(name, ["sh", "-c", 'umask 077; cat > "$1.new" && chown "$2" "$1.new" && chmod "$3" "$1.new" && mv "$1.new" "$1"',
                      "put", path, owner, mode], data=data)
    return True


def slurm_up(timeout=90):
    started = time.monotonic()
    lab = nodes()
    controller = slurm_controller(lab)
    directory = os.path.join(CACHE, "slurm")
    os.makedirs(directory, exist_ok=True)
    keyfile = os.path.join(directory, "munge.key")
    if not os.path.exists(keyfile):
        with open(keyfile, "wb") as handle:
            handle.write(os.urandom(1024))
    with open(keyfile, "rb") as handle:
        key = handle.read()
    conf = slurm_conf(lab, controller).encode()
    # The topology the site had before: every node under one switch. Written once; the collection's
    # topology role owns the file from then on.
    initial = ("# Written by lab/labctl.py slurm up (the site's own file, before fabric.infiniband.topology)\n"
               "SwitchName=lab-unknown Nodes=%s\n" % ",".join(sorted(lab))).encode()
    for name in sorted(lab):
        if _put(name, "/etc/munge/munge.key", key, "0400", "munge:munge"):
            _node_exec(name, ["systemctl", "restart", "munge"])
        _node_exec(name, ["systemctl", "enable", "--now", "munge"])
        conf_changed = _put(name, "/etc/slurm/slurm.conf", conf, "0644", "root:root")
        if name == controller:
            if subprocess.run(["podman", "exec", PREFIX + name, "test", "-e", "/etc/slurm/topology.conf"], check=False).returncode:
                conf_changed = _put(name, "/etc/slurm/topology.conf", initial, "0644", "root:root") or conf_changed
            _node_exec(name, ["systemctl", "enable", "slurmctld"])
            _node_exec(name, ["systemctl", "restart" if conf_changed else "start", "slurmctld"])
    options = ('# Written by lab/labctl.py slurm up: configless, the configuration comes from slurmctld\n'
               'SLURMD_OPTIONS="--conf-server %s"\n' % (PREFIX + controller)).encode()
    for name in sorted(lab):
        _put(name, "/etc/default/slurmd", options, "0644", "root:root")
        _node_exec(name, ["systemctl", "enable", "slurmd"])
        _node_exec(name, ["systemctl", "restart", "slurmd"])
    deadline = time.monotonic() + timeout
    while True:
        out = _node_exec(controller, ["sinfo", "-h", "-N", "-o", "%N %t"], check=False)
        states = dict(line.split() for line in out.splitlines() if len(line.split()) == 2)
        if all(states.get(name) == "idle" for name in lab):
            break
        if time.monotonic() > deadline:
            raise SystemExit("lab: Slurm nodes not idle after %d s:\n%s" % (timeout, out))
        time.sleep(1)
    log("Slurm up in %.1f s: slurmctld on %s, slurmd on %s idle" % (time.monotonic() - started, controller, ", ".join(sorted(lab))))


def slurm_status():
    controller = slurm_controller(nodes())
    print(_node_exec(controller, ["sinfo"], check=False) + _node_exec(controller, ["scontrol", "show", "topology"], check=False),
          end="")


# --- an instance's inventory --------------------------------------------------------------
def _instance_group_vars():
    """The demo inventory's group_vars with its paths into .cache/lab/ turned into this instance's cache."""
    with open(os.path.join(DEMO_INVENTORY, "group_vars", "all.yml"), encoding="utf-8") as handle:
        text = handle.read()
    # "{{ inventory_dir }}/../../.cache/lab/..." and "playbook_dir ~ '/../.cache/lab/..." alike.
    return re.sub(r"(\{\{ (?:inventory|playbook)_dir \}\}|(?:inventory|playbook)_dir ~ ')(?:/\.\.)+/\.cache/lab/",
                  lambda m: ("'" if m.group(1).endswith("'") else "") + CACHE + "/", text)


def _fleet_description(source, spec, firmware_from):
    """A fleet node's description: the demo node's, without switch ports, firmware (settings and version) as converged
    if given."""
    with open(os.path.join(NODES_DIR, spec["state"]), encoding="utf-8") as handle:
        description = json.load(handle)
    description["fabric"] = {k: v for k, v in description.get("fabric", {}).items() if k not in ("ports", "ibsim")}
    converged = os.path.join(firmware_from or "", source, "state", "state.json")
    if firmware_from and os.path.exists(converged):
        with open(converged, encoding="utf-8") as handle:
            applied = {a["pci_address"]: a for a in json.load(handle).get("adapters", [])}
        for adapter in description.get("adapters", []):
            done = applied.get(adapter["pci_address"], {})
            adapter["params"] = {k: {"current": v["next"], "next": v["next"]} for k, v in done.get("params", {}).items()}
            # the firmware the converge burnt, as its reboot activated it (a burnt image still on the flash too)
            for key in ("firmware_version", "flash"):
                if key in done:
                    adapter[key] = done[key]
    return description


def write_inventory(fleet=0, firmware_from=None, images=None):
    """This instance's inventory under its cache: the demo nodes, or ``fleet`` nodes cycling them."""
    if DEFAULT_INSTANCE:
        raise SystemExit("lab: the demo lab reads inventories/lab; set FABRIC_LAB_INSTANCE for an inventory of its own")
    with open(os.path.join(DEMO_INVENTORY, "hosts.yml"), encoding="utf-8") as handle:
        tree = yaml.safe_load(handle)
    demo = nodes(os.path.join(DEMO_INVENTORY, "hosts.yml"))
    target = os.path.join(CACHE, "inventory")
    # The fleet's node descriptions sit beside the inventory, not in it: Ansible would try every file of an
    # inventory directory as an inventory source (and warn about each).
    states = os.path.join(CACHE, "fleet-states")
    for path in (target, states):
        shutil.rmtree(path, ignore_errors=True)
    for sub in ("group_vars", "host_vars"):
        os.makedirs(os.path.join(target, sub))
    os.makedirs(states)
    sources = sorted(demo)
    copies = {}  # demo node -> [(new name, host vars)]
    if fleet:
        for index in range(fleet):
            source = sources[index % len(sources)]
            name = "fleet%03d" % (index + 1)
            state_file = os.path.join(states, source + ".json")
            if not os.path.exists(state_file):
                with open(state_file, "w", encoding="utf-8") as handle:
                    json.dump(_fleet_description(source, demo[source], firmware_from), handle, indent=2)
            hostvars = {"ansible_port": INSTANCE["ssh_base"] + index, "fabric_lab_state": state_file}
            if images:
                hostvars["fabric_lab_image"] = "%s:%s" % (images, source)
            copies.setdefault(source, []).append((name, hostvars))
    else:
        for index, source in enumerate(sources):
            copies[source] = [(source, {"ansible_port": INSTANCE["ssh_base"] + index, "fabric_lab_state": demo[source]["state"]})]

    def rebuild(group):
        if "hosts" in group:
            hosts = {}
            for name, hostvars in (group["hosts"] or {}).items():
                # A demo node becomes its copies (none when the fleet is smaller than the demo lab).
                hosts.update(dict(copies.get(name, [])) if name in demo else {name: hostvars})
            group["hosts"] = dict(sorted(hosts.items()))
        for child in (group.get("children") or {}).values():
            rebuild(child or {})

    rebuild(tree["all"])
    with open(os.path.join(target, "hosts.yml"), "w", encoding="utf-8") as handle:
        handle.write("---\n# Written by lab/labctl.py inventory for the lab instance %r; do not edit.\n" % INSTANCE["name"])
        yaml.safe_dump(tree, handle, sort_keys=False)
    with open(os.path.join(target, "group_vars", "all.yml"), "w", encoding="utf-8") as handle:
        handle.write(_instance_group_vars())
    for source, made in copies.items():
        host_vars = os.path.join(DEMO_INVENTORY, "host_vars", source + ".yml")
        if os.path.exists(host_vars):
            for name, _ in made:
                shutil.copyfile(host_vars, os.path.join(target, "host_vars", name + ".yml"))
    return target


def main(argv=None):
    parser = argparse.ArgumentParser(prog="labctl", description=__doc__.split("\n", 1)[0])
    parser.add_argument("action", choices=("image", "up", "down", "reset", "status", "calls", "reboot", "power-cycle", "netfile", "inventory",
                                                     "slurm"))
    parser.add_argument("node", nargs="?")
    parser.add_argument("--no-switch-sm", action="store_true", help="up: no subnet manager on the switch (ports stay INIT)")
    parser.add_argument("--suite", choices=("bookworm", "trixie"), help="image: the Debian suite of the node image")
    parser.add_argument("--fleet", type=int, default=0, help="inventory: N fleet nodes instead of the demo nodes")
    parser.add_argument("--firmware-from", help="inventory --fleet: nodes directory of a converged instance")
    parser.add_argument("--images", help="inventory --fleet: start each node from the image <IMAGES>:<demo node> (podman commit of a converged node)")
    args = parser.parse_args(argv)
    if args.suite:
        global SUITE  # noqa: PLW0603  pylint: disable=global-statement
        SUITE = args.suite
    if args.action == "image":
        print(ensure_image())
    elif args.action == "up":
        up(switch_sm=not args.no_switch_sm)
    elif args.action == "down":
        down()
    elif args.action == "reset":
        down(forget=True)
    elif args.action == "status":
        status()
    elif args.action == "inventory":
        print(write_inventory(args.fleet, args.firmware_from, args.images))
    elif args.action == "netfile":
        print(fabric.netfile({name: sim_state.load(seed_state(name, spec)) for name, spec in nodes().items()}))
    elif args.action == "slurm":
        if args.node not in ("up", "status"):
            parser.error("slurm needs up or status")
        if args.node == "up":
            slurm_up()
        else:
            slurm_status()
    elif args.action == "slurm":
        if args.node not in ("up", "status"):
            parser.error("slurm needs up or status")
        if args.node == "up":
            slurm_up()
        else:
            slurm_status()
    elif not args.node:
        parser.error("%s needs a node name" % args.action)
    elif args.action == "calls":
        calls(args.node)
    elif args.action == "reboot":
        reboot(args.node)
    else:
        power_cycle(args.node)
    return 0


if __name__ == "__main__":
    sys.exit(main())
