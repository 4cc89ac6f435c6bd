# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Virtual machines booting Debian's own kernel, for what only a real kernel shows.

    python lab/vm/vmctl.py image           build the base image if needed (lab/vm/build.sh); print its path
    python lab/vm/vmctl.py create NAME     a fresh VM: an overlay on the base image, QEMU started in the
                                           background (--wait: until SSH answers; --port: its SSH port;
                                           --link listen:PORT or connect:PORT: a second NIC, a point-to-point
                                           link to the VM that listens on 127.0.0.1:PORT)
    python lab/vm/vmctl.py wait NAME       until SSH answers (--not-boot-id ID: and the boot is another one)
    python lab/vm/vmctl.py ssh NAME [-- COMMAND...]   ssh as root into the VM
    python lab/vm/vmctl.py reboot NAME     `systemctl reboot` in the guest, until SSH answers with a new boot_id
    python lab/vm/vmctl.py info NAME       JSON: address, port, user, identity_file (for Ansible), pid, console
    python lab/vm/vmctl.py console NAME    the end of the serial console log
    python lab/vm/vmctl.py destroy NAME    power off and remove the VM (its overlay too); --all: every VM
    python lab/vm/vmctl.py status          one line per VM, and the base image

QEMU runs with software emulation (TCG): KVM is not usable on the machines this project is built
on (their /dev/kvm cannot run a stock kernel). The guest's disk is a qcow2 overlay on the cached
base image, so every VM starts from the same fresh system and `destroy` forgets everything.
SSH is forwarded from 127.0.0.1:PORT (2221 and up; the container lab uses 2201-2203); root logs
in with the lab's key (.cache/lab/ssh/id_ed25519, shared with lab/labctl.py). Everything lives in
.cache/lab/vm/. Only the standard library is used: runs with .venv/bin/python or python3, as root.
"""

import argparse
import fcntl
import glob
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

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CACHE = os.path.join(REPO, ".cache", "lab")
VM_CACHE = os.path.join(CACHE, "vm")
RUN_DIR = os.path.join(VM_CACHE, "run")
BUILD_SCRIPT = os.path.join(REPO, "lab", "vm", "build.sh")
SUITE = os.environ.get("FABRIC_LAB_VM_SUITE", "bookworm")
MEMORY = os.environ.get("FABRIC_LAB_VM_MEMORY", "1024")
CPUS = os.environ.get("FABRIC_LAB_VM_CPUS", "2")
QEMU = os.environ.get("FABRIC_LAB_QEMU", "qemu-system-x86_64")
FIRST_PORT = 2221
LAST_PORT = 2260
USER = "root"
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$")
SSH_OPTIONS = [
    "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null",
    "-o", "LogLevel=ERROR", "-o", "IdentitiesOnly=yes", "-o", "ConnectTimeout=10",
    # An SSH session open while the guest shuts down can otherwise hang for minutes.
    "-o", "ServerAliveInterval=2", "-o", "ServerAliveCountMax=3",
]


def log(message):
    print("vm: " + message, file=sys.stderr, flush=True)


def fail(message):
    raise SystemExit("vm: " + message)


def run(argv, check=True, capture=True, timeout=None):
    try:
        result = subprocess.run(argv, check=False, text=True, timeout=timeout,
                                stdout=subprocess.PIPE if capture else None,
                                stderr=subprocess.STDOUT if capture else None)
    except subprocess.TimeoutExpired:
        if check:
            fail("%s timed out after %d s" % (" ".join(argv), timeout))
        return subprocess.CompletedProcess(argv, 124, "", "")
    if check and result.returncode != 0:
        fail("%s failed (rc %d):\n%s" % (" ".join(argv), result.returncode, result.stdout or ""))
    return result


class Lock:
    """An exclusive lock on .cache/lab/vm/.lock: one image build or VM start at a time."""

    def __enter__(self):
        os.makedirs(VM_CACHE, exist_ok=True)
        self.handle = open(os.path.join(VM_CACHE, ".lock"), "w", encoding="utf-8")
        fcntl.flock(self.handle, fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc):
        fcntl.flock(self.handle, fcntl.LOCK_UN)
        self.handle.close()


# --- ssh key (as lab/labctl.py makes it) ----------------------------------------------------
def ssh_key():
    key = os.path.join(CACHE, "ssh", "id_ed25519")
    if not os.path.exists(key):
        os.makedirs(os.path.dirname(key), exist_ok=True)
        run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "fabric-lab", "-f", key])
    return key


# --- base image ---------------------------------------------------------------------------
def image_path():
    """The base image's path: keyed by the build script, the suite and the key baked in."""
    digest = hashlib.sha256()
    with open(BUILD_SCRIPT, "rb") as handle:
        digest.update(handle.read())
    digest.update(SUITE.encode())
    with open(ssh_key() + ".pub", "rb") as handle:
        digest.update(handle.read())
    return os.path.join(VM_CACHE, "base-%s-%s.qcow2" % (SUITE, digest.hexdigest()[:12]))


