#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
module: perftest
short_description: Move RDMA traffic between two nodes with perftest and return the bandwidth and latency
version_added: 0.1.0
description:
  - Runs perftest's C(ib_write_bw) and C(ib_read_lat) on one RDMA device, as the server (it waits for one client per test) or
    as the client (it connects to a server over TCP to exchange the queue pair details, then moves the data over RDMA).
  - Run the server first, in the background (C(async) with C(poll=0)), then the client on the other node; each test uses its
    own TCP port, O(tcp_port) for the first test and one more for each next one.
  - Every run is bounded in time by coreutils' C(timeout) (O(timeout), then killed 5 s later), so a server whose client never
    comes stops by itself. The client retries while no server listens yet, for at most O(connect_timeout) seconds per test.
  - Commands run as argument lists, never through a shell. Reads the result table of every perftest release (4.x prints
    C(MB/sec), the newest C(MiB/sec); the runs ask for C(Gb/sec) with C(--report_gbits)), whatever its spacing.
  - Changes nothing on the node. In check mode no traffic moves; the module returns the commands it would run.
author:
  - fabric.infiniband developers (@fabric-infiniband)
extends_documentation_fragment:
  - fabric.infiniband.attributes
  - fabric.infiniband.sysfs
options:
  role:
    description: V(server) waits for the client; V(client) connects to O(server_address).
    type: str
    required: true
    choices: [server, client]
  tests:
    description: The tests, in order; the server and the client must be given the same list.
    type: list
    elements: str
    choices: [write_bw, read_lat]
    default: [write_bw, read_lat]
  device:
    description: The RDMA device (V(mlx5_0), V(rxe0)), as C(ibv_devices) lists it.
    type: str
    required: true
  ib_port:
    description: The port of O(device).
    type: int
    default: 1
  tcp_port:
    description: TCP port of the first test's exchange; the next test uses the next port.
    type: int
    required: true
  server_address:
    description: Address of the server's node that the client reaches over TCP. Required for V(client).
    type: str
  bw_iterations:
    description: Iterations of C(ib_write_bw) (C(-n)); V(null) keeps perftest's default (5000 of 64 KiB).
    type: int
  lat_iterations:
    description: Iterations of C(ib_read_lat) (C(-n)); V(null) keeps perftest's default (1000).
    type: int
  timeout:
    description: Seconds one test may take, the server's wait for its client included.
    type: int
    default: 60
  connect_timeout:
    description: Seconds the client retries a test while no server listens on its port yet.
    type: int
    default: 30
  dev_root:
    description: Root of the device files (C(/dev)); the device's user-verbs file C(infiniband/uverbsN) must exist under it.
    type: path
    default: /dev
attributes:
  check_mode:
    support: full
    details:
      - No traffic moves in check mode; RV(tests) holds the commands the run would start.
  diff_mode:
    support: N/A
    details:
      - The module changes nothing.
notes:
  - Needs perftest on the node (C(rdma_stack_perftest) of the rdma_stack role installs it).
seealso:
  - module: fabric.infiniband.hca_info
"""

EXAMPLES = r"""
- name: Start the servers of the pair
  fabric.infiniband.perftest:
    role: server
    device: mlx5_0
    tcp_port: 18515
  async: 150
  poll: 0
  register: __server
  when: inventory_hostname == 'node01'

- name: Run the client against node01
  fabric.infiniband.perftest:
    role: client
    device: mlx5_0
    tcp_port: 18515
    server_address: 10.0.0.1
  register: __client
  when: inventory_hostname == 'node02'

- name: Show the bandwidth in Gb/s and the latency in microseconds
  ansible.builtin.debug:
    msg: "{{ __client.tests.write_bw.bw_gbps }} Gb/s, {{ __client.tests.read_lat.lat_us }} us"
  when: inventory_hostname == 'node02'
"""

RETURN = r"""
ran:
  description: Whether traffic moved (V(false) in check mode).
  returned: always
  type: bool
tests:
  description: Per test name, what ran and what it measured.
  returned: always
  type: dict
  contains:
    cmd:
      description: The command (C(timeout) first, then the perftest program and its arguments).
      type: list
      elements: str
    rc:
      description: Its exit code (124 when C(timeout) stopped it); V(null) when it did not run.
      type: int
    bw_gbps:
      description: C(ib_write_bw) only, the average bandwidth in Gb/s (10^9 bits per second).
      type: float
    bw_peak_gbps:
      description: C(ib_write_bw) only, the peak bandwidth in Gb/s.
      type: float
    lat_us:
      description: C(ib_read_lat) only, the typical latency (the median) in microseconds, else the average when the release prints no typical.
      type: float
    lat_avg_us:
      description: C(ib_read_lat) only, the average latency in microseconds.
      type: float
    lat_p99_us:
      description: C(ib_read_lat) only, the 99th percentile in microseconds, when printed.
      type: float
    error:
      description: The line of the output that says why the test failed, when it failed.
      type: str
  sample:
    write_bw: {cmd: [/usr/bin/timeout, --kill-after=5, "60", /usr/bin/ib_write_bw, -d, mlx5_0, -i, "1", -p, "18515", -F,
                     --report_gbits, 10.0.0.1], rc: 0, bw_gbps: 195.2, bw_peak_gbps: 196.1}
    read_lat: {cmd: [/usr/bin/timeout, --kill-after=5, "60", /usr/bin/ib_read_lat, -d, mlx5_0, -i, "1", -p, "18516", -F,
                     10.0.0.1], rc: 0, lat_us: 2.41, lat_avg_us: 2.45, lat_p99_us: 3.1}
