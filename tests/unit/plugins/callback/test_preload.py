# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The preload callback loads Ansible's filter and test plugins and this collection's filters in the
process it runs in (ansible-playbook's), once, and never raises."""

from __future__ import annotations

import json
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


def _said_at_vvv(breaks):
    """What the callback says at -vvv when the playbook starts, after the code ``breaks`` broke something it uses."""
    return _run("""
        from ansible.plugins.loader import init_plugin_loader, filter_loader
        init_plugin_loader()
        from ansible_collections.fabric.infiniband.plugins.callback import preload
        from ansible_collections.fabric.infiniband.plugins.plugin_utils import role_step
    """ + breaks + """
        said = []
        callback = preload.CallbackModule()
        callback._display.vvv = said.append
        callback.v2_playbook_on_start(None)
        print(len(said), "\\n".join(said))
    """)


def test_a_loader_failure_is_only_said_at_vvv():
    proc = _said_at_vvv("""
        def broken(name):
            raise RuntimeError("no plugins here")
        filter_loader.get_with_context = broken
    """)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("2 "), proc.stdout
    assert "no plugins here" in proc.stdout.split("\n")[0], proc.stdout


def test_the_roles_argument_specs_and_defaults_are_read_once_the_playbook_starts():
    proc = _run("""
        from ansible.plugins.loader import init_plugin_loader
        init_plugin_loader()
        from ansible_collections.fabric.infiniband.plugins.action import preflight_vars
        from ansible_collections.fabric.infiniband.plugins.callback.preload import CallbackModule
        from ansible_collections.fabric.infiniband.plugins.plugin_utils import role_step
        before = (len(preflight_vars._SPECS), len(role_step._DEFAULTS))
        CallbackModule().v2_playbook_on_start(None)
        roles = sorted(preflight_vars._argument_specs())
        defaults = sorted(role for (_, role) in role_step._DEFAULTS)
        print(before, len(roles) > 10, defaults == roles, "rdma_netns_mode" in role_step.role_defaults("rdma_netns"))
    """)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split("\n")[0] == "(0, 0) True True True", proc.stdout


def test_a_failure_to_read_the_roles_is_only_said_at_vvv():
    proc = _said_at_vvv("""
        def broken(roles_dir=None):
            raise OSError("no roles here")
        role_step.warm = broken
    """)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("1 "), proc.stdout
    assert "no roles here" in proc.stdout, proc.stdout


# An action plugin next to the playbook: it runs in the worker forked for the task, and says which of the
# plugin modules that worker has without importing anything itself (the task templates nothing).
PROBE = textwrap.dedent(
    """\
    import json
    import os
    import sys

    from ansible.plugins.action import ActionBase

    WANTED = ("ansible.plugins.filter.core_", "ansible.plugins.test.core_",
              "ansible_collections.fabric.infiniband.plugins.filter.sriov_plan")


    class ActionModule(ActionBase):
        def run(self, tmp=None, task_vars=None):
            result = super(ActionModule, self).run(tmp, task_vars)
            loaded = [prefix for prefix in WANTED if any(name.startswith(prefix) for name in sys.modules)]
            with open(self._task.args["out"], "w") as handle:
                json.dump({"pid": os.getpid(), "ppid": os.getppid(), "loaded": loaded}, handle)
            result["changed"] = False
            return result
    """
)


def _worker_sees(tmp_path, enabled):
    """What a worker of a real ansible-playbook run has loaded before it templates anything, and its PIDs."""
    tag = "on" if enabled else "off"
    work = tmp_path / tag
    (work / "action_plugins").mkdir(parents=True)
    (work / "action_plugins" / "preload_probe.py").write_text(PROBE)
    out = work / "seen.json"
    (work / "play.yml").write_text(textwrap.dedent(
        """\
        - name: Probe a worker
          hosts: all
          gather_facts: false
          tasks:
            - name: Say what the worker has loaded
              preload_probe:
                out: %s
        """ % json.dumps(str(out))))
    (work / "hosts.ini").write_text("h0 ansible_connection=local ansible_python_interpreter=%s\n" % sys.executable)
    (work / "ansible.cfg").write_text("[defaults]\n" + ("callbacks_enabled = fabric.infiniband.preload\n" if enabled else ""))
    roots = [p for p in sys.path if os.path.isdir(os.path.join(p or ".", "ansible_collections", "fabric", "infiniband"))]
    environ = dict(os.environ, ANSIBLE_CONFIG=str(work / "ansible.cfg"), ANSIBLE_COLLECTIONS_PATH=os.pathsep.join(roots),
                   ANSIBLE_NOCOLOR="1")
    environ.pop("ANSIBLE_CALLBACKS_ENABLED", None)
    proc = subprocess.Popen(
        [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", str(work / "hosts.ini"), str(work / "play.yml")],
        cwd=str(work), env=environ, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    output = proc.communicate(timeout=300)[0]
    assert proc.returncode == 0, output
    seen = json.loads(out.read_text())
    seen["playbook_pid"] = proc.pid
    return seen


def test_a_forked_worker_inherits_what_preload_loaded(tmp_path):
    """Pins, for the ansible-core under test, what the callback buys: a task's worker is forked from ansible-playbook
    and finds the filter and test plugins loaded when the callback is on; without it, it would import them itself."""
    on = _worker_sees(tmp_path, True)
    assert on["ppid"] == on["playbook_pid"] != on["pid"], on
    assert on["loaded"] == ["ansible.plugins.filter.core_", "ansible.plugins.test.core_",
                            "ansible_collections.fabric.infiniband.plugins.filter.sriov_plan"], on
    off = _worker_sees(tmp_path, False)
    assert off["ppid"] == off["playbook_pid"] != off["pid"], off
    assert off["loaded"] == [], off
