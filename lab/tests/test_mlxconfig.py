# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""mlxconfig / mstconfig: every format generation, errors, exit codes, JSON."""

import json

import pytest
from conftest import fixture_text, node_file, rstrip_lines

from fabricsim import catalog, mlxconfig, mst
from fabricsim import state as sim_state

GEN_VERSIONS = {1: "4.14.0", 2: "4.23.0", 3: "4.25.0", 4: "4.28.0", 5: "4.33.0", 6: "4.36.0"}
# The canonical example of tool-outputs.md 1.2.a: port 1 staged ETH -> IB, SR-IOV staged on.
STAGED = {"NUM_OF_VFS": {"current": 0, "next": 8}, "SRIOV_EN": {"current": "False", "next": "True"},
          "LINK_TYPE_P1": {"current": "ETH", "next": "IB"}}
BEFORE_SET = {"NUM_OF_VFS": {"current": 0, "next": 0}, "SRIOV_EN": {"current": "False", "next": "False"},
              "LINK_TYPE_P1": {"current": "ETH", "next": "ETH"}}


def run(st, *argv, tool="mstconfig", stdin=None):
    return mlxconfig.run(st, list(argv), tool=tool, stdin=stdin)


@pytest.mark.parametrize("version,gen", [("4.14.0", 1), ("4.21.0", 1), ("4.22.0", 2), ("4.24.1", 2), ("4.25.0", 3),
                                         ("4.26.0", 4), ("4.30.0", 4), ("4.30.1-1210", 5), ("4.31.0", 5), ("4.35.0", 5),
                                         ("4.36.0", 6), ("5.0.0", 6)])
def test_generation_from_version(version, gen):
    assert mlxconfig.generation(version) == gen


@pytest.mark.parametrize("gen", sorted(GEN_VERSIONS))
def test_query_e_layout(make_state, gen):
    st = make_state(tools={"firmware_version": GEN_VERSIONS[gen]}, params=STAGED)
    # Rows follow the command line (mstflint queryParamViews keeps argv order); the reference's
    # canonical example lists them in this order.
    res = run(st, "-e", "-d", "0000:3b:00.0", "q", "NUM_OF_VFS", "SRIOV_EN", "LINK_TYPE_P1", "LINK_TYPE_P2")
    assert res.rc == 0
    assert res.stdout == fixture_text("mlxconfig_g%d_query_e.txt" % gen)
    assert res.kind == "query" and res.device == "0000:3b:00.0"


@pytest.mark.parametrize("gen", sorted(GEN_VERSIONS))
def test_set_layout_then_query(make_state, gen):
    st = make_state(tools={"firmware_version": GEN_VERSIONS[gen]}, params=BEFORE_SET)
    res = run(st, "-y", "-d", "0000:3b:00.0", "set", "LINK_TYPE_P1=IB", "SRIOV_EN=1", "NUM_OF_VFS=8")
    assert res.rc == 0
    assert res.stdout == fixture_text("mlxconfig_g%d_set.txt" % gen)
    assert res.kind == "write"
    # set only staged Next Boot: the query now shows the canonical staged example
    res = run(st, "-e", "-d", "0000:3b:00.0", "q", "NUM_OF_VFS", "SRIOV_EN", "LINK_TYPE_P1", "LINK_TYPE_P2")
    assert res.stdout == fixture_text("mlxconfig_g%d_query_e.txt" % gen)


@pytest.mark.parametrize("gen", sorted(GEN_VERSIONS))
def test_ro_prefix_wide_values_and_arrays(make_state, gen):
    st = make_state(tools={"firmware_version": GEN_VERSIONS[gen]}, params={"PCI_ATOMIC_MODE": {"current": 0, "next": 1}})
    res = run(st, "-e", "-d", "0000:3b:00.0", "q", "LOG_DCR_HASH_TABLE_SIZE", "PCI_ATOMIC_MODE", "ESWITCH_HAIRPIN_DESCRIPTORS")
    assert res.stdout == fixture_text("mlxconfig_g%d_query_ro_wide.txt" % gen)