def ensure_image(rebuild=False):
    path = image_path()
    with Lock():
        if os.path.exists(path) and not rebuild:
            return path
        if os.geteuid() != 0:
            fail("building the base image needs root (debootstrap, loop devices, mount)")
        for tool in ("debootstrap", "sfdisk", "qemu-img", QEMU):
            if not shutil.which(tool):
                fail("%s is missing: apt-get install debootstrap fdisk qemu-utils qemu-system-x86" % tool)
        log("building the base image %s (about 1.5-3 min, once)" % os.path.basename(path))
        started = time.monotonic()
        run(["bash", BUILD_SCRIPT, SUITE, path, ssh_key() + ".pub"], capture=False)
        log("base image built in %.0f s" % (time.monotonic() - started))
        prune_images(keep=path)
    return path


def prune_images(keep):
    """Remove base images of older build scripts that no VM's overlay still uses."""
    used = {keep} | {vm.get("base") for vm in (load_vm(name) for name in vm_names()) if vm}
    for path in glob.glob(os.path.join(VM_CACHE, "base-*.qcow2")):
        if path not in used:
            os.unlink(path)
            log("removed the old base image %s" % os.path.basename(path))


# --- VM bookkeeping -------------------------------------------------------------------------
def vm_dir(name):
    if not NAME_RE.match(name):
        fail("bad VM name %r (letters, digits, '_', '.', '-')" % name)
    return os.path.join(RUN_DIR, name)


def vm_names():
    return sorted(os.listdir(RUN_DIR)) if os.path.isdir(RUN_DIR) else []


def load_vm(name):
    try:
        with open(os.path.join(vm_dir(name), "vm.json"), encoding="utf-8") as handle:
            return json.load(handle)
    except (OSError, ValueError):
        return None


def qemu_pid(name):
    """The PID of the VM's QEMU if it is alive (and really that QEMU: PIDs get reused)."""
    directory = vm_dir(name)
    try:
        with open(os.path.join(directory, "qemu.pid"), encoding="utf-8") as handle:
            pid = int(handle.read().strip())
        with open("/proc/%d/cmdline" % pid, "rb") as handle:
            argv = handle.read().decode(errors="replace").split("\0")
        with open("/proc/%d/stat" % pid, encoding="utf-8") as handle:
            zombie = handle.read().rpartition(")")[2].split()[0] == "Z"
    except (OSError, ValueError):
        return None
    disk = os.path.join(directory, "disk.qcow2")
    return pid if not zombie and any(disk in arg for arg in argv) else None


def running_vms():
    return [name for name in vm_names() if qemu_pid(name)]


def port_free(port):
    taken = {vm.get("port") for vm in (load_vm(name) for name in running_vms()) if vm}
    if port in taken:
        return False
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def pick_port():
    for port in range(FIRST_PORT, LAST_PORT + 1):
        if port_free(port):
            return port
    fail("no free port in %d-%d" % (FIRST_PORT, LAST_PORT))
    return None


def info(name):
    vm = load_vm(name)
    if not vm:
        fail("no VM %s (vmctl.py create %s)" % (name, name))
    directory = vm_dir(name)
    return {
        "name": name, "address": "127.0.0.1", "port": vm["port"], "user": USER,
        "identity_file": ssh_key(), "pid": qemu_pid(name), "running": bool(qemu_pid(name)),
        "console": os.path.join(directory, "console.log"), "disk": os.path.join(directory, "disk.qcow2"),
        "base": vm["base"],
    }


# --- lifecycle -------------------------------------------------------------------------------
LINK_RE = re.compile(r"^(listen|connect):([0-9]{1,5})$")


def parse_link(text):
    """``listen:2290`` or ``connect:2290`` -> ``("listen", 2290)``; None for no link."""
    if not text:
        return None
    match = LINK_RE.match(text)
    if not match or not 1024 <= int(match.group(2)) <= 65535:
        fail("--link %r: expected listen:PORT or connect:PORT, PORT 1024-65535" % text)
    return match.group(1), int(match.group(2))


def link_mac(name):
    """A stable, locally administered MAC for the link NIC of VM ``name`` (QEMU would give every VM the same)."""
    digest = hashlib.sha256(name.encode()).digest()
    return "52:54:%02x:%02x:%02x:%02x" % tuple(digest[:4])


def link_argv(name, link):
    """The second NIC: a QEMU socket netdev between two VMs (one listens on 127.0.0.1:PORT, the other connects)."""
    if not link:
        return []
    mode, port = link
    return ["-netdev", "socket,id=net1,%s=127.0.0.1:%d" % (mode, port),
            "-device", "virtio-net-pci,netdev=net1,mac=%s" % link_mac(name)]


