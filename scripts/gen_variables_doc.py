# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Generate docs/docsite/rst/variables.rst: every variable of the collection on one page.

Two parts:

- the playbook variables (``infiniband_*``), which no role's argument specification holds because
  the playbooks read them and map them onto role variables. They are kept by hand in
  ``PLAYBOOK_VARIABLES`` below; the files that read each one are found by scanning
  ``playbooks/*.yml``. A name the playbooks use that the table lacks stops the generator, so the
  page cannot silently miss one (``NOT_VARIABLES`` lists the names that look like variables but
  are not, such as a group made by ``group_by``);
- every option of every entry point of every ``roles/*/meta/argument_specs.yml``, in the order of
  the file, with type, default, choices and description (Ansible's doc markup turned into reStructuredText).

Roles are found by globbing, so a role added later appears at the next run.
tests/unit/test_variables_doc.py fails when the committed page differs from what this produces.

Usage:
  python scripts/gen_variables_doc.py          write docs/docsite/rst/variables.rst
  python scripts/gen_variables_doc.py --check  exit 1 when the committed page is out of date
  python scripts/gen_variables_doc.py --stdout print the page instead of writing it
"""

from __future__ import annotations

import argparse
import difflib
import re
import sys
import textwrap
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
OUTPUT = Path("docs") / "docsite" / "rst" / "variables.rst"
REGENERATE = "python scripts/gen_variables_doc.py"
WIDTH = 110

# The playbook variables, as the playbooks read them (their default is the playbook's `default()`).
# name, type, default (None: no default), description (reStructuredText).
PLAYBOOK_VARIABLES = [
    ("infiniband_allow_reboot", "bool", False,
     "Consent to reboot, power-cycle or firmware-reset the nodes that wait for it, in batches. Without it nothing is "
     "rebooted and the run ends with the list of waiting nodes. Decide it per run (``-e`` or the AWX survey), not in "
     "the inventory."),
    ("infiniband_allow_fw_reset", "bool", False,
     "Prefer a firmware reset (level 3) to a reboot when every entry of a node asks for no more. The cards' ports go "
     "down; the node keeps running."),
    ("infiniband_reboot_serial", "int or str", "20%",
     "Batch size: a number of nodes from 1, a percentage of the waiting nodes from ``1%`` to ``100%`` (never less "
     "than one node), or a list of those (batches that grow). ``0`` or more than ``100%`` is refused, before any "
     "node is touched. **Extra vars or play vars only**: ``serial`` is templated before any host is known, so inventory ``group_vars`` and ``host_vars`` "
     "are not seen."),
    ("infiniband_reboot_max_fail_percentage", "int", 0,
     "Failed nodes allowed per batch, in percent, before the play stops and the later batches are not started. "
     "``0``: one failed node stops it. From ``0`` to ``100`` (``5`` or ``5%``). Extra vars or play vars only, as above."),
    ("infiniband_reboot_hosts", "str", "ib_nodes",
     "The hosts (a pattern) whose pending-action record ``reboot.yml`` reads. ``--limit`` narrows it further."),
    ("infiniband_reboot_method", "str", "reboot",
     "``reboot``: ``ansible.builtin.reboot`` on the node. ``command``: ``infiniband_reboot_command`` on the "
     "controller, then a wait for the connection and the end of the boot."),
    ("infiniband_reboot_command", "list of str", [],
     "Argument list run on the controller to reboot a node with ``infiniband_reboot_method: command``; templated per "
     "host (``{{ inventory_hostname }}``)."),
    ("infiniband_power_cycle_command", "list of str", [],
     "Argument list run on the controller to power-cycle a node that has no ``infiniband_bmc_address`` (for example "
     "``ipmitool ... chassis power cycle``). With neither, a node that needs a power cycle fails with what to set."),
    ("infiniband_reboot_wait_delay", "int", 15,
     "Seconds to wait after a reboot or power-cycle command, or the BMC's answer, before reconnecting. ``0`` for a "
     "command that returns once the node is back."),
    ("infiniband_reboot_timeout", "int", 900,
     "Seconds a reboot or power cycle may take until the node answers again and its boot has finished."),
    ("infiniband_bmc_address", "str", "",
     "The node's Redfish BMC (``https://...``), for a power cycle (``PowerCycle``). A host or group variable."),
    ("infiniband_bmc_username", "str", "",
     "BMC account. Never printed (``no_log``); keep it in Ansible Vault or an AWX credential."),
    ("infiniband_bmc_password", "str", "",
     "BMC password. Never printed (``no_log``); keep it in Ansible Vault or an AWX credential."),
    ("infiniband_bmc_resource_id", "str", "",
     "The Redfish system to power-cycle when the BMC manages several; empty for the only one."),
    ("infiniband_bmc_validate_certs", "bool", True,
     "Check the BMC's TLS certificate."),
    ("infiniband_drain", "bool", True,
     "Cordon and drain a node before its reboot and uncordon it after, when the inventory has a group "
     "``k8s_control`` (the drain runs on its first host, with its ``k8s_network_kubeconfig``). Set ``false`` on nodes "
     "that are not Kubernetes nodes of that cluster."),
    ("infiniband_k8s_node_name", "str", "{{ inventory_hostname }}",
     "The node's name in Kubernetes, when it differs from the inventory name."),
    ("infiniband_drain_timeout", "int", 600,
     "Seconds to wait for the node's pods to leave (``0``: no limit)."),
    ("infiniband_reboot_fail_on_tried", "bool", True,
     "Fail a node whose entries were recorded before its current boot (the boot did not apply them: the boot-loop "
     "guard). ``site.yml`` and ``nodes.yml`` set ``false``: their roles after the reboot play check those changes "
     "again, and ``site.yml``'s last play fails the nodes where they are still not applied."),
    ("infiniband_run_owner", "str", None,
     "Who runs, the name under which ``nodes.yml`` (and ``reboot.yml`` run alone) takes each node's run lock "
     "(``fabric.infiniband.run_lock``). Unset: in AWX ``AWX job template <name>``, else the controller's user and host "
     "(``alice@ctl01``). Each run holds its own lock (the lock records the run besides the owner): a later run of the "
     "same owner takes over a lock left by a failed run of this controller, never a running one's; another owner is "
     "refused."),
    ("infiniband_break_lock", "bool", False,
     "Take a node's run lock even though another owner holds it: only when no other run is in progress (a run that "
     "failed, was killed or lost its connection leaves its lock)."),
    ("infiniband_run_lock_max_age", "int", 21600,
     "Seconds after its last renewal when a run lock counts as stale and is taken over with a warning (0: never)."),
    ("infiniband_reboot_run_lock", "bool", True,
     "Whether ``reboot.yml`` takes and releases the run lock of each node it reboots (the nodes that wait for nothing are not "
     "touched). ``nodes.yml`` sets ``false`` when it imports it, "
     "since it holds the lock for the whole node preparation."),
]

# Names in playbooks/*.yml that start with infiniband_ but are not variables.
NOT_VARIABLES = {
    "infiniband_reboot_waiting": "the group that reboot.yml's group_by makes of the waiting nodes",
}

# A node fact a playbook reads (ansible_facts.infiniband_hca) is no variable of the user's.
_PLAYBOOK_NAME = re.compile(r"(?<!ansible_facts\.)\binfiniband_[a-z0-9_]+\b")
# A YAML comment: a name mentioned there is not read.
_COMMENT = re.compile(r"(^|\s)#.*$", re.MULTILINE)

# Ansible's documentation markup (the subset roles use, and a little more): C(code), V(value),
# O(option) and O(option=value), RV(return value), E(environment variable), M(module), P(plugin#type),
# I(italic), B(bold), U(url), L(text,url).
_MARKUP = re.compile(r"\b(RV|[CVOEMPIBUL])\(((?:\\.|[^\\)])*)\)")
# Characters before an inline markup start-string, and after its end-string, that docutils accepts
# (besides whitespace and the edges of the text); anything else needs an escaped space in between.
_BEFORE_OK = set("'\"([{<-/:")
_AFTER_OK = set("-.,:;!?\\/'\")]}>")


# The argument specs are read as check_argument_specs.py reads them (Ansible's tags as plain values).
sys.path.insert(0, str(Path(__file__).resolve().parent))
from check_argument_specs import _Loader  # noqa: E402  pylint: disable=wrong-import-position


def _escape(text):
    """Plain text for reStructuredText: no stray emphasis, literal, substitution or reference."""
    text = re.sub(r"([\\*`|])", r"\\\1", text)
    # name_ and name__ (followed by a non-word character or the end) would be references.
    return re.sub(r"(\w)(_+)(?=\W|$)", lambda m: m.group(1) + "\\" + m.group(2), text)


def _literal(text):
    text = text.strip()
    return "``%s``" % text if text else '``""``'


def _markup_to_rst(text):
    """One paragraph of Ansible markup as reStructuredText."""
    text = " ".join(str(text).split())
    out = []
    pos = 0
    for match in _MARKUP.finditer(text):
        out.append(_escape(text[pos:match.start()]))
        kind, content = match.group(1), re.sub(r"\\(.)", r"\1", match.group(2))
        if kind in ("C", "V", "O", "RV", "E"):
            rst = _literal(content)
        elif kind in ("M", "P"):
            rst = _literal(content.split("#")[0])
        elif kind == "I":
            rst = "*%s*" % content.strip()
        elif kind == "B":
            rst = "**%s**" % content.strip()
        elif kind == "U":
            rst = "`%s <%s>`__" % (content, content)
        else:  # L(text,url)
            label, _sep, url = content.rpartition(",")
            rst = "`%s <%s>`__" % (_escape(label.strip()), url.strip())
        before = text[match.start() - 1] if match.start() > 0 else " "
        after = text[match.end()] if match.end() < len(text) else " "
        if not before.isspace() and before not in _BEFORE_OK:
            rst = "\\ " + rst
        if not after.isspace() and after not in _AFTER_OK:
            rst += "\\ "
        out.append(rst)
        pos = match.end()
    out.append(_escape(text[pos:]))
    return "".join(out)


def _wrap(paragraph, indent=0):
    """A paragraph as lines of at most WIDTH characters (where words allow), indented."""
    return textwrap.wrap(paragraph, WIDTH - indent, break_long_words=False, break_on_hyphens=False) or [""]


def _paragraphs(description):
    if description is None:
        return []
    items = description if isinstance(description, list) else [description]
    return [_markup_to_rst(item) for item in items if str(item).strip()]


def _flow(value):
    """A value in YAML flow style on one line."""
    if isinstance(value, str):
        return value if value else '""'
    return yaml.safe_dump(value, default_flow_style=True, sort_keys=False, width=100000).strip().removesuffix("...").strip()


def _is_nested(value):
    return isinstance(value, (list, dict)) and any(isinstance(v, (list, dict)) for v in (value.values() if isinstance(value, dict) else value))


def _type_text(option):
    kind = option.get("type", "str")
    if option.get("elements"):
        kind = "%s of %s" % (kind, option["elements"])
    return kind


def _block(lines, indent):
    pad = " " * indent
    return [pad + line if line else "" for line in lines]


def _option(name, option, indent):
    """The lines of one option (and its sub-options, nested), as a definition list item."""
    option = option or {}
    lines = [" " * indent + _literal(name)]
    body = []
    facts = ["*%s*" % _type_text(option)]
    if option.get("required"):
        facts.append("required")
    default = option.get("default")
    default_block = None
    if "default" in option:
        if _is_nested(default) or len(_flow(default)) > 70:
            default_block = yaml.safe_dump(default, default_flow_style=None, sort_keys=False, width=100).rstrip().splitlines()
            facts.append("default below")
        else:
            facts.append("default %s" % _literal(_flow(default)))
    if option.get("choices"):
        facts.append(("each one of %s" if option.get("type") == "list" else "one of %s") % ", ".join(_literal(_flow(c)) for c in option["choices"]))
    body.append("; ".join(facts) + ".")
    for paragraph in _paragraphs(option.get("description")):
        body += [""] + _wrap(paragraph, indent + 3)
    if default_block:
        body += ["", "Default:", "", ".. code-block:: yaml", ""] + _block(default_block, 3)
    suboptions = option.get("options") or {}
    if suboptions:
        body += ["", "Keys of each element:" if option.get("type") == "list" else "Keys:", ""]
        for sub_name, sub in suboptions.items():
            body += _option(sub_name, sub, 0) + [""]
        body.pop()
    return lines + _block(body, indent + 3)


def _heading(text, char):
    return [text, char * len(text)]


def _playbooks(root):
    """name -> text of each playbooks/*.yml without its comments."""
    return {path.name: _COMMENT.sub("", path.read_text(encoding="utf-8")) for path in sorted((root / "playbooks").glob("*.yml"))}


def _readers(root):
    """The playbooks, and the role defaults that map the playbooks' names onto the roles' (node_reboot's)."""
    texts = {"playbooks/%s" % name: text for name, text in _playbooks(root).items()}
    for path in sorted((root / "roles").glob("*/defaults/main.yml")):
        texts[path.relative_to(root).as_posix()] = _COMMENT.sub("", path.read_text(encoding="utf-8"))
    return texts


def _used_in(root, name):
    return [file for file, text in _readers(root).items() if re.search(r"\b%s\b" % re.escape(name), text)]


def playbook_names(root):
    """Every infiniband_* name that playbooks/*.yml, or the role defaults that map them, use as a variable (comments left out)."""
    names = set()
    for text in _readers(root).values():
        names.update(_PLAYBOOK_NAME.findall(text))
    return names - set(NOT_VARIABLES)


def missing_playbook_variables(root):
    """Names the playbooks use that PLAYBOOK_VARIABLES does not describe."""
    return sorted(playbook_names(root) - {row[0] for row in PLAYBOOK_VARIABLES})


def _playbook_section(root):
    lines = _heading("Playbook variables", "-") + [""]
    lines += [
        "``playbooks/reboot.yml`` reads these; the role ``node_reboot`` takes them through its defaults (its own",
        "``node_reboot_*`` variables, listed below, win where set); ``nodes.yml`` imports it, and ``site.yml`` imports",
        "``nodes.yml``. They belong to the site and the run, not to one role: set them in the inventory (except the two",
        "marked extra vars only), or with ``-e`` and AWX surveys. :ref:`ansible_collections.fabric.infiniband.docsite.reboots`",
        "tells how they work together.",
        "",
    ]
    for name, kind, default, description in PLAYBOOK_VARIABLES:
        used = _used_in(root, name)
        option = {"type": kind, "description": None}
        if default is not None:
            option["default"] = default
        item = _option(name, option, 0) + [""] + _block(_wrap(description, 3), 3)
        if used:
            item += ["", "   Read by %s." % ", ".join("``%s``" % u for u in used)]
        lines += item + [""]
    return lines


def _role_section(role_dir):
    role = role_dir.name
    lines = [".. _ansible_collections.fabric.infiniband.docsite.variables.%s:" % role, ""]
    lines += _heading("Role ``%s``" % role, "-") + [""]
    specs_file = role_dir / "meta" / "argument_specs.yml"
    if not specs_file.is_file():
        return lines + ["This role has no argument specification.", ""]
    with specs_file.open(encoding="utf-8") as handle:
        specs = (yaml.load(handle, Loader=_Loader) or {}).get("argument_specs") or {}
    # main first, the other entry points after it in the order of the file.
    entries = sorted(specs.items(), key=lambda item: item[0] != "main")
    for entry, spec in entries:
        spec = spec or {}
        if len(entries) > 1:
            lines += _heading("Entry point ``%s``" % entry, "~") + [""]
        summary = spec.get("short_description")
        how = "``ansible-doc -t role fabric.infiniband.%s``" % role
        if entry == "main":
            call = "``fabric.infiniband.%s``" % role
        else:
            call = "``include_role`` of ``fabric.infiniband.%s`` with ``tasks_from: %s``" % (role, entry)
        if summary:
            lines += _wrap(_markup_to_rst(summary.rstrip(".")) + ".") + [""]
        lines += _wrap("Used as %s; the role's full description: %s." % (call, how)) + [""]
        options = spec.get("options") or {}
        if not options:
            lines += ["No variables.", ""]
        for name, option in options.items():
            lines += _option(name, option, 0) + [""]
    return lines


def render(root=ROOT):
    """The whole page, as text. Raises ValueError when a playbook variable is not described."""
    missing = missing_playbook_variables(root)
    if missing:
        raise ValueError("playbooks/*.yml use %s, which PLAYBOOK_VARIABLES in scripts/gen_variables_doc.py does not describe "
                         "(or list it in NOT_VARIABLES when it is not a variable)" % ", ".join(missing))
    roles = sorted(p for p in (root / "roles").glob("*") if p.is_dir())
    lines = [".. _ansible_collections.fabric.infiniband.docsite.variables:", ""]
    lines += _heading("Every variable", "=") + [""]
    lines += [
        ".. Generated by scripts/gen_variables_doc.py from roles/*/meta/argument_specs.yml and the script's table of",
        "   playbook variables. Do not edit: change those, then run %s." % REGENERATE,
        "",
    ]
    lines += [
        "The variables of the playbooks first, then those of each role, as its argument specification",
        "(``meta/argument_specs.yml``) declares them: the role checks its variables against it before any task runs.",
        "A variable's type is in italics; \"default below\" means the default is shown as YAML after the description.",
        "",
    ]
    lines += ["Roles:", ""] + ["- :ref:`%s <ansible_collections.fabric.infiniband.docsite.variables.%s>`" % (p.name, p.name)
                               for p in roles] + [""]
    lines += _playbook_section(root)
    for role_dir in roles:
        lines += _role_section(role_dir)
    while lines and lines[-1] == "":
        lines.pop()
    return "\n".join(line.rstrip() for line in lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description="Generate %s from the roles' argument specs." % OUTPUT)
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--check", action="store_true", help="exit 1 when the committed page differs")
    group.add_argument("--stdout", action="store_true", help="print the page instead of writing it")
    args = parser.parse_args(argv)
    try:
        text = render(ROOT)
    except ValueError as exc:
        print("gen_variables_doc: %s" % exc, file=sys.stderr)
        return 1
    target = ROOT / OUTPUT
    if args.stdout:
        sys.stdout.write(text)
        return 0
    current = target.read_text(encoding="utf-8") if target.is_file() else ""
    if args.check:
        if current == text:
            return 0
        sys.stdout.writelines(difflib.unified_diff(current.splitlines(True), text.splitlines(True), str(OUTPUT), "generated"))
        print("%s is out of date: run %s" % (OUTPUT, REGENERATE), file=sys.stderr)
        return 1
    if current != text:
        target.write_text(text, encoding="utf-8")
        print("wrote %s" % OUTPUT)
    return 0


if __name__ == "__main__":
    sys.exit(main())