def test_g6_matches_reference_lines():
    header, row = fixture_text("ref_g6_lines.txt").splitlines()
    lines = fixture_text("mlxconfig_g6_query_e.txt").splitlines()
    assert header in lines and row in lines


def test_g4_rows_match_sriov_operator_fixture(make_state):
    st = make_state(tools={"firmware_version": "4.28.0"},
                    params={"ROCE_CONTROL": {"current": 0, "next": 2}, "LEGACY_BOOT_PROTOCOL": {"current": 1, "next": 0}})
    res = run(st, "-e", "-d", "3b:00.0", "q", "MEMIC_BAR_SIZE", "MEMIC_SIZE_LIMIT", "NUM_OF_PF", "ROCE_CONTROL",
              "LEGACY_BOOT_PROTOCOL", "SAFE_MODE_ENABLE")
    out = res.stdout.split("\n")
    table = "\n".join(out[out.index(next(x for x in out if x.startswith("Configurations:"))):])
    assert table == fixture_text("ref_g4_operator_rows.txt")


def test_dell_non_idempotent_set_g5(make_state):
    """Real capture: set to the values Next Boot already has still shows the table, prompts, writes."""
    st = make_state(tools={"firmware": "mft", "firmware_version": "4.33.0"}, model="ConnectX-5 VPI",
                    part_name="04TRD3_Ax", description="ConnectX-5 EN network interface card; 25GbE Dual-port SFP28 for OCP3.0",
                    params={"SRIOV_EN": {"current": "False", "next": "True"}, "NUM_OF_VFS": 8})
    sim_state.set_mst_started(st, True)
    before = json.dumps(st, sort_keys=True)
    res = run(st, "-y", "-d", "/dev/mst/mt4119_pciconf0", "set", "SRIOV_EN=1", "NUM_OF_VFS=8", tool="mlxconfig")
    assert res.rc == 0
    assert res.stdout == fixture_text("ref_g5_set_dell_cx5.txt")
    assert res.kind == "write"
    assert json.dumps(st, sort_keys=True) == before  # same values: a write that changes nothing


def test_proxmox_set_g5_mst_device(make_state):
    # The published capture lost its trailing blanks: compare line by line without them.
    st = make_state(tools={"firmware": "mft", "firmware_version": "4.34.0"}, part_name="MCX654106A-HCA_Ax",
                    description="ConnectX-6 VPI adapter card; HDR IB (200Gb/s) and 200GbE; dual-port QSFP56; "
                                "Socket Direct 2x PCIe3.0 x16; tall bracket; ROHS R6")
    sim_state.set_mst_started(st, True)
    res = run(st, "-y", "-d", "/dev/mst/mt4123_pciconf0", "set", "LINK_TYPE_P1=2", "LINK_TYPE_P2=2", tool="mlxconfig")
    assert rstrip_lines(res.stdout) == rstrip_lines(fixture_text("ref_g5_set_proxmox_cx6.txt"))
    assert sim_state.param_value(st["adapters"][0], "LINK_TYPE_P2", "next") == 2


def test_g1_set_single_param_real_capture(make_state):
    st = make_state(tools={"firmware": "mft", "firmware_version": "4.14.0"}, part_name="MCX653105A-ECA_Ax",
                    description="ConnectX-6 VPI adapter card; 100Gb/s (HDR100; EDR IB and 100GbE); single-port QSFP56; "
                                "PCIe3.0 x16; tall bracket; ROHS R6")
    sim_state.set_mst_started(st, True)
    res = run(st, "-y", "-d", "/dev/mst/mt4123_pciconf0", "set", "LINK_TYPE_P1=2", tool="mlxconfig")
    assert rstrip_lines(res.stdout) == rstrip_lines(fixture_text("ref_g1_set_cx6_single.txt"))


