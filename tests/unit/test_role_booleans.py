# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Every boolean role option is used through ``| bool`` (issue 22, class 4).

A role's argument specification of ``type: bool`` accepts the text ``"false"`` (what ``-e key=value`` and AWX
surveys pass), but does not change the variable: used raw, ``"false"`` is a non-empty string and counts as true
(``k8s_network_multus_enabled=false`` sent the Multus CRDs, ``opensm_allow_both_pkeys=false`` allowed ``defmember:
both``). This test reads every role's tasks, handlers, vars, defaults and templates, and the playbooks, and fails on
a boolean option (of any role) used in a condition or a Jinja expression without ``| bool`` right after it.

Allowed without ``| bool``: the option passed on whole (``"{{ name }}"`` as a module's or role's parameter, which
converts it as its own specification says), a mapping key, YAML comments and prose outside ``{{ }}``/``{% %}``.
"""

from __future__ import annotations

import glob
import os
import re

import pytest
import yaml

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
# Keys whose value is a bare Jinja expression (no braces).
CONDITION_KEYS = ("when", "changed_when", "failed_when", "until", "that")
_JINJA = re.compile(r"{{(.*?)}}|{%(.*?)%}", re.DOTALL)
_STRING = re.compile(r"'[^']*'|\"[^\"]*\"")
_CONVERTED = r"\s*(?:\|\s*default\([^()]*\)\s*)?\|\s*bool\b"


def _boolean_options():
    names = set()
    for path in glob.glob(os.path.join(ROOT, "roles", "*", "meta", "argument_specs.yml")):
        with open(path, encoding="utf-8") as handle:
            specs = yaml.safe_load(handle)["argument_specs"]
        for spec in specs.values():
            names.update(name for name, option in (spec.get("options") or {}).items() if option.get("type") == "bool")
    return names


BOOLEANS = _boolean_options()
_USE = re.compile(r"(?<![\w.'\"\[])(%s)(?![\w'\"])" % "|".join(sorted(BOOLEANS, key=len, reverse=True)))


def _unconverted(expression, whole_ok):
    """The boolean options used in a Jinja expression without ``| bool``."""
    if whole_ok and expression.strip() in BOOLEANS:
        return []
    expression = _STRING.sub("''", expression)  # a name in a string literal is prose
    return [m.group(1) for m in _USE.finditer(expression) if not re.match(_CONVERTED, expression[m.end():])]


def _walk(node, key=None):
    """(expression, whole value passed on as is allowed) for every Jinja expression of a YAML document."""
    if isinstance(node, dict):
        for child_key, value in node.items():
            yield from _walk(value, child_key)
    elif isinstance(node, list):
        for value in node:
            yield from _walk(value, key)
    elif isinstance(node, str):
        if key in CONDITION_KEYS:
            yield node, False
        else:
            for match in _JINJA.finditer(node):
                yield (match.group(1) if match.group(1) is not None else match.group(2)), match.group(0) == node.strip()


def _files():
    out = []
    for sub in ("tasks", "handlers", "vars", "defaults"):
        out += glob.glob(os.path.join(ROOT, "roles", "*", sub, "**", "*.yml"), recursive=True)
    out += glob.glob(os.path.join(ROOT, "playbooks", "*.yml"))
    return sorted(out)


def _templates():
    return sorted(glob.glob(os.path.join(ROOT, "roles", "*", "templates", "**", "*.j2"), recursive=True))


class _Loader(yaml.SafeLoader):
    """SafeLoader that reads Ansible's tags (!unsafe, !vault) as plain values."""


_Loader.add_multi_constructor("!", lambda loader, suffix, node: loader.construct_scalar(node)
                              if isinstance(node, yaml.ScalarNode) else None)


def problems_in_yaml(text, where):
    found = []
    for document in yaml.load_all(text, Loader=_Loader):
        for expression, whole in _walk(document):
            found += ["%s: %s in %r" % (where, name, expression.strip()) for name in _unconverted(expression, whole)]
    return found


def problems_in_template(text, where):
    found = []
    for match in _JINJA.finditer(text):
        expression = match.group(1) if match.group(1) is not None else match.group(2)
        found += ["%s: %s in %r" % (where, name, expression.strip()) for name in _unconverted(expression, False)]
    return found


def test_the_roles_have_boolean_options():
    # what the scan looks for: the options of the issue among them
    assert {"k8s_network_multus_enabled", "opensm_allow_both_pkeys", "node_reboot_allow"} <= BOOLEANS


@pytest.mark.parametrize("text, expected", [
    ("- name: x\n  when: k8s_network_multus_enabled\n", ["k8s_network_multus_enabled"]),
    ("- name: x\n  when: not node_reboot_allow | bool\n", []),
    ("- name: x\n  when: [node_reboot_drain | default(true) | bool, node_reboot_allow]\n", ["node_reboot_allow"]),
    ("- name: x\n  set_fact:\n    a: \"{{ opensm_priority if opensm_allow_both_pkeys else 0 }}\"\n", ["opensm_allow_both_pkeys"]),
    ("- name: x\n  some.module:\n    validate_certs: \"{{ node_reboot_bmc_validate_certs }}\"\n", []),
    ("- name: x\n  fail:\n    msg: set node_reboot_allow to true\n", []),
    ("- name: x\n  assert:\n    that: [sriov_persist]\n", ["sriov_persist"]),
    ("node_reboot_allow: \"{{ infiniband_allow_reboot | default(false) }}\"\n", []),
    ("- name: x\n  debug:\n    msg: \"{{ 'set node_reboot_allow' if x else '' }}\"\n", []),
])
def test_the_scan_finds_a_raw_use(text, expected):
    assert [p.split(": ")[1].split(" in ")[0] for p in problems_in_yaml(text, "t")] == expected


def test_the_scan_reads_templates():
    assert problems_in_template("{% if k8s_network_whereabouts_enabled %}x{% endif %}", "t") == [
        "t: k8s_network_whereabouts_enabled in 'if k8s_network_whereabouts_enabled'"]
    assert problems_in_template("{% if k8s_network_whereabouts_enabled | bool %}x{% endif %}", "t") == []


def test_every_boolean_option_is_used_through_bool():
    found = []
    for path in _files():
        with open(path, encoding="utf-8") as handle:
            found += problems_in_yaml(handle.read(), os.path.relpath(path, ROOT))
    for path in _templates():
        with open(path, encoding="utf-8") as handle:
            found += problems_in_template(handle.read(), os.path.relpath(path, ROOT))
    assert found == [], "boolean options used without | bool:\n" + "\n".join(found)
