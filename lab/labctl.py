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

The nodes are those of ``inventories/lab/hosts.yml``; each names its state description in
``lab/nodes/`` with ``fabric_lab_state``.  Everything the lab keeps lives in ``.cache/lab/``.
"""

import argparse
import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time

import yaml

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "lab"))

from fabricsim import fabric  # noqa: E402  pylint: disable=wrong-import-position
from fabricsim import state as sim_state  # noqa: E402  pylint: disable=wrong-import-position

INVENTORY = os.path.join(REPO, "inventories", "lab", "hosts.yml")
NODES_DIR = os.path.join(REPO, "lab", "nodes")
CACHE = os.path.join(REPO, ".cache", "lab")
BUILD_SCRIPT = os.path.join(REPO, "lab", "image", "build.sh")
SUITE = os.environ.get("FABRIC_LAB_SUITE", "bookworm")
NETWORK = "fabric-lab"
PREFIX = "fabric-lab-"
IBSIM_PORT = 7070


def log(message):
    print("lab: " + message, flush=True)


def run(argv, check=True, capture=True):
    result = subprocess.run(argv, check=False, text=True,
                            stdout=subprocess.PIPE if capture else None,
                            stderr=subprocess.STDOUT if capture else None)
    if check and result.returncode != 0:
        raise SystemExit("lab: %s failed (rc %d):\n%s" % (" ".join(argv), result.returncode, result.stdout or ""))
    return result


def nodes():
    """The lab's nodes from the inventory: name -> {port, state file}."""
    with open(INVENTORY, encoding="utf-8") as handle:
        inventory = yaml.safe_load(handle)
    found = {}

    def walk(group):
        for name, hostvars in (group.get("hosts") or {}).items():
            hostvars = hostvars or {}
            if "fabric_lab_state" in hostvars:
                found[name] = {"port": int(hostvars["ansible_port"]), "state": hostvars["fabric_lab_state"]}
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
        "--label", "fabric-lab=%s" % image, "--runtime", "runc", "--systemd", "always",
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
        if sim_state.load(path).get("fabric", {}).get("ibsim") != address:
            sim_state.mutate(path, lambda st: st.setdefault("fabric", {}).update(ibsim=address))
        states[name] = sim_state.load(path)
    restarted = ensure_ibsim(states)
    for name, spec in lab.items():
        current = container_state(name)
        if current and current["image"] != image:
            run(["podman", "rm", "-f", PREFIX + name])
            current = None
        if current is None:
            run(container_args(name, spec, image, key))
        elif not current["running"]:
            run(["podman", "start", PREFIX + name])
    for name, spec in lab.items():
        wait_ready(name, spec["port"])
    if switch_sm:
        # After the nodes: the bridge, and so the address the SM reaches ibsim at, exists only
        # while a container is on the network.
        ensure_switch_sm(restart=restarted)
        wait_fabric_active(lab)
    log("%d nodes up in %.1f s: %s" % (len(lab), time.monotonic() - started, ", ".join(sorted(lab))))


def down(forget=False):
    for name in nodes():
        run(["podman", "rm", "-f", "-t", "5", PREFIX + name], check=False)
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


def main(argv=None):
    parser = argparse.ArgumentParser(prog="labctl", description=__doc__.split("\n", 1)[0])
    parser.add_argument("action", choices=("image", "up", "down", "reset", "status", "calls", "reboot", "power-cycle", "netfile"))
    parser.add_argument("node", nargs="?")
    parser.add_argument("--no-switch-sm", action="store_true", help="up: no subnet manager on the switch (ports stay INIT)")
    parser.add_argument("--suite", choices=("bookworm", "trixie"), help="image: the Debian suite of the node image")
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
    elif args.action == "netfile":
        print(fabric.netfile({name: sim_state.load(seed_state(name, spec)) for name, spec in nodes().items()}))
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
