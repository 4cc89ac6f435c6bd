# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The rdma_stack role's decisions (plugins/plugin_utils/rdma_stack.py): package names per platform (from the role's vars
files), the platform of a host, the DOCA repository URL and pin, the mixed-install judgement, what node_facts asks for, the
input and kernel module refusals, and the tools' check."""

from __future__ import annotations

import os

import pytest
import yaml

from ansible_collections.fabric.infiniband.plugins.plugin_utils import rdma_stack as rs

ROLE = rs.ROLE_DIR

FACTS = {
    "Debian-12": {"distribution": "Debian", "distribution_version": "12.11", "distribution_major_version": "12",
                  "os_family": "Debian"},
    "Debian-13": {"distribution": "Debian", "distribution_version": "13.2", "distribution_major_version": "13",
                  "os_family": "Debian"},
    "Ubuntu-22.04": {"distribution": "Ubuntu", "distribution_version": "22.04", "distribution_major_version": "22",
                     "os_family": "Debian"},
    "Ubuntu-24.04": {"distribution": "Ubuntu", "distribution_version": "24.04", "distribution_major_version": "24",
                     "os_family": "Debian"},
    "RHEL-8": {"distribution": "RedHat", "distribution_version": "8.10", "distribution_major_version": "8",
               "os_family": "RedHat"},
    "RHEL-9": {"distribution": "RedHat", "distribution_version": "9.6", "distribution_major_version": "9",
               "os_family": "RedHat"},
    "Rocky-8": {"distribution": "Rocky", "distribution_version": "8.10", "distribution_major_version": "8",
                "os_family": "RedHat"},
    "Rocky-9": {"distribution": "Rocky", "distribution_version": "9.6", "distribution_major_version": "9",
                "os_family": "RedHat"},
}

DEB_COMMON = ["rdma-core", "ibverbs-providers", "ibverbs-utils", "rdmacm-utils", "infiniband-diags", "perftest", "mstflint",
              "iproute2", "pciutils", "kmod", "libibverbs1"]
RPM_COMMON = ["rdma-core", "libibverbs", "libibverbs-utils", "librdmacm-utils", "infiniband-diags", "perftest", "mstflint",
              "iproute", "pciutils", "kmod", "libibverbs", "librdmacm"]

# host -> (platform vars file, inbox packages, DOCA distribution directory)
EXPECTED = {
    "Debian-12": ("Debian-12", DEB_COMMON + ["librdmacm1"], "debian12"),
    "Debian-13": ("Debian-13", DEB_COMMON + ["librdmacm1t64"], "debian13"),
    "Ubuntu-22.04": ("Ubuntu-22.04", DEB_COMMON + ["librdmacm1"], "ubuntu22.04"),
    "Ubuntu-24.04": ("Ubuntu-24.04", DEB_COMMON + ["librdmacm1t64"], "ubuntu24.04"),
    "RHEL-8": ("RedHat-8", RPM_COMMON, "rhel8"),
    "RHEL-9": ("RedHat-9", RPM_COMMON, "rhel9"),
    "Rocky-8": ("RedHat-8", RPM_COMMON, "rhel8"),
    "Rocky-9": ("RedHat-9", RPM_COMMON, "rhel9"),
}


def _defaults(**overrides):
    with open(os.path.join(ROLE, "defaults", "main.yml")) as handle:
        settings = yaml.safe_load(handle)
    settings["rdma_stack_doca_key_url"] = settings["rdma_stack_doca_repo_url"].rstrip("/") + "/GPG-KEY-Mellanox.pub"
    settings.update(overrides)
    return settings


def _load(rel):
    with open(os.path.join(ROLE, rel)) as handle:
        return yaml.safe_load(handle)


# ---------------------------------------------------------------- platform and package names

@pytest.mark.parametrize("host", sorted(EXPECTED))
def test_inbox_packages_of_every_supported_platform(host):
    platform, packages, _distro = EXPECTED[host]
    assert rs.platform(FACTS[host]) == platform
    assert rs.platform_problem(FACTS[host], "node01") is None
    assert rs.packages(_defaults(), rs.platform_vars(FACTS[host])) == packages


