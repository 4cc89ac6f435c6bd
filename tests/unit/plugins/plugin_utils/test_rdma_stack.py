# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The rdma_stack role's vars: package names per platform, the platform of a host, the DOCA
repository URL and pin, and the mixed-install judgement, rendered with Ansible's own templating
from the role's YAML files (as the role loads them: defaults, vars/main.yml, vars/<family>.yml,
vars/<platform>.yml)."""

from __future__ import annotations

import os

import pytest
import yaml
from ansible.parsing.dataloader import DataLoader
from ansible.plugins.loader import init_plugin_loader
from ansible.template import Templar, trust_as_template

ROLE = os.path.join(os.path.dirname(__file__), "..", "..", "..", "roles", "rdma_stack")

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


def _trust(value):
    if isinstance(value, str):
        return trust_as_template(value)
    if isinstance(value, list):
        return [_trust(v) for v in value]
    if isinstance(value, dict):
        return {k: _trust(v) for k, v in value.items()}
    return value


def _load(rel):
    with open(os.path.join(ROLE, rel)) as handle:
        return yaml.safe_load(handle)


_LOADER_READY = []


def render(facts, names, packages=None, **overrides):
    """Render the role's variables ``names`` for a host with ``facts``, as the role loads its files."""
    if not _LOADER_READY:
        init_plugin_loader()
        _LOADER_READY.append(True)
    variables = {}
    variables.update(_trust(_load("defaults/main.yml")))
    variables.update(_trust(_load("vars/main.yml")))
    facts = dict(facts, architecture=overrides.pop("architecture", "x86_64"))
    variables["ansible_facts"] = facts
    # What node_facts returns: the installed packages among those asked, by name, with their version.
    variables["__rdma_stack_pkgq"] = {"packages": dict(packages or {}), "cmd": []}
    platform = Templar(loader=DataLoader(), variables=variables).template(variables["__rdma_stack_platform"])
    for rel in ("vars/%s.yml" % facts["os_family"], "vars/%s.yml" % platform):
        if os.path.exists(os.path.join(ROLE, rel)):
            variables.update(_trust(_load(rel)))
    variables.update(_trust(overrides))
    templar = Templar(loader=DataLoader(), variables=variables)
    return {name: templar.template(variables[name]) for name in names}


@pytest.mark.parametrize("host", sorted(EXPECTED))
def test_inbox_packages_of_every_supported_platform(host):
    platform, packages, _distro = EXPECTED[host]
    out = render(FACTS[host], ["__rdma_stack_platform", "__rdma_stack_supported", "__rdma_stack_packages"])
    assert out["__rdma_stack_platform"] == platform
    assert platform in out["__rdma_stack_supported"]
    assert out["__rdma_stack_packages"] == packages


def test_every_supported_platform_has_its_vars_file_and_a_test():
    supported = _load("vars/main.yml")["__rdma_stack_supported"]
    assert sorted(supported) == sorted({p for p, _pk, _d in EXPECTED.values()})
    for platform in supported:
        assert os.path.exists(os.path.join(ROLE, "vars", platform + ".yml")), platform
        assert os.path.exists(os.path.join(ROLE, "vars", platform.split("-")[0] + ".yml")) or platform.startswith("Ubuntu")


@pytest.mark.parametrize("facts", [
    {"distribution": "Ubuntu", "distribution_version": "22.10", "distribution_major_version": "22", "os_family": "Debian"},
    {"distribution": "Debian", "distribution_version": "11.11", "distribution_major_version": "11", "os_family": "Debian"},
    {"distribution": "CentOS", "distribution_version": "7.9", "distribution_major_version": "7", "os_family": "RedHat"},
    {"distribution": "RedHat", "distribution_version": "10.0", "distribution_major_version": "10", "os_family": "RedHat"},
    {"distribution": "SLES", "distribution_version": "15.6", "distribution_major_version": "15", "os_family": "Suse"},
])
def test_other_platforms_are_not_supported(facts):
    out = render(facts, ["__rdma_stack_platform", "__rdma_stack_supported"])
    assert out["__rdma_stack_platform"] not in out["__rdma_stack_supported"]


