# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Private command runner shared by the modules of this collection.

Commands are always argv lists and never go through a shell. The locale is
forced to C so that the parsers see the tools' untranslated output.
"""

from __future__ import annotations


LOCALE_ENV = {"LC_ALL": "C", "LANGUAGE": "C"}


def find_tool(module, tool):
    """Return the absolute path of ``tool`` or None when it is not installed."""
    return module.get_bin_path(tool, required=False)


class CommandResult(object):
    """Outcome of one command: argv, exit code and both output streams."""

    def __init__(self, cmd, rc=0, stdout="", stderr="", skipped=False):
        self.cmd = list(cmd)
        self.rc = rc
        self.stdout = stdout
        self.stderr = stderr
        self.skipped = skipped

    @property
    def ok(self):
        return self.rc == 0

    def as_dict(self):
        return dict(cmd=self.cmd, rc=self.rc, stdout=self.stdout, stderr=self.stderr)


class Runner(object):
    """Run one external tool with a fixed environment.

    ``required=True`` makes the module fail (through ``get_bin_path``) when the
    tool is missing; with ``required=False`` check ``available`` first.
    """

    def __init__(self, module, tool, required=True):
        self.module = module
        self.tool = tool
        self.path = module.get_bin_path(tool, required=required)

    @property
    def available(self):
        return bool(self.path)

    def argv(self, args):
        return [self.path or self.tool] + [str(a) for a in args]

    def run(self, args, mutating=False, data=None):
        """Run the tool with ``args``; mutating calls are skipped in check mode."""
        cmd = self.argv(args)
        if mutating and self.module.check_mode:
            return CommandResult(cmd, skipped=True)
        rc, out, err = self.module.run_command(
            cmd,
            check_rc=False,
            data=data,
            environ_update=dict(LOCALE_ENV),
            expand_user_and_vars=False,
        )
        return CommandResult(cmd, rc, out, err)

    def fail(self, msg, res, **result):
        """Fail the module, reporting the command that failed."""
        fail_with(self.module, msg, res, **result)


def fail_with(module, msg, res, **result):
    """``fail_json`` with ``cmd``, ``rc``, ``stdout`` and ``stderr`` of ``res``."""
    for key in ("cmd", "rc", "stdout", "stderr"):
        result.pop(key, None)
    module.fail_json(msg=msg, **dict(res.as_dict(), **result))


class ToolModule(object):
    """Base of the modules that run tools: ``self.result`` records every command run.

    A subclass sets ``self.module``, ``self.result`` (with ``cmd`` and ``cmds``) and, usually,
    ``self.runner`` before calling these.
    """

    module = None
    result = None
    runner = None

    def fail(self, msg, res=None):
        """Fail with the result so far (and the command, rc and output of ``res`` when given)."""
        if res is not None:
            fail_with(self.module, msg, res, **self.result)
        self.module.fail_json(msg=msg, **self.result)

    def run(self, args, mutating=False, runner=None):
        """Run ``args`` with ``runner`` (default ``self.runner``) and record the command."""
        res = (runner or self.runner).run(args, mutating=mutating)
        self.result["cmd"] = res.cmd
        self.result["cmds"].append(res.cmd)
        return res