def test_cx4lx_query_g5_real_capture(make_state):
    desc = node_file("cx7-and-cx4lx.json")
    desc["tools"].update({"firmware": "mstflint", "firmware_version": "4.33.0"})
    st = make_state(desc)
    res = run(st, "-d", "01:00.0", "q")
    ref = [line[8:].rstrip() for line in fixture_text("ref_cx4lx_query_g5_indented.txt").rstrip("\n").split("\n")]
    ours = [line.rstrip() for line in res.stdout.split("\n")[4:4 + len(ref)]]
    assert ours == ref
    assert "LINK_TYPE_P1" not in res.stdout


def test_query_without_e_has_no_star_or_footer(make_state):
    st = make_state(params=STAGED)
    res = run(st, "-d", "0000:3b:00.0", "q", "LINK_TYPE_P1")
    assert "         LINK_TYPE_P1                        IB(1)           \n" in res.stdout
    assert "*" not in res.stdout and "The '*'" not in res.stdout


def test_query_all_lists_parameters_in_database_order(make_state):
    st = make_state()
    res = run(st, "-d", "0000:3b:00.0", "q")
    names = [line.split()[0] for line in res.stdout.split("Next Boot\n", 1)[1].splitlines() if line.strip()]
    model_names = [p.name for p in catalog.MODELS["ConnectX-6 VPI"].params()]
    assert names == model_names
    assert names.index("NUM_OF_VFS") < names.index("SRIOV_EN") < names.index("LINK_TYPE_P1")


def test_array_expansion_and_element_set(make_state):
    st = make_state()
    res = run(st, "-d", "0000:3b:00.0", "q", "ESWITCH_HAIRPIN_DESCRIPTORS[0..7]")
    rows = [line for line in res.stdout.splitlines() if "ESWITCH_HAIRPIN_DESCRIPTORS[" in line]
    assert [r.split()[0] for r in rows] == ["ESWITCH_HAIRPIN_DESCRIPTORS[%d]" % i for i in range(8)]
    assert all(r.split()[1] == "128" for r in rows)
    res = run(st, "-y", "-d", "0000:3b:00.0", "set", "ESWITCH_HAIRPIN_DESCRIPTORS[2]=64")
    assert res.rc == 0
    assert sim_state.param_value(st["adapters"][0], "ESWITCH_HAIRPIN_DESCRIPTORS", "next") == [128, 128, 64] + [128] * 5
    res = run(st, "-e", "-d", "0000:3b:00.0", "q", "ESWITCH_HAIRPIN_DESCRIPTORS[2]")
    assert res.stdout.splitlines()[-2].startswith("*        ESWITCH_HAIRPIN_DESCRIPTORS[2]")


@pytest.mark.parametrize("arg,value", [("LINK_TYPE_P1=eth", 2), ("LINK_TYPE_P1=Eth", 2), ("LINK_TYPE_P1=2", 2),
                                       ("LINK_TYPE_P1=IB", 1), ("SRIOV_EN=true", 1), ("SRIOV_EN=True", 1),
                                       ("SRIOV_EN=1", 1), ("SRIOV_EN=False", 0), ("SRIOV_EN=0", 0), ("NUM_OF_VFS=0x10", 16)])
def test_set_accepts_names_and_numbers(make_state, arg, value):
    st = make_state(params={"SRIOV_EN": {"current": "True", "next": "True"}, "LINK_TYPE_P1": {"current": "ETH", "next": "ETH"}})
    res = run(st, "-y", "-d", "0000:3b:00.0", "set", arg)
    assert res.rc == 0, res.stdout
    assert sim_state.param_value(st["adapters"][0], arg.split("=")[0], "next") == value