def test_every_supported_platform_has_its_vars_file_and_a_test():
    assert sorted(rs.SUPPORTED) == sorted({p for p, _pk, _d in EXPECTED.values()})
    for platform in rs.SUPPORTED:
        assert os.path.exists(os.path.join(ROLE, "vars", platform + ".yml")), platform
        assert os.path.exists(os.path.join(ROLE, "vars", platform.split("-", maxsplit=1)[0] + ".yml")) or platform.startswith("Ubuntu")


@pytest.mark.parametrize("facts", [
    {"distribution": "Ubuntu", "distribution_version": "22.10", "distribution_major_version": "22", "os_family": "Debian"},
    {"distribution": "Debian", "distribution_version": "11.11", "distribution_major_version": "11", "os_family": "Debian"},
    {"distribution": "CentOS", "distribution_version": "7.9", "distribution_major_version": "7", "os_family": "RedHat"},
    {"distribution": "RedHat", "distribution_version": "10.0", "distribution_major_version": "10", "os_family": "RedHat"},
    {"distribution": "SLES", "distribution_version": "15.6", "distribution_major_version": "15", "os_family": "Suse"},
])
def test_other_platforms_are_not_supported(facts):
    assert rs.platform(facts) not in rs.SUPPORTED
    msg = rs.platform_problem(facts, "node01")
    assert msg == "rdma_stack supports %s; node01 runs %s %s. Nothing was changed." % (
        rs.SUPPORTED_TEXT, facts["distribution"], facts["distribution_version"])


def test_the_release_file_wins_over_the_family_file():
    assert rs.vars_files(FACTS["Rocky-9"]) == ["RedHat.yml", "RedHat-9.yml"]
    pvars = rs.platform_vars(FACTS["Debian-13"])
    assert pvars["verbs_libraries"] == ["libibverbs1", "librdmacm1t64"]
    assert pvars["remove_command"] == "apt-get purge"


@pytest.mark.parametrize("host", sorted(EXPECTED))
def test_doca_repository_url_as_nvidia_publishes_it(host):
    _platform, _packages, distro = EXPECTED[host]
    settings = _defaults(rdma_stack_flavour="doca")
    pvars = rs.platform_vars(FACTS[host])
    repo = rs.doca_repository(settings, pvars, "x86_64")
    assert repo["url"] == "https://linux.mellanox.com/public/repo/doca/3.3.0/%s/x86_64/" % distro
    assert repo["origin"] == "linux.mellanox.com"
    assert repo["key_url"] == "https://linux.mellanox.com/public/repo/doca/GPG-KEY-Mellanox.pub"
    assert rs.packages(settings, pvars) == ["doca-ofed", "perftest"]


def test_doca_mirror_on_a_local_path_arm():
    settings = _defaults(rdma_stack_doca_repo_url="file:///srv/mirror/doca/", rdma_stack_doca_version="2.9.3",
                         rdma_stack_doca_key_url="file:///srv/mirror/doca/GPG-KEY-Mellanox.pub")
    repo = rs.doca_repository(settings, rs.platform_vars(FACTS["Ubuntu-24.04"]), "aarch64")
    assert repo["url"] == "file:///srv/mirror/doca/2.9.3/ubuntu24.04/arm64-sbsa/"
    assert repo["origin"] == ""
    assert repo["key_url"] == "file:///srv/mirror/doca/GPG-KEY-Mellanox.pub"


def test_extra_packages_are_added():
    assert rs.packages(_defaults(rdma_stack_extra_packages=["opensm"]), rs.platform_vars(FACTS["RHEL-9"])) == RPM_COMMON + ["opensm"]


@pytest.mark.parametrize("flavour", ["inbox", "doca"])
def test_perftest_follows_rdma_stack_perftest(flavour):
    pvars = rs.platform_vars(FACTS["Debian-12"])
    on = rs.packages(_defaults(rdma_stack_flavour=flavour), pvars)
    off = rs.packages(_defaults(rdma_stack_flavour=flavour, rdma_stack_perftest=False), pvars)
    assert on.count("perftest") == 1
    assert "perftest" not in off and len(off) == len(on) - 1


# ---------------------------------------------------------------- the mixed-install judgement

def _judged(host, installed, flavour="inbox"):
    pvars = rs.platform_vars(FACTS[host])
    inbox, ofed = rs.judge(dict(installed), pvars)
    return {"inbox": inbox, "ofed": ofed, "kernel": rs.doca_kernel_installed(dict(installed), pvars)}


