# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The roles of this collection that a run applies to a host, read from the playbooks ansible-playbook was given.

The whole-run preflight (``playbooks/preflight.yml``, action ``preflight_vars`` with ``run: true``) checks, on each host,
every role the run's plays will run there: a role added to a play is checked before the first change of the run, with no
list kept by hand. The playbooks are read as YAML, as written (nothing is run or templated but a play's ``hosts``):

- :func:`playbook_paths`: the playbooks of the command line (``ansible-playbook`` keeps them in ``context.CLIARGS``), a
  collection's ``namespace.name.playbook`` resolved as ansible-playbook resolves it;
- :func:`plays`: each play's ``hosts`` and the roles it runs (``roles:``, and ``import_role``/``include_role`` tasks with
  the role's main entry point, in blocks too), following ``import_playbook``;
- :func:`host_in`: whether a host pattern names the host (groups, hosts, ``all``, ``!``, ``&``, wildcards); a group an
  earlier play makes with ``group_by`` may hold the hosts of the play before it, so its roles are checked on them; a
  group the inventory does not have and no play makes names no host (the group ``opensm`` of an inventory without SM
  hosts);
- :func:`roles_for`: the roles for one host.

Only this collection's roles count: ``fabric.infiniband.<role>``, or a bare role name in the collection's own playbooks.
When the run's playbooks run none of them (``preflight.yml`` alone, say), the collection's ``site.yml`` stands for the run.
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Mapping

import yaml

COLLECTION = "fabric.infiniband"
COLLECTION_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PLAYBOOKS_DIR = os.path.join(COLLECTION_DIR, "playbooks")
ROLES_DIR = os.path.join(COLLECTION_DIR, "roles")
SITE = os.path.join(PLAYBOOKS_DIR, "site.yml")

_IMPORT_PLAYBOOK = ("import_playbook", "ansible.builtin.import_playbook", "ansible.legacy.import_playbook")
_ROLE_TASKS = tuple(prefix + action for prefix in ("", "ansible.builtin.", "ansible.legacy.")
                    for action in ("import_role", "include_role"))
_TASK_LISTS = ("pre_tasks", "tasks", "post_tasks")
_GROUP_BY = ("group_by", "ansible.builtin.group_by", "ansible.legacy.group_by")
_BLOCK_LISTS = ("block", "rescue", "always")
_SPLIT = re.compile(r"[,:]")
_CACHE = {}


def collection_roles(roles_dir=ROLES_DIR):
    """The names of this collection's roles."""
    try:
        return frozenset(name for name in os.listdir(roles_dir) if os.path.isdir(os.path.join(roles_dir, name, "tasks")))
    except OSError:
        return frozenset()


def playbook_paths(args, cwd=None):
    """The playbooks of the command line, as paths; a collection playbook (``fabric.infiniband.site``) as ansible-playbook
    finds it; what cannot be found is left out (ansible-playbook itself refuses it)."""
    out = []
    for arg in args or ():
        arg = str(arg)
        path = arg if os.path.isabs(arg) else os.path.join(cwd or os.getcwd(), arg)
        if not os.path.isfile(path):
            path = collection_playbook(arg)
        if path:
            out.append(os.path.realpath(path))
    return out


def collection_playbook(name):
    """The file of a playbook named ``namespace.collection.playbook`` (with or without ``.yml``), or None."""
    if name.startswith(COLLECTION + "."):
        local = os.path.join(PLAYBOOKS_DIR, name[len(COLLECTION) + 1:])
        for path in (local, local + ".yml", local + ".yaml"):
            if os.path.isfile(path):
                return path
    try:
        from ansible.utils.collection_loader._collection_finder import _get_collection_playbook_path  # pylint: disable=import-outside-toplevel
    except ImportError:  # pragma: no cover - every supported ansible-core has it
        return None
    try:
        found = _get_collection_playbook_path(name)
    except Exception:  # pylint: disable=broad-exception-caught
        return None
    return found[1] if found else None


def _load(path):
    if path not in _CACHE:
        try:
            with open(path) as handle:
                _CACHE[path] = yaml.safe_load(handle) or []
        except (OSError, yaml.YAMLError):
            _CACHE[path] = []
    return _CACHE[path]


def _role_name(name, local, known):
    """This collection's role a role reference names, or None."""
    if not isinstance(name, str):
        return None
    if name.startswith(COLLECTION + "."):
        name = name[len(COLLECTION) + 1:]
    elif not local:
        return None
    return name if name in known else None


def _task_roles(tasks, local, known):
    out = []
    for task in tasks or ():
        if not isinstance(task, Mapping):
            continue
        for key in _BLOCK_LISTS:
            out += _task_roles(task.get(key), local, known)
        for key in _ROLE_TASKS:
            if key not in task:
                continue
            spec = task[key] if isinstance(task[key], Mapping) else {"name": task[key]}
            if spec.get("tasks_from", "main") in ("main", "main.yml"):
                role = _role_name(spec.get("name"), local, known)
                if role:
                    out.append(role)
    return out


def _group_by_keys(tasks):
    """The groups the tasks make with group_by (a literal key; a templated one is no name to match)."""
    out = []
    for task in tasks or ():
        if not isinstance(task, Mapping):
            continue
        for key in _BLOCK_LISTS:
            out += _group_by_keys(task.get(key))
        for key in _GROUP_BY:
            spec = task.get(key)
            if isinstance(spec, Mapping) and isinstance(spec.get("key"), str) and "{{" not in spec["key"]:
                out.append(spec["key"])
    return out


def _play_roles(play, local, known):
    out = []
    for entry in play.get("roles") or ():
        name = entry.get("role", entry.get("name")) if isinstance(entry, Mapping) else entry
        role = _role_name(name, local, known)
        if role:
            out.append(role)
    for key in _TASK_LISTS:
        out += _task_roles(play.get(key), local, known)
    return out


def plays(path, known=None, seen=None):
    """``[(hosts, [role, ...], [group made by group_by, ...]), ...]``: the plays of a playbook in their order, imported
    playbooks included."""
    known = collection_roles() if known is None else known
    seen = set() if seen is None else seen
    if path in seen:
        return []
    seen.add(path)
    local = os.path.dirname(path) == os.path.realpath(PLAYBOOKS_DIR)
    out = []
    data = _load(path)
    for play in data if isinstance(data, list) else ():
        if not isinstance(play, Mapping):
            continue
        imported = next((play[key] for key in _IMPORT_PLAYBOOK if key in play), None)
        if imported is not None:
            if isinstance(imported, str) and "{{" not in imported:
                target = os.path.join(os.path.dirname(path), imported)
                target = target if os.path.isfile(target) else collection_playbook(imported)
                if target:
                    out += plays(os.path.realpath(target), known, seen)
            continue
        made = [name for key in _TASK_LISTS for name in _group_by_keys(play.get(key))]
        out.append((play.get("hosts"), _play_roles(play, local, known), made))
    return out


def host_in(pattern, host, groups, made=True, run_groups=()):
    """Whether the host pattern names ``host``. ``groups``: the inventory's groups (``groups`` of the task's variables).
    A name in ``run_groups`` and not in the inventory is a group an earlier play makes (``group_by``): it names the host
    when ``made`` says the host may be in it. Any other name that is neither a group nor a host names none (as in Ansible)."""
    if isinstance(pattern, (list, tuple)):
        terms = [str(term) for term in pattern]
    else:
        terms = _SPLIT.split(str(pattern or ""))
    hosts = set(groups.get("all") or ())
    included, intersect, exclude = set(), [], set()
    for term in (term.strip() for term in terms):
        if not term:
            continue
        kind = term[0] if term[0] in "!&" else ""
        selected = _select(term.lstrip("!&"), host, hosts, groups, made if term.lstrip("!&") in run_groups else False)
        if kind == "!":
            exclude |= selected
        elif kind == "&":
            intersect.append(selected)
        else:
            included |= selected
    for selected in intersect:
        included &= selected
    return host in included - exclude


def _select(term, host, hosts, groups, made):
    if term in ("all", "*"):
        return hosts | {host}
    if term in groups:
        return set(groups[term] or ())
    if term in hosts or term == host:
        return {term}
    if term.startswith("~") or any(char in term for char in "*?["):
        if term.startswith("~"):
            try:
                regex = re.compile(term[1:])
            except re.error:
                return set()
            return {name for name in hosts | {host} if regex.match(name)}
        names = {name for name in hosts | {host} if fnmatch.fnmatchcase(name, term)}
        for group, members in groups.items():
            if fnmatch.fnmatchcase(group, term):
                names |= set(members or ())
        return names
    return {host} if made else set()  # a group made during the run (group_by), or no group at all


def roles_for(paths, host, groups, template=None):
    """The collection's roles the plays of ``paths`` run on ``host``, in the order they first run there. ``template`` renders a
    play's templated ``hosts`` (the host's variables); without it, a templated pattern names every host. A group made during
    the run (one the inventory does not have) holds hosts of the play before it, which makes it (reboot.yml's
    ``infiniband_reboot_waiting``): it names the host when that play did. None when the playbooks run no role of this
    collection."""
    known = collection_roles()
    found, seen = [], set()
    for path in paths:
        found += plays(path, known, seen)
    if not any(entry[1] for entry in found):
        return None
    out, previous, run_groups = [], True, set()
    for hosts, roles, made in found:
        if isinstance(hosts, str) and "{{" in hosts:
            try:
                hosts = template(hosts) if template else "all"
            except Exception:  # pylint: disable=broad-exception-caught
                hosts = "all"
        previous = host_in(hosts, host, groups, made=previous, run_groups=run_groups)
        if previous:
            out += [role for role in roles if role not in out]
        run_groups.update(made)
    return out


def run_roles(host, groups, template=None, args=None, cwd=None):
    """:func:`roles_for` the playbooks of this run (``context.CLIARGS``, or ``args``), else for the collection's site.yml."""
    if args is None:
        try:
            from ansible import context  # pylint: disable=import-outside-toplevel
            args = context.CLIARGS.get("args") or ()
        except Exception:  # pylint: disable=broad-exception-caught
            args = ()
    roles = roles_for(playbook_paths(args, cwd), host, groups, template)
    if roles is None:
        roles = roles_for([os.path.realpath(SITE)], host, groups, template) or []
    return roles
