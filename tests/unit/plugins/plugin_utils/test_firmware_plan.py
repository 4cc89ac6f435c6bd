# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Firmware versions as code: which cards a rule names, what each gets (burn, waits, ok), the problems that name the
variable, the checks of the other settings and of the image files, and what the pending record gets
(plugin_utils/firmware.py, for plugins/action/firmware.py)."""

from __future__ import annotations

import pytest

from ansible_collections.fabric.infiniband.plugins.plugin_utils import firmware

SHA = "fcd04a0a88d7c24c7333c3228858ef00ce964d05fd40d29e3d491d804e587e29"


def _fn(pci, model, psid, version, rdma, vf=False):
    return {"pci_address": pci, "card_address": pci.rsplit(".", 1)[0], "model": model, "psid": psid,
            "firmware_version": version, "rdma_device": rdma, "is_vf": vf}


# node01: a dual-port ConnectX-6 (one card, two functions, a VF); a ConnectX-7 of another PSID.
HCA = {"hcas": [
    _fn("0000:3b:00.1", "ConnectX-6", "MT_0000000223", "20.39.1002", "mlx5_1"),
    _fn("0000:3b:00.0", "ConnectX-6", "MT_0000000223", "20.39.1002", "mlx5_0"),
    _fn("0000:3b:00.2", "ConnectX-6 Virtual Function", "MT_0000000223", "20.39.1002", "mlx5_2", vf=True),
    _fn("0000:c1:00.0", "ConnectX-7", "MT_0000000834", "28.40.1000", "mlx5_3"),
]}
RULES = [{"psid": "MT_0000000223", "version": "20.40.1000"}, {"model": "ConnectX-7", "version": "28.39.1002", "at_least": True}]
IMAGES = [{"file": "cx6.bin", "psid": "MT_0000000223", "version": "20.40.1000", "sha256": SHA}]


def firmware_plan(hca, versions, images, devices=None, host=""):
    return firmware.plan(firmware.cards_from(hca, devices), versions, images, host=host)


def firmware_pending(plan, burns=None):
    return firmware.pending(plan, burns)


def _dev(pci, running, flash, psid, error=None):
    return {"pci_address": pci, "running_version": running, "flash_version": flash, "psid": psid, "error": error}


def test_the_preflight_plans_from_sysfs_one_entry_per_card():
    plan = firmware_plan(HCA, RULES, IMAGES, host="node01")
    assert plan["problems"] == []
    assert [(c["card"], c["device"], c["action"], c["wanted"]) for c in plan["cards"]] == [
        ("0000:3b:00", "0000:3b:00.0", "burn", "20.40.1000"), ("0000:c1:00", "0000:c1:00.0", "ok", "28.39.1002")]
    assert [b["image"]["file"] for b in plan["burns"]] == ["cx6.bin"]
    assert plan["burns"][0]["image"]["index"] == 0


def test_the_flash_decides_a_burnt_image_waits_and_is_not_burnt_again():
    devices = [_dev("0000:3b:00.0", "20.39.1002", "20.40.1000", "MT_0000000223"), _dev("0000:c1:00.0", "28.40.1000", "28.40.1000", "MT_0000000834")]
    plan = firmware_plan(HCA, RULES, IMAGES, devices=devices)
    assert [c["action"] for c in plan["cards"]] == ["waits", "ok"]
    assert plan["burns"] == [] and [c["card"] for c in plan["waiting"]] == ["0000:3b:00"]
    entry = firmware_pending(plan, [])
    assert entry["state"] == "present" and entry["action"] == "fw_reset"
    assert entry["devices"] == ["0000:3b:00.0"] and entry["versions"] == {"0000:3b:00.0": "20.40.1000"}
    assert "0000:3b:00 (ConnectX-6) has firmware 20.40.1000 on its flash and runs 20.39.1002" in entry["reason"]


@pytest.mark.parametrize("running, at_least, action", [
    ("28.39.1002", False, "ok"), ("28.40.1000", False, "burn"), ("28.40.1000", True, "ok"), ("28.38.9999", True, "burn"),
])
def test_exact_and_at_least(running, at_least, action):
    rules = [{"model": "connectx-7", "version": "28.39.1002", "at_least": at_least}]
    images = [{"file": "cx7.bin", "psid": "MT_0000000834", "version": "28.39.1002", "sha256": SHA}]
    plan = firmware_plan(HCA, rules, images, devices=[_dev("0000:c1:00.0", running, running, "MT_0000000834")])
    assert [c["action"] for c in plan["cards"]] == [action] and plan["problems"] == []


def test_the_first_rule_that_names_a_card_wins_and_a_psid_is_matched_without_case():
    rules = [{"psid": "mt_0000000223", "version": "20.39.1002"}, {"model": "ConnectX-6", "version": "20.40.1000"}]
    plan = firmware_plan(HCA, rules, IMAGES)
    assert [(c["card"], c["rule"], c["action"]) for c in plan["cards"]] == [("0000:3b:00", 0, "ok"), ("0000:c1:00", None, "unmatched")]


def test_a_card_without_an_image_for_its_psid_and_version_names_firmware_images():
    images = [dict(IMAGES[0], psid="DEL0000000016")]
    plan = firmware_plan(HCA, RULES, images, host="node01")
    assert plan["burns"] == []
    [problem] = plan["problems"]
    assert problem.startswith("node01: 0000:3b:00 (ConnectX-6, PSID MT_0000000223) runs 20.39.1002 and firmware_versions[0] asks for 20.40.1000")
    assert "firmware_images has no image for PSID MT_0000000223 version 20.40.1000; it has: cx6.bin (DEL0000000016 20.40.1000)" in problem


def test_a_card_that_could_not_be_read_is_a_problem():
    devices = [_dev("0000:3b:00.0", None, None, None, error="mstflint could not open 0000:3b:00.0")]
    plan = firmware_plan(HCA, RULES, IMAGES, devices=devices, host="node01")
    assert plan["problems"] == ["node01: 0000:3b:00 (ConnectX-6) could not be read, so firmware_versions[0] cannot be checked: "
                                "mstflint could not open 0000:3b:00.0"]


@pytest.mark.parametrize("rules, says", [
    ([{"psid": "MT_0000000223", "version": 20.4}], ["firmware_versions[0].version", "is a number", "\"16.35.3006\""]),
    ([{"psid": "MT_0000000223", "version": "20.40"}], ["firmware_versions[0].version", "not a firmware version"]),
    ([{"model": "ConnectX-9", "version": "20.40.1000"}], ["firmware_versions[0].model", "no model this collection knows", "ConnectX-7"]),
    ([{"model": "ConnectX6", "version": "20.40.1000"}], ["did you mean ConnectX-6?"]),
    ([{"psid": "MT_0000000223", "model": "ConnectX-6", "version": "20.40.1000"}], ["exactly one of psid or model"]),
    ([{"psid": "MT 223", "version": "20.40.1000"}], ["firmware_versions[0].psid", "not a PSID"]),
    ([{"psid": "MT_0000000223"}], ["firmware_versions[0] needs a version"]),
    ([{"psid": "MT_0000000223", "version": "20.40.1000", "atleast": True}], ["unknown keys atleast", "at_least"]),
    ([{"psid": "MT_0000000223", "version": "20.40.1000", "at_least": "yes"}], ["firmware_versions[0].at_least"]),
    ({"psid": "MT_0000000223"}, ["firmware_versions must be a list"]),
])
def test_bad_rules_are_named(rules, says):
    problems = firmware_plan(HCA, rules, IMAGES)["problems"]
    assert problems and all(any(text in p for p in problems) for text in says), problems


@pytest.mark.parametrize("images, says", [
    ([dict(IMAGES[0], sha256="abc")], ["firmware_images[0].sha256", "64 hexadecimal digits"]),
    ([{"file": "cx6.bin", "psid": "MT_0000000223", "version": "20.40.1000"}], ["firmware_images[0] lacks sha256"]),
    ([dict(IMAGES[0], file="../cx6.bin")], ["firmware_images[0].file", "no directory"]),
    ([dict(IMAGES[0], version="20.40")], ["firmware_images[0].version"]),
    ([IMAGES[0], dict(IMAGES[0], file="other.bin")], ["firmware_images[1] gives PSID MT_0000000223 version 20.40.1000 again"]),
])
def test_bad_images_are_named(images, says):
    problems = firmware_plan(HCA, RULES, images)["problems"]
    assert problems and all(any(text in p for p in problems) for text in says), problems


def test_the_strongest_activation_of_the_burns_is_recorded_and_nothing_waiting_removes_the_entry():
    plan = firmware_plan(HCA, RULES, IMAGES)
    burns = [{"pending": True, "activation": "firmware reset"}, {"pending": True, "activation": "power cycle"}]
    assert firmware_pending(plan, burns)["action"] == "power_cycle"
    assert firmware_pending(plan, [{"pending": True, "activation": "reboot"}])["action"] == "reboot"
    done = firmware_plan(HCA, RULES, IMAGES, devices=[_dev("0000:3b:00.0", "20.40.1000", "20.40.1000", "MT_0000000223")])
    assert firmware_pending(done, [])["state"] == "absent"


def test_the_report_check_reads_the_running_version_per_rdma_device():
    rows = firmware.check(HCA, RULES)
    assert [(r["device"], r["version"], r["wanted"], r["ok"]) for r in rows] == [
        ("mlx5_1", "20.39.1002", "20.40.1000", False), ("mlx5_0", "20.39.1002", "20.40.1000", False),
        ("mlx5_3", "28.40.1000", "28.39.1002", True)]


@pytest.mark.parametrize("url, cache_dir, says", [
    ("ftp://mirror.example/firmware", "/var/cache/fw", ["firmware_image_url ftp://mirror.example/firmware", "http:// or https://"]),
    ("https:///firmware", "/var/cache/fw", ["firmware_image_url"]),
    ("", "firmware-cache", ["firmware_cache_dir firmware-cache", "absolute path"]),
])
def test_bad_source_and_cache_are_named(url, cache_dir, says):
    problems = firmware.settings_problems(url, cache_dir)
    assert len(problems) == 1 and all(text in problems[0] for text in says), problems


def test_good_source_and_cache():
    assert firmware.settings_problems("https://mirror.example/fw/", "/var/cache/fw") == []
    assert firmware.settings_problems("", firmware.CACHE_DIR) == []


def test_a_burn_needs_a_source_of_images():
    plan = firmware_plan(HCA, RULES, IMAGES)
    problem = firmware.source_problem(plan["burns"])
    assert "firmware_image_dir or firmware_image_url" in problem and "(0000:3b:00 need a burn)" in problem
    assert firmware.source_problem(plan["burns"], image_dir="/srv/fw") is None
    assert firmware.source_problem([], "", "") is None


def test_image_files_on_the_controller_missing_or_with_another_sha256():
    images = [dict(IMAGES[0], index=0), {"file": "cx7.bin", "psid": "MT_0000000834", "version": "28.39.1002", "sha256": SHA.upper(),
                                         "index": 1}]
    assert firmware.image_file_problems(images, "/srv/fw", {"cx6.bin": SHA, "cx7.bin": SHA}) == []
    problems = firmware.image_file_problems(images, "/srv/fw", {"cx6.bin": None, "cx7.bin": "0" * 64})
    assert problems == ["firmware_images[0] (cx6.bin): no such file in firmware_image_dir /srv/fw",
                        "firmware_images[1] (cx7.bin): its sha256 is %s, the entry says %s" % ("0" * 64, SHA.upper())]


def test_each_image_is_staged_once_and_burnt_from_the_cache():
    hca = {"hcas": HCA["hcas"] + [_fn("0000:5e:00.0", "ConnectX-6", "MT_0000000223", "20.39.1002", "mlx5_4")]}
    plan = firmware_plan(hca, RULES, IMAGES)
    assert [b["device"] for b in plan["burns"]] == ["0000:3b:00.0", "0000:5e:00.0"]
    assert [i["file"] for i in firmware.staged(plan["burns"])] == ["cx6.bin"]
    args = firmware.burn_args(plan["burns"][0], "/var/cache/fw/", "mstflint", True)
    assert args == {"device": "0000:3b:00.0", "image": "/var/cache/fw/cx6.bin", "image_version": "20.40.1000",
                    "image_psid": "MT_0000000223", "tool": "mstflint", "allow_psid_change": True}


def test_the_pending_record_args_carry_what_to_check_when_a_boot_did_not_load_it():
    plan = firmware_plan(HCA, RULES, IMAGES)
    args = firmware.pending_args(plan, [{"pending": True, "activation": "reboot"}], run_id="ctl:1:2")
    assert (args["name"], args["state"], args["action"], args["run_id"]) == ("firmware", "present", "reboot", "ctl:1:2")
    assert args["details"] == {"devices": ["0000:3b:00.0"], "versions": {"0000:3b:00.0": "20.40.1000"}}
    assert "Another reboot will not load it either" in args["stuck_msg"]


def test_a_burn_failure_names_the_entry_of_firmware_images():
    """Issue 33, class 3: firmware_burn's options image_psid and image_version reached the user, who set
    firmware_images[1].psid and .version."""
    said = ("burn fw.bin on 0000:3b:00.0 (ConnectX-6): image: /var/cache/fabric-infiniband/firmware/fw.bin holds psid "
            "MT_0000000223, but image_psid says MT_0000000999: not burnt; check the file and the entry that names it")
    out = firmware.burn_failure(said, {"image": {"file": "fw.bin", "index": 1}})
    assert "but firmware_images[1].psid says MT_0000000999" in out and "image_psid" not in out
    assert firmware.burn_failure("image_version differs", {"image": {"index": 0}}) == "firmware_images[0].version differs"
    # a plan without the index (built by hand) keeps the module's words
    assert firmware.burn_failure(said, {"image": {"file": "fw.bin"}}) == said
