# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The preload callback loads Ansible's filter and test plugins and this collection's filters in the
process it runs in (ansible-playbook's), once, and never raises."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap


def _run(code):
    """In a fresh interpreter: the plugin loader's state is per process."""
    # the directory this collection is imported from (ansible_collections/fabric/infiniband under it)
    roots = [p for p in sys.path if os.path.isdir(os.path.join(p or ".", "ansible_collections", "fabric", "infiniband"))]
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=os.pathsep.join(roots), PYTHONPATH=os.pathsep.join(sys.path))
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env, capture_output=True, text=True, check=False)


def test_plugins_are_loaded_once_the_playbook_starts():
    proc = _run("""
        import sys
        from ansible.plugins.loader import init_plugin_loader
        init_plugin_loader()
        from ansible_collections.fabric.infiniband.plugins.callback.preload import CallbackModule
        # the plugin loader imports Ansible's own under names with a suffix (ansible.plugins.filter.core_<hash>)
        wanted = ("ansible.plugins.filter.core_", "ansible.plugins.test.core_", "ansible_collections.fabric.infiniband.plugins.filter.sriov_plan")
        def loaded_now():
            return [any(name.startswith(prefix) for name in sys.modules) for prefix in wanted]
        before = loaded_now()
        callback = CallbackModule()
        callback.v2_playbook_on_start(None)
        after = loaded_now()
        loaded = set(sys.modules)
        callback.v2_playbook_on_play_start(None)
        print(before, after, set(sys.modules) == loaded)
    """)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split("\n")[0] == "[False, False, False] [True, True, True] True", proc.stdout


def test_a_loader_failure_is_only_said_at_vvv():
    proc = _run("""
        from ansible.plugins.loader import init_plugin_loader, filter_loader
        init_plugin_loader()
        from ansible_collections.fabric.infiniband.plugins.callback import preload
        def broken(name):
            raise RuntimeError("no plugins here")
        filter_loader.get_with_context = broken
        said = []
        callback = preload.CallbackModule()
        callback._display.vvv = said.append
        callback.v2_playbook_on_start(None)
        print(len(said), "no plugins here" in said[0])
    """)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split("\n")[0] == "2 True", proc.stdout
