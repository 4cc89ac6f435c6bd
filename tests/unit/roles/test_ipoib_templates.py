# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The ipoib role's templates, rendered with plain Jinja2 (Ansible's template module settings: trim_blocks, trailing
newline kept) for sample plans from the ipoib_plan filter, compared with the files in ipoib_expected/, for the three
network stacks. FABRIC_REGENERATE=1 rewrites the expected files (then read the diff)."""

from __future__ import annotations

import os

import jinja2
import pytest

from ansible_collections.fabric.infiniband.plugins.plugin_utils.ipoib import plan as ipoib_plan

HERE = os.path.dirname(__file__)
TEMPLATES = os.path.join(HERE, "..", "..", "..", "roles", "ipoib", "templates")
EXPECTED = os.path.join(HERE, "ipoib_expected")


def _hca(model="ConnectX-6"):
    hcas = []
    for pci, rdma, netdev in (("0000:3b:00.0", "mlx5_0", "ibp59s0f0"), ("0000:3b:00.1", "mlx5_1", "ibp59s0f1")):
        hcas.append({"pci_address": pci, "rdma_device": rdma, "model": model, "netdevs": [netdev],
                     "ports": [{"port": 1, "link_layer": "InfiniBand", "netdev": netdev}]})
    return {"hcas": hcas}


PLANS = {
    # a rail with an IPv4 and an IPv6 address, a PKey child with an address, a second rail without
    "two-rails": ipoib_plan(_hca(), [
        {"device": "0000:3b:00.0", "mtu": 4092, "addresses": ["10.10.0.5/24", "fd10::5/64"],
         "children": [{"pkey": "0x0001", "addresses": ["10.20.0.5/24"]}, {"pkey": "0x12", "mtu": 2044}]},
        {"device": "mlx5_1"},
    ]),
    # ConnectX-3 in connected mode
    "connected": ipoib_plan(_hca("ConnectX-3"), [
        {"device": "mlx5_0", "mode": "connected", "mtu": 65520, "addresses": ["192.168.50.1/24"],
         "children": [{"pkey": "0x7ffe"}]},
    ]),
}


def _env():
    return jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), trim_blocks=True, keep_trailing_newline=True,
                              undefined=jinja2.StrictUndefined)


def _renders(plan):
    """(expected file name, text) for everything the role writes for ``plan``, per stack."""
    env = _env()
    children = [c for p in plan for c in p["children"]]
    out = []
    for link in plan + children:
        out.append(("networkd/10-fabric-ipoib-%s.network" % link["name"],
                    env.get_template("networkd.network.j2").render(__ipoib_link=link)))
        out.append(("networkmanager/fabric-ipoib-%s.nmconnection" % link["name"],
                    env.get_template("nm.nmconnection.j2").render(__ipoib_link=link, __ipoib_uuid="UUID-OF-" + link["name"])))
    for link in children:
        out.append(("networkd/10-fabric-ipoib-%s.netdev" % link["name"],
                    env.get_template("networkd.netdev.j2").render(__ipoib_link=link)))
    out.append(("ifupdown/fabric-ipoib-interfaces", env.get_template("ifupdown.j2").render(__ipoib_plan=plan)))
    return out


CASES = [(name, path, text) for name, plan in sorted(PLANS.items()) for path, text in _renders(plan)]


@pytest.mark.parametrize("name,path,text", CASES, ids=["%s:%s" % (c[0], c[1]) for c in CASES])
def test_template_renders_as_expected(name, path, text):
    expected = os.path.join(EXPECTED, name, path)
    if os.environ.get("FABRIC_REGENERATE"):
        os.makedirs(os.path.dirname(expected), exist_ok=True)
        with open(expected, "w", encoding="utf-8") as handle:
            handle.write(text)
    with open(expected, encoding="utf-8") as handle:
        assert text == handle.read()


def test_every_expected_file_is_rendered():
    rendered = {os.path.join(name, path) for name, path, _text in CASES}
    on_disk = {os.path.relpath(os.path.join(d, f), EXPECTED) for d, _s, files in os.walk(EXPECTED) for f in files}
    assert on_disk == rendered
