# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

import json

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.fabric.infiniband.plugins.filter.k8s_network_nads import k8s_network_nads as nads_filter
from ansible_collections.fabric.infiniband.plugins.plugin_utils import k8s_network as kn

k8s_network_nads = kn.nads

LABELS = {"app.kubernetes.io/managed-by": "fabric.infiniband.k8s_network"}


def _ipoib(name="ib-rail0", **extra):
    net = {"name": name, "type": "ipoib", "master": "ibp59s0f0", "ipam": {"range": "10.56.0.0/16"}}
    net.update(extra)
    return net


def _vf(name="ib-vf", **extra):
    net = {"name": name, "type": "ib-sriov", "resource_name": "mellanox.com/mlnx_sriov_rdma_ib",
           "ipam": {"range": "10.57.0.0/16"}}
    net.update(extra)
    return net


def test_ipoib_pkey_child_mtu_and_full_ipam():
    nads = k8s_network_nads([_ipoib(pkey="0x0001", mtu=4092, namespace="hpc",
                                    ipam={"range": "10.56.0.0/16", "range_start": "10.56.1.0", "range_end": "10.56.9.255",
                                          "exclude": ["10.56.0.0/24", "10.56.255.255"], "gateway": "10.56.0.1",
                                          "routes": [{"dst": "10.58.0.0/16", "gw": "10.56.0.1"}]})], labels=LABELS)
    assert len(nads) == 1
    nad = nads[0]
    assert (nad["apiVersion"], nad["kind"]) == ("k8s.cni.cncf.io/v1", "NetworkAttachmentDefinition")
    assert nad["metadata"] == {"name": "ib-rail0", "namespace": "hpc", "labels": LABELS}
    config = json.loads(nad["spec"]["config"])
    assert config == {
        "cniVersion": "0.3.1", "name": "ib-rail0", "type": "ipoib", "master": "ibp59s0f0.8001", "mtu": 4092,
        "ipam": {"type": "whereabouts", "datastore": "kubernetes",
                 "kubernetes": {"kubeconfig": "/etc/cni/net.d/whereabouts.d/whereabouts.kubeconfig"},
                 "range": "10.56.0.0/16", "range_start": "10.56.1.0", "range_end": "10.56.9.255",
                 "exclude": ["10.56.0.0/24", "10.56.255.255/32"], "gateway": "10.56.0.1",
                 "routes": [{"dst": "10.58.0.0/16", "gw": "10.56.0.1"}]},
    }


def test_ipoib_child_given_as_master_and_no_mtu():
    config = json.loads(k8s_network_nads([_ipoib(master="ib0.8002")])[0]["spec"]["config"])
    assert config["master"] == "ib0.8002" and "mtu" not in config


def test_ib_sriov_defaults_and_annotation():
    nad = k8s_network_nads([_vf(pkey=5, rdma_isolation=True)], rdma_netns="exclusive",
                           resource_names=["mellanox.com/mlnx_sriov_rdma_ib"])[0]
    assert nad["metadata"]["namespace"] == "default"
    assert nad["metadata"]["annotations"] == {"k8s.v1.cni.cncf.io/resourceName": "mellanox.com/mlnx_sriov_rdma_ib"}
    config = json.loads(nad["spec"]["config"])
    assert {k: config[k] for k in ("type", "pkey", "link_state", "rdmaIsolation", "ibKubernetesEnabled")} == {
        "type": "ib-sriov", "pkey": "0x0005", "link_state": "enable", "rdmaIsolation": True, "ibKubernetesEnabled": False}
    assert config["ipam"]["range"] == "10.57.0.0/16"


def test_ipv6_range_and_overlap_allowed_on_both():
    nads = k8s_network_nads([_ipoib(ipam={"range": "fd10::/64", "gateway": "fd10::1"}),
                             _ipoib("ib-rail1", allow_overlap=True, ipam={"range": "10.56.0.0/16"}),
                             _vf(allow_overlap=True, ipam={"range": "10.56.128.0/17"})])
    assert [json.loads(n["spec"]["config"])["ipam"]["range"] for n in nads] == ["fd10::/64", "10.56.0.0/16", "10.56.128.0/17"]


