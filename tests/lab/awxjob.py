# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A job run as AWX runs one on an execution node: `ansible-runner transmit | worker | process`.

AWX lays out a private data directory for each job, and receptor hands it to an execution node: `ansible-runner
transmit <dir>` writes the job's arguments and the whole directory (a zip, base64) to its output, `ansible-runner
worker --private-data-dir <its own dir> --delete` unpacks that into a directory of its own, runs the job there,
streams the events, the status and then the job's artifact directory back, and deletes its directory;
`ansible-runner process <dir> --ident <job>` on the submitting side writes the events and unpacks the artifacts
into <dir>/artifacts/<job>/. Here the three run on this host as one pipeline (argv lists, no shell); the worker's
directory is another one than the submitting one, so a job sees nothing of the submitting side but what the
private data directory carries.

project_sync() gives what AWX's project sync gives a job: the checkout's files and the collections of
collections/requirements.yml installed under requirements_collections/ (AWX installs them there and points
ANSIBLE_COLLECTIONS_PATH at them). private_data_dir() lays one job's directory out, run() runs the job.

What a job reaches outside its directory is the lab itself, the execution node's environment: its nodes over SSH
on this host's ports, its power control (lab/labctl.py of this checkout, as a site's inventory names its BMCs)
and the simulator's state the lab's verify settings read (the lab's cache). The inventory names them with
absolute paths; in inventories/lab they are relative to playbook_dir, which the worker's copy of the project
would not satisfy (a fresh clone has no .cache/).
"""

import json
import os
import shutil
import subprocess

import yaml

import labhost as lab

RUNNER = lab.BIN / "ansible-runner"
# Relative to ansible-playbook's working directory, which ansible-runner sets to the project directory
# (ansible_runner/config/runner.py): the worker's own requirements_collections/. AWX writes the path inside the
# execution environment's container (/runner/requirements_collections); a worker without a container has no fixed
# path, and the submitting side does not know the worker's.
COLLECTIONS_PATH = "../requirements_collections"


def project_sync(target):
    """target/project: the files of the checkout a fresh clone holds, as the working tree has them (what
    `git ls-files --cached --others --exclude-standard` lists and exists: tracked and not ignored; a clean checkout
    in CI is exactly its commit). target/requirements_collections/ansible_collections: fabric.infiniband installed
    with ansible-galaxy from the artifact `ansible-galaxy collection build` makes of that copy, and the collections
    collections/requirements.yml names, with their dependencies, copied from .collections (`make deps` installs them
    from the PyPI bundle `ansible`: Galaxy, where AWX would take them from, is not reachable here)."""
    project, collections = target / "project", target / "requirements_collections"
    listing = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=lab.REPO,
                             stdout=subprocess.PIPE, check=True).stdout.decode()
    for name in sorted(set(listing.split("\0")) - {""}):
        source, copy = lab.REPO / name, project / name
        if not os.path.lexists(source):  # deleted in the working tree, not yet in git
            continue
        copy.parent.mkdir(parents=True, exist_ok=True)
        if source.is_symlink():
            os.symlink(os.readlink(source), copy)
        else:
            shutil.copy2(source, copy)
    environment = lab.env(ANSIBLE_COLLECTIONS_PATH=str(collections))
    built = lab.run([lab.BIN / "ansible-galaxy", "collection", "build", "--output-path", target / "build", project],
                    environment=environment)
    assert built.returncode == 0, built.stdout
    (artifact,) = (target / "build").glob("fabric-infiniband-*.tar.gz")
    installed = lab.run([lab.BIN / "ansible-galaxy", "collection", "install", "--offline", "--no-deps", "-p", collections,
                         artifact], environment=environment)
    assert installed.returncode == 0, installed.stdout
    requirements = yaml.safe_load((project / "collections" / "requirements.yml").read_text(encoding="utf-8"))
    wanted = [entry["name"] if isinstance(entry, dict) else entry for entry in requirements["collections"]]
    while wanted:
        name = wanted.pop()
        copy = collections / "ansible_collections" / name.replace(".", "/")
        if copy.exists():
            continue
        source = lab.REPO / ".collections" / "ansible_collections" / name.replace(".", "/")
        shutil.copytree(source, copy, symlinks=True)
        manifest = json.loads((copy / "MANIFEST.json").read_text(encoding="utf-8"))
        wanted += list(manifest["collection_info"].get("dependencies") or {})
    return target


def _inventory():
    """The lab's inventory as AWX hands it over: the JSON of `ansible-inventory --list --export` (AWX imported it
    from the SCM source), without the SSH key's path (the key is the Machine credential's), the lab's paths made
    absolute (see the module's docstring)."""
    proc = lab.run([lab.BIN / "ansible-inventory", "-i", lab.INVENTORY, "--list", "--export"], echo=False)
    assert proc.returncode == 0, proc.stdout
    inventory = json.loads(proc.stdout)
    inventory["all"]["vars"].pop("ansible_ssh_private_key_file")
    text = json.dumps(inventory)
    text = text.replace("{{ playbook_dir }}/../lab/labctl.py", str(lab.REPO / "lab" / "labctl.py"))
    text = text.replace("{{ playbook_dir }}/../lab/firmware", str(lab.REPO / "lab" / "firmware"))
    text = text.replace("playbook_dir ~ '/../.cache/lab/", "'%s/" % lab.CACHE)
    # Nothing else may reach into the checkout or the lab's cache through playbook_dir.
    assert "../lab/" not in text and "/../.cache/" not in text, text
    return text


def private_data_dir(root, sync, extravars):
    """A private data directory as AWX gives one to ansible-runner for a job.

    project/                  the project as the sync left it (AWX copies it for each job)
    requirements_collections/ the collections the sync installed
    inventory/hosts           an executable script that prints the inventory (_inventory())
    env/ssh_key               the Machine credential's key (runner loads it into an ssh-agent)
    env/extravars             the survey's answers
    env/envvars               ANSIBLE_COLLECTIONS_PATH: requirements_collections/
    env/settings              the job timeout
    """
    root.mkdir(parents=True)
    for name in ("project", "requirements_collections"):
        shutil.copytree(sync / name, root / name, symlinks=True, copy_function=os.link)
    (root / "env").mkdir()
    (root / "inventory").mkdir()
    script = root / "inventory" / "hosts"
    script.write_text("#!/usr/bin/env python3\nimport sys\nprint(%r if '--list' in sys.argv else '{}')\n" % _inventory(),
                      encoding="utf-8")
    script.chmod(0o755)
    shutil.copyfile(lab.CACHE / "ssh" / "id_ed25519", root / "env" / "ssh_key")
    (root / "env" / "extravars").write_text(json.dumps(extravars), encoding="utf-8")
    (root / "env" / "envvars").write_text(json.dumps({"ANSIBLE_COLLECTIONS_PATH": COLLECTIONS_PATH, "ANSIBLE_NOCOLOR": "1"}),
                                          encoding="utf-8")
    (root / "env" / "settings").write_text(json.dumps({"job_timeout": 1800}), encoding="utf-8")
    return root


class Job:
    """What the submitting side has of a finished job: the three processes' return codes, the job's status, its
    playbook_on_stats event data, its stdout and events, the worker's directory and the command it ran. The worker's
    return code is the playbook's; process exits 0 whatever the job did (ansible-runner 2.4's Processor never sets
    its rc), so the job's outcome is its status, as AWX reads it."""

    def __init__(self, root, ident, rcs, worker_dir):
        self.artifacts = root / "artifacts" / ident
        self.rcs = rcs
        self.worker_dir = worker_dir
        status = self.artifacts / "status"
        self.status = status.read_text(encoding="utf-8").strip() if status.exists() else None
        self.events = [json.loads(p.read_text(encoding="utf-8")) for p in sorted((self.artifacts / "job_events").glob("*.json"))]
        stats = [e["event_data"] for e in self.events if e.get("event") == "playbook_on_stats"]
        self.stats = stats[0] if len(stats) == 1 else {}
        stdout = self.artifacts / "stdout"
        self.stdout = stdout.read_text(encoding="utf-8") if stdout.exists() else ""
        command = self.artifacts / "command"
        self.command = json.loads(command.read_text(encoding="utf-8")) if command.exists() else {}

    def task_paths(self):
        """The files of the tasks the job ran, as the worker's Ansible read them."""
        return {e["event_data"]["task_path"].rsplit(":", 1)[0] for e in self.events if e.get("event_data", {}).get("task_path")}


def run(root, ident, playbook, limit=None, facts=None, timeout=1800):
    """The job on the private data directory root through transmit | worker | process; returns a Job.

    facts: a directory holding the hosts' facts (jsonfile cache), as AWX keeps them with use_fact_cache: copied
    into artifacts/<ident>/fact_cache before the job (transmit sends it with the directory; the worker's runner
    points the jsonfile cache there), and what the job left there copied back after it (the worker streams the
    artifact directory back, fact_cache included, and process unpacks it; AWX reads the facts from the same place
    once the job is done)."""
    artifacts = root / "artifacts" / ident
    if facts is not None:
        shutil.copytree(facts, artifacts / "fact_cache")
    # The execution node: a directory of its own beside the submitting one, its own working directory, and an
    # environment without this checkout's collection path (the job's env/envvars sets the one it uses).
    node = root.parent / "execution-node"
    node.mkdir(exist_ok=True)
    worker_dir = node / ident
    environment = {k: v for k, v in lab.env().items() if not k.startswith("ANSIBLE_COLLECTIONS_PATH")}
    transmit_argv = [RUNNER, "transmit", root, "-p", playbook, "--ident", ident] + (["--limit", ",".join(limit)] if limit else [])
    logs = {name: open(root.parent / ("%s.%s.log" % (ident, name)), "w+", encoding="utf-8") for name in ("transmit", "worker")}
    try:
        transmit = subprocess.Popen([str(a) for a in transmit_argv], stdout=subprocess.PIPE, stderr=logs["transmit"],
                                    cwd=root.parent, env=lab.env())
        worker = subprocess.Popen([str(RUNNER), "worker", "--private-data-dir", str(worker_dir), "--delete"],
                                  stdin=transmit.stdout, stdout=subprocess.PIPE, stderr=logs["worker"], cwd=node, env=environment)
        transmit.stdout.close()  # the worker holds the pipe now: it sees EOF when transmit exits
        process = subprocess.Popen([str(RUNNER), "process", str(root), "--ident", ident], stdin=worker.stdout,
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=root.parent, env=lab.env(), text=True)
        worker.stdout.close()
        output = process.communicate(timeout=timeout)[0]
        rcs = {"transmit": transmit.wait(timeout=60), "worker": worker.wait(timeout=60), "process": process.returncode}
        for log in logs.values():
            log.seek(0)
        print("$ %s | ansible-runner worker | ansible-runner process\n%s\n%s" % (
            " ".join(str(a) for a in transmit_argv), "".join(log.read() for log in logs.values()), output))
    finally:
        for log in logs.values():
            log.close()
    if facts is not None and (artifacts / "fact_cache").is_dir():
        for path in (artifacts / "fact_cache").iterdir():
            shutil.copyfile(path, facts / path.name)
    return Job(root, ident, rcs, worker_dir)


def assert_through_the_worker(job, root):
    """The job ran in the worker's directory, not in the submitting one: the command ansible-runner recorded there
    (returned with the artifacts) ran in the worker's project, every task file came from the worker's copy (the roles
    from fabric.infiniband as installed under its requirements_collections), and the worker deleted its directory."""
    assert job.worker_dir != root and not str(job.worker_dir).startswith(str(root) + os.sep)
    assert job.command.get("cwd") == str(job.worker_dir / "project"), job.command.get("cwd")
    paths = job.task_paths()
    assert paths and all(p.startswith(str(job.worker_dir) + os.sep) for p in paths), sorted(paths)
    installed = str(job.worker_dir / "requirements_collections" / "ansible_collections" / "fabric" / "infiniband" / "roles")
    # every role task came from there (a job refused by the preflight, one task of the playbook, ran none)
    roles = [p for p in paths if "%sroles%s" % (os.sep, os.sep) in p]
    assert all(p.startswith(installed + os.sep) for p in roles), sorted(paths)
    assert not job.worker_dir.exists()
