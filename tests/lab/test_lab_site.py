# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The site playbook on the lab of `make demo`, from fresh nodes to verified, as users and AWX run it.

The tests run in this order on one lab (pytest keeps the file's order), each building on the one before:
check mode on the fresh nodes changes nothing; site.yml with reboots allowed runs as an AWX job, from a private
data directory laid out as AWX lays one out and handed to an execution node as receptor hands it
(`ansible-runner transmit | worker | process`, tests/lab/awxjob.py); every node then holds what the inventory
asks, after at most one reboot or power cycle; a second run changes nothing; verify.yml passes and writes the fabric report; a
failed reboot stops the batches after it. scripts/lab.sh runs this module (`make test`, step `lab`).

The lab's nodes (inventories/lab):
  node01  ConnectX-6 VPI, port 1 on Ethernet, SR-IOV off, firmware 20.39.1002: a burn of 20.40.1000, two firmware writes (the
          link_type role's link types, the sriov role's SR-IOV: each role writes its own), one reboot that activates all of
          it, 2 VFs after it
  node02  ConnectX-7 that loads new firmware only on a cold boot: NUM_OF_VFS 16 -> 20, one write, a power cycle; its firmware
          28.40.1000 is "at least 28.39.1002": no burn
  node03  ConnectX-5 VPI, port 2 kept on Ethernet, SR-IOV on, firmware pinned as it runs: VFs at once, no write, no reboot
"""

import http.server
import json
import secrets
import shutil
import sys
import threading

import pytest

import awxjob
import labhost as lab

# What the inventory asks, as the simulator must show it afterwards. boots: the simulator's boot count
# (1 = the lab's power-on; a power cycle counts the cold power-on and the container's start).
# firmware: the version each card runs (sysfs fw_ver) and the cards the inventory's firmware_versions name; burns: flint or
# mstflint burns.
EXPECTED = {
    "node01": {"link_layers": {"0000:3b:00.0": "InfiniBand", "0000:3b:00.1": "InfiniBand"}, "vfs": {"0000:3b:00.0": 2}, "fw_writes": 2, "boots": 2,
               "firmware": {"0000:3b:00.0": "20.40.1000"}, "burns": 1},
    "node02": {"link_layers": {"0000:c1:00.0": "InfiniBand"}, "vfs": {"0000:c1:00.0": 20}, "fw_writes": 1, "boots": 3,
               "firmware": {"0000:c1:00.0": "28.40.1000"}, "burns": 0},
    "node03": {"link_layers": {"0000:86:00.0": "InfiniBand", "0000:86:00.1": "Ethernet"}, "vfs": {"0000:86:00.0": 2}, "fw_writes": 0, "boots": 1,
               "firmware": {"0000:86:00.0": "16.35.3006"}, "burns": 0},
}
FLINTS = ("flint", "mstflint")
# Where the AWX job and the second run write the fabric report (on the controller; verify_report_dir).
REPORT = lab.CACHE / "site-report"
# Files the roles write on a node (check mode must leave them as they are).
NODE_FILES = ("/etc", "/usr/local", "/var/lib/fabric-infiniband")


def _node_files(node):
    present = [p for p in NODE_FILES if lab.run(["podman", "exec", lab.CONTAINER + node, "test", "-e", p], echo=False).returncode == 0]
    return lab.files(node, *present)


def test_check_mode_on_fresh_nodes_changes_nothing(fresh_lab):
    before = {n: (lab.durable_state(n), len(lab.calls(n)), _node_files(n)) for n in lab.NODES}
    proc = lab.playbook("site.yml", "--check", "--diff")
    assert proc.returncode == 0, proc.stdout[-4000:]
    for node in lab.NODES:
        state, ncalls, files = before[node]
        assert lab.durable_state(node) == state, "%s: check mode changed the simulated hardware" % node
        new_calls = lab.calls(node)[ncalls:]
        assert not [c for c in new_calls if c.get("kind") in ("write", "reset")], "%s: check mode wrote: %s" % (node, new_calls)
        assert _node_files(node) == files, "%s: check mode changed files under %s" % (node, ", ".join(NODE_FILES))
    # It says what it would do: the recap counts the changes, --diff shows node01's firmware parameters.
    counts = lab.recap(proc.stdout)
    assert all(counts[n]["changed"] > 0 for n in lab.NODES), counts
    assert "LINK_TYPE_P1" in proc.stdout, "--diff did not show node01's link type change"
    assert "options ib_core netns_mode=0" in proc.stdout, "--diff did not show the RDMA netns modprobe file"
    assert "0000:3b:00.0 firmware on flash" in proc.stdout and "20.40.1000" in proc.stdout, "--diff did not show node01's burn"


def test_site_through_ansible_runner_with_reboots(fresh_lab, project_sync, tmp_path_factory):
    """site.yml with reboots as an AWX job on an execution node (tests/lab/awxjob.py: transmit | worker | process)."""
    root = awxjob.private_data_dir(tmp_path_factory.mktemp("awx-job") / "pdd", project_sync,
                                   {"infiniband_allow_reboot": True, "verify_report_dir": str(REPORT)})
    job = awxjob.run(root, "site", "playbooks/site.yml")
    assert (job.rcs, job.status) == ({"transmit": 0, "worker": 0, "process": 0}, "successful"), (job.rcs, job.status)
    awxjob.assert_through_the_worker(job, root)
    assert job.stats and not job.stats["failures"] and not job.stats["dark"], job.stats
    assert sorted(job.stats["ok"]) == list(lab.NODES), job.stats["ok"]
    # The key went to the agent, never into the output.
    key = (lab.CACHE / "ssh" / "id_ed25519").read_text(encoding="utf-8").splitlines()[1]
    assert "PLAY RECAP" in job.stdout and key not in job.stdout


@pytest.mark.parametrize("node", lab.NODES)
def test_node_holds_what_the_inventory_asks(fresh_lab, node):
    """Read through the node's sysfs (the simulator's, as a real kernel shows it) and the simulator's log."""
    expected = EXPECTED[node]
    for pci, layer in expected["link_layers"].items():
        rdma = lab.state(node)["runtime"]["functions"][pci]["rdma"]
        assert lab.sysfs(node, "/sys/class/infiniband/%s/ports/1/link_layer" % rdma) == layer, "%s %s (%s)" % (node, pci, rdma)
    for pci, count in expected["vfs"].items():
        assert lab.sysfs(node, "/sys/bus/pci/devices/%s/sriov_numvfs" % pci) == str(count), "%s %s" % (node, pci)
    assert lab.state(node)["runtime"]["netns_mode"] == "exclusive"
    writes = [c for c in lab.calls(node) if c.get("kind") == "write" and c.get("rc") == 0 and c.get("tool") in ("mlxconfig", "mstconfig")]
    assert len(writes) == expected["fw_writes"], [c["argv"] for c in writes]
    for pci, version in expected["firmware"].items():
        rdma = lab.state(node)["runtime"]["functions"][pci]["rdma"]
        assert lab.sysfs(node, "/sys/class/infiniband/%s/fw_ver" % rdma) == version, "%s %s (%s)" % (node, pci, rdma)
    burns = [c for c in lab.calls(node) if c.get("kind") == "write" and c.get("rc") == 0 and c.get("tool") in FLINTS]
    assert len(burns) == expected["burns"], [c["argv"] for c in burns]
    assert lab.boot_count(node) == expected["boots"]