NODES = {
    "node01": {"rdma_netns_mode": "exclusive", "sriov_state": [{"pf": "0000:3b:00.0", "num_vfs": 4}],
               "ipoib_interfaces": [{"netdev": "ibp59s0f0", "children": [{"pkey": "0x8001", "name": "ibp59s0f0.8001"}]}]},
    "node02": {"rdma_netns_mode": "exclusive", "sriov_state": [],
               "ipoib_interfaces": [{"netdev": "ibp59s0f0", "children": []}]},
    "node03": {"rdma_netns_mode": None, "sriov_state": None, "ipoib_interfaces": None},
}


def test_node_facts_give_the_mode_and_check_masters_and_vfs():
    nads = k8s_network_nads([_ipoib(), _vf(rdma_isolation=True)], nodes=NODES)
    assert json.loads(nads[0]["spec"]["config"])["master"] == "ibp59s0f0"
    assert json.loads(nads[1]["spec"]["config"])["rdmaIsolation"] is True
    # the nodes are exclusive: the shared device plugin is refused even though rdma_netns was left unknown
    with pytest.raises(ValueError, match="shared device plugin needs"):
        k8s_network_nads([_ipoib()], device_plugin="rdma_shared", nodes=NODES)
    # nodes that published nothing are not checked
    assert len(k8s_network_nads([_ipoib(master="ib9")], nodes={"node03": NODES["node03"]})) == 1


def test_nothing_to_do():
    assert k8s_network_nads([]) == [] and k8s_network_nads(None) == []


BAD = [
    ("overlapping ranges", [_ipoib(), _vf(ipam={"range": "10.56.4.0/24"})], {}, "overlaps 10.56.0.0/16"),
    ("overlap allowed on one side only", [_ipoib(allow_overlap=True), _vf(ipam={"range": "10.56.4.0/24"})], {}, "overlaps"),
    ("invalid CIDR", [_ipoib(ipam={"range": "10.56.0.300/16"})], {}, "is not a CIDR"),
    ("range without prefix", [_ipoib(ipam={"range": "10.56.0.0"})], {}, "is not a CIDR"),
    ("range with host bits", [_ipoib(ipam={"range": "10.56.0.7/16"})], {}, "has host bits set"),
    ("gateway outside", [_ipoib(ipam={"range": "10.56.0.0/16", "gateway": "10.57.0.1"})], {}, "gateway 10.57.0.1 is outside"),
    ("exclude outside", [_ipoib(ipam={"range": "10.56.0.0/16", "exclude": ["10.0.0.0/8"]})], {}, "exclude 10.0.0.0/8 is outside"),
    ("range_start after range_end", [_ipoib(ipam={"range": "10.56.0.0/16", "range_start": "10.56.9.0", "range_end": "10.56.1.0"})],
     {}, "is after"),
    ("route gateway outside", [_ipoib(ipam={"range": "10.56.0.0/16", "routes": [{"dst": "0.0.0.0/0", "gw": "10.1.0.1"}]})],
     {}, "gw 10.1.0.1 is outside"),
    ("missing range", [_ipoib(ipam={"gateway": "10.56.0.1"})], {}, "ipam.range is required"),
    ("unknown ipam key", [_ipoib(ipam={"range": "10.56.0.0/16", "subnet": "10.56.0.0/16"})], {}, "unknown ipam keys subnet"),
    ("pkey with the membership bit", [_vf(pkey="0x8001")], {}, "pkey: '0x8001' is not an accepted P_Key (0x8001 carries the full-membership bit"),
    ("pkey zero", [_ipoib(pkey=0)], {}, "pkey: 0 is not an accepted P_Key"),
    ("pkey not a number", [_vf(pkey="full")], {}, "pkey: 'full' is not an accepted P_Key"),
    # issue 22: "20" was 0x0020 here and 0x0014 for opensm and ipoib; now refused everywhere
    ("pkey decimal text", [_vf(pkey="20")], {}, "pkey: '20' is not an accepted P_Key (a P_Key string is hexadecimal with the 0x prefix"),
    ("ipoib master and child both", [_ipoib(master="ib0.8001", pkey=2)], {}, "not both"),
    ("ipoib without master", [{"name": "x", "type": "ipoib", "ipam": {"range": "10.1.0.0/24"}}], {}, "master None"),
    ("ipoib mtu too large", [_ipoib(mtu=70000)], {}, "mtu 70000 is out of range"),
    ("unknown resource name", [_vf(resource_name="nvidia.com/other")], {"resource_names": ["mellanox.com/mlnx_sriov_rdma_ib"]},
     "not offered by the device plugin"),
    ("malformed resource name", [_vf(resource_name="mlnx_sriov_rdma_ib")], {}, "is not <prefix>/<name>"),
    ("rdmaIsolation with shared netns", [_vf(rdma_isolation=True)], {"rdma_netns": "shared"}, "needs the RDMA network namespace mode exclusive"),
    ("shared device plugin with exclusive netns", [_ipoib()], {"device_plugin": "rdma_shared", "rdma_netns": "exclusive"},
     "shared device plugin needs the RDMA network namespace mode shared"),
    ("ib-sriov without the SR-IOV device plugin", [_vf()], {"device_plugin": "rdma_shared"}, "needs the SR-IOV network device plugin"),
    ("bad link state", [_vf(link_state="up")], {}, "link_state 'up'"),
    ("key of the other type", [_ipoib(rdma_isolation=True)], {}, "unknown keys rdma_isolation"),
    ("unknown type", [_ipoib(type="macvlan")], {}, "type 'macvlan'"),
    ("name not a DNS label", [_ipoib(name="IB_Rail")], {}, "is not a DNS label"),
    ("defined twice", [_ipoib(), _ipoib(ipam={"range": "10.9.0.0/16"})], {}, "defined twice"),
    ("nodes disagree on the netns mode", [_ipoib()],
     {"nodes": {"node01": {"rdma_netns_mode": "exclusive"}, "node02": {"rdma_netns_mode": "shared"}}},
     "modes differ (exclusive: node01; shared: node02)"),
    ("netns mode given conflicts with the nodes", [_ipoib()],
     {"rdma_netns": "shared", "nodes": {"node01": {"rdma_netns_mode": "exclusive"}}}, "k8s_network_rdma_netns is shared but the nodes are exclusive"),
    ("shared device plugin on exclusive nodes", [_ipoib()],
     {"device_plugin": "rdma_shared", "nodes": {"node01": {"rdma_netns_mode": "exclusive"}}}, "shared device plugin needs"),
    ("rdmaIsolation on shared nodes", [_vf(rdma_isolation=True)],
     {"nodes": {"node01": {"rdma_netns_mode": "shared"}}}, "needs the RDMA network namespace mode exclusive"),
    ("master unknown on a node", [_ipoib(pkey="0x0001")], {"nodes": NODES}, "master ibp59s0f0.8001 is not an IPoIB interface of node02"),
    ("ib-sriov without VFs on any node", [_vf()],
     {"nodes": {"node01": {"sriov_state": [{"pf": "0000:3b:00.0", "num_vfs": 0}]}}}, "no node has VFs"),
]


