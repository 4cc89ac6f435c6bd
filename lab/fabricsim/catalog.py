# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Adapter models of the simulator: PCI identity, names, firmware parameter database.

Everything the simulated tools print about a card that does not depend on the
node's state comes from here.  ``MODELS`` maps the short model name used in a
state description (``"ConnectX-6 VPI"``) to a :class:`Model`; ``PARAMS`` is the
ordered firmware parameter database shared by all models (the order is the
order ``mlxconfig query`` prints rows in).
"""

from __future__ import annotations

from dataclasses import dataclass, field

VENDOR_ID = 0x15B3
# ibv_devinfo reports the IEEE OUI of Mellanox as vendor_id.
VERBS_VENDOR_ID = 0x02C9

BOOL_ENUM = {"False": 0, "True": 1}


@dataclass(frozen=True)
class Param:
    """One firmware (NV config) parameter as mlxconfig shows it.

    kind: ``bool``, ``enum``, ``uint`` or ``array`` (array of uint).
    tags: the model tags a card needs to have this parameter.
    """

    name: str
    kind: str
    default: object
    enum: dict = field(default_factory=dict)
    bits: int = 32
    tlv: str = "nv_config"
    ro: bool = False
    length: int = 0
    tags: frozenset = frozenset()

    def names(self):
        """Enum (or bool) value names by number."""
        src = BOOL_ENUM if self.kind == "bool" else self.enum
        return {v: k for k, v in src.items()}

    def max_value(self):
        return (1 << self.bits) - 1


def _p(name, kind, default, tags=(), **kw):
    return Param(name=name, kind=kind, default=default, tags=frozenset(tags), **kw)


_MEMIC = {"DISABLED": 0, "_256KB": 1, "_512KB": 2, "_1MB": 3}
_LINK_TYPE = {"IB": 1, "ETH": 2}
_ROUTING = {"GID": 0, "LID": 1}
_ROCE_CONTROL = {"DEVICE_DEFAULT": 0, "ROCE_DISABLE": 1, "ROCE_ENABLE": 2}
_BOOT_PROTO = {"NONE": 0, "PXE": 1, "iSCSI": 2, "Both": 3}
_ECPF = {"ECPF": 0, "EXT_HOST_PF": 1}

# Ordered parameter database.  Tags: "vpi" (has LINK_TYPE), "p2" (second port),
# "cx5" (ConnectX-5 and later), "cx5only", "cx6" (ConnectX-6 and later), "bf" (BlueField).
PARAMS = [
    _p("MEMIC_BAR_SIZE", "uint", 0, bits=8, tlv="nv_memic_conf"),
    _p("MEMIC_SIZE_LIMIT", "enum", 1, enum=_MEMIC, bits=2, tlv="nv_memic_conf"),
    _p("HOST_CHAINING_MODE", "enum", 0, ("cx5only",), enum={"DISABLED": 0, "BASIC": 1, "DIRECT": 2}, bits=4, tlv="nv_host_chaining_conf"),
    _p("HOST_CHAINING_DESCRIPTORS", "array", 0, ("cx5only",), length=8, bits=16, tlv="nv_host_chaining_conf"),
    _p("FLEX_PARSER_PROFILE_ENABLE", "uint", 0, bits=4, tlv="nv_flex_parser_conf"),
    _p("FLEX_IPV4_OVER_VXLAN_PORT", "uint", 0, bits=16, tlv="nv_flex_parser_conf"),
    _p("ROCE_NEXT_PROTOCOL", "uint", 254, bits=8, tlv="nv_roce_1_5_conf"),
    _p("ESWITCH_HAIRPIN_DESCRIPTORS", "array", 128, ("cx6",), length=8, bits=16, tlv="nv_eswitch_hairpin_conf"),
    _p("PF_NUM_OF_VF_VALID", "bool", 0, bits=1, tlv="nv_pf_pci_conf"),
    _p("NON_PREFETCHABLE_PF_BAR", "bool", 0, bits=1, tlv="nv_pf_pci_conf"),
    _p("VF_VPD_ENABLE", "bool", 0, bits=1, tlv="nv_pf_pci_conf"),
    _p("STRICT_VF_MSIX_NUM", "bool", 0, bits=1, tlv="nv_pf_pci_conf"),
    _p("VF_NODNIC_ENABLE", "bool", 0, bits=1, tlv="nv_pf_pci_conf"),
    _p("NUM_PF_MSIX_VALID", "bool", 1, bits=1, tlv="nv_pf_pci_conf"),
    _p("NUM_OF_VFS", "uint", 8, bits=8, tlv="nv_global_pci_conf"),
    _p("NUM_OF_PF", "uint", 2, bits=4, tlv="nv_global_pci_conf"),
    _p("SRIOV_EN", "bool", 0, bits=1, tlv="nv_global_pci_conf"),
    _p("PF_LOG_BAR_SIZE", "uint", 5, bits=5, tlv="nv_pf_pci_conf"),
    _p("VF_LOG_BAR_SIZE", "uint", 1, bits=5, tlv="nv_pf_pci_conf"),
    _p("NUM_PF_MSIX", "uint", 63, bits=11, tlv="nv_pf_pci_conf"),
    _p("NUM_VF_MSIX", "uint", 11, bits=11, tlv="nv_pf_pci_conf"),
    _p("INT_LOG_MAX_PAYLOAD_SIZE", "enum", 0, enum={"AUTOMATIC": 0, "_4KB": 12}, bits=4, tlv="nv_pci_capability_conf"),
    _p("PCIE_CREDIT_TOKEN_TIMEOUT", "uint", 0, ("cx5",), bits=16, tlv="nv_pci_conf"),
    _p("PARTIAL_RESET_EN", "bool", 0, ("cx5",), bits=1, tlv="nv_pci_conf"),
    _p("SW_RECOVERY_ON_ERRORS", "bool", 0, ("cx5",), bits=1, tlv="nv_sw_recovery_conf"),
    _p("RESET_WITH_HOST_ON_ERRORS", "bool", 0, ("cx5",), bits=1, tlv="nv_sw_recovery_conf"),
    _p("ADVANCED_POWER_SETTINGS", "bool", 0, ("cx5",), bits=1, tlv="nv_power_conf"),
    _p("CQE_COMPRESSION", "enum", 0, enum={"BALANCED": 0, "AGGRESSIVE": 1}, bits=1, tlv="nv_sw_offload_conf"),
    _p("IP_OVER_VXLAN_EN", "bool", 0, bits=1, tlv="nv_sw_offload_conf"),
    _p("MKEY_BY_NAME", "bool", 0, ("cx5",), bits=1, tlv="nv_sw_offload_conf"),
    _p("UCTX_EN", "bool", 1, ("cx5",), bits=1, tlv="nv_sw_offload_conf"),
    _p("PCI_ATOMIC_MODE", "enum", 0, ("cx5",),
       enum={"PCI_ATOMIC_DISABLED_EXT_ATOMIC_ENABLED": 0, "PCI_ATOMIC_ENABLED_EXT_ATOMIC_DISABLED": 1}, bits=2, tlv="nv_sw_offload_conf"),
    _p("TUNNEL_ECN_COPY_DISABLE", "bool", 0, ("cx5",), bits=1, tlv="nv_sw_offload_conf"),
    _p("LRO_LOG_TIMEOUT0", "uint", 6, bits=4, tlv="nv_sw_offload_conf"),
    _p("LRO_LOG_TIMEOUT1", "uint", 7, bits=4, tlv="nv_sw_offload_conf"),
    _p("LRO_LOG_TIMEOUT2", "uint", 8, bits=4, tlv="nv_sw_offload_conf"),
    _p("LRO_LOG_TIMEOUT3", "uint", 13, bits=4, tlv="nv_sw_offload_conf"),
    _p("LOG_MAX_OUTSTANDING_WQE", "uint", 7, ("cx6",), bits=5, tlv="nv_sw_offload_conf"),
    _p("TX_SCHEDULER_BURST", "uint", 0, ("cx5",), bits=4, tlv="nv_sw_offload_conf"),
    _p("LOG_MAX_QUEUE", "uint", 17, ("cx5",), bits=5, tlv="nv_sw_offload_conf"),
    _p("LOG_DCR_HASH_TABLE_SIZE", "uint", 11, ("cx6",), bits=5, tlv="nv_dcr_conf", ro=True),
    _p("MAX_PACKET_LIFETIME", "uint", 0, ("cx5",), bits=16, tlv="nv_dcr_conf"),
    _p("DCR_LIFO_SIZE", "uint", 16384, ("cx5",), bits=32, tlv="nv_dcr_conf"),
    _p("ROCE_CC_PRIO_MASK_P1", "uint", 255, bits=8, tlv="nv_roce_cc"),
    _p("ROCE_CC_PRIO_MASK_P2", "uint", 255, ("p2",), bits=8, tlv="nv_roce_cc"),
    _p("LLDP_NB_DCBX_P1", "bool", 0, bits=1, tlv="nv_lldp_nb_conf"),
    _p("LLDP_NB_DCBX_P2", "bool", 0, ("p2",), bits=1, tlv="nv_lldp_nb_conf"),
    _p("DCBX_IEEE_P1", "bool", 1, bits=1, tlv="nv_dcbx_conf"),
    _p("DCBX_IEEE_P2", "bool", 1, ("p2",), bits=1, tlv="nv_dcbx_conf"),
    _p("DCBX_WILLING_P1", "bool", 1, bits=1, tlv="nv_dcbx_conf"),
    _p("DCBX_WILLING_P2", "bool", 1, ("p2",), bits=1, tlv="nv_dcbx_conf"),
    _p("LINK_TYPE_P1", "enum", 1, ("vpi",), enum=_LINK_TYPE, bits=2, tlv="nv_vpi_link_type"),
    _p("LINK_TYPE_P2", "enum", 1, ("vpi", "p2"), enum=_LINK_TYPE, bits=2, tlv="nv_vpi_link_type"),
    _p("KEEP_ETH_LINK_UP_P1", "bool", 1, bits=1, tlv="nv_keep_link_up"),
    _p("KEEP_IB_LINK_UP_P1", "bool", 0, ("vpi",), bits=1, tlv="nv_keep_link_up"),
    _p("KEEP_LINK_UP_ON_BOOT_P1", "bool", 0, bits=1, tlv="nv_keep_link_up"),
    _p("KEEP_LINK_UP_ON_STANDBY_P1", "bool", 0, bits=1, tlv="nv_keep_link_up"),
    _p("KEEP_ETH_LINK_UP_P2", "bool", 1, ("p2",), bits=1, tlv="nv_keep_link_up"),
    _p("KEEP_IB_LINK_UP_P2", "bool", 0, ("vpi", "p2"), bits=1, tlv="nv_keep_link_up"),
    _p("KEEP_LINK_UP_ON_BOOT_P2", "bool", 0, ("p2",), bits=1, tlv="nv_keep_link_up"),
    _p("KEEP_LINK_UP_ON_STANDBY_P2", "bool", 0, ("p2",), bits=1, tlv="nv_keep_link_up"),
    _p("NUM_OF_VL_P1", "enum", 3, ("vpi",), enum={"_1_VLs": 1, "_2_VLs": 2, "_4_VLs": 3, "_8_VLs": 4}, bits=4, tlv="nv_ib_port_conf"),
    _p("NUM_OF_TC_P1", "enum", 0, enum={"_8_TCs": 0, "_1_TCs": 1, "_2_TCs": 2, "_4_TCs": 4}, bits=4, tlv="nv_qos_conf"),
    _p("NUM_OF_PFC_P1", "uint", 8, bits=4, tlv="nv_qos_conf"),
    _p("VL15_BUFFER_SIZE_P1", "uint", 0, ("vpi",), bits=16, tlv="nv_ib_port_conf"),
    _p("NUM_OF_VL_P2", "enum", 3, ("vpi", "p2"), enum={"_1_VLs": 1, "_2_VLs": 2, "_4_VLs": 3, "_8_VLs": 4}, bits=4, tlv="nv_ib_port_conf"),
    _p("NUM_OF_TC_P2", "enum", 0, ("p2",), enum={"_8_TCs": 0, "_1_TCs": 1, "_2_TCs": 2, "_4_TCs": 4}, bits=4, tlv="nv_qos_conf"),
    _p("NUM_OF_PFC_P2", "uint", 8, ("p2",), bits=4, tlv="nv_qos_conf"),
    _p("VL15_BUFFER_SIZE_P2", "uint", 0, ("vpi", "p2"), bits=16, tlv="nv_ib_port_conf"),
    _p("DUP_MAC_ACTION_P1", "enum", 0, enum={"LAST_CFG": 0, "FIRST_CFG": 1}, bits=2, tlv="nv_duplicate_mac"),
    _p("SRIOV_IB_ROUTING_MODE_P1", "enum", 1, ("vpi",), enum=_ROUTING, bits=2, tlv="nv_ib_routing_conf"),
    _p("IB_ROUTING_MODE_P1", "enum", 1, ("vpi",), enum=_ROUTING, bits=2, tlv="nv_ib_routing_conf"),
    _p("DUP_MAC_ACTION_P2", "enum", 0, ("p2",), enum={"LAST_CFG": 0, "FIRST_CFG": 1}, bits=2, tlv="nv_duplicate_mac"),
    _p("SRIOV_IB_ROUTING_MODE_P2", "enum", 1, ("vpi", "p2"), enum=_ROUTING, bits=2, tlv="nv_ib_routing_conf"),
    _p("IB_ROUTING_MODE_P2", "enum", 1, ("vpi", "p2"), enum=_ROUTING, bits=2, tlv="nv_ib_routing_conf"),
    _p("ROCE_CONTROL", "enum", 2, ("cx5",), enum=_ROCE_CONTROL, bits=2, tlv="nv_roce_conf"),
    _p("PCI_WR_ORDERING", "enum", 0, ("cx5",), enum={"per_mkey": 0, "force_relax": 1}, bits=1, tlv="nv_pci_conf"),
    _p("MULTI_PORT_VHCA_EN", "bool", 0, ("cx6",), bits=1, tlv="nv_global_conf"),
    _p("PORT_OWNER", "bool", 1, bits=1, tlv="nv_host_conf"),
    _p("ALLOW_RD_COUNTERS", "bool", 1, bits=1, tlv="nv_host_conf"),
    _p("RENEG_ON_CHANGE", "bool", 1, bits=1, tlv="nv_host_conf"),
    _p("TRACER_ENABLE", "bool", 1, bits=1, tlv="nv_host_conf"),
    _p("IP_VER", "enum", 0, enum={"IPv4": 0, "IPv6": 1, "IPv4_IPv6": 2}, bits=2, tlv="nv_boot_settings"),
    _p("BOOT_UNDI_NETWORK_WAIT", "uint", 0, bits=8, tlv="nv_boot_settings"),
    _p("UEFI_HII_EN", "bool", 1, bits=1, tlv="nv_boot_settings"),
    _p("BOOT_DBG_LOG", "bool", 0, bits=1, tlv="nv_boot_settings"),
    _p("UEFI_LOGS", "enum", 0, enum={"DISABLED": 0, "BASIC": 1, "DETAILED": 2}, bits=2, tlv="nv_boot_settings"),
    _p("BOOT_VLAN", "uint", 1, bits=12, tlv="nv_boot_settings"),
    _p("LEGACY_BOOT_PROTOCOL", "enum", 1, enum=_BOOT_PROTO, bits=2, tlv="nv_boot_settings"),
    _p("BOOT_INTERRUPT_DIS", "bool", 0, bits=1, tlv="nv_boot_settings"),
    _p("BOOT_LACP_DIS", "bool", 1, bits=1, tlv="nv_boot_settings"),
    _p("BOOT_VLAN_EN", "bool", 0, bits=1, tlv="nv_boot_settings"),
    _p("BOOT_PKEY", "uint", 0, ("vpi",), bits=16, tlv="nv_boot_settings"),
    _p("INTERNAL_CPU_MODEL", "enum", 1, ("bf",), enum={"SEPERATED_HOST": 0, "EMBEDDED_CPU": 1}, bits=2, tlv="nv_internal_cpu_conf", ro=True),
    _p("INTERNAL_CPU_PAGE_SUPPLIER", "enum", 0, ("bf",), enum=_ECPF, bits=2, tlv="nv_internal_cpu_conf"),
    _p("INTERNAL_CPU_ESWITCH_MANAGER", "enum", 0, ("bf",), enum=_ECPF, bits=2, tlv="nv_internal_cpu_conf"),
    _p("INTERNAL_CPU_IB_VPORT0", "enum", 0, ("bf",), enum=_ECPF, bits=2, tlv="nv_internal_cpu_conf"),
    _p("INTERNAL_CPU_OFFLOAD_ENGINE", "enum", 0, ("bf",), enum={"ENABLED": 0, "DISABLED": 1}, bits=1, tlv="nv_internal_cpu_conf"),
    _p("ADVANCED_PCI_SETTINGS", "bool", 0, bits=1, tlv="nv_pci_conf"),
    _p("SAFE_MODE_THRESHOLD", "uint", 10, ("cx5",), bits=8, tlv="nv_safe_mode"),
    _p("SAFE_MODE_ENABLE", "bool", 1, ("cx5",), bits=1, tlv="nv_safe_mode"),
]

PARAM_BY_NAME = {p.name: p for p in PARAMS}

# Parameters the mlxconfig database knows but no simulated card supports
# (queried on a card they answer "The Device doesn't support X parameter").
EXTRA_KNOWN_PARAMS = frozenset({
    "MPFS_UC_LOOPBACK_DISABLE_P1", "MPFS_UC_LOOPBACK_DISABLE_P2", "ROCE_CC_LEGACY_DCQCN",
    "MAX_ACC_OUT_READ", "PF_TOTAL_SF", "PF_SF_BAR_SIZE", "PER_PF_NUM_SF", "ROCE_ADAPTIVE_ROUTING_EN",
    "DISABLE_SLOT_POWER_LIMITER", "FPP_EN", "PF_BAR2_SIZE", "PF_BAR2_ENABLE", "CLAMP_TGT_RATE_AFTER_TIME_INC_P1",
    "ROCE_RTT_RESP_DSCP_P1", "ROCE_RTT_RESP_DSCP_MODE_P1", "PHY_FEC_OVERRIDE_P1", "PHY_FEC_OVERRIDE_P2",
    "INT_CPU_AUTO_SHUTDOWN", "LAG_RESOURCE_ALLOCATION", "ATS_ENABLED", "EXP_ROM_UEFI_x86_ENABLE", "EXP_ROM_PXE_ENABLE",
})


def known_param(name):
    """Whether the mlxconfig database knows ``name`` (on any device)."""
    return name in PARAM_BY_NAME or name in EXTRA_KNOWN_PARAMS


@dataclass(frozen=True)
class Model:
    """One adapter model.  ``rate`` is the IB (or Ethernet-only) sysfs rate string."""

    key: str
    device_id: int
    vf_device_id: int
    dev_type: str
    part_name: str
    description: str
    psid: str
    fw_version: str
    ports: int
    rate: str
    eth_rate: str
    tags: frozenset
    subsystem_device: int
    lspci_name: str
    chip_rev: int = 0
    reset_levels: tuple = (0, 3, 4)
    default_overrides: dict = field(default_factory=dict)

    @property
    def mst_name(self):
        """MST device prefix, the PCI device id in decimal (``mt4123``)."""
        return "mt%d" % self.device_id

    @property
    def hca_type(self):
        return "MT%d" % self.device_id

    @property
    def vpi(self):
        return "vpi" in self.tags

    @property
    def bluefield(self):
        return "bf" in self.tags

    def params(self):
        """The model's parameters in database order."""
        return [p for p in PARAMS if p.tags <= self.tags]

    def param(self, name):
        p = PARAM_BY_NAME.get(name)
        if p is None or not p.tags <= self.tags:
            return None
        return p

    def default(self, name):
        if name in self.default_overrides:
            return self.default_overrides[name]
        p = PARAM_BY_NAME[name]
        if p.kind == "array":
            return [p.default] * p.length
        if name == "NUM_OF_PF":
            return self.ports
        return p.default

    @property
    def rate_gbps(self):
        return int(self.rate.split()[0])


