#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
module: port_health_info
short_description: Read the health of a host's InfiniBand ports twice, some seconds apart
version_added: 0.1.0
description:
  - Reads, for every port of every RDMA device, its state, physical state, width and speed (from the kernel's C(rate) file) and
    its error counters, and reads the counters again at least O(interval) seconds later, so that their growth within this run is
    known. The other attributes are read between the two readings of the counters, so the wait is shorter by the time they take.
  - Also reports how often each port's link went down since the last run (RV(ports[].link_downed_since_last_run)). The
    C(link_downed) counter is kept in a small record in the node's state directory (O(state_path)) at each run, and compared at the next.
  - Judges nothing; P(fabric.infiniband.verify#role) judges what it reads against the expected width, speed and thresholds.
author:
  - fabric.infiniband developers (@fabric-infiniband)
requirements:
  - Linux with sysfs
extends_documentation_fragment:
  - fabric.infiniband.attributes
  - fabric.infiniband.attributes.info_module
  - fabric.infiniband.sysfs
options:
  devices:
    description:
      - Read only these RDMA devices (V(mlx5_0)). When omitted or empty, every RDMA device.
    type: list
    elements: str
  interval:
    description:
      - Seconds between the two reads of the counters, at least (ibdiagnet reads port counters over one second by default).
      - V(0) reads once; the growth is then V(0) for every counter.
    type: float
    default: 1
  state_path:
    description:
      - The record of each port's link-downed count at the last run.
      - An absent or damaged record counts as no last run (RV(ports[].link_downed_since_last_run) is V(null)).
    type: path
    default: /var/lib/fabric-infiniband/port_health.json
  record:
    description:
      - Whether to write the record for the next run. In check mode it is read, never written.
    type: bool
    default: true
notes:
  - Reading the record is the only way to see a flap that came and went between two runs; the kernel's C(link_downed) counter
    starts from 0 when the driver loads, so after a reboot all of it counts as new.
  - C(changed) is V(false) even when the record is written, which is the module's own bookkeeping, not a change to the host.
seealso:
  - name: Linux kernel sysfs ABI for InfiniBand
    description: The files under C(/sys/class/infiniband/<dev>/ports/<n>/) this module reads.
    link: https://www.kernel.org/doc/Documentation/ABI/stable/sysfs-class-infiniband
"""

EXAMPLES = r"""
- name: Read every port's health, the counters two seconds apart
  fabric.infiniband.port_health_info:
    interval: 2
  register: __health

- name: Ports whose symbol errors grew
  ansible.builtin.debug:
    msg: "{{ __health.ports | selectattr('growth.symbol_error', 'gt', 0) | map(attribute='name') | list }}"
"""

RETURN = r"""
ports:
  description: One entry per port of every RDMA device, sorted by device and port.
  returned: always
  type: list
  elements: dict
  contains:
    name:
      description: V(<device>/<port>).
      type: str
      sample: mlx5_0/1
    device:
      description: The RDMA device.
      type: str
    port:
      description: The port number.
      type: int
    pci_address:
      description: The device's PCI function, V(null) without one.
      type: str
    model:
      description: The adapter model from its PCI device id (V(ConnectX-7)), V(null) when unknown.
      type: str
    is_vf:
      description: Whether the device is an SR-IOV virtual function (its port follows the physical function's).
      type: bool
    state:
      description: The logical state (V(ACTIVE), V(INIT), V(DOWN)).
      type: str
    physical_state:
      description: The physical state (V(LinkUp), V(Polling), V(Disabled)).
      type: str
    rate:
      description: The kernel's C(rate) text.
      type: str
      sample: 200 Gb/sec (4X HDR)
    rate_gbps:
      description: Its number.
      type: raw
    width:
      description: The link width (V(1X), V(4X)), V(null) when the C(rate) text does not tell.
      type: str
    speed:
      description: The lane speed (V(EDR), V(HDR), V(NDR)), V(null) when the C(rate) text does not tell.
      type: str
    link_layer:
      description: V(InfiniBand) or V(Ethernet).
      type: str
    port_guid:
      description: The port GUID, from GID 0.
      type: str
    counters:
      description: Each counter at the second read (V(null) when its file is missing).
      type: dict
    growth:
      description: What each counter gained between the two reads.
      type: dict
    link_downed_since_last_run:
      description: How often the link went down since the last run; V(null) without a record of it.
      type: int
interval:
  description: The seconds between the two reads.
  returned: always
  type: float
record_written:
  description: Whether the record of O(state_path) was written.
  returned: always
  type: bool
"""

import json
import os
import time

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.fabric.infiniband.plugins.module_utils import _files
from ansible_collections.fabric.infiniband.plugins.module_utils import common
from ansible_collections.fabric.infiniband.plugins.module_utils import pending
from ansible_collections.fabric.infiniband.plugins.module_utils import porthealth
from ansible_collections.fabric.infiniband.plugins.module_utils import sysfs


def argument_spec():
    spec = common.merge_specs(common.SYSFS_ARG_SPEC)
    spec.update(
        devices=dict(type="list", elements="str"),
        interval=dict(type="float", default=1.0),
        state_path=dict(type="path", default=porthealth.DEFAULT_STATE_PATH),
        record=dict(type="bool", default=True),
    )
    return spec


class PortHealth(object):
    def __init__(self, module):
        self.module = module
        self.fs = sysfs.Sysfs(module.params["sysfs_root"])

    def port_names(self):
        """(device, port number) of every port to read, sorted; a listed device that does not exist is warned about."""
        wanted = set(self.module.params["devices"] or [])
        devices = [d for d in self.fs.ib_devices() if not wanted or d in wanted]
        for name in sorted(wanted - set(devices)):
            self.module.warn("devices: no RDMA device %s" % name)
        return sorted((device, int(entry)) for device in devices
                      for entry in self.fs.listdir("class", "infiniband", device, "ports") if entry.isdigit())

    def describe(self, device, number, models):
        """One port's state, rate, link layer and GUID, with its PCI function, model and whether it is a VF (``models``: the
        PCI function and model of each device read so far)."""
        if device not in models:
            bdf = self.fs.ib_pci_address(device)
            models[device] = (bdf, sysfs.pci_model(self.fs.read("bus", "pci", "devices", bdf, "vendor"),
                                                   self.fs.read("bus", "pci", "devices", bdf, "device"))[0] if bdf else None)
        bdf, model = models[device]
        port = porthealth.read_port(self.fs, device, number)
        port.update(pci_address=bdf, model=model,
                    is_vf=bool(bdf) and self.fs.exists("bus", "pci", "devices", bdf, "physfn"))
        return port

    def gather(self):
        interval = self.module.params["interval"]
        if interval < 0 or interval > 300:
            self.module.fail_json(msg="interval must be between 0 and 300 seconds, not %s" % interval)
        if not self.fs.is_dir():
            self.module.fail_json(msg="sysfs_root %s is not a directory" % self.fs.root)
        names = self.port_names()
        first = [porthealth.read_counters(self.fs, device, number) for device, number in names]
        read_at = time.monotonic()
        # The rest of each port is read while the counters run: every port's two readings are still at least interval apart
        # (its first before read_at, its second after read_at + interval), and the wait is shorter by the time this takes.
        models = {}
        ports = [self.describe(device, number, models) for device, number in names]
        if interval:
            left = read_at + interval - time.monotonic()
            if left > 0:
                time.sleep(left)
        for port, before in zip(ports, first):
            after = porthealth.read_counters(self.fs, port["device"], port["port"]) if interval else before
            port["counters"] = after
            port["growth"] = porthealth.growth(before, after)
        path = self.module.params["state_path"]
        previous = None
        if os.path.isfile(path):
            try:
                with open(path) as handle:
                    previous = porthealth.load_record(handle.read())
            except (IOError, OSError):
                previous = None
        boot = pending.boot_identity()
        for port in ports:
            port["link_downed_since_last_run"] = porthealth.flaps_since(previous, port, boot)
        written = False
        if self.module.params["record"] and not self.module.check_mode:
            record = porthealth.flap_record(ports, boot, time.time())
            try:
                _files.write_atomic(self.module, path, (json.dumps(record, sort_keys=True) + "\n").encode(), 0o644)
                written = True
            except (IOError, OSError) as exc:
                self.module.warn("the flap record %s cannot be written (%s): the next run cannot tell flaps since this one"
                                 % (path, exc))
        return dict(changed=False, ports=ports, interval=interval, record_written=written)


def main():
    module = AnsibleModule(argument_spec=argument_spec(), supports_check_mode=True)
    module.exit_json(**PortHealth(module).gather())


if __name__ == "__main__":
    main()