@pytest.mark.parametrize("networks, options, says", [case[1:] for case in BAD], ids=[case[0] for case in BAD])
def test_bad_input_is_refused(networks, options, says):
    with pytest.raises(ValueError, match=None) as caught:
        k8s_network_nads(networks, **options)
    assert says in str(caught.value)


@pytest.mark.parametrize("text, expected", [("false", False), ("no", False), ("true", True), (True, True)])
def test_text_booleans_mean_what_they_say(text, expected):
    """rdma_isolation: "false" (text, as -e and AWX pass it) was bool("false"), true (issue 22)."""
    nad = k8s_network_nads([_vf(rdma_isolation=text, ib_kubernetes=text)], rdma_netns="exclusive")[0]
    config = json.loads(nad["spec"]["config"])
    assert (config["rdmaIsolation"], config["ibKubernetesEnabled"]) == (expected, expected)


def test_a_boolean_word_is_refused():
    with pytest.raises(ValueError, match=r"network 'ib-vf': rdma_isolation: 'maybe' is not a boolean; accepted: true or false"):
        k8s_network_nads([_vf(rdma_isolation="maybe")])


def _hca_fact(netdev="ibp59s0f0", link_layer="InfiniBand", netdevs=None):
    return {"hcas": [{"pci_address": "0000:3b:00.0", "netdevs": netdevs if netdevs is not None else [netdev],
                      "ports": [{"port": 1, "link_layer": link_layer, "netdev": netdev}]}]}