def test_second_run_changes_nothing_and_reboots_nothing(fresh_lab):
    boots = {n: lab.boot_count(n) for n in lab.NODES}
    ncalls = {n: len(lab.calls(n)) for n in lab.NODES}
    # The report where the job wrote it (the worker's own project directory is gone with the worker).
    proc = lab.playbook("site.yml", "-e", "infiniband_allow_reboot=true", "-e", "verify_report_dir=%s" % REPORT)
    assert proc.returncode == 0, proc.stdout[-4000:]
    counts = lab.recap(proc.stdout)
    assert sorted(counts) == list(lab.NODES), counts
    assert all(c["changed"] == 0 and c["failed"] == 0 for c in counts.values()), counts
    assert {n: lab.boot_count(n) for n in lab.NODES} == boots
    # One firmware query per adapter with a link type and no write: the firmware is read once per run, whatever
    # reads it; an Ethernet-only card (node02's ConnectX-4 Lx) is not queried at all.
    for node in lab.NODES:
        fw = [c for c in lab.calls(node)[ncalls[node]:]
              if c.get("tool") in ("mlxconfig", "mstconfig", "mlxfwreset", "mstfwreset") and c.get("kind") in ("query", "write", "reset")]
        assert [c.get("kind") for c in fw] == ["query"] * len(lab.adapters(node, with_link_type=True)), (node, fw)
        assert sorted(c.get("device") for c in fw) == sorted(lab.adapters(node, with_link_type=True)), (node, fw)
    assert len(lab.adapters("node02", with_link_type=True)) < len(lab.adapters("node02"))  # the case above is in the lab
    # One firmware version query per card the firmware rules name (node02's ConnectX-4 Lx is not named), no burn.
    for node in lab.NODES:
        flints = [c for c in lab.calls(node)[ncalls[node]:] if c.get("tool") in FLINTS]
        assert sorted((c.get("kind"), c.get("device")) for c in flints) == [("query", pci) for pci in sorted(EXPECTED[node]["firmware"])], \
            (node, flints)
    assert "all 3 nodes pass" in proc.stdout  # site.yml ends with verify.yml
    # a no-op prints nothing a user has to act on (an ansible-core deprecation printed for our own code was one)
    assert "DEPRECATION WARNING" not in proc.stdout, proc.stdout[-4000:]