@pytest.mark.parametrize("host", sorted(EXPECTED))
def test_doca_repository_url_as_nvidia_publishes_it(host):
    _platform, _packages, distro = EXPECTED[host]
    out = render(FACTS[host], ["__rdma_stack_doca_url", "__rdma_stack_doca_origin", "rdma_stack_doca_key_url", "__rdma_stack_packages"],
                 rdma_stack_flavour="doca")
    assert out["__rdma_stack_doca_url"] == "https://linux.mellanox.com/public/repo/doca/3.3.0/%s/x86_64/" % distro
    assert out["__rdma_stack_doca_origin"] == "linux.mellanox.com"
    assert out["rdma_stack_doca_key_url"] == "https://linux.mellanox.com/public/repo/doca/GPG-KEY-Mellanox.pub"
    assert out["__rdma_stack_packages"] == ["doca-ofed", "perftest"]


def test_doca_mirror_on_a_local_path_arm():
    out = render(FACTS["Ubuntu-24.04"], ["__rdma_stack_doca_url", "__rdma_stack_doca_origin", "rdma_stack_doca_key_url"],
                 architecture="aarch64", rdma_stack_doca_repo_url="file:///srv/mirror/doca/", rdma_stack_doca_version="2.9.3")
    assert out["__rdma_stack_doca_url"] == "file:///srv/mirror/doca/2.9.3/ubuntu24.04/arm64-sbsa/"
    assert out["__rdma_stack_doca_origin"] == ""
    assert out["rdma_stack_doca_key_url"] == "file:///srv/mirror/doca/GPG-KEY-Mellanox.pub"


def _pkg(name, version):
    return (name, version)


JUDGED = ["__rdma_stack_installed_inbox", "__rdma_stack_installed_ofed", "__rdma_stack_doca_kernel_installed"]


def _names(lines):
    return sorted(line.split(" ")[0] for line in lines)


def test_nothing_installed_is_neither():
    out = render(FACTS["Debian-12"], JUDGED, packages=[])
    assert out == {"__rdma_stack_installed_inbox": [], "__rdma_stack_installed_ofed": [], "__rdma_stack_doca_kernel_installed": False}


def test_inbox_libibverbs_is_inbox():
    out = render(FACTS["Debian-12"], JUDGED, packages=[_pkg("libibverbs1", "44.0-2")])
    assert out["__rdma_stack_installed_inbox"] == ["libibverbs1 44.0-2"]
    assert out["__rdma_stack_installed_ofed"] == []


@pytest.mark.parametrize("host, watched", [
    ("Debian-12", ["libibverbs1", "librdmacm1", "rdma-core", "ibverbs-providers"]),
    ("Debian-13", ["libibverbs1", "librdmacm1t64", "rdma-core", "ibverbs-providers"]),
    ("Rocky-8", ["libibverbs", "librdmacm", "rdma-core"]),
])
def test_only_the_verbs_stack_is_judged(host, watched):
    """infiniband-diags and libibumad3 (in the lab image, replaced cleanly by DOCA's) are not asked for."""
    out = render(FACTS[host], ["__rdma_stack_watched", "__rdma_stack_ofed_packages"])
    assert out["__rdma_stack_watched"] == watched + out["__rdma_stack_ofed_packages"]
    assert "doca-ofed" in out["__rdma_stack_ofed_packages"]


def test_mixed_debian_install_is_both():
    packages = [_pkg("libibverbs1", "44.0-2"), _pkg("ibverbs-providers", "2507mlnx58-1.2507097"),
                _pkg("mlnx-ofed-kernel-dkms", "25.07.OFED.25.07.0.9.7.1-1"), _pkg("doca-ofed", "3.3.0-1")]
    out = render(FACTS["Debian-12"], JUDGED, packages=packages)
    assert _names(out["__rdma_stack_installed_inbox"]) == ["libibverbs1"]
    assert _names(out["__rdma_stack_installed_ofed"]) == ["doca-ofed", "ibverbs-providers", "mlnx-ofed-kernel-dkms"]
    assert out["__rdma_stack_doca_kernel_installed"] is True


