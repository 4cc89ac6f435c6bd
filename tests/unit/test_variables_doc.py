# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""docs/docsite/rst/variables.rst is what scripts/gen_variables_doc.py makes of the roles' argument
specs and its table of playbook variables, now: a changed spec or a new role without a regenerated
page fails here. Also the generator's markup conversion, on small inputs.
"""

from __future__ import annotations

import difflib
import importlib.util
import os

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SCRIPT = os.path.join(ROOT, "scripts", "gen_variables_doc.py")
PAGE = os.path.join(ROOT, "docs", "docsite", "rst", "variables.rst")


@pytest.fixture(scope="module")
def gen():
    spec = importlib.util.spec_from_file_location("gen_variables_doc", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_playbook_variable_is_described(gen):
    missing = gen.missing_playbook_variables(gen.ROOT)
    assert not missing, (
        "playbooks/*.yml use %s: describe them in PLAYBOOK_VARIABLES of scripts/gen_variables_doc.py "
        "(or NOT_VARIABLES), then run: python scripts/gen_variables_doc.py" % ", ".join(missing))


def test_no_stale_playbook_variable(gen):
    used = gen.playbook_names(gen.ROOT)
    stale = [row[0] for row in gen.PLAYBOOK_VARIABLES if row[0] not in used]
    assert not stale, "PLAYBOOK_VARIABLES describes %s, which no playbook reads any more" % ", ".join(stale)


def test_committed_page_is_current(gen):
    wanted = gen.render(gen.ROOT)
    with open(PAGE, encoding="utf-8") as handle:
        committed = handle.read()
    if committed != wanted:
        diff = "".join(list(difflib.unified_diff(committed.splitlines(True), wanted.splitlines(True),
                                                 "docs/docsite/rst/variables.rst", "generated now"))[:60])
        pytest.fail("docs/docsite/rst/variables.rst is out of date with roles/*/meta/argument_specs.yml; regenerate it with:\n"
                    "  python scripts/gen_variables_doc.py\n" + diff, pytrace=False)


def test_every_role_option_is_on_the_page(gen):
    import yaml

    with open(PAGE, encoding="utf-8") as handle:
        page = handle.read()
    for role in sorted(os.listdir(os.path.join(ROOT, "roles"))):
        specs_file = os.path.join(ROOT, "roles", role, "meta", "argument_specs.yml")
        if not os.path.isfile(specs_file):
            continue
        with open(specs_file, encoding="utf-8") as handle:
            specs = yaml.safe_load(handle)["argument_specs"]
        assert "Role ``%s``" % role in page
        for spec in specs.values():
            for name in spec.get("options") or {}:
                assert "\n``%s``\n" % name in page, "%s of role %s is not on the page" % (name, role)


@pytest.mark.parametrize("text, rst", [
    ("C(/opt/cni/bin)", "``/opt/cni/bin``"),
    ("V(true) or V(false)", "``true`` or ``false``"),
    ("O(k8s_network_state=absent) removes", "``k8s_network_state=absent`` removes"),
    ("M(fabric.infiniband.k8s_network_nads#filter)", "``fabric.infiniband.k8s_network_nads``"),
    ("C(<prefix>/<name>)s", "``<prefix>/<name>``\\ s"),
    ("a*b and name_ and |x|", "a\\*b and name\\_ and \\|x\\|"),
    ("L(the manual, https://example.net/m)", "`the manual <https://example.net/m>`__"),
    ("two\n  lines", "two lines"),
])
def test_markup(gen, text, rst):
    assert gen._markup_to_rst(text) == rst


def test_option_with_suboptions_and_block_default(gen):
    lines = gen._option("x_list", {
        "type": "list", "elements": "dict", "description": ["First.", "Second C(y)."],
        "default": [{"name": "a", "ids": ["1", "2"]}],
        "options": {"name": {"type": "str", "required": True, "description": "The name."}},
    }, 0)
    text = "\n".join(lines)
    assert text.startswith("``x_list``\n   *list of dict*; default below.\n\n   First.\n\n   Second ``y``.")
    assert ".. code-block:: yaml" in text and "      - name: a" in text
    assert "   Keys of each element:\n\n   ``name``\n      *str*; required.\n\n      The name." in text


def test_roles_appearing_later_are_picked_up(gen, tmp_path):
    role = tmp_path / "roles" / "newrole" / "meta"
    role.mkdir(parents=True)
    (role / "argument_specs.yml").write_text(
        "argument_specs:\n  main:\n    short_description: A new role\n    options:\n"
        "      newrole_dir: {type: str, default: report, description: Where.}\n", encoding="utf-8")
    (tmp_path / "playbooks").mkdir()
    (tmp_path / "playbooks" / "x.yml").write_text("- hosts: all\n  # infiniband_not_read in a comment\n", encoding="utf-8")
    text = gen.render(tmp_path)
    assert "Role ``newrole``" in text and "``newrole_dir``\n   *str*; default ``report``." in text