def test_verify_passes_and_writes_the_fabric_report(fresh_lab):
    # Kept after the test (.cache/lab/fabric-report/, until the next `labctl reset`) for a person to look at.
    tmp_path = lab.CACHE / "fabric-report"
    shutil.rmtree(tmp_path, ignore_errors=True)
    proc = lab.playbook("verify.yml", "-e", "verify_report_dir=%s" % tmp_path)
    assert proc.returncode == 0, proc.stdout[-4000:]
    assert "all 3 nodes pass" in proc.stdout
    report = json.loads((tmp_path / "fabric-report.json").read_text(encoding="utf-8"))
    assert report["ok"] is True and report["failures"] == []
    assert sorted(h["host"] for h in report["hosts"]) == list(lab.NODES)
    # Each card's running firmware against what firmware_versions asks (node02's ConnectX-4 Lx: no rule, no check).
    firmware = {(h["host"], row["pci_address"]): (row["version"], row["wanted"], row["ok"]) for h in report["hosts"] for row in h["firmware"]}
    assert firmware[("node01", "0000:3b:00.0")] == ("20.40.1000", "20.40.1000", True), firmware
    assert firmware[("node02", "0000:c1:00.0")] == ("28.40.1000", "28.39.1002", True), firmware
    assert firmware[("node03", "0000:86:00.0")] == ("16.35.3006", "16.35.3006", True), firmware
    assert firmware[("node02", "0000:01:00.0")][1] is None, firmware
    # Every IB port in the picture: ibsim's one switch and the 4 InfiniBand ports of the 3 nodes.
    html = (tmp_path / "fabric-report.html").read_text(encoding="utf-8")
    svg = html[html.index("<svg"):html.index("</svg>")]
    assert "Switch1" in svg and all(node in svg for node in lab.NODES), svg[:2000]
    assert (tmp_path / "fabric-report.txt").read_text(encoding="utf-8").count("\n") >= 4
    # The traffic step plans (the simulator cannot move RDMA traffic): node01-node02 and node03-node01 on rail 0; node01's
    # second InfiniBand port has no partner rail on node02 or node03 (one InfiniBand port each).
    rows = [(r["server"], r["client"], r["status"]) for r in report["traffic"]]
    assert rows == [("node01", "node02", "planned"), ("node01", "node02", "unpaired"),
                    ("node03", "node01", "planned"), ("node03", "node01", "unpaired")], report["traffic"]
    assert all(r["min_bw_gbps"] and r["max_lat_us"] for r in report["traffic"] if r["status"] == "planned"), report["traffic"]
    assert "traffic: 2 runs planned, not run (verify_traffic_plan_only)" in report["summary"]


