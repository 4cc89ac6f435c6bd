# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""awx/load.yml against the argument specs of the awx.awx modules it calls.

No AWX runs here and awx.awx is not installed, so the specs are a fixture
(tests/unit/fixtures/awx/, awx.awx 24.6.1, recorded from the ansible/awx repository). Each awx.awx
task of load.yml is rendered with ansible-core's templar, once per loop item, with the play's
variables and the data files awx/job_templates.yml and awx/credential_types.yml; every option it
passes must exist, be of the option's type and, where the option has choices, one of them; every
required option must be given. The data files' own fields must be options of the module that takes
them.
"""

from __future__ import annotations

import json
import os

import pytest
import yaml
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
AWX = os.path.join(ROOT, "awx")
FIXTURE = os.path.join(os.path.dirname(__file__), "fixtures", "awx", "awx.awx-24.6.1-argument_specs.json")

# Fields of the data files that load.yml reads itself instead of passing them to a module.
DATA_ONLY_FIELDS = {"inventory_source", "credential_types"}


class _Loader(yaml.SafeLoader):
    """Reads Ansible's !unsafe tag as the plain string it marks (AWX's own templates)."""


_Loader.add_constructor("!unsafe", lambda loader, node: loader.construct_scalar(node))


def _load(path):
    with open(path) as handle:
        return yaml.load(handle, Loader=_Loader)


with open(FIXTURE) as _handle:
    SPECS = json.load(_handle)
# Ansible's own loader: its strings are templates Ansible trusts, and !unsafe stays unrendered.
PLAY = DataLoader().load_from_file(os.path.join(AWX, "load.yml"), trusted_as_template=True)[0]
DATA = {}
for _name in ("job_templates.yml", "credential_types.yml"):
    DATA.update(DataLoader().load_from_file(os.path.join(AWX, _name), trusted_as_template=True))
AWX_TASKS = [t for t in PLAY["tasks"] if any(k.startswith("awx.awx.") for k in t)]

PYTHON_TYPES = {"str": str, "bool": bool, "int": int, "dict": dict, "list": list}


def _module(task):
    return next(k for k in task if k.startswith("awx.awx.")).split(".", 2)[2]


def _render(task):
    """The task's arguments as the module would get them, one dict per loop item."""
    variables = dict(PLAY["vars"])
    variables.update(DATA)
    variables["playbook_dir"] = AWX
    variables["awx_project_scm_url"] = "https://git.example.net/fabric-infiniband.git"
    templar = Templar(loader=DataLoader(), variables=variables)
    items = templar.template(task["loop"]) if "loop" in task else [None]
    assert items, "%s: the loop is empty" % task["name"]
    rendered = []
    for item in items:
        item_templar = Templar(loader=DataLoader(), variables=dict(variables, item=item))
        # Templated as one dict, as Ansible does: an option that renders to omit drops out.
        rendered.append((item, item_templar.template(task["awx.awx." + _module(task)])))
    return rendered


def _check_value(module, option, spec, value):
    errors = []
    expected = PYTHON_TYPES[spec["type"]]
    # ansible-core converts "true"/"1" and numeric strings; load.yml passes real booleans and integers.
    if not isinstance(value, expected) or (spec["type"] == "int" and isinstance(value, bool)):
        errors.append("%s.%s: %r is %s, the module wants %s" % (module, option, value, type(value).__name__, spec["type"]))
    if "choices" in spec and value not in spec["choices"]:
        errors.append("%s.%s: %r is not one of %s" % (module, option, value, spec["choices"]))
    if spec["type"] == "list" and spec.get("elements") and isinstance(value, list):
        element = PYTHON_TYPES[spec["elements"]]
        errors += ["%s.%s: element %r is not %s" % (module, option, v, spec["elements"]) for v in value
                   if not isinstance(v, element)]
    return errors


def test_fixture_names_its_source():
    assert SPECS["collection"] == "awx.awx"
    assert SPECS["version"] == "24.6.1"
    assert "github.com/ansible/awx, tag 24.6.1" in " ".join(SPECS["_about"])
    # The fixture is the real spec, not an empty shell: a few facts of awx.awx 24.6.1.
    assert SPECS["modules"]["job_template"]["job_type"]["choices"] == ["run", "check"]
    assert SPECS["modules"]["execution_environment"]["pull"]["choices"] == ["always", "missing", "never"]
    assert SPECS["modules"]["job_template"]["survey_spec"]["type"] == "dict"


def test_load_calls_only_modules_of_the_fixture():
    modules = [_module(t) for t in AWX_TASKS]
    assert modules == ["credential_type", "execution_environment", "project", "inventory", "inventory_source",
                       "job_template", "workflow_job_template", "workflow_job_template_node", "workflow_job_template_node"]
    assert set(modules) <= set(SPECS["modules"])


@pytest.mark.parametrize("task", AWX_TASKS, ids=[t["name"] for t in AWX_TASKS])
def test_task_arguments_match_the_module_spec(task):
    module = _module(task)
    spec = SPECS["modules"][module]
    names = {}
    for option, option_spec in spec.items():
        names[option] = option
        for alias in option_spec.get("aliases", []):
            names[alias] = option
    errors = []
    for item, args in _render(task):
        where = "%s (item %s)" % (module, item["name"]) if isinstance(item, dict) and "name" in item else module
        unknown = sorted(set(args) - set(names))
        errors += ["%s: unknown option %s" % (where, o) for o in unknown]
        given = {names[o] for o in args if o in names}
        errors += ["%s: required option %s missing" % (where, o) for o, s in spec.items()
                   if s.get("required") and o not in given]
        for option, value in args.items():
            if option in names:
                errors += _check_value(where, option, spec[names[option]], value)
    assert not errors, "\n".join(errors)


@pytest.mark.parametrize("data, module", [("awx_job_templates", "job_template"),
                                          ("awx_credential_types", "credential_type")])
def test_data_fields_are_module_options(data, module):
    spec = SPECS["modules"][module]
    errors = []
    for entry in DATA[data]:
        for field in sorted(set(entry) - DATA_ONLY_FIELDS):
            if field not in spec:
                errors.append("%s %r: %s is not an option of awx.awx.%s" % (data, entry["name"], field, module))
            else:
                errors += _check_value(module, field, spec[field], entry[field])
    assert not errors, "\n".join(errors)


def test_every_data_field_reaches_the_module():
    """A field of job_templates.yml that load.yml does not pass would be silently dropped."""
    task = next(t for t in AWX_TASKS if _module(t) == "job_template")
    passed = set(task["awx.awx.job_template"])
    fields = {f for t in DATA["awx_job_templates"] for f in t} - DATA_ONLY_FIELDS
    assert fields <= passed, sorted(fields - passed)


def test_the_checks_catch_a_wrong_value():
    spec = SPECS["modules"]["job_template"]
    assert _check_value("job_template", "job_type", spec["job_type"], "deploy")
    assert _check_value("job_template", "job_slice_count", spec["job_slice_count"], "1")
    assert _check_value("job_template", "survey_enabled", spec["survey_enabled"], "false")
    assert not _check_value("job_template", "job_type", spec["job_type"], "check")