cmds:
  description: Every command run, in order.
  returned: always
  type: list
  elements: list
"""

import os
import time

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.fabric.infiniband.plugins.module_utils import common
from ansible_collections.fabric.infiniband.plugins.module_utils import perftest
from ansible_collections.fabric.infiniband.plugins.module_utils import sysfs
from ansible_collections.fabric.infiniband.plugins.module_utils._runner import LOCALE_ENV

KILL_AFTER = 5
RETRY_PAUSE = 1.0


class Perftest(object):

    def __init__(self, module):
        self.module = module
        self.params = module.params
        self.tree = sysfs.Sysfs(module.params["sysfs_root"])
        self.result = dict(changed=False, ran=False, tests={}, cmds=[])

    def fail(self, msg):
        self.module.fail_json(msg=msg, **self.result)

    def check_options(self):
        params = self.params
        if params["role"] == "client" and not params["server_address"]:
            self.fail("server_address: required when role is client (the address of the server's node)")
        if not 1 <= params["tcp_port"] <= 65535 - len(params["tests"]):
            self.fail("tcp_port: %s is no TCP port for %d tests (1-%d)" % (params["tcp_port"], len(params["tests"]),
                                                                           65535 - len(params["tests"])))
        for name in ("timeout", "connect_timeout", "bw_iterations", "lat_iterations", "ib_port"):
            if params[name] is not None and params[name] < 1:
                self.fail("%s: %s is not a positive number" % (name, params[name]))
        if len(set(params["tests"])) != len(params["tests"]):
            self.fail("tests: %s names a test twice" % ", ".join(params["tests"]))

    def check_device(self):
        device = self.params["device"]
        devices = self.tree.ib_devices()
        if device not in devices:
            self.fail("device: %s is no RDMA device of this node (it has: %s)" % (device, ", ".join(devices) or "none"))
        uverbs = self.tree.uverbs_device(device)
        path = os.path.join(self.params["dev_root"], "infiniband", uverbs or "uverbs?")
        if not uverbs or not os.path.exists(path):
            self.fail("%s has no user-verbs device (%s missing): perftest cannot open it; is ib_uverbs loaded?"
                      % (device, path))

    def argv(self, test, tcp_port):
        program = self.module.get_bin_path(perftest.tool(test), required=False)
        if not program:
            self.fail("%s not found: install perftest (the rdma_stack role does with rdma_stack_perftest: true)"
                      % perftest.tool(test))
        iterations = self.params["bw_iterations" if test == "write_bw" else "lat_iterations"]
        server = self.params["server_address"] if self.params["role"] == "client" else None
        wrapper = self.module.get_bin_path("timeout", required=True)
        return [wrapper, "--kill-after=%d" % KILL_AFTER, str(self.params["timeout"]), program] + perftest.args(
            test, self.params["device"], self.params["ib_port"], tcp_port, server=server, iterations=iterations)

    def run_once(self, argv):
        self.result["cmds"].append(argv)
        return self.module.run_command(argv, check_rc=False, environ_update=dict(LOCALE_ENV), expand_user_and_vars=False)

    def run_test(self, test, tcp_port):
        argv = self.argv(test, tcp_port)
        entry = dict(cmd=argv, rc=None)
        self.result["tests"][test] = entry
        if self.module.check_mode:
            return True
        deadline = time.time() + self.params["connect_timeout"]
        while True:
            rc, out, err = self.run_once(argv)
            if rc == 0 or self.params["role"] != "client" or not perftest.connect_refused(out, err) \
                    or time.time() >= deadline:
                break
            time.sleep(RETRY_PAUSE)
        entry["rc"] = rc
        figures = perftest.result(test, out) if rc == 0 else None
        if figures is None:
            if rc == 124:
                waited = "client came" if self.params["role"] == "server" else "result"
                why = "no %s within %d s" % (waited, self.params["timeout"])
            else:
                why = perftest.error(out, err) or "no result table in its output"
            entry.update(error=why, stdout=out, stderr=err)
            return False
        entry.update(figures)
        return True

    def run(self):
        self.check_options()
        self.check_device()
        for index, test in enumerate(self.params["tests"]):
            if not self.run_test(test, self.params["tcp_port"] + index):
                entry = self.result["tests"][test]
                self.fail("%s %s on %s port %d (TCP %d%s): %s" % (
                    self.params["role"], perftest.tool(test), self.params["device"], self.params["ib_port"],
                    self.params["tcp_port"] + index,
                    ", server " + self.params["server_address"] if self.params["role"] == "client" else "",
                    entry["error"]))
        self.result["ran"] = not self.module.check_mode
        return self.result


def main():
    spec = common.merge_specs(common.SYSFS_ARG_SPEC, dict(
        role=dict(type="str", required=True, choices=["server", "client"]),
        tests=dict(type="list", elements="str", choices=list(perftest.TESTS), default=["write_bw", "read_lat"]),
        device=dict(type="str", required=True),
        ib_port=dict(type="int", default=1),
        tcp_port=dict(type="int", required=True),
        server_address=dict(type="str"),
        bw_iterations=dict(type="int"),
        lat_iterations=dict(type="int"),
        timeout=dict(type="int", default=60),
        connect_timeout=dict(type="int", default=30),
        dev_root=dict(type="path", default="/dev"),
    ))
    module = AnsibleModule(argument_spec=spec, supports_check_mode=True)
    module.exit_json(**Perftest(module).run())


if __name__ == "__main__":
    main()