def test_a_node_without_ipoib_interfaces_is_checked_against_its_adapters():
    """A job over the cluster only (--tags cluster, or fabric_cluster.yml with a fact cache that holds no ipoib fact):
    the nodes' infiniband_hca still names their IPoIB netdevs."""
    nodes = {"node01": {"ipoib_interfaces": None, "infiniband_hca": _hca_fact()},
             "node02": {"ipoib_interfaces": None, "infiniband_hca": _hca_fact("ibp134s0f0")}}
    says = r"master ibp59s0f0 is not an IPoIB interface of node02 \(infiniband_hca of node02; known: ibp134s0f0, ibp59s0f0\)"
    with pytest.raises(ValueError, match=says):
        k8s_network_nads([_ipoib()], nodes=nodes)
    # a PKey child: its parent must be there (the child may be made after the reading)
    nodes["node02"]["infiniband_hca"] = _hca_fact()
    assert json.loads(k8s_network_nads([_ipoib(pkey=1)], nodes=nodes)[0]["spec"]["config"])["master"] == "ibp59s0f0.8001"
    with pytest.raises(ValueError, match="master ib9.8001 is not an IPoIB interface of node01, node02 .infiniband_hca of node01, node02;"):
        k8s_network_nads([_ipoib(master="ib9.8001")], nodes=nodes)
    # an Ethernet port's netdev is no IPoIB master
    with pytest.raises(ValueError, match="master enp59s0f0 is not an IPoIB interface of node01"):
        k8s_network_nads([_ipoib(master="enp59s0f0")], nodes={"node01": {"infiniband_hca": _hca_fact("enp59s0f0", "Ethernet")}})


def test_the_ipoib_fact_wins_over_the_adapters():
    nodes = {"node01": {"ipoib_interfaces": [{"netdev": "ibp59s0f1", "children": []}], "infiniband_hca": _hca_fact()}}
    with pytest.raises(ValueError, match=r"master ibp59s0f0 is not an IPoIB interface of node01 \(ipoib_interfaces of node01;"):
        k8s_network_nads([_ipoib()], nodes=nodes)


# ------------------------------------------------------------------ the role's step (plugins/action/k8s_network.py)

def test_the_filter_is_the_same_code_and_fails_as_a_filter():
    assert nads_filter([_ipoib()], labels=LABELS) == kn.nads([_ipoib()], labels=LABELS)
    with pytest.raises(AnsibleFilterError, match="is not ipoib or ib-sriov"):
        nads_filter([_ipoib(type="macvlan")])


DEFAULTS = {"k8s_network_registry": "mirror:5000/ghcr", "k8s_network_multus_version": "v4.2.4",
            "k8s_network_whereabouts_version": "v0.9.4", "k8s_network_ipoib_cni_version": "v1.2.0",
            "k8s_network_ib_sriov_cni_version": "v1.2.0", "k8s_network_sriov_device_plugin_version": "v3.9.0",
            "k8s_network_rdma_shared_device_plugin_version": "v1.5.3", "k8s_network_device_plugin": "sriov",
            "k8s_network_device_plugin_deploy": True, "k8s_network_resource_names": [],
            "k8s_network_sriov_resources": [{"name": "a"}, {"name": "b", "prefix": "example.com"}]}


def test_template_vars_name_the_pinned_images_and_the_label():
    out = kn.template_vars(DEFAULTS)
    assert out["__k8s_network_multus_image"] == "mirror:5000/ghcr/k8snetworkplumbingwg/multus-cni:v4.2.4-thick"
    assert out["__k8s_network_rdma_shared_dp_image"] == "mirror:5000/ghcr/mellanox/k8s-rdma-shared-dev-plugin:v1.5.3"
    assert out["__k8s_network_labels"] == LABELS and out["__k8s_network_selector"] == kn.SELECTOR
    assert out["__k8s_network_resource_names"] == ["mellanox.com/a", "example.com/b"]


@pytest.mark.parametrize("changes, expected", [
    ({}, ["mellanox.com/a", "example.com/b"]),
    ({"k8s_network_resource_names": ["x.io/y"]}, ["x.io/y"]),
    ({"k8s_network_device_plugin_deploy": "false"}, []),
    ({"k8s_network_device_plugin": "rdma_shared"}, []),
])
def test_offered_names(changes, expected):
    assert kn.offered_names(dict(DEFAULTS, **changes)) == expected


def test_templates_follow_the_switches():
    assert kn.templates({}) == (["crds.yml.j2"], ["multus.yml.j2", "whereabouts.yml.j2", "cni.yml.j2", "device_plugin.yml.j2"])
    assert kn.templates({"k8s_network_multus_enabled": "false", "k8s_network_whereabouts_enabled": False,
                         "k8s_network_cni_install": "archive", "k8s_network_device_plugin_deploy": "no"}) == (["crds.yml.j2"], [])


