# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
name: preload
type: aggregate
short_description: Load the filter and test plugins once, before Ansible forks its workers
version_added: 0.1.0
description:
  - Ansible runs each task on each host in a worker process forked from C(ansible-playbook). A worker that templates a filter or
    a test imports Ansible's filter and test plugins, and for a filter of a collection every filter file of that collection, unless
    the process it was forked from had already done so. C(ansible-playbook) itself rarely templates one, so every such worker
    imports them again (about 0.1 s of CPU each on the lab's controller, which is most of what a skipped task costs).
  - This callback loads them once in C(ansible-playbook), when the playbook starts, so that every worker inherits them.
    It also reads the argument specs and defaults of this collection's roles once (each role's step checks the settings
    against every role's argument specs), instead of once in every worker.
    It prints nothing and changes no result; with it off, the same playbooks give the same results, only more slowly.
  - It is off until you enable it. Add C(fabric.infiniband.preload) to C(callbacks_enabled) in the C([defaults]) section of the
    C(ansible.cfg) your playbooks run with, or set E(ANSIBLE_CALLBACKS_ENABLED=fabric.infiniband.preload) (which replaces that
    list). In AWX, put the line in the C(ansible.cfg) at the root of the project.
  - The C(ansible.cfg) of this collection's source repository enables it for the repository's own playbooks and tests; that file
    is not part of the installed collection.
  - Should loading fail (another version of ansible-core, a broken plugin), it says so at C(-vvv) and does nothing else.
author:
  - fabric.infiniband developers (@fabric-infiniband)
requirements:
  - Listed in C(callbacks_enabled) (see above).
"""

from ansible.plugins.callback import CallbackBase

# One name of each set: looking one up loads the whole set (Ansible's filter and test files, and every
# filter file of this collection with its module_utils).
_PRELOAD = (
    ("filter", "ansible.builtin.bool"),
    ("test", "ansible.builtin.match"),
    ("filter", "fabric.infiniband.hca_table"),
)


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "fabric.infiniband.preload"
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self, *args, **kwargs):
        super(CallbackModule, self).__init__(*args, **kwargs)
        self._loaded = False

    def _preload(self):
        if self._loaded:
            return
        self._loaded = True
        try:
            from ansible.plugins.loader import filter_loader, test_loader  # pylint: disable=import-outside-toplevel
        except ImportError as exc:
            self._display.vvv("fabric.infiniband.preload: nothing loaded (%s)" % exc)
            return
        loaders = {"filter": filter_loader, "test": test_loader}
        for kind, name in _PRELOAD:
            try:
                loaders[kind].get_with_context(name)
            except Exception as exc:  # pylint: disable=broad-exception-caught
                self._display.vvv("fabric.infiniband.preload: %s %s not loaded (%s)" % (kind, name, exc))
        try:
            from ansible_collections.fabric.infiniband.plugins.plugin_utils import role_step  # pylint: disable=import-outside-toplevel

            role_step.warm()
        except Exception as exc:  # pylint: disable=broad-exception-caught
            self._display.vvv("fabric.infiniband.preload: the roles' argument specs and defaults not read (%s)" % exc)

    def v2_playbook_on_start(self, playbook):
        self._preload()

    def v2_playbook_on_play_start(self, play):
        # also for an ad hoc command, which starts no playbook
        self._preload()
