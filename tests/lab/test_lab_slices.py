# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Node preparation in slices, as AWX runs a sliced job template, then the fleet-wide job: the same end state.

AWX's workflow (awx/job_templates.yml): "Prepare InfiniBand nodes (sliced)" runs playbooks/nodes.yml as several
jobs, each on a part of the inventory, and "Fabric and cluster" then runs playbooks/fabric_cluster.yml over the
whole inventory. The jobs share nothing but Ansible's fact cache (AWX: use_fact_cache). Here each job is an
ansible-runner run of its own on a private data directory laid out as AWX lays one out, the slices as --limit.
ansible-runner keeps a job's facts in a jsonfile cache under its artifacts (artifacts/<job>/fact_cache); AWX
writes the hosts' stored facts there before a job and stores what the job left there after it, which _job does
with a directory of its own. The nodes start fresh (`labctl reset`); afterwards they must hold what one site
run gives them (test_lab_site.EXPECTED), the report must pass, and a second round must change nothing. Then a
slice that would give node03 a VF GUID node01 published in its own slice is refused before anything changes.
"""

import json
import shutil

import pytest

import labhost as lab
from test_lab_site import EXPECTED, _private_data_dir

SLICES = (("node01", "node02"), ("node03",))


@pytest.fixture(scope="module")
def job_root(tmp_path_factory):
    """One private data directory for every job of the workflow, and the fact cache the jobs share."""
    root = _private_data_dir(tmp_path_factory.mktemp("awx-workflow") / "pdd")
    (root.parent / "fact_cache").mkdir()
    return root


def _job(root, ident, playbook, limit=None, extravars=None):
    """One job of the workflow; returns its PLAY RECAP stats and its stdout."""
    argv = [lab.BIN / "ansible-runner", "run", root, "-p", playbook, "--ident", ident]
    if limit:
        argv += ["--limit", ",".join(limit)]
    if extravars is not None:
        (root / "env" / "extravars").write_text(json.dumps(extravars), encoding="utf-8")
    # As AWX does with use_fact_cache: the hosts' facts into the job's cache before it, what it left after it.
    store, artifacts = root.parent / "fact_cache", root / "artifacts" / ident
    shutil.copytree(store, artifacts / "fact_cache")
    proc = lab.run(argv)
    for path in (artifacts / "fact_cache").iterdir():
        shutil.copyfile(path, store / path.name)
    status = (artifacts / "status").read_text(encoding="utf-8").strip()
    events = [json.loads(p.read_text(encoding="utf-8")) for p in (artifacts / "job_events").glob("*.json")]
    stats = [e["event_data"] for e in events if e.get("event") == "playbook_on_stats"]
    return proc.returncode, status, stats[0] if stats else {}, (artifacts / "stdout").read_text(encoding="utf-8")


def _plain(value):
    """A cached value without ansible-core's data tags ({"value": ..., "tags": ..., "__ansible_type": ...})."""
    if isinstance(value, dict):
        if "__ansible_type" in value and "value" in value:
            return _plain(value["value"])
        return dict((key, _plain(item)) for key, item in value.items())
    if isinstance(value, list):
        return [_plain(item) for item in value]
    return value


def _cached(root, node):
    """A host's facts as the jobs left them in the store (ansible-core 2.19 names the jsonfile entry with a schema
    prefix, s1_<host>, and keeps the facts, with their data tags, as a JSON string under __payload__)."""
    (path,) = [p for p in (root.parent / "fact_cache").iterdir() if p.name == node or p.name.endswith("_" + node)]
    data = json.loads(path.read_text(encoding="utf-8"))
    return _plain(json.loads(data["__payload__"]) if "__payload__" in data else data)


def _extravars(root):
    """The survey's answers: reboots allowed (the lab's reboots are container restarts), the report beside the cache."""
    return {"infiniband_allow_reboot": True, "verify_report_dir": str(root.parent / "fabric-report")}


