# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The controller's half of fabric.infiniband.run_lock (documentation: plugins/modules/run_lock.py).

Two things only the controller can do (issue 33):

- name the user's setting: ``max_age`` comes from ``infiniband_run_lock_max_age`` in the playbooks
  (``setting_names``); a value that is no whole number is refused here naming that variable, before the
  module's own conversion would name its option;
- tell whether the run holding the lock still runs: when another run of the same owner holds it and that
  run was started on this controller (``run_id``: host, PID, start time), its process is looked for; when
  it is gone, the module runs again with ``replace_run`` to take over exactly that run's lock (the module
  decides under its guard, so a lock renewed in between is not taken).
"""

from __future__ import annotations

from ansible.module_utils.common.text.converters import to_text
from ansible.plugins.action import ActionBase

from ansible_collections.fabric.infiniband.plugins.module_utils import run_lock as lockfile
from ansible_collections.fabric.infiniband.plugins.plugin_utils import node_state

MODULE = "fabric.infiniband.run_lock"


def max_age_problem(value, names):
    """Why ``value`` is no max_age (seconds, 0 or more), named as the user set it, or None."""
    if isinstance(value, bool):
        got = value
    elif isinstance(value, int):
        return None if value >= 0 else ("%s must be 0 (a lock never goes stale by age) or a number of seconds, got %d"
                                        % (lockfile.setting(names, "max_age"), value))
    elif isinstance(value, str) and value.strip().lstrip("+").isdigit():
        return None
    elif isinstance(value, str) and value.strip().startswith("-") and value.strip()[1:].isdigit():
        return ("%s must be 0 (a lock never goes stale by age) or a number of seconds, got %s"
                % (lockfile.setting(names, "max_age"), value.strip()))
    else:
        got = value
    return ("%s must be 0 (a lock never goes stale by age) or a whole number of seconds, for example 21600 (6 h), got %r"
            % (lockfile.setting(names, "max_age"), got))


def liveness_text(run, alive):
    host = run.rsplit(":", 2)[0] if isinstance(run, str) else "?"
    if alive:
        return "That run is still in progress: its ansible-playbook process (PID %s) runs on this controller" % run.rsplit(":", 2)[1]
    return ("That run was started on controller %s, where this run cannot tell whether it still runs" % host)


class ActionModule(ActionBase):
    TRANSFERS_FILES = False

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        del tmp
        args = dict(self._task.args)
        names = args.get("setting_names") or {}
        if not isinstance(names, dict):
            result.update(failed=True, msg="setting_names must map the module's options to the user's variable names, got %r" % (names,))
            return result
        if "max_age" in args:
            problem = max_age_problem(args["max_age"], names)
            if problem:
                result.update(failed=True, changed=False, msg=problem)
                return result
        args.pop("replace_run", None)  # the plugin's alone
        out = self._execute_module(module_name=MODULE, module_args=args, task_vars=task_vars)
        held = out.get("held_by") if out.get("failed") else None
        run = held.get("run") if isinstance(held, dict) and held.get("same_owner") else None
        if run and args.get("run_id") and run != args.get("run_id"):
            alive = node_state.run_alive(run)
            if alive is False:
                out = self._execute_module(module_name=MODULE, module_args=dict(args, replace_run=run), task_vars=task_vars)
            else:
                # say what the controller knows of that run, in the one line of the failure
                msg = to_text(out.get("msg", ""))
                marker = "Wait until that run ends"
                if marker in msg:
                    out["msg"] = msg.replace(marker, "%s. %s" % (liveness_text(run, alive), marker), 1)
        result.update(out)
        return result