def test_verify_fails_what_the_inventory_does_not_hold(fresh_lab, tmp_path):
    """The inventory now asks for the shared RDMA netns mode and Ethernet by default (node03 names its ports): verify
    fails, says which check of which node, and changes nothing."""
    before = {n: lab.durable_state(n) for n in lab.NODES}
    proc = lab.playbook("verify.yml", "-e", "rdma_netns_mode=shared", "-e", "link_type_default=eth",
                        "-e", "verify_report_dir=%s" % tmp_path)
    assert proc.returncode != 0
    report = json.loads((tmp_path / "fabric-report.json").read_text(encoding="utf-8"))
    assert report["ok"] is False and report["summary"].startswith("3 of 3 nodes fail"), report["summary"]
    failing = {(h["host"], c["category"]) for h in report["hosts"] for c in h["checks"] if c["ok"] is False}
    assert failing == {(n, "netns") for n in lab.NODES} | {("node01", "link_layer"), ("node02", "link_layer")}, failing
    assert "node01: RDMA netns mode: expected shared, found exclusive" in proc.stdout
    assert {n: lab.durable_state(n) for n in lab.NODES} == before


def test_a_node_lost_in_a_reboot_stops_the_batches_after_it(fresh_lab, tmp_path):
    """Every node waits (an entry recorded here); node01's reboot takes it away for good (its container stops and
    does not come back). Batches of 2 with max_fail_percentage 0: node01 and node02 form the first batch, node02
    reboots, node01 never answers again, and node03's batch never starts."""
    record = lab.run([lab.BIN / "ansible", "-i", lab.INVENTORY, "ib_nodes", "-m", "fabric.infiniband.pending_action",
                      "-a", "name=lab_test reason='a test of the reboot batches'"])
    assert record.returncode == 0
    lost = tmp_path / "lost-node.yml"
    lost.write_text(json.dumps({"all": {"hosts": {"node01": {
        "infiniband_reboot_command": ["podman", "stop", "-t", "1", lab.CONTAINER + "node01"], "infiniband_reboot_timeout": 20}}}}),
        encoding="utf-8")
    boots = {n: lab.boot_count(n) for n in lab.NODES}
    try:
        proc = lab.playbook("reboot.yml", "-e", "infiniband_allow_reboot=true", "-e", "infiniband_reboot_serial=2",
                            inventories=(lab.INVENTORY, lost))
        assert proc.returncode != 0
        node01 = lab.recap(proc.stdout)["node01"]
        assert node01["failed"] + node01["unreachable"] == 1, proc.stdout[-3000:]
        assert {n: lab.boot_count(n) - boots[n] for n in ("node02", "node03")} == {"node02": 1, "node03": 0}
    finally:
        lab.labctl("up")  # node01 back (its boot count moves: the tests after this one do not use it)
        lab.run([lab.BIN / "ansible", "-i", lab.INVENTORY, "ib_nodes", "-m", "fabric.infiniband.pending_action",
                 "-a", "name=lab_test state=absent"])