@pytest.mark.parametrize("arg,message", [
    ("LINK_TYPE_P1=FOO", "-E- Cannot set the value FOO for the parameter LINK_TYPE_P1: Unknown value FOO"),
    ("LINK_TYPE_P1=3", "-E- Cannot set the value 3 for the parameter LINK_TYPE_P1: Unknown value 3"),
    ("SRIOV_EN=2", "-E- Cannot set the value 2 for the parameter SRIOV_EN: Unknown value 2"),
    ("NUM_OF_VFS=300", "-E- Cannot set the value 300 for the parameter NUM_OF_VFS: The value 300 is not valid,  as its size is 8 bits"),
    ("NUM_OF_VFS=abc", "-E- Cannot set the value abc for the parameter NUM_OF_VFS: Cannot parse the value"),
    ("FOO_BAR=1", "-E- Unknown Parameter FOO_BAR"),
    ("MPFS_UC_LOOPBACK_DISABLE_P1=1", "-E- The Device doesn't support MPFS_UC_LOOPBACK_DISABLE_P1 parameter"),
])
def test_set_errors_after_headers(make_state, arg, message):
    st = make_state()
    before = json.dumps(st, sort_keys=True)
    res = run(st, "-y", "-d", "0000:3b:00.0", "set", arg)
    assert res.rc == 3
    lines = res.stdout.splitlines()
    assert lines[-1] == message
    assert lines[-2].startswith("Configurations:") and "Device #1:" in res.stdout
    assert json.dumps(st, sort_keys=True) == before
    assert res.kind == "query"


def test_read_only_parameter_cannot_be_set(make_state):
    st = make_state(tools={"firmware_version": "4.33.0"})
    res = run(st, "-y", "-d", "0000:3b:00.0", "set", "LOG_DCR_HASH_TABLE_SIZE=12")
    assert res.rc == 3
    assert res.stdout.endswith("Applying... Failed!\n-E- Operation is not supported (Read only TLV: nv_dcr_conf)\n")
    assert " RO     LOG_DCR_HASH_TABLE_SIZE" in res.stdout
    assert sim_state.param_value(st["adapters"][0], "LOG_DCR_HASH_TABLE_SIZE", "next") == 11


def test_unsupported_parameter_on_query_cx4lx(make_state):
    st = make_state(node_file("cx7-and-cx4lx.json"), tools={"firmware": "mstflint", "firmware_version": "4.26.0"})
    res = run(st, "-d", "01:00.0", "q", "MPFS_UC_LOOPBACK_DISABLE_P1")
    assert res.rc == 3
    # section 1.7 real line; the device header and the Configurations: header come first (section 1.1)
    assert res.stdout.endswith("-E- The Device doesn't support MPFS_UC_LOOPBACK_DISABLE_P1 parameter\n")
    assert res.stdout.startswith("\nDevice #1:\n----------\n\nDevice type:        ConnectX4LX")
    res = run(st, "-d", "01:00.0", "q", "LINK_TYPE_P1")
    assert res.stdout.endswith("-E- The Device doesn't support LINK_TYPE_P1 parameter\n")


def test_unknown_parameter_on_query(make_state):
    res = run(make_state(), "-d", "0000:3b:00.0", "q", "FOO_BAR")
    assert res.rc == 3 and res.stdout.endswith("Next Boot\n-E- Unknown Parameter FOO_BAR\n")


@pytest.mark.parametrize("argv", [["-d", "0000:3b:00.0", "q"], ["-y", "-d", "0000:3b:00.0", "set", "SRIOV_EN=1"],
                                  ["-d", "0000:3b:00.0", "-y", "reset"]])
def test_lockdown_fails_to_open(make_state, argv):
    desc = dict(node_file("cx6-vpi-eth-p1.json"))
    desc["kernel"] = {"lockdown": "integrity", "netns_mode": "shared"}
    st = make_state(desc)
    res = run(st, *argv)
    assert res.rc == 3
    assert res.stdout.endswith("-E- Failed to open the device\n")
    assert "Device #1" not in res.stdout


@pytest.mark.parametrize("dev", ["0000:af:00.0", "af:00.0", "mlx5_7", "/dev/mst/mt4123_pciconf0", "0000:3b:00.2"])
def test_unknown_device(make_state, dev):
    res = run(make_state(), "-d", dev, "q")
    assert (res.rc, res.stdout) == (3, "-E- Failed to open the device\n")