def _names(lines):
    return sorted(line.split(" ")[0] for line in lines)


def test_nothing_installed_is_neither():
    assert _judged("Debian-12", []) == {"inbox": [], "ofed": [], "kernel": False}


def test_inbox_libibverbs_is_inbox():
    out = _judged("Debian-12", [("libibverbs1", "44.0-2")])
    assert out["inbox"] == ["libibverbs1 44.0-2"]
    assert out["ofed"] == []


@pytest.mark.parametrize("host, watched", [
    ("Debian-12", ["libibverbs1", "librdmacm1", "rdma-core", "ibverbs-providers"]),
    ("Debian-13", ["libibverbs1", "librdmacm1t64", "rdma-core", "ibverbs-providers"]),
    ("Rocky-8", ["libibverbs", "librdmacm", "rdma-core"]),
])
def test_only_the_verbs_stack_is_judged(host, watched):
    """infiniband-diags and libibumad3 (in the lab image, replaced cleanly by DOCA's) are not asked for."""
    pvars = rs.platform_vars(FACTS[host])
    assert rs.watched(pvars) == watched + pvars["ofed_packages"]
    assert "doca-ofed" in pvars["ofed_packages"]


def test_mixed_debian_install_is_both():
    installed = [("libibverbs1", "44.0-2"), ("ibverbs-providers", "2507mlnx58-1.2507097"),
                 ("mlnx-ofed-kernel-dkms", "25.07.OFED.25.07.0.9.7.1-1"), ("doca-ofed", "3.3.0-1")]
    out = _judged("Debian-12", installed)
    assert _names(out["inbox"]) == ["libibverbs1"]
    assert _names(out["ofed"]) == ["doca-ofed", "ibverbs-providers", "mlnx-ofed-kernel-dkms"]
    assert out["kernel"] is True


def test_doca_on_trixie_by_library_name():
    out = _judged("Debian-13", [("librdmacm1t64", "2507mlnx58-1.2507097"), ("libibverbs1", "2507mlnx58-1.2507097")])
    assert out["inbox"] == []
    assert _names(out["ofed"]) == ["libibverbs1", "librdmacm1t64"]


def test_rpm_version_release_and_kernel_package():
    out = _judged("Rocky-9", [("libibverbs", "2507mlnx58-1.2507097"), ("rdma-core", "48.0-1.el9"),
                              ("kmod-mlnx-ofa_kernel", "25.07-OFED.25.07.0.9.7.1.rhel9u6")])
    assert _names(out["inbox"]) == ["rdma-core"]
    assert _names(out["ofed"]) == ["kmod-mlnx-ofa_kernel", "libibverbs"]
    assert out["kernel"] is True


def test_doca_over_inbox_is_refused_with_what_to_remove():
    pvars = rs.platform_vars(FACTS["Debian-12"])
    msg = rs.conflict_problem("doca", {"libibverbs1": "44.0-2"}, pvars, "node03")
    assert msg.startswith("rdma_stack_flavour is doca, but node03 has inbox RDMA packages installed: libibverbs1 44.0-2.")
    assert "Nothing was changed. Remove them first (apt-get purge libibverbs1) and run the role again, or keep " \
           "rdma_stack_flavour: inbox." in msg
    assert rs.conflict_problem("inbox", {"libibverbs1": "44.0-2"}, pvars, "node03") is None


def test_inbox_over_doca_is_refused_with_the_uninstaller():
    pvars = rs.platform_vars(FACTS["Rocky-9"])
    msg = rs.conflict_problem("inbox", {"libibverbs": "2507mlnx58-1.2507097"}, pvars, "node01")
    assert "OFED/DOCA RDMA packages installed: libibverbs 2507mlnx58-1.2507097" in msg
    assert "(/usr/sbin/ofed_uninstall.sh --force, or dnf remove libibverbs)" in msg
    assert msg.endswith("or set rdma_stack_flavour: doca.")


