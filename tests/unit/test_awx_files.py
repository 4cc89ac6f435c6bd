# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""awx/: the job templates, their surveys and the credential types, as AWX would take them.

awx/load.yml needs an AWX and the awx.awx collection, so it never runs here; test_awx_argspecs.py
checks its calls against awx.awx's argument specs, and these tests check the data it sends:
playbooks that exist in the project, inventory directories that exist, credential types that are
AWX's own or defined in awx/credential_types.yml, survey specs in AWX's shape
(https://docs.ansible.com/automation-controller/latest/html/userguide/job_templates.html#surveys)
and no secret anywhere a survey could show it.
"""

from __future__ import annotations

import os
import re

import pytest
import yaml

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
AWX = os.path.join(ROOT, "awx")


# AWX's built-in credential types the templates may use, besides those of credential_types.yml.
BUILTIN_CREDENTIAL_TYPES = {"Machine", "Source Control", "Vault", "Container Registry"}

SURVEY_TYPES = {"text", "textarea", "password", "integer", "float", "multiplechoice", "multiselect"}
QUESTION_KEYS = {"question_name", "question_description", "variable", "type", "default", "required", "choices", "min",
                 "max", "new_question"}
SECRET_NAME = re.compile(r"pass(word|phrase)?|secret|token|credential|private_key|api_key", re.IGNORECASE)


class _Loader(yaml.SafeLoader):
    """Reads Ansible's !unsafe tag (credential_types.yml) as the plain string it marks."""


_Loader.add_constructor("!unsafe", lambda loader, node: loader.construct_scalar(node))


def _load(name):
    with open(os.path.join(AWX, name)) as handle:
        return yaml.load(handle, Loader=_Loader)


TEMPLATES = _load("job_templates.yml")["awx_job_templates"]
CREDENTIAL_TYPES = _load("credential_types.yml")["awx_credential_types"]
SURVEYED = [t for t in TEMPLATES if t.get("survey_enabled")]


def _ids(templates):
    return [t["name"] for t in templates]


def test_the_templates():
    assert _ids(TEMPLATES) == ["Prepare InfiniBand nodes", "Rolling reboot of waiting nodes", "Verify the fabric",
                               "Prepare InfiniBand nodes (sliced)", "InfiniBand fabric and cluster"]
    assert len(set(_ids(TEMPLATES))) == len(TEMPLATES)


@pytest.mark.parametrize("template", TEMPLATES, ids=_ids(TEMPLATES))
def test_playbook_exists(template):
    playbook = template["playbook"]
    assert not os.path.isabs(playbook) and ".." not in playbook.split("/")
    assert os.path.isfile(os.path.join(ROOT, playbook)), "%s names %s, which is not in the project" % (template["name"], playbook)


@pytest.mark.parametrize("template", TEMPLATES, ids=_ids(TEMPLATES))
def test_template_fields(template):
    assert os.path.isfile(os.path.join(ROOT, template["inventory_source"], "hosts.yml"))
    assert template["job_type"] in ("run", "check")
    assert isinstance(template.get("job_slice_count", 1), int) and template.get("job_slice_count", 1) >= 1
    known = BUILTIN_CREDENTIAL_TYPES | {c["name"] for c in CREDENTIAL_TYPES}
    assert template["credential_types"] and set(template["credential_types"]) <= known
    assert "Machine" in template["credential_types"], "every template logs in to the nodes"
    for key, value in template.items():
        if key.startswith("ask_"):
            assert key.endswith("_on_launch") and isinstance(value, bool), key
    assert isinstance(template["survey_enabled"], bool)
    assert template["survey_enabled"] == ("survey_spec" in template)


@pytest.mark.parametrize("template", SURVEYED, ids=_ids(SURVEYED))
def test_survey_spec_shape(template):
    survey = template["survey_spec"]
    assert set(survey) == {"name", "description", "spec"}
    assert survey["name"] and isinstance(survey["description"], str)
    assert survey["spec"], "an enabled survey asks something"
    variables = [q["variable"] for q in survey["spec"]]
    assert len(set(variables)) == len(variables), "one question per variable"
    for question in survey["spec"]:
        where = "%s: %s" % (template["name"], question.get("variable"))
        assert {"question_name", "variable", "type", "required"} <= set(question), where
        assert set(question) <= QUESTION_KEYS, where
        assert question["type"] in SURVEY_TYPES, where
        assert re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", question["variable"]), where
        assert isinstance(question["required"], bool), where
        if question["type"] in ("multiplechoice", "multiselect"):
            choices = question["choices"]
            assert isinstance(choices, list) and choices and all(isinstance(c, str) and c for c in choices), where
            default = question.get("default", "")
            chosen = default.split("\n") if question["type"] == "multiselect" and default else [default]
            assert all(c in choices for c in chosen if c), "%s: default %r not among %r" % (where, default, choices)
        if question["type"] in ("integer", "float"):
            number = int if question["type"] == "integer" else (int, float)
            assert isinstance(question["min"], number) and isinstance(question["max"], number), where
            assert question["min"] <= question["default"] <= question["max"], where
        if question["required"]:
            assert question.get("default") not in (None, ""), "%s: a required question has a default here" % where


@pytest.mark.parametrize("template", SURVEYED, ids=_ids(SURVEYED))
def test_no_survey_default_is_a_secret(template):
    for question in template["survey_spec"]["spec"]:
        where = "%s: %s" % (template["name"], question["variable"])
        secret_like = question["type"] == "password" or SECRET_NAME.search(question["variable"] + " " + question["question_name"])
        assert not secret_like, "%s: secrets come from credentials, not surveys" % where
        default = str(question.get("default", ""))
        # Long unbroken tokens (keys, hashes, base64) have no place in a default either.
        assert not re.search(r"[A-Za-z0-9+/=_-]{24,}", default), "%s: default %r looks like a secret" % (where, default)


def test_consent_questions_default_to_false():
    for template in SURVEYED:
        for question in template["survey_spec"]["spec"]:
            if "_allow_" in question["variable"]:
                assert question["default"] == "false", "%s: %s" % (template["name"], question["variable"])


def test_survey_variables_of_roles_exist_in_their_specs():
    """A survey question that sets a role variable names one the role has."""
    for template in SURVEYED:
        for question in template["survey_spec"]["spec"]:
            variable = question["variable"]
            if variable.startswith("infiniband_"):
                continue  # the playbooks' own variables: test_playbook_variables_are_read
            role = next((r for r in os.listdir(os.path.join(ROOT, "roles")) if variable.startswith(r + "_")), None)
            assert role, "%s: %s belongs to no role" % (template["name"], variable)
            with open(os.path.join(ROOT, "roles", role, "meta", "argument_specs.yml")) as handle:
                options = yaml.safe_load(handle)["argument_specs"]["main"]["options"]
            assert variable in options, "%s: %s is not an option of role %s" % (template["name"], variable, role)
            assert options[variable]["type"] == "bool" and question["choices"] == ["false", "true"]


def _playbooks_text():
    text = ""
    for name in sorted(os.listdir(os.path.join(ROOT, "playbooks"))):
        if name.endswith(".yml"):
            with open(os.path.join(ROOT, "playbooks", name)) as handle:
                text += handle.read()
    return text


def test_playbook_variables_are_read():
    """The playbooks' own variables that surveys, extra vars and credentials set are read by a playbook
    (checked once the template's playbook is in the project)."""
    text = _playbooks_text()
    injected = [n for c in CREDENTIAL_TYPES for n in c["injectors"]["extra_vars"]]
    for template in TEMPLATES:
        if not os.path.exists(os.path.join(ROOT, template["playbook"])):
            continue
        names = [q["variable"] for q in template.get("survey_spec", {}).get("spec", [])]
        names += list(template.get("extra_vars", {}))
        if "InfiniBand node BMC" in template["credential_types"]:
            names += injected
        for name in names:
            if name.startswith("infiniband_"):
                assert re.search(r"\b%s\b" % name, text), "%s: no playbook reads %s" % (template["name"], name)


def test_credential_types_inject_secrets_as_secret_fields():
    for ctype in CREDENTIAL_TYPES:
        fields = {f["id"]: f for f in ctype["inputs"]["fields"]}
        assert set(ctype["inputs"].get("required", [])) <= set(fields)
        assert ctype["kind"] in ("cloud", "net")
        for field in fields.values():
            assert {"id", "label", "type"} <= set(field)
            if SECRET_NAME.search(field["id"]):
                assert field.get("secret") is True, "%s: %s must be secret" % (ctype["name"], field["id"])
        for name, value in ctype["injectors"]["extra_vars"].items():
            # AWX's own template of one of the type's fields, filled in by AWX at launch.
            match = re.match(r"^\{\{ (\w+) \}\}$", value)
            assert match and match.group(1) in fields, "%s: %s" % (ctype["name"], name)
    surveyed = {q["variable"] for t in SURVEYED for q in t["survey_spec"]["spec"]}
    injected = {n for c in CREDENTIAL_TYPES for n in c["injectors"]["extra_vars"]}
    assert not surveyed & injected, "a survey answer would override the credential"


def test_load_playbook_reads_these_files():
    with open(os.path.join(AWX, "load.yml")) as handle:
        text = handle.read()
    for name in ("job_templates.yml", "credential_types.yml", "awx.awx.job_template", "awx.awx.inventory_source",
                 "awx.awx.project", "awx.awx.credential_type", "ansible-galaxy collection install awx.awx"):
        assert name in text


WORKFLOWS = _load("job_templates.yml")["awx_workflows"]


def test_sliced_workflow_prepares_nodes_in_slices_then_runs_the_fleet_wide_job():
    """Slices of nodes.yml share what they found with fabric_cluster.yml only through the fact cache."""
    by_name = dict((t["name"], t) for t in TEMPLATES)
    (workflow,) = WORKFLOWS
    nodes = dict((n["identifier"], n) for n in workflow["nodes"])
    assert [nodes[i]["job_template"] for i in nodes] == ["Prepare InfiniBand nodes (sliced)", "InfiniBand fabric and cluster"]
    for node in workflow["nodes"]:
        assert node["job_template"] in by_name
        assert set(node["success_nodes"]) <= set(nodes)
    assert nodes["prepare-nodes"]["success_nodes"] == ["fabric-and-cluster"]
    prepare, fleet = by_name["Prepare InfiniBand nodes (sliced)"], by_name["InfiniBand fabric and cluster"]
    assert prepare["playbook"] == "playbooks/nodes.yml" and prepare["job_slice_count"] > 1 and prepare["use_fact_cache"] is True
    assert fleet["playbook"] == "playbooks/fabric_cluster.yml" and fleet.get("job_slice_count", 1) == 1 and fleet["use_fact_cache"]
    # The consents are asked once, by the workflow, with the same questions as the unsliced template.
    assert workflow["survey_spec"]["spec"] == by_name["Prepare InfiniBand nodes"]["survey_spec"]["spec"]