def _tags(*names, ports=2):
    t = set(names)
    if ports > 1:
        t.add("p2")
    return frozenset(t)


MODELS = {
    "ConnectX-4 VPI": Model(
        key="ConnectX-4 VPI", device_id=0x1013, vf_device_id=0x1014, dev_type="ConnectX4",
        part_name="MCX456A-ECA_Ax",
        description="ConnectX-4 VPI adapter card; EDR IB (100Gb/s) and 100GbE; dual-port QSFP28; PCIe3.0 x16; ROHS R6",
        psid="MT_2190110032", fw_version="12.28.2006", ports=2,
        rate="100 Gb/sec (4X EDR)", eth_rate="100 Gb/sec (4X EDR)",
        tags=_tags("vpi"), subsystem_device=0x0013, lspci_name="MT27700 Family [ConnectX-4]"),
    "ConnectX-4 Lx EN": Model(
        key="ConnectX-4 Lx EN", device_id=0x1015, vf_device_id=0x1016, dev_type="ConnectX4LX",
        part_name="MCX4121A-ACA_Ax",
        description="ConnectX-4 Lx EN network interface card; 25GbE dual-port SFP28; PCIe3.0 x8; ROHS R6",
        psid="MT_2420110034", fw_version="14.32.1010", ports=2,
        rate="25 Gb/sec (1X EDR)", eth_rate="25 Gb/sec (1X EDR)",
        tags=_tags(), subsystem_device=0x0003, lspci_name="MT27710 Family [ConnectX-4 Lx]",
        default_overrides={"VF_LOG_BAR_SIZE": 0}),
    "ConnectX-5 VPI": Model(
        key="ConnectX-5 VPI", device_id=0x1017, vf_device_id=0x1018, dev_type="ConnectX5",
        part_name="MCX556A-ECA_Ax",
        description="ConnectX-5 VPI adapter card; EDR IB (100Gb/s) and 100GbE; dual-port QSFP28; PCIe3.0 x16; tall bracket; ROHS R6",
        psid="MT_0000000008", fw_version="16.35.3006", ports=2,
        rate="100 Gb/sec (4X EDR)", eth_rate="100 Gb/sec (4X EDR)",
        tags=_tags("vpi", "cx5", "cx5only"), subsystem_device=0x0008, lspci_name="MT27800 Family [ConnectX-5]"),
    "ConnectX-6 VPI": Model(
        key="ConnectX-6 VPI", device_id=0x101B, vf_device_id=0x101C, dev_type="ConnectX6",
        part_name="MCX653106A-HDA_Ax",
        description="ConnectX-6 VPI adapter card; HDR IB (200Gb/s) and 200GbE; dual-port QSFP56; PCIe4.0 x16; tall bracket; ROHS R6",
        psid="MT_0000000223", fw_version="20.39.1002", ports=2,
        rate="200 Gb/sec (4X HDR)", eth_rate="200 Gb/sec (4X HDR)",
        tags=_tags("vpi", "cx5", "cx6"), subsystem_device=0x0007, lspci_name="MT28908 Family [ConnectX-6]"),
    "ConnectX-7": Model(
        key="ConnectX-7", device_id=0x1021, vf_device_id=0x101E, dev_type="ConnectX7",
        part_name="MCX75310AAS-NEA_Ax",
        description="NVIDIA ConnectX-7 HHHL Adapter card; 400GbE / NDR IB (default mode); Single-port OSFP; PCIe 5.0 x16; "
                    "Crypto Disabled; Secure Boot Enabled",
        psid="MT_0000000834", fw_version="28.40.1000", ports=1,
        rate="400 Gb/sec (4X NDR)", eth_rate="400 Gb/sec (4X NDR)",
        tags=_tags("vpi", "cx5", "cx6", "cx7", ports=1), subsystem_device=0x0040, lspci_name="MT2910 Family [ConnectX-7]",
        default_overrides={"NUM_OF_VFS": 16}),
    "BlueField-2": Model(
        key="BlueField-2", device_id=0xA2D6, vf_device_id=0x101E, dev_type="BlueField2",
        part_name="MBF2H516A-CEEO_Ax",
        description="BlueField-2 P-Series DPU 100GbE Dual-Port QSFP56; integrated BMC; PCIe Gen4 x16; Secure Boot Enabled; "
                    "Crypto Enabled; 16GB on-board DDR; 1GbE OOB management; FHHL",
        psid="MT_0000000728", fw_version="24.35.2000", ports=2,
        rate="100 Gb/sec (4X EDR)", eth_rate="100 Gb/sec (4X EDR)",
        tags=_tags("vpi", "cx5", "cx6", "bf"), subsystem_device=0x0061,
        lspci_name="MT42822 BlueField-2 integrated ConnectX-6 Dx network controller", chip_rev=1,
        default_overrides={"LINK_TYPE_P1": 2, "LINK_TYPE_P2": 2}),
}

