# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""lab/labctl.py without podman: lab instances and the inventories they write (fleets)."""

import json
import os
import sys

import pytest
import yaml

from conftest import LAB

sys.path.insert(0, LAB)
import labctl  # noqa: E402  pylint: disable=wrong-import-position


def test_default_instance_keeps_the_demo_lab_names():
    demo = labctl.instance_settings("")
    assert demo == labctl.instance_settings("lab")
    assert (demo["prefix"], demo["network"], demo["ibsim_port"], demo["ssh_base"]) == ("fabric-lab-", "fabric-lab", 7070, 2201)
    assert demo["cache"].endswith(os.path.join(".cache", "lab"))


def test_named_instance_has_its_own_names_and_ports():
    bench = labctl.instance_settings("bench")
    assert (bench["prefix"], bench["network"]) == ("fabric-bench-", "fabric-bench")
    assert bench["cache"].endswith(os.path.join(".cache", "lab-bench"))
    assert bench["ibsim_port"] != 7070 and bench["ssh_base"] > 2203 + 300
    with pytest.raises(SystemExit):
        labctl.instance_settings("Bad-Name")


@pytest.mark.parametrize("name", ["bench", "probe", "unit", "fleet", "a", "zz9"])
def test_instance_ssh_ports_stay_below_the_ephemeral_range(name):
    # 300 nodes' ports of any instance end below 32768, where outgoing connections take their local ports.
    settings = labctl.instance_settings(name)
    assert settings["ssh_base"] > 2203 and settings["ssh_base"] + 300 <= 32768


@pytest.fixture
def instance(tmp_path, monkeypatch):
    monkeypatch.setattr(labctl, "INSTANCE", dict(labctl.instance_settings("unit"), cache=str(tmp_path)))
    monkeypatch.setattr(labctl, "CACHE", str(tmp_path))
    monkeypatch.setattr(labctl, "DEFAULT_INSTANCE", False)
    return tmp_path


def test_mirror_inventory_moves_ports_and_cache(instance):
    target = labctl.write_inventory()
    found = labctl.nodes(os.path.join(target, "hosts.yml"))
    assert sorted(found) == ["node01", "node02", "node03"]
    assert {spec["port"] for spec in found.values()}.isdisjoint({2201, 2202, 2203})
    with open(os.path.join(target, "group_vars", "all.yml"), encoding="utf-8") as handle:
        group_vars = handle.read()
    assert ".cache/lab/" not in group_vars and str(instance) in group_vars
    assert os.path.exists(os.path.join(target, "host_vars", "node02.yml"))


def test_fleet_cycles_the_demo_nodes_without_switch_ports(instance):
    converged = instance / "converged" / "node01" / "state"
    converged.mkdir(parents=True)
    converged.joinpath("state.json").write_text(json.dumps({"adapters": [
        {"pci_address": "0000:3b:00.0", "params": {"LINK_TYPE_P1": {"current": 2, "next": 1}}}]}))
    target = labctl.write_inventory(fleet=5, firmware_from=str(instance / "converged"), images="localhost/x")
    found = labctl.nodes(os.path.join(target, "hosts.yml"))
    assert sorted(found) == ["fleet%03d" % i for i in range(1, 6)]
    assert len({spec["port"] for spec in found.values()}) == 5
    assert found["fleet004"]["state"] == found["fleet001"]["state"] and found["fleet004"]["image"] == "localhost/x:node01"
    with open(found["fleet001"]["state"], encoding="utf-8") as handle:
        description = json.load(handle)
    assert "ports" not in description["fabric"]
    assert description["adapters"][0]["params"]["LINK_TYPE_P1"] == {"current": 1, "next": 1}
    with open(os.path.join(target, "hosts.yml"), encoding="utf-8") as handle:
        tree = yaml.safe_load(handle)
    assert list(tree["all"]["children"]["ib_nodes"]["hosts"]) == sorted(found)
    assert os.path.exists(os.path.join(target, "host_vars", "fleet005.yml"))
    # Ansible reads every file of an inventory directory as a source: the node descriptions live beside it.
    assert sorted(os.listdir(target)) == ["group_vars", "host_vars", "hosts.yml"]
    assert not found["fleet001"]["state"].startswith(target + os.sep)


def test_a_fleet_smaller_than_the_demo_lab(instance):
    target = labctl.write_inventory(fleet=1)
    assert sorted(labctl.nodes(os.path.join(target, "hosts.yml"))) == ["fleet001"]


def test_the_demo_lab_has_no_generated_inventory(monkeypatch):
    monkeypatch.setattr(labctl, "DEFAULT_INSTANCE", True)
    with pytest.raises(SystemExit):
        labctl.write_inventory()
