# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The one list of the collection's infiniband_* names (issue 33, class 3): every such name a playbook, a role, a
plugin, the AWX definitions or the variables page uses is in it, so that the unknown-settings check never refuses
one of the collection's own."""

from __future__ import annotations

import glob
import os
import re

from ansible_collections.fabric.infiniband.plugins.plugin_utils import playbook_vars

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", ".."))
NAME = re.compile(r"\binfiniband_[a-z0-9_]*[a-z0-9]\b")
PLACES = ("playbooks/**/*.yml", "roles/*/defaults/*.yml", "roles/*/tasks/*.yml", "roles/*/meta/*.yml", "roles/*/vars/*.yml",
          "roles/*/handlers/*.yml", "roles/*/templates/*", "plugins/**/*.py", "awx/**/*.yml", "inventories/**/*.yml",
          "docs/docsite/rst/variables.rst", "scripts/gen_variables_doc.py")


def used():
    out = {}
    for pattern in PLACES:
        for path in glob.glob(os.path.join(ROOT, pattern), recursive=True):
            if os.path.isfile(path) and not path.endswith("plugin_utils/playbook_vars.py"):
                with open(path, encoding="utf-8") as handle:
                    for name in NAME.findall(handle.read()):
                        out.setdefault(name, os.path.relpath(path, ROOT))
    return out


def test_every_infiniband_name_in_use_is_known():
    names = used()
    assert "infiniband_allow_reboot" in names and "infiniband_hca" in names  # the search finds them
    missing = dict((name, where) for name, where in names.items()
                   if name not in playbook_vars.KNOWN and name not in playbook_vars.NOT_VARIABLES)
    assert not missing, ("infiniband_* names used but not in plugins/plugin_utils/playbook_vars.py (add them to SETTINGS, "
                         "FACTS or NOT_VARIABLES): %s" % missing)


def test_the_list_has_no_name_nobody_uses():
    names = used()
    assert sorted(n for n in playbook_vars.KNOWN if n not in names) == []


def test_the_lists_are_apart_and_prefixed():
    assert not set(playbook_vars.SETTINGS) & set(playbook_vars.FACTS)
    assert all(n.startswith(playbook_vars.PREFIX) for n in playbook_vars.KNOWN | set(playbook_vars.NOT_VARIABLES))
