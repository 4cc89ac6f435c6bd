# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""plugin_utils/verify.py: the verify role's pair check, what it collects of a node, its report files (its action runs the
modules and writes them)."""

from __future__ import annotations

import json
import os
import stat

from ansible_collections.fabric.infiniband.plugins.plugin_utils import verify

HCA = {"hcas": [], "rdma_system": {"netns_mode": "exclusive"}}


def test_pair_problems_only_with_the_traffic_step():
    pairs = [{"server": "node01", "client": "node01"}, {"server": "node01", "client": "node09"}]
    assert verify.pair_problems({"verify_traffic": False, "verify_traffic_pairs": pairs}, ["node01"]) == []
    problems = verify.pair_problems({"verify_traffic": "true", "verify_traffic_pairs": pairs}, ["node01", "node02"])
    assert any(p.startswith("verify_traffic_pairs[0]: node01 is paired with itself") for p in problems), problems
    assert any(p.startswith("verify_traffic_pairs[1].client: node09 is no host of the play") for p in problems), problems


def test_expect_takes_the_other_roles_defaults():
    values = {"rdma_netns_mode": "shared", "sriov_pfs": [{"device": "mlx5_0", "num_vfs": 4}]}
    got = verify.expect(lambda name, default=None: values.get(name, default))
    assert got == {"link_type_default": "ib", "link_type_adapters": [], "rdma_netns_mode": "shared",
                   "sriov_pfs": [{"device": "mlx5_0", "num_vfs": 4}], "sriov_guid_mode": "scheme",
                   "sriov_guid_prefix": "0x02fa", "sriov_guid_host_id": None, "firmware_versions": []}


def test_traffic_node():
    settings = {"verify_traffic": True, "verify_traffic_address": "10.0.0.1", "verify_traffic_roce": False,
                "verify_traffic_min_bw_gbps": None, "verify_traffic_max_lat_us": 5, "verify_traffic_thresholds": {},
                "verify_traffic_bw_iterations": None, "verify_traffic_lat_iterations": 100}
    wanted = {"hca": HCA, "address": "10.0.0.1", "roce": False, "min_bw_gbps": None, "max_lat_us": 5, "thresholds": {},
              "bw_iterations": None, "lat_iterations": 100}
    assert verify.traffic_node(settings, HCA) == wanted
    assert verify.traffic_node(dict(settings, verify_traffic=False), HCA) == {}


def test_sm_and_topology_hosts():
    sms = verify.sm_hosts(["n1", "n2", "n3"], {"opensm": ["n3", "n9"]})
    assert sms == ["n3"]
    assert verify.topology_host(None, ["n1", "n2", "n3"], sms) == "n3"
    assert verify.topology_host(None, ["n1", "n2"], sms) == "n1"
    assert verify.topology_host("n2", ["n1", "n2"], sms) == "n2"
    assert verify.topology_host(None, [], []) is None
    assert verify.sm_hosts(["n1"], {}) == []


def test_report_dir():
    assert verify.report_dir("/srv/report", "/home/me", "/pb") == "/srv/report"
    assert verify.report_dir("fabric-report", "/home/me", "/pb") == "/home/me/fabric-report"
    assert verify.report_dir("fabric-report", None, "/pb") == "/pb/fabric-report"


def test_report_files_written_only_where_they_differ(tmp_path):
    nodes = {"node01": {"hca": HCA, "pending": {"entries": {}}, "expect": {"rdma_netns_mode": "shared"}, "traffic": {}}}
    report = verify.report(nodes)
    assert report["ok"] is False
    assert verify.failure(report)[0] == report["summary"]
    assert any("RDMA netns mode: expected shared, found exclusive" in line for line in verify.failure(report))
    contents = verify.files(report)
    assert [item[0] for item in contents] == list(verify.FILES)
    assert json.loads(contents[1][1]) == json.loads(json.dumps(report)) and contents[1][1].endswith("}\n")
    directory = str(tmp_path / "a" / "report")
    todo = verify.stale(directory, contents)
    assert [(item[0], item[2]) for item in todo] == [(name, None) for name in verify.FILES]
    for item in todo:
        verify.write(directory, item[0], item[1])
    assert verify.stale(directory, contents) == []
    assert stat.S_IMODE(os.stat(os.path.join(directory, verify.FILES[0])).st_mode) == 0o644
    assert sorted(os.listdir(directory)) == sorted(verify.FILES)
    passing = verify.report({"node01": dict(nodes["node01"], expect={"rdma_netns_mode": "exclusive"})})
    assert verify.failure(passing) is None
    changed = verify.stale(directory, verify.files(passing))
    assert [item[0] for item in changed] == list(verify.FILES) and changed[0][2] == contents[0][1]


# What Ansible registers: a failed action's result, an unreachable host's, a loop with a failed item (issue 33, class 7).
LOCK_FAILED = {"failed": True, "changed": False,
               "msg": "The node's run lock is held by another run (owner ops@ctl, run ctl:4242:99, since 08:00:01).\n"
                      "That run is still in progress"}
IMAGE_FAILED = {"failed": True, "changed": False, "ran": [],
                "msg": "firmware_images[1].psid: MT_0000000222 is not the PSID of the image fw-cx6.bin (MT_0000000225). "
                       "Nothing was changed."}
UNREACHABLE = {"unreachable": True, "changed": False,
               "msg": "Failed to connect to the host via ssh: ssh: connect to host 10.0.0.3 port 22: No route to host"}


def test_step_names():
    assert verify.step_name("nodes_run_lock") == "the run lock (nodes.yml)"
    assert verify.step_name("__firmware_step") == "the firmware role (__firmware_step)"
    assert verify.step_name("__link_type_step") == "the link_type role (__link_type_step)"  # not "link"
    assert verify.step_name("__verify_step") == "verify's read of the node"
    assert verify.step_name("my_check") == "the task registered as my_check"


def test_stopped_tells_failed_from_unreachable():
    failed = verify.stopped({"nodes_run_lock": LOCK_FAILED, "nodes_hca": {"changed": False, "hcas": []}})
    assert failed["state"] == "failed"
    assert failed["steps"] == [{"step": "the run lock (nodes.yml)", "register": "nodes_run_lock",
                                "msg": "The node's run lock is held by another run (owner ops@ctl, run ctl:4242:99, since "
                                       "08:00:01). That run is still in progress"}]
    assert verify.stopped_text(failed).startswith("failed before verify: the run lock (nodes.yml): The node's run lock is held")
    image = verify.stopped({"__firmware_step": IMAGE_FAILED})
    assert verify.stopped_text(image) == ("failed before verify: the firmware role (__firmware_step): firmware_images[1].psid: "
                                          "MT_0000000222 is not the PSID of the image fw-cx6.bin (MT_0000000225). Nothing was "
                                          "changed.")
    # the host was lost where its result says unreachable; an earlier failure (ignored) does not hide it
    lost = verify.stopped({"__firmware_step": IMAGE_FAILED, "site_node": UNREACHABLE})
    assert lost["state"] == "unreachable"
    assert verify.stopped_text(lost) == ("unreachable: Failed to connect to the host via ssh: ssh: connect to host 10.0.0.3 "
                                         "port 22: No route to host in the read of the node and its boot-loop guard (report.yml)")
    unknown = verify.stopped({"nodes_hca": {"changed": False}, "x": "text", "y": {"failed": "yes"}})
    assert unknown == {"state": "unknown", "steps": []}
    assert "registers no result" in verify.stopped_text(unknown)
    assert verify.stopped(None) == {"state": "unknown", "steps": []}


def test_stopped_message_of_a_loop_and_a_long_one():
    loop = {"failed": True, "msg": "", "results": [{"failed": False}, {"failed": True, "msg": ["burn", "mlx5_1", "failed"]}]}
    assert verify.stopped({"__firmware_burn": loop})["steps"][0]["msg"] == "burn mlx5_1 failed"
    long_one = verify.stopped({"__sriov_step": {"failed": True, "msg": "x" * 1000}})["steps"][0]["msg"]
    assert len(long_one) == verify.MESSAGE_LIMIT and long_one.endswith("...")
    assert verify.stopped({"t": {"failed": True}})["steps"][0]["msg"] == "no message"


def test_report_rows_say_what_failed():
    ok = {"hca": HCA, "pending": {"entries": {}}, "expect": {"rdma_netns_mode": "exclusive"}, "traffic": {}}
    stops = {"node02": verify.stopped({"nodes_run_lock": LOCK_FAILED}), "node03": verify.stopped({"nodes_hca": UNREACHABLE}),
             "node04": verify.stopped({})}
    report = verify.report({"node01": ok, "node02": {}, "node03": {}, "node04": {}}, stops=stops)
    failures = dict(line.split(": ", 1) for line in report["failures"])
    assert failures["node02"].startswith("no data from the node: failed before verify: the run lock (nodes.yml): The node's "
                                         "run lock is held by another run"), failures
    assert failures["node03"].startswith("no data from the node: unreachable: Failed to connect to the host via ssh"), failures
    assert failures["node04"] == "no data from the node: " + verify.UNKNOWN
    hosts = dict((entry["host"], entry) for entry in report["hosts"])
    assert hosts["node02"]["stopped"]["state"] == "failed" and hosts["node03"]["stopped"]["state"] == "unreachable"
    assert "stopped" not in hosts["node01"] and hosts["node01"]["ok"] is True
    assert all(check["actual"].startswith("unreachable: ") for check in hosts["node03"]["checks"])
    text = verify.files(report)[0][1]
    assert "node02: no data from the node: failed before verify: the run lock (nodes.yml)" in text
    # without what the hosts registered: as before, both causes named
    plain = verify.report({"node01": ok, "node02": {}})
    assert "node02: no data from the node: unreachable, or its discovery failed" in plain["failures"]
    assert "stopped" not in plain["hosts"][1]


def _unmatched_fact(run_id, rules, seen=("node01", "node02"), unseen=()):
    """The fact infiniband_firmware_unmatched as the firmware step publishes it (plugin_utils/firmware.py: unmatched, with the
    run's identity)."""
    from ansible_collections.fabric.infiniband.plugins.plugin_utils import firmware
    cx6 = [{"card": "0000:3b:00", "device": "0000:3b:00.0", "model": "ConnectX-6", "psid": "MT_0000000223"}]
    fleet = dict((host, cx6) for host in seen)
    fleet.update((host, None) for host in unseen)
    return dict(firmware.unmatched(rules, fleet), run_id=run_id)


RULES = [{"psid": "MT_0000000223", "version": "20.40.1000"}, {"model": "ConnectX-7", "version": "28.39.1002", "at_least": True},
         {"psid": "MT_0000000999", "version": "28.39.1002"}]


def test_unmatched_firmware_lines_from_this_runs_fact():
    """Issue 33 class 4: the rules that match no card of the run, a line each for the report, from the fact of this run;
    the host whose fact saw the most hosts tells a rule's hosts; a fact of an earlier run (a fact cache's) says nothing."""
    facts = {
        "node01": _unmatched_fact("ctl:10:1", RULES, unseen=("node03",)),
        "node02": _unmatched_fact("ctl:10:1", RULES, seen=("node02",), unseen=("node01", "node03")),
        "node03": _unmatched_fact("ctl:9:1", [{"psid": "MT_0000000111", "version": "1.2.3"}]),
        "node04": None,
        "node05": {"rules": [{"where": "firmware_versions[0]", "psid": "X", "version": "1.0.0"}]},  # no run stamp
    }
    assert verify.unmatched_firmware(facts, "ctl:10:1") == [
        "firmware_versions[1] (model ConnectX-7, version at least 28.39.1002) matches no card of node01, node02 "
        "(not seen: node03)",
        "firmware_versions[2] (psid MT_0000000999, version 28.39.1002) matches no card of node01, node02 (not seen: node03)",
    ]
    assert verify.unmatched_firmware(facts, "ctl:11:1") == []
    assert verify.unmatched_firmware({"node01": _unmatched_fact("r", RULES[:1])}, "r") == []
    assert verify.unmatched_firmware({}, "r") == [] and verify.unmatched_firmware(None, "r") == []
    # rules of a host of its own (host_vars): each told once, in the order of firmware_versions
    own = {"node01": _unmatched_fact("r", [{"model": "ConnectX-5", "version": "16.35.3006"}]),
           "node02": _unmatched_fact("r", RULES[2:] + [{"model": "ConnectX-5", "version": "16.35.3006"}], seen=("node02",))}
    assert verify.unmatched_firmware(own, "r") == [
        "firmware_versions[0] (model ConnectX-5, version 16.35.3006) matches no card of node01, node02",
        "firmware_versions[0] (psid MT_0000000999, version 28.39.1002) matches no card of node02",
        "firmware_versions[1] (model ConnectX-5, version 16.35.3006) matches no card of node02",
    ]


def test_report_shows_the_unmatched_rules_under_the_tables():
    ok = {"hca": HCA, "pending": {"entries": {}}, "expect": {"rdma_netns_mode": "exclusive"}, "traffic": {}}
    lines = verify.unmatched_firmware({"node01": _unmatched_fact("r", RULES, seen=("node01",), unseen=("node02",))}, "r")
    the_report = verify.report({"node01": ok}, unmatched=lines)
    # a rule that names no card fails no check
    assert the_report["ok"] is True and the_report["unmatched_firmware"] == lines
    text, as_json, page = [content for _name, content in verify.files(the_report)]
    tail = text.splitlines()[-3:]
    assert tail == ["Firmware rules that match no card (they burn nothing; check the PSID or model):",
                    "  firmware_versions[1] (model ConnectX-7, version at least 28.39.1002) matches no card of node01 "
                    "(not seen: node02)",
                    "  firmware_versions[2] (psid MT_0000000999, version 28.39.1002) matches no card of node01 (not seen: node02)"]
    assert json.loads(as_json)["unmatched_firmware"] == lines
    assert ("<h2>Firmware rules that match no card</h2><p>They burn nothing; check the PSID or model.</p><ul><li>"
            "firmware_versions[1] (model ConnectX-7, version at least 28.39.1002) matches no card of node01 (not seen: node02)"
            "</li>") in page
    plain = verify.report({"node01": ok}, unmatched=[])
    assert "unmatched_firmware" not in plain and "match no card" not in verify.files(plain)[0][1]
