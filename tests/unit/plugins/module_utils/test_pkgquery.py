# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""module_utils/pkgquery.py: the dpkg-query and rpm argv, package names, and the parser against the outputs in
fixtures/pkgquery/ (README.md there says where each comes from)."""

from __future__ import annotations

import pytest

from ansible_collections.fabric.infiniband.plugins.module_utils import pkgquery
from ansible_collections.fabric.infiniband.tests.unit.conftest import fixture_path, read_fixture


# Every name rdma_stack's vars files can ask for, in the order of roles/rdma_stack/vars/main.yml: the query of the fixtures.
UNION = ["rdma-core", "ibverbs-providers", "ibverbs-utils", "rdmacm-utils", "infiniband-diags", "perftest", "mstflint", "iproute2",
         "pciutils", "kmod", "libibverbs1", "librdmacm1", "librdmacm1t64", "doca-ofed", "mlnx-ofed-kernel-dkms",
         "mlnx-ofed-kernel-utils", "mlnx-ofed-kernel-modules", "mlnx-tools", "ofed-scripts", "libibverbs", "libibverbs-utils",
         "librdmacm", "librdmacm-utils", "iproute", "mlnx-ofa_kernel", "kmod-mlnx-ofa_kernel", "mlnx-ofa_kernel-dkms"]

DEB12 = {"ibverbs-providers": "44.0-2", "ibverbs-utils": "44.0-2", "infiniband-diags": "44.0-2", "iproute2": "6.1.0-3",
         "kmod": "30+20221128-1", "libibverbs1": "44.0-2", "librdmacm1": "44.0-2", "mstflint": "4.21.0+1-1", "pciutils": "1:3.9.0-4",
         "perftest": "4.5+0.17-1", "rdma-core": "44.0-2", "rdmacm-utils": "44.0-2"}
RHEL9 = {"rdma-core": "54.0-1.el9", "infiniband-diags": "54.0-1.el9", "perftest": "25.01.0.0.84-1.el9", "mstflint": "4.29.0-1.el9",
         "pciutils": "3.7.0-7.el9", "kmod": "28-10.el9", "libibverbs": "54.0-1.el9", "libibverbs-utils": "54.0-1.el9",
         "librdmacm": "54.0-1.el9", "librdmacm-utils": "54.0-1.el9", "iproute": "6.11.0-1.el9"}

# fixture -> (tool, rc as recorded, installed packages among UNION)
RECORDED = {
    "real_debian12_converged": (pkgquery.DPKG_QUERY, 1, DEB12),
    "real_debian12_fresh": (pkgquery.DPKG_QUERY, 1, {"infiniband-diags": "44.0-2", "iproute2": "6.1.0-3", "kmod": "30+20221128-1"}),
    # iproute2 removed with its configuration kept (config-files), iproute known but not-installed (empty version)
    "real_debian12_config_files": (pkgquery.DPKG_QUERY, 1, {"infiniband-diags": "44.0-2", "kmod": "30+20221128-1"}),
    "real_debian13_fresh": (pkgquery.DPKG_QUERY, 1, {"infiniband-diags": "56.1-1", "iproute2": "6.15.0-1", "kmod": "34.2-2"}),
    "layout_ubuntu2204_converged": (pkgquery.DPKG_QUERY, 1, {
        "rdma-core": "39.0-1", "ibverbs-providers": "39.0-1", "ibverbs-utils": "39.0-1", "rdmacm-utils": "39.0-1",
        "infiniband-diags": "39.0-1", "perftest": "4.4+0.37-1", "mstflint": "4.16.0-2", "iproute2": "5.15.0-1ubuntu2",
        "pciutils": "1:3.7.0-6", "kmod": "29-1ubuntu1", "libibverbs1": "39.0-1", "librdmacm1": "39.0-1"}),
    "layout_ubuntu2404_converged": (pkgquery.DPKG_QUERY, 1, {
        "rdma-core": "50.0-2build2", "ibverbs-providers": "50.0-2build2", "ibverbs-utils": "50.0-2build2",
        "rdmacm-utils": "50.0-2build2", "infiniband-diags": "50.0-2build2", "perftest": "24.01.0+0.38-1",
        "mstflint": "4.26.0+1-1build1", "iproute2": "6.1.0-1ubuntu6", "pciutils": "1:3.10.0-2build1",
        "kmod": "31+20240202-2ubuntu7", "libibverbs1": "50.0-2build2", "librdmacm1t64": "50.0-2build2"}),
    "layout_ubuntu2204_doca_mixed": (pkgquery.DPKG_QUERY, 1, {
        "rdma-core": "2507mlnx58-1.2507097", "ibverbs-providers": "2507mlnx58-1.2507097", "ibverbs-utils": "2507mlnx58-1.2507097",
        "iproute2": "5.15.0-1ubuntu2", "pciutils": "1:3.7.0-6", "kmod": "29-1ubuntu1", "libibverbs1": "39.0-1",
        "librdmacm1": "2507mlnx58-1.2507097", "doca-ofed": "3.3.0-1", "mlnx-ofed-kernel-dkms": "25.07.OFED.25.07.0.9.7.1-1",
        "mlnx-ofed-kernel-utils": "25.07.OFED.25.07.0.9.7.1-1", "mlnx-tools": "25.07-0.2507097", "ofed-scripts": "25.07.OFED.25.07.0.9.7-1"}),
    "real_rpm_rhel9_inbox": (pkgquery.RPM, 16, RHEL9),
    "real_rpm_rhel8_inbox": (pkgquery.RPM, 21, {
        "rdma-core": "48.0-1.el8", "pciutils": "3.7.0-3.el8", "kmod": "25-20.el8", "libibverbs": "48.0-1.el8",
        "librdmacm": "48.0-1.el8", "iproute": "6.2.0-6.el8_10"}),
    # kmod-mlnx-ofa_kernel installed for two kernels: the version rpm prints last
    "real_rpm_rhel9_doca": (pkgquery.RPM, 15, {
        "rdma-core": "2507mlnx58-1.2507097", "pciutils": "3.7.0-7.el9", "kmod": "28-10.el9", "doca-ofed": "3.3.0-1",
        "mlnx-tools": "25.07-0.2507097", "ofed-scripts": "25.07-OFED.25.07.0.9.7", "libibverbs": "2507mlnx58-1.2507097",
        "libibverbs-utils": "54.0-1.el9", "librdmacm": "2507mlnx58-1.2507097", "iproute": "6.11.0-1.el9",
        "mlnx-ofa_kernel": "25.07-OFED.25.07.0.9.7.1.1", "kmod-mlnx-ofa_kernel": "25.07-OFED.25.07.0.9.7.1.rhel9u6"}),
}


def outputs(name):
    """(stdout, stderr) of a fixture; a missing .stderr is an empty one."""
    try:
        err = read_fixture("pkgquery/%s.stderr" % name)
    except IOError:
        err = ""
    return read_fixture("pkgquery/%s.txt" % name), err


@pytest.mark.parametrize("name", sorted(RECORDED))
def test_recorded_outputs(name):
    tool, rc, expected = RECORDED[name]
    out, err = outputs(name)
    found, problem = pkgquery.parse(tool, rc, out, err)
    assert problem is None
    assert pkgquery.installed(UNION, found) == expected
    # the order of the names asked, whatever order the tool printed them in
    assert list(pkgquery.installed(UNION, found)) == [n for n in UNION if n in expected]


def test_every_fixture_is_in_a_test():
    import os

    names = set(f.rsplit(".", 1)[0] for f in os.listdir(fixture_path("pkgquery")) if not f.endswith(".md"))
    assert names == set(RECORDED) | {"real_debian12_broken_status", "real_rpm_broken_db", "real_rpm_rhel9_verbs",
                                     "real_rpm_rhel9_doca_unknown"}


def test_rpm_every_name_installed_exits_0():
    found, problem = pkgquery.parse(pkgquery.RPM, 0, read_fixture("pkgquery/real_rpm_rhel9_verbs.txt"), "")
    assert (found, problem) == ({"libibverbs": "54.0-1.el9", "librdmacm": "54.0-1.el9"}, None)


def test_rpm_one_unknown_name_exits_1():
    found, problem = pkgquery.parse(pkgquery.RPM, 1, read_fixture("pkgquery/real_rpm_rhel9_doca_unknown.txt"), "")
    assert (found, problem) == ({"doca-ofed": "3.3.0-1"}, None)


def test_dpkg_query_error_fails():
    out, err = outputs("real_debian12_broken_status")
    assert pkgquery.parse(pkgquery.DPKG_QUERY, 2, out, err) == (None, "dpkg-query failed with rc 2")


def test_rpm_database_error_fails_although_every_name_is_said_not_installed():
    out, err = outputs("real_rpm_broken_db")
    assert "package rdma-core is not installed" in out
    assert pkgquery.parse(pkgquery.RPM, 2, out, err) == (None, "rpm failed with rc 2 (error on stderr)")


def test_rpm_status_without_a_line_that_explains_it_fails():
    assert pkgquery.parse(pkgquery.RPM, 1, "", "") == (None, "rpm failed with rc 1")
    assert pkgquery.parse(pkgquery.RPM, 1, "rdma-core installed 54.0-1.el9\n", "") == (None, "rpm failed with rc 1")


def test_rpm_warning_does_not_fail():
    found, problem = pkgquery.parse(pkgquery.RPM, 0, "rdma-core installed 54.0-1.el9\n",
                                    "warning: Found bdb Packages database while attempting sqlite backend: using bdb backend.\n")
    assert (found, problem) == ({"rdma-core": "54.0-1.el9"}, None)


@pytest.mark.parametrize("line", [
    "iproute not-installed ",
    "iproute2 config-files 6.1.0-3",
    "rdma-core half-installed 44.0-2",
    "rdma-core unpacked 44.0-2",
    "package rdma-core is not installed",
    "rdma-core installed",
    "",
])
def test_lines_that_are_not_an_installed_package(line):
    assert pkgquery.parse_lines(line + "\n") == {}


def test_installed_keeps_only_the_names_asked():
    found = pkgquery.parse_lines("librdmacm1 installed 44.0-2\nlibibverbs1 installed 44.0-2\n")
    assert pkgquery.installed(["librdmacm*", "libibverbs1:amd64", "libibverbs1"], found) == {"libibverbs1": "44.0-2"}


def test_query_args():
    assert pkgquery.query_args(pkgquery.DPKG_QUERY, ["rdma-core", "libibverbs1"]) == \
        ["-W", "-f=${Package} ${db:Status-Status} ${Version}\n", "--", "rdma-core", "libibverbs1"]
    assert pkgquery.query_args(pkgquery.RPM, ["rdma-core"]) == ["-q", "--qf", "%{NAME} installed %{VERSION}-%{RELEASE}\n", "--", "rdma-core"]
    with pytest.raises(ValueError):
        pkgquery.query_args("pacman", ["x"])


@pytest.mark.parametrize("family, tool", [("Debian", "dpkg-query"), ("RedHat", "rpm"), ("Suse", "rpm"), ("Gentoo", None), (None, None)])
def test_tool_for(family, tool):
    assert pkgquery.tool_for(family) == tool


def test_check_names_keeps_the_order_and_each_name_once():
    assert pkgquery.check_names(["rdma-core", "libibverbs1", "rdma-core", "doca-ofed=3.3.0-1", "librdmacm*", "libibverbs1:amd64"]) == \
        ["rdma-core", "libibverbs1", "doca-ofed=3.3.0-1", "librdmacm*", "libibverbs1:amd64"]


@pytest.mark.parametrize("names, index", [
    (["-x"], 0),
    (["rdma-core", "--purge"], 1),
    (["rdma-core ibverbs-utils"], 0),
    (["rdma-core\nlibibverbs1 installed 44.0-2"], 0),
    ([""], 0),
    (["rdma-core", " kmod"], 1),
    (["rdma-core\t"], 0),
])
def test_check_names_refuses(names, index):
    with pytest.raises(ValueError) as exc:
        pkgquery.check_names(names)
    assert str(exc.value).startswith("packages[%d] %r is not a package name: " % (index, names[index]))
    assert pkgquery.NAME_TEXT in str(exc.value)