def test_secrets_never_reach_the_output(fresh_lab, tmp_path):
    """reboot.yml at -vvv with a BMC password and a kubeconfig holding a token, given as AWX gives them (an extra
    vars file, a kubeconfig file named by the control host's k8s_network_kubeconfig). The API server and the BMC
    (127.0.0.1:9) refuse the connection, so the drain and the power cycle fail: their failures are output too."""
    password = "bmc-" + secrets.token_hex(12)
    token = "tok-" + secrets.token_hex(16)
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(json.dumps({
        "apiVersion": "v1", "kind": "Config", "current-context": "lab",
        "clusters": [{"name": "lab", "cluster": {"server": "https://127.0.0.1:9", "insecure-skip-tls-verify": True}}],
        "users": [{"name": "lab", "user": {"token": token}}],
        "contexts": [{"name": "lab", "context": {"cluster": "lab", "user": "lab"}}]}), encoding="utf-8")
    control = tmp_path / "k8s-control.yml"
    control.write_text(json.dumps({"all": {"children": {"k8s_control": {"hosts": {"localhost": {
        "ansible_connection": "local", "ansible_python_interpreter": sys.executable,
        "k8s_network_kubeconfig": str(kubeconfig)}}}}}}), encoding="utf-8")
    extravars = tmp_path / "extravars.json"
    extravars.write_text(json.dumps({"infiniband_allow_reboot": True, "infiniband_bmc_address": "https://127.0.0.1:9",
                                     "infiniband_bmc_username": "admin", "infiniband_bmc_password": password,
                                     "infiniband_bmc_validate_certs": False, "infiniband_reboot_timeout": 30}), encoding="utf-8")
    entry = lab.run([lab.BIN / "ansible", "-i", lab.INVENTORY, "node03", "-m", "fabric.infiniband.pending_action",
                     "-a", "name=lab_secrets action=power_cycle reason='a test of the secrets'"])
    assert entry.returncode == 0
    try:
        outputs = {}
        for case, drain in (("drain", "true"), ("bmc", "false")):
            proc = lab.playbook("reboot.yml", "-vvv", "-e", "@%s" % extravars, "-e", "infiniband_drain=%s" % drain,
                                "--limit", "node03", inventories=(lab.INVENTORY, control))
            outputs[case] = proc.stdout
            # Each run reached the step that uses the secret, and failed there.
            assert proc.returncode != 0 and lab.recap(proc.stdout)["node03"]["failed"] == 1, proc.stdout[-3000:]
        assert "Cordon and drain the Kubernetes node" in outputs["drain"]
        assert "Power-cycle the node through its BMC (Redfish)" in outputs["bmc"]
        for case, output in outputs.items():
            assert password not in output, "%s: the BMC password is in the output" % case
            assert token not in output, "%s: the kubeconfig's token is in the output" % case
        assert lab.boot_count("node03") == EXPECTED["node03"]["boots"]
    finally:
        lab.run([lab.BIN / "ansible", "-i", lab.INVENTORY, "node03", "-m", "fabric.infiniband.pending_action",
                 "-a", "name=lab_secrets state=absent"])


