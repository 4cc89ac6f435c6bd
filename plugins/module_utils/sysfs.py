# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Every read and write of the kernel's sysfs done by this collection.

The parsers are pure functions on the text of one attribute file. The
``Sysfs`` class walks a tree rooted at ``root`` (``/sys`` on a host, another
path when the host's sysfs is mounted elsewhere) and never raises for a
missing or unreadable file: the value is reported as None instead. Writes
(``write``) are the exception: they raise the kernel's ``OSError`` so that
the caller can tell EBUSY from ERANGE.
"""

from __future__ import annotations

import difflib
import ipaddress
import os
import re

from ansible_collections.fabric.infiniband.plugins.module_utils import guid
from ansible_collections.fabric.infiniband.plugins.module_utils import pci


DEFAULT_ROOT = "/sys"
MELLANOX_VENDOR_ID = "0x15b3"

# PCI device id (vendor 0x15b3) -> (model, is virtual function)
PCI_MODELS = {
    "0x1003": ("ConnectX-3", False),
    "0x1004": ("ConnectX-3/ConnectX-3 Pro Virtual Function", True),
    "0x1007": ("ConnectX-3 Pro", False),
    "0x1011": ("Connect-IB", False),
    "0x1012": ("Connect-IB Virtual Function", True),
    "0x1013": ("ConnectX-4", False),
    "0x1014": ("ConnectX-4 Virtual Function", True),
    "0x1015": ("ConnectX-4 Lx", False),
    "0x1016": ("ConnectX-4 Lx Virtual Function", True),
    "0x1017": ("ConnectX-5", False),
    "0x1018": ("ConnectX-5 Virtual Function", True),
    "0x1019": ("ConnectX-5 Ex", False),
    "0x101a": ("ConnectX-5 Ex Virtual Function", True),
    "0x101b": ("ConnectX-6", False),
    "0x101c": ("ConnectX-6 Virtual Function", True),
    "0x101d": ("ConnectX-6 Dx", False),
    "0x101e": ("ConnectX Family mlx5Gen Virtual Function", True),
    "0x101f": ("ConnectX-6 Lx", False),
    "0x1021": ("ConnectX-7", False),
    "0x1023": ("ConnectX-8", False),
    "0xa2d2": ("BlueField", False),
    "0xa2d3": ("BlueField Virtual Function", True),
    "0xa2d6": ("BlueField-2", False),
    "0xa2dc": ("BlueField-3", False),
}

# Models whose ports are Ethernet only: their firmware has no LINK_TYPE_Pn (link_type leaves them to
# the firmware tool's answer; verify does not expect InfiniBand of them).
ETHERNET_ONLY_MODELS = frozenset(("ConnectX-4 Lx", "ConnectX-6 Lx", "ConnectX-6 Dx"))
# The models an inventory selector may name (link_type_adapters, firmware_versions): every physical function hca_info knows.
PF_MODELS = tuple(sorted(set(model for model, is_vf in PCI_MODELS.values() if not is_vf)))


def model_problem(model, where):
    """Why the selector ``<where>.model`` names no model hca_info knows (with the closest name), or None."""
    if isinstance(model, str) and model.strip().lower() in [known.lower() for known in PF_MODELS]:
        return None
    close = difflib.get_close_matches(str(model), PF_MODELS, n=1, cutoff=0.6)
    return "%s.model %r is no model this collection knows%s; known: %s" % (
        where, model, " (did you mean %s?)" % close[0] if close else "", ", ".join(PF_MODELS))


LOCKDOWN_MODES = ("none", "integrity", "confidentiality")

_STATE_RE = re.compile(r"^(?:(\d+)\s*:)?\s*(.*?)$")
_RATE_RE = re.compile(r"^(\d+(?:\.\d+)?)\s*Gb/sec\b", re.IGNORECASE)
_BRACKET_RE = re.compile(r"\[([^\]]+)\]")


# ---------------------------------------------------------------- parsers

def _clean(text):
    if text is None:
        return None
    text = text.strip()
    return text or None


def normalize_hex_id(text):
    """``0x15B3``/``15b3`` -> ``0x15b3``; None when not a hex number."""
    text = _clean(text)
    if text is None:
        return None
    try:
        return "0x%04x" % int(text, 16)
    except ValueError:
        return None


def is_bdf(text):
    """True for a full PCI address such as ``0000:3b:00.0`` (the kernel's form; see ``pci``)."""
    return pci.is_full(text)


def card_address(bdf):
    """PCI address without the function: ``0000:3b:00.1`` -> ``0000:3b:00``."""
    if not is_bdf(bdf):
        return None
    return pci.card(bdf)


def short_bdf(bdf):
    """``0000:3b:00.0`` -> ``3b:00.0`` (the form lspci and mlxconfig print)."""
    if not is_bdf(bdf):
        return None
    return pci.short(bdf)


def parse_state(text):
    """``4: ACTIVE`` -> ``(4, 'ACTIVE')``; also ``5: LinkUp`` and ``7: Phy Test``.

    Either part is None when absent; whitespace around both parts is ignored.
    """
    text = _clean(text)
    if text is None:
        return None, None
    match = _STATE_RE.match(text)
    num = int(match.group(1)) if match.group(1) is not None else None
    name = " ".join(match.group(2).split()) or None
    return num, name


def parse_hex_int(text):
    """Kernel hex attribute (``0x30``, ``0xffff``, ``30``) -> int."""
    text = _clean(text)
    if text is None:
        return None
    try:
        return int(text, 16)
    except ValueError:
        return None


def parse_int(text):
    """Decimal attribute (``0``, ``-1``), tolerating a ``0x`` prefix -> int."""
    text = _clean(text)
    if text is None:
        return None
    try:
        if text.lower().startswith(("0x", "-0x")):
            return int(text, 16)
        return int(text, 10)
    except ValueError:
        return None


def parse_bool(text):
    """``1``/``0``/``Y``/``N`` -> bool."""
    text = _clean(text)
    if text is None:
        return None
    value = text.lower()
    if value in ("1", "y", "yes", "true", "on"):
        return True
    if value in ("0", "n", "no", "false", "off"):
        return False
    return None


def parse_rate(text):
    """``200 Gb/sec (4X HDR)`` -> ``('200 Gb/sec (4X HDR)', 200)``.

    The number is an int when whole, else a float (``2.5 Gb/sec (1X)``).
    """
    text = _clean(text)
    if text is None:
        return None, None
    text = " ".join(text.split())
    match = _RATE_RE.match(text)
    if not match:
        return text, None
    value = float(match.group(1))
    return text, int(value) if value.is_integer() else value


def format_guid(text):
    """A GUID in any of ``c470:bd03:00cf:4964``, ``0xc470bd0300cf4964`` or
    ``c4:70:bd:03:00:cf:49:64`` -> ``0xc470bd0300cf4964`` (ibstat's form; module_utils/guid.py)."""
    return guid.normalize(_clean(text))


def guid_from_gid(text):
    """GID ``fe80:0000:0000:0000:c470:bd03:00cf:4964`` -> port GUID ``0xc470bd0300cf4964``."""
    text = _clean(text)
    if text is None:
        return None
    try:
        packed = ipaddress.IPv6Address(text).packed
    except ValueError:
        return None
    return "0x" + "".join("%02x" % b for b in bytearray(packed[8:]))


def parse_pkey(text):
    """``0xffff`` -> ``'0xffff'``; None for an empty slot (0x0000, or 0x8000
    which carries only the membership bit)."""
    value = parse_hex_int(text)
    if value is None or not value & 0x7FFF:
        return None
    return "0x%04x" % value


def parse_lockdown(text):
    """``[none] integrity confidentiality`` -> ``'none'``."""
    text = _clean(text)
    if text is None:
        return None
    match = _BRACKET_RE.search(text)
    if match:
        return match.group(1).strip()
    words = text.split()
    return words[0] if len(words) == 1 else None


def parse_netns_mode(text):
    """``ib_core`` parameter ``netns_mode``: ``Y`` -> shared, ``N`` -> exclusive."""
    value = parse_bool(text)
    if value is None:
        return None
    return "shared" if value else "exclusive"


def pci_model(vendor_id, device_id):
    """(model, is_vf) from the table; ``(None, None)`` for unknown ids."""
    if normalize_hex_id(vendor_id) != MELLANOX_VENDOR_ID:
        return None, None
    return PCI_MODELS.get(normalize_hex_id(device_id), (None, None))


def _int_names(names):
    out = []
    for name in names:
        try:
            out.append((int(name), name))
        except ValueError:
            continue
    return [name for _num, name in sorted(out)]


# ---------------------------------------------------------------- tree

_READ_SIZE = 65536


def read_attribute(path):
    """The bytes of a sysfs attribute, with one read(2) where it fits (an attribute is at most a page).

    Not open().read(): Python's buffered file adds an fstat and a second read to find the end, three
    requests more per file (each a round trip to the lab's simulated sysfs, some 0.1 ms there).
    """
    fd = os.open(path, os.O_RDONLY)
    try:
        chunks = [os.read(fd, _READ_SIZE)]
        while len(chunks[-1]) == _READ_SIZE:
            chunks.append(os.read(fd, _READ_SIZE))
    finally:
        os.close(fd)
    return b"".join(chunks)


class Sysfs(object):
    """Reader for a sysfs tree rooted at ``root``."""

    def __init__(self, root=DEFAULT_ROOT):
        self.root = root or DEFAULT_ROOT

    def path(self, *parts):
        return os.path.join(self.root, *parts)

    # low level, all tolerant of missing files
    def read(self, *parts):
        try:
            data = read_attribute(self.path(*parts))
        except (IOError, OSError):
            return None
        return _clean(data.decode("utf-8", "replace"))

    def exists(self, *parts):
        return os.path.lexists(self.path(*parts))

    def listdir(self, *parts):
        try:
            return sorted(os.listdir(self.path(*parts)))
        except (IOError, OSError):
            return []

    def link_name(self, *parts):
        """Last component of a symlink's target (``device`` -> ``0000:3b:00.0``)."""
        try:
            target = os.readlink(self.path(*parts))
        except (IOError, OSError):
            return None
        return os.path.basename(target.rstrip("/")) or None

    # host level
    def is_dir(self):
        return os.path.isdir(self.root)

    def lockdown(self):
        """Kernel lockdown mode, None when securityfs is not mounted."""
        return parse_lockdown(self.read("kernel", "security", "lockdown"))

    def module_loaded(self, name):
        """Whether the kernel module ``name`` is loaded (or built in with parameters)."""
        return os.path.isdir(self.path("module", name))

    def ib_core_netns_mode(self):
        """``shared``/``exclusive`` from the live ib_core parameter, else None."""
        return parse_netns_mode(self.read("module", "ib_core", "parameters", "netns_mode"))

    # RDMA devices
    def ib_devices(self):
        return self.listdir("class", "infiniband")

    def uverbs_device(self, name):
        """The user-verbs character device of RDMA device ``name`` (``uverbs0``), from
        ``class/infiniband_verbs/*/ibdev``; None when it has none (ib_uverbs not loaded)."""
        for entry in self.listdir("class", "infiniband_verbs"):
            if entry.startswith("uverbs") and self.read("class", "infiniband_verbs", entry, "ibdev") == name:
                return entry
        return None

    def ib_pci_address(self, name):
        target = self.link_name("class", "infiniband", name, "device")
        return target.lower() if is_bdf(target) else None

    def ib_device(self, name):
        base = ("class", "infiniband", name)
        return {
            "rdma_device": name,
            "pci_address": self.ib_pci_address(name),
            "node_type": parse_state(self.read(*(base + ("node_type",))))[1],
            "firmware_version": self.read(*(base + ("fw_ver",))),
            "psid": self.read(*(base + ("board_id",))),
            "hca_type": self.read(*(base + ("hca_type",))),
            "node_guid": format_guid(self.read(*(base + ("node_guid",)))),
            "sys_image_guid": format_guid(self.read(*(base + ("sys_image_guid",)))),
        }

    def ib_ports(self, name, bdf=None):
        """Ports of one RDMA device; ``bdf`` is its PCI function, if any."""
        netdevs = self.pci_netdevs(bdf) if bdf else []
        ports = []
        for entry in _int_names(self.listdir("class", "infiniband", name, "ports")):
            ports.append(self.ib_port(name, int(entry), bdf, netdevs))
        return ports

    def ib_port(self, name, port, bdf=None, netdevs=None):
        base = ("class", "infiniband", name, "ports", str(port))
        state_num, state = parse_state(self.read(*(base + ("state",))))
        phys_num, phys = parse_state(self.read(*(base + ("phys_state",))))
        rate, gbps = parse_rate(self.read(*(base + ("rate",))))
        return {
            "port": port,
            "state": state,
            "state_num": state_num,
            "physical_state": phys,
            "physical_state_num": phys_num,
            "link_layer": self.read(*(base + ("link_layer",))),
            "lid": parse_hex_int(self.read(*(base + ("lid",)))),
            "sm_lid": parse_hex_int(self.read(*(base + ("sm_lid",)))),
            "lmc": parse_int(self.read(*(base + ("lid_mask_count",)))),
            "rate": rate,
            "rate_gbps": gbps,
            "port_guid": guid_from_gid(self.read(*(base + ("gids", "0")))),
            "pkeys": self.ib_pkeys(name, port),
            "netdev": self.port_netdev(name, port, bdf, netdevs),
        }

    def ib_pkeys(self, name, port):
        """Non-empty P_Key table entries of a port, in table order."""
        base = ("class", "infiniband", name, "ports", str(port), "pkeys")
        pkeys = []
        for index in _int_names(self.listdir(*base)):
            pkey = parse_pkey(self.read(*(base + (index,))))
            if pkey is not None:
                pkeys.append(pkey)
        return pkeys

    def port_netdev(self, name, port, bdf=None, netdevs=None):
        """The netdev of one port: the netdev of GID 0 (RoCE), else the one
        netdev of the PCI function (IPoIB children left out) whose
        ``dev_port`` is port - 1; None when unknown or ambiguous."""
        ndev = self.read("class", "infiniband", name, "ports", str(port), "gid_attrs", "ndevs", "0")
        if ndev:
            return ndev
        if not bdf:
            return None
        if netdevs is None:
            netdevs = self.pci_netdevs(bdf)
        found = []
        for netdev in netdevs:
            base = ("bus", "pci", "devices", bdf, "net", netdev)
            if self.exists(*(base + ("parent",))):
                continue
            index = parse_int(self.read(*(base + ("dev_port",))))
            if index is None:
                index = parse_hex_int(self.read(*(base + ("dev_id",))))
            if (index or 0) == port - 1:
                found.append(netdev)
        return found[0] if len(found) == 1 else None

    # PCI functions
    def pci_functions(self, vendor_id=MELLANOX_VENDOR_ID):
        """Addresses of the PCI functions of one vendor, sorted."""
        wanted = normalize_hex_id(vendor_id)
        found = []
        for bdf in self.listdir("bus", "pci", "devices"):
            if is_bdf(bdf) and normalize_hex_id(self.read("bus", "pci", "devices", bdf, "vendor")) == wanted:
                found.append(bdf.lower())
        return sorted(found)

    def pci_netdevs(self, bdf):
        return self.listdir("bus", "pci", "devices", bdf, "net")

    def pci_sriov(self, bdf):
        """SR-IOV state of a PF, None when the kernel exposes no SR-IOV files."""
        base = ("bus", "pci", "devices", bdf)
        if not (self.exists(*(base + ("sriov_totalvfs",))) or self.exists(*(base + ("sriov_numvfs",)))):
            return None
        vfs = []
        for entry in self.listdir(*base):
            if entry.startswith("virtfn") and entry[6:].isdigit():
                vfs.append((int(entry[6:]), self.link_name(*(base + (entry,)))))
        return {
            "total_vfs": parse_int(self.read(*(base + ("sriov_totalvfs",)))),
            "num_vfs": parse_int(self.read(*(base + ("sriov_numvfs",)))),
            "drivers_autoprobe": parse_bool(self.read(*(base + ("sriov_drivers_autoprobe",)))),
            "vfs": [vf for _index, vf in sorted(vfs) if vf],
        }

    def sriov_vf(self, pf_bdf, index):
        """One VF of a PF: its PCI function, driver, RDMA device and netdev, the GUIDs the
        VF's RDMA device shows (in effect since the driver last bound it), and, on
        MLNX_OFED/DOCA-OFED hosts, the administrative GUIDs and policy of ``sriov/<index>/``.
        None when ``virtfn<index>`` does not exist."""
        bdf = self.link_name("bus", "pci", "devices", pf_bdf, "virtfn%d" % index)
        if not is_bdf(bdf):
            return None
        bdf = bdf.lower()
        base = ("bus", "pci", "devices", bdf)
        rdma_devices = self.listdir(*(base + ("infiniband",)))
        rdma_device = rdma_devices[0] if rdma_devices else None
        netdevs = [n for n in self.pci_netdevs(bdf) if not self.exists(*(base + ("net", n, "parent")))]
        vf = {
            "index": index,
            "pci_address": bdf,
            "driver": self.link_name(*(base + ("driver",))),
            "rdma_device": rdma_device,
            "netdev": netdevs[0] if len(netdevs) == 1 else None,
            "active_node_guid": None,
            "active_port_guid": None,
            "ofed": None,
        }
        if rdma_device:
            vf["active_node_guid"] = format_guid(self.read("class", "infiniband", rdma_device, "node_guid"))
            vf["active_port_guid"] = guid_from_gid(self.read("class", "infiniband", rdma_device, "ports", "1", "gids", "0"))
        ofed = ("bus", "pci", "devices", pf_bdf, "sriov", str(index))
        if self.exists(*(ofed + ("node",))):
            vf["ofed"] = {
                "node_guid": format_guid(self.read(*(ofed + ("node",)))),
                "port_guid": format_guid(self.read(*(ofed + ("port",)))),
                "policy": self.read(*(ofed + ("policy",))),
            }
        return vf

    def has_ofed_sriov(self, pf_bdf):
        """Whether the PF has the MLNX_OFED/DOCA-OFED ``sriov/`` directory (VF GUIDs through sysfs)."""
        return os.path.isdir(self.path("bus", "pci", "devices", pf_bdf, "sriov"))

    # writes: the kernel's OSError is raised to the caller
    def write(self, value, *parts):
        """Write ``value`` (a str, newline added) to one attribute file in one ``write()``."""
        data = ("%s\n" % value).encode("ascii")
        fd = os.open(self.path(*parts), os.O_WRONLY)
        try:
            os.write(fd, data)
        finally:
            os.close(fd)

    def pci_function(self, bdf):
        base = ("bus", "pci", "devices", bdf)
        vendor_id = normalize_hex_id(self.read(*(base + ("vendor",))))
        device_id = normalize_hex_id(self.read(*(base + ("device",))))
        model, table_vf = pci_model(vendor_id, device_id)
        physfn = self.link_name(*(base + ("physfn",)))
        physfn = physfn.lower() if is_bdf(physfn) else None
        numa = parse_int(self.read(*(base + ("numa_node",))))
        return {
            "pci_address": bdf,
            "card_address": card_address(physfn or bdf),
            "vendor_id": vendor_id,
            "device_id": device_id,
            "pci_class": self.read(*(base + ("class",))),
            "model": model,
            "driver": self.link_name(*(base + ("driver",))),
            "is_vf": bool(physfn) or bool(table_vf),
            "physfn": physfn,
            "numa_node": numa if numa is not None and numa >= 0 else None,
            "sriov": None if physfn else self.pci_sriov(bdf),
            "netdevs": self.pci_netdevs(bdf),
        }