def _round(root, name):
    """The workflow once: the node slices, then the fleet-wide job. Returns the changed count per host of each job."""
    changed = {}
    for n, hosts in enumerate(SLICES):
        rc, status, stats, out = _job(root, "%s-slice%d" % (name, n), "playbooks/nodes.yml", limit=hosts, extravars=_extravars(root))
        assert (rc, status) == (0, "successful"), out[-4000:]
        assert sorted(stats["ok"]) == sorted(hosts) and not stats["failures"] and not stats["dark"], stats
        changed["slice%d" % n] = stats.get("changed", {})
    rc, status, stats, out = _job(root, "%s-fabric" % name, "playbooks/fabric_cluster.yml", extravars=_extravars(root))
    assert (rc, status) == (0, "successful"), out[-4000:]
    assert "all 3 nodes pass" in out, out[-3000:]
    changed["fabric"] = stats.get("changed", {})
    return changed


def test_sliced_preparation_then_fabric_job_equals_one_site_run(fresh_lab, job_root):
    _round(job_root, "first")
    for node, expected in EXPECTED.items():
        for pci, layer in expected["link_layers"].items():
            rdma = lab.state(node)["runtime"]["functions"][pci]["rdma"]
            assert lab.sysfs(node, "/sys/class/infiniband/%s/ports/1/link_layer" % rdma) == layer, (node, pci)
        for pci, count in expected["vfs"].items():
            assert lab.sysfs(node, "/sys/bus/pci/devices/%s/sriov_numvfs" % pci) == str(count), (node, pci)
        assert lab.state(node)["runtime"]["netns_mode"] == "exclusive"
        writes = [c for c in lab.calls(node) if c.get("kind") == "write" and c.get("rc") == 0 and c.get("tool") in ("mlxconfig", "mstconfig")]
        assert len(writes) == expected["fw_writes"], (node, [c["argv"] for c in writes])
        assert lab.boot_count(node) == expected["boots"], node
    # What the fleet-wide job read of the nodes came from the cache the slices wrote.
    for node in lab.NODES:
        cached = _cached(job_root, node)
        assert cached["infiniband_hca"]["hcas"], node
        assert "sriov_vf_guids" in cached, sorted(cached)
    report = json.loads((job_root.parent / "fabric-report" / "fabric-report.json").read_text(encoding="utf-8"))
    assert report["ok"] is True and sorted(h["host"] for h in report["hosts"]) == list(lab.NODES)


def test_second_round_changes_nothing(fresh_lab, job_root):
    boots = {n: lab.boot_count(n) for n in lab.NODES}
    changed = _round(job_root, "second")
    assert all(count == 0 for job in changed.values() for count in job.values()), changed
    assert {n: lab.boot_count(n) for n in lab.NODES} == boots


def test_a_slice_cannot_reuse_a_vf_guid_another_slice_published(fresh_lab, job_root):
    """node01 published its VF GUIDs in its own slice; node03's slice asks for one of them: refused before any change."""
    taken = _cached(job_root, "node01")["sriov_vf_guids"][0]
    before = {n: lab.durable_state(n) for n in lab.NODES}
    calls = len(lab.calls("node03"))
    pfs = [{"pf": "0000:86:00.0", "num_vfs": 2, "guids": [taken, "0x02fa0000000000ff"]}]
    rc, status, stats, out = _job(job_root, "dupe-slice", "playbooks/nodes.yml", limit=("node03",),
                                  extravars=dict(_extravars(job_root), sriov_pfs=pfs))
    assert status == "failed" and stats.get("failures", {}).get("node03"), out[-3000:]
    assert "%s on node01, node03" % taken.lower() in out, out[-3000:]
    assert {n: lab.durable_state(n) for n in lab.NODES} == before
    assert not [c for c in lab.calls("node03")[calls:] if c.get("kind") in ("write", "reset")]
