# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Another host's variables through ansible-core's own HostVars: the inventory's values templated in that host's context,
its facts taken as they are (walking every other node's facts through the templating engine made a fleet run quadratic)."""

from __future__ import annotations

from ansible.inventory.manager import InventoryManager
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template
from ansible.vars.hostvars import HostVars
from ansible.vars.manager import VariableManager

from ansible_collections.fabric.infiniband.plugins.plugin_utils import role_step

FACTS = {"infiniband_hca": {"hcas": [{"device": "mlx5_0", "note": "{{ not_a_variable }}"}]}}


def _hostvars():
    loader = DataLoader()
    inventory = InventoryManager(loader=loader, sources="node01,node02,")
    node02 = inventory.get_host("node02")
    node02.set_variable("ipoib_mtu_base", 4090)
    node02.set_variable("ipoib_mtu", trust_as_template("{{ ipoib_mtu_base + 2 }}"))
    manager = VariableManager(loader=loader, inventory=inventory)
    manager.set_host_facts("node02", {"infiniband_hca": FACTS["infiniband_hca"]})
    return loader, HostVars(inventory=inventory, variable_manager=manager, loader=loader)


def test_settings_are_templated_in_the_other_hosts_context_and_facts_are_not(monkeypatch):
    loader, hostvars = _hostvars()
    task_vars = {"inventory_hostname": "node01", "hostvars": hostvars}
    templated = []
    template = Templar.template

    def spy(self, variable, *args, **kwargs):
        templated.append(variable)
        return template(self, variable, *args, **kwargs)

    monkeypatch.setattr(Templar, "template", spy)
    got = role_step.other_host_values(task_vars, Templar(loader=loader), "node02", ("ipoib_mtu", "ansible_facts", "ipoib_mode"))
    assert templated == ["{{ ipoib_mtu_base + 2 }}"]
    assert got["ipoib_mtu"] == 4092
    assert got["ansible_facts"]["infiniband_hca"] == FACTS["infiniband_hca"]
    # as the node returned it: the string that looks like a template stays what it is
    assert got["ansible_facts"]["infiniband_hca"]["hcas"][0]["note"] == "{{ not_a_variable }}"
    assert "ipoib_mode" not in got


def test_a_host_the_inventory_does_not_have_gives_nothing():
    loader, hostvars = _hostvars()
    task_vars = {"inventory_hostname": "node01", "hostvars": hostvars}
    assert role_step.other_host_values(task_vars, Templar(loader=loader), "node99", ("ipoib_mtu",)) == {}
    assert role_step.other_host_values({}, Templar(loader=loader), "node02", ("ipoib_mtu",)) == {}


def test_a_value_that_fails_to_template_is_left_out():
    loader, hostvars = _hostvars()
    hostvars._inventory.get_host("node02").set_variable("ipoib_mode", trust_as_template("{{ undefined_here }}"))  # pylint: disable=protected-access
    task_vars = {"inventory_hostname": "node01", "hostvars": hostvars}
    got = role_step.other_host_values(task_vars, Templar(loader=loader), "node02", ("ipoib_mode", "ipoib_mtu"))
    assert got == {"ipoib_mtu": 4092}


def test_plain_mappings_are_read_as_they_are():
    """Tests and callers that hand a plain dict as hostvars: no templating."""
    task_vars = {"hostvars": {"node02": {"ipoib_mtu": 2044, "ansible_facts": FACTS}}}
    assert role_step.other_host_values(task_vars, None, "node02", ("ipoib_mtu", "ansible_facts")) == {
        "ipoib_mtu": 2044, "ansible_facts": FACTS}
