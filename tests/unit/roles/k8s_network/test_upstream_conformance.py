# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The k8s_network role's manifests against what the upstream projects need at the versions the role pins.

upstream_facts.yml records, per component and pinned version, each fact read from upstream's own files at that tag
(command and arguments, mounts and the files the programs open, environment, security context, probes, RBAC rules,
CRD names, subresources and schemas), with its source. Here the role's templates are rendered with the role's
defaults and vars (Ansible's own filters), and every fact is asserted on the objects. A version pinned in
defaults/main.yml that has no recorded facts fails: a bump needs upstream read again.

K8S_NETWORK_ROLE_DIR renders another copy of the role (for instance an older checkout's) against the same facts."""

from __future__ import annotations

import copy
import functools
import json
import os
import re

import jinja2
import pytest
import yaml
from ansible.plugins.filter.core import FilterModule as CoreFilters
from ansible.plugins.filter.mathstuff import FilterModule as MathFilters

from ansible_collections.fabric.infiniband.plugins.plugin_utils import k8s_network

HERE = os.path.dirname(os.path.abspath(__file__))
ROLE = os.environ.get("K8S_NETWORK_ROLE_DIR") or os.path.join(HERE, "..", "..", "..", "..", "roles", "k8s_network")
TEMPLATES = ("crds.yml.j2", "multus.yml.j2", "whereabouts.yml.j2", "cni.yml.j2", "device_plugin.yml.j2")
PROBES = ("livenessProbe", "readinessProbe", "startupProbe")

with open(os.path.join(HERE, "upstream_facts.yml")) as _handle:
    FACTS = yaml.safe_load(_handle)["components"]


def _env():
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(os.path.join(ROLE, "templates")), trim_blocks=True,
                             keep_trailing_newline=True, undefined=jinja2.StrictUndefined)
    env.filters.update(CoreFilters().filters())
    env.filters.update(MathFilters().filters())
    return env


def _variables(overrides=None):
    variables = {}
    for part in ("defaults", "vars"):
        with open(os.path.join(ROLE, part, "main.yml")) as handle:
            variables.update(yaml.safe_load(handle))
    variables.update(overrides or {})
    # the role's own values (labels, image names), as its step computes them; a copy of the role from before the step
    # (K8S_NETWORK_ROLE_DIR) has them in vars/main.yml, as templates
    if "__k8s_network_labels" not in variables:
        variables.update(k8s_network.template_vars(variables))
    env = _env()
    for _pass in range(3):
        variables = {k: env.from_string(v).render(**variables) if isinstance(v, str) and "{{" in v else v
                     for k, v in variables.items()}
    return variables


def _objects(overrides=None):
    objects, variables = _rendered(tuple(sorted((overrides or {}).items())))
    return copy.deepcopy(objects), variables


@functools.lru_cache(maxsize=None)
def _rendered(overrides):
    variables = _variables(dict(overrides))
    env = _env()
    objects = {}
    for name in TEMPLATES:
        for doc in yaml.safe_load_all(env.get_template(name).render(**variables)):
            if doc:
                objects["%s/%s" % (doc["kind"], doc["metadata"]["name"])] = doc
    return objects, variables


def _pinned(component):
    return _variables()[FACTS[component]["version_variable"]]


def _cases():
    cases = []
    for component, entry in FACTS.items():
        version = _pinned(component)
        for index, fact in enumerate(entry["versions"].get(version, {}).get("facts", [])):
            cases.append(pytest.param(component, version, fact, id="%s-%s-%02d-%s" % (component, version, index, fact["kind"])))
    return cases


# --- the facts cover what the role pins ------------------------------------------------------------------------------

def test_every_pinned_version_has_recorded_facts():
    defaults = _variables()
    missing = ["%s=%s" % (entry["version_variable"], defaults[entry["version_variable"]]) for entry in FACTS.values()
               if defaults[entry["version_variable"]] not in entry["versions"]]
    assert not missing, ("pinned without recorded upstream facts (read upstream at that tag and add them to "
                         "tests/unit/roles/k8s_network/upstream_facts.yml): %s" % ", ".join(missing))


def test_every_version_variable_is_a_component():
    with open(os.path.join(ROLE, "defaults", "main.yml")) as handle:
        pins = {k for k in yaml.safe_load(handle) if k.endswith("_version")}
    assert pins == {entry["version_variable"] for entry in FACTS.values()}


def test_every_fact_names_its_source():
    for component, entry in FACTS.items():
        for version, recorded in entry["versions"].items():
            assert recorded["tag"] == version and "/" in recorded["repository"], (component, version)
            assert re.fullmatch(r"[0-9a-f]{40}", recorded["commit"]), (component, version)
            assert recorded["facts"], (component, version)
            for fact in recorded["facts"]:
                assert fact.get("source") and fact.get("object") and fact.get("kind"), (component, version, fact)


# --- each fact on the rendered objects -------------------------------------------------------------------------------

def _pod(obj):
    return obj["spec"]["template"]["spec"]


def _container(obj, name):
    pod = _pod(obj)
    containers = pod.get("initContainers", []) + pod["containers"]
    found = [c for c in containers if c["name"] == name]
    assert len(found) == 1, "%s: no container %s (has %s)" % (obj["metadata"]["name"], name, [c["name"] for c in containers])
    return found[0]


def _volume(obj, name):
    found = [v for v in _pod(obj).get("volumes", []) if v["name"] == name]
    assert len(found) == 1, "%s: volume %s defined %d times" % (obj["metadata"]["name"], name, len(found))
    return found[0]


def _source_matches(volume, expected, variables):
    if "hostPath" in expected:
        want = jinja2.Template(expected["hostPath"]).render(**variables)
        return ("hostPath" in volume and volume["hostPath"]["path"] == want
                and volume["hostPath"].get("type") == expected.get("type"))
    config_map = volume.get("configMap")
    return (config_map is not None and config_map["name"] == expected["configMap"]
            and {i["key"]: i["path"] for i in config_map.get("items", [])} == expected["items"])


def _check_mount(obj, fact, variables):
    container = _container(obj, fact["container"])
    mounts = [m for m in container.get("volumeMounts", []) if m["mountPath"].rstrip("/") == fact["path"].rstrip("/")]
    assert len(mounts) == 1, "%s/%s: no mount at %s (mounts: %s)" % (
        obj["metadata"]["name"], fact["container"], fact["path"], [m["mountPath"] for m in container.get("volumeMounts", [])])
    mount = mounts[0]
    volume = _volume(obj, mount["name"])
    assert _source_matches(volume, fact["volume"], variables), "%s: mount %s from %s, upstream %s" % (
        obj["metadata"]["name"], fact["path"], volume, fact["volume"])
    assert mount.get("mountPropagation") == fact.get("propagation"), "%s: mount %s propagation %s, upstream %s" % (
        obj["metadata"]["name"], fact["path"], mount.get("mountPropagation"), fact.get("propagation"))
    if fact.get("read_only"):
        assert mount.get("readOnly") is True, "%s: mount %s must stay read-only" % (obj["metadata"]["name"], fact["path"])


def _check_reads_file(obj, fact):
    container = _container(obj, fact["container"])
    for mount in container.get("volumeMounts", []):
        base = mount["mountPath"].rstrip("/")
        if not fact["path"].startswith(base + "/"):
            continue
        volume = _volume(obj, mount["name"])
        if "hostPath" in volume:
            return
        if "configMap" in volume:
            paths = {base + "/" + item["path"] for item in volume["configMap"].get("items", [])}
            assert fact["path"] in paths, "%s: %s not among the ConfigMap's files %s" % (obj["metadata"]["name"], fact["path"], paths)
            return
    raise AssertionError("%s/%s: nothing provides %s, which the program opens" % (
        obj["metadata"]["name"], fact["container"], fact["path"]))


def _rules(obj):
    pairs = {}
    for rule in obj["rules"]:
        for group in rule.get("apiGroups", []):
            for resource in rule.get("resources", []):
                pairs.setdefault((group, resource), set()).update(rule["verbs"])
    return pairs


def _check_rbac(obj, fact):
    pairs = _rules(obj)
    upstream = set(fact["verbs"])
    needed = set(fact.get("needed", fact["verbs"]))
    for group in fact["apiGroups"]:
        for resource in fact["resources"]:
            granted = pairs.get((group, resource), set())
            if "*" in needed:
                assert "*" in granted, "%s: %s/%s needs every verb, has %s" % (obj["metadata"]["name"], group, resource, granted)
                continue
            assert needed <= granted or "*" in granted, "%s: %s/%s lacks %s" % (
                obj["metadata"]["name"], group, resource, sorted(needed - granted))
            assert "*" in upstream or granted <= upstream, "%s: %s/%s grants %s beyond upstream's" % (
                obj["metadata"]["name"], group, resource, sorted(granted - upstream))


def _schema_fields(schema, path="", fields=None, required=None):
    fields = {} if fields is None else fields
    required = {} if required is None else required
    fields[path] = schema.get("type")
    if schema.get("required"):
        required[path] = sorted(schema["required"])
    for key, sub in (schema.get("properties") or {}).items():
        _schema_fields(sub, "%s.%s" % (path, key), fields, required)
    if isinstance(schema.get("additionalProperties"), dict):
        _schema_fields(schema["additionalProperties"], path + ".*", fields, required)
    if isinstance(schema.get("items"), dict):
        _schema_fields(schema["items"], path + "[]", fields, required)
    return fields, required


def _crd_version(obj, name):
    found = [v for v in obj["spec"]["versions"] if v["name"] == name]
    assert len(found) == 1, "%s: no version %s" % (obj["metadata"]["name"], name)
    return found[0]


def _check(fact, objects, variables):  # noqa: C901 - one branch per kind of fact, each short
    kind = fact["kind"]
    assert fact["object"] in objects, "the role makes no %s (it makes %s)" % (fact["object"], sorted(objects))
    obj = objects[fact["object"]]
    name = obj["metadata"]["name"]
    if kind == "image":
        version = variables[FACTS[fact["_component"]]["version_variable"]]
        want = "%s/%s:%s%s" % (variables["k8s_network_registry"], fact["repository"], version, fact["suffix"])
        assert _container(obj, fact["container"])["image"] == want
    elif kind == "command":
        assert _container(obj, fact["container"]).get("command", []) == fact["command"], name
    elif kind == "args":
        assert _container(obj, fact["container"]).get("args", []) == fact["args"], name
    elif kind == "args_flag":
        args = _container(obj, fact["container"]).get("args", [])
        assert fact["flag"] in args, "%s: %s not given (args %s)" % (name, fact["flag"], args)
        assert args[args.index(fact["flag"]) + 1] in fact["values"], name
    elif kind == "script":
        container = _container(obj, fact["container"])
        command = container.get("command", []) + container.get("args", [])
        assert command[:2] == ["/bin/sh", "-c"] and len(command) == 3, "%s: not a shell script: %s" % (name, command)
        position = 0
        for pattern in fact["patterns"]:
            match = re.compile(pattern).search(command[2], position)
            assert match, "%s: script %r does not match %r (after offset %d)" % (name, command[2], pattern, position)
            position = match.end()
    elif kind == "mount":
        _check_mount(obj, fact, variables)
    elif kind == "mount_paths":
        paths = {m["mountPath"].rstrip("/") for m in _container(obj, fact["container"]).get("volumeMounts", [])}
        want = {p.rstrip("/") for p in fact["paths"]}
        assert paths == want, "%s/%s: missing %s, not upstream's %s" % (name, fact["container"], sorted(want - paths),
                                                                        sorted(paths - want))
    elif kind == "reads_file":
        _check_reads_file(obj, fact)
    elif kind == "env":
        env = {e["name"]: e for e in _container(obj, fact["container"]).get("env", [])}
        assert fact["name"] in env, "%s: no %s in the environment" % (name, fact["name"])
        if "field" in fact:
            assert env[fact["name"]]["valueFrom"]["fieldRef"]["fieldPath"] == fact["field"]
        else:
            assert env[fact["name"]]["value"] == fact["value"]
    elif kind == "security_context":
        context = _container(obj, fact["container"]).get("securityContext", {})
        assert {k: context.get(k) for k in fact["values"]} == fact["values"], name
    elif kind == "probes":
        container = _container(obj, fact["container"])
        assert not [p for p in PROBES if p in container], "%s: upstream defines no probe" % name
    elif kind == "termination_message_policy":
        assert _container(obj, fact["container"]).get("terminationMessagePolicy") == fact["value"], name
    elif kind == "pod":
        pod = _pod(obj)
        assert {k: pod.get(k) for k in fact["values"]} == fact["values"], name
    elif kind == "configmap_keys":
        assert set(fact["keys"]) <= set(obj.get("data", {})), name
    elif kind == "configmap_json":
        data = json.loads(obj["data"][fact["key"]])
        for member, value in fact.get("values", {}).items():
            assert data.get(member) == value, "%s: %s is %r, upstream %r" % (name, member, data.get(member), value)
        for member in fact.get("members", []):
            assert member in data, "%s: no %s" % (name, member)
    elif kind == "rbac_resources":
        pairs = set(_rules(obj))
        want = {tuple(pair) for pair in fact["resources"]}
        assert pairs == want, "%s: missing %s, not upstream's %s" % (name, sorted(want - pairs), sorted(pairs - want))
    elif kind == "rbac":
        _check_rbac(obj, fact)
    elif kind == "crd":
        spec = obj["spec"]
        assert (spec["group"], spec["scope"]) == (fact["group"], fact["scope"]), name
        assert {k: spec["names"].get(k) for k in fact["names"]} == fact["names"], name
        assert [{k: v[k] for k in ("name", "served", "storage")} for v in spec["versions"]] == fact["versions"], name
    elif kind == "crd_subresources":
        subresources = _crd_version(obj, fact["version"]).get("subresources") or {}
        assert subresources == ({} if fact.get("none") else fact["subresources"]), "%s: subresources %s, upstream %s" % (
            name, subresources, "none" if fact.get("none") else fact["subresources"])
    elif kind == "crd_schema":
        fields, required = _schema_fields(_crd_version(obj, fact["version"])["schema"]["openAPIV3Schema"])
        want = dict(fact["fields"])
        assert fields == want, "%s: fields missing %s, not upstream's %s, types differ %s" % (
            name, sorted(set(want) - set(fields)), sorted(set(fields) - set(want)),
            sorted(k for k in set(want) & set(fields) if want[k] != fields[k]))
        assert required == {k: sorted(v) for k, v in fact["required"].items()}, "%s: required %s, upstream %s" % (
            name, required, fact["required"])
    else:
        raise AssertionError("unknown kind of fact %r" % kind)


@pytest.mark.parametrize("component, version, fact", _cases())
def test_upstream_fact(component, version, fact):
    objects, variables = _objects(FACTS[component].get("render"))
    _check(dict(fact, _component=component), objects, variables)


# --- the checks themselves fail on what they guard against -----------------------------------------------------------

def _first(component, kind, **match):
    version = _pinned(component)
    return next(dict(f, _component=component) for f in FACTS[component]["versions"][version]["facts"]
                if f["kind"] == kind and all(f.get(k) == v for k, v in match.items()))


def test_a_child_install_script_fails_the_script_fact():
    objects, variables = _objects()
    container = _container(objects["DaemonSet/whereabouts"], "whereabouts")
    container["command"] = ["/bin/sh", "-c", "SLEEP=false /install-cni.sh && /token-watcher.sh & exec /ip-control-loop"]
    container.pop("args", None)
    with pytest.raises(AssertionError, match="does not match"):
        _check(_first("whereabouts", "script"), objects, variables)


def test_a_status_subresource_or_a_new_field_fails_the_crd_facts():
    objects, variables = _objects()
    crd = objects["CustomResourceDefinition/ippools.whereabouts.cni.cncf.io"]
    crd["spec"]["versions"][0]["subresources"] = {"status": {}}
    with pytest.raises(AssertionError, match="subresources"):
        _check(_first("whereabouts", "crd_subresources", object=crd["kind"] + "/" + crd["metadata"]["name"]), objects, variables)
    allocation = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["allocations"]
    allocation["additionalProperties"]["properties"]["ipamclaimref"] = {"type": "string"}
    with pytest.raises(AssertionError, match="ipamclaimref"):
        _check(_first("whereabouts", "crd_schema", object=crd["kind"] + "/" + crd["metadata"]["name"]), objects, variables)


def test_a_missing_mount_fails_the_mount_facts():
    objects, variables = _objects()
    container = _container(objects["DaemonSet/kube-multus-ds"], "kube-multus")
    container["volumeMounts"] = [m for m in container["volumeMounts"] if m["mountPath"] != "/opt/cni/bin"]
    with pytest.raises(AssertionError, match="no mount at /opt/cni/bin"):
        _check(_first("multus", "mount", path="/opt/cni/bin"), objects, variables)
    with pytest.raises(AssertionError, match="nothing provides"):
        _check(_first("multus", "reads_file", path="/opt/cni/bin/ipoib"), objects, variables)


def test_a_bumped_version_without_facts_fails(monkeypatch):
    real = _variables

    def bumped(overrides=None):
        return real(dict(overrides or {}, k8s_network_whereabouts_version="v0.10.0"))

    monkeypatch.setitem(globals(), "_variables", bumped)
    with pytest.raises(AssertionError, match="k8s_network_whereabouts_version=v0.10.0"):
        test_every_pinned_version_has_recorded_facts()
