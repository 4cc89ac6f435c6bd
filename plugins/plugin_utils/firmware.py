# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Firmware versions as code, on the controller: which version each card should run, which image brings it, and
whether a card runs it.

The rules are the firmware role's ``firmware_versions`` (a version per PSID or per model, exact or "at least") and
``firmware_images`` (the image files, each with its PSID, version and sha256). Used by the role's action
(plugins/action/firmware.py: the checks, what to burn, what waits for an activation) and by ``verify_checks`` (the
report: does a card run what is asked). Versions and PSIDs are checked and compared with module_utils/flint.py, the
one place that knows flint's version and PSID formats.

- :func:`plan`: what each card gets (``cards_from`` joins the fact infiniband_hca with firmware_info's reading);
- :func:`settings_problems`, :func:`source_problem`, :func:`image_file_problems`: the checks of the other settings and
  of the image files on the controller, before anything is written;
- :func:`staged`, :func:`burn_args`: the images to put on the node and the firmware_burn of each burn;
- :func:`pending`, :func:`pending_args`: the pending record's entry of the role after the burns;
- :func:`unmatched`, :func:`unmatched_warning`: the rules that name no card of any host of the run (a warning, and the
  fact ``infiniband_firmware_unmatched`` for the report).
"""

from __future__ import annotations

import re

from ansible_collections.fabric.infiniband.plugins.module_utils import flint
from ansible_collections.fabric.infiniband.plugins.module_utils import pci
from ansible_collections.fabric.infiniband.plugins.module_utils.sysfs import model_problem

VERSIONS = "firmware_versions"
IMAGES = "firmware_images"
RULE_KEYS = ("psid", "model", "version", "at_least")
IMAGE_KEYS = ("file", "psid", "version", "sha256")
_SHA256 = re.compile(r"^[0-9a-fA-F]{64}$")

OK, BURN, WAITS, UNMATCHED = "ok", "burn", "waits", "unmatched"


def _psid(value):
    return str(value or "").strip().upper()


def _entries(items, name, keys, what):
    """``(problems, [(index, where, entry)])``: the list checks both lists share (a list of mappings, no unknown key),
    and the mappings to check further."""
    if not isinstance(items, list):
        return ["%s must be a list of entries with %s; got %s" % (name, what, type(items).__name__)], []
    problems, entries = [], []
    for index, entry in enumerate(items):
        where = "%s[%d]" % (name, index)
        if not isinstance(entry, dict):
            problems.append("%s must be a mapping with %s" % (where, what))
            continue
        unknown = sorted(set(entry) - set(keys))
        if unknown:
            problems.append("%s has unknown keys %s; accepted: %s" % (where, ", ".join(unknown), ", ".join(keys)))
        entries.append((index, where, entry))
    return problems, entries


def rule_problems(rules, name=VERSIONS):
    """Why ``rules`` (the list of ``firmware_versions``) is not valid: a list of sentences naming the entry."""
    problems, entries = _entries(rules, name, RULE_KEYS, "psid or model, and version")
    for _index, where, rule in entries:
        if ("psid" in rule) == ("model" in rule):
            problems.append("%s needs exactly one of psid or model" % where)
        else:
            problems.append(flint.psid_problem(rule["psid"], where + ".psid") if "psid" in rule else model_problem(rule["model"], where))
        if "version" not in rule:
            problems.append("%s needs a version, for example \"20.40.1000\"" % where)
        else:
            problems.append(flint.version_problem(rule["version"], where + ".version"))
        if not isinstance(rule.get("at_least", False), bool):
            problems.append("%s.at_least must be true or false, got %r" % (where, rule["at_least"]))
    return [problem for problem in problems if problem]


def image_problems(images, name=IMAGES):
    """Why ``images`` (the list of ``firmware_images``) is not valid: a list of sentences naming the entry."""
    problems, entries = _entries(images, name, IMAGE_KEYS, "file, psid, version and sha256")
    seen = {}
    for index, where, image in entries:
        missing = [key for key in IMAGE_KEYS if key not in image]
        if missing:
            problems.append("%s lacks %s; every image needs %s" % (where, ", ".join(missing), ", ".join(IMAGE_KEYS)))
            continue
        file_name = image["file"]
        if not isinstance(file_name, str) or not file_name.strip() or "/" in file_name or file_name in (".", ".."):
            problems.append("%s.file %r must be a file name (no directory): the images are looked up in firmware_image_dir "
                            "or under firmware_image_url" % (where, file_name))
        problems += [flint.psid_problem(image["psid"], where + ".psid"), flint.version_problem(image["version"], where + ".version")]
        if not isinstance(image["sha256"], str) or not _SHA256.match(image["sha256"].strip()):
            problems.append("%s.sha256 %r is not a SHA-256 checksum: give the 64 hexadecimal digits sha256sum prints" % (
                where, image["sha256"]))
        key = (_psid(image["psid"]), str(image["version"]).strip())
        if key in seen:
            problems.append("%s gives PSID %s version %s again (as %s[%d]): one image per PSID and version" % (
                where, key[0], key[1], name, seen[key]))
        seen.setdefault(key, index)
    return [problem for problem in problems if problem]


def select(rules, psid, model):
    """``(index, rule)`` of the first rule that names the card (by its PSID, else its model), or ``(None, None)``."""
    for index, rule in enumerate(rules or []):
        if "psid" in rule and _psid(rule["psid"]) == _psid(psid):
            return index, rule
        if "model" in rule and str(rule["model"]).strip().lower() == str(model or "").strip().lower():
            return index, rule
    return None, None


def satisfies(version, rule):
    """Whether ``version`` is what ``rule`` asks (the same version, or a newer one with ``at_least``)."""
    if flint.version_tuple(version) is None:
        return False
    order = flint.compare_versions(version, str(rule["version"]).strip())
    return order >= 0 if rule.get("at_least") else order == 0


def image_for(images, psid, version):
    """``(index, image)`` of the image with that PSID and version, or ``(None, None)``."""
    for index, image in enumerate(images or []):
        if _psid(image.get("psid")) == _psid(psid) and str(image.get("version")).strip() == str(version).strip():
            return index, image
    return None, None


def _describe_images(images):
    return ", ".join("%s (%s %s)" % (i.get("file"), _psid(i.get("psid")), i.get("version")) for i in images or []) or "none"


def plan(cards, rules, images, host=""):
    """What each card gets.

    ``cards``: one entry per card, ``{card, device, model, psid, running, flash, error}`` (:func:`cards_from`).
    Returns ``{cards: [...], burns: [...], waiting: [...], problems: [...]}``, each card with ``rule`` (the index in
    ``firmware_versions``, or None), ``wanted``, ``at_least``, ``action`` (``ok``: it runs what is asked; ``burn``: its
    flash does not hold it, ``image`` brings it; ``waits``: its flash holds it, an activation runs it; ``unmatched``: no
    rule names it) and ``image`` (the entry of ``firmware_images``, for a burn). ``problems`` name the variables.
    """
    problems = rule_problems(rules) + image_problems(images)
    if problems:
        return {"cards": [], "burns": [], "waiting": [], "problems": problems}
    out = []
    for card in cards or []:
        index, rule = select(rules, card.get("psid"), card.get("model"))
        entry = dict(card, rule=index, wanted=None, at_least=False, action=UNMATCHED, image=None)
        if rule is None:
            out.append(entry)
            continue
        entry.update(wanted=str(rule["version"]).strip(), at_least=bool(rule.get("at_least", False)))
        where = "%s[%d]" % (VERSIONS, index)
        if card.get("error"):
            problems.append("%s%s (%s) could not be read, so %s cannot be checked: %s" % (
                host and host + ": ", card.get("card"), card.get("model"), where, card["error"]))
        elif satisfies(card.get("flash"), rule):
            entry["action"] = OK if satisfies(card.get("running"), rule) and card.get("running") == card.get("flash") else WAITS
        else:
            entry["action"] = BURN
            image_index, image = image_for(images, card.get("psid"), entry["wanted"])
            if image is None:
                problems.append(
                    "%s%s (%s, PSID %s) runs %s and %s asks for %s%s, but %s has no image for PSID %s version %s; it has: %s. "
                    "Add the image's file, PSID, version and sha256 to %s" % (
                        host and host + ": ", card.get("card"), card.get("model"), _psid(card.get("psid")), card.get("flash"),
                        where, "at least " if entry["at_least"] else "", entry["wanted"], IMAGES, _psid(card.get("psid")),
                        entry["wanted"], _describe_images(images), IMAGES))
            else:
                entry["image"] = dict(image, index=image_index)
        out.append(entry)
    return {
        "cards": out,
        "burns": [entry for entry in out if entry["action"] == BURN and entry["image"]],
        "waiting": [entry for entry in out if entry["action"] in (BURN, WAITS)],
        "problems": problems,
    }


# what the tools name as the activation of a burnt image -> the pending record's action (a reboot also gives a firmware
# reset, a power cycle a reboot)
_ACTIONS = {"firmware reset": "fw_reset", "reboot": "reboot", "power cycle": "power_cycle"}
_STRENGTH = ("fw_reset", "reboot", "power_cycle")


def pending(plan_, burns=None):
    """The pending record's entry of the role after the burns: ``{state, action, reason, devices, versions}``.

    ``burns``: the results of firmware_burn over ``plan_["burns"]`` (their ``activation``); a card that waits from an
    earlier run (burnt, not activated) counts as a firmware reset's, the weakest activation the tools name.
    """
    waiting = plan_.get("waiting") or []
    actions = ["fw_reset"] + [_ACTIONS.get(str(result.get("activation")), "reboot") for result in burns or []
                              if isinstance(result, dict) and result.get("pending")]
    action = max(actions, key=_STRENGTH.index)
    return {
        "state": "present" if waiting else "absent",
        "action": action,
        "reason": "; ".join("%s (%s) has firmware %s on its flash and runs %s" % (
            card["card"], card.get("model"), card["wanted"] if card["action"] == BURN else card.get("flash"), card.get("running"))
            for card in waiting),
        "devices": [card["device"] for card in waiting],
        "versions": dict((card["device"], card["wanted"] if card["action"] == BURN else card.get("flash")) for card in waiting),
    }


def cards_from(hca, devices=None):
    """The role's view of each card: the cards of hca_info's ``hcas`` (model, functions) joined with firmware_info's
    ``devices`` (versions and PSID on the flash), by the card's PCI address. Without ``devices`` (the run's preflight,
    before the firmware tools may be installed), sysfs's running version and PSID stand for the flash's."""
    firsts = {}
    for entry in sorted((hca or {}).get("hcas") or [], key=lambda e: str(e.get("pci_address"))):
        if entry.get("is_vf") or not entry.get("card_address") or not entry.get("model"):
            continue
        firsts.setdefault(entry["card_address"].lower(), entry)
    if devices is None:
        return [{
            "card": card, "device": str(entry.get("pci_address")).lower(), "model": entry["model"], "psid": entry.get("psid"),
            "running": entry.get("firmware_version"), "flash": entry.get("firmware_version"), "error": None,
        } for card, entry in sorted(firsts.items())]
    cards = []
    for device in devices:
        address = str(device.get("pci_address") or device.get("device") or "").lower()
        card = pci.card(address) or address
        cards.append({
            "card": card, "device": address, "model": firsts.get(card, {}).get("model"),
            # sysfs's PSID (board_id) where the query failed, so that the card's rule still names it
            "psid": device.get("psid") or firsts.get(card, {}).get("psid"), "running": device.get("running_version"), "flash": device.get("flash_version"),
            "error": device.get("error"),
        })
    return cards


def check(hca, rules):
    """The report's firmware check of one host: per RDMA device of a physical function, ``{device, version, psid,
    wanted, at_least, rule, ok}`` (``wanted`` None where no rule names the card), from sysfs (hca_info: the running
    version and the PSID)."""
    rows = []
    if rule_problems(rules):
        return rows
    for entry in (hca or {}).get("hcas") or []:
        if entry.get("is_vf") or not entry.get("rdma_device"):
            continue
        index, rule = select(rules, entry.get("psid"), entry.get("model"))
        rows.append({
            "device": entry["rdma_device"], "pci_address": entry.get("pci_address"), "model": entry.get("model"),
            "version": entry.get("firmware_version"), "psid": entry.get("psid"),
            "rule": index, "wanted": str(rule["version"]).strip() if rule else None,
            "at_least": bool(rule.get("at_least", False)) if rule else False,
            "ok": True if rule is None else satisfies(entry.get("firmware_version"), rule),
        })
    return rows


def _describe_rule(rule):
    return "%s %s, %s%s" % ("PSID" if "psid" in rule else "model", _psid(rule["psid"]) if "psid" in rule else rule.get("model"),
                            "at least " if rule.get("at_least") else "", str(rule.get("version")).strip())


def unmatched(rules, fleet):
    """The rules of ``firmware_versions`` that name no card of any host of the run (a PSID or model misspelt, a card that is
    gone): ``{"rules": [{rule, where, psid or model, version, at_least}], "seen": [hosts], "unseen": [hosts]}``.

    ``fleet``: host name to its cards (:func:`cards_from`), or None for a host with no reading of its adapters; a rule is
    unmatched when no card of the hosts with a reading is named by it. Rules that :func:`rule_problems` refuses are not
    judged (the step refuses them)."""
    seen = sorted(host for host, cards in (fleet or {}).items() if cards is not None)
    unseen = sorted(host for host, cards in (fleet or {}).items() if cards is None)
    if rule_problems(rules):
        return {"rules": [], "seen": seen, "unseen": unseen}
    cards = [card for host in seen for card in fleet[host] or []]
    out = []
    for index, rule in enumerate(rules or []):
        if any(select([rule], card.get("psid"), card.get("model"))[1] for card in cards):
            continue
        entry = {"rule": index, "where": "%s[%d]" % (VERSIONS, index), "version": str(rule["version"]).strip(),
                 "at_least": bool(rule.get("at_least", False))}
        entry.update({"psid": _psid(rule["psid"])} if "psid" in rule else {"model": rule["model"]})
        out.append(entry)
    return {"rules": out, "seen": seen, "unseen": unseen}


def unmatched_warning(found, fleet):
    """The warning for :func:`unmatched`'s answer (None when every rule names a card): each rule, the hosts looked at, the
    cards they have; it says which hosts had no reading."""
    if not found["rules"]:
        return None
    kinds = sorted(set("%s %s" % (_psid(card.get("psid")), card.get("model")) for host in found["seen"] for card in fleet[host] or []))
    return ("firmware rule%s %s match%s no card of this run's hosts (%s%s): check the PSID or model (the cards: %s). A rule that "
            "matches no card burns nothing; nothing was changed for it." % (
                "" if len(found["rules"]) == 1 else "s",
                "; ".join("%s (%s)" % (entry["where"], _describe_rule(entry)) for entry in found["rules"]),
                "es" if len(found["rules"]) == 1 else "",
                ", ".join(found["seen"]) or "none read",
                "; not read: %s" % ", ".join(found["unseen"]) if found["unseen"] else "",
                ", ".join(kinds) or "none"))


# --- the role's other settings and its image files (before anything is written) ----------------------------------------

NOTHING_WRITTEN = "Nothing was written."
CACHE_DIR = "/var/lib/fabric-infiniband/firmware"
STUCK_MSG = ("The flash holds the new firmware, but the card did not load it. Another reboot will not load it either: read the "
             "card with flint (or mstflint) -d <device> q, then power the node off and on by hand, or reset the card with "
             "mlxfwreset; the next run checks the running version again.")
_URL = re.compile(r"^https?://[^/]")


QUERY_TOOLS = ("mstflint", "flint")


def query_tool_problem(value):
    """Why ``firmware_image_query_tool`` cannot be used, or None: V(auto), V(none) or an absolute path."""
    text = str(value if value is not None else "auto").strip()
    if text in ("auto", "none") or text.startswith("/"):
        return None
    return ("firmware_image_query_tool: %r is not auto, none or an absolute path to mstflint or flint on the controller"
            % (value,))


def settings_problems(image_url="", cache_dir=CACHE_DIR, query_tool="auto"):
    """Why ``firmware_image_url``, ``firmware_cache_dir`` or ``firmware_image_query_tool`` cannot be used: sentences naming
    the variable."""
    problems = [query_tool_problem(query_tool)] if query_tool_problem(query_tool) else []
    if image_url and not _URL.match(str(image_url)):
        problems.append("firmware_image_url %s is not an http:// or https:// URL: give the base URL of an HTTP(S) mirror, for "
                        "example https://mirror.example.internal/mellanox/firmware" % image_url)
    if not str(cache_dir or "").startswith("/"):
        problems.append("firmware_cache_dir %s must be an absolute path on the node, for example %s" % (cache_dir, CACHE_DIR))
    return problems


def source_problem(burns, image_dir="", image_url=""):
    """The problem when cards need a burn and neither ``firmware_image_dir`` nor ``firmware_image_url`` is set, else None."""
    if not burns or image_dir or image_url:
        return None
    return ("firmware_image_dir or firmware_image_url must say where the images of firmware_images are: a directory on the "
            "controller, or the base URL of an HTTP(S) mirror (%s need a burn)" % ", ".join(str(b.get("card")) for b in burns))


def staged(burns):
    """The images the burns need, once each (by file), in the order of the burns: what goes into firmware_cache_dir."""
    seen, images = set(), []
    for burn in burns or []:
        image = burn.get("image") or {}
        if image.get("file") and image["file"] not in seen:
            seen.add(image["file"])
            images.append(image)
    return images


def image_file_problems(images, image_dir, digests):
    """Why the files of ``images`` (entries of ``firmware_images`` with their ``index``) in ``firmware_image_dir`` on the
    controller cannot be burnt: ``digests`` maps each file name to its sha256 there, None where there is no such file."""
    problems = []
    for image in images or []:
        where = "%s[%s] (%s)" % (IMAGES, image.get("index"), image.get("file"))
        digest = digests.get(image.get("file"))
        if digest is None:
            problems.append("%s: no such file in firmware_image_dir %s" % (where, image_dir))
        elif digest.lower() != str(image.get("sha256", "")).strip().lower():
            problems.append("%s: its sha256 is %s, the entry says %s" % (where, digest.lower(), image.get("sha256")))
    return problems


def image_identity_problems(images, found):
    """Why the files of ``images`` (entries of ``firmware_images`` with their ``index``) are not what their entries say:
    ``found`` maps each file name to what a query of the file on the controller read (module_utils/flint.py's
    ``parse_query``), or to ``{"error": why}``; a file not in ``found`` was not read. The comparison is the burn module's
    (``flint.image_mismatches``)."""
    problems = []
    for image in images or []:
        read = found.get(image.get("file"))
        if not read:
            continue
        where = "%s[%s] (%s)" % (IMAGES, image.get("index"), image.get("file"))
        if read.get("error"):
            problems.append("%s: the controller could not read the image: %s" % (where, read["error"]))
            continue
        for what, wanted, held in flint.image_mismatches(read, version=image.get("version"), psid=image.get("psid")):
            problems.append("%s.%s: the entry says %s, the file %s %s" % (
                where, what, wanted, "is built for PSID" if what == "psid" else "holds", held))
    return problems


def burn_args(burn, cache_dir=CACHE_DIR, tool="auto", allow_psid_change=False):
    """The options of firmware_burn for one entry of a plan's ``burns``, its image in ``firmware_cache_dir``."""
    image = burn["image"]
    return {
        "device": burn["device"], "image": "%s/%s" % (str(cache_dir).rstrip("/"), image["file"]),
        "image_version": str(image["version"]).strip(), "image_psid": str(image["psid"]).strip(), "tool": tool,
        "allow_psid_change": allow_psid_change,
    }


def burn_failure(message, burn):
    """A firmware_burn failure in the user's words: its options image_psid and image_version are the entry's psid and
    version in firmware_images (issue 33, class 3: the user set ``firmware_images[1].psid``, not ``image_psid``)."""
    index = (burn.get("image") or {}).get("index")
    if index is None:
        return message
    for option, key in (("image_psid", "psid"), ("image_version", "version")):
        message = re.sub(r"\b%s\b" % option, "%s[%s].%s" % (IMAGES, index, key), message)
    return message


def pending_args(plan_, burns=None, run_id=""):
    """The options of pending_action for the role's entry (``firmware``) after the burns (see :func:`pending`)."""
    entry = pending(plan_, burns)
    return {
        "name": "firmware", "state": entry["state"], "action": entry["action"], "reason": entry["reason"],
        "details": {"devices": entry["devices"], "versions": entry["versions"]}, "stuck_msg": STUCK_MSG, "run_id": run_id,
    }
