# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""inventories/example and inventories/minimal: every host's role variables pass that role's argument spec.

The inventory is loaded as ansible-playbook loads it (InventoryManager, VariableManager; no host
is contacted), each host's variables are rendered with Ansible's templating (the IPoIB addresses
are templates of site_host_number), and for each role the variables that start with its prefix
(``sriov_`` for roles/sriov) are validated against the role's ``main`` entry point with
ArgumentSpecValidator, as the role itself does at run time. Unlike the role, the test also fails
on a role-prefixed variable that the spec does not know: a misspelt name in an example is a bug.

Also: the groups the playbooks use exist, and what the roles check across the play (VF GUIDs,
IPoIB addresses) holds across the whole inventory, which is what makes a sliced AWX job safe; and
inventories/minimal stays minimal: two nodes, the node roles only, about ten lines of variables.
"""

from __future__ import annotations

import glob
import hashlib
import ipaddress
import os
import warnings

import pytest
import yaml
from ansible.inventory.manager import InventoryManager
from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from ansible.parsing.dataloader import DataLoader
from ansible.plugins.loader import init_plugin_loader
from ansible.template import Templar
from ansible.vars.manager import VariableManager

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
INVENTORY = os.path.join(ROOT, "inventories", "example")
MINIMAL = os.path.join(ROOT, "inventories", "minimal")
ROLES = {
    os.path.basename(os.path.dirname(os.path.dirname(path))): path
    for path in sorted(glob.glob(os.path.join(ROOT, "roles", "*", "meta", "argument_specs.yml")))
}


def _load(path):
    """The inventory at path as ansible-playbook loads it: (InventoryManager, {host: rendered role variables})."""
    with warnings.catch_warnings():
        # Another test module may have configured the collection loader already; that is fine.
        warnings.filterwarnings("ignore", "AnsibleCollectionFinder has already been configured")
        init_plugin_loader()
    loader = DataLoader()
    manager = InventoryManager(loader=loader, sources=[path])
    variables = VariableManager(loader=loader, inventory=manager)
    hostvars = {}
    for host in manager.get_hosts():
        raw = variables.get_vars(host=host, include_hostvars=False)
        templar = Templar(loader=loader, variables=raw)
        hostvars[host.name] = {name: templar.template(value) for name, value in raw.items()
                               if any(name.startswith(role + "_") for role in ROLES) or name == "site_host_number"}
    return manager, hostvars


@pytest.fixture(scope="module")
def inventory():
    return _load(INVENTORY)


@pytest.fixture(scope="module", params=[INVENTORY, MINIMAL], ids=["example", "minimal"])
def any_inventory(request):
    return request.param, _load(request.param)


def _spec(role):
    with open(ROLES[role]) as handle:
        return yaml.safe_load(handle)["argument_specs"]["main"]["options"]


def test_roles_found():
    # The roles whose variables the example sets; gpudirect joins once its spec exists.
    assert {"rdma_stack", "link_type", "rdma_netns", "sriov", "opensm", "ipoib", "k8s_network"} <= set(ROLES)


def test_groups(inventory):
    manager, _hostvars = inventory
    groups = manager.get_groups_dict()
    for name in ("ib_nodes", "gpu_nodes", "hpc_nodes", "opensm", "k8s_control"):
        assert groups.get(name), "group %s is missing or empty" % name
    assert groups["opensm"] == ["sm01", "sm02"], "two SM hosts, primary first"
    assert set(groups["gpu_nodes"]) | set(groups["hpc_nodes"]) | set(groups["opensm"]) == set(groups["ib_nodes"])
    assert not set(groups["k8s_control"]) & set(groups["ib_nodes"])


@pytest.mark.parametrize("role", sorted(ROLES))
def test_role_variables_pass_the_argument_spec(any_inventory, role):
    path, (_manager, hostvars) = any_inventory
    spec = _spec(role)
    checked = 0
    for host, values in sorted(hostvars.items()):
        params = {name: value for name, value in values.items() if name.startswith(role + "_")}
        if not params:
            continue
        result = ArgumentSpecValidator(spec).validate(params)
        assert not result.error_messages, "%s, role %s: %s" % (host, role, "; ".join(result.error_messages))
        checked += 1
    wanted = ("rdma_stack", "link_type", "rdma_netns", "sriov") + (("ipoib", "opensm", "k8s_network") if path == INVENTORY else ())
    if role in wanted:
        assert checked, "%s sets no variable of role %s" % (os.path.basename(path), role)


def test_consent_variables_are_off(any_inventory):
    """Disruptive steps stay off in the inventories: a run decides them, never the inventory."""
    _path, (_manager, hostvars) = any_inventory
    consents = [name for role in ROLES for name in _spec(role) if "_allow_" in name or name.endswith("_take_over")]
    for host, values in hostvars.items():
        for name in consents:
            assert values.get(name, False) is False, "%s: %s is on" % (host, name)


def test_expected_per_group_values(inventory):
    _manager, hostvars = inventory
    for host in ("gpu01", "gpu04"):
        assert len(hostvars[host]["sriov_pfs"]) == 8
        assert len(hostvars[host]["ipoib_config"]) == 8
    assert hostvars["hpc04"]["sriov_pfs"][0]["pf"] == "0000:5e:00.0"
    assert hostvars["hpc01"]["link_type_adapters"] == [{"pci_address": "0000:3b:00.0", "ports": ["ib", "eth"]}]
    assert {hostvars[h]["rdma_netns_mode"] for h in hostvars if "rdma_netns_mode" in hostvars[h]} == {"exclusive"}
    assert hostvars["k8s-cp01"]["k8s_network_rdma_netns"] == "exclusive"


def test_derived_vf_guid_host_ids_are_unique(any_inventory):
    """The sriov role's scheme puts the host id in bytes 3-6 of each VF GUID: distinct host ids
    give distinct GUIDs whatever the PF and VF indexes, so checking the host ids of the whole
    inventory is the fleet-wide form of the role's per-play check (module_utils/sriov.py host_id)."""
    _path, (_manager, hostvars) = any_inventory
    owners = {}
    for host, values in hostvars.items():
        if not values.get("sriov_pfs") or values.get("sriov_guid_mode", "scheme") != "scheme":
            continue
        host_id = values.get("sriov_guid_host_id")
        if host_id is None:
            host_id = int(hashlib.sha256(host.encode("utf-8")).hexdigest()[:8], 16)
        owners.setdefault((values.get("sriov_guid_prefix", "0x02fa"), host_id), []).append(host)
    assert owners
    assert not [hosts for hosts in owners.values() if len(hosts) > 1]