def test_recorded_doca_over_ubuntu_inbox_is_mixed():
    """What node_facts makes of a recorded query (module_utils/fixtures/pkgquery), judged by the role."""
    from ansible_collections.fabric.infiniband.plugins.module_utils import pkgquery
    from ansible_collections.fabric.infiniband.tests.unit.conftest import read_fixture

    found, problem = pkgquery.parse(pkgquery.DPKG_QUERY, 1, read_fixture("pkgquery/layout_ubuntu2204_doca_mixed.txt"), "")
    assert problem is None
    out = _judged("Ubuntu-22.04", pkgquery.installed(list(rs.QUERY_NAMES), found).items())
    assert out["inbox"] == ["libibverbs1 39.0-1"]
    assert _names(out["ofed"]) == ["doca-ofed", "ibverbs-providers", "librdmacm1", "mlnx-ofed-kernel-dkms", "mlnx-ofed-kernel-utils",
                                   "mlnx-tools", "ofed-scripts", "rdma-core"]
    assert out["kernel"] is True


# ---------------------------------------------------------------- what node_facts asks for

def _vars_files():
    return sorted(name for name in os.listdir(os.path.join(ROLE, "vars")) if name.endswith(".yml"))


def test_every_platform_vars_file_package_is_queried():
    """node_facts runs before the platform is known: it asks for every package name any vars file can ask for
    (lists named *_packages or *_libraries), and the union names no package that no vars file asks for."""
    union = list(rs.QUERY_NAMES)
    assert len(union) == len(set(union)), "a name twice in QUERY_NAMES"
    named = {}
    for name in _vars_files():
        for key, value in (_load("vars/" + name) or {}).items():
            if key.endswith(("_packages", "_libraries")):
                assert isinstance(value, list), (name, key)
                for package in value:
                    named.setdefault(package, "vars/%s %s" % (name, key))
    missing = sorted("%s (%s)" % (package, where) for package, where in named.items() if package not in union)
    assert not missing, "add to QUERY_NAMES in plugins/plugin_utils/rdma_stack.py: %s" % ", ".join(missing)
    assert sorted(set(union) - set(named)) == [], "QUERY_NAMES has names no vars file asks for"


@pytest.mark.parametrize("host", sorted(EXPECTED))
@pytest.mark.parametrize("flavour", ["inbox", "doca"])
def test_the_query_holds_what_the_platform_installs_and_judges(host, flavour):
    settings = _defaults(rdma_stack_flavour=flavour)
    pvars = rs.platform_vars(FACTS[host])
    asked = set(rs.queried(settings))
    assert set(rs.packages(settings, pvars)) <= asked
    assert set(rs.watched(pvars)) <= asked
    assert set(pvars["doca_kernel_packages"]) <= asked


def test_the_query_adds_the_doca_and_extra_packages_that_are_plain_names():
    settings = _defaults(rdma_stack_doca_packages=["doca-roce", "doca-ofed=3.3.0-1"],
                         rdma_stack_extra_packages=["opensm", "rdma-core", "-x", "a b"])
    assert rs.queried(settings) == list(rs.QUERY_NAMES) + ["doca-roce", "opensm"]


def test_a_no_op_installs_nothing():
    installed = dict((name, "44.0-2") for name in EXPECTED["Debian-12"][1])
    assert rs.to_install(rs.packages(_defaults(), rs.platform_vars(FACTS["Debian-12"])), installed) == []


def test_what_is_missing_is_installed():
    installed = {"rdma-core": "44.0-2", "kmod": "30+20221128-1"}
    wanted = rs.packages(_defaults(rdma_stack_extra_packages=["opensm"]), rs.platform_vars(FACTS["Debian-12"]))
    assert rs.to_install(wanted, installed) == [p for p in EXPECTED["Debian-12"][1] if p not in ("rdma-core", "kmod")] + ["opensm"]


# ---------------------------------------------------------------- the input

def test_the_defaults_are_good_input():
    assert rs.input_problems(_defaults()) == []


@pytest.mark.parametrize("overrides, says", [
    ({"rdma_stack_flavour": "mofed"}, ["rdma_stack_flavour must be inbox or doca (is mofed)"]),
    ({"rdma_stack_modules": ["mlx5_core; reboot"]}, ["rdma_stack_modules must be module names (letters, digits"]),
    ({"rdma_stack_extra_packages": ["perftest rm"]}, ["rdma_stack_extra_packages must be package names"]),
    ({"rdma_stack_doca_repo_url": "ftp://mirror.example/doca"}, ["rdma_stack_doca_repo_url", "file:///"]),
    ({"rdma_stack_doca_key_url": "/srv/key"}, ["rdma_stack_doca_key_url", "https://"]),
    ({"rdma_stack_doca_version": "../3.3.0"}, ["rdma_stack_doca_version must be a release directory such as 3.3.0"]),
    ({"rdma_stack_doca_packages": []}, ["rdma_stack_doca_packages must name at least one package"]),
])
def test_bad_input_is_refused_with_the_variable(overrides, says):
    [msg] = rs.input_problems(_defaults(**overrides))
    assert msg.startswith("Invalid input: ")
    for text in says:
        assert text in msg