def qemu_argv(name, port, link=None):
    directory = vm_dir(name)
    return [
        QEMU, "-name", name, "-machine", "q35", "-no-user-config", "-nodefaults",
        # Software emulation; tb-size=256 (MiB of translated code) makes the boot markedly faster.
        "-accel", "tcg,thread=multi,tb-size=256", "-cpu", "max", "-m", MEMORY, "-smp", CPUS,
        "-display", "none", "-serial", "file:" + os.path.join(directory, "console.log"),
        "-drive", "file=%s,if=virtio,format=qcow2,discard=unmap" % os.path.join(directory, "disk.qcow2"),
        "-netdev", "user,id=net0,hostfwd=tcp:127.0.0.1:%d-:22" % port,
        "-device", "virtio-net-pci,netdev=net0",
    ] + link_argv(name, link) + [
        "-device", "virtio-rng-pci",
        "-monitor", "unix:%s,server=on,wait=off" % os.path.join(directory, "monitor.sock"),
        "-pidfile", os.path.join(directory, "qemu.pid"), "-daemonize",
    ]


def create(name, port=None, force=False, link=None):
    directory = vm_dir(name)
    if qemu_pid(name):
        log("%s is already running (ssh 127.0.0.1:%d)" % (name, load_vm(name)["port"]))
        return
    others = running_vms()
    if others and not force:
        fail("%s already running: one VM at a time on these 2-core machines (--force to start another)" % ", ".join(others))
    base = ensure_image()
    with Lock():
        if os.path.exists(directory):
            shutil.rmtree(directory)
        os.makedirs(directory)
        port = port or pick_port()
        if not port_free(port):
            fail("port %d is in use" % port)
        run(["qemu-img", "create", "-q", "-f", "qcow2", "-b", base, "-F", "qcow2", os.path.join(directory, "disk.qcow2")])
        with open(os.path.join(directory, "vm.json"), "w", encoding="utf-8") as handle:
            json.dump({"name": name, "port": port, "base": base, "created": time.time(),
                       "link": "%s:%d" % link if link else None}, handle, indent=2)
        argv = qemu_argv(name, port, link)
        with open(os.path.join(directory, "qemu.argv"), "w", encoding="utf-8") as handle:
            handle.write(" ".join(argv) + "\n")
        run(argv)
    log("%s started (pid %s), ssh 127.0.0.1:%d, console %s" % (name, qemu_pid(name), port, os.path.join(directory, "console.log")))


def ssh_argv(name, command=(), extra=()):
    vm = load_vm(name)
    if not vm:
        fail("no VM %s" % name)
    return ["ssh", "-i", ssh_key(), "-p", str(vm["port"])] + SSH_OPTIONS + list(extra) + ["%s@127.0.0.1" % USER] + list(command)


def banner(port):
    """True when something answers on the port with an SSH banner (QEMU accepts connections on
    the forwarded port even before the guest listens, then closes them)."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=2) as sock:
            sock.settimeout(3)
            return sock.recv(4).startswith(b"SSH-")
    except OSError:
        return False


def boot_id(name, timeout=20):
    """The guest's boot_id over SSH, or None. Bounded: a probe during shutdown can hang."""
    result = run(ssh_argv(name, ["cat", "/proc/sys/kernel/random/boot_id"]), check=False, timeout=timeout)
    value = (result.stdout or "").strip()
    return value if result.returncode == 0 and re.match(r"^[0-9a-f-]{36}$", value) else None


def console_tail(name, lines=30):
    try:
        with open(os.path.join(vm_dir(name), "console.log"), encoding="utf-8", errors="replace") as handle:
            return "".join(handle.readlines()[-lines:])
    except OSError:
        return ""


def wait(name, timeout=300, not_boot_id=None):
    """Until SSH answers (with a boot_id other than ``not_boot_id``); returns (boot_id, seconds)."""
    vm = load_vm(name)
    if not vm:
        fail("no VM %s" % name)
    started = time.monotonic()
    deadline = started + timeout
    while time.monotonic() < deadline:
        if not qemu_pid(name):
            fail("%s is not running; its console ends with:\n%s" % (name, console_tail(name)))
        if banner(vm["port"]):
            current = boot_id(name)
            if current and current != not_boot_id:
                return current, time.monotonic() - started
        time.sleep(1)
    fail("%s: no SSH within %d s; its console ends with:\n%s" % (name, timeout, console_tail(name)))
    return None, None


def reboot(name, timeout=300):
    old = boot_id(name)
    if not old:
        fail("%s does not answer over SSH" % name)
    started = time.monotonic()
    # The connection may drop before ssh returns: its exit status says nothing here.
    run(ssh_argv(name, ["systemctl", "reboot"]), check=False, timeout=30)
    new, _ = wait(name, timeout=timeout, not_boot_id=old)
    return old, new, time.monotonic() - started


