# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The simulator's side of a lab node: what ``fabricsim.service`` runs inside each container.

``serve`` is the node's power-on: it applies the boot rules to the state (Next Boot becomes
Current, VFs are gone, the netns mode is read from modprobe.d), puts the tools of the configured
flavour on PATH, then mounts the simulated sysfs over ``/sys`` and serves it until stopped.
"""

import argparse
import os
import socket
import subprocess
import sys
import threading
import time

from fabricsim import fabric
from fabricsim import fusefs
from fabricsim import state as sim_state

RUN_DIR = "/run/fabricsim"
REAL_SYS = RUN_DIR + "/realsys"
SIM_SYS = RUN_DIR + "/sys"
# The /sys subtrees the simulator adds entries to; /sys/fs (cgroups) is never touched.
OVERLAID = ("class", "bus", "devices", "module", "kernel")
LIB_DIR = "/usr/lib/fabricsim"
PYCACHE_DIR = "/var/cache/fabricsim/pycache"

# Where each tool lives on a real host, by the package that ships it.
TOOL_PATHS = {
    "mlxconfig": "/usr/bin/mlxconfig",
    "mlxfwreset": "/usr/bin/mlxfwreset",
    "mst": "/usr/bin/mst",
    "mstconfig": "/usr/bin/mstconfig",
    "mstfwreset": "/usr/bin/mstfwreset",
    "flint": "/usr/bin/flint",
    "mstflint": "/usr/bin/mstflint",
    "rdma": "/usr/bin/rdma",
    "ibv_devinfo": "/usr/bin/ibv_devinfo",
    "ibv_devices": "/usr/bin/ibv_devices",
    "ibdev2netdev": "/usr/sbin/ibdev2netdev",
    "modprobe": "/usr/sbin/modprobe",
    "modinfo": "/usr/sbin/modinfo",
    "ip": "/usr/bin/ip",
}
FLAVOUR_TOOLS = {
    "mft": ("mlxconfig", "mlxfwreset", "mst", "flint"),
    "mstflint": ("mstconfig", "mstfwreset", "mstflint"),
    "none": (),
}
# Always present: the kernel-facing tools that exist on any node with an RDMA stack.
BASE_TOOLS = ("rdma", "ibv_devinfo", "ibv_devices", "modprobe", "modinfo", "ip")

# Without site, and with the compiled simulator kept in /var/cache (the checkout is mounted read-only, so
# Python would compile it again on every call): a call costs what a real tool costs, a few ms, not 100.
WRAPPER = """#!/usr/bin/python3 -IS
# Installed by the fabric.infiniband lab simulator (fabricsim); not a real {tool}.
import sys
sys.pycache_prefix = "{pycache}"
sys.path.insert(0, "{lib}")
from fabricsim.cli import main
sys.exit(main("{tool}", sys.argv[1:]))
"""
# ip runs often (ifupdown, Ansible facts): no site, and only iproute.py until a simulated netdev is named.
IP_WRAPPER = """#!/usr/bin/python3 -IS
# Installed by the fabric.infiniband lab simulator (fabricsim); not a real ip: it simulates the commands
# that name a simulated netdev and execs the real ip (ip.distrib) with the same arguments for all others.
import sys
sys.pycache_prefix = "{pycache}"
sys.path.insert(0, "{lib}")
sys.path.append("{lib}/fabricsim")
from iproute import main
sys.exit(main(sys.argv[1:]))
"""


def _run(argv, check=True):
    return subprocess.run(argv, check=check, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def wanted_tools(state):
    tools = state.get("tools", {})
    wanted = set(BASE_TOOLS) | set(FLAVOUR_TOOLS.get(tools.get("firmware", "none"), ()))
    if tools.get("ofed"):
        wanted.add("ibdev2netdev")
    return wanted


def _packaged_path(path):
    """The spelling of ``path`` that dpkg knows: Debian 12 ships /sbin/modprobe, 13 /usr/sbin/modprobe (one file
    with the merged /usr); a diversion must name the packaged path or an upgrade overwrites the wrapper."""
    if path.startswith(("/usr/sbin/", "/usr/bin/")) and _run(["dpkg-query", "-S", path], check=False).returncode != 0:
        legacy = path[len("/usr"):]
        if _run(["dpkg-query", "-S", legacy], check=False).returncode == 0:
            return legacy
    return path


def install_tools(state):
    """Put a wrapper at the real path of every wanted tool; remove the others.

    A real binary at that path (iproute2's rdma, a later-installed mstflint) is moved aside with a
    dpkg diversion, so package installs and upgrades never overwrite the simulated tool.
    """
    wanted = wanted_tools(state)
    for tool, path in TOOL_PATHS.items():
        content = (IP_WRAPPER if tool == "ip" else WRAPPER).format(tool=tool, lib=LIB_DIR, pycache=PYCACHE_DIR)
        if tool in wanted:
            packaged = _packaged_path(path)
            _run(["dpkg-divert", "--quiet", "--local", "--rename", "--divert", packaged + ".distrib", "--add", packaged])
            current = None
            if os.path.isfile(path):
                with open(path, encoding="utf-8") as handle:
                    current = handle.read()
            if current != content:
                tmp = path + ".fabricsim-tmp"
                with open(tmp, "w", encoding="utf-8") as handle:
                    handle.write(content)
                os.chmod(tmp, 0o755)
                os.replace(tmp, path)
        elif os.path.isfile(path) and "fabricsim" in open(path, encoding="utf-8", errors="replace").read(200):
            os.unlink(path)


def _unmount_all():
    for sub in OVERLAID:
        _run(["umount", "-l", "/sys/" + sub], check=False)
    _run(["fusermount", "-u", "-z", SIM_SYS], check=False)
    _run(["umount", "-l", REAL_SYS], check=False)


def _sd_notify(message):
    address = os.environ.get("NOTIFY_SOCKET")
    if not address:
        return
    if address.startswith("@"):
        address = "\0" + address[1:]
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.connect(address)
        sock.sendall(message.encode())


def _keep_fabric_in_sync(state_path, interval=2.0):
    """Follow what the subnet manager does to this node's ports (see fabric.py)."""
    while True:
        try:
            fabric.sync(state_path)
        except Exception as exc:  # pylint: disable=broad-exception-caught
            # A passing fault (ibsim restarting, a state write racing ours) must not stop the
            # loop; the next round tries again.
            print("fabricsim: fabric sync: %s" % exc, file=sys.stderr)
        time.sleep(interval)


def _bind_when_mounted():
    deadline = time.monotonic() + 30
    while not os.path.ismount(SIM_SYS):
        if time.monotonic() > deadline:
            print("fabricsim: the FUSE sysfs did not come up", file=sys.stderr)
            os._exit(1)  # pylint: disable=protected-access
        time.sleep(0.05)
    for sub in OVERLAID:
        _run(["mount", "--bind", SIM_SYS + "/" + sub, "/sys/" + sub])
    _sd_notify("READY=1")


def _ipoib_standin(state):
    """``kernel.ipoib_standin``: each simulated IPoIB netdev also exists as a real ifb netdev of the same name
    (the lab's kernel has no ib_ipoib; ifb is ARPHRD_ETHER), which holds real addresses, MTU and link state.
    A child that a systemd-networkd .netdev asks for (Kind=ipoib, which only ib_ipoib can make) is made too, so
    that networkd finds it (EEXIST) and configures it; children made by create_child or ip link add are gone,
    as after a real reboot (the container's network namespace is new)."""
    if not state.get("kernel", {}).get("ipoib_standin"):
        return
    from fabricsim import iproute  # pylint: disable=import-outside-toplevel

    parents = [f.netdev for f in sim_state.functions(state) if f.netdev and f.ib]
    for name in parents:
        iproute.standin_link(name, True)
    for child in _networkd_ipoib_children(parents):
        iproute.standin_link(child, True)


def _networkd_ipoib_children(parents, directory="/etc/systemd/network"):
    """Names of the Kind=ipoib netdevs of networkd's .netdev files that a parent's .network lists (IPoIB=)."""
    kinds, listed = set(), set()
    try:
        names = sorted(os.listdir(directory))
    except OSError:
        return []
    for fname in names:
        values, section = {}, None
        try:
            with open(os.path.join(directory, fname), encoding="utf-8") as handle:
                for line in handle:
                    line = line.strip()
                    if line.startswith("[") and line.endswith("]"):
                        section = line[1:-1]
                    elif "=" in line and not line.startswith(("#", ";")):
                        key, value = (part.strip() for part in line.split("=", 1))
                        values.setdefault((section, key), []).append(value)
        except (OSError, UnicodeDecodeError):
            continue
        if fname.endswith(".netdev") and values.get(("NetDev", "Kind")) == ["ipoib"]:
            kinds.update(values.get(("NetDev", "Name"), []))
        elif fname.endswith(".network") and set(values.get(("Match", "Name"), [])) & set(parents):
            listed.update(values.get(("Network", "IPoIB"), []))
    return sorted(kinds & listed)


def serve(state_path):
    _unmount_all()
    sim_state.mutate(state_path, sim_state.power_on)
    install_tools(sim_state.load(state_path))
    _ipoib_standin(sim_state.load(state_path))
    os.makedirs(REAL_SYS, exist_ok=True)
    os.makedirs(SIM_SYS, exist_ok=True)
    # A non-recursive bind: the real sysfs without anything mounted over its subtrees.
    _run(["mount", "--bind", "/sys", REAL_SYS])
    threading.Thread(target=_bind_when_mounted, daemon=True).start()
    if fabric.server(sim_state.load(state_path)):
        threading.Thread(target=_keep_fabric_in_sync, args=(state_path,), daemon=True).start()
    fusefs.serve(SIM_SYS, REAL_SYS, state_path)


def stop():
    _unmount_all()


def main(argv=None):
    parser = argparse.ArgumentParser(prog="fabricsim-node")
    parser.add_argument("action", choices=("serve", "stop", "install-tools"))
    parser.add_argument("--state", default=os.environ.get("FABRICSIM_STATE", sim_state.DEFAULT_STATE_PATH))
    args = parser.parse_args(argv)
    if args.action == "serve":
        serve(args.state)
    elif args.action == "stop":
        stop()
    else:
        install_tools(sim_state.load(args.state))
    return 0


if __name__ == "__main__":
    sys.exit(main())
