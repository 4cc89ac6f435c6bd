#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
module: node_facts
short_description: Read a node's distribution, platform and package manager facts and which of some packages are installed, in one run
version_added: 0.1.0
description:
  - Returns the facts M(ansible.builtin.setup) returns with O(ansible.builtin.setup#module:gather_subset=[distribution, platform,
    pkg_mgr]), computed by the same fact collectors of ansible-core, so that C(ansible_facts['os_family']),
    C(ansible_facts['distribution_major_version']), C(ansible_facts['architecture']), C(ansible_facts['pkg_mgr']) and the others
    of these subsets read the same as after M(ansible.builtin.setup).
  - With O(packages), also asks the package database of the node's family which of these packages are installed, and returns
    their versions. C(dpkg-query) on the Debian family (Debian, Ubuntu), C(rpm) on the RedHat family (RHEL, Rocky Linux) and
    on the Suse family.
  - It exists so that a role that needs the platform and what is installed reads both with one module run instead of
    M(ansible.builtin.setup) followed by M(ansible.builtin.command).
  - Never changes anything.
author:
  - fabric.infiniband developers (@fabric-infiniband)
requirements:
  - C(dpkg-query) (dpkg) on the Debian family, C(rpm) on the RedHat and Suse families, when O(packages) names a package.
extends_documentation_fragment:
  - fabric.infiniband.attributes
  - fabric.infiniband.attributes.info_module
  - ansible.builtin.action_common_attributes.facts
attributes:
  facts:
    support: full
    details:
      - Only with O(facts=true).
options:
  facts:
    description:
      - Whether to return the facts of the C(distribution), C(platform) and C(pkg_mgr) subsets as facts (C(ansible_facts)).
      - V(false) leaves the facts the host has alone (gathered earlier, or set by a test); the package database is still chosen
        by the node's own family, read for that purpose only.
    type: bool
    default: true
  packages:
    description:
      - Names of packages to look up, as the package database spells them (V(libibverbs1) on Debian, V(libibverbs) on RHEL).
        A name the database does not know, or a name of the other family, is reported as not installed.
      - Each is given to the tool as it is, after C(--). A name with a version, an architecture or a pattern (V(libibverbs1:amd64),
        V(librdmacm*)) makes the tool print other names, so it is never reported as installed.
      - A name may not hold a blank or a line break, nor start with C(-).
      - When empty, no command runs.
    type: list
    elements: str
    default: []
notes:
  - The facts do not include C(gather_subset) and C(module_setup), which only M(ansible.builtin.setup) returns; a later play
    with C(gather_facts) and C(gathering=smart) still gathers facts.
  - C(dpkg-query) counts a package as installed only in the state C(installed); a package removed with its configuration kept
    (C(config-files)) or half installed is not.
  - A package installed in several versions (RPM kernel module packages, one per kernel) is reported with the version C(rpm)
    prints last.
  - On a family other than Debian, RedHat and Suse, RV(packages) is empty, RV(cmd) is V([]) and the module warns.
seealso:
  - module: ansible.builtin.setup
  - module: ansible.builtin.package_facts
    description: Every package installed, with all its versions and architectures; slower, and no facts of the platform.
  - name: dpkg-query(1)
    description: The C(-W) query, its C(--showformat) and its exit status.
    link: https://manpages.debian.org/bookworm/dpkg/dpkg-query.1.en.html
"""

EXAMPLES = r"""
- name: Read the platform, and which RDMA packages are installed
  fabric.infiniband.node_facts:
    packages: [rdma-core, libibverbs1, libibverbs, doca-ofed]
  register: node

- name: Tell what to install
  ansible.builtin.debug:
    msg: >-
      {{ ansible_facts['distribution'] }} {{ ansible_facts['distribution_version'] }} ({{ ansible_facts['architecture'] }}):
      {{ ['rdma-core', 'doca-ofed'] | reject('in', node.packages) | list }} missing

- name: Only the packages (the facts came from an earlier play)
  fabric.infiniband.node_facts:
    facts: false
    packages: [mlnx-ofed-kernel-dkms, kmod-mlnx-ofa_kernel]
  register: doca_kernel

- name: Only the facts
  fabric.infiniband.node_facts:
