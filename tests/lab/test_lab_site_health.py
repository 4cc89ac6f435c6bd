# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Fabric health and the schedulers' gate (issue 34) on the lab's nodes and fabric.

The tests run in this order on one lab, each building on the one before: a clean fabric passes and the gate takes no
node out; a port with rising symbol errors (node02's ConnectX-7), a port at 1X (node03's ConnectX-5) and a flapping
port (node01's second port) each fail with their reason; with more failing nodes than verify_health_max_drain the gate
takes none out and names a fabric-wide fault; check mode shows the plan and changes nothing; then the three are drained
in Slurm and tainted in Kubernetes; healthy again, they come back, except the node an administrator drained, and a
taint of another key stays.

The faults come from the simulator (``fabricsim port``, lab/README.md); Slurm is the lab's (``labctl slurm up``: Debian's
slurmctld on node01, slurmd on every node); Kubernetes is the lab's real kube-apiserver (lab/k8s/apiserver.py) with a Node object per lab node (no kubelet).
"""

import json
import sys

import pytest

import labhost as lab

REPORT = lab.CACHE / "health-report"
K8S_STATE = lab.CACHE / "health-k8s"
KEY = "fabric.infiniband/fabric-unhealthy"


def sh(node, script, check=True):
    proc = lab.run(["podman", "exec", lab.CONTAINER + node, "sh", "-c", script])
    assert not check or proc.returncode == 0, "%s: %s" % (node, proc.stdout)
    return proc.stdout


def port(node, device, *action):
    sh(node, "PYTHONPATH=/usr/lib/fabricsim python3 -m fabricsim.cli fabricsim port %s %s" % (device, " ".join(action)))


def sinfo():
    """{node: (state, reason)} as Slurm shows them."""
    out = sh("node01", "sinfo --noheader --Node --format '%N|%T|%300E'")
    return dict((n, (s, r.strip())) for n, s, r in (line.split("|", 2) for line in out.splitlines() if "|" in line))


def taints(kubeconfig):
    from kubernetes import client, config  # pylint: disable=import-outside-toplevel
    api = client.CoreV1Api(config.new_client_from_config(str(kubeconfig)))
    # the API server's own not-ready taint (a Node without a kubelet) is none of the gate's business
    return dict((n.metadata.name, [(t.key, t.value, t.effect) for t in n.spec.taints or []
                                   if not t.key.startswith("node.kubernetes.io/")]) for n in api.list_node().items)


def run_health(*extra, check=False):
    """verify.yml (verify_fail off: the fresh nodes fail other checks); returns (process, {host: [failing health checks as
    the report states them]}, the report's text table)."""
    args = ["-e", "@%s" % (lab.CACHE / "health-vars.json")] + list(extra)
    if check:
        args.append("--check")
    proc = lab.playbook("verify.yml", *args)
    report = json.loads((REPORT / "fabric-report.json").read_text())
    reasons = dict((entry["host"], ["%s: expected %s, found %s" % (c["name"], c["expected"], c["actual"])
                                    for c in entry["checks"]
                                    if c["category"] in ("width", "speed", "errors", "flaps") and c["status"] == "fail"])
                   for entry in report["hosts"])
    return proc, reasons, (REPORT / "fabric-report.txt").read_text()


def said(proc):
    """The playbook's output with its line folding undone."""
    return " ".join(proc.stdout.split())


@pytest.fixture(scope="module")
def schedulers(fresh_lab):
    """Slurm on node01, the kube-apiserver on the controller with one Node per lab node, and the settings that reach
    them; stopped after the module."""
    del fresh_lab
    lab.labctl("slurm", "up")  # Debian's slurmctld on node01 (slurm_control), slurmd on every node, all idle
    started = lab.run([sys.executable, lab.REPO / "lab" / "k8s" / "apiserver.py", "start", K8S_STATE], timeout=1200)
    assert started.returncode == 0, started.stdout
    kubeconfig = K8S_STATE / "kubeconfig"
    from kubernetes import client, config  # pylint: disable=import-outside-toplevel
    api = client.CoreV1Api(config.new_client_from_config(str(kubeconfig)))
    existing = set(n.metadata.name for n in api.list_node().items)
    for node in lab.NODES:
        if node not in existing:
            api.create_node(client.V1Node(metadata=client.V1ObjectMeta(name=node)))
    settings = {"verify_health_gate": True, "verify_health_slurm_controller": "node01",
                "verify_health_k8s_from": "localhost", "verify_health_kubeconfig": str(kubeconfig),
                "verify_health_interval": 2, "verify_health_max_drain": 3,
                "verify_fail": False, "verify_report_dir": str(REPORT)}
    (lab.CACHE / "health-vars.json").write_text(json.dumps(settings))
    yield kubeconfig
    lab.run([sys.executable, lab.REPO / "lab" / "k8s" / "apiserver.py", "stop", K8S_STATE])


def test_a_clean_fabric_passes_and_the_gate_takes_nothing_out(schedulers):
    proc, reasons, _table = run_health()
    assert proc.returncode == 0, proc.stdout[-4000:]
    assert reasons == {"node01": [], "node02": [], "node03": []}, reasons
    assert sinfo()["node01"][0] == "idle"
    assert all(not t for t in taints(schedulers).values())


def _faults():
    port("node02", "mlx5_2", "counter", "symbol_error", "0", "5")  # ConnectX-7: 5 symbol errors a second
    port("node03", "mlx5_0", "width", "1")  # ConnectX-5 port 1 at 1X
    port("node01", "mlx5_1", "flap")  # ConnectX-6 port 2 went down and came back since the last run


def test_too_many_failing_nodes_take_none_out(schedulers):
    _faults()
    proc, reasons, _table = run_health("-e", "verify_health_max_drain=2")
    assert proc.returncode != 0
    assert reasons["node01"] == ["flaps of mlx5_1/1: expected at most 0 since the last run, found 1 since the last run"]
    assert reasons["node03"] == ["width of mlx5_0/1: expected 4X, found 1X"]
    assert len(reasons["node02"]) == 1 and reasons["node02"][0].startswith(
        "errors of mlx5_2/1: expected no growth above the thresholds, found symbol_error +")
    assert ("3 of 3 nodes fail the fabric health check (node01, node02, node03), more than verify_health_max_drain "
            "allows (2): a fabric-wide fault (a subnet manager down, a spine switch lost) is suspected") in said(proc)
    assert sinfo()["node01"][0] == "idle"
    assert all(not t for t in taints(schedulers).values())


def test_check_mode_shows_the_plan_and_changes_nothing(schedulers):
    port("node01", "mlx5_1", "flap")
    proc, _reasons, _table = run_health("-v", check=True)
    assert proc.returncode == 0, proc.stdout[-4000:]
    assert "fabric.infiniband: mlx5_1/1: link went down 1 time since the last run" in said(proc)
    assert sinfo()["node01"][0] == "idle"
    assert all(not t for t in taints(schedulers).values())


def test_failing_nodes_are_drained_and_tainted_with_their_reason(schedulers):
    # node01's flap of the check-mode run is still news: check mode kept no record
    proc, reasons, table = run_health()
    # kept for a person to look at (until the next `labctl reset`): the report of the three failing ports
    (lab.CACHE / "health-report-failing.txt").write_text(table, encoding="utf-8")
    assert proc.returncode == 0, proc.stdout[-4000:]
    assert all(reasons[n] for n in lab.NODES), reasons
    rows = dict((line.split()[0], line.split()[4:8]) for line in table.split("\n\n")[0].splitlines()[2:])
    assert rows == {"node01": ["ok", "ok", "ok", "FAIL"], "node02": ["ok", "ok", "FAIL", "ok"],
                    "node03": ["FAIL", "ok", "ok", "ok"]}, table
    state, reason = sinfo()["node01"]
    assert state in ("drained", "draining") and reason == "fabric.infiniband: mlx5_1/1: link went down 1 time since the last run"
    found = taints(schedulers)
    assert found["node01"] == [(KEY, "link-flapping", "NoSchedule")]
    assert found["node02"] == [(KEY, "port-errors", "NoSchedule")]
    assert found["node03"] == [(KEY, "link-degraded", "NoSchedule")]


def test_healthy_again_they_return_but_not_what_an_administrator_took_out(schedulers):
    for node, device in (("node01", "mlx5_1"), ("node02", "mlx5_2"), ("node03", "mlx5_0")):
        port(node, device, "clear")
    sh("node01", "scontrol update nodename=node02 state=drain reason='bad DIMM'")
    from kubernetes import client, config  # pylint: disable=import-outside-toplevel
    api = client.CoreV1Api(config.new_client_from_config(str(schedulers)))
    node = api.read_node("node03")
    taint = client.V1Taint(key="example.com/maintenance", value="yes", effect="NoSchedule")
    node.spec.taints = (node.spec.taints or []) + [taint]
    api.replace_node("node03", node)
    proc, reasons, _table = run_health()
    assert proc.returncode == 0, proc.stdout[-4000:]
    assert reasons == {"node01": [], "node02": [], "node03": []}, reasons
    nodes = sinfo()
    assert nodes["node01"][0] == "idle"
    assert nodes["node02"][1] == "bad DIMM"  # an administrator's drain is never resumed
    assert "drained by someone else (bad DIMM): left as it is" in said(proc)
    found = taints(schedulers)
    assert found["node01"] == found["node02"] == []
    assert found["node03"] == [("example.com/maintenance", "yes", "NoSchedule")]
