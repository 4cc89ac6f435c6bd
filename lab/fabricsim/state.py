# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The node's hardware state: load with defaults, save atomically, and the state rules.

A state is a plain JSON-able dict (see ``lab/README.md``).  ``load()`` returns it normalised:
parameter values as numbers, every adapter with its model's identity filled in, and a
``runtime`` key holding what a real host keeps in RAM (VFs, driver bindings, RDMA names,
the RDMA netns mode, whether ``mst start`` ran).  The rule functions (``set_param``,
``power_on``, ``fw_reset``, ``set_numvfs``, ``set_netns_mode``...) mutate such a dict in place;
``mutate()``/``transaction()`` wrap load, rule and save under one lock.
"""

from __future__ import annotations

import contextlib
import copy
import errno
import fcntl
import glob
import hashlib
import json
import os
import re
import tempfile
import time
from dataclasses import dataclass

from fabricsim import catalog, porthealth

DEFAULT_STATE_PATH = "/var/lib/fabricsim/state.json"
DEFAULT_LOG_PATH = "/var/log/fabricsim/calls.jsonl"
IFINDEX_BASE = 10
MELLANOX_OUI = 0x0C42A1
LOCKDOWN_LEVELS = ("none", "integrity", "confidentiality")
# The kernel modules the simulator knows (its part of /sys/module), each with what it depends on.
# mlx_compat exists only with the OFED/DOCA kernel modules on disk (see ofed_modules_on_disk).
MODULE_DEPS = {
    "mlx_compat": (), "mlx5_core": (), "ib_core": (), "ib_uverbs": ("ib_core",), "ib_umad": ("ib_core",),
    "ib_cm": ("ib_core",), "iw_cm": ("ib_core",), "rdma_cm": ("ib_core", "ib_cm", "iw_cm"),
    "mlx5_ib": ("mlx5_core", "ib_uverbs", "ib_core"), "ib_ipoib": ("ib_core", "ib_cm"),
    "rdma_ucm": ("rdma_cm", "ib_uverbs", "ib_core"),
    # The GPU driver and its PeerDirect client (needs the RDMA core, as the real nvidia-peermem does).
    "nvidia": (), "nvidia_peermem": ("nvidia", "ib_core"),
}
# Loaded at power-on on a host with the PF driver: mlx5_core (by PCI id), mlx5_ib (by its auxiliary
# device) and its dependencies ib_uverbs and ib_core. ib_umad, ib_ipoib, rdma_ucm only when asked
# (modprobe, /etc/modules-load.d). A state may replace the list with kernel.modules.
BOOT_MODULES = ("mlx5_core", "mlx5_ib", "ib_uverbs", "ib_core")
MODULES_LOAD_DIRS = ("etc/modules-load.d", "run/modules-load.d", "usr/local/lib/modules-load.d", "usr/lib/modules-load.d")


class StateError(Exception):
    """A state description the simulator cannot use."""


def state_path():
    return os.environ.get("FABRICSIM_STATE", DEFAULT_STATE_PATH)


def log_path():
    return os.environ.get("FABRICSIM_LOG", DEFAULT_LOG_PATH)


def root_dir():
    """The file system root the rules look at (modprobe.d, /run/netns); tests point it elsewhere."""
    return os.environ.get("FABRICSIM_ROOT", "/")


def version_tuple(text, default=(0, 0, 0)):
    """``"4.21.0-1"`` -> ``(4, 21, 0)``; missing parts are 0."""
    nums = [int(x) for x in re.findall(r"\d+", str(text or ""))[:3]]
    if not nums:
        return default
    return tuple(nums + [0] * (3 - len(nums)))


# --------------------------------------------------------------------------------------
# PCI addresses
# --------------------------------------------------------------------------------------
_BDF_RE = re.compile(r"^(?:([0-9a-fA-F]{4}):)?([0-9a-fA-F]{2}):([0-9a-fA-F]{2})\.([0-7])$")


def parse_bdf(text):
    """``"3b:00.0"`` or ``"0000:3b:00.0"`` -> (domain, bus, slot, fn); None if not a BDF."""
    m = _BDF_RE.match(text or "")
    if not m:
        return None
    return (int(m.group(1) or "0", 16), int(m.group(2), 16), int(m.group(3), 16), int(m.group(4)))


def format_bdf(domain, bus, slot, fn):
    return "%04x:%02x:%02x.%x" % (domain, bus, slot, fn)


def normalize_bdf(text):
    parts = parse_bdf(text)
    return format_bdf(*parts) if parts else None


def short_bdf(bdf):
    """``0000:3b:00.0`` -> ``3b:00.0`` (the domain is dropped only when it is 0)."""
    return bdf[5:] if bdf.startswith("0000:") else bdf


def _rid(bdf):
    d, b, s, f = parse_bdf(bdf)
    return d, (b << 8) | (s << 3) | f


def _from_rid(domain, rid):
    return format_bdf(domain, (rid >> 8) & 0xFF, (rid >> 3) & 0x1F, rid & 7)


def guid_colon(guid):
    """0x0c42a10300aa0010 -> ``0c42:a103:00aa:0010`` (sysfs / rdma style)."""
    h = "%016x" % guid
    return ":".join(h[i:i + 4] for i in range(0, 16, 4))


def guid_bytes(guid):
    h = "%016x" % guid
    return ":".join(h[i:i + 2] for i in range(0, 16, 2))


def parse_guid(text):
    """Accepts ``0x0c42a10300aa0010``, ``0c42:a103:00aa:0010`` and ``0c:42:a1:03:00:aa:00:10``."""
    if isinstance(text, int):
        return text
    t = str(text).strip().lower()
    if t.startswith("0x"):
        t = t[2:]
    t = t.replace(":", "").replace("-", "")
    if not re.fullmatch(r"[0-9a-f]{1,16}", t):
        raise ValueError("invalid GUID %r" % text)
    return int(t, 16)


# --------------------------------------------------------------------------------------
# Parameter values
# --------------------------------------------------------------------------------------
class ValueErrorMlx(ValueError):
    """A value mlxconfig would refuse; the message is what mlxconfig prints after ``-E- ``."""


def parse_number(text):
    """strtoul(..., 0)-like: decimal, 0x hex, leading-0 octal; None when not a number."""
    t = str(text).strip()
    if re.fullmatch(r"0[xX][0-9a-fA-F]+", t):
        return int(t, 16)
    if re.fullmatch(r"0[0-7]+", t):
        return int(t, 8)
    if re.fullmatch(r"\d+", t):
        return int(t, 10)
    return None


def parse_value(param, text):
    """Parse one (element) value for ``param`` as mlxconfig does; raises ValueErrorMlx."""
    if isinstance(text, bool):
        text = int(text)
    raw = str(text)
    if param.kind in ("bool", "enum"):
        table = catalog.BOOL_ENUM if param.kind == "bool" else param.enum
        num = parse_number(raw)
        if num is not None:
            if num in table.values():
                return num
        else:
            for name, value in table.items():
                if name.lower() == raw.strip().lower():
                    return value
        raise ValueErrorMlx("Cannot set the value %s for the parameter %s: Unknown value %s" % (raw, param.name, raw))
    num = parse_number(raw)
    if num is None:
        raise ValueErrorMlx("Cannot set the value %s for the parameter %s: Cannot parse the value" % (raw, param.name))
    if num > param.max_value():
        raise ValueErrorMlx("Cannot set the value %s for the parameter %s: The value %s is not valid,  as its size is %d bits"
                            % (raw, param.name, raw, param.bits))
    return num


def display_value(param, value):
    """How mlxconfig prints a (scalar or element) value: ``IB(1)``, ``True(1)``, ``8``."""
    if param.kind in ("bool", "enum"):
        name = param.names().get(value)
        if name is not None:
            return "%s(%d)" % (name, value)
    return "%d" % value


# --------------------------------------------------------------------------------------
# Load / normalise / save
# --------------------------------------------------------------------------------------
def _derive_guid(hostname, pci):
    digest = hashlib.sha256(("%s/%s" % (hostname, pci)).encode()).digest()
    serial = int.from_bytes(digest[:3], "big") & 0xFFFFF0
    return (MELLANOX_OUI << 40) | (0x0300 << 24) | serial


def _norm_param_entry(model, name, entry):
    param = model.param(name)
    if param is None:
        raise StateError("adapter %s (%s) has no parameter %s" % (model.key, model.key, name))
    if not isinstance(entry, dict):
        entry = {"current": entry, "next": entry}
    out = {}
    for which in ("current", "next"):
        if which not in entry:
            continue
        val = entry[which]
        if param.kind == "array":
            if not isinstance(val, list) or len(val) != param.length:
                raise StateError("%s %s must be a list of %d values" % (name, which, param.length))
            out[which] = [parse_value(param, v) for v in val]
        else:
            out[which] = parse_value(param, val)
    if "current" not in out:
        out["current"] = copy.deepcopy(model.default(name))
    if "next" not in out:
        out["next"] = copy.deepcopy(out["current"])
    return out


# the layouts of a flint/mstflint device query: "running_only", as old MFT builds print it, has
# "FW Version(Running):" alone (issue 33)
FLINT_QUERY_FORMATS = ("standard", "running_only")
# the layouts ``fabricsim tool <name> <value>`` switches at run time: name -> its values, the first the default (which
# the state then does not name, as a state written without it)
TOOL_LAYOUTS = {"flint_query": FLINT_QUERY_FORMATS}


def normalize(desc):
    """Fill a state description with defaults; idempotent.  Returns a new dict."""
    st = copy.deepcopy(desc)
    st.setdefault("hostname", "localhost")
    tools = st.setdefault("tools", {})
    tools.setdefault("firmware", "mstflint")
    tools.setdefault("firmware_version", "4.21.0")
    if tools.get("flint_query", "standard") not in FLINT_QUERY_FORMATS:
        raise StateError("tools.flint_query must be one of %s" % ", ".join(FLINT_QUERY_FORMATS))
    tools.setdefault("iproute2", "6.1.0")
    tools.setdefault("ofed", False)
    kernel = st.setdefault("kernel", {})
    kernel.setdefault("lockdown", "none")
    kernel.setdefault("netns_mode", "shared")
    kernel.setdefault("release", tools["iproute2"])
    if kernel["lockdown"] not in LOCKDOWN_LEVELS:
        raise StateError("kernel.lockdown must be one of %s" % ", ".join(LOCKDOWN_LEVELS))
    if kernel["netns_mode"] not in ("shared", "exclusive"):
        raise StateError("kernel.netns_mode must be shared or exclusive")
    _check_faults(st.get("faults", {}))
    try:
        porthealth.check(st.get("port_health", {}))
    except porthealth.PortHealthError as exc:
        raise StateError(str(exc)) from None
    if "port_health" in st:
        st["port_health"] = {normalize_bdf(k) or k: v for k, v in st["port_health"].items()}
    fabric = st.setdefault("fabric", {})
    fabric.setdefault("switch", "Switch1")
    ports = fabric.setdefault("ports", {})
    fabric["ports"] = {normalize_bdf(k) or k: v for k, v in ports.items()}
    st.setdefault("fabric_view", {})
    st["fabric_view"] = {normalize_bdf(k) or k: v for k, v in st["fabric_view"].items()}
    adapters = st.setdefault("adapters", [])
    seen = set()
    for ad in adapters:
        model = catalog.get_model(ad.get("model", ""))
        pci = normalize_bdf(ad.get("pci_address", ""))
        if not pci or not pci.endswith(".0"):
            raise StateError("adapter pci_address must be a function-0 BDF, got %r" % ad.get("pci_address"))
        ad["pci_address"] = pci
        for fn in range(model.ports):
            bdf = pci[:-1] + str(fn)
            if bdf in seen:
                raise StateError("PCI function %s used twice" % bdf)
            seen.add(bdf)
        ad["node_guid"] = "0x%016x" % (parse_guid(ad["node_guid"]) if ad.get("node_guid") else _derive_guid(st["hostname"], pci))
        ad.setdefault("firmware_version", model.fw_version)
        ad.setdefault("psid", model.psid)
        if not ad.get("parent"):
            ad.setdefault("numa_node", 0)  # placed adapters take their root port's (pci.normalize)
        ad.setdefault("warm_reboot_applies", True)
        ad.setdefault("needs_power_cycle", False)
        if model.bluefield:
            ad.setdefault("mode", "dpu")
        params = ad.get("params", {})
        if model.bluefield and ad["mode"] in ("dpu", "nic"):
            v = 0 if ad["mode"] == "dpu" else 1
            for name in ("INTERNAL_CPU_PAGE_SUPPLIER", "INTERNAL_CPU_ESWITCH_MANAGER", "INTERNAL_CPU_IB_VPORT0",
                         "INTERNAL_CPU_OFFLOAD_ENGINE"):
                params.setdefault(name, {"current": v, "next": v})
        ad["params"] = {name: _norm_param_entry(model, name, entry) for name, entry in params.items()}
    from fabricsim import pci  # pylint: disable=import-outside-toplevel

    pci.normalize(st)
    _normalize_nvidia(st)
    if "runtime" not in st:
        st["runtime"] = {}
        init_runtime(st)
    else:
        rt = _runtime(st)
        live = set()
        for ad in sorted(adapters, key=lambda a: a["pci_address"]):
            for pf, bdf in enumerate(pf_bdfs(ad)):
                live.add(bdf)
                live.update(vf_bdf(ad, pf, vf) for vf in range(rt["functions"].get(bdf, {}).get("sriov_numvfs", 0)))
        for bdf in [b for b in rt["functions"] if b not in live]:
            del rt["functions"][bdf]  # an adapter removed from the description
        for ad in sorted(adapters, key=lambda a: a["pci_address"]):
            for bdf in pf_bdfs(ad):
                if bdf not in rt["functions"]:
                    rt["functions"][bdf] = {"sriov_numvfs": 0, "sriov_drivers_autoprobe": 1}
                    _attach(st, bdf)
    return st


def _normalize_nvidia(st):
    """``nvidia``: the GPU driver on disk (``installed``), its version and flavour, whether it loads at boot, and
    nvidia-peermem (``peermem.installed``; ``peermem.users``: a simulated RDMA user holding it while loaded)."""
    nv = st.get("nvidia")
    if nv is None:
        return
    nv.setdefault("installed", True)
    nv.setdefault("version", "550.54.15")
    nv.setdefault("flavour", "proprietary")
    nv.setdefault("load_at_boot", nv["installed"])
    if nv["flavour"] not in ("proprietary", "open"):
        raise StateError("nvidia.flavour must be proprietary or open")
    peermem = nv.setdefault("peermem", {})
    peermem.setdefault("installed", nv["installed"])
    peermem.setdefault("users", 0)
    if peermem["installed"] and not nv["installed"]:
        raise StateError("nvidia.peermem.installed needs nvidia.installed (it ships with the driver)")


# --------------------------------------------------------------------------------------
# Injected faults (the robustness suite): what a real host does now and then, on demand
# --------------------------------------------------------------------------------------
# name -> what its value says
FAULTS = {
    # the next N firmware `set` calls (mlxconfig/mstconfig) fail after "Applying...": nothing is written
    "firmware_set": "a count",
    # the next N burns (flint/mstflint) fail half-way: the flash keeps the image it had
    "firmware_burn": "a count",
}


def _check_faults(faults):
    if not isinstance(faults, dict):
        raise StateError("faults must be an object")
    for name, value in faults.items():
        if name not in FAULTS:
            raise StateError("faults.%s is unknown; known: %s" % (name, ", ".join(sorted(FAULTS))))
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise StateError("faults.%s must be %s (0 or more)" % (name, FAULTS[name]))


def take_fault(state, name):
    """Whether fault ``name`` strikes now; a count goes down by one each time it does (0 removes it)."""
    faults = state.get("faults", {})
    left = faults.get(name, 0)
    if not left:
        return False
    if left > 1:
        faults[name] = left - 1
    else:
        del faults[name]
        if not faults:
            state.pop("faults", None)
    return True


def set_fault(state, name, value):
    """``fabricsim fault <name> <value>`` (0 clears it)."""
    faults = dict(state.get("faults", {}))
    faults[name] = value
    _check_faults(faults)
    faults = {k: v for k, v in faults.items() if v}
    if faults:
        state["faults"] = faults
    else:
        state.pop("faults", None)


def set_tool(state, name, value):
    """``fabricsim tool <name> <value>``: a tool's output layout (``tools.<name>``); the default (or ``default``)
    removes it."""
    if name not in TOOL_LAYOUTS:
        raise StateError("tools.%s is no layout; known: %s" % (name, ", ".join(sorted(TOOL_LAYOUTS))))
    if value == "default":
        value = TOOL_LAYOUTS[name][0]
    if value not in TOOL_LAYOUTS[name]:
        raise StateError("tools.%s must be one of %s" % (name, ", ".join(TOOL_LAYOUTS[name])))
    tools = state.setdefault("tools", {})
    if value == TOOL_LAYOUTS[name][0]:
        tools.pop(name, None)
    else:
        tools[name] = value


def load(path=None):
    """Read and normalise the state file (``FABRICSIM_STATE`` by default)."""
    path = path or state_path()
    with open(path, encoding="utf-8") as handle:
        desc = json.load(handle)
    return normalize(desc)


def dumps(state):
    return json.dumps(state, indent=2, sort_keys=True) + "\n"


def save(state, path=None):
    """Write atomically (temporary file + rename).  Callers hold the lock (see ``locked``)."""
    path = path or state_path()
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".state.", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(dumps(state))
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


@contextlib.contextmanager
def locked(path=None):
    """An exclusive fcntl lock on ``<state>.lock`` for a load-change-save sequence."""
    path = path or state_path()
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path + ".lock", "a+", encoding="utf-8") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@contextlib.contextmanager
def transaction(path=None):
    """``with transaction() as st:`` -- load under the lock, save at exit if ``st`` changed.

    An exception inside the block leaves the file untouched.
    """
    path = path or state_path()
    with locked(path):
        st = load(path)
        before = dumps(st)
        yield st
        if dumps(st) != before:
            save(st, path)


def mutate(path, func):
    """Apply ``func(state)`` under the lock and save if it changed anything; returns its result."""
    with transaction(path) as st:
        return func(st)


def log_call(tool, argv, rc, kind, device=None, path=None):
    """Append one line to the call log (``FABRICSIM_LOG``)."""
    path = path or log_path()
    line = json.dumps({"ts": round(time.time(), 3), "tool": tool, "argv": list(argv), "rc": rc,
                       "kind": kind, "device": device}, sort_keys=False)
    with contextlib.suppress(OSError):
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(line + "\n")


# --------------------------------------------------------------------------------------
# Derived view: PCI functions
# --------------------------------------------------------------------------------------
@dataclass
class Function:
    """One PCI function of a simulated card (a PF or a VF), as the rules and tools see it."""

    bdf: str
    adapter: dict
    model: catalog.Model
    pf: int
    vf: int | None = None
    parent: str | None = None
    node_guid: int = 0
    port_guid: int = 0
    sys_image_guid: int = 0
    mac: str = ""
    link_layer: str = "InfiniBand"
    bound: bool = True
    rdma: str | None = None
    netdev: str | None = None
    ibindex: int = 0
    ifindex: int = 0

    @property
    def is_vf(self):
        return self.vf is not None

    @property
    def port(self):
        """The card port this function drives (1-based)."""
        return self.pf + 1

    @property
    def device_id(self):
        return self.model.vf_device_id if self.is_vf else self.model.device_id

    @property
    def ib(self):
        return self.link_layer == "InfiniBand"


def param_value(adapter, name, which):
    """Current/next/default value of a parameter (numbers; lists for arrays)."""
    model = catalog.get_model(adapter["model"])
    if which == "default":
        return model.default(name)
    entry = adapter.get("params", {}).get(name)
    if entry is None:
        return model.default(name)
    return entry[which]


def link_layer(adapter, pf, which="current"):
    model = catalog.get_model(adapter["model"])
    if not model.vpi:
        return "Ethernet"
    return "InfiniBand" if param_value(adapter, "LINK_TYPE_P%d" % (pf + 1), which) == 1 else "Ethernet"


def sriov_enabled(adapter):
    return param_value(adapter, "SRIOV_EN", "current") == 1


def total_vfs(adapter):
    return param_value(adapter, "NUM_OF_VFS", "current") if sriov_enabled(adapter) else 0


def sriov_offset(adapter, pf):
    """First VF routing-id offset (mlx5: right after the PFs; PF1's VFs after PF0's)."""
    model = catalog.get_model(adapter["model"])
    return model.ports - pf + pf * total_vfs(adapter)


def vf_bdf(adapter, pf, vf):
    domain, rid = _rid(adapter["pci_address"][:-1] + str(pf))
    return _from_rid(domain, rid + sriov_offset(adapter, pf) + vf)


def pf_bdfs(adapter):
    model = catalog.get_model(adapter["model"])
    return [adapter["pci_address"][:-1] + str(fn) for fn in range(model.ports)]


def netdev_name(bdf, ib, port_index=None, multi_function=True):
    """Predictable interface name: ``ibp59s0f0``, ``enp59s0f0np0``, ``enp59s0np0`` (single function)."""
    domain, bus, slot, fn = parse_bdf(bdf)
    name = "ibp" if ib else "enp"
    if domain:
        name = ("ibP%dp" if ib else "enP%dp") % domain
    name += "%ds%d" % (bus, slot)
    if multi_function:
        name += "f%d" % fn
    if not ib and port_index is not None:
        name += "np%d" % port_index
    return name


def _mac_from_guid(guid):
    b = guid.to_bytes(8, "big")
    return ":".join("%02x" % x for x in (b[0], b[1], b[2], b[5], b[6], b[7]))


def eui64_from_mac(mac):
    b = [int(x, 16) for x in mac.split(":")]
    return int.from_bytes(bytes([b[0] ^ 2, b[1], b[2], 0xFF, 0xFE, b[3], b[4], b[5]]), "big")


def functions(state, include_vfs=True):
    """All PCI functions of the node in PCI order (PFs, then their VFs after each PF's card)."""
    out = []
    rt = state.get("runtime", {}).get("functions", {})
    for ad in sorted(state.get("adapters", []), key=lambda a: a["pci_address"]):
        model = catalog.get_model(ad["model"])
        base = parse_guid(ad["node_guid"])
        multi = model.ports > 1
        pfs = []
        for pf, bdf in enumerate(pf_bdfs(ad)):
            r = rt.get(bdf, {})
            ll = link_layer(ad, pf)
            guid = base + pf
            mac = _mac_from_guid(guid)
            f = Function(bdf=bdf, adapter=ad, model=model, pf=pf, node_guid=guid, sys_image_guid=base, mac=mac,
                         link_layer=ll, bound=r.get("driver", True), rdma=r.get("rdma"),
                         ibindex=r.get("ibindex", 0), ifindex=r.get("ifindex", 0))
            f.port_guid = guid if ll == "InfiniBand" else eui64_from_mac(mac)
            f.netdev = netdev_name(bdf, ll == "InfiniBand", pf, multi) if f.bound else None
            if not f.bound:
                f.rdma = None
            pfs.append(f)
        out.extend(pfs)
        if include_vfs:
            for f in pfs:
                for vf in range(rt.get(f.bdf, {}).get("sriov_numvfs", 0)):
                    bdf = vf_bdf(ad, f.pf, vf)
                    r = rt.get(bdf, {})
                    node_guid = parse_guid(r.get("node_guid_active", "0"))
                    port_guid = parse_guid(r.get("port_guid_active", "0"))
                    mac = r.get("mac", "00:00:00:00:00:00")
                    v = Function(bdf=bdf, adapter=ad, model=model, pf=f.pf, vf=vf, parent=f.bdf,
                                 node_guid=node_guid, sys_image_guid=base, mac=mac, link_layer=f.link_layer,
                                 bound=r.get("driver", False), rdma=r.get("rdma"),
                                 ibindex=r.get("ibindex", 0), ifindex=r.get("ifindex", 0))
                    v.port_guid = port_guid if v.ib else eui64_from_mac(mac)
                    v.netdev = netdev_name(bdf, v.ib, None, True) if v.bound else None
                    if not v.bound:
                        v.rdma = None
                    out.append(v)
    return out


def find_function(state, bdf):
    bdf = normalize_bdf(bdf) or bdf
    for f in functions(state):
        if f.bdf == bdf:
            return f
    return None


def find_rdma(state, name):
    for f in functions(state):
        if f.rdma == name:
            return f
    return None


def rdma_functions(state):
    """Bound functions that have an RDMA device, ordered by device index (mlx5_0, mlx5_1, ...)."""
    fs = [f for f in functions(state) if f.rdma]
    return sorted(fs, key=lambda f: int(f.rdma.rsplit("_", 1)[1]))


def find_adapter(state, bdf):
    f = find_function(state, bdf)
    return f.adapter if f else None


# --------------------------------------------------------------------------------------
# Port state
# --------------------------------------------------------------------------------------
_STATE_BY_NAME = {v: k for k, v in catalog.PORT_STATES.items()}


def _state_num(value):
    if isinstance(value, int):
        return value
    text = str(value).strip().upper()
    if text.isdigit():
        return int(text)
    text = text.rsplit(":", maxsplit=1)[-1].strip()
    return _STATE_BY_NAME.get(text, 1)


def port_status(state, func):
    """The port of ``func`` as the kernel reports it: state/phys_state numbers, lid, sm_lid, lmc, rate."""
    status = _port_status(state, func)
    if func.ib:
        status = porthealth.adjust(state.get("port_health", {}).get(func.bdf), status)
    return status


def _port_status(state, func):
    model = func.model
    if not func.ib:
        return {"state": 4, "phys_state": 5, "lid": 0, "sm_lid": 0, "lmc": 0, "sm_sl": 0, "rate": model.eth_rate}
    view = state.get("fabric_view", {})
    cabled = state.get("fabric", {}).get("ports", {})
    parent = func.parent or func.bdf
    down = {"state": 1, "phys_state": 2, "lid": 0xFFFF, "sm_lid": 0, "lmc": 0, "sm_sl": 0, "rate": "10 Gb/sec (4X SDR)"}
    if parent not in cabled:
        return down
    pf_view = view.get(parent)
    if func.is_vf:
        # The VF's vport: "Down" (the OFED default policy) keeps it down; otherwise its logical state
        # needs an SM with virtualization (a fabric_view entry of its own); without one it stays INIT.
        policy = state.get("runtime", {}).get("functions", {}).get(func.bdf, {}).get("policy", "Auto")
        if policy == "Down":
            return {"state": 1, "phys_state": 3, "lid": 0xFFFF, "sm_lid": 0, "lmc": 0, "sm_sl": 0, "rate": model.rate}
        mine = view.get(func.bdf)
        if mine:
            return _from_view(mine, model)
        sm_lid = int(pf_view.get("sm_lid", 0)) if pf_view else 0
        return {"state": 2, "phys_state": 5, "lid": 0xFFFF, "sm_lid": sm_lid, "lmc": 0, "sm_sl": 0, "rate": model.rate}
    if pf_view:
        return _from_view(pf_view, model)
    return {"state": 2, "phys_state": 5, "lid": 0xFFFF, "sm_lid": 0, "lmc": 0, "sm_sl": 0, "rate": model.rate}


def _from_view(view, model):
    st = _state_num(view.get("state", "ACTIVE"))
    phys = view.get("phys_state", 5)
    if not isinstance(phys, int):
        names = {v.lower(): k for k, v in catalog.PHYS_STATES.items()}
        text = str(phys).rsplit(":", maxsplit=1)[-1].strip().lower()
        phys = int(text) if text.isdigit() else names.get(text, 5)
    out = {"state": st, "phys_state": phys, "lid": int(view.get("lid", 0xFFFF)), "sm_lid": int(view.get("sm_lid", 0)),
           "lmc": int(view.get("lmc", 0)), "sm_sl": int(view.get("sm_sl", 0)), "rate": view.get("rate", model.rate)}
    if "cap_mask" in view:
        out["cap_mask"] = int(str(view["cap_mask"]), 0)
    return out


def pkeys(state, func):
    """P_Key table entries (at least index 0)."""
    view = state.get("fabric_view", {}).get(func.bdf) or {}
    keys = view.get("pkeys")
    if keys:
        return [k if isinstance(k, int) else int(str(k), 16) for k in keys]
    return [0xFFFF] if func.ib else [0xFFFF]


# --------------------------------------------------------------------------------------
# Runtime (what a real host keeps in RAM)
# --------------------------------------------------------------------------------------
def _runtime(state):
    rt = state.setdefault("runtime", {})
    rt.setdefault("functions", {})
    rt.setdefault("next_ibindex", 0)
    rt.setdefault("next_ifindex", IFINDEX_BASE)
    rt.setdefault("netns_mode", state.get("kernel", {}).get("netns_mode", "shared"))
    rt.setdefault("lockdown", state.get("kernel", {}).get("lockdown", "none"))
    rt.setdefault("mst_started", False)
    rt.setdefault("modules", with_dependencies(state.get("kernel", {}).get("modules", BOOT_MODULES)))
    rt.setdefault("acs_ctl", {})  # ACS Control values written since power-on (pci.write_config)
    return rt


def _lowest_free_rdma(rt):
    used = {int(r["rdma"].rsplit("_", 1)[1]) for r in rt["functions"].values() if r.get("rdma")}
    n = 0
    while n in used:
        n += 1
    return "mlx5_%d" % n


def _attach(state, bdf):
    """Bind the mlx5 driver: an RDMA device (lowest free mlx5_N) and a netdev appear."""
    rt = _runtime(state)
    r = rt["functions"].setdefault(bdf, {})
    r["driver"] = True
    r["rdma"] = _lowest_free_rdma(rt)
    r["ibindex"] = rt["next_ibindex"]
    rt["next_ibindex"] += 1
    r["ifindex"] = rt["next_ifindex"]
    rt["next_ifindex"] += 1
    r.pop("node_desc", None)
    if "node_guid" in r:
        r["node_guid_active"] = r["node_guid"]
    if "port_guid" in r:
        r["port_guid_active"] = r["port_guid"]


def _detach(state, bdf):
    r = _runtime(state)["functions"].setdefault(bdf, {})
    r["driver"] = False
    for key in ("rdma", "ibindex", "ifindex", "node_desc"):
        r.pop(key, None)


def init_runtime(state):
    """Runtime state right after power-on: PFs bound in PCI order, no VFs, mst not started."""
    kernel = state.get("kernel", {})
    state["runtime"] = {"functions": {}, "next_ibindex": 0, "next_ifindex": IFINDEX_BASE,
                        "netns_mode": boot_netns_mode(state), "lockdown": kernel.get("lockdown", "none"),
                        "mst_started": False, "boot_count": state.get("runtime", {}).get("boot_count", 0),
                        "modules": boot_modules(state), "acs_ctl": {}}
    for ad in sorted(state.get("adapters", []), key=lambda a: a["pci_address"]):
        for bdf in pf_bdfs(ad):
            state["runtime"]["functions"][bdf] = {"sriov_numvfs": 0, "sriov_drivers_autoprobe": 1}
            _attach(state, bdf)


def with_dependencies(names):
    """``names`` and what they depend on, sorted; names the simulator does not know are left out."""
    out = set()
    todo = [n.replace("-", "_") for n in names]
    while todo:
        name = todo.pop()
        if name in MODULE_DEPS and name not in out:
            out.add(name)
            todo.extend(MODULE_DEPS[name])
    return sorted(out)


def modules_load_d(root=None):
    """Module names listed in modules-load.d, as systemd-modules-load reads them (a file in /etc hides
    one of the same name in /run or /usr/lib; '#' and ';' start comments)."""
    root = root or root_dir()
    files = {}
    for directory in MODULES_LOAD_DIRS:
        for conf in glob.glob(os.path.join(root, directory, "*.conf")):
            files.setdefault(os.path.basename(conf), conf)
    names = []
    for base in sorted(files):
        try:
            with open(files[base], encoding="utf-8", errors="replace") as handle:
                lines = handle.read().splitlines()
        except OSError:
            continue
        names.extend(line.strip() for line in lines if line.strip() and line.strip()[0] not in "#;")
    return names


def ofed_modules_on_disk(state, root=None):
    """Whether the OFED/DOCA kernel modules are installed: ``tools.ofed``, or mlx_compat.ko from a DKMS or
    kmod package under <root>/lib/modules (what mlnx-ofed-kernel-dkms builds)."""
    root = root or root_dir()
    if state.get("tools", {}).get("ofed"):
        return True
    patterns = ("lib/modules/*/updates/dkms/mlx_compat.ko*", "lib/modules/*/extra/mlnx-ofa_kernel/compat/mlx_compat.ko*")
    return any(glob.glob(os.path.join(root, pattern)) for pattern in patterns)


def on_disk(state, name, root=None):
    """Whether module ``name`` and what it depends on exist under /lib/modules: mlx_compat with the OFED modules,
    nvidia with ``nvidia.installed``, nvidia_peermem with ``nvidia.peermem.installed``; the inbox RDMA modules always."""
    nv = state.get("nvidia") or {}
    for dep in with_dependencies([name]):
        if dep == "mlx_compat" and not ofed_modules_on_disk(state, root):
            return False
        if dep == "nvidia" and not nv.get("installed"):
            return False
        if dep == "nvidia_peermem" and not nv.get("peermem", {}).get("installed"):
            return False
    return name.replace("-", "_") in MODULE_DEPS


def boot_modules(state, root=None):
    """What is loaded after power-on: BOOT_MODULES (or kernel.modules), what modules-load.d lists, mlx_compat when
    the OFED modules are on disk (theirs replace the inbox ones), and nvidia when it is installed to load at boot
    (the driver package's udev/modprobe rules).  A listed module that is not on disk is not loaded (systemd-modules-load
    fails for it)."""
    names = list(state.get("kernel", {}).get("modules", BOOT_MODULES)) + modules_load_d(root)
    if ofed_modules_on_disk(state, root):
        names.append("mlx_compat")
    if (state.get("nvidia") or {}).get("load_at_boot"):
        names.append("nvidia")
    return with_dependencies([n for n in names if n.replace("-", "_") not in MODULE_DEPS or on_disk(state, n, root)])


def loaded_modules(state):
    return list(_runtime(state)["modules"])


def load_module(state, name, root=None):
    """``modprobe NAME``: load it and its dependencies; False when no such module exists on disk."""
    name = name.replace("-", "_")
    if not on_disk(state, name, root):
        return False
    rt = _runtime(state)
    rt["modules"] = sorted(set(rt["modules"]) | set(with_dependencies([name])))
    return True


def module_holders(state, name):
    """Loaded modules that depend on ``name`` (its refcnt; ``modprobe -r`` refuses while there are any)."""
    return sorted(m for m in loaded_modules(state) if name in MODULE_DEPS.get(m, ()))


def module_users(state, name):
    """References on a loaded module that are not modules: ``nvidia.peermem.users`` for nvidia_peermem (a process
    with GPU memory registered for RDMA)."""
    if name == "nvidia_peermem" and name in loaded_modules(state):
        return int((state.get("nvidia") or {}).get("peermem", {}).get("users", 0))
    return 0


def module_refcnt(state, name):
    """``/sys/module/NAME/refcnt``: the modules that use it plus its other users."""
    return len(module_holders(state, name)) + module_users(state, name)


def unload_module(state, name):
    """``modprobe -r NAME``: EBUSY while its refcnt is above 0 (another module or a user holds it); a module not
    loaded is a no-op."""
    name = name.replace("-", "_")
    rt = _runtime(state)
    if name not in rt["modules"]:
        return
    if module_refcnt(state, name):
        raise _oserror(errno.EBUSY)
    rt["modules"] = [m for m in rt["modules"] if m != name]


def boot_netns_mode(state, root=None):
    """``options ib_core netns_mode=`` from <root>/etc/modprobe.d/*.conf, else kernel.netns_mode."""
    root = root or root_dir()
    mode = None
    for conf in sorted(glob.glob(os.path.join(root, "etc/modprobe.d/*.conf"))):
        try:
            with open(conf, encoding="utf-8", errors="replace") as handle:
                text = handle.read().replace("\\\n", " ")
        except OSError:
            continue
        for line in text.splitlines():
            words = line.split("#", 1)[0].split()
            if len(words) < 3 or words[0] != "options" or words[1].replace("-", "_") != "ib_core":
                continue
            for word in words[2:]:
                key, _sep, value = word.partition("=")
                if key.replace("-", "_") == "netns_mode":
                    value = value.strip().strip('"').lower()
                    if value in ("0", "n", "no", "off"):
                        mode = "exclusive"
                    elif value in ("1", "y", "yes", "on"):
                        mode = "shared"
    return mode or state.get("kernel", {}).get("netns_mode", "shared")


def lockdown(state):
    return _runtime(state).get("lockdown", "none")


# --------------------------------------------------------------------------------------
# State rules
# --------------------------------------------------------------------------------------
def set_param(state, adapter, name, value, index=None):
    """``mlxconfig set``: only Next Boot changes (always a write, even to the same value)."""
    model = catalog.get_model(adapter["model"])
    param = model.param(name)
    if param is None:
        raise KeyError(name)
    params = adapter.setdefault("params", {})
    entry = params.get(name)
    if entry is None:
        entry = {"current": copy.deepcopy(model.default(name)), "next": copy.deepcopy(model.default(name))}
        params[name] = entry
    if param.kind == "array":
        if index is None:
            raise ValueErrorMlx("Operation not supported")
        entry["next"][index] = value
    else:
        entry["next"] = value


def reset_params(state, adapter):
    """``mlxconfig reset``: Next Boot := Default for every writable parameter."""
    model = catalog.get_model(adapter["model"])
    for name, entry in adapter.get("params", {}).items():
        param = model.param(name)
        if param is not None and not param.ro:
            entry["next"] = copy.deepcopy(model.default(name))


def _apply_next(adapter):
    for entry in adapter.get("params", {}).values():
        entry["current"] = copy.deepcopy(entry["next"])
    burnt = adapter.pop("flash", None)  # a burnt firmware image (fabricsim/flint.py) activates with them
    if burnt:
        adapter["firmware_version"] = burnt["version"]
        adapter["psid"] = burnt["psid"]


def power_on(state, cold=False):
    """Power-on/boot: Current := Next Boot (unless warm reboots do not apply), VFs gone, netns from modprobe.d."""
    for ad in state.get("adapters", []):
        if cold or ad.get("warm_reboot_applies", True):
            _apply_next(ad)
    boots = state.get("runtime", {}).get("boot_count", 0)
    porthealth.power_on(state)
    init_runtime(state)
    state["runtime"]["boot_count"] = boots + 1


def power_cycle(state):
    """A cold power cycle applies Next Boot on every adapter."""
    power_on(state, cold=True)


class FwResetError(Exception):
    """mlxfwreset refused or failed; ``kind`` is ``level`` (unsupported level) or ``failed``."""

    def __init__(self, kind, message=""):
        super().__init__(message or kind)
        self.kind = kind


def reset_levels(adapter):
    model = catalog.get_model(adapter["model"])
    levels = tuple(adapter.get("fw_reset_levels", model.reset_levels))
    if model.bluefield and adapter.get("mode", "dpu") == "dpu":
        return ()
    return levels


def fw_reset(state, adapter, level=3):
    """Firmware reset: Current := Next Boot for this card; fails while VFs exist."""
    if level not in reset_levels(adapter):
        raise FwResetError("level", "reset level %d not supported" % level)
    rt = _runtime(state)
    for bdf in pf_bdfs(adapter):
        if rt["functions"].get(bdf, {}).get("sriov_numvfs", 0):
            raise FwResetError("failed", "VFs exist on %s" % bdf)
    if level == 0:
        return
    _apply_next(adapter)
    for bdf in pf_bdfs(adapter):
        r = rt["functions"].setdefault(bdf, {})
        if r.get("driver", True):
            name = r.get("rdma")
            _detach(state, bdf)
            _attach(state, bdf)
            if name:
                r["rdma"] = name


def _oserror(code, path=""):
    return OSError(code, os.strerror(code), path) if path else OSError(code, os.strerror(code))


def set_numvfs(state, bdf, num):
    """Kernel ``sriov_numvfs_store`` rules.  Raises OSError(ERANGE/EBUSY/ENOENT)."""
    f = find_function(state, bdf)
    if f is None or f.is_vf or not sriov_enabled(f.adapter):
        raise _oserror(errno.ENOENT)
    rt = _runtime(state)
    r = rt["functions"].setdefault(f.bdf, {})
    cur = r.get("sriov_numvfs", 0)
    if num == cur:
        return
    if not f.bound:
        raise _oserror(errno.ENOENT)
    if num > total_vfs(f.adapter):
        raise _oserror(errno.ERANGE)
    if num and cur:
        raise _oserror(errno.EBUSY)
    if num == 0:
        for vf in range(cur):
            vbdf = vf_bdf(f.adapter, f.pf, vf)
            rt["functions"].pop(vbdf, None)
        r["sriov_numvfs"] = 0
        return
    r["sriov_numvfs"] = num
    probe = r.get("sriov_drivers_autoprobe", 1)
    for vf in range(num):
        vbdf = vf_bdf(f.adapter, f.pf, vf)
        mac = "00:00:00:00:00:00"
        if not f.ib:
            mac = "02:%02x:%02x:%02x:%02x:%02x" % tuple([f.pf, vf] + [int(x, 16) for x in f.mac.split(":")[3:]])
        policy = "Down" if state.get("tools", {}).get("ofed") else "Auto"
        rt["functions"][vbdf] = {"driver": False, "mac": mac, "policy": policy}
        if probe:
            _attach(state, vbdf)


def set_autoprobe(state, bdf, value):
    f = find_function(state, bdf)
    if f is None or f.is_vf or not sriov_enabled(f.adapter):
        raise _oserror(errno.ENOENT)
    _runtime(state)["functions"].setdefault(f.bdf, {})["sriov_drivers_autoprobe"] = 1 if value else 0


def bind(state, bdf):
    """``echo <bdf> > /sys/bus/pci/drivers/mlx5_core/bind``."""
    f = find_function(state, bdf.strip())
    if f is None:
        raise _oserror(errno.ENODEV)
    if f.bound:
        raise _oserror(errno.EBUSY)
    _attach(state, f.bdf)


def unbind(state, bdf):
    f = find_function(state, bdf.strip())
    if f is None or not f.bound:
        raise _oserror(errno.ENODEV)
    if not f.is_vf:
        rt = _runtime(state)
        cur = rt["functions"].get(f.bdf, {}).get("sriov_numvfs", 0)
        for vf in range(cur):
            rt["functions"].pop(vf_bdf(f.adapter, f.pf, vf), None)
        rt["functions"].setdefault(f.bdf, {})["sriov_numvfs"] = 0
    _detach(state, f.bdf)


def set_vf_guid(state, vf_bdf_text, node_guid=None, port_guid=None, policy=None):
    """Administrative VF GUIDs/policy (``ip link set ... vf N node_guid``, OFED sriov/N/*); active after rebind."""
    f = find_function(state, vf_bdf_text)
    if f is None or not f.is_vf:
        raise _oserror(errno.ENODEV)
    r = _runtime(state)["functions"].setdefault(f.bdf, {})
    if node_guid is not None:
        r["node_guid"] = "0x%016x" % parse_guid(node_guid)
    if port_guid is not None:
        r["port_guid"] = "0x%016x" % parse_guid(port_guid)
    if policy is not None:
        r["policy"] = policy


def node_desc(state, func):
    r = state.get("runtime", {}).get("functions", {}).get(func.bdf, {})
    if "node_desc" in r:
        return r["node_desc"]
    return "%s %s" % (state.get("hostname", "localhost"), func.rdma)


def set_node_desc(state, bdf, text):
    _runtime(state)["functions"].setdefault(bdf, {})["node_desc"] = text[:64]


def netns_mode(state):
    return _runtime(state)["netns_mode"]


def other_netns_exist(root=None):
    root = root or root_dir()
    try:
        return bool(os.listdir(os.path.join(root, "run/netns")))
    except OSError:
        return False


def set_netns_mode(state, mode, root=None):
    """``rdma system set netns``: same mode is a no-op; otherwise EBUSY while other netns exist."""
    if mode not in ("shared", "exclusive"):
        raise ValueError(mode)
    rt = _runtime(state)
    if rt["netns_mode"] == mode:
        return
    if other_netns_exist(root):
        raise _oserror(errno.EBUSY)
    rt["netns_mode"] = mode


def set_lockdown(state, level):
    """securityfs lockdown: may only be raised (EPERM otherwise), EINVAL for unknown levels."""
    if level not in LOCKDOWN_LEVELS:
        raise _oserror(errno.EINVAL)
    rt = _runtime(state)
    cur = rt.get("lockdown", "none")
    if LOCKDOWN_LEVELS.index(level) < LOCKDOWN_LEVELS.index(cur):
        raise _oserror(errno.EPERM)
    rt["lockdown"] = level


def mst_started(state):
    return bool(_runtime(state).get("mst_started"))


def set_mst_started(state, value):
    _runtime(state)["mst_started"] = bool(value)


def summary(state):
    """``fabricsim show``: the state with the derived view of every function."""
    out = {"hostname": state.get("hostname"), "tools": state.get("tools"), "kernel": state.get("kernel"),
           "netns_mode": netns_mode(state), "mst_started": mst_started(state), "modules": loaded_modules(state),
           "adapters": [], "functions": []}
    for ad in state.get("adapters", []):
        model = catalog.get_model(ad["model"])
        params = {}
        for p in model.params():
            params[p.name] = {"default": param_value(ad, p.name, "default"), "current": param_value(ad, p.name, "current"),
                              "next": param_value(ad, p.name, "next")}
        out["adapters"].append({"model": ad["model"], "pci_address": ad["pci_address"], "node_guid": ad["node_guid"],
                                "params": {k: v for k, v in params.items() if k in ad.get("params", {})
                                           or k in ("LINK_TYPE_P1", "LINK_TYPE_P2", "SRIOV_EN", "NUM_OF_VFS")}})
    for f in functions(state):
        ps = port_status(state, f) if f.bound else None
        out["functions"].append({"bdf": f.bdf, "vf": f.vf, "parent": f.parent, "link_layer": f.link_layer, "rdma": f.rdma,
                                 "netdev": f.netdev, "node_guid": "0x%016x" % f.node_guid,
                                 "port_state": catalog.PORT_STATES.get(ps["state"]) if ps else None})
    return out