def test_doca_on_trixie_by_library_name():
    packages = [_pkg("librdmacm1t64", "2507mlnx58-1.2507097"), _pkg("libibverbs1", "2507mlnx58-1.2507097")]
    out = render(FACTS["Debian-13"], JUDGED, packages=packages)
    assert out["__rdma_stack_installed_inbox"] == []
    assert _names(out["__rdma_stack_installed_ofed"]) == ["libibverbs1", "librdmacm1t64"]


def test_rpm_version_release_and_kernel_package():
    packages = [_pkg("libibverbs", "2507mlnx58-1.2507097"), _pkg("rdma-core", "48.0-1.el9"),
                _pkg("kmod-mlnx-ofa_kernel", "25.07-OFED.25.07.0.9.7.1.rhel9u6")]
    out = render(FACTS["Rocky-9"], JUDGED, packages=packages)
    assert _names(out["__rdma_stack_installed_inbox"]) == ["rdma-core"]
    assert _names(out["__rdma_stack_installed_ofed"]) == ["kmod-mlnx-ofa_kernel", "libibverbs"]
    assert out["__rdma_stack_doca_kernel_installed"] is True


def test_extra_packages_are_added():
    out = render(FACTS["RHEL-9"], ["__rdma_stack_packages"], rdma_stack_extra_packages=["opensm"])
    assert out["__rdma_stack_packages"] == RPM_COMMON + ["opensm"]


# ---------------------------------------------------------------- what node_facts asks for

def _vars_files():
    return sorted(name for name in os.listdir(os.path.join(ROLE, "vars")) if name.endswith(".yml") and name != "main.yml")


def test_every_platform_vars_file_package_is_queried():
    """node_facts runs before the platform is known: it asks for every package name any vars file can ask for
    (lists named *_packages or *_libraries), and the union names no package that no vars file asks for."""
    union = _load("vars/main.yml")["__rdma_stack_query_names"]
    assert len(union) == len(set(union)), "a name twice in __rdma_stack_query_names"
    named = {}
    for name in _vars_files():
        for key, value in (_load("vars/" + name) or {}).items():
            if key.endswith(("_packages", "_libraries")):
                assert isinstance(value, list), (name, key)
                for package in value:
                    named.setdefault(package, "vars/%s %s" % (name, key))
    missing = sorted("%s (%s)" % (package, where) for package, where in named.items() if package not in union)
    assert not missing, "add to __rdma_stack_query_names in vars/main.yml: %s" % ", ".join(missing)
    assert sorted(set(union) - set(named)) == [], "__rdma_stack_query_names has names no vars file asks for"


@pytest.mark.parametrize("host", sorted(EXPECTED))
def test_the_query_holds_what_the_platform_installs_and_judges(host):
    out = render(FACTS[host], ["__rdma_stack_queried", "__rdma_stack_packages", "__rdma_stack_watched", "__rdma_stack_doca_kernel_packages"])
    for name in ("__rdma_stack_packages", "__rdma_stack_watched", "__rdma_stack_doca_kernel_packages"):
        assert set(out[name]) <= set(out["__rdma_stack_queried"]), name
    out = render(FACTS[host], ["__rdma_stack_queried", "__rdma_stack_packages"], rdma_stack_flavour="doca")
    assert set(out["__rdma_stack_packages"]) <= set(out["__rdma_stack_queried"])


def test_the_query_adds_the_doca_and_extra_packages_that_are_plain_names():
    out = render(FACTS["Debian-12"], ["__rdma_stack_queried", "__rdma_stack_query_names"],
                 rdma_stack_doca_packages=["doca-roce", "doca-ofed=3.3.0-1"], rdma_stack_extra_packages=["opensm", "rdma-core", "-x", "a b"])
    assert out["__rdma_stack_queried"] == out["__rdma_stack_query_names"] + ["doca-roce", "opensm"]


