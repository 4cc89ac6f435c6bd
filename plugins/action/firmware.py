# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The firmware role's step: checks, one firmware query per card a rule names, the plan, the burns and the pending
record (docs: plugins/modules/firmware.py).

Three uses, one code path:

- ``preflight: true``: the checks alone, from sysfs (hca_info: running version and PSID; no firmware tool) and the
  images on the controller (their sha256, hashed here; their PSID and version, read with mstflint or flint where the
  controller has one, ``firmware_image_query_tool``);
- no option (the role's first task): the same checks, then ``firmware_info`` on the cards the rules name, the plan
  from what their flash holds, the checks of the images that plan burns; when nothing is to burn, the pending record;
  else it returns the plan (``burns``, ``images``) for the role's staging tasks. It also warns of the rules that name no
  card of any host of the run, returns them (``unmatched_rules``) and publishes them (fact ``infiniband_firmware_unmatched``);
- ``plan: <the first task's plan>`` (the role's last task, after the images were put on the node): the burns, then
  the pending record.

Where a firmware write is decided: ``plugin_utils/firmware.py``; this file only runs the modules in that order.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from collections.abc import Mapping

from ansible.errors import AnsibleError

from ansible_collections.fabric.infiniband.plugins.module_utils import flint
from ansible_collections.fabric.infiniband.plugins.plugin_utils import firmware
from ansible_collections.fabric.infiniband.plugins.plugin_utils import node_state
from ansible_collections.fabric.infiniband.plugins.plugin_utils.role_step import RoleAction, StepFailed, mapping


def _sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


