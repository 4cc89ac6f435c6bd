# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""playbooks/topology.yml on the lab (issue 34): Slurm's topology.conf from the simulated fabric, accepted by the real
Slurm (Debian's, `labctl slurm up`), and the Kubernetes Nodes labelled in a real kube-apiserver (lab/k8s).

The lab's nodes need no converge: ibsim's fabric and its OpenSM are up with `labctl up`, and ibnetdiscover reads it
from node01 under umad2sim (inventories/lab/group_vars/all.yml). The Node objects are made by the test, as kubelets
would register them (the lab's API server has no kubelet). About a minute with the API server's binaries cached
(lab/k8s/build.sh builds them once, about 6 minutes; molecule/k8s_network uses the same cache).
"""

import json
import os
import socket
import subprocess
import sys

import pytest

import labhost as lab

sys.path.insert(0, str(lab.REPO / "lab"))
from fabricsim import fabric  # noqa: E402  pylint: disable=wrong-import-position

LEAF = "network.topology.nvidia.com/leaf"
SPINE = "network.topology.nvidia.com/spine"
OWNER = "fabric.infiniband/topology-labels"
CONTROLLER = "node01"


def _free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def topology_lab(tmp_path_factory):
    """The lab's nodes and fabric, its Slurm, and a kube-apiserver with a Node per lab node; all stopped afterwards."""
    if lab.INSTANCE != "lab":
        lab.labctl("inventory")
    lab.labctl("up")
    # the site's own topology.conf (labctl's), also where an earlier run of this test left the role's
    subprocess.run(["podman", "exec", lab.CONTAINER + CONTROLLER, "rm", "-f", "/etc/slurm/topology.conf"], check=False)
    lab.labctl("slurm", "up")
    state = tmp_path_factory.mktemp("k8s")
    environment = dict(os.environ, FABRIC_K8S_PORT=str(_free_port()), FABRIC_K8S_ETCD_PORT=str(_free_port()))
    started = lab.run([sys.executable, lab.REPO / "lab" / "k8s" / "apiserver.py", "start", state], environment=environment)
    assert started.returncode == 0, started.stdout[-3000:]
    kubeconfig = state / "kubeconfig"
    api = client(kubeconfig)
    for node in lab.NODES:
        labels = {"kubernetes.io/hostname": node, "example.com/rack": "r1"}
        annotations = {}
        if node == "node03":
            # a spine label the role set in an earlier run (its annotation says so): the lab's fabric has no spine
            labels[SPINE] = "spine-gone"
            annotations[OWNER] = SPINE
        api.create_node({"apiVersion": "v1", "kind": "Node",
                         "metadata": {"name": node, "labels": labels, "annotations": annotations}})
    control = tmp_path_factory.mktemp("inventory") / "k8s-control.yml"
    control.write_text(json.dumps({"all": {"children": {"k8s_control": {"hosts": {"localhost": {
        "ansible_connection": "local", "ansible_python_interpreter": sys.executable,
        "topology_kubeconfig": str(kubeconfig)}}}}}}), encoding="utf-8")
    yield {"api": api, "inventory": control}
    lab.run([sys.executable, lab.REPO / "lab" / "k8s" / "apiserver.py", "stop", state], environment=environment)
    lab.labctl("down")


def client(kubeconfig):
    from kubernetes import client as k8s_client  # pylint: disable=import-outside-toplevel
    from kubernetes import config as k8s_config  # pylint: disable=import-outside-toplevel
    return k8s_client.CoreV1Api(k8s_config.new_client_from_config(config_file=str(kubeconfig)))


def on_controller(*argv):
    proc = subprocess.run(["podman", "exec", lab.CONTAINER + CONTROLLER, *argv], stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, check=False)
    assert proc.returncode == 0, proc.stdout
    return proc.stdout


def expected_tree():
    """The simulated fabric (lab/fabricsim/fabric.py): one switch, every node with a cabled port under it."""
    hosts = sorted({port["host"] for port in fabric.cabled_ports({node: lab.state(node) for node in lab.NODES})})
    return {fabric.SWITCH: hosts}


def test_topology_conf_matches_the_fabric_and_slurm_accepts_it(topology_lab):
    inventories = (lab.INVENTORY, topology_lab["inventory"])
    check = lab.playbook("topology.yml", "--check", "--diff", inventories=inventories)
    assert check.returncode == 0, check.stdout[-4000:]
    assert "lab-unknown" in on_controller("cat", "/etc/slurm/topology.conf"), "check mode wrote topology.conf"

    first = lab.playbook("topology.yml", "--diff", inventories=inventories)
    assert first.returncode == 0, first.stdout[-4000:]
    tree = expected_tree()
    assert tree == {"Switch1": ["node01", "node02", "node03"]}
    lines = [line for line in on_controller("cat", "/etc/slurm/topology.conf").splitlines() if not line.startswith("#")]
    assert lines == ["SwitchName=%s Nodes=%s" % (name, ",".join(hosts)) for name, hosts in sorted(tree.items())]
    shown = on_controller("scontrol", "show", "topology")
    sys.stdout.write("scontrol show topology:\n%s" % shown)
    assert "SwitchName=Switch1 Level=0" in shown and "lab-unknown" not in shown
    assert all(node in shown for node in tree["Switch1"]) or "node[01-03]" in shown
    # slurm still schedules on every node
    assert on_controller("sinfo", "-h", "-N", "-o", "%N %t").split() == ["node01", "idle", "node02", "idle", "node03", "idle"]

    api = topology_lab["api"]
    for node in lab.NODES:
        labels = api.read_node(node).metadata.labels
        annotations = api.read_node(node).metadata.annotations or {}
        assert labels[LEAF] == "Switch1", (node, labels)
        assert SPINE not in labels, (node, labels)  # the stale spine of node03 is gone; the fabric has no spine
        assert labels["example.com/rack"] == "r1", "a label the role does not own changed"
        assert annotations[OWNER] == LEAF

    second = lab.playbook("topology.yml", inventories=inventories)
    assert second.returncode == 0, second.stdout[-4000:]
    assert all(counts["changed"] == 0 for counts in lab.recap(second.stdout).values()), lab.recap(second.stdout)
