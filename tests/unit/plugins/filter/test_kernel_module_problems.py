# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

import pytest

from ansible.errors import AnsibleFilterError
from ansible_collections.fabric.infiniband.plugins.filter.kernel_module_problems import kernel_module_problems

# kernel_modules in check mode, registered with failed_when: false (failed is then false, rc tells)
MISSING = {"failed": False, "failed_when_result": False, "changed": True, "kernel": "6.1.0-28-amd64",
           "present": ["mlx5_core"], "loaded": ["mlx5_ib"], "cmd": ["/usr/sbin/modprobe", "-n", "mlx5_ibb"], "rc": 1,
           "stdout": "", "stderr": "modprobe: FATAL: Module mlx5_ibb not found in directory /lib/modules/6.1.0-28-amd64\n",
           "msg": "cannot load the kernel module mlx5_ibb: ..."}


def test_a_module_the_kernel_lacks_is_named_with_the_setting():
    [msg] = kernel_module_problems(MISSING, "rdma_stack_modules")
    assert msg.startswith("rdma_stack_modules: mlx5_ibb is not a kernel module of the running kernel 6.1.0-28-amd64 "
                          "(modprobe -n mlx5_ibb: modprobe: FATAL: Module mlx5_ibb not found")
    assert "Accepted: the names of modules installed for that kernel (modinfo <name> finds them); of the list, these exist: " \
           "mlx5_core, mlx5_ib. Nothing was changed." in msg


@pytest.mark.parametrize("result", [
    # every module resolved (a success has no rc)
    {"changed": True, "present": ["mlx5_core"], "loaded": ["mlx5_ib"], "cmd": ["/usr/sbin/modprobe", "-n", "mlx5_ib"]},
    # nothing to resolve
    {"changed": False, "present": ["mlx5_core"], "loaded": [], "cmd": []},
    # modprobe not installed yet: nothing can be told about the names
    {"failed": False, "msg": "cannot load mlx5_ib: modprobe is not installed (package kmod)", "cmd": []},
    # the task was skipped
    {"skipped": True, "changed": False},
])
def test_nothing_to_refuse(result):
    assert kernel_module_problems(result, "rdma_stack_modules") == []


def test_not_a_result():
    with pytest.raises(AnsibleFilterError):
        kernel_module_problems(["mlx5_core"], "rdma_stack_modules")