# ---------------------------------------------------------------- kernel modules (was the filter kernel_module_problems)

# kernel_modules in check mode, as the module returns it when modprobe -n fails
MISSING = {"failed": True, "changed": True, "kernel": "6.1.0-28-amd64",
           "present": ["mlx5_core"], "loaded": ["mlx5_ib"], "cmd": ["/usr/sbin/modprobe", "-n", "mlx5_ibb"], "rc": 1,
           "stdout": "", "stderr": "modprobe: FATAL: Module mlx5_ibb not found in directory /lib/modules/6.1.0-28-amd64\n",
           "msg": "cannot load the kernel module mlx5_ibb: ..."}


def test_a_module_the_kernel_lacks_is_named_with_the_setting():
    [msg] = rs.kernel_module_problems(MISSING, "rdma_stack_modules")
    assert msg.startswith("rdma_stack_modules: mlx5_ibb is not a kernel module of the running kernel 6.1.0-28-amd64 "
                          "(modprobe -n mlx5_ibb: modprobe: FATAL: Module mlx5_ibb not found")
    assert "Accepted: the names of modules installed for that kernel (modinfo <name> finds them); of the list, these exist: " \
           "mlx5_core, mlx5_ib. Nothing was changed." in msg


@pytest.mark.parametrize("result", [
    # every module resolved (a success has no rc)
    {"changed": True, "present": ["mlx5_core"], "loaded": ["mlx5_ib"], "cmd": ["/usr/sbin/modprobe", "-n", "mlx5_ib"]},
    # nothing to resolve
    {"changed": False, "present": ["mlx5_core"], "loaded": [], "cmd": []},
    # modprobe not installed yet: nothing can be told about the names
    {"failed": True, "msg": "cannot load mlx5_ib: modprobe is not installed (package kmod)", "cmd": []},
    # not run
    {"skipped": True, "changed": False},
])
def test_nothing_to_refuse(result):
    assert rs.kernel_module_problems(result, "rdma_stack_modules") == []


def test_not_a_result():
    with pytest.raises(TypeError):
        rs.kernel_module_problems(["mlx5_core"], "rdma_stack_modules")


# ---------------------------------------------------------------- the tools' check

DEVINFO = {"rc": 0, "stdout": "2 HCAs found:\n\tmlx5_0\n\tmlx5_1\n", "stderr": ""}
RDMA = {"rc": 0, "stdout": "netns shared copy-on-fork on\n", "stderr": ""}


def test_the_tools_see_every_device():
    assert rs.verify_problems(["mlx5_1", "mlx5_0"], DEVINFO, RDMA, "Debian") == []


def test_a_device_libibverbs_does_not_see():
    [msg] = rs.verify_problems(["mlx5_0", "mlx5_1", "mlx5_2"], DEVINFO, RDMA, "Debian")
    assert msg.startswith("ibv_devinfo -l (rc 0) lists mlx5_0, mlx5_1, but the kernel has mlx5_0, mlx5_1, mlx5_2")
    assert "Without mlx5_2 no RDMA program" in msg and "(ibverbs-providers, or DOCA's)" in msg


def test_an_old_iproute2():
    rdma = {"rc": 255, "stdout": "", "stderr": 'Object "system" is unknown, try "rdma help".\nUnknown object\n'}
    [msg] = rs.verify_problems(["mlx5_0"], dict(DEVINFO, stdout="\tmlx5_0\n"), rdma, "RedHat")
    assert msg.startswith("rdma system show failed (rc 255)")
    assert "older than 5.3" in msg


def test_no_rdma_tool():
    [msg] = rs.verify_problems([], {"rc": 0, "stdout": ""}, {"rc": None, "msg": "[Errno 2] No such file or directory"}, "RedHat")
    assert msg.endswith("Check that iproute is installed.")