class Ctx:
    def __init__(self, hosts=("node01", "node02"), hostvars=None):
        self.groups = {"all": list(hosts)}
        self._hostvars = hostvars or {}
        self.host = "k8s1"

    def var(self, name, default=None):
        return default

    def hostvar(self, host, name, default=None):
        return (self._hostvars.get(host) or {}).get(name, default)

    def hostvalues(self, host, names):
        return dict((name, value) for name, value in (self._hostvars.get(host) or {}).items() if name in names)

    def fact(self, host, name):
        return ((self._hostvars.get(host) or {}).get("ansible_facts") or {}).get(name)


def test_checks_name_every_problem_at_once():
    settings = {"k8s_network_nodes": ["node01", "node99"], "k8s_network_whereabouts_reconciler_schedule": "30 4 * *",
                "k8s_network_networks": [_ipoib(ipam={"range": "10.56.0.0/33"})]}
    problems, made = kn.checks(Ctx(), settings)
    assert made == []
    assert problems[0] == ("k8s_network_nodes: node99 not in the inventory; accepted: inventory host names (for instance "
                           "groups['ib_nodes'])")
    assert problems[1].startswith('k8s_network_whereabouts_reconciler_schedule: "30 4 * *" is not a cron expression')
    assert "ipam.range '10.56.0.0/33' is not a CIDR" in problems[2]


@pytest.mark.parametrize("schedule, ok", [("30 4 * * *", True), ("@daily", True), ("@every 6h", True), (" 0 */6 * * 1-5 ", True),
                                          ("30 4 * *", False), ("", False), (5, False)])
def test_the_reconciler_schedule(schedule, ok):
    assert (kn.schedule_problem({"k8s_network_whereabouts_reconciler_schedule": schedule}) is None) is ok
    # not checked when whereabouts is not deployed
    assert kn.schedule_problem({"k8s_network_whereabouts_enabled": "false",
                                "k8s_network_whereabouts_reconciler_schedule": schedule}) is None


def test_checks_return_the_nads_with_the_label_and_the_nodes_state():
    ctx = Ctx()
    facts = kn.node_facts(["node01"], ctx.hostvar, ctx.fact)
    assert facts == {"node01": {"rdma_netns_mode": None, "ipoib_interfaces": None, "sriov_state": None, "infiniband_hca": None}}
    problems, made = kn.checks(ctx, {"k8s_network_networks": [_ipoib()]}, facts)
    assert problems == [] and made[0]["metadata"]["labels"] == LABELS
    ctx = Ctx(hostvars={"node01": {"ipoib_interfaces": [{"netdev": "ib9", "children": []}], "secret": "x"}})
    facts = kn.node_facts(["node01"], ctx.hostvar, ctx.fact)
    assert "secret" not in facts["node01"]
    problems, _made = kn.checks(ctx, {"k8s_network_networks": [_ipoib()]}, facts)
    assert "master ibp59s0f0 is not an IPoIB interface of node01" in problems[0]
    # the run's preflight leaves the nodes' published state out
    assert kn.checks(ctx, {"k8s_network_networks": [_ipoib()]}, None)[0] == []


def test_objects_batches_and_definitions():
    objs = kn.objects(["---\na: 1\n---\n", "b: 2\n---\nc: 3\n"])
    assert objs == [{"a": 1}, {"b": 2}, {"c": 3}]
    assert kn.batches(objs) == [objs] and kn.batches(objs, diff=True) == [[o] for o in objs] and kn.batches([]) == []
    assert kn.definition([{"a": 1}]) == {"a": 1} and kn.definition(objs) == objs
    assert kn.batch_names([{"metadata": {"name": "x"}}, {"metadata": {"name": "y"}}]) == "x, y"


def test_stale_nads_and_crd_users():
    wanted = kn.nads([_ipoib()])
    found = [{"metadata": {"namespace": "default", "name": "ib-rail0"}}, {"metadata": {"namespace": "hpc", "name": "ib-rail0"}},
             {"metadata": {"namespace": "default", "name": "old"}}]
    assert kn.stale_nads(found, wanted) == found[1:]
    crd = {"spec": {"group": "whereabouts.cni.cncf.io", "names": {"kind": "IPPool"},
                    "versions": [{"name": "v1alpha1", "storage": False}, {"name": "v1", "storage": True}]}}
    assert kn.crd_users_query(crd) == ("whereabouts.cni.cncf.io/v1", "IPPool")