def test_mst_device_needs_mft_and_mst_start(make_state):
    st = make_state(tools={"firmware": "mft"})
    assert run(st, "-d", "/dev/mst/mt4123_pciconf0", "q", tool="mlxconfig").stdout == "-E- Failed to open the device\n"
    mst.run(st, ["start"])
    res = run(st, "-d", "/dev/mst/mt4123_pciconf0.1", "q", "LINK_TYPE_P2", tool="mlxconfig")
    assert res.rc == 0 and res.device == "0000:3b:00.1"
    assert "Device:         /dev/mst/mt4123_pciconf0.1\n" in res.stdout
    st["tools"]["firmware"] = "mstflint"
    assert run(st, "-d", "/dev/mst/mt4123_pciconf0", "q").rc == 3


@pytest.mark.parametrize("dev,bdf", [("mlx5_1", "0000:3b:00.1"), ("3b:00.0", "0000:3b:00.0"), ("0000:3b:00.1", "0000:3b:00.1")])
def test_device_by_rdma_name_or_bdf(make_state, dev, bdf):
    res = run(make_state(), "-d", dev, "q", "LINK_TYPE_P1")
    assert res.rc == 0 and res.device == bdf
    assert "Device:         %-16s\n" % dev in res.stdout


def test_prompt_without_yes_reads_stdin(make_state):
    st = make_state(params=BEFORE_SET)
    res = run(st, "-d", "0000:3b:00.0", "set", "LINK_TYPE_P1=IB")
    assert res.rc == 2
    assert res.stdout.endswith("\n Apply new Configuration? (y/n) [n] : -E- Aborted by user.\n")
    assert sim_state.param_value(st["adapters"][0], "LINK_TYPE_P1", "next") == 2
    assert run(st, "-d", "0000:3b:00.0", "set", "LINK_TYPE_P1=IB", stdin="n\n").rc == 2
    res = run(st, "-d", "0000:3b:00.0", "set", "LINK_TYPE_P1=IB", stdin="yes\n")
    assert res.rc == 0 and res.stdout.endswith("(y/n) [n] : Applying... Done!\n-I- Please reboot machine to load new configurations.\n")
    assert sim_state.param_value(st["adapters"][0], "LINK_TYPE_P1", "next") == 1


def test_power_cycle_message(make_state):
    st = make_state(needs_power_cycle=True)
    res = run(st, "-y", "-d", "0000:3b:00.0", "set", "SRIOV_EN=1")
    assert res.stdout.endswith("Applying... Done!\n-I- Please power cycle machine to load new configurations.\n")


def test_reset_restores_defaults_to_next_boot(make_state):
    st = make_state(params=STAGED)
    res = run(st, "-y", "-d", "0000:3b:00.0", "reset")
    assert res.rc == 0 and res.kind == "reset"
    assert res.stdout == ("\n Reset configuration for device 0000:3b:00.0? (y/n) [n] : y\nApplying... Done!\n"
                          "-I- Please reboot machine to load new configurations.\n")
    ad = st["adapters"][0]
    assert [sim_state.param_value(ad, n, "next") for n in ("NUM_OF_VFS", "SRIOV_EN", "LINK_TYPE_P1")] == [8, 0, 1]
    assert sim_state.param_value(ad, "LINK_TYPE_P1", "current") == 2


def test_query_all_devices(make_state):
    st = make_state(node_file("cx7-and-cx4lx.json"))
    res = run(st, "q", "NUM_OF_VFS", tool="mlxconfig")
    assert res.rc == 0 and res.device is None
    assert "Device #1:" in res.stdout and "Device #2:" in res.stdout and "Device #3:" in res.stdout
    assert res.stdout.index("Device:             0000:01:00.0") < res.stdout.index("Device:             0000:c1:00.0")
    mst.run(st, ["start"])
    res = run(st, "q", "NUM_OF_VFS", tool="mlxconfig")
    assert "Device:             /dev/mst/mt4117_pciconf0.1\n" in res.stdout
    assert "Device:             /dev/mst/mt4129_pciconf0\n" in res.stdout