# mlxfwreset reset levels: (level, description).
RESET_LEVELS = [
    (0, 'Driver, PCI link, network link will remain up ("live-Patch")'),
    (1, 'Only ARM side will not remain up ("Immediate reset").'),
    (3, "Driver restart and PCI reset"),
    (4, "Warm Reboot"),
]

# ibv_devinfo / sysfs port numbers
PORT_STATES = {1: "DOWN", 2: "INIT", 3: "ARMED", 4: "ACTIVE", 5: "ACTIVE_DEFER"}
PHYS_STATES = {1: "Sleep", 2: "Polling", 3: "Disabled", 4: "PortConfigurationTraining", 5: "LinkUp",
               6: "LinkErrorRecovery", 7: "Phy Test"}

# Capability masks as the kernel shows them in ports/N/cap_mask.
CAP_MASK_IB = 0x2651E848
CAP_MASK_IB_CX6 = 0xA651E848
CAP_MASK_ETH = 0x00010000


def get_model(key):
    """Look a model up by its short name; raises KeyError with the known names."""
    try:
        return MODELS[key]
    except KeyError:
        raise KeyError("unknown adapter model %r (known: %s)" % (key, ", ".join(sorted(MODELS)))) from None


# --------------------------------------------------------------------------------------
# GPUs and PCIe bridges (the PCIe tree of lab/fabricsim/pci.py)
# --------------------------------------------------------------------------------------
NVIDIA_VENDOR_ID = 0x10DE