def test_a_failed_burn_stays_on_its_node_and_a_boot_that_did_not_load_the_firmware_fails_it(fresh_lab, tmp_path):
    """New pins (the images in lab/firmware/): node03's ConnectX-5 to 16.35.4030, whose first burn fails half-way (the
    simulator's firmware_burn fault: the card keeps its image), and node02's ConnectX-7 to exactly 28.39.1002, a card
    that loads new firmware only on a cold boot. The first run, without reboots, burns node02 and fails node03 alone;
    the second takes the images from an HTTP mirror on the controller (firmware_image_url; node03 downloads its image,
    checked against its sha256, into a cache of its own), burns node03 and reboots both: node03 runs its new version,
    and node02, whose warm reboot did not load it, fails with what to check instead of asking for another reboot. The
    last test of the module: it leaves node02 waiting."""
    pins = tmp_path / "firmware.json"
    pins.write_text(json.dumps({
        "firmware_versions": [{"psid": "MT_0000000223", "version": "20.40.1000"},
                              {"model": "ConnectX-7", "version": "28.39.1002"},
                              {"model": "ConnectX-5", "version": "16.35.4030"}],
        "firmware_images": [
            {"file": "fw-ConnectX6-rel-20_40_1000-MCX653106A-HDA_Ax.bin", "psid": "MT_0000000223", "version": "20.40.1000",
             "sha256": "fcd04a0a88d7c24c7333c3228858ef00ce964d05fd40d29e3d491d804e587e29"},
            {"file": "fw-ConnectX7-rel-28_39_1002-MCX75310AAS-NEA_Ax.bin", "psid": "MT_0000000834", "version": "28.39.1002",
             "sha256": "7c79a34b47eab60c3f17a3f3c0a66b046f6fce2db9535011176f42e184aaca70"},
            {"file": "fw-ConnectX5-rel-16_35_4030-MCX556A-ECA_Ax.bin", "psid": "MT_0000000008", "version": "16.35.4030",
             "sha256": "5667f7704e290f224b5fe9c2d522581f55ef0c5ca10d9d80990a25bc6e5f8147"}]}), encoding="utf-8")
    fault = lab.run(["podman", "exec", lab.CONTAINER + "node03", "env", "PYTHONPATH=/usr/lib/fabricsim", "python3", "-m",
                     "fabricsim.cli", "fabricsim", "fault", "firmware_burn", "1"])
    assert fault.returncode == 0, fault.stdout
    boots = {n: lab.boot_count(n) for n in lab.NODES}

    first = lab.playbook("nodes.yml", "-e", "@%s" % pins, "--tags", "firmware,reboot")
    counts = lab.recap(first.stdout)
    assert first.returncode != 0 and counts["node03"]["failed"] == 1, first.stdout[-3000:]
    assert counts["node02"]["failed"] == 0 and counts["node02"]["changed"] > 0 and counts["node01"]["failed"] == 0, counts
    assert "Burning FS4 image failed" in " ".join(first.stdout.split()), first.stdout[-3000:]
    burns = {n: [c for c in lab.calls(n) if c.get("tool") in FLINTS and c.get("kind") == "write"] for n in ("node02", "node03")}
    assert [c["rc"] for c in burns["node02"]] == [0] and [c["rc"] for c in burns["node03"]] == [1], burns
    assert lab.sysfs("node03", "/sys/class/infiniband/%s/fw_ver" % lab.state("node03")["runtime"]["functions"]["0000:86:00.0"]["rdma"]) \
        == "16.35.3006"

    # The mirror listens where the nodes reach the controller: the lab network's gateway, where ibsim listens too.
    gateway = lab.state("node03")["fabric"]["ibsim"].rsplit(":", 1)[0]
    asked = []

    class Mirror(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, directory=str(lab.REPO / "lab" / "firmware"), **kwargs)

        def log_request(self, code="-", size="-"):
            asked.append(self.path)

    mirror = http.server.ThreadingHTTPServer((gateway, 0), Mirror)
    threading.Thread(target=mirror.serve_forever, daemon=True).start()
    try:
        second = lab.playbook("nodes.yml", "-e", "@%s" % pins, "-e", "infiniband_allow_reboot=true", "--tags", "firmware,reboot",
                              "-e", "firmware_image_url=http://%s:%d/" % (gateway, mirror.server_address[1]),
                              "-e", "firmware_cache_dir=/var/lib/fabric-infiniband/firmware-mirror")
    finally:
        mirror.shutdown()
        mirror.server_close()
    assert asked == ["/fw-ConnectX5-rel-16_35_4030-MCX556A-ECA_Ax.bin"], asked
    cached = lab.run(["podman", "exec", lab.CONTAINER + "node03", "sha256sum",
                      "/var/lib/fabric-infiniband/firmware-mirror/fw-ConnectX5-rel-16_35_4030-MCX556A-ECA_Ax.bin"])
    assert cached.stdout.startswith("5667f7704e290f224b5fe9c2d522581f55ef0c5ca10d9d80990a25bc6e5f8147"), cached.stdout
    counts = lab.recap(second.stdout)
    assert second.returncode != 0 and counts["node02"]["failed"] == 1, second.stdout[-3000:]
    assert counts["node03"]["failed"] == 0 and counts["node01"]["failed"] == 0, counts
    assert "did not load it. Another reboot will not load it either" in " ".join(second.stdout.split()), second.stdout[-3000:]
    assert {n: lab.boot_count(n) - boots[n] for n in lab.NODES} == {"node01": 0, "node02": 1, "node03": 1}
    running = {n: lab.sysfs(n, "/sys/class/infiniband/%s/fw_ver" % lab.state(n)["runtime"]["functions"][pci]["rdma"])
               for n, pci in (("node02", "0000:c1:00.0"), ("node03", "0000:86:00.0"))}
    assert running == {"node02": "28.40.1000", "node03": "16.35.4030"}, running