def test_no_devices(make_state):
    desc = node_file("cx6-vpi-eth-p1.json")
    desc["adapters"] = []
    st = sim_state.normalize(desc)
    assert run(st, "q").stdout == "-E- No devices found.\n"
    st["tools"]["firmware"] = "mft"
    assert run(st, "q", tool="mlxconfig").stdout == (
        "-E- No devices found, mst might be stopped. You may need to run 'mst start' to load MST modules. \n")


@pytest.mark.parametrize("argv,first", [
    (["-d", "0000:3b:00.0", "set"], "-E- missing configuration arguments. For more information please run mstconfig -h|--help."),
    (["-d", "0000:3b:00.0", "set", "SRIOV_EN"], "-E- Invalid Configuration argument SRIOV_EN"),
    (["-d", "0000:3b:00.0", "set", "SRIOV_EN=1", "SRIOV_EN=0"], "-E- Duplicate parameter, SRIOV_EN."),
    (["-d", "0000:3b:00.0", "-j", "x.json", "set", "SRIOV_EN=1"], "-E- Json format is only supported for query command."),
    (["-d", "0000:3b:00.0"], "-E- No command found. For more information please read the help message:"),
    (["-d", "0000:3b:00.0", "--bogus", "q"], "-E- invalid argument: --bogus"),
    (["set", "SRIOV_EN=1"], "-E- set command expects device to be specified."),
    (["-d"], "-E- missing device name"),
])
def test_parser_errors(make_state, argv, first):
    res = run(make_state(), *argv)
    assert res.rc == 3
    assert res.stdout.splitlines()[0] == first


def test_json_query(make_state, tmp_path):
    st = make_state(tools={"firmware_version": "4.33.0"}, params=STAGED)
    out = tmp_path / "q.json"
    res = run(st, "-e", "-d", "0000:3b:00.0", "-j", str(out), "q", "LINK_TYPE_P1", "NUM_OF_VFS", "LOG_DCR_HASH_TABLE_SIZE")
    assert res.rc == 0
    assert res.stdout == "Query output saved to %s successfully\n" % out
    text = out.read_text()
    # jsoncpp StreamWriterBuilder layout: TAB indent, " : ", members sorted, objects on their own line
    assert text.startswith('{\n\t"Device #1" : \n\t{\n\t\t"description" : "ConnectX-6 VPI adapter card;')
    assert ('\t\t\t"LINK_TYPE_P1" : \n\t\t\t{\n\t\t\t\t"current_value" : "ETH(2)",\n\t\t\t\t"default_value" : "IB(1)",\n'
            '\t\t\t\t"modified" : true,\n\t\t\t\t"next_value" : "IB(1)",\n\t\t\t\t"read_only" : false\n\t\t\t},\n') in text
    assert text.endswith("\n\t\t}\n\t}\n}\n")
    doc = json.loads(text)
    tlv = doc["Device #1"]["tlv_configuration"]
    assert tlv["NUM_OF_VFS"] == {"current_value": 0, "default_value": 8, "modified": True, "next_value": 8, "read_only": False}
    assert tlv["LOG_DCR_HASH_TABLE_SIZE"]["read_only"] is True
    assert doc["Device #1"]["device"] == "0000:3b:00.0" and doc["Device #1"]["device_type"] == "ConnectX6"
    run(st, "-d", "0000:3b:00.0", "-j", str(out), "q", "LINK_TYPE_P1")
    assert json.loads(out.read_text())["Device #1"]["tlv_configuration"] == {"LINK_TYPE_P1": {"next_value": "IB(1)", "read_only": False}}


def test_json_query_error(make_state, tmp_path):
    out = tmp_path / "q.json"
    res = run(make_state(), "-d", "0000:3b:00.0", "-j", str(out), "q", "FOO_BAR")
    assert res.rc == 3
    assert res.stdout == "-E- Unknown Parameter FOO_BAR\nQuery output saved to %s but one or more devices had an error.\n" % out
    assert out.read_text() == "{}\n"
