# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The k8s_network role's manifests rendered offline, with the role's defaults and vars and Ansible's own filters,
then checked for the keys each object needs: every object labelled for `state: absent`, pinned images from the
registry asked for, memory limits, no CPU limit on Multus, the node selector, the CRDs and their kinds."""

from __future__ import annotations

import json
import os

import jinja2
import pytest
import yaml
from ansible.plugins.filter.core import FilterModule as CoreFilters
from ansible.plugins.filter.mathstuff import FilterModule as MathFilters

from ansible_collections.fabric.infiniband.plugins.plugin_utils import k8s_network

ROLE = os.path.join(os.path.dirname(__file__), "..", "..", "..", "roles", "k8s_network")
LABEL = ("app.kubernetes.io/managed-by", "fabric.infiniband.k8s_network")


def _env():
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(os.path.join(ROLE, "templates")), trim_blocks=True,
                             keep_trailing_newline=True, undefined=jinja2.StrictUndefined)
    env.filters.update(CoreFilters().filters())
    env.filters.update(MathFilters().filters())
    return env


def _variables(**overrides):
    with open(os.path.join(ROLE, "defaults", "main.yml")) as handle:
        vs = yaml.safe_load(handle)
    vs.update(overrides)
    # the role's own values (labels, image names), as its step computes them
    vs.update(k8s_network.template_vars(vs))
    return vs


def _render(name, **overrides):
    return [doc for doc in yaml.safe_load_all(_env().get_template(name).render(**_variables(**overrides))) if doc]


def _all(**overrides):
    return (_render("crds.yml.j2", **overrides) + _render("multus.yml.j2", **overrides) + _render("whereabouts.yml.j2", **overrides)
            + _render("cni.yml.j2", **overrides) + _render("device_plugin.yml.j2", **overrides))


def test_every_object_has_kind_name_and_the_label():
    objects = _all()
    assert [(o["kind"], o["metadata"]["name"]) for o in objects] == [
        ("CustomResourceDefinition", "network-attachment-definitions.k8s.cni.cncf.io"),
        ("CustomResourceDefinition", "ippools.whereabouts.cni.cncf.io"),
        ("CustomResourceDefinition", "overlappingrangeipreservations.whereabouts.cni.cncf.io"),
        ("CustomResourceDefinition", "nodeslicepools.whereabouts.cni.cncf.io"),
        ("ServiceAccount", "multus"), ("ClusterRole", "multus"), ("ClusterRoleBinding", "multus"),
        ("ConfigMap", "multus-daemon-config"), ("DaemonSet", "kube-multus-ds"),
        ("ServiceAccount", "whereabouts"), ("ClusterRole", "whereabouts-cni"), ("ClusterRoleBinding", "whereabouts"),
        ("ConfigMap", "whereabouts-config"), ("DaemonSet", "whereabouts"), ("Deployment", "whereabouts-reconciler"),
        ("DaemonSet", "kube-ipoib-cni-ds"), ("DaemonSet", "kube-ib-sriov-cni-ds"),
        ("ServiceAccount", "sriov-device-plugin"), ("ConfigMap", "sriovdp-config"), ("DaemonSet", "kube-sriov-device-plugin"),
    ]
    for obj in objects:
        assert obj["metadata"]["labels"][LABEL[0]] == LABEL[1], obj["metadata"]["name"]
        assert obj["apiVersion"] and (obj["kind"] in ("CustomResourceDefinition", "ClusterRole", "ClusterRoleBinding")
                                      or obj["metadata"]["namespace"] == "kube-system")


def test_crds_are_structural_and_name_their_kinds():
    crds = {c["metadata"]["name"]: c["spec"] for c in _render("crds.yml.j2")}
    for name, spec in crds.items():
        assert name == "%s.%s" % (spec["names"]["plural"], spec["group"])
        assert spec["scope"] == "Namespaced"
        (version,) = spec["versions"]
        assert version["served"] and version["storage"] and version["schema"]["openAPIV3Schema"]["type"] == "object"
    nad = crds["network-attachment-definitions.k8s.cni.cncf.io"]
    assert nad["names"]["kind"] == "NetworkAttachmentDefinition" and nad["versions"][0]["name"] == "v1"
    assert nad["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["config"]["type"] == "string"
    assert {c["names"]["kind"] for c in crds.values()} == {"NetworkAttachmentDefinition", "IPPool", "OverlappingRangeIPReservation",
                                                           "NodeSlicePool"}


def _by_kind(objects, kind, name):
    return next(o for o in objects if o["kind"] == kind and o["metadata"]["name"] == name)


def test_multus_daemonset_pinned_sized_and_selected():
    objects = _all(k8s_network_registry="mirror.example.net:5000/ghcr", k8s_network_node_selector={"fabric.infiniband/ib": "true"})
    ds = _by_kind(objects, "DaemonSet", "kube-multus-ds")["spec"]["template"]["spec"]
    (daemon,) = ds["containers"]
    (init,) = ds["initContainers"]
    assert daemon["image"] == init["image"] == "mirror.example.net:5000/ghcr/k8snetworkplumbingwg/multus-cni:v4.2.4-thick"
    assert daemon["command"] == ["/usr/src/multus-cni/bin/multus-daemon"]
    assert init["command"][:1] == ["/usr/src/multus-cni/bin/install_multus"] and "thick" in init["command"]
    assert daemon["resources"]["limits"] == {"memory": "512Mi"} and "cpu" not in daemon["resources"]["limits"]
    assert daemon["resources"]["requests"]["memory"] == "128Mi"
    assert ds["nodeSelector"] == {"kubernetes.io/os": "linux", "fabric.infiniband/ib": "true"}
    assert ds["serviceAccountName"] == "multus" and ds["hostNetwork"] is True
    mounts = {m["name"] for m in daemon["volumeMounts"]}
    assert mounts <= {v["name"] for v in ds["volumes"]}


def test_no_image_is_latest_or_snapshot():
    for obj in _all():
        if obj["kind"] in ("DaemonSet", "Deployment"):
            pod = obj["spec"]["template"]["spec"]
            for container in pod.get("initContainers", []) + pod["containers"]:
                tag = container["image"].rsplit(":", 1)[1]
                assert tag not in ("latest", "snapshot-thick", "stable-thick", "snapshot") and tag.startswith("v"), container["image"]


def test_multus_daemon_config_is_json():
    config = json.loads(_by_kind(_all(), "ConfigMap", "multus-daemon-config")["data"]["daemon-config.json"])
    assert config["multusConfigFile"] == "auto" and config["socketDir"] == "/host/run/multus/"
    assert config["chrootDir"] == "/hostroot" and config["logLevel"] == "error"


def test_whereabouts_daemonset_and_reconciler():
    objects = _all(k8s_network_whereabouts_version="v0.9.5")
    ds = _by_kind(objects, "DaemonSet", "whereabouts")["spec"]["template"]["spec"]
    rec = _by_kind(objects, "Deployment", "whereabouts-reconciler")["spec"]
    assert ds["containers"][0]["image"] == rec["template"]["spec"]["containers"][0]["image"] == \
        "ghcr.io/k8snetworkplumbingwg/whereabouts:v0.9.5"
    assert rec["replicas"] == 1 and rec["template"]["spec"]["containers"][0]["command"] == ["/ip-reconciler"]
    assert {v["hostPath"]["path"] for v in ds["volumes"]} == {"/opt/cni/bin", "/etc/cni/net.d"}
    rules = _by_kind(objects, "ClusterRole", "whereabouts-cni")["rules"]
    assert "nodeslicepools" in rules[0]["resources"]


@pytest.mark.parametrize("multus, whereabouts, kinds", [
    (False, True, {"IPPool", "OverlappingRangeIPReservation", "NodeSlicePool"}),
    (True, False, {"NetworkAttachmentDefinition"}),
    (False, False, set()),
])
def test_components_can_be_left_out(multus, whereabouts, kinds):
    crds = _render("crds.yml.j2", k8s_network_multus_enabled=multus, k8s_network_whereabouts_enabled=whereabouts)
    assert {c["spec"]["names"]["kind"] for c in crds} == kinds


def test_cni_daemonsets_copy_into_the_cni_directory():
    objects = _render("cni.yml.j2", k8s_network_registry="mirror.example.net:5000", k8s_network_cni_bin_dir="/usr/libexec/cni",
                      k8s_network_node_selector={"fabric.infiniband/ib": "true"})
    images = {}
    for ds in objects:
        pod = ds["spec"]["template"]["spec"]
        (container,) = pod["containers"]
        images[ds["metadata"]["name"]] = container["image"]
        assert container["volumeMounts"] == [{"name": "cnibin", "mountPath": "/host/opt/cni/bin"}]
        assert pod["volumes"] == [{"name": "cnibin", "hostPath": {"path": "/usr/libexec/cni"}}]
        assert pod["nodeSelector"]["fabric.infiniband/ib"] == "true"
        assert ds["spec"]["selector"]["matchLabels"].items() <= pod.get("metadata", ds["spec"]["template"]["metadata"])["labels"].items()
    assert images == {"kube-ipoib-cni-ds": "mirror.example.net:5000/mellanox/ipoib-cni:v1.2.0",
                      "kube-ib-sriov-cni-ds": "mirror.example.net:5000/k8snetworkplumbingwg/ib-sriov-cni:v1.2.0"}
    assert [d["metadata"]["name"] for d in _render("cni.yml.j2", k8s_network_cni_plugins=["ib-sriov"])] == ["kube-ib-sriov-cni-ds"]


def test_sriov_device_plugin_selects_ib_vfs_with_rdma():
    objects = _render("device_plugin.yml.j2", k8s_network_sriov_resources=[
        {"name": "rail0", "prefix": "fabric.example.net", "devices": ["101e"], "drivers": ["mlx5_core"],
         "link_types": ["infiniband"], "pf_names": ["ibp24s0"]},
        {"name": "any", "link_types": []}])
    config = json.loads(_by_kind(objects, "ConfigMap", "sriovdp-config")["data"]["config.json"])
    assert config == {"resourceList": [
        {"resourceName": "rail0", "resourcePrefix": "fabric.example.net",
         "selectors": {"vendors": ["15b3"], "devices": ["101e"], "drivers": ["mlx5_core"], "linkTypes": ["infiniband"],
                       "pfNames": ["ibp24s0"], "isRdma": True}},
        {"resourceName": "any", "resourcePrefix": "mellanox.com", "selectors": {"vendors": ["15b3"], "isRdma": True}}]}
    pod = _by_kind(objects, "DaemonSet", "kube-sriov-device-plugin")["spec"]["template"]["spec"]
    assert pod["containers"][0]["image"] == "ghcr.io/k8snetworkplumbingwg/sriov-network-device-plugin:v3.9.0"
    assert {"name": "config-volume", "mountPath": "/etc/pcidp", "readOnly": True} in pod["containers"][0]["volumeMounts"]
    assert pod["serviceAccountName"] == "sriov-device-plugin"
    default = json.loads(_by_kind(_render("device_plugin.yml.j2"), "ConfigMap", "sriovdp-config")["data"]["config.json"])
    assert default["resourceList"][0]["selectors"]["linkTypes"] == ["infiniband"]
    assert "101c" in default["resourceList"][0]["selectors"]["devices"]


def test_rdma_shared_device_plugin_and_none():
    objects = _render("device_plugin.yml.j2", k8s_network_device_plugin="rdma_shared")
    assert [(o["kind"], o["metadata"]["name"]) for o in objects] == [("ConfigMap", "rdma-devices"), ("DaemonSet", "rdma-shared-dp-ds")]
    config = json.loads(objects[0]["data"]["config.json"])
    assert config["configList"] == [{"resourceName": "rdma_shared_ib", "rdmaHcaMax": 63,
                                     "selectors": {"vendors": ["15b3"], "linkTypes": ["infiniband"]}}]
    pod = objects[1]["spec"]["template"]["spec"]
    assert pod["containers"][0]["image"] == "ghcr.io/mellanox/k8s-rdma-shared-dev-plugin:v1.5.3"
    assert _render("device_plugin.yml.j2", k8s_network_device_plugin="none") == []


# The lab's API server is 1.20 (the newest that builds here), used by molecule's server-side dry run; clusters are
# newer. kubernetes-validate (bundled OpenAPI schemas, offline) checks the built-in kinds against the schemas of every
# Kubernetes release it ships from 1.28 on; NetworkAttachmentDefinitions are custom resources it does not know.
def _schema_versions():
    try:
        from kubernetes_validate.utils import all_versions
    except ImportError:  # listed in requirements-dev*.txt; without it the test below fails, it is not skipped
        return ["1.28.0"]
    return sorted({v for v in all_versions() if tuple(int(x) for x in v.split(".")[:2]) >= (1, 28)},
                  key=lambda v: tuple(int(x) for x in v.split(".")))


def test_schema_versions_reach_the_newest():
    versions = _schema_versions()
    from kubernetes_validate.utils import latest_version
    assert versions[0] == "1.28.0" and versions[-1] == latest_version() and len(versions) >= 10, versions


@pytest.mark.parametrize("version", _schema_versions())
def test_manifests_validate_against_kubernetes_schemas(version):
    import kubernetes_validate as validate
    objects = _all(k8s_network_node_selector={"fabric.infiniband/ib": "true"}) + _render(
        "device_plugin.yml.j2", k8s_network_device_plugin="rdma_shared")
    for obj in objects:
        validate.validate(obj, version, strict=True)
    assert len(objects) == 22
