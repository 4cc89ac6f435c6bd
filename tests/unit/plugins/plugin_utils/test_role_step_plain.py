# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""role_step.plain: a step's facts and results leave without Ansible's data tags (each tag is serialized into the results
queue and a fact cache, and deserialized on every read of a host's variables)."""

from __future__ import annotations

import json

from ansible._internal._datatag._tags import Origin
from ansible.template import trust_as_template

from ansible_collections.fabric.infiniband.plugins.plugin_utils.role_step import plain


def exact_types(value):
    """Every value's type, recursively, as its exact type (a tagged str is a subclass of str)."""
    kind = type(value)
    if kind in (dict,):
        return all(type(k) in (str, int) and exact_types(v) for k, v in value.items())
    if kind in (list,):
        return all(exact_types(v) for v in value)
    return kind in (str, int, float, bool, type(None))


def test_tags_are_dropped_values_kept():
    origin = Origin(path="/inventory/host_vars/node01.yml", line_num=8, col_num=14)
    tagged = origin.tag({
        origin.tag("seen"): [origin.tag("node01"), trust_as_template(origin.tag("auto"))],
        "num_vfs": origin.tag(20), "rate": origin.tag(1.5), "ok": True, "none": None, 200: ("a", "b"),
    })
    assert not exact_types(tagged)
    out = plain(tagged)
    assert exact_types(out), out
    assert out == {"seen": ["node01", "auto"], "num_vfs": 20, "rate": 1.5, "ok": True, "none": None, 200: ["a", "b"]}
    assert type(out["ok"]) in (bool,)
    assert "__ansible" not in json.dumps(out)
