# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""lab/vm/vmctl.py without QEMU: the image key, the QEMU and ssh command lines, ports, liveness."""

import json
import os
import socket
import sys

import pytest

from conftest import LAB

sys.path.insert(0, os.path.join(LAB, "vm"))
import vmctl  # noqa: E402  pylint: disable=wrong-import-position


@pytest.fixture
def lab(tmp_path, monkeypatch):
    """vmctl pointed at a scratch .cache/lab with a key and a build script of its own."""
    cache = tmp_path / "cache"
    (cache / "ssh").mkdir(parents=True)
    (cache / "ssh" / "id_ed25519").write_text("private")
    (cache / "ssh" / "id_ed25519.pub").write_text("ssh-ed25519 AAAA lab")
    script = tmp_path / "build.sh"
    script.write_text("echo build\n")
    monkeypatch.setattr(vmctl, "CACHE", str(cache))
    monkeypatch.setattr(vmctl, "VM_CACHE", str(cache / "vm"))
    monkeypatch.setattr(vmctl, "RUN_DIR", str(cache / "vm" / "run"))
    monkeypatch.setattr(vmctl, "BUILD_SCRIPT", str(script))
    return tmp_path


def add_vm(name, port, base="/x/base.qcow2"):
    directory = vmctl.vm_dir(name)
    os.makedirs(directory)
    with open(os.path.join(directory, "vm.json"), "w", encoding="utf-8") as handle:
        json.dump({"name": name, "port": port, "base": base}, handle)
    return directory


def test_image_key_follows_script_suite_and_key(lab, monkeypatch):
    first = vmctl.image_path()
    assert os.path.basename(first).startswith("base-bookworm-") and first.endswith(".qcow2")
    assert vmctl.image_path() == first
    (lab / "build.sh").write_text("echo build v2\n")
    second = vmctl.image_path()
    assert second != first
    (lab / "cache" / "ssh" / "id_ed25519.pub").write_text("ssh-ed25519 BBBB other")
    assert vmctl.image_path() != second
    monkeypatch.setattr(vmctl, "SUITE", "trixie")
    assert "base-trixie-" in vmctl.image_path()


def test_qemu_argv(lab):
    argv = vmctl.qemu_argv("vm01", 2221)
    joined = " ".join(argv)
    assert argv[argv.index("-accel") + 1] == "tcg,thread=multi,tb-size=256"
    assert argv[argv.index("-cpu") + 1] == "max"
    assert "-enable-kvm" not in argv and "kvm" not in argv[argv.index("-accel") + 1]
    assert "hostfwd=tcp:127.0.0.1:2221-:22" in joined
    assert "-daemonize" in argv and "-pidfile" in argv
    assert "file=%s" % os.path.join(vmctl.vm_dir("vm01"), "disk.qcow2") in joined
    assert "file:%s" % os.path.join(vmctl.vm_dir("vm01"), "console.log") in joined


def test_ssh_argv_is_bounded(lab):
    add_vm("vm01", 2222)
    argv = vmctl.ssh_argv("vm01", ["uname", "-r"])
    assert argv[:5] == ["ssh", "-i", os.path.join(str(lab), "cache", "ssh", "id_ed25519"), "-p", "2222"]
    assert "ServerAliveInterval=2" in argv and "BatchMode=yes" in argv
    assert argv[-3:] == ["root@127.0.0.1", "uname", "-r"]


def test_bad_names_are_refused(lab):
    for name in ("../x", "", "a b", "-x"):
        with pytest.raises(SystemExit):
            vmctl.vm_dir(name)


def test_pick_port_skips_running_vms_and_bound_ports(lab, monkeypatch):
    # a window of free ports of its own: the VM lab's own ports may be in use while this runs (make test's VM chain)
    base = next(p for p in range(40000, 41000, 8) if all(vmctl.port_free(p + i) for i in range(4)))
    monkeypatch.setattr(vmctl, "FIRST_PORT", base)
    monkeypatch.setattr(vmctl, "LAST_PORT", base + 3)
    add_vm("vm01", vmctl.FIRST_PORT)
    monkeypatch.setattr(vmctl, "running_vms", lambda: ["vm01"])
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", vmctl.FIRST_PORT + 1))
        busy.listen(1)
        port = vmctl.pick_port()
    assert port >= vmctl.FIRST_PORT + 2 and port <= vmctl.LAST_PORT


def test_qemu_pid_checks_the_process_is_that_vm(lab):
    directory = add_vm("vm01", 2221)
    assert vmctl.qemu_pid("vm01") is None
    with open(os.path.join(directory, "qemu.pid"), "w", encoding="utf-8") as handle:
        handle.write(str(os.getpid()))
    # This process is alive, but it is not a QEMU running this VM's disk (a reused PID).
    assert vmctl.qemu_pid("vm01") is None


def test_one_vm_at_a_time(lab, monkeypatch):
    add_vm("vm01", 2221)
    monkeypatch.setattr(vmctl, "running_vms", lambda: ["vm01"])
    monkeypatch.setattr(vmctl, "ensure_image", lambda: pytest.fail("must not get this far"))
    with pytest.raises(SystemExit, match="one VM at a time"):
        vmctl.create("vm02")


def test_prune_keeps_images_in_use(lab):
    cache = lab / "cache" / "vm"
    cache.mkdir(parents=True, exist_ok=True)
    for name in ("base-bookworm-old.qcow2", "base-bookworm-used.qcow2", "base-bookworm-new.qcow2"):
        (cache / name).write_text("")
    add_vm("vm01", 2221, base=str(cache / "base-bookworm-used.qcow2"))
    vmctl.prune_images(keep=str(cache / "base-bookworm-new.qcow2"))
    assert sorted(p.name for p in cache.glob("base-*.qcow2")) == ["base-bookworm-new.qcow2", "base-bookworm-used.qcow2"]


def test_link_is_a_second_nic_with_a_mac_of_its_own(lab):
    listen = vmctl.qemu_argv("vm01", 2221, vmctl.parse_link("listen:2290"))
    connect = vmctl.qemu_argv("vm02", 2222, vmctl.parse_link("connect:2290"))
    assert "socket,id=net1,listen=127.0.0.1:2290" in listen
    assert "socket,id=net1,connect=127.0.0.1:2290" in connect
    macs = [argv[argv.index("virtio-net-pci,netdev=net1,mac=%s" % vmctl.link_mac(name))] for argv, name in
            ((listen, "vm01"), (connect, "vm02"))]
    assert macs[0] != macs[1]
    assert int(vmctl.link_mac("vm01").split(":")[0], 16) & 0x03 == 0x02  # locally administered, unicast
    assert "net1" not in " ".join(vmctl.qemu_argv("vm01", 2221))


@pytest.mark.parametrize("text", ["listen", "serve:2290", "listen:80", "connect:70000"])
def test_bad_links_are_refused(lab, text):
    with pytest.raises(SystemExit):
        vmctl.parse_link(text)
