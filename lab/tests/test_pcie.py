# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The PCIe tree (pci.py): GPUs and adapters under switches, config space, ACS, IOMMU groups.

The state is lab/nodes/dgx-h100-8gpu-8hca.json: four PEX890xx switches, each with two H100 GPUs and two
ConnectX-7 under its downstream ports; the downstream port 0000:4a:03.0 above the fourth GPU has ACS
ReqRedir+ CmpltRedir+.  When pciutils is available (``lspci`` on PATH, or FABRICSIM_PCIUTILS naming a
``dpkg -x`` of pciutils and libpci3), the real lspci/setpci read the tree written out to a directory.
"""

import copy
import errno
import os
import shutil
import struct
import subprocess

import pytest
from conftest import node_file

from fabricsim import fusefs, pci, sysfs
from fabricsim import state as sim_state
from fabricsim.sysfs import Link

BAD_PORT, BAD_GPU, BAD_HCA = "0000:4a:03.0", "0000:4e:00.0", "0000:4d:00.0"


def dgx(**changes):
    desc = node_file("dgx-h100-8gpu-8hca.json")
    desc.update(changes)
    return sim_state.normalize(desc)


def entry(st, path):
    entries = sysfs.tree(st)
    return entries[sysfs.resolve(entries, path)]


def config(st, bdf):
    content = entry(st, "/bus/pci/devices/%s/config" % bdf).content
    assert isinstance(content, bytes) and len(content) == 4096
    return content


def u16(buf, off):
    return struct.unpack_from("<H", buf, off)[0]


def u32(buf, off):
    return struct.unpack_from("<I", buf, off)[0]


def capabilities(buf):
    """{cap id: offset} of the standard list and {ext cap id: offset} of the extended list, walked as lspci does."""
    std, ext = {}, {}
    pos = buf[0x34]
    while pos:
        std[buf[pos]] = pos
        pos = buf[pos + 1]
    pos = 0x100
    while pos:
        header = u32(buf, pos)
        if not header:
            break
        ext[header & 0xFFFF] = pos
        pos = header >> 20
    return std, ext


# --- the tree ---------------------------------------------------------------------------------------------------
def test_resolved_paths_give_the_chain_from_the_host_bridge():
    st = dgx()
    entries = sysfs.tree(st)
    assert entries["/bus/pci/devices/" + BAD_GPU] == Link(
        "../../../devices/pci0000:48/0000:48:01.0/0000:49:00.0/0000:4a:03.0/0000:4e:00.0")
    assert sysfs.resolve(entries, "/bus/pci/devices/" + BAD_HCA) == \
        "/devices/pci0000:48/0000:48:01.0/0000:49:00.0/0000:4a:02.0/0000:4d:00.0"
    assert sysfs.resolve(entries, "/class/infiniband/mlx5_3/device") == \
        "/devices/pci0000:48/0000:48:01.0/0000:49:00.0/0000:4a:02.0/0000:4d:00.0"
    assert sysfs.resolve(entries, "/class/net/ibp77s0/device") == sysfs.resolve(entries, "/bus/pci/devices/" + BAD_HCA)
    assert sysfs.device_path(st, "0000:c9:01.0") == "/devices/pci0000:c9/0000:c9:01.0"
    gpus = [b for b in entries if b.startswith("/bus/pci/devices/")
            and entry(st, b + "/class").content == "0x030200\n"]
    assert len(gpus) == 8
    hcas = [b for b in entries if b.startswith("/bus/pci/devices/")
            and entry(st, b + "/class").content == "0x020700\n"]
    assert len(hcas) == 8


def test_function_attributes():
    st = dgx()
    gpu = "/bus/pci/devices/%s/" % BAD_GPU
    expected = {"vendor": "0x10de\n", "device": "0x2330\n", "class": "0x030200\n", "subsystem_vendor": "0x10de\n",
                "subsystem_device": "0x16c1\n", "numa_node": "0\n", "current_link_speed": "32.0 GT/s PCIe\n"}
    for name, text in expected.items():
        assert entry(st, gpu + name).content == text, name
    assert entry(st, "/bus/pci/devices/0000:cf:00.0/numa_node").content == "1\n"
    assert entry(st, "/bus/pci/devices/0000:ce:00.0/numa_node").content == "1\n"  # the adapter takes its root port's
    entries = sysfs.tree(st)
    assert sysfs.resolve(entries, gpu + "driver") == "/bus/pci/drivers/nvidia"
    assert sysfs.resolve(entries, "/bus/pci/devices/%s/driver" % BAD_PORT) == "/bus/pci/drivers/pcieport"
    assert sysfs.resolve(entries, "/bus/pci/devices/%s/driver" % BAD_HCA) == "/bus/pci/drivers/mlx5_core"
    port = "/bus/pci/devices/%s/" % BAD_PORT
    assert entry(st, port + "class").content == "0x060400\n"
    assert entry(st, port + "vendor").content == "0x1000\n" and entry(st, port + "device").content == "0xc030\n"
    assert entry(st, port + "secondary_bus_number").content == "78\n"
    assert entry(st, "/bus/pci/devices/0000:48:01.0/subordinate_bus_number").content == "78\n"
    assert not [p for p in entries if "/infiniband/" in p and p.startswith(sysfs.device_path(st, BAD_GPU))]


def test_gpu_has_no_driver_until_nvidia_is_loaded():
    desc = node_file("dgx-h100-8gpu-8hca.json")
    desc["nvidia"]["load_at_boot"] = False
    st = sim_state.normalize(desc)
    assert "nvidia" not in sim_state.loaded_modules(st)
    entries = sysfs.tree(st)
    assert sysfs.device_path(st, BAD_GPU) + "/driver" not in entries
    assert "/module/nvidia/version" not in entries
    assert sim_state.load_module(st, "nvidia")
    assert sysfs.resolve(sysfs.tree(st), "/bus/pci/devices/%s/driver" % BAD_GPU) == "/bus/pci/drivers/nvidia"


def test_existing_states_keep_their_one_root_port_model():
    st = sim_state.normalize(node_file("cx7-and-cx4lx.json"))
    entries = sysfs.tree(st)
    assert "gpus" not in st and "pcie" not in st
    assert sysfs.resolve(entries, "/bus/pci/devices/0000:c1:00.0") == "/devices/pci0000:c0/0000:c0:00.0/0000:c1:00.0"
    assert "/class/iommu" not in entries and "/kernel/iommu_groups" not in entries
    assert "/devices/pci0000:c0/0000:c0:00.0/config" not in entries  # the model's root port has no attributes
    buf = config(st, "0000:c1:00.0")  # but the adapter function has its config space now
    assert (u16(buf, 0), u16(buf, 2), buf[0x0B], buf[0x0A]) == (0x15B3, 0x1021, 0x02, 0x07)
    assert config(st, "0000:01:00.0")[0x0E] == 0x80  # function 0 of a dual-port card: multi-function


# --- config space -----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("bdf, port_type, bus, secondary, subordinate", [
    ("0000:48:01.0", 4, 0x48, 0x49, 0x4E),   # root port
    ("0000:49:00.0", 5, 0x49, 0x4A, 0x4E),   # switch upstream port
    ("0000:4a:03.0", 6, 0x4A, 0x4E, 0x4E),   # switch downstream port
])
def test_bridge_headers(bdf, port_type, bus, secondary, subordinate):
    buf = config(dgx(), bdf)
    assert buf[0x0E] == 0x01                                     # type-1 header
    assert u32(buf, 0x08) >> 8 == 0x060400
    assert tuple(buf[0x18:0x1B]) == (bus, secondary, subordinate)
    std, ext = capabilities(buf)
    assert u16(buf, std[0x10] + 2) >> 4 & 0xF == port_type       # PCI Express capability: port type
    assert ext[0x0001] == 0x100                                   # AER first in the extended list
    assert (0x000D in ext) == (port_type != 5)                    # ACS on root and downstream ports only


def test_gpu_header_and_capabilities():
    buf = config(dgx(), BAD_GPU)
    assert (u16(buf, 0), u16(buf, 2)) == (0x10DE, 0x2330)
    assert u32(buf, 0x08) == 0x030200A1
    assert buf[0x0E] == 0x00 and (u16(buf, 0x2C), u16(buf, 0x2E)) == (0x10DE, 0x16C1)
    assert u16(buf, 0x06) & 0x10                                  # capabilities list present
    std, ext = capabilities(buf)
    assert sorted(std) == [0x01, 0x10] and u16(buf, std[0x10] + 2) >> 4 & 0xF == 0
    assert u16(buf, std[0x10] + 0x12) & 0x3FF == 5 | (16 << 4)    # link status: 32 GT/s x16
    assert sorted(ext) == [0x0001]


def test_acs_registers():
    st = dgx()
    for bdf, ctl in ((BAD_PORT, 0x000C), ("0000:4a:01.0", 0), ("0000:17:03.0", 0), ("0000:48:01.0", 0)):
        buf = config(st, bdf)
        acs = capabilities(buf)[1][0x000D]
        assert acs >= 0x100
        assert u16(buf, acs + 6) == ctl, bdf
    buf = config(st, BAD_PORT)
    acs = capabilities(buf)[1][0x000D]
    assert u16(buf, acs + 4) == 0x005F                            # PEX890xx: V B R C U T, no egress control
    assert u16(config(st, "0000:48:01.0"), acs + 4) == 0x001F     # root port: no direct translated P2P
    assert pci.acs_text(0x000C) == ("SrcValid- TransBlk- ReqRedir+ CmpltRedir+ UpstreamFwd- EgressCtrl- "
                                    "DirectTrans-")


# --- config writes ----------------------------------------------------------------------------------------------
def test_acs_control_write_lasts_until_power_on():
    st = dgx()
    path = "/bus/pci/devices/%s/config" % BAD_PORT
    assert sysfs.write(st, path, b"\x00\x00", pci.ACS_CTL_REG) == 2
    assert u16(config(st, BAD_PORT), pci.ACS_CTL_REG) == 0
    assert st["runtime"]["acs_ctl"] == {BAD_PORT: 0}
    sysfs.write(st, "/bus/pci/devices/0000:17:01.0/config", b"\x1d", pci.ACS_CTL_REG)  # one byte, as setpci .b
    assert u16(config(st, "0000:17:01.0"), pci.ACS_CTL_REG) == 0x1D
    sim_state.power_on(st)                                        # reboot: the BIOS sets its values again
    assert u16(config(st, BAD_PORT), pci.ACS_CTL_REG) == 0x000C
    assert u16(config(st, "0000:17:01.0"), pci.ACS_CTL_REG) == 0


def test_acs_bits_the_port_lacks_stay_zero():
    st = dgx()
    sysfs.write(st, "/bus/pci/devices/0000:48:01.0/config", b"\xff\xff", pci.ACS_CTL_REG)
    assert u16(config(st, "0000:48:01.0"), pci.ACS_CTL_REG) == 0x001F
    sysfs.write(st, "/bus/pci/devices/%s/config" % BAD_PORT, b"\xff\xff", pci.ACS_CTL_REG)
    assert u16(config(st, BAD_PORT), pci.ACS_CTL_REG) == 0x005F


def test_writes_to_other_registers_are_ignored_by_the_device():
    st = dgx()
    before = config(st, BAD_PORT)
    saved = sim_state.dumps(st)
    assert sysfs.write(st, "/bus/pci/devices/%s/config" % BAD_PORT, b"\x34\x12", 0) == 2   # vendor ID: read-only
    assert sysfs.write(st, "/bus/pci/devices/%s/config" % BAD_PORT, b"\x00" * 8, 0x18) == 8  # bus numbers
    assert sysfs.write(st, "/bus/pci/devices/%s/config" % BAD_GPU, b"\x00\x00", 0x04) == 2   # GPU command register
    assert sysfs.write(st, "/bus/pci/devices/0000:18:00.0/config", b"\x00", 0x04) == 1       # adapter
    assert sysfs.write(st, "/bus/pci/devices/%s/config" % BAD_PORT, b"\x00", 4096) == 0      # past the end
    assert sysfs.write(st, "/bus/pci/devices/%s/config" % BAD_PORT, b"\x00" * 4, 4094) == 2  # cut at the end
    assert config(st, BAD_PORT) == before and sim_state.dumps(st) == saved


def test_config_write_refused_under_lockdown():
    st = dgx()
    sim_state.set_lockdown(st, "integrity")
    with pytest.raises(OSError) as err:
        sysfs.write(st, "/bus/pci/devices/%s/config" % BAD_PORT, b"\x00\x00", pci.ACS_CTL_REG)
    assert err.value.errno == errno.EPERM
    assert u16(config(st, BAD_PORT), pci.ACS_CTL_REG) == 0x000C


def test_config_read_and_write_through_fuse(tmp_path):
    real = tmp_path / "real"
    (real / "kernel" / "iommu_groups" / "117").mkdir(parents=True)      # the host's own groups: hidden
    (real / "class").mkdir()
    path = str(tmp_path / "state.json")
    sim_state.save(dgx(), path)
    ops = fusefs.SysfsOverlay(str(real), path)
    dev = sysfs.device_path(dgx(), BAD_PORT)
    ops.open(dev + "/config", os.O_RDWR)
    assert ops.read(dev + "/config", 2, pci.ACS_CTL_REG, 0) == b"\x0c\x00"
    assert ops.write(dev + "/config", b"\x00\x00", pci.ACS_CTL_REG, 0) == 2
    assert ops.read(dev + "/config", 4096, 0, 0)[pci.ACS_CTL_REG] == 0
    assert sim_state.load(path)["runtime"]["acs_ctl"] == {BAD_PORT: 0}
    assert "117" not in ops.readdir("/kernel/iommu_groups", 0)
    with pytest.raises(OSError):
        ops.getattr("/kernel/iommu_groups/117")
    assert "0" in ops.readdir("/kernel/iommu_groups", 0)


def test_state_rules_for_the_tree():
    desc = node_file("dgx-h100-8gpu-8hca.json")
    bad = copy.deepcopy(desc)
    bad["gpus"][0]["parent"] = "0000:16:00.0"
    with pytest.raises(sim_state.StateError, match="not under the upstream port"):
        sim_state.normalize(bad)
    bad = copy.deepcopy(desc)
    bad["gpus"][0]["parent"] = "0000:17:00.0"                  # beside the HCA on bus 18
    with pytest.raises(sim_state.StateError, match="different buses"):
        sim_state.normalize(bad)
    bad = copy.deepcopy(desc)
    bad["gpus"][0]["pci_address"] = "0000:1a:00.0"             # bus 1a is already below 17:02.0
    bad["adapters"][1]["pci_address"] = "0000:19:00.0"
    bad["fabric"]["ports"] = {}
    with pytest.raises(sim_state.StateError, match="overlap"):
        sim_state.normalize(bad)
    bad = copy.deepcopy(desc)
    bad["pcie"]["bridges"][1]["acs_ctl"] = "ReqRedir+"
    with pytest.raises(sim_state.StateError, match="no ACS capability"):
        sim_state.normalize(bad)
    bad = copy.deepcopy(desc)
    bad["pcie"]["bridges"][0]["acs_ctl"] = ["DirectTrans"]
    with pytest.raises(sim_state.StateError, match="lacks"):
        sim_state.normalize(bad)
    st = sim_state.normalize(desc)
    assert sim_state.normalize(st) == st                       # idempotent


# --- IOMMU ------------------------------------------------------------------------------------------------------
def test_iommu_units_and_groups():
    st = dgx()
    entries = sysfs.tree(st)
    assert sorted(p.rsplit("/", 1)[1] for p in entries if p.startswith("/class/iommu/")) == \
        ["dmar0", "dmar1", "dmar2", "dmar3"]
    group = entries[sysfs.device_path(st, BAD_GPU) + "/iommu_group"]
    canon = sysfs.resolve(entries, "/bus/pci/devices/%s/iommu_group" % BAD_GPU)
    assert canon.startswith("/kernel/iommu_groups/") and group.target.endswith(canon)
    assert entries[canon + "/type"].content == "identity\n"
    assert sysfs.resolve(entries, "%s/devices/%s" % (canon, BAD_GPU)) == sysfs.device_path(st, BAD_GPU)
    assert sysfs.resolve(entries, "/bus/pci/devices/%s/iommu" % BAD_GPU) == "/devices/virtual/iommu/dmar1"
    groups = {sysfs.resolve(entries, "/bus/pci/devices/%s/iommu_group" % p.rsplit("/", 1)[1])
              for p in entries if p.startswith("/bus/pci/devices/")}
    assert len(groups) == 8 + 8 + 4 * 6                          # one per function


def test_iommu_modes():
    st = dgx(iommu={"enabled": True, "type": "DMA-FQ"})
    assert entry(st, "/kernel/iommu_groups/0/type").content == "DMA-FQ\n"
    st = dgx(iommu={"enabled": False})
    entries = sysfs.tree(st)
    assert entries["/class/iommu"] == sysfs.Dir(True) and entries["/kernel/iommu_groups"] == sysfs.Dir(True)
    assert not [p for p in entries if p.startswith(("/class/iommu/", "/kernel/iommu_groups/"))]
    assert sysfs.device_path(st, BAD_GPU) + "/iommu_group" not in entries
    with pytest.raises(sim_state.StateError):
        dgx(iommu={"type": "passthrough"})


# --- modules ----------------------------------------------------------------------------------------------------
def test_nvidia_loaded_at_boot_and_peermem_on_demand():
    from fabricsim import kmod

    st = dgx()
    assert "nvidia" in sim_state.loaded_modules(st) and "nvidia_peermem" not in sim_state.loaded_modules(st)
    assert entry(st, "/module/nvidia/version").content == "550.54.15\n"
    assert entry(st, "/module/nvidia/taint").content == "POE\n"
    assert "P" in entry(st, "/module/nvidia/taint").content
    assert kmod.run(st, ["nvidia-peermem"]).rc == 0
    entries = sysfs.tree(st)
    assert entries["/module/nvidia_peermem/refcnt"].content == "1\n"     # the state's simulated user
    assert entries["/module/nvidia/holders/nvidia_peermem"] == Link("../../nvidia_peermem")
    assert "/module/ib_core/holders/nvidia_peermem" in entries
    assert entries["/module/nvidia/refcnt"].content == "1\n"
    res = kmod.run(st, ["-r", "nvidia_peermem"])
    assert (res.rc, res.stderr) == (1, "modprobe: FATAL: Module nvidia_peermem is in use.\n")
    assert kmod.run(st, ["-r", "nvidia"]).stderr == "modprobe: FATAL: Module nvidia is in use.\n"
    st["nvidia"]["peermem"]["users"] = 0
    assert kmod.run(st, ["-r", "nvidia_peermem"]).rc == 0
    assert "nvidia_peermem" not in sim_state.loaded_modules(st)
    sim_state.load_module(st, "nvidia_peermem")
    sim_state.power_on(st)
    assert "nvidia_peermem" not in sim_state.loaded_modules(st)          # not listed in modules-load.d


def test_peermem_from_modules_load_d_and_open_flavour(tmp_path):
    root = os.environ["FABRICSIM_ROOT"]
    os.makedirs(os.path.join(root, "etc/modules-load.d"))
    with open(os.path.join(root, "etc/modules-load.d/nvidia-peermem.conf"), "w", encoding="utf-8") as handle:
        handle.write("nvidia-peermem\n")
    st = dgx(nvidia={"version": "560.35.03", "flavour": "open"})
    assert {"nvidia", "nvidia_peermem", "ib_core"} <= set(sim_state.loaded_modules(st))
    assert entry(st, "/module/nvidia/taint").content == "OE\n"
    assert "P" not in entry(st, "/module/nvidia/taint").content


def test_peermem_not_installed():
    from fabricsim import kmod

    st = dgx(nvidia={"peermem": {"installed": False}})
    res = kmod.run(st, ["nvidia-peermem"])
    assert res.rc == 1 and res.stderr == "modprobe: FATAL: Module nvidia-peermem not found in directory " \
                                         "/lib/modules/6.1.0-18-amd64\n"
    res = kmod.modinfo(st, ["-n", "nvidia-peermem"])
    assert (res.rc, res.stdout, res.stderr) == (1, "", "modinfo: ERROR: Module nvidia-peermem not found.\n")
    st = sim_state.normalize(node_file("cx7-and-cx4lx.json"))   # no GPU driver at all
    assert kmod.run(st, ["nvidia"]).rc == 1 and kmod.modinfo(st, ["nvidia"]).rc == 1


def test_modinfo():
    from fabricsim import kmod

    st = dgx()
    res = kmod.modinfo(st, ["-n", "nvidia-peermem"])
    assert (res.rc, res.stdout) == (0, "/lib/modules/6.1.0-18-amd64/updates/dkms/nvidia-peermem.ko\n")
    assert kmod.modinfo(st, ["-F", "version", "nvidia"]).stdout == "550.54.15\n"
    assert kmod.modinfo(st, ["-k", "6.12.0-1-amd64", "-n", "mlx5_core"]).stdout == \
        "/lib/modules/6.12.0-1-amd64/kernel/drivers/net/ethernet/mellanox/mlx5/core/mlx5_core.ko\n"
    full = kmod.modinfo(st, ["nvidia_peermem"]).stdout
    assert "filename:       /lib/modules/6.1.0-18-amd64/updates/dkms/nvidia-peermem.ko\n" in full
    assert "depends:        nvidia,ib_core\n" in full
    assert kmod.modinfo_split(["-n", "overlay"]) == ([], ["-n", "overlay"])          # left to the real modinfo
    assert kmod.modinfo_split(["-n", "nvidia", "overlay"]) == (["nvidia"], ["-n", "overlay"])
    assert kmod.modinfo_parse(["--unknown", "nvidia"]) is None


def test_modinfo_through_the_cli(tmp_path):
    import io

    from fabricsim import cli

    sim_state.save(dgx(), os.environ["FABRICSIM_STATE"])
    out, err = io.StringIO(), io.StringIO()
    assert cli.main("modinfo", ["-n", "nvidia-peermem"], stdout=out, stderr=err) == 0
    assert out.getvalue() == "/lib/modules/6.1.0-18-amd64/updates/dkms/nvidia-peermem.ko\n"
    out = io.StringIO()
    assert cli.main("modprobe", ["nvidia_peermem"], stdout=out, stderr=err) == 0
    assert "nvidia_peermem" in sim_state.loaded_modules(sim_state.load())


# --- the real lspci / setpci ------------------------------------------------------------------------------------
def _pciutils():
    """(lspci argv prefix, setpci argv prefix, env) or None."""
    base = os.environ.get("FABRICSIM_PCIUTILS")
    env = dict(os.environ, LC_ALL="C")
    if base:
        env["LD_LIBRARY_PATH"] = os.path.join(base, "usr/lib/x86_64-linux-gnu")
        lspci, setpci = os.path.join(base, "usr/bin/lspci"), os.path.join(base, "usr/bin/setpci")
    else:
        lspci, setpci = shutil.which("lspci") or "", shutil.which("setpci") or ""
    if not os.path.exists(lspci):
        return None
    ids = os.path.join(base, "usr/share/misc/pci.ids") if base else ""
    return [lspci] + (["-i", ids] if os.path.exists(ids) else []), [setpci], env


def materialize(st, root):
    """Write the simulated tree out as real files, directories and symlinks (what the FUSE mount serves)."""
    for path, item in sorted(sysfs.tree(st).items()):
        full = str(root) + path
        if isinstance(item, sysfs.Dir):
            os.makedirs(full, exist_ok=True)
            continue
        os.makedirs(os.path.dirname(full), exist_ok=True)
        if isinstance(item, Link):
            os.symlink(item.target, full)
        else:
            with open(full, "wb") as handle:
                handle.write(item.content if isinstance(item.content, bytes) else item.content.encode())
    return ["-A", "linux-sysfs", "-O", "sysfs.path=%s/bus/pci" % root]


@pytest.fixture
def pciutils():
    tools = _pciutils()
    if tools is None:
        pytest.skip("pciutils (lspci) not available; set FABRICSIM_PCIUTILS to a dpkg -x of pciutils and libpci3")
    return tools


def _run(argv, env):
    return subprocess.run(argv, env=env, check=True, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                          text=True).stdout


def test_lspci_draws_the_tree(pciutils, tmp_path):
    lspci, _setpci, env = pciutils
    access = materialize(dgx(), tmp_path / "sys")
    out = _run(lspci + access + ["-tvn"], env)
    assert out.splitlines()[1:6] == [
        " +-[0000:15]---01.0-[16-1b]----00.0-[17-1b]--+-00.0-[18]----00.0  15b3:1021",
        " |                                           +-01.0-[19]----00.0  10de:2330",
        " |                                           +-02.0-[1a]----00.0  15b3:1021",
        " |                                           \\-03.0-[1b]----00.0  10de:2330",
        " +-[0000:48]---01.0-[49-4e]----00.0-[4a-4e]--+-00.0-[4b]----00.0  15b3:1021",
    ]
    assert " \\-[0000:c9]---01.0-[ca-cf]----00.0-[cb-cf]--+-00.0-[cc]----00.0  15b3:1021" in out.splitlines()


def test_lspci_prints_acs_and_setpci_reads_it(pciutils, tmp_path):
    lspci, setpci, env = pciutils
    st = dgx()
    access = materialize(st, tmp_path / "a")
    out = _run(lspci + access + ["-vvv", "-s", BAD_PORT], env)
    assert "Express (v2) Downstream Port" in out
    assert "ACSCtl:\tSrcValid- TransBlk- ReqRedir+ CmpltRedir+ UpstreamFwd- EgressCtrl- DirectTrans-" in out
    assert "Kernel driver in use: pcieport" in out and "IOMMU group:" in out
    if os.path.exists(setpci[0]):
        assert _run(setpci + access + ["-s", BAD_PORT, "ECAP_ACS+6.w"], env).strip() == "000c"
    sysfs.write(st, "/bus/pci/devices/%s/config" % BAD_PORT, b"\x00\x00", pci.ACS_CTL_REG)
    access = materialize(st, tmp_path / "b")
    out = _run(lspci + access + ["-vvv", "-s", BAD_PORT], env)
    assert "ACSCtl:\tSrcValid- TransBlk- ReqRedir- CmpltRedir- UpstreamFwd- EgressCtrl- DirectTrans-" in out
    gpu = _run(lspci + access + ["-vvv", "-s", BAD_GPU], env)
    assert ("3D controller" in gpu or "Class 0302" in gpu) and "Kernel driver in use: nvidia" in gpu and "NUMA node: 0" in gpu