def monitor(name, command):
    path = os.path.join(vm_dir(name), "monitor.sock")
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(5)
        sock.connect(path)
        sock.recv(4096)
        sock.sendall(command.encode() + b"\n")
        time.sleep(0.2)


def destroy(name):
    directory = vm_dir(name)
    pid = qemu_pid(name)
    if pid:
        try:
            monitor(name, "quit")
        except OSError:
            os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + 10
        while qemu_pid(name):
            if time.monotonic() > deadline:
                os.kill(pid, signal.SIGKILL)
                deadline += 10
            time.sleep(0.2)
    if os.path.exists(directory):
        shutil.rmtree(directory)
        log("%s destroyed" % name)


def status():
    for name in vm_names():
        vm = load_vm(name) or {}
        pid = qemu_pid(name)
        rss = ""
        if pid:
            with open("/proc/%d/status" % pid, encoding="utf-8") as handle:
                found = re.search(r"^VmRSS:\s+(\d+)", handle.read(), re.M)
            rss = " qemu %d MiB" % (int(found.group(1)) // 1024) if found else ""
        print("%-24s %-8s ssh 127.0.0.1:%s%s" % (name, "running" if pid else "stopped", vm.get("port", "?"), rss))
    path = image_path()
    print("base image %s%s" % (path, "" if os.path.exists(path) else " (not built)"))


def main(argv=None):
    parser = argparse.ArgumentParser(prog="vmctl", description=__doc__.split("\n", 1)[0])
    sub = parser.add_subparsers(dest="action", required=True)
    image_parser = sub.add_parser("image", help="build the base image if needed, print its path")
    image_parser.add_argument("--rebuild", action="store_true")
    create_parser = sub.add_parser("create", help="start a fresh VM")
    create_parser.add_argument("name")
    create_parser.add_argument("--port", type=int)
    create_parser.add_argument("--wait", action="store_true", help="until SSH answers")
    create_parser.add_argument("--timeout", type=int, default=300)
    create_parser.add_argument("--force", action="store_true", help="even if another VM is running")
    create_parser.add_argument("--link", help="listen:PORT or connect:PORT: a second NIC linked to another VM")
    wait_parser = sub.add_parser("wait", help="until SSH answers")
    wait_parser.add_argument("name")
    wait_parser.add_argument("--timeout", type=int, default=300)
    wait_parser.add_argument("--not-boot-id")
    ssh_parser = sub.add_parser("ssh", help="ssh into the VM as root")
    ssh_parser.add_argument("name")
    ssh_parser.add_argument("command", nargs=argparse.REMAINDER)
    reboot_parser = sub.add_parser("reboot", help="reboot the guest, until SSH answers with a new boot_id")
    reboot_parser.add_argument("name")
    reboot_parser.add_argument("--timeout", type=int, default=300)
    for action in ("info", "console", "destroy"):
        action_parser = sub.add_parser(action)
        action_parser.add_argument("name", nargs="?" if action == "destroy" else None)
    sub.choices["console"].add_argument("-n", "--lines", type=int, default=40)
    sub.choices["destroy"].add_argument("--all", action="store_true")
    sub.add_parser("status", help="one line per VM")
    args = parser.parse_args(argv)

    if args.action == "image":
        print(ensure_image(rebuild=args.rebuild))
    elif args.action == "create":
        create(args.name, port=args.port, force=args.force, link=parse_link(args.link))
        if args.wait:
            current, seconds = wait(args.name, timeout=args.timeout)
            log("%s answers over SSH after %.0f s (boot_id %s)" % (args.name, seconds, current))
    elif args.action == "wait":
        current, seconds = wait(args.name, timeout=args.timeout, not_boot_id=args.not_boot_id)
        log("%s answers over SSH after %.0f s (boot_id %s)" % (args.name, seconds, current))
        print(current)
    elif args.action == "ssh":
        command = args.command[1:] if args.command[:1] == ["--"] else args.command
        argv = ssh_argv(args.name, command, extra=["-t"] if not command and sys.stdin.isatty() else [])
        os.execvp(argv[0], argv)
    elif args.action == "reboot":
        old, new, seconds = reboot(args.name, timeout=args.timeout)
        log("%s rebooted in %.0f s (boot_id %s -> %s)" % (args.name, seconds, old, new))
    elif args.action == "info":
        print(json.dumps(info(args.name), indent=2))
    elif args.action == "console":
        sys.stdout.write(console_tail(args.name, args.lines))
    elif args.action == "destroy":
        if not args.all and not args.name:
            parser.error("destroy needs a VM name or --all")
        for name in vm_names() if args.all else [args.name]:
            destroy(name)
    elif args.action == "status":
        status()
    return 0


if __name__ == "__main__":
    sys.exit(main())