def test_a_no_op_installs_nothing():
    packages = [_pkg(name, "44.0-2") for name in EXPECTED["Debian-12"][1]]
    out = render(FACTS["Debian-12"], ["__rdma_stack_to_install", "__rdma_stack_install_needed"], packages=packages)
    assert out == {"__rdma_stack_to_install": [], "__rdma_stack_install_needed": False}


def test_what_is_missing_is_installed():
    packages = [_pkg("rdma-core", "44.0-2"), _pkg("kmod", "30+20221128-1")]
    out = render(FACTS["Debian-12"], ["__rdma_stack_to_install"], packages=packages, rdma_stack_extra_packages=["opensm"])
    assert out["__rdma_stack_to_install"] == [p for p in EXPECTED["Debian-12"][1] if p not in ("rdma-core", "kmod")] + ["opensm"]


def test_recorded_doca_over_ubuntu_inbox_is_mixed():
    """What node_facts makes of a recorded query (module_utils/fixtures/pkgquery), judged by the role."""
    from ansible_collections.fabric.infiniband.plugins.module_utils import pkgquery
    from ansible_collections.fabric.infiniband.tests.unit.conftest import read_fixture

    union = _load("vars/main.yml")["__rdma_stack_query_names"]
    found, problem = pkgquery.parse(pkgquery.DPKG_QUERY, 1, read_fixture("pkgquery/layout_ubuntu2204_doca_mixed.txt"), "")
    assert problem is None
    packages = list(pkgquery.installed(union, found).items())
    registers = dict((name, {}) for name in ("__rdma_stack_key_apt", "__rdma_stack_sources_apt", "__rdma_stack_pin", "__rdma_stack_key_rpm",
                                             "__rdma_stack_sources_dnf"))
    out = render(FACTS["Ubuntu-22.04"], JUDGED, packages=packages, rdma_stack_flavour="doca", **registers)
    assert out["__rdma_stack_installed_inbox"] == ["libibverbs1 39.0-1"]
    assert _names(out["__rdma_stack_installed_ofed"]) == ["doca-ofed", "ibverbs-providers", "librdmacm1", "mlnx-ofed-kernel-dkms",
                                                          "mlnx-ofed-kernel-utils", "mlnx-tools", "ofed-scripts", "rdma-core"]
    assert out["__rdma_stack_doca_kernel_installed"] is True


def test_the_query_after_an_install_tells_the_doca_kernel_package():
    names = ["__rdma_stack_doca_kernel_installed"]
    changed = {"__rdma_stack_install": {"changed": True}, "rdma_stack_flavour": "doca", "__rdma_stack_key_apt": {}, "__rdma_stack_sources_apt": {},
               "__rdma_stack_pin": {}, "__rdma_stack_key_rpm": {}, "__rdma_stack_sources_dnf": {}}
    after = {"packages": {"mlnx-ofed-kernel-dkms": "25.07.OFED.25.07.0.9.7.1-1"}, "cmd": []}
    assert render(FACTS["Debian-12"], names, packages=[], **changed) == {names[0]: False}
    assert render(FACTS["Debian-12"], names, packages=[], __rdma_stack_pkgq_after=after, **changed) == {names[0]: True}
    # a re-query of an earlier inclusion is not this run's when nothing was installed
    assert render(FACTS["Debian-12"], names, packages=[], __rdma_stack_pkgq_after=after, rdma_stack_flavour="doca",
                  **{k: v for k, v in changed.items() if k.startswith("__rdma_stack_") and k != "__rdma_stack_install"}) == {names[0]: False}


@pytest.mark.parametrize("flavour", ["inbox", "doca"])
def test_perftest_follows_rdma_stack_perftest(flavour):
    on = render(FACTS["Debian-12"], ["__rdma_stack_packages"], rdma_stack_flavour=flavour)["__rdma_stack_packages"]
    off = render(FACTS["Debian-12"], ["__rdma_stack_packages"], rdma_stack_flavour=flavour,
                 rdma_stack_perftest=False)["__rdma_stack_packages"]
    assert on.count("perftest") == 1
    assert "perftest" not in off and len(off) == len(on) - 1
