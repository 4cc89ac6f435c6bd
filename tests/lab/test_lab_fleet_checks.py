# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Fleet-wide checks that --limit cannot switch off (issue 22, class 3), on the lab's nodes.

- ipoib: a host of a --limit run cannot take an address another host published in an earlier job (the fact
  ipoib_interfaces in a jsonfile fact cache, as AWX's use_fact_cache keeps it) or that the inventory asks of a host
  that never ran the role; refused before any change.
- sriov: the same node under another inventory name (a renamed host) would re-derive every VF GUID; refused before
  any change, naming both sources, unless sriov_allow_guid_change, and sriov_guid_host_id keeps the old GUIDs; the
  consent does not reach past hosts of the inventory the run cannot see (issue 33, class 1): with a fact cache it does.

Runs on the lab instance of FABRIC_LAB_INSTANCE (its inventory in FABRIC_LAB_INVENTORY, as lab/labctl.py
inventory writes it), else on the demo lab. The lab nodes have no network stack running: ipoib writes
systemd-networkd files only (ipoib_network_stack: networkd, ipoib_apply_now: false).
"""

import json
import os
import subprocess
import sys

import pytest
import yaml

import labhost as lab

sys.path.insert(0, str(lab.REPO / "lab"))
import labctl  # noqa: E402  pylint: disable=wrong-import-position

INVENTORY = lab.INVENTORY
IPOIB_STACK = ["-e", "ipoib_network_stack=networkd", "-e", "ipoib_apply_now=false"]
PF03 = "0000:86:00.0"  # node03's ConnectX-5, SR-IOV on in its firmware (8 VFs), sriov_pfs: 2 VFs


def _port(node):
    with open(INVENTORY / "hosts.yml" if INVENTORY.is_dir() else INVENTORY, encoding="utf-8") as handle:
        return yaml.safe_load(handle)["all"]["children"]["ib_nodes"]["hosts"][node]["ansible_port"]


def _exec(node, *argv):
    proc = subprocess.run(["podman", "exec", labctl.PREFIX + node, *argv], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, check=False)
    assert proc.returncode == 0, proc.stdout
    return proc.stdout


def _state(node):
    """The node's simulated hardware (this lab instance's), without what the fabric sync rewrites every 2 s."""
    with open(os.path.join(labctl.CACHE, "nodes", node, "state", "state.json"), encoding="utf-8") as handle:
        return {k: v for k, v in json.load(handle).items() if k != "fabric_view"}


def _vf_guids(node, pf):
    out = _exec(node, "sh", "-c", "for v in /sys/bus/pci/devices/%s/virtfn*; do cat $v/infiniband/*/node_guid; done" % pf)
    return ["0x" + line.replace(":", "") for line in out.split()]


def _node_files(node):
    """Path, size and time of the files ipoib (networkd) and sriov write (a fresh node has neither directory)."""
    return _exec(node, "sh", "-c", "find /etc/systemd/network /etc/fabric-infiniband -xdev -type f -printf '%p %s %T@\\n' 2>/dev/null; true")


def _play(tmp_path, role, limit, hostvars, *extra, cache=None):
    """The role on the hosts of --limit, with the lab inventory and one of our own (per-host settings, other names)."""
    play = [{"hosts": "all", "gather_facts": False, "roles": [{"role": "fabric.infiniband." + role}]}]
    (tmp_path / "play.yml").write_text(yaml.safe_dump(play), encoding="utf-8")
    (tmp_path / "hosts.yml").write_text(yaml.safe_dump({"all": {"hosts": hostvars}}), encoding="utf-8")
    environment = lab.env(**({"ANSIBLE_CACHE_PLUGIN": "jsonfile", "ANSIBLE_CACHE_PLUGIN_CONNECTION": str(cache)} if cache else {}))
    proc = lab.run([lab.BIN / "ansible-playbook", "-i", INVENTORY, "-i", tmp_path / "hosts.yml", tmp_path / "play.yml",
                    "--limit", limit, *extra], environment=environment)
    return proc.returncode, " ".join(proc.stdout.split()), lab.recap(proc.stdout)


def test_ipoib_limit_cannot_take_an_address_published_or_asked_elsewhere(fresh_lab, tmp_path_factory):
    cache = tmp_path_factory.mktemp("fact_cache")
    hostvars = {"node01": {"ipoib_config": [{"device": "0000:3b:00.1", "addresses": ["10.99.0.1/24"]}]},
                "node03": {"ipoib_config": [{"device": PF03, "addresses": ["10.99.0.3/24"]}]}}
    # one job: node03 alone, which publishes its interfaces into the cache
    rc, out, recap = _play(tmp_path_factory.mktemp("job1"), "ipoib", "node03", hostvars, *IPOIB_STACK, cache=cache)
    assert rc == 0 and recap["node03"]["failed"] == 0, out[-3000:]
    # node03's inventory moves on (not applied yet): what node03 published still holds its address
    hostvars["node03"]["ipoib_config"][0]["addresses"] = ["10.99.0.30/24"]
    before = {n: (_state(n), _node_files(n)) for n in lab.NODES}
    for address, says in (("10.99.0.3/24", "duplicate address: 10.99.0.3 on node02/ibp193s0, node03/ibp134s0f0 (published)"),
                          ("10.99.0.1/24", "duplicate address: 10.99.0.1 on node01/0000:3b:00.1 port 1 (inventory), node02/ibp193s0")):
        hostvars["node02"] = {"ipoib_config": [{"device": "0000:c1:00.0", "addresses": [address]}]}
        rc, out, recap = _play(tmp_path_factory.mktemp("job2"), "ipoib", "node02", hostvars, *IPOIB_STACK, cache=cache)
        assert rc != 0 and recap["node02"]["failed"] == 1, out[-3000:]
        assert says in out and "Nothing was changed" in out, out[-3000:]
    assert {n: (_state(n), _node_files(n)) for n in lab.NODES} == before
    # an address of its own passes
    hostvars["node02"] = {"ipoib_config": [{"device": "0000:c1:00.0", "addresses": ["10.99.0.2/24"]}]}
    rc, out, recap = _play(tmp_path_factory.mktemp("job3"), "ipoib", "node02", hostvars, *IPOIB_STACK, cache=cache)
    assert rc == 0 and recap["node02"]["failed"] == 0, out[-3000:]


def test_sriov_renamed_host_keeps_its_vf_guids_unless_allowed(fresh_lab, tmp_path_factory):
    rc, out, recap = _play(tmp_path_factory.mktemp("first"), "sriov", "node03", {})
    assert rc == 0 and recap["node03"]["failed"] == 0, out[-3000:]
    old = _vf_guids("node03", PF03)
    old_id = int(old[0][6:14], 16)
    assert len(old) == 2 and old[0].startswith("0x02fa"), old
    # the same machine, renamed in the inventory
    renamed = {"gpu-a03": {"ansible_port": _port("node03"), "sriov_pfs": [{"pf": PF03, "num_vfs": 2}]}}
    before = {n: (_state(n), _node_files(n)) for n in lab.NODES}
    rc, out, recap = _play(tmp_path_factory.mktemp("renamed"), "sriov", "gpu-a03", renamed)
    assert rc != 0 and recap["gpu-a03"]["failed"] == 1, out[-3000:]
    for says in ("VFs 0, 1 carry %s, %s" % tuple(old), "(derived from the inventory name node03)",
                 "derived from the inventory name gpu-a03", "set sriov_guid_host_id: %d" % old_id,
                 "Nothing was changed", "sriov_allow_guid_change: true"):
        assert says in out, (says, out[-3000:])
    assert {n: (_state(n), _node_files(n)) for n in lab.NODES} == before
    assert _vf_guids("node03", PF03) == old
    # the host id the message gives keeps them: nothing changes
    rc, out, recap = _play(tmp_path_factory.mktemp("kept"), "sriov", "gpu-a03", renamed, "-e", "sriov_guid_host_id=%d" % old_id)
    assert rc == 0 and recap["gpu-a03"]["changed"] == 0, out[-3000:]
    assert _vf_guids("node03", PF03) == old
    # with consent, but the other hosts of the inventory unseen (no fact cache, outside --limit): the new GUIDs cannot be
    # checked against theirs, so the change is refused, naming them (issue 33, class 1)
    rc, out, recap = _play(tmp_path_factory.mktemp("unseen"), "sriov", "gpu-a03", renamed, "-e", "sriov_allow_guid_change=true")
    assert rc != 0 and recap["gpu-a03"]["failed"] == 1, out[-3000:]
    for says in ("cannot be checked against the VF GUIDs of", "node01", "node02", "node03", "Nothing was changed"):
        assert says in out, (says, out[-3000:])
    assert _vf_guids("node03", PF03) == old
    # with consent and every other host seen, through the fact cache a preflight of theirs filled (AWX: use_fact_cache): the
    # new name's GUIDs (node03's reading plans the GUIDs its VFs carry now, which the new ones do not take)
    cache = tmp_path_factory.mktemp("fact_cache")
    proc = lab.run([lab.BIN / "ansible-playbook", "-i", INVENTORY, lab.REPO / "playbooks" / "preflight.yml", "--limit", "node01,node02,node03"],
                   environment=lab.env(ANSIBLE_CACHE_PLUGIN="jsonfile", ANSIBLE_CACHE_PLUGIN_CONNECTION=str(cache)))
    assert proc.returncode == 0, proc.stdout[-3000:]
    rc, out, recap = _play(tmp_path_factory.mktemp("allowed"), "sriov", "gpu-a03", renamed, "-e", "sriov_allow_guid_change=true",
                           cache=cache)
    assert rc == 0 and recap["gpu-a03"]["failed"] == 0, out[-3000:]
    new = _vf_guids("node03", PF03)
    assert new != old and all(g.startswith("0x02fa") and int(g[6:14], 16) != old_id for g in new), new


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__, "-v"]))