class ActionModule(RoleAction):
    ROLE = "firmware"
    OPTIONS = ("preflight", "plan")

    def __init__(self, *args, **kwargs):
        super(ActionModule, self).__init__(*args, **kwargs)
        self._read_images = {}

    def _digests(self, images, image_dir):
        """The sha256 of each image's file in firmware_image_dir on the controller (None where there is none), found
        where the role's copy task finds it."""
        digests = {}
        for image in images:
            try:
                path = self._find_needle("files", os.path.join(image_dir, image["file"]))
            except AnsibleError:
                path = None
            digests[image["file"]] = _sha256(path) if path and os.path.isfile(path) else None
        return digests

    def _check(self, plan, s, checked):
        """Refuse the plan's problems, an image source that is missing or not one, and image files on the controller that
        are missing or whose sha256 differs (each file hashed once per step)."""
        image_dir, image_url = s.get("firmware_image_dir") or "", s.get("firmware_image_url") or ""
        self.refuse(plan["problems"] + [firmware.source_problem(plan["burns"], image_dir, image_url)]
                    + firmware.settings_problems(image_url, s.get("firmware_cache_dir", firmware.CACHE_DIR),
                                                 s.get("firmware_image_query_tool", "auto")),
                    suffix=firmware.NOTHING_WRITTEN)
        if image_url:
            # the mirror's files are checked where the nodes download them (get_url, against their sha256)
            return
        images = [image for image in firmware.staged(plan["burns"]) if image["file"] not in checked]
        checked.update(self._digests(images, image_dir))
        self.refuse(firmware.image_file_problems(images, image_dir, checked), suffix=firmware.NOTHING_WRITTEN)
        self.refuse(firmware.image_identity_problems(images, self._identities(images, image_dir)),
                    suffix=firmware.NOTHING_WRITTEN)

    def _query_tool(self):
        """mstflint or flint on the controller (firmware_image_query_tool, its value checked with the other settings), or
        None."""
        choice = str(self.settings.get("firmware_image_query_tool") or "auto").strip()
        if choice == "none":
            return None
        if choice != "auto":
            if not os.access(choice, os.X_OK):
                raise StepFailed("firmware_image_query_tool: %s is no executable file on the controller" % choice)
            return choice
        for name in firmware.QUERY_TOOLS:
            found = shutil.which(name)
            if found:
                return found
        return None

    def _identities(self, images, image_dir):
        """What a query of each image file on the controller reads (its PSID and version), before anything is copied to a
        node; {} without a query tool on the controller (the node's burn module then refuses a mismatch, after the copy)."""
        if not images:
            return {}
        tool = self._query_tool()
        if not tool:
            if not self.preflight:
                self.warn("firmware: %s checked on the node after the copy: no mstflint or flint on the controller to read the "
                          "image's PSID and version before any change (firmware_image_query_tool)"
                          % ", ".join("%s[%s] (%s)" % (firmware.IMAGES, i.get("index"), i.get("file")) for i in images))
            return {}
        found = {}
        for image in images:
            if image["file"] in self._read_images:
                found[image["file"]] = self._read_images[image["file"]]
                continue
            path = self._find_needle("files", os.path.join(image_dir, image["file"]))
            argv = [tool] + flint.image_query_args(path)
            try:
                proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120,
                                      check=False)
            except (OSError, subprocess.TimeoutExpired) as exc:
                read = {"error": "%s: %s" % (" ".join(argv), exc)}
            else:
                parsed = flint.parse_query(proc.stdout, proc.stderr)
                error = flint.image_error(proc.returncode, parsed)
                read = {"error": error} if error else parsed
            self._ran.append(dict(module=os.path.basename(tool), label="read %s on the controller" % image["file"],
                                  changed=False, failed=bool(read.get("error"))))
            found[image["file"]] = self._read_images[image["file"]] = read
        return found

    def _record(self, plan, results):
        """Record what waits for an activation, or remove the entry when nothing does (where the record may hold one)."""
        args = firmware.pending_args(plan, results, self.run_id)
        if args["state"] == "present" or node_state.may_hold(
                self.fact("infiniband_pending"), "firmware", bool(self.fact("infiniband_pending_stale", False)), self.run_id):
            self.module("pending_action", args, what="record what waits for an activation")

    def _burn(self, plan):
        """Burn the plan's images (already in firmware_cache_dir), then record what waits. A burn that fails leaves the card
        with the image it had; the others are still burnt, and the step fails without a record (the next run plans again)."""
        s = self.settings
        burns, waiting = plan.get("burns"), plan.get("waiting")
        if not isinstance(burns, list) or not isinstance(waiting, list):
            raise StepFailed("plan must be the plan this step returned (register the role's first task and pass its plan)")
        results, failures = [], []
        for burn in burns:
            args = firmware.burn_args(burn, s.get("firmware_cache_dir", firmware.CACHE_DIR), s.get("firmware_tool", "auto"),
                                      s.get("firmware_allow_psid_change", False))
            try:
                results.append(self.module("firmware_burn", args, what="burn %s on %s (%s)" % (
                    burn["image"]["file"], burn["device"], burn.get("model")),
                    label="%s %s %s -> %s" % (burn["device"], burn.get("model"), burn.get("flash"), burn.get("wanted"))))
            except StepFailed as exc:
                failures.append(firmware.burn_failure(str(exc), burn))
        self.returns(burnt=[dict(device=r.get("device"), version=r.get("version"), pending=r.get("pending"),
                                 activation=r.get("activation")) for r in results])
        if failures:
            raise StepFailed(" ".join(failures))
        self._record(plan, results)

    def _unmatched(self, rules, hca):
        """Warn of the rules that name no card of any host of the run (when every host has a reading: this one's, the others'
        from this run's preflight or steps, or a fact cache), and publish them as the fact infiniband_firmware_unmatched
        (``rules``, ``seen``, ``unseen`` hosts, ``run_id``), for the report."""
        fleet = {}
        for host in list(self.var("ansible_play_hosts_all") or []) or [self.host]:
            reading = hca if host == self.host else (self.hostvar(host, "ansible_facts", {}) or {}).get("infiniband_hca")
            fleet[host] = firmware.cards_from(reading) if isinstance(reading, Mapping) and "hcas" in reading else None
        found = firmware.unmatched(rules, fleet)
        self.returns(unmatched_rules=found["rules"])
        self.publish(infiniband_firmware_unmatched=dict(found, run_id=self.run_id))
        warning = firmware.unmatched_warning(found, fleet) if not found["unseen"] else None
        if warning:
            self.warn(warning)

    def step(self):
        if self.arg("plan") is not None:
            return self._burn(mapping(self.arg("plan"), "plan"))
        s = self.settings
        rules, images = s.get("firmware_versions") or [], s.get("firmware_images") or []
        # sysfs first (running version and PSID): the rules and images are checked before a firmware tool is needed
        # with the node's record, proved writable (also in the run's preflight, whose reading the step then takes)
        hca = self.hca(pending=True, writable=True) if rules else {"hcas": []}
        checked = {}
        plan = firmware.plan(firmware.cards_from(hca), rules, images, host=self.host)
        self._check(plan, s, checked)
        if not self.preflight:
            # one query per card a rule names: the version on its flash (what it runs after the next activation) and the
            # one it runs
            wanted = [card["device"] for card in plan["cards"] if card["wanted"]]
            devices = self.module("firmware_info", dict(devices=wanted, tool=s.get("firmware_tool", "auto")),
                                  what="read the firmware of the cards the rules name", check_mode=False)["devices"] if wanted else []
            plan = firmware.plan(firmware.cards_from(hca, devices), rules, images, host=self.host)
            self._check(plan, s, checked)
        if not self.preflight and rules:
            self._unmatched(rules, hca)
        self.returns(plan=plan, burns=plan["burns"], images=firmware.staged(plan["burns"]))
        if not self.preflight and not plan["burns"]:
            self._record(plan, [])
