#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
module: fabric_topology_info
short_description: Discover the InfiniBand fabric seen from a host with ibnetdiscover
version_added: 0.1.0
description:
  - Runs C(ibnetdiscover) (infiniband-diags) on the target and returns the switches, the channel adapters (HCAs and routers) and the
    links of the fabric its port is cabled to, with node GUIDs, port GUIDs, LIDs and node descriptions.
  - Never changes anything. ibnetdiscover only sends subnet management queries; it needs read access to C(/dev/infiniband/umad*)
    (root) and an InfiniBand port that is at least physically up.
author:
  - fabric.infiniband developers (@fabric-infiniband)
requirements:
  - C(ibnetdiscover) from infiniband-diags (rdma-core) on the target
extends_documentation_fragment:
  - fabric.infiniband.attributes
  - fabric.infiniband.attributes.info_module
options:
  ca:
    description:
      - The local RDMA device to discover from (C(-C)), for example V(mlx5_0). By default ibnetdiscover picks the first active port.
    type: str
  port:
    description: The port of O(ca) to discover from (C(-P)).
    type: int
  timeout_ms:
    description: Timeout of each management query in milliseconds (C(-t)); ibnetdiscover's default when omitted.
    type: int
notes:
  - The module parses the topology file (the default output), not the ports report of C(-p), because only the topology file gives the
    node GUID of every channel adapter.
  - A node's description is what the node set (on Linux, C(/sys/class/infiniband/*/node_desc), usually V(<hostname> <device>)); map
    nodes to hosts through the port GUIDs, which M(fabric.infiniband.hca_info) reports too.
seealso:
  - module: fabric.infiniband.hca_info
  - name: ibnetdiscover(8)
    description: The tool and its topology file format.
    link: https://github.com/linux-rdma/rdma-core/blob/master/infiniband-diags/man/ibnetdiscover.8.in.rst
"""

EXAMPLES = r"""
- name: Discover the fabric from the subnet manager host
  fabric.infiniband.fabric_topology_info:
  register: __fabric
  delegate_to: sm01

- name: Count the switches and HCAs
  ansible.builtin.debug:
    msg: "{{ __fabric.switches | length }} switches, {{ __fabric.hcas | length }} HCAs, {{ __fabric.links | length }} links"

- name: From the second port of mlx5_1
  fabric.infiniband.fabric_topology_info:
    ca: mlx5_1
    port: 2
"""

RETURN = r"""
switches:
  description: The switches, in the order ibnetdiscover prints them.
  returned: success
  type: list
  elements: dict
  contains:
    guid:
      description: Node GUID.
      type: str
      sample: "0x98039b0300867bba"
    description:
      description: Node description.
      type: str
      sample: "MF0;switch-ib01:MQM8700/U1"
    num_ports:
      description: Number of external ports.
      type: int
      sample: 40
    lid:
      description: LID of the switch (its port 0).
      type: int
      sample: 1
    lmc:
      description: LMC of port 0.
      type: int
      sample: 0
    port_guid:
      description: GUID of port 0.
      type: str
    sys_image_guid:
      description: System image GUID.
      type: str
    vendor_id:
      description: Vendor id.
      type: str
      sample: "0x2c9"
    device_id:
      description: Device id.
      type: str
      sample: "0xcf08"
hcas:
  description: The channel adapters (and routers), in the order ibnetdiscover prints them.
  returned: success
  type: list
  elements: dict
  contains:
    type:
      description: V(ca) or V(router).
      type: str
    guid:
      description: Node GUID.
      type: str
    description:
      description: Node description.
      type: str
      sample: node01 mlx5_0
    num_ports:
      description: Number of ports.
      type: int
    ports:
      description: The cabled ports, with C(port), C(guid) (port GUID), C(lid) and C(lmc).
      type: list
      elements: dict
    port_guids:
      description: GUIDs of the cabled ports.
      type: list
      elements: str
    lids:
      description: Base LIDs of the cabled ports.
      type: list
      elements: int
    sys_image_guid:
      description: System image GUID.
      type: str
    vendor_id:
      description: Vendor id.
      type: str
    device_id:
      description: Device id.
      type: str
links:
  description:
    - Every link once, with both ends as C(guid) (node GUID), C(port) and C(type), the C(width) and C(speed) ibnetdiscover
      printed (for example V(4x) and V(HDR)), and C(complete), false when one end is a node the output does not describe.
  returned: success
  type: list
  elements: dict
  sample:
    - from: {guid: "0x0c42a10300aa000f", port: 1, type: ca}
      to: {guid: "0x98039b0300867bba", port: 1, type: switch}
      width: 4x
      speed: HDR
      complete: true
seen_from:
  description: The C(node_guid) and C(port_guid) ibnetdiscover discovered from.
  returned: success
  type: dict
cmd:
  description: The command that ran.
  returned: always
  type: list
  elements: str
  sample: ["/usr/sbin/ibnetdiscover"]
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.fabric.infiniband.plugins.module_utils import ibnetdiscover
from ansible_collections.fabric.infiniband.plugins.module_utils._runner import Runner


def argument_spec():
    return dict(
        ca=dict(type="str"),
        port=dict(type="int"),
        timeout_ms=dict(type="int"),
    )


def main():
    module = AnsibleModule(argument_spec=argument_spec(), supports_check_mode=True)
    runner = Runner(module, ibnetdiscover.TOOL)
    params = module.params
    res = runner.run(ibnetdiscover.argv(params["ca"], params["port"], params["timeout_ms"]))
    if not res.ok:
        runner.fail("ibnetdiscover could not discover the fabric (no active InfiniBand port, no access to /dev/infiniband/umad*, "
                    "or no subnet manager yet)", res, changed=False)
    try:
        topology = ibnetdiscover.parse(res.stdout)
    except ValueError as exc:
        runner.fail("Cannot read the output of ibnetdiscover: %s" % exc, res, changed=False)
    module.exit_json(changed=False, cmd=res.cmd, **topology)


if __name__ == "__main__":
    main()