def test_ipoib_addresses_are_unique_and_one_subnet_per_rail(inventory):
    _manager, hostvars = inventory
    seen = {}
    for host, values in sorted(hostvars.items()):
        subnets = []
        for port in values.get("ipoib_config", []):
            for child in [port] + list(port.get("children") or []):
                for text in child.get("addresses") or []:
                    iface = ipaddress.ip_interface(text)
                    assert str(iface.ip) not in seen, "%s on %s and %s" % (iface.ip, seen.get(str(iface.ip)), host)
                    seen[str(iface.ip)] = host
                    assert not any(iface.network.overlaps(other) for other in subnets), "%s: %s overlaps" % (host, text)
                    subnets.append(iface.network)
    assert len(seen) == 4 * 8 + 4 * 2


def test_networks_pass_the_k8s_network_checks(inventory):
    """The NADs as the k8s_network role checks them before sending anything (its own filter)."""
    from ansible_collections.fabric.infiniband.plugins.filter.k8s_network_nads import k8s_network_nads

    manager, hostvars = inventory
    control = hostvars["k8s-cp01"]
    resources = ["%s/%s" % (r.get("prefix", "mellanox.com"), r["name"]) for r in control["k8s_network_sriov_resources"]]
    nodes = {host: {"rdma_netns_mode": hostvars[host]["rdma_netns_mode"]} for host in manager.get_groups_dict()["ib_nodes"]}
    nads = k8s_network_nads(control["k8s_network_networks"], namespace=control["k8s_network_nad_namespace"],
                            device_plugin=control["k8s_network_device_plugin"], rdma_netns=control["k8s_network_rdma_netns"],
                            resource_names=resources, nodes=nodes)
    assert len(nads) == len(control["k8s_network_networks"]) == 9


def test_partitions_pass_the_opensm_checks(inventory):
    from ansible_collections.fabric.infiniband.plugins.plugin_utils import opensm

    manager, hostvars = inventory
    sm = hostvars["sm01"]
    groups = dict(manager.get_groups_dict(), all=sorted(hostvars))
    members = opensm.member_hosts(sm, groups)
    assert set(members) == set(groups["gpu_nodes"]) | set(groups["hpc_nodes"])


def test_minimal_stays_minimal():
    """inventories/minimal: two nodes in ib_nodes and nothing else (the SM runs on UFM or a switch), the node roles'
    variables only, about ten lines of them (README.md and fabric.rst promise it), no lab or site-specific wiring."""
    manager, hostvars = _load(MINIMAL)
    groups = manager.get_groups_dict()
    assert sorted(groups["ib_nodes"]) == sorted(groups["all"]) and len(groups["ib_nodes"]) == 2, groups
    assert not groups.get("opensm") and not groups.get("k8s_control") and not groups.get("gpu_nodes"), groups
    prefixes = {name.split("_")[0] for values in hostvars.values() for name in values}
    assert prefixes <= {"rdma", "link", "sriov"}, prefixes
    lines = 0
    for path in glob.glob(os.path.join(MINIMAL, "group_vars", "*.yml")) + glob.glob(os.path.join(MINIMAL, "host_vars", "*.yml")):
        with open(path) as handle:
            lines += len([line for line in handle if line.strip() and not line.lstrip().startswith("#") and line.strip() != "---"])
    assert lines <= 12, "inventories/minimal has %d lines of variables; about ten is its point" % lines
    with open(os.path.join(MINIMAL, "hosts.yml")) as handle:
        text = handle.read()
    assert "infiniband_reboot_command" not in text and "127.0.0.1" not in text