"""

RETURN = r"""
ansible_facts:
  description:
    - The facts of M(ansible.builtin.setup)'s C(distribution), C(platform) and C(pkg_mgr) subsets, with the same names (with the
      C(ansible_) prefix, read as C(ansible_facts['distribution']) and so on) and the same values.
    - Only some are listed here; M(ansible.builtin.setup) documents them all.
  returned: when O(facts=true)
  type: dict
  contains:
    ansible_distribution:
      description: The distribution.
      type: str
      sample: Debian
    ansible_distribution_version:
      description: Its full version.
      type: str
      sample: "12.11"
    ansible_distribution_major_version:
      description: Its major version.
      type: str
      sample: "12"
    ansible_distribution_release:
      description: Its release name.
      type: str
      sample: bookworm
    ansible_os_family:
      description: The family of the distribution.
      type: str
      sample: Debian
    ansible_architecture:
      description: The architecture.
      type: str
      sample: x86_64
    ansible_kernel:
      description: The running kernel's release.
      type: str
      sample: 6.1.0-28-amd64
    ansible_pkg_mgr:
      description: The package manager, as M(ansible.builtin.package) uses it.
      type: str
      sample: apt
  sample:
    ansible_architecture: x86_64
    ansible_distribution: Debian
    ansible_distribution_file_parsed: true
    ansible_distribution_file_path: /etc/os-release
    ansible_distribution_file_variety: Debian
    ansible_distribution_major_version: "12"
    ansible_distribution_minor_version: "11"
    ansible_distribution_release: bookworm
    ansible_distribution_version: "12.11"
    ansible_domain: ""
    ansible_fqdn: node01
    ansible_hostname: node01
    ansible_kernel: 6.1.0-28-amd64
    ansible_kernel_version: "#1 SMP PREEMPT_DYNAMIC Debian 6.1.119-1 (2024-11-22)"
    ansible_machine: x86_64
    ansible_machine_id: 504a6b00c16e4135943e617ea47e00e4
    ansible_nodename: node01
    ansible_os_family: Debian
    ansible_pkg_mgr: apt
    ansible_python_version: 3.11.2
    ansible_system: Linux
    ansible_userspace_architecture: x86_64
    ansible_userspace_bits: "64"
packages:
  description:
    - The packages of O(packages) that are installed, by name, with their version (C(dpkg-query)'s C(${Version}), with the epoch
      when there is one; C(rpm)'s C(%{VERSION}-%{RELEASE})).
    - The names that are not installed are left out. Empty when O(packages) is.
  returned: always
  type: dict
  sample: {"rdma-core": "44.0-2", "libibverbs1": "44.0-2"}
cmd:
  description: The command run, V([]) when none ran.
  returned: always
  type: list
  elements: str
  sample: ["/usr/bin/dpkg-query", "-W", "-f=${Package} ${db:Status-Status} ${Version}\n", "--", "rdma-core", "libibverbs1"]
"""

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.common.text.converters import to_native
from ansible.module_utils.facts import ansible_collector, default_collectors
from ansible.module_utils.facts.namespace import PrefixFactNamespace

from ansible_collections.fabric.infiniband.plugins.module_utils import pkgquery
from ansible_collections.fabric.infiniband.plugins.module_utils._runner import Runner


FACT_SUBSETS = ["distribution", "platform", "pkg_mgr"]
# What setup adds about its own run; not facts of the node.
SETUP_ONLY = ("gather_subset", "module_setup")


def argument_spec():
    return dict(
        facts=dict(type="bool", default=True),
        packages=dict(type="list", elements="str", default=[]),
    )


def gather(module, subsets):
    """The facts of ``subsets`` as setup returns them with ``gather_subset: [subsets]``: the same collectors, chosen the same way."""
    collector = ansible_collector.get_ansible_collector(
        all_collector_classes=default_collectors.collectors,
        namespace=PrefixFactNamespace(namespace_name="ansible", prefix="ansible_"),
        gather_subset=["!all", "!min"] + list(subsets),
        gather_timeout=10,
    )
    facts = collector.collect(module=module)
    return dict((key, value) for key, value in facts.items() if key not in SETUP_ONLY)


class NodeFacts(object):

    def __init__(self, module):
        self.module = module
        self.params = module.params
        self.result = dict(changed=False, packages={}, cmd=[])

    def failed(self):
        """The result to fail with: without the facts, which a failed task does not set."""
        return dict((key, value) for key, value in self.result.items() if key != "ansible_facts")

    def fail(self, msg):
        self.module.fail_json(msg=msg, **self.failed())

    def query(self, os_family, names):
        tool = pkgquery.tool_for(os_family)
        if tool is None:
            self.module.warn("packages: no package database query for the os_family %s (dpkg-query for Debian, rpm for RedHat and Suse); "
                             "packages is empty" % os_family)
            return
        runner = Runner(self.module, tool)
        res = runner.run(pkgquery.query_args(tool, names))
        self.result["cmd"] = res.cmd
        found, problem = pkgquery.parse(tool, res.rc, res.stdout, res.stderr)
        if problem:
            said = " ".join((res.stderr or "").split()) or "no message"
            runner.fail("cannot tell which packages are installed: %s: %s" % (problem, said), res, **self.failed())
        self.result["packages"] = pkgquery.installed(names, found)

    def read(self):
        try:
            names = pkgquery.check_names(self.params["packages"])
        except ValueError as exc:
            self.fail(to_native(exc))
        if self.params["facts"]:
            facts = gather(self.module, FACT_SUBSETS)
            self.result["ansible_facts"] = facts
        elif names:
            # the package database of the node's own family, whatever the host's facts say
            facts = gather(self.module, ["distribution"])
        if names:
            self.query(facts.get("ansible_os_family"), names)
        return self.result


def main():
    module = AnsibleModule(argument_spec=argument_spec(), supports_check_mode=True)
    module.exit_json(**NodeFacts(module).read())


if __name__ == "__main__":
    main()
