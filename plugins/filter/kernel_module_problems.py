# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
name: kernel_module_problems
short_description: Name the kernel modules of a setting that the running kernel does not have
version_added: 0.1.0
author: fabric.infiniband developers (@fabric-infiniband)
description:
  - Takes the registered result of M(fabric.infiniband.kernel_modules) run in check mode (with C(failed_when) false), which resolves
    every module of its C(names) that the kernel does not have with C(modprobe -n), and returns the refusal of the setting that
    listed them, naming the setting, the module, the running kernel and the modules that exist.
  - Only a module that C(modprobe -n) could not resolve is refused. Any other failure (no C(modprobe) installed yet, no sysfs) tells
    nothing about the names, so it returns nothing; the role's own step reports it when it runs.
  - The module stops at the first name it cannot resolve, so one missing module is named per run.
  - A skipped task (for example DOCA-OFED's modules before their package is installed, which the role leaves to the step that
    loads them) returns nothing.
options:
  _input:
    description: The registered result of M(fabric.infiniband.kernel_modules) in check mode.
    type: dict
    required: true
  setting:
    description: The variable that listed the modules, for the message (for example V(rdma_stack_modules)).
    type: str
    required: true
"""

EXAMPLES = r"""
- name: Refuse the modules the kernel does not have
  ansible.builtin.assert:
    that: __problems | length == 0
    fail_msg: "{{ __problems | join('; ') }}"
  vars:
    __problems: "{{ __kmod_check | fabric.infiniband.kernel_module_problems('rdma_stack_modules') }}"
"""

RETURN = r"""
_value:
  description: One message per refused setting (none, or one), empty when every module resolved or nothing can be told.
  type: list
  elements: str
"""

from collections.abc import Mapping

from ansible.errors import AnsibleFilterError


def kernel_module_problems(result, setting):
    if not isinstance(result, Mapping):
        raise AnsibleFilterError("kernel_module_problems expects the registered result of fabric.infiniband.kernel_modules")
    if result.get("skipped"):
        return []
    cmd = result.get("cmd") or []
    # a failed modprobe -n NAME (check mode): NAME is not installed for the running kernel. The task's failed_when
    # false turns the failure into failed: false; the module's rc (returned only with a failure) tells.
    if len(cmd) < 3 or cmd[-2] != "-n" or result.get("rc") in (None, 0):
        return []
    name = cmd[-1]
    said = (result.get("stderr") or result.get("stdout") or "").strip() or "rc %s" % result.get("rc")
    found = list(result.get("present") or []) + list(result.get("loaded") or [])
    return ["%s: %s is not a kernel module of the running kernel %s (%s: %s). Accepted: the names of modules installed for "
            "that kernel (modinfo <name> finds them)%s. Nothing was changed."
            % (setting, name, result.get("kernel") or "", "modprobe -n " + name, said,
               "; of the list, these exist: %s" % ", ".join(found) if found else "")]


class FilterModule:
    def filters(self):
        return {"kernel_module_problems": kernel_module_problems}