@dataclass(frozen=True)
class PciModel:
    """A PCI function model that is not a ConnectX card: a GPU, a root port or a switch port.

    ``link`` is (generation, width): generation 5 = 32 GT/s.  ``acs_cap`` is the ACS Capability register
    of a port that has the ACS extended capability (None: no ACS capability).
    """

    key: str
    vendor_id: int
    device_id: int
    class_code: int
    revision: int = 0
    subsystem_vendor: int = 0
    subsystem_device: int = 0
    link: tuple = (5, 16)
    acs_cap: int | None = None


# IDs from the pci.ids database (https://pci-ids.ucw.cz): 10de:2330 "GH100[H100 SXM5 80GB]",
# 10de:20b2 "GA100 [A100 SXM4 80GB]", 1000:c030 "PEX890xx PCIe Gen 5 Switch", 1000:c010 "PEX880xx PCIe Gen 4 Switch".
GPU_MODELS = {
    "H100 SXM5": PciModel(key="H100 SXM5", vendor_id=NVIDIA_VENDOR_ID, device_id=0x2330, class_code=0x030200,
                          revision=0xA1, subsystem_vendor=NVIDIA_VENDOR_ID, subsystem_device=0x16C1, link=(5, 16)),
    "A100 SXM4": PciModel(key="A100 SXM4", vendor_id=NVIDIA_VENDOR_ID, device_id=0x20B2, class_code=0x030200,
                          revision=0xA1, subsystem_vendor=NVIDIA_VENDOR_ID, subsystem_device=0x147F, link=(4, 16)),
}
# ACS Capability bits: SrcValid, TransBlk, ReqRedir, CmpltRedir, UpstreamFwd (0x1f), EgressCtrl (0x20), DirectTrans (0x40).
BRIDGE_MODELS = {
    # A Sapphire Rapids root port (the 2023 pci.ids has no name for it: lspci prints "Device 352a").
    "root_port": PciModel(key="root_port", vendor_id=0x8086, device_id=0x352A, class_code=0x060400, revision=0x04,
                          link=(5, 16), acs_cap=0x1F),
    "PEX890xx": PciModel(key="PEX890xx", vendor_id=0x1000, device_id=0xC030, class_code=0x060400, revision=0xB0,
                         link=(5, 16), acs_cap=0x5F),
    "PEX880xx": PciModel(key="PEX880xx", vendor_id=0x1000, device_id=0xC010, class_code=0x060400, revision=0xB0,
                         link=(4, 16), acs_cap=0x5F),
}


def get_gpu_model(key):
    try:
        return GPU_MODELS[key]
    except KeyError:
        raise KeyError("unknown GPU model %r (known: %s)" % (key, ", ".join(sorted(GPU_MODELS)))) from None


def get_bridge_model(key):
    try:
        return BRIDGE_MODELS[key]
    except KeyError:
        raise KeyError("unknown bridge model %r (known: %s)" % (key, ", ".join(sorted(BRIDGE_MODELS)))) from None
