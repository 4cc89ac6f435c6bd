# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Node preparation in slices, as AWX runs a sliced job template, then the fleet-wide job: the same end state.

AWX's workflow (awx/job_templates.yml): "Prepare InfiniBand nodes (sliced)" runs playbooks/nodes.yml as several
jobs, each on a part of the inventory, and "Fabric and cluster" then runs playbooks/fabric_cluster.yml over the
whole inventory. The jobs share nothing but Ansible's fact cache (AWX: use_fact_cache). Here each job is an AWX job
of its own (tests/lab/awxjob.py): its own private data directory laid out as AWX lays one out, handed over through
`ansible-runner transmit | worker | process` as receptor hands a job to an execution node, the slices as --limit.
ansible-runner keeps a job's facts in a jsonfile cache under its artifacts (artifacts/<job>/fact_cache); AWX
writes the hosts' stored facts there before a job (transmit sends them with the directory) and stores what the
job left there after it (the worker returns the artifacts, process unpacks them), which _job does with a
directory of its own. The nodes start fresh (`labctl reset`); afterwards they must hold what one site
run gives them (test_lab_site.EXPECTED), the report must pass, and a second round must change nothing. Then a
slice that would give node03 a VF GUID node01 published in its own slice is refused before anything changes.
"""

import json

import pytest

import awxjob
import labhost as lab
from test_lab_site import EXPECTED

SLICES = (("node01", "node02"), ("node03",))


@pytest.fixture(scope="module")
def job_root(tmp_path_factory):
    """The workflow's directory: each job's private data directory (<job>/), the fact cache the jobs share
    (fact_cache/) and the report (fabric-report/)."""
    root = tmp_path_factory.mktemp("awx-workflow")
    (root / "fact_cache").mkdir()
    return root


def _job(root, sync, ident, playbook, limit=None, extravars=None):
    """One job of the workflow, on a private data directory of its own as AWX gives each job, through transmit |
    worker | process (tests/lab/awxjob.py), with the shared fact cache as AWX's use_fact_cache; returns the Job."""
    pdd = awxjob.private_data_dir(root / ident, sync, extravars if extravars is not None else _extravars(root))
    job = awxjob.run(pdd, ident, playbook, limit=limit, facts=root / "fact_cache")
    # The worker's return code is the playbook's; transmit and process must succeed whatever the job did.
    assert job.rcs["transmit"] == 0 and job.rcs["process"] == 0, job.rcs
    awxjob.assert_through_the_worker(job, pdd)
    return job


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
    (path,) = [p for p in (root / "fact_cache").iterdir() if p.name == node or p.name.endswith("_" + node)]
    data = json.loads(path.read_text(encoding="utf-8"))
    return _plain(json.loads(data["__payload__"]) if "__payload__" in data else data)


def _extravars(root):
    """The survey's answers: reboots allowed (the lab's reboots are container restarts), the report beside the cache."""
    return {"infiniband_allow_reboot": True, "verify_report_dir": str(root / "fabric-report")}


def _round(root, sync, name):
    """The workflow once: the node slices, then the fleet-wide job. Returns the changed count per host of each job."""
    changed = {}
    for n, hosts in enumerate(SLICES):
        job = _job(root, sync, "%s-slice%d" % (name, n), "playbooks/nodes.yml", limit=hosts)
        assert (job.rcs["worker"], job.status) == (0, "successful"), job.stdout[-4000:]
        assert sorted(job.stats["ok"]) == sorted(hosts) and not job.stats["failures"] and not job.stats["dark"], job.stats
        changed["slice%d" % n] = job.stats.get("changed", {})
        # The facts came back from the worker: process unpacked its fact cache into the job's artifacts.
        returned = [p.name for p in (job.artifacts / "fact_cache").iterdir()]
        assert all(any(p == h or p.endswith("_" + h) for p in returned) for h in hosts), returned
    job = _job(root, sync, "%s-fabric" % name, "playbooks/fabric_cluster.yml")
    assert (job.rcs["worker"], job.status) == (0, "successful"), job.stdout[-4000:]
    assert "all 3 nodes pass" in job.stdout, job.stdout[-3000:]
    changed["fabric"] = job.stats.get("changed", {})
    return changed


def test_sliced_preparation_then_fabric_job_equals_one_site_run(fresh_lab, project_sync, job_root):
    _round(job_root, project_sync, "first")
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
    report = json.loads((job_root / "fabric-report" / "fabric-report.json").read_text(encoding="utf-8"))
    assert report["ok"] is True and sorted(h["host"] for h in report["hosts"]) == list(lab.NODES)


def test_second_round_changes_nothing(fresh_lab, project_sync, job_root):
    boots = {n: lab.boot_count(n) for n in lab.NODES}
    changed = _round(job_root, project_sync, "second")
    assert all(count == 0 for job in changed.values() for count in job.values()), changed
    assert {n: lab.boot_count(n) for n in lab.NODES} == boots


def test_a_slice_cannot_reuse_a_vf_guid_another_slice_published(fresh_lab, project_sync, job_root):
    """node01 published its VF GUIDs in its own slice; node03's slice asks for one of them: refused before any change.
    node03's VFs carry other GUIDs now, so the slice consents to changing them (sriov_allow_guid_change): what refuses
    it must be the duplicate."""
    taken = _cached(job_root, "node01")["sriov_vf_guids"][0]
    before = {n: lab.durable_state(n) for n in lab.NODES}
    calls = len(lab.calls("node03"))
    pfs = [{"pf": "0000:86:00.0", "num_vfs": 2, "guids": [taken, "0x02fa0000000000ff"]}]
    job = _job(job_root, project_sync, "dupe-slice", "playbooks/nodes.yml", limit=("node03",),
               extravars=dict(_extravars(job_root), sriov_pfs=pfs, sriov_allow_guid_change=True))
    assert job.rcs["worker"] != 0 and job.status == "failed" and job.stats.get("failures", {}).get("node03"), job.stdout[-3000:]
    assert "%s on node01, node03" % taken.lower() in job.stdout, job.stdout[-3000:]
    assert {n: lab.durable_state(n) for n in lab.NODES} == before
    assert not [c for c in lab.calls("node03")[calls:] if c.get("kind") in ("write", "reset")]
