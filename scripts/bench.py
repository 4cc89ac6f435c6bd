# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""`make bench`: speed, firmware writes, reboots and fleet scale, measured on a lab instance of its own.

Everything runs in one go on the lab instance ``bench`` (``FABRIC_LAB_INSTANCE=bench``: its own
containers, network, ports and ``.cache/lab-bench/``), never on the demo lab, so that the figures
sit side by side on the same (noisy) machine:

1. three fresh lab nodes: ``ansible -m ping``, the first converge of ``playbooks/site.yml`` with its
   reboots, a no-op re-converge, ping again; wall time, tasks run and changed (the PLAY RECAP), the
   slowest tasks (``ansible.posix.profile_tasks``);
2. firmware tool calls per adapter and reboots per node of each run, from the simulator's call log
   and ``runtime.boot_count`` on the host side (``.cache/lab-bench/nodes/<node>/``), and the same for
   two runs of the naive baseline ``bench/naive.yml``;
3. a fleet of 1, 10, 50, 200 nodes (``labctl inventory --fleet``: the demo nodes' descriptions
   cycled, without switch ports, firmware as the 3-node converge left it): a warm-up converge of the
   nodes new at that size, then the timed no-op converge and ping of all; controller CPU (user/sys),
   lab memory, and once a cProfile of ansible-playbook's controller process;
4. at one fleet size (``--sliced-size``, the largest by default), AWX's sliced workflow (``awx/job_templates.yml``:
   "Prepare InfiniBand nodes (sliced)", then "InfiniBand fabric and cluster"): ``playbooks/nodes.yml`` in
   ``--slices`` slices (every n-th host each, one after the other) sharing a jsonfile fact cache, as AWX's
   ``use_fact_cache`` does, each slice's time against a run of ``nodes.yml`` over as many hosts without the
   cache, then ``playbooks/fabric_cluster.yml`` over all the hosts, from the cache.

Writes results/bench-<UTC>.{json,md,png} (older ones there are removed: results/ keeps the latest)
and docs/performance.md.  ``--sizes`` and ``--deadline HH:MM`` (UTC; a fleet size that would not end
by then is skipped and said so) bound the run.  Ends with ``labctl down`` for the instance.
"""

import argparse
import datetime
import glob
import json
import os
import platform
import pstats
import re
import resource
import shutil
import signal
import struct
import subprocess
import sys
import time
import zlib

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.dirname(sys.executable)
INSTANCE = "bench"
CACHE = os.path.join(REPO, ".cache", "lab-" + INSTANCE)
INVENTORY = os.path.join(CACHE, "inventory")
RUN_DIR = os.path.join(CACHE, "run")
RESULTS = os.path.join(REPO, "results")
LABCTL = os.path.join(REPO, "lab", "labctl.py")
SITE = os.path.join(REPO, "playbooks", "site.yml")
NAIVE = os.path.join(REPO, "bench", "naive.yml")
NODES = os.path.join(REPO, "playbooks", "nodes.yml")
FABRIC_CLUSTER = os.path.join(REPO, "playbooks", "fabric_cluster.yml")
FACT_CACHE = os.path.join(CACHE, "fact-cache")
# Fleet nodes have no switch ports, so the lab inventory's environment of the verify role's tools (their umad2sim
# port, from the node's fabric ports) cannot be templated for them; the fleet runs skip verify, but the playbooks'
# preflight (preflight_vars) checks every role's settings of the run. An empty one, as extra vars, for every fleet run.
FLEET_EXTRA = ["-e", json.dumps({"verify_tool_environment": {}})]
FLEET_IMAGES = "localhost/fabric-bench-converged"
DEADLINE = [None]  # set by --deadline: runs still going then are stopped
FIRMWARE_TOOLS = ("mlxconfig", "mstconfig", "mlxfwreset", "mstfwreset")
FLINT_TOOLS = ("flint", "mstflint")  # the firmware role's version queries and burns
RECAP = re.compile(r"^(?P<host>\S+)\s*:\s*ok=(?P<ok>\d+)\s+changed=(?P<changed>\d+)\s+unreachable=(?P<unreachable>\d+)\s+"
                   r"failed=(?P<failed>\d+)\s+skipped=(?P<skipped>\d+)", re.MULTILINE)
PROFILE_LINE = re.compile(r"^(?P<task>\S.*?) -{2,} (?P<seconds>\d+\.\d+)s\s*$", re.MULTILINE)


def say(message):
    print("bench: %s" % message, flush=True)


def env(forks=20, **extra):
    result = dict(os.environ)
    # The runs start in .cache/lab-bench/run (verify.yml writes its fabric-report/ where it runs), with the
    # repository's ansible.cfg named explicitly.
    result.update(ANSIBLE_CONFIG=os.path.join(REPO, "ansible.cfg"),
                  ANSIBLE_COLLECTIONS_PATH=os.path.join(REPO, ".collections"), PATH="%s:%s" % (BIN, os.environ.get("PATH", "")),
                  FABRIC_LAB_INSTANCE=INSTANCE, FABRIC_LAB_INVENTORY=INVENTORY, ANSIBLE_NOCOLOR="1", ANSIBLE_FORCE_COLOR="0",
                  ANSIBLE_FORKS=str(forks), ANSIBLE_CALLBACKS_ENABLED="ansible.posix.profile_tasks,fabric.infiniband.preload",
                  PROFILE_TASKS_TASK_OUTPUT_LIMIT="8", ANSIBLE_CALLBACK_RESULT_FORMAT="yaml")
    result.update(extra)
    return result


# Runs a command and writes the largest resident set of its processes (ansible-playbook's main process:
# its forks start as copies of it) to a file: what each fork of a worker has to copy grows with it.
MAXRSS_LAUNCHER = ("import resource, subprocess, sys; rc = subprocess.call(sys.argv[2:]); "
                   "open(sys.argv[1], 'w').write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)); sys.exit(rc)")


def timed(argv, environment, log_name):
    """Run a command; wall time, the CPU it and its children (Ansible's forks) used, and its largest RSS."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    # Its own process group, so that the deadline stops Ansible's forks too.
    os.makedirs(RUN_DIR, exist_ok=True)
    rss_file = os.path.join(RUN_DIR, ".maxrss")
    argv = [sys.executable, "-c", MAXRSS_LAUNCHER, rss_file] + list(argv)
    with subprocess.Popen(argv, cwd=RUN_DIR, env=environment, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          start_new_session=True) as proc:
        left = deadline_left(DEADLINE[0])
        try:
            stdout = proc.communicate(timeout=None if left is None else max(left, 1))[0]
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            raise SystemExit("bench: %s stopped at the deadline" % log_name) from None
    wall = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    with open(os.path.join(CACHE, "logs", log_name + ".log"), "w", encoding="utf-8") as handle:
        handle.write(stdout)
    try:
        with open(rss_file, encoding="utf-8") as handle:
            maxrss = int(handle.read()) * 1024
    except (OSError, ValueError):
        maxrss = None
    return {"rc": proc.returncode, "wall_s": round(wall, 2), "user_s": round(after.ru_utime - before.ru_utime, 2),
            "sys_s": round(after.ru_stime - before.ru_stime, 2), "maxrss_bytes": maxrss, "output": stdout}


def labctl(*args, bounded=False):
    """labctl on the bench instance; ``bounded``: stopped at the deadline (never ``down``)."""
    left = deadline_left(DEADLINE[0]) if bounded else None
    try:
        proc = subprocess.run([sys.executable, LABCTL, *args], cwd=REPO, env=env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True, check=False, timeout=None if left is None else max(left, 1))
    except subprocess.TimeoutExpired:
        raise SystemExit("bench: labctl %s stopped at the deadline" % " ".join(args)) from None
    if proc.returncode != 0:
        raise SystemExit("bench: labctl %s failed:\n%s" % (" ".join(args), proc.stdout[-3000:]))
    return proc.stdout


def recap(output):
    return {m.group("host"): {k: int(m.group(k)) for k in ("ok", "changed", "unreachable", "failed", "skipped")}
            for m in RECAP.finditer(output)}


def slowest(output, count=8):
    found = [(m.group("task").strip(), float(m.group("seconds"))) for m in PROFILE_LINE.finditer(output)]
    return [{"task": t, "s": s} for t, s in sorted(found, key=lambda x: -x[1])[:count]]


# --- what the simulator recorded (host side) -----------------------------------------------
def call_log(node):
    path = os.path.join(CACHE, "nodes", node, "log", "calls.jsonl")
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def boot_count(node):
    with open(os.path.join(CACHE, "nodes", node, "state", "state.json"), encoding="utf-8") as handle:
        return json.load(handle).get("runtime", {}).get("boot_count", 0)


# Cards whose silicon is Ethernet-only have no link type: the link_type role does not query them (their
# model says so), so the expected count of firmware queries on a no-op is 0 for them and 1 for the others.
ETHERNET_ONLY = ("ConnectX-4 Lx", "ConnectX-6 Lx", "ConnectX-6 Dx")


def expected_queries(node):
    with open(os.path.join(CACHE, "nodes", node, "state", "state.json"), encoding="utf-8") as handle:
        return {a["pci_address"]: 0 if str(a.get("model", "")).startswith(ETHERNET_ONLY) else 1
                for a in json.load(handle).get("adapters", [])}


def snapshot(hosts):
    return {h: {"calls": len(call_log(h)), "boots": boot_count(h)} for h in hosts}


def firmware_counts(hosts, before):
    """Firmware tool calls per adapter (query/write/reset) and reboots per node since ``before``."""
    per_adapter, reboots = {}, {}
    for host in hosts:
        expected_per_adapter = expected_queries(host)  # also the node's adapters, for a query without -d
        for bdf, expected in expected_per_adapter.items():
            per_adapter["%s %s" % (host, bdf)] = {"query": 0, "write": 0, "reset": 0, "version_query": 0, "burn": 0,
                                                  "expected_noop_queries": expected}
        for call in call_log(host)[before[host]["calls"]:]:
            if call.get("tool") in FLINT_TOOLS and call.get("kind") in ("query", "write") and call.get("device"):
                entry = per_adapter.setdefault("%s %s" % (host, call["device"]), {"query": 0, "write": 0, "reset": 0})
                key = "version_query" if call["kind"] == "query" else "burn"
                entry[key] = entry.get(key, 0) + 1
            if call.get("tool") in FIRMWARE_TOOLS and call.get("kind") in ("query", "write", "reset"):
                # A query without -d (all devices) counts against every adapter of the node.
                targets = [call["device"]] if call.get("device") else list(expected_per_adapter)
                for bdf in targets:
                    per_adapter.setdefault("%s %s" % (host, bdf), {"query": 0, "write": 0, "reset": 0})[call["kind"]] += 1
        reboots[host] = boot_count(host) - before[host]["boots"]
    return {"per_adapter": per_adapter, "reboots_per_node": reboots}


POWER_CYCLE_TASK = re.compile(r"^TASK \[.*: Power-cycle the node")
CHANGED_HOST = re.compile(r"^changed: \[(?P<host>[^\]\s]+)")


def count_power_cycles(firmware, output):
    """A lab power cycle is two power-ons (labctl's cold one and the container's start; lab/labctl.py,
    tests/lab): the node's reboots are its power-ons less two for each power cycle the run made."""
    cycles, in_task = {}, False
    for line in output.splitlines():
        if line.startswith("TASK ["):
            in_task = bool(POWER_CYCLE_TASK.match(line))
        elif in_task and CHANGED_HOST.match(line):
            host = CHANGED_HOST.match(line).group("host")
            cycles[host] = cycles.get(host, 0) + 1
    firmware["power_ons_per_node"] = dict(firmware["reboots_per_node"])
    firmware["power_cycles_per_node"] = {h: cycles.get(h, 0) for h in firmware["reboots_per_node"]}
    firmware["reboots_per_node"] = {h: max(n - 2 * cycles.get(h, 0), 0) for h, n in firmware["power_ons_per_node"].items()}


# Actions that run on the controller only: no module goes to the node.
CONTROLLER_ACTIONS = {"set_fact", "assert", "debug", "fail", "include_tasks", "import_tasks", "include_role", "import_role",
                      "include_vars", "validate_argument_spec", "group_by", "add_host", "meta", "set_stats", "preflight_vars"}
# Task keywords that are not the task's action.
TASK_KEYWORDS = {"name", "when", "register", "vars", "loop", "loop_control", "changed_when", "failed_when", "tags", "no_log",
                 "check_mode", "diff", "notify", "environment", "delegate_to", "run_once", "args", "become", "ignore_errors",
                 "until", "retries", "delay", "listen", "throttle", "any_errors_fatal", "block", "rescue", "always",
                 "module_defaults", "delegate_facts", "timeout", "with_items", "with_dict"}


def task_actions():
    """Task name -> its action (short name), from the roles' and playbooks' YAML; names shared by tasks of
    different actions are left out."""
    import yaml  # ansible-core's dependency, in the venv bench runs from

    found = {}

    def walk(tasks):
        for task in tasks or []:
            if not isinstance(task, dict):
                continue
            for key in ("block", "rescue", "always"):
                walk(task.get(key))
            actions = [k for k in task if k not in TASK_KEYWORDS]
            if task.get("name") and actions:
                found.setdefault(task["name"], set()).add(actions[0].rsplit(".", 1)[-1])

    files = glob.glob(os.path.join(REPO, "roles", "*", "tasks", "*.yml")) + glob.glob(os.path.join(REPO, "roles", "*", "handlers", "*.yml"))
    for path in files + glob.glob(os.path.join(REPO, "playbooks", "*.yml")):
        with open(path, encoding="utf-8") as handle:
            content = yaml.safe_load(handle)
        for item in content if isinstance(content, list) else []:
            if isinstance(item, dict) and "hosts" in item:
                for key in ("pre_tasks", "tasks", "post_tasks", "handlers"):
                    walk(item.get(key))
            else:
                walk([item])
    return {name: actions.pop() for name, actions in found.items() if len(actions) == 1}


def task_split(output, hosts):
    """Per host, what its tasks in a run's log did: ran a module on the node, ran on the controller only (argument
    specs, preflight checks, asserts, facts, includes), were skipped, or could not be told (a templated name)."""
    actions = task_actions()
    splits = {host: {"node": 0, "controller": 0, "skipped": 0, "unknown": 0} for host in hosts}
    for part in re.split(r"^TASK \[", output, flags=re.MULTILINE)[1:]:
        head, _sep, body = part.partition("]")
        name = head.split(" : ", 1)[-1]
        action = "validate_argument_spec" if name.startswith("Validating arguments against arg spec") else actions.get(name)
        for host, split in splits.items():
            if re.search(r"^(ok|changed|failed|fatal): \[%s\]" % re.escape(host), body, re.MULTILINE):
                split["unknown" if action is None else "controller" if action in CONTROLLER_ACTIONS else "node"] += 1
            elif re.search(r"^skipping: \[%s\]" % re.escape(host), body, re.MULTILINE):
                split["skipped"] += 1
    return splits


# --- runs ----------------------------------------------------------------------------------
def ping(hosts_pattern, forks, name):
    result = timed([os.path.join(BIN, "ansible"), "-i", INVENTORY, hosts_pattern, "-m", "ansible.builtin.ping", "-o"],
                   env(forks), name)
    pongs = result["output"].count("SUCCESS")
    return {"wall_s": result["wall_s"], "user_s": result["user_s"], "sys_s": result["sys_s"], "hosts_ok": pongs, "rc": result["rc"]}


def playbook(playbook_path, hosts, name, forks=20, extra=(), profile=None, environment=None):
    argv = [os.path.join(BIN, "ansible-playbook"), "-i", INVENTORY, playbook_path, *extra]
    if profile:
        argv = [sys.executable, "-m", "cProfile", "-o", profile] + argv
    before = snapshot(hosts)
    result = timed(argv, env(forks, **(environment or {})), name)
    per_host = recap(result["output"])
    run = {"rc": result["rc"], "wall_s": result["wall_s"], "user_s": result["user_s"], "sys_s": result["sys_s"],
           "maxrss_bytes": result["maxrss_bytes"], "hosts": len(per_host), "forks": forks,
           "wall_per_host_s": round(result["wall_s"] / max(len(per_host), 1), 3),
           "tasks_run": sum(h["ok"] + h["failed"] for h in per_host.values()),
           "tasks_changed": sum(h["changed"] for h in per_host.values()),
           "failed": sum(h["failed"] + h["unreachable"] for h in per_host.values()),
           "recap": per_host, "slowest_tasks": slowest(result["output"])}
    run["wall_per_host_task_s"] = round(result["wall_s"] / max(run["tasks_run"], 1), 4)
    if hosts and os.path.isdir(os.path.join(CACHE, "nodes", hosts[0])):
        run["firmware"] = firmware_counts(hosts, before)
        count_power_cycles(run["firmware"], result["output"])
    if result["rc"] != 0:
        say("%s ended with rc %d (log: .cache/lab-bench/logs/%s.log)" % (name, result["rc"], name))
    return run


def memory_used():
    """Used memory of the machine (free's `used`), bytes."""
    fields = {}
    with open("/proc/meminfo", encoding="utf-8") as handle:
        for line in handle:
            key, value = line.split(":", 1)
            fields[key] = int(value.split()[0]) * 1024
    return fields["MemTotal"] - fields["MemAvailable"]


def podman_memory():
    """Sum of the instance's containers' memory (podman stats), bytes, or None if podman cannot tell in time."""
    try:
        proc = subprocess.run(["podman", "stats", "--no-stream", "--format", "json"],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, timeout=120, check=False)
    except subprocess.TimeoutExpired:
        return None
    try:
        rows = json.loads(proc.stdout or "[]")
    except ValueError:
        return None
    units = {"B": 1, "kB": 1e3, "KB": 1e3, "MB": 1e6, "GB": 1e9, "KiB": 1024, "MiB": 1024 ** 2, "GiB": 1024 ** 3}
    total = 0
    for row in rows:
        if not row.get("name", "").startswith("fabric-%s-" % INSTANCE):
            continue
        text = row.get("mem_usage", "0B").split("/")[0].strip()
        match = re.match(r"([\d.]+)\s*([A-Za-z]+)", text)
        if match:
            total += float(match.group(1)) * units.get(match.group(2), 1)
    return int(total)


def hot_spots(profile_path, count=12):
    stats = pstats.Stats(profile_path)
    rows = []
    for (filename, line, func), (_cc, calls, tottime, cumtime, _callers) in stats.stats.items():
        rows.append({"function": "%s:%d(%s)" % (os.path.relpath(filename, REPO) if filename.startswith(REPO) else filename, line, func),
                     "calls": calls, "tottime_s": round(tottime, 3), "cumtime_s": round(cumtime, 3)})
    return {"by_tottime": sorted(rows, key=lambda r: -r["tottime_s"])[:count],
            "total_s": round(sum(r["tottime_s"] for r in rows), 2)}


# --- the three lab nodes -------------------------------------------------------------------
NOOP_RUNS = 3


def median(values):
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2.0


def bench_lab():
    labctl("reset")
    labctl("inventory")
    started = time.monotonic()
    labctl("up")
    hosts = ["node01", "node02", "node03"]
    result = {"nodes": hosts, "up_s": round(time.monotonic() - started, 1)}
    say("3 lab nodes up; ping, first converge (with reboots), then %d times a no-op and a ping" % NOOP_RUNS)
    result["ping_before"] = ping("ib_nodes", 20, "ping-before")
    result["first_converge"] = playbook(SITE, hosts, "first-converge", extra=["-e", "infiniband_allow_reboot=true"])
    # Side by side on a noisy machine: each no-op followed by a ping, the ratio of the medians.
    noops, pings = [], [result["ping_before"]]
    for index in range(NOOP_RUNS):
        noops.append(playbook(SITE, hosts, "noop-converge-%d" % (index + 1)))
        pings.append(ping("ib_nodes", 20, "ping-after-%d" % (index + 1)))
    result["noop_converge"] = noops[0]
    add_task_split(result)
    result["noop_runs_s"] = [run["wall_s"] for run in noops]
    result["noop_runs_changed"] = [run["tasks_changed"] for run in noops]
    result["ping_runs_s"] = [run["wall_s"] for run in pings]
    result["ping_after"] = pings[-1]
    result["noop_median_s"] = median(result["noop_runs_s"])
    result["ping_median_s"] = median(result["ping_runs_s"])
    result["noop_to_ping_ratio"] = round(result["noop_median_s"] / result["ping_median_s"], 1)
    # The fleet's firmware starts where this converge left it (so that the fleet needs no reboot).
    converged = os.path.join(CACHE, "converged")
    shutil.rmtree(converged, ignore_errors=True)
    for host in hosts:
        os.makedirs(os.path.join(converged, host, "state"))
        shutil.copyfile(os.path.join(CACHE, "nodes", host, "state", "state.json"), os.path.join(converged, host, "state", "state.json"))
    # ... and its nodes from clones of these converged nodes (packages and files as the converge left them).
    for host in hosts:
        subprocess.run(["podman", "commit", "-q", "fabric-%s-%s" % (INSTANCE, host), "%s:%s" % (FLEET_IMAGES, host)],
                       stdout=subprocess.DEVNULL, check=True)
    say("naive baseline, twice")
    result["naive_run1"] = playbook(NAIVE, hosts, "naive-1")
    result["naive_run2"] = playbook(NAIVE, hosts, "naive-2")
    with open(os.path.join(CACHE, "logs", "lab-partial.json"), "w", encoding="utf-8") as handle:
        json.dump(result, handle, indent=1)
    labctl("reset")
    return result


# --- the baseline: an earlier commit's playbooks on the same lab, in the same run ----------------
BASELINE_TREE = os.path.join(REPO, ".cache", "bench-baseline")
BASELINE_COLLECTIONS = os.path.join(REPO, ".cache", "bench-baseline-collections")


def baseline_tree(ref):
    """A git worktree of ``ref`` and a collections path where fabric.infiniband is that tree (the other collections are
    .collections' own); returns the environment that runs its playbooks."""
    subprocess.run(["git", "worktree", "remove", "--force", BASELINE_TREE], cwd=REPO, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, check=False)
    shutil.rmtree(BASELINE_TREE, ignore_errors=True)
    subprocess.run(["git", "worktree", "prune"], cwd=REPO, check=False)
    subprocess.run(["git", "worktree", "add", "--detach", BASELINE_TREE, ref], cwd=REPO, stdout=subprocess.DEVNULL, check=True)
    shutil.rmtree(BASELINE_COLLECTIONS, ignore_errors=True)
    root = os.path.join(BASELINE_COLLECTIONS, "ansible_collections")
    ours = os.path.join(REPO, ".collections", "ansible_collections")
    os.makedirs(os.path.join(root, "fabric"))
    for namespace in os.listdir(ours):
        if namespace != "fabric":
            os.symlink(os.path.realpath(os.path.join(ours, namespace)), os.path.join(root, namespace))
    os.symlink(BASELINE_TREE, os.path.join(root, "fabric", "infiniband"))
    return {"ANSIBLE_CONFIG": os.path.join(BASELINE_TREE, "ansible.cfg"), "ANSIBLE_COLLECTIONS_PATH": BASELINE_COLLECTIONS}


def bench_baseline(ref):
    """The first converge and the no-op of ``ref``'s site.yml on fresh lab nodes, each no-op beside a ping."""
    environment = baseline_tree(ref)
    # The reboots and power cycles through this tree's labctl: the baseline's own cannot read today's simulator state.
    own = ["-e", json.dumps({name: [sys.executable, LABCTL, action, "{{ inventory_hostname }}"] for name, action in (
        ("infiniband_reboot_command", "reboot"), ("infiniband_power_cycle_command", "power-cycle"))})]
    commit = subprocess.run(["git", "rev-parse", "--short", ref], cwd=REPO, stdout=subprocess.PIPE, text=True, check=True).stdout.strip()
    site = os.path.join(BASELINE_TREE, "playbooks", "site.yml")
    hosts = ["node01", "node02", "node03"]
    labctl("reset")
    labctl("inventory")
    labctl("up")
    say("baseline %s: first converge (with reboots), then %d times a no-op and a ping" % (commit, NOOP_RUNS))
    result = {"ref": ref, "commit": commit}
    result["first_converge"] = playbook(site, hosts, "baseline-first-converge", extra=["-e", "infiniband_allow_reboot=true"] + own,
                                        environment=environment)
    noops, pings = [], []
    for index in range(NOOP_RUNS):
        noops.append(playbook(site, hosts, "baseline-noop-converge-%d" % (index + 1), extra=own, environment=environment))
        pings.append(ping("ib_nodes", 20, "baseline-ping-after-%d" % (index + 1)))
    result["noop_converge"] = noops[0]
    result["noop_runs_s"] = [run["wall_s"] for run in noops]
    result["noop_runs_changed"] = [run["tasks_changed"] for run in noops]
    result["ping_runs_s"] = [run["wall_s"] for run in pings]
    result["noop_median_s"] = median(result["noop_runs_s"])
    result["ping_median_s"] = median(result["ping_runs_s"])
    result["noop_to_ping_ratio"] = round(result["noop_median_s"] / result["ping_median_s"], 1)
    labctl("reset")
    subprocess.run(["git", "worktree", "remove", "--force", BASELINE_TREE], cwd=REPO, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, check=False)
    shutil.rmtree(BASELINE_COLLECTIONS, ignore_errors=True)
    return result


def tasks_per_node(run):
    """Task executions per node of a run (ok + skipped + failed, as the PLAY RECAP counts them): min and max."""
    counts = [h["ok"] + h["skipped"] + h["failed"] for h in (run.get("recap") or {}).values()]
    return (min(counts), max(counts)) if counts else (0, 0)


# --- the fleet -----------------------------------------------------------------------------
def deadline_left(deadline):
    return None if deadline is None else (deadline - datetime.datetime.now(datetime.timezone.utc)).total_seconds()


INOTIFY = "/proc/sys/fs/inotify/max_user_instances"
INOTIFY_PER_NODE = 8  # systemd and its services in one lab node hold 7 inotify instances (measured)


def raise_inotify(nodes, notes):
    """Every node's systemd counts against root's inotify instances (128 by default: about 10 nodes).

    Raised for the run only, and only upwards; bench_fleet puts the old value back.
    """
    with open(INOTIFY, encoding="utf-8") as handle:
        old = int(handle.read())
    need = 256 + INOTIFY_PER_NODE * nodes
    if old >= need:
        return None
    if os.geteuid() != 0:
        notes.append("fs.inotify.max_user_instances is %d: about %d systemd nodes fit; run as root to raise it" % (old, (old - 64) // 8))
        return None
    with open(INOTIFY, "w", encoding="utf-8") as handle:
        handle.write(str(need))
    notes.append("fs.inotify.max_user_instances raised from %d to %d for the fleet runs (each node's systemd holds about 7), "
                 "then put back" % (old, need))
    return old


def bench_fleet(sizes, forks, deadline, profile_size, notes, runs, repeats=2, sliced=None, sliced_only=False):
    old_inotify = raise_inotify(max(sizes), notes)
    try:
        _bench_fleet(sizes, forks, deadline, profile_size, runs, repeats, sliced, sliced_only)
    finally:
        labctl("down")
        if old_inotify is not None:
            with open(INOTIFY, "w", encoding="utf-8") as handle:
                handle.write(str(old_inotify))


def _bench_fleet(sizes, forks, deadline, profile_size, runs, repeats, sliced=None, sliced_only=False):
    """``sliced``: (fleet size, slice count) of the sliced workflow, or None; ``sliced_only``: at that size, the
    sliced workflow without the timed no-op runs of the whole fleet (its slices run every host once)."""
    converged = os.path.join(CACHE, "converged")
    labctl("reset")
    # One jsonfile fact cache for every fleet run, as AWX's use_fact_cache: the warm-up of the nodes new at a size runs with
    # --limit, and the sriov role checks their VF GUIDs against those of the nodes outside it (issue 33, class 1), which it
    # sees in the cache the earlier runs filled.
    shutil.rmtree(FACT_CACHE, ignore_errors=True)
    cached = {"ANSIBLE_CACHE_PLUGIN": "jsonfile", "ANSIBLE_CACHE_PLUGIN_CONNECTION": FACT_CACHE}
    baseline = memory_used()
    started_hosts, cost = 0, None  # cost: measured seconds per new host (up + warm-up + no-op)
    for size in sizes:
        left = deadline_left(deadline)
        # Seconds per new node (up and warm-up) and per node of the no-op, from the size before.
        need = cost and cost[0] * (size - started_hosts) + cost[1] * size * repeats * 1.2
        if need and left is not None and need > left:
            say("fleet of %d skipped: about %.0f s needed, %.0f s left before the deadline" % (size, need, left))
            runs.append({"hosts": size, "skipped": "about %.0f s needed, %.0f s left before the deadline (%s UTC)" % (
                need, left, deadline.strftime("%H:%M"))})
            continue
        clock = time.monotonic()
        labctl("inventory", "--fleet", str(size), "--firmware-from", converged, "--images", FLEET_IMAGES)
        up_started = time.monotonic()
        labctl("up")
        run = {"hosts": size, "node": "clone (podman commit) of a converged lab node: systemd, sshd, fabricsim; "
                                      "no switch ports (no ibsim, no port sync)",
               "up_s": round(time.monotonic() - up_started, 1)}
        hosts = ["fleet%03d" % (i + 1) for i in range(size)]
        new = hosts[started_hosts:]
        say("fleet of %d: warm-up converge of %d new nodes" % (size, len(new)))
        # A clone differs from its converged original only in its VF GUIDs (from the inventory name):
        # the warm-up runs the sriov role alone, with the consent a renamed host needs for its VFs to
        # take the GUIDs of its new name; the timed no-op below shows whether anything else moves.
        run["warmup"] = {k: v for k, v in playbook(SITE, new, "fleet-%d-warmup" % size, forks,
                                                   extra=["--tags", "discover,sriov", "--skip-tags", "verify", "--limit", ",".join(new),
                                                          "-e", json.dumps({"sriov_allow_guid_change": True})] + FLEET_EXTRA,
                                                   environment=cached).items()
                         if k in ("rc", "wall_s", "user_s", "sys_s", "tasks_run", "tasks_changed", "failed")}
        prepared = time.monotonic() - clock
        run["memory_used_bytes"] = memory_used() - baseline
        run["podman_stats_bytes"] = podman_memory()
        if sliced and sliced_only and size == sliced[0]:
            run["sliced"] = bench_sliced(hosts, sliced[1], forks)
            run["sliced_only"] = True
            runs.append(run)
            started_hosts = size
            continue
        noops, pings = [], []
        for attempt in range(1, repeats + 1):
            say("fleet of %d: no-op converge (forks %d) and ping, run %d of %d" % (size, forks, attempt, repeats))
            # verify.yml checks the switch fabric, which fleet nodes do not have (no ports): not in the fleet's converge.
            noop = playbook(SITE, hosts, "fleet-%d-noop-%d" % (size, attempt), forks, extra=["--skip-tags", "verify"] + FLEET_EXTRA,
                            environment=cached)
            noop.pop("recap", None)
            noop["firmware_totals"] = _totals(noop.pop("firmware", None))
            noops.append(noop)
            pings.append(ping("ib_nodes", forks, "fleet-%d-ping-%d" % (size, attempt)))
        # The machine is shared: the faster of the runs is the one least disturbed by other jobs.
        # Every run must change nothing (checks() looks at each of them).
        run["noop"] = min(noops, key=lambda r: r["wall_s"])
        run["ping"] = min(pings, key=lambda r: r["wall_s"])
        run["noop_runs"] = [{k: r[k] for k in ("wall_s", "user_s", "sys_s", "tasks_changed", "failed", "firmware_totals")}
                            for r in noops]
        run["ping_runs_s"] = [r["wall_s"] for r in pings]
        run["noop_to_ping_ratio"] = round(run["noop"]["wall_s"] / max(run["ping"]["wall_s"], 0.01), 1)
        run["seconds_per_host"] = round(run["noop"]["wall_s"] / size, 3)
        if size == profile_size:
            prof = os.path.join(CACHE, "logs", "fleet-%d.prof" % size)
            profiled = playbook(SITE, hosts, "fleet-%d-noop-cprofile" % size, forks, extra=["--skip-tags", "verify"] + FLEET_EXTRA, profile=prof,
                                environment=cached)
            run["controller_profile"] = {"wall_s": profiled["wall_s"], **hot_spots(prof)}
        if sliced and size == sliced[0]:
            # about two no-op runs of the whole fleet: the reference slice, the slices, the fabric job
            left = deadline_left(deadline)
            need = 2.2 * run["noop"]["wall_s"]
            if left is not None and need > left:
                say("sliced fleet of %d skipped: about %.0f s needed, %.0f s left before the deadline" % (size, need, left))
                run["sliced"] = {"skipped": "about %.0f s needed, %.0f s left before the deadline (%s UTC)" % (
                    need, left, deadline.strftime("%H:%M"))}
            else:
                run["sliced"] = bench_sliced(hosts, sliced[1], forks)
        runs.append(run)
        started_hosts = size
        cost = (prepared / max(len(new), 1), (run["noop"]["wall_s"] + run["ping"]["wall_s"]) / size)  # per run
        with open(os.path.join(CACHE, "logs", "fleet-partial.json"), "w", encoding="utf-8") as handle:
            json.dump(runs, handle, indent=1)


def slices_of(hosts, count):
    """The hosts of each slice: every ``count``-th host, so that the slices differ in size by one at most."""
    return [hosts[index::count] for index in range(count) if hosts[index::count]]


def _brief(run):
    return {k: run[k] for k in ("rc", "wall_s", "user_s", "sys_s", "hosts", "tasks_run", "tasks_changed", "failed", "wall_per_host_s")
            if k in run}


def bench_sliced(hosts, count, forks):
    """AWX's sliced workflow on the started fleet: ``nodes.yml`` once per slice, one slice after the other, with a
    jsonfile fact cache that the slices and the fabric job share (AWX's ``use_fact_cache``), then
    ``fabric_cluster.yml`` over every host from that cache. First, as the reference, ``nodes.yml`` over the
    first slice's hosts without the cache: what a run of that many hosts takes when nothing else is in it."""
    slices = slices_of(hosts, count)
    shutil.rmtree(FACT_CACHE, ignore_errors=True)
    os.makedirs(FACT_CACHE)
    cached = dict(ANSIBLE_CACHE_PLUGIN="jsonfile", ANSIBLE_CACHE_PLUGIN_CONNECTION=FACT_CACHE)
    result = {"hosts": len(hosts), "slices": len(slices), "forks": forks, "slice_hosts": [len(s) for s in slices]}
    say("sliced fleet of %d: nodes.yml over %d hosts without the fact cache (the reference)" % (len(hosts), len(slices[0])))
    reference = playbook(NODES, slices[0], "sliced-%d-reference" % len(hosts), forks, extra=["--limit", ",".join(slices[0])] + FLEET_EXTRA)
    result["reference"] = dict(_brief(reference), firmware_totals=_totals(reference.get("firmware")))
    result["slice_runs"] = []
    for index, members in enumerate(slices, 1):
        say("sliced fleet of %d: slice %d of %d (%d hosts), nodes.yml with the fact cache" % (len(hosts), index, len(slices), len(members)))
        run = playbook(NODES, members, "sliced-%d-slice-%d" % (len(hosts), index), forks, extra=["--limit", ",".join(members)] + FLEET_EXTRA,
                       environment=cached)
        run = dict(_brief(run), firmware_totals=_totals(run.get("firmware")), cached_hosts_before=result.get("cached_hosts", 0))
        run["to_reference"] = round(run["wall_s"] / max(reference["wall_s"], 0.01), 2)
        result["slice_runs"].append(run)
        result["cached_hosts"] = len(os.listdir(FACT_CACHE))
    say("sliced fleet of %d: fabric_cluster.yml over every host, from the fact cache of %d hosts" % (len(hosts), result["cached_hosts"]))
    # verify.yml's fabric checks need the switch ports fleet nodes do not have (as in the fleet's no-op)
    fabric = playbook(FABRIC_CLUSTER, hosts, "sliced-%d-fabric" % len(hosts), forks, extra=["--skip-tags", "verify"] + FLEET_EXTRA,
                      environment=cached)
    result["fabric_job"] = dict(_brief(fabric), firmware_totals=_totals(fabric.get("firmware")))
    result["slices_wall_s"] = round(sum(r["wall_s"] for r in result["slice_runs"]), 2)
    return result


def probe(size, notes):
    """Only start ``size`` fleet nodes (lab image, no converge): their memory, start time and ping.

    For a size whose converge does not fit in the time left: does the lab itself fit the machine?
    """
    old_inotify = raise_inotify(size, notes)
    try:
        labctl("reset")
        baseline = memory_used()
        labctl("inventory", "--fleet", str(size), "--firmware-from", os.path.join(CACHE, "converged"))
        started = time.monotonic()
        labctl("up", bounded=True)
        result = {"hosts": size, "node": "lab image (not converged), no switch ports", "up_s": round(time.monotonic() - started, 1),
                  "memory_used_bytes": memory_used() - baseline, "podman_stats_bytes": podman_memory()}
        result["ping"] = ping("ib_nodes", 20, "probe-%d-ping" % size)
        return result
    finally:
        labctl("down")
        if old_inotify is not None:
            with open(INOTIFY, "w", encoding="utf-8") as handle:
                handle.write(str(old_inotify))


def _most(noops, key):
    """The largest firmware total ``key`` over the runs, or "-" when none counted it."""
    counted = [(r.get("firmware_totals") or {}).get(key) for r in noops]
    counted = [c for c in counted if c is not None]
    return max(counted) if counted else "-"


def _totals(firmware):
    if not firmware:
        return None
    totals = {"adapters": len(firmware["per_adapter"]), "query": 0, "write": 0, "reset": 0,
              "adapters_not_one_query": 0, "reboots": sum(firmware["reboots_per_node"].values())}
    for counts in firmware["per_adapter"].values():
        for kind in ("query", "write", "reset"):
            totals[kind] += counts[kind]
        totals["adapters_not_one_query"] += counts["query"] != counts.get("expected_noop_queries", 1)
    return totals


def linearity(runs):
    """Time against hosts / forks (forks fixed): per size the seconds per unit, and whether each step
    up in size grew the wall time by no more than the size did (10 % allowed for noise).

    Each size's time is its faster no-op run (``--fleet-runs``)."""
    done = [r for r in runs if "noop" in r]
    per_unit = {r["hosts"]: round(r["noop"]["wall_s"] / (r["hosts"] / r["noop"]["forks"]), 2) for r in done}
    steps = [{"from": a["hosts"], "to": b["hosts"], "hosts_x": round(b["hosts"] / a["hosts"], 1),
              "time_x": round(b["noop"]["wall_s"] / a["noop"]["wall_s"], 2)} for a, b in zip(done, done[1:], strict=False)]
    verdict = all(s["time_x"] <= 1.1 * s["hosts_x"] for s in steps) if steps else None
    return {"seconds_per_hosts_over_forks": per_unit, "steps": steps, "no_faster_than_linear": verdict}


# --- machine -------------------------------------------------------------------------------
def machine():
    def out(argv):
        try:
            return subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, check=False).stdout.strip()
        except OSError:
            return None
    model = ""
    with open("/proc/cpuinfo", encoding="utf-8") as handle:
        for line in handle:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    with open("/proc/meminfo", encoding="utf-8") as handle:
        total = int(handle.readline().split()[1]) * 1024
    # Only variables that shape the run: the whole environment may hold secrets.
    shown = {k: v for k, v in env().items() if k.startswith(("ANSIBLE_", "FABRIC_LAB_", "PROFILE_TASKS_")) or k in ("LANG", "LC_ALL")}
    shown.update(ANSIBLE_COLLECTIONS_PATH=".collections", FABRIC_LAB_INVENTORY=".cache/lab-bench/inventory")
    return {"nproc": os.cpu_count(), "cpu": model, "memory_bytes": total, "kernel": platform.release(),
            "os": out(["sh", "-c", ". /etc/os-release && echo $PRETTY_NAME"]), "python": platform.python_version(),
            "ansible_core": out([os.path.join(BIN, "ansible"), "--version"]).splitlines()[0],
            "podman": out(["podman", "--version"]), "env": shown,
            "load_at_start": os.getloadavg()}


# --- output --------------------------------------------------------------------------------
def table(data):
    lab = data.get("lab")
    lines = []
    if lab:
        lines += ["| 3 lab nodes (forks 20) | wall s | s per node | tasks run | tasks changed | fw queries/adapter | fw writes "
                  "| max fw writes/adapter | fw version queries/adapter | fw burns | max reboots + power cycles/node |",
                  "|---|---|---|---|---|---|---|---|---|---|---|"]
        for key, label in (("first_converge", "first converge (reboots allowed)"), ("noop_converge", "no-op re-converge"),
                           ("naive_run1", "naive baseline, run 1"), ("naive_run2", "naive baseline, run 2")):
            run = lab[key]
            fw = run["firmware"]
            queries = sorted({c["query"] for c in fw["per_adapter"].values()})
            writes = sum(c["write"] for c in fw["per_adapter"].values())
            cycles = fw.get("power_cycles_per_node", {})
            versions = sorted({c.get("version_query", 0) for c in fw["per_adapter"].values()})
            lines.append("| %s | %.1f | %.1f | %d | %d | %s | %d | %d | %s | %d | %s |" % (
                label, run["wall_s"], run["wall_s"] / len(lab["nodes"]), run["tasks_run"], run["tasks_changed"],
                "-".join(str(q) for q in (queries[0], queries[-1])) if len(queries) > 1 else queries[0], writes,
                max(c["write"] for c in fw["per_adapter"].values()),
                "-".join(str(q) for q in (versions[0], versions[-1])) if len(versions) > 1 else versions[0],
                sum(c.get("burn", 0) for c in fw["per_adapter"].values()),
                max(n + cycles.get(h, 0) for h, n in fw["reboots_per_node"].items())))
        if "noop_runs_s" in lab:
            lines.append("| no-op re-converge, each run (median) | %s (%.1f) | | | %s | | | | | | |" % (
                " / ".join("%.1f" % x for x in lab["noop_runs_s"]), lab["noop_median_s"],
                " / ".join(str(x) for x in lab["noop_runs_changed"])))
            lines.append("| `ansible -m ping`, before and after each no-op (median) | %s (%.2f) | | | | | | | | | |" % (
                " / ".join("%.2f" % x for x in lab["ping_runs_s"]), lab["ping_median_s"]))
        else:
            lines.append("| `ansible -m ping` (before / after) | %.1f / %.1f | | | | | | | | | |" % (
                lab["ping_before"]["wall_s"], lab["ping_after"]["wall_s"]))
        base = lab.get("baseline")
        if base:
            for key, label in (("first_converge", "first converge (reboots allowed)"), ("noop_converge", "no-op re-converge")):
                run = base[key]
                lines.append("| baseline %s: %s | %.1f | %.1f | %d | %d | | | | | | |" % (
                    base["commit"], label, run["wall_s"], run["wall_s"] / len(lab["nodes"]), run["tasks_run"], run["tasks_changed"]))
            lines.append("| baseline %s: no-op each run (median); ping (median) | %s (%.1f); %.2f | | | | | | | | | |" % (
                base["commit"], " / ".join("%.1f" % x for x in base["noop_runs_s"]), base["noop_median_s"], base["ping_median_s"]))
        low, high = tasks_per_node(lab["noop_converge"])
        lines += ["", "No-op converge / ping: **%.1fx** (goal <= 5x); tasks per node on a no-op: %d-%d (goal <= 25)%s." % (
            lab["noop_to_ping_ratio"], low, high,
            "; baseline %s: %.1fx, %d-%d tasks per node, first converge %.1f s against %.1f s now (x%.2f, goal <= 0.6)" % (
                base["commit"], base["noop_to_ping_ratio"], tasks_per_node(base["noop_converge"])[0],
                tasks_per_node(base["noop_converge"])[1], base["first_converge"]["wall_s"], lab["first_converge"]["wall_s"],
                lab["first_converge"]["wall_s"] / base["first_converge"]["wall_s"]) if base else ""), ""]
    fleet = data.get("fleet") or []
    if fleet:
        lines += ["| fleet nodes | no-op wall s, faster run (each run) | s per host | s per host-task | ping s | no-op/ping | controller user+sys s "
                  "| controller max RSS | nodes' memory (podman stats) | host memory used, delta (free) | changed | fw writes | reboots |",
                  "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
        for run in fleet:
            if "noop" not in run:
                said = "the sliced workflow only (below)" if run.get("sliced_only") else "skipped: %s" % run.get("skipped", "")
                lines.append("| %d | %s | | | | | | | | | | | |" % (run["hosts"], said))
                continue
            noop = run["noop"]
            stats = run.get("podman_stats_bytes")
            every = run.get("noop_runs") or []
            lines.append("| %d | %s | %.3f | %.4f | %.1f | %.1f | %.1f | %s | %s | %.2f GiB | %d | %s | %s |" % (
                run["hosts"], "%.1f" % noop["wall_s"] + (" (%s)" % " / ".join("%.1f" % r["wall_s"] for r in every) if len(every) > 1 else ""),
                run["seconds_per_host"], noop["wall_per_host_task_s"], run["ping"]["wall_s"],
                run["noop_to_ping_ratio"], noop["user_s"] + noop["sys_s"],
                "%.0f MiB" % (noop["maxrss_bytes"] / 1024 ** 2) if noop.get("maxrss_bytes") else "-",
                "%.2f GiB" % (stats / 1024 ** 3) if stats else "-",
                run["memory_used_bytes"] / 1024 ** 3, max(r["tasks_changed"] for r in every or [noop]),
                _most(every or [noop], "write"), _most(every or [noop], "reboots")))
    for run in fleet:
        lines += sliced_table(run.get("sliced"), run["hosts"])
    probes = data.get("fleet_probes") or []
    if probes:
        lines += ["", "| fleet nodes started only (no converge) | start s | nodes' memory (podman stats) | host memory used, delta (free) | ping s |",
                  "|---|---|---|---|---|"]
        for run in probes:
            stats = run.get("podman_stats_bytes")
            lines.append("| %d | %.0f | %s | %.2f GiB | %.1f (%d/%d pong) |" % (
                run["hosts"], run["up_s"], "%.2f GiB" % (stats / 1024 ** 3) if stats else "-", run["memory_used_bytes"] / 1024 ** 3,
                run["ping"]["wall_s"], run["ping"]["hosts_ok"], run["hosts"]))
    return "\n".join(lines) + "\n"


def sliced_table(sliced, size):
    """The sliced workflow's runs: each slice against the reference run of as many hosts, and the fabric job."""
    if not sliced:
        return []
    if "skipped" in sliced:
        return ["", "Sliced workflow over %d fleet nodes: skipped: %s" % (size, sliced["skipped"])]
    lines = ["", "| sliced workflow, %d fleet nodes in %d slices (forks %d) | hosts | wall s | s per host | against the reference "
             "| controller user+sys s | tasks run | changed | failed | fw writes | reboots | facts in the cache before |" % (
                 sliced["hosts"], sliced["slices"], sliced["forks"]),
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]

    def row(label, run, ratio, cached):
        fw = run.get("firmware_totals") or {}
        return "| %s | %d | %.1f | %.3f | %s | %.1f | %d | %d | %d | %s | %s | %s |" % (
            label, run["hosts"], run["wall_s"], run["wall_per_host_s"], ratio, run["user_s"] + run["sys_s"], run["tasks_run"],
            run["tasks_changed"], run["failed"], fw.get("write", "-"), fw.get("reboots", "-"), cached)

    lines.append(row("reference: `nodes.yml` over the hosts of slice 1, without the fact cache", sliced["reference"], "1.00", "-"))
    for index, run in enumerate(sliced["slice_runs"], 1):
        lines.append(row("slice %d: `nodes.yml`, fact cache" % index, run, "%.2f" % run["to_reference"], run["cached_hosts_before"]))
    lines.append(row("fabric job: `fabric_cluster.yml` over every host, fact cache", sliced["fabric_job"], "-", sliced["cached_hosts"]))
    lines.append("| the %d slices one after the other | %d | %.1f | | | | | | | | | |" % (
        sliced["slices"], sliced["hosts"], sliced["slices_wall_s"]))
    return lines


# A 5x7 bitmap font for the digits and the few letters the plot's labels use.
FONT = {
    "0": "01110100011001110101110011000101110", "1": "00100011000010000100001000010001110",
    "2": "01110100010000100010001000100011111", "3": "11111000100010000010000011000101110",
    "4": "00010001100101010010111110001000010", "5": "11111100001111000001000011000101110",
    "6": "00110010001000011110100011000101110", "7": "11111000010001000100010000100001000",
    "8": "01110100011000101110100011000101110", "9": "01110100011000101111000010001001100",
    ".": "00000000000000000000000000110001100", "s": "00000000000111010000011100000111110",
    "h": "10000100001011011001100011000110001", "o": "00000000000111010001100011000101110",
    "t": "01000010001110001000010000100100110", "n": "00000000001011011001100011000110001",
    "p": "00000000001111010001111101000010000", "i": "00100000000110000100001000010001110",
    "g": "00000011111000110001011110000101110", " ": "0" * 35, "-": "00000000000000011111000000000000000",
    "c": "00000000000111010000100001000101110", "e": "00000000000111010001111111000001110",
    "w": "00000000001000110001101011010101010", "a": "00000000000111000001011111000101111",
    "l": "01100001000010000100001000010001110", "y": "00000000001000110001011110000101110",
    "r": "00000000001011011001100001000010000",
    "v": "00000000001000110001100010101000100",
    "b": "10000100001011011001100011000111110",
    "u": "00000000001000110001100011001101101",
    "d": "00001000010110110011100011000101111",
    "k": "10000100001001010100110001010010010",
    "f": "00110010010100011100010000100001000",
    "m": "00000000001101010101101011000110001",
    "x": "00000000001000101010001000101010001",
    "(": "00010001000100001000010000010000010",
    ")": "01000001000001000010000100010001000",
    ":": "00000011000110000000011000110000000",
    "/": "00000000010001000100010001000000000",
}


def plot_png(path, fleet):
    """Time vs hosts: no-op converge (blue) and ping (grey), on linear axes; our own PNG writer (zlib)."""
    width, height, left, bottom, top, right = 640, 400, 60, 40, 20, 20
    pixels = [[(255, 255, 255)] * width for _row in range(height)]

    def dot(x, y, colour, size=1):
        for dx in range(-size, size + 1):
            for dy in range(-size, size + 1):
                if 0 <= x + dx < width and 0 <= y + dy < height:
                    pixels[y + dy][x + dx] = colour

    def line(x0, y0, x1, y1, colour, size=1):
        steps = max(abs(x1 - x0), abs(y1 - y0), 1)
        for i in range(steps + 1):
            dot(round(x0 + (x1 - x0) * i / steps), round(y0 + (y1 - y0) * i / steps), colour, size)

    def text(x, y, string, colour=(0, 0, 0)):
        for char in string:
            bits = FONT.get(char, FONT[" "])
            for i, bit in enumerate(bits):
                if bit == "1":
                    pixels[y + i // 5][x + i % 5] = colour
            x += 6

    done = [r for r in fleet if "noop" in r]
    max_x = max([r["hosts"] for r in done] + [1])
    max_y = max([r["noop"]["wall_s"] for r in done] + [1]) * 1.1

    def xy(hosts, seconds):
        return (left + round((width - left - right) * hosts / max_x), height - bottom - round((height - bottom - top) * seconds / max_y))

    line(left, height - bottom, width - right, height - bottom, (0, 0, 0))
    line(left, top, left, height - bottom, (0, 0, 0))
    for r in done:
        x = xy(r["hosts"], 0)[0]
        line(x, height - bottom, x, height - bottom + 4, (0, 0, 0))
        text(x - 6, height - bottom + 8, str(r["hosts"]))
    for i in range(5):
        seconds = max_y * i / 4
        y = xy(0, seconds)[1]
        line(left - 4, y, left, y, (0, 0, 0))
        text(4, y - 3, "%.0f" % seconds)
    text(width // 2 - 20, height - 14, "hosts")
    text(4, 4, "s: no-op converge (blue), ping (grey), forks fixed")
    for key, colour in ((lambda r: r["noop"]["wall_s"], (31, 90, 200)), (lambda r: r["ping"]["wall_s"], (130, 130, 130))):
        points = [xy(r["hosts"], key(r)) for r in done]
        for (x0, y0), (x1, y1) in zip(points, points[1:], strict=False):
            line(x0, y0, x1, y1, colour)
        for x, y in points:
            dot(x, y, colour, 3)
    raw = b"".join(b"\x00" + bytes(c for px in row for c in px) for row in pixels)

    def chunk(kind, payload):
        return struct.pack(">I", len(payload)) + kind + payload + struct.pack(">I", zlib.crc32(kind + payload) & 0xFFFFFFFF)

    with open(path, "wb") as handle:
        handle.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
                     + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


def performance_doc(data, stamp, table_text):
    m = data["machine"]
    lab = data.get("lab") or {}
    lines = [
        "<!--",
        "Copyright (c) 2026, fabric.infiniband developers",
        "GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)",
        "SPDX-License-Identifier: GPL-3.0-or-later",
        "-->",
        "# Performance: measured, not assumed",
        "",
        "Written by `make bench` (`scripts/bench.py`) on %s UTC; the full result is `results/bench-%s.json`," % (data["started"], stamp),
        "with the table in `results/bench-%s.md` and the plot in `results/bench-%s.png`." % (stamp, stamp),
        "Every figure below comes from the same run on the lab instance `bench` (its own containers, never the",
        "demo lab), so that ratios hold on a noisy machine. `make bench` is not part of `make test`.",
        "",
        "## Machine",
        "",
        "| | |", "|---|---|",
        "| CPU | %s, nproc %s (shared with other jobs; load at start %s) |" % (m["cpu"], m["nproc"], " ".join("%.2f" % x for x in m["load_at_start"])),
        "| memory | %.1f GiB |" % (m["memory_bytes"] / 1024 ** 3),
        "| OS, kernel | %s, %s |" % (m["os"], m["kernel"]),
        "| Python, Ansible | %s, %s |" % (m["python"], m["ansible_core"]),
        "| podman | %s |" % m["podman"],
        "| environment of the runs (`ANSIBLE_*`, `FABRIC_LAB_*`, `PROFILE_TASKS_*`; ansible.cfg otherwise) | %s |" % (
            ", ".join("`%s=%s`" % kv for kv in sorted(m["env"].items())) or "none"),
        "",
        "## Figures",
        "",
        table_text,
        checks_table(data.get("checks", [])),
        "![no-op converge and ping time vs hosts](../results/bench-%s.png)" % stamp,
        "",
    ]
    split = (lab or {}).get("noop_task_split")
    if split:
        lines += ["## What the no-op converge runs, per node", "",
                  "Each task of the no-op converge of the 3 lab nodes, by where it ran (from the run's log and the action "
                  "each task name has in roles/ and playbooks/):", "",
                  "| node | module run on the node | controller only | skipped | not told (templated name) |", "|---|---|---|---|---|"]
        lines += ["| %s | %d | %d | %d | %d |" % (h, c["node"], c["controller"], c["skipped"], c["unknown"]) for h, c in sorted(split.items())]
        lines += ["",
                  "A ping is one module run on the node. Each role is one task (its action plugin: checks, plan, facts and the",
                  "modules it runs on the node; plugins/plugin_utils/role_step.py), so most of the no-op's tasks run a module on",
                  "the node, and what they read must be read: one discovery, one firmware query per adapter, the pending record,",
                  "the run lock, the kernel modules. (The flow that handed state from play to play ran 27 tasks per node in all,",
                  "81 over the 3 nodes: bench of 2026-11-25; the chains of controller tasks that followed it, 126-141.) What keeps",
                  "the no-op above 5 pings is the module runs themselves: each distinct module is built (AnsiBallZ) once per run",
                  "and started in a Python of its own on the node, so a role's reads that one module could do cost one start each.",
                  "",
                  "A no-op runs 10 modules per node (2026-11-29; 11 before sriov_vfs took the VFs' boot unit into its own run,",
                  "15 before the steps took the preflight's readings): the preflight's hca_info (with the pending record, proved",
                  "writable), node_facts and kernel_modules (check mode); the run lock, taken and released; firmware_info;",
                  "mlxconfig (link_type's query); kernel_modules (rdma_netns's files); sriov_vfs (the VFs and their boot unit);",
                  "port_health_info (and fabric_topology_info on one node). Each distinct module costs the controller 0.2-0.5",
                  "CPU-s to build once per run (ansible-core's module_common.modify_module; node_facts the most, 0.48 s, for",
                  "ansible-core's fact collectors), and the hosts of a task wait for its first build. On the lab's nodes every",
                  "sysfs attribute a module reads is answered by the simulator's FUSE daemon (about 0.43 ms a read; a kernel's",
                  "sysfs answers in microseconds): an hca_info run on node02 (23 PCI functions, 20 of them VFs) reads 676",
                  "attributes.",
                  "",
                  "Why 5 pings is out of reach on this machine, measured on 2026-11-29 (the containers' CPU from their cgroup's",
                  "cpuacct.usage, the controller's from /usr/bin/time of ansible-playbook, 3 lab nodes): the lab's nodes and the",
                  "controller share 2 cores, and a no-op is CPU-bound, about 24-26 CPU-s in all (controller 10-11, each node",
                  "4.2-5.1) for 14-17 s of wall time. A module run costs its node 0.29-0.34 CPU-s however little it does (ten",
                  "ping tasks: 2.9-3.4 CPU-s per node), because ansible-core 2.21's module runtime is imported from the AnsiBallZ",
                  "zip, compiled anew, on every run (python -X importtime: 0.16-0.17 s for ansible.module_utils.basic; a run",
                  "takes 0.24-0.27 s alone, 0.15-0.17 s from the same files with their bytecode cached, which AnsiBallZ does not",
                  "keep). A ping of the 3 nodes costs 2.2-2.5 CPU-s in all. So the ratio is about the module runs per node (and",
                  "the controller's share per task) over one: 5x needs about 5 module runs per node, which means reading what",
                  "every role needs (adapters, packages, kernel modules, firmware, link types, the netns files, the VFs, the",
                  "counters) in one module run for all the roles and handing it to each role's step: one reading shared by the",
                  "roles, which couples them. Tried and measured, without gain: building the run's modules in parallel in the",
                  "preflight's workers (15.4 s against 15.0: CPU-bound, an earlier build only moves the work), gc.freeze() in",
                  "ansible-playbook before it forks (within the noise of the machine: 8.6-11.4 controller CPU-s either way),",
                  "ZIP_STORED payloads (the same CPU).",
                  ""]
    if lab:
        lines += ["## Where the no-op converge spends its time (3 lab nodes, profile_tasks)", ""]
        lines += ["| task | s |", "|---|---|"] + ["| %s | %.2f |" % (t["task"].replace("|", "\\|"), t["s"]) for t in lab["noop_converge"]["slowest_tasks"]]
        lines.append("")
    fleet = data.get("fleet") or []
    profiled = [r for r in fleet if "controller_profile" in r]
    if profiled:
        p = profiled[0]["controller_profile"]
        lines += ["## Controller hot spots (cProfile of ansible-playbook, no-op converge of %d fleet nodes)" % profiled[0]["hosts"], "",
                  "The main process only (templating, strategy, results); the forks' own work shows in user/sys above.", "",
                  "| function | calls | own s | cumulative s |", "|---|---|---|---|"]
        lines += ["| `%s` | %d | %.2f | %.2f |" % (r["function"], r["calls"], r["tottime_s"], r["cumtime_s"]) for r in p["by_tottime"]]
        lines.append("")
    lin = data.get("linearity") or {}
    if lin:
        lines += ["## Scale", "",
                  "No-op converge time per step up in fleet size (forks fixed): %s. Every step grew the time no more than the "
                  "number of hosts (10 %% allowed for noise): **%s**." % (
                      "; ".join("%d -> %d hosts (x%.1f): time x%.2f" % (st["from"], st["to"], st["hosts_x"], st["time_x"]) for st in lin["steps"]),
                      {True: "yes", False: "no", None: "not enough sizes"}[lin["no_faster_than_linear"]]),
                  "",
                  "[scaling.md](scaling.md) measures where the extra time of the 50 -> 200 step goes (controller CPU of the main",
                  "process and of the workers, the fork cost of a larger controller, ansible-core's queue polling).", ""]
    lines += [
        "## How it is measured",
        "",
        "- **Reproduce**: `make bench` (about 35 minutes on 2 shared cores; `BENCH_ARGS=\"--sizes 1,10 --deadline HH:MM\"` bounds it).",
        "  It never touches the demo lab: `FABRIC_LAB_INSTANCE=bench` gives `lab/labctl.py` its own containers, network,",
        "  SSH ports, ibsim port and `.cache/lab-bench/` (with its generated inventory and every run's log under `logs/`).",
        "- **3 lab nodes**: the demo lab's nodes, fresh, with the switch fabric (ibsim and its OpenSM). `ansible -m ping`,",
        "  `site.yml -e infiniband_allow_reboot=true`, `site.yml` again (the no-op), ping again. Tasks run and changed",
        "  are the PLAY RECAP's `ok` (+`failed`) and `changed` summed over the hosts; wall time per node is the run's",
        "  wall time over its nodes (they run in parallel). The no-op runs three times, each followed by a ping (and one ping"
        "  before the first converge); the ratio divides the median no-op by the median ping.",
        "- **Firmware calls and reboots** come from the simulator, on the host side: each node's call log",
        "  (`calls.jsonl`, `mlxconfig`/`mstconfig`/`mlxfwreset`/`mstfwreset` calls by kind and device, and the firmware role's",
        "  `flint`/`mstflint` version queries and burns per card; a query",
        "  without `-d` counts for every adapter of the node) and `runtime.boot_count` of its state, read before and",
        "  after each run: a reboot is one power-on, a lab power cycle two (labctl's cold start, then the container's",
        "  start), and the power cycles are the run's changed `Power-cycle the node` tasks.",
        "- **Naive baseline** (`bench/naive.yml`): `mlxconfig|mstconfig -d <pci> -y set ...` of the same values on every",
        "  run, and a handler that reboots on that change, as the roles in the reference list do; run twice after",
        "  the converge.",
        "- **Fleet**: `labctl inventory --fleet N` cycles the three demo nodes (their descriptions and host_vars), with",
        "  no switch ports: ibsim serves at most 10 clients, so fleet nodes have no port sync (their InfiniBand ports",
        "  stay DOWN; nothing in `site.yml` for these inventories needs an ACTIVE port). Each node is a clone",
        "  (`podman commit`) of the converged lab node it copies, its firmware as that converge left it, so a new",
        "  node needs no package install and no reboot: a warm-up of the sriov role (its VF GUIDs follow the",
        "  inventory name) on the nodes new at that size, then the timed no-op converge and ping of all of them, twice",
        "  (`--fleet-runs`; the faster run of each is the figure, on a shared machine the least disturbed one, and",
        "  every run must change nothing), with the same forks at every size (`--skip-tags verify`: verify.yml checks a switch fabric these nodes do",
        "  not have). Memory: the nodes' cgroups (`podman stats`, page cache included) and",
        "  the change of the host's used memory (`free`; other jobs on the machine move it too). Controller CPU is",
        "  user+sys of ansible-playbook and its forks (and their ssh clients); the nodes' own CPU is not in it.",
        "- **Controller profile**: the no-op converge once more under `python -m cProfile` (ansible-playbook's main",
        "  process; the forks' work shows in user/sys).",
        "- **Sliced workflow** (`--slices`, `--sliced-size`): on the fleet of that size after its no-op runs, AWX's workflow",
        "  \"InfiniBand site, sliced\" (`awx/job_templates.yml`) by hand: `playbooks/nodes.yml` once per slice (every n-th",
        "  host; one slice after the other, where AWX may run them side by side on several execution nodes) with a jsonfile",
        "  fact cache in `.cache/lab-bench/fact-cache` that the slices and the fabric job share (`ANSIBLE_CACHE_PLUGIN=jsonfile`,",
        "  as AWX's `use_fact_cache`), then `playbooks/fabric_cluster.yml` over every host from that cache (`--skip-tags",
        "  verify`, as the fleet's no-op). Each slice is compared with the reference: `nodes.yml` over the first slice's",
        "  hosts without the cache, just before.",
        "",
    ]
    if data.get("notes"):
        lines += ["## Notes from this run", ""]
    for note in data.get("notes", []):
        lines.append("- " + note)
    return "\n".join(lines).rstrip() + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--sizes", default="1,10,50,200", help="fleet sizes (comma-separated; empty: no fleet)")
    parser.add_argument("--forks", type=int, default=20, help="forks for the fleet runs (ansible.cfg's 20 by default)")
    parser.add_argument("--fleet-runs", type=int, default=2, help="no-op converges (each with a ping) per fleet size; the faster counts")
    parser.add_argument("--profile-size", type=int, default=10, help="fleet size whose no-op converge runs once more under cProfile")
    parser.add_argument("--deadline", help="HH:MM UTC: skip a fleet size that would not end by then")
    parser.add_argument("--slices", type=int, default=4,
                        help="slices of the sliced workflow (nodes.yml per slice with a shared fact cache, then fabric_cluster.yml); 0: none")
    parser.add_argument("--sliced-size", type=int, help="fleet size the sliced workflow runs at (one of --sizes; the largest by default)")
    parser.add_argument("--sliced-only", action="store_true",
                        help="at the sliced size, only the sliced workflow (no timed no-op of the whole fleet: the slices run every host once)")
    parser.add_argument("--merge", metavar="JSON",
                        help="an earlier result whose lab part and other fleet sizes this run's fleet sizes join (results/ then holds both)")
    parser.add_argument("--no-lab", action="store_true",
                        help="skip the 3-node part (the fleet uses .cache/lab-bench/converged and the images of an earlier run with --keep-images)")
    parser.add_argument("--keep-images", action="store_true", help="keep the converged node images for a later --no-lab run")
    parser.add_argument("--baseline", metavar="REF",
                        help="also run REF's site.yml (a git worktree of that commit) on fresh lab nodes: its first converge and "
                             "no-op beside this tree's, in the same run")
    parser.add_argument("--render", metavar="JSON", help="only write the table, plot and docs/performance.md again from a result")
    parser.add_argument("--probe", type=int, metavar="N", help="with --render: add a probe of N started fleet nodes (memory, start, ping)")
    args = parser.parse_args(argv)
    if args.deadline:
        hour, minute = (int(x) for x in args.deadline.split(":"))
        DEADLINE[0] = datetime.datetime.now(datetime.timezone.utc).replace(hour=hour, minute=minute, second=0, microsecond=0)
    if args.render:
        with open(args.render, encoding="utf-8") as handle:
            data = json.load(handle)
        if args.probe:
            try:
                data.setdefault("fleet_probes", []).append(probe(args.probe, data["notes"]))
            except SystemExit as exc:
                data["notes"].append("probe of %d started nodes: %s" % (args.probe, exc))
        for key, run in (data.get("lab") or {}).items():
            log = os.path.join(CACHE, "logs", key.replace("_converge", "-converge").replace("naive_run", "naive-") + ".log")
            if isinstance(run, dict) and "firmware" in run and "power_ons_per_node" not in run["firmware"] and os.path.exists(log):
                with open(log, encoding="utf-8") as handle:
                    count_power_cycles(run["firmware"], handle.read())
        add_task_split(data.get("lab"))
        data["checks"] = checks(data)
        write_outputs(data)
        return 0
    now = datetime.datetime.now(datetime.timezone.utc)
    deadline = None
    if args.deadline:
        hour, minute = (int(x) for x in args.deadline.split(":"))
        deadline = now.replace(hour=hour, minute=minute, second=0, microsecond=0)
        DEADLINE[0] = deadline
    os.makedirs(os.path.join(CACHE, "logs"), exist_ok=True)
    data = {"started": now.strftime("%Y-%m-%d %H:%M:%S"), "machine": machine(), "notes": []}
    try:
        if not args.no_lab:
            data["lab"] = bench_lab()
            if args.baseline:
                data["lab"]["baseline"] = bench_baseline(args.baseline)
        sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
        if sizes:
            data["fleet"] = []
            sliced = None
            if args.slices > 1:
                sliced = (args.sliced_size or max(sizes), args.slices)
                if sliced[0] not in sizes:
                    parser.error("--sliced-size %d is not one of --sizes %s" % (sliced[0], args.sizes))
            try:
                bench_fleet(sizes, args.forks, deadline, args.profile_size, data["notes"], data["fleet"], max(args.fleet_runs, 1), sliced,
                            args.sliced_only)
            except (SystemExit, subprocess.CalledProcessError, OSError) as exc:
                # What the smaller sizes measured still stands; say where it stopped.
                # the cause is at the end of labctl's output, after the long podman command line
                text = str(exc)
                said = text if len(text) <= 1200 else text[:200] + " [...] " + text[-1000:]
                data["notes"].append("fleet stopped after %d sizes: %s" % (len(data["fleet"]), said))
            data["linearity"] = linearity(data["fleet"])
    finally:
        labctl("down")
        if not args.keep_images:
            for image in ("%s:node0%d" % (FLEET_IMAGES, i) for i in (1, 2, 3)):
                subprocess.run(["podman", "rmi", "-f", image], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    if args.merge:
        data = merged(args.merge, data, " ".join(argv if argv is not None else sys.argv[1:]))
    data["checks"] = checks(data)
    write_outputs(data)
    return 0


def add_task_split(lab):
    """The lab's first no-op converge split by task_split, from its log: when bench_lab has run it, or for a result
    from before the split was measured while the log is still there."""
    log = os.path.join(CACHE, "logs", "noop-converge-1.log")
    if lab and "noop_task_split" not in lab and os.path.exists(log):
        with open(log, encoding="utf-8") as handle:
            lab["noop_task_split"] = task_split(handle.read(), lab["nodes"])


def merged(path, data, command):
    """The earlier result at ``path`` with this run's fleet sizes in place of (or beside) its own, and a note that says
    which figures come from which run."""
    with open(path, encoding="utf-8") as handle:
        earlier = json.load(handle)
    sizes = {run["hosts"] for run in data.get("fleet") or []}
    fleet = [run for run in earlier.get("fleet") or [] if run["hosts"] not in sizes] + list(data.get("fleet") or [])
    fleet.sort(key=lambda run: run["hosts"])
    result = dict(earlier, fleet=fleet, started=data["started"])
    if data.get("lab"):
        result["lab"] = data["lab"]
    result["linearity"] = linearity(fleet)
    result["notes"] = list(earlier.get("notes") or []) + list(data.get("notes") or []) + [
        "fleet sizes %s measured by a later run started %s UTC (`scripts/bench.py %s`); the %s from the run started %s UTC, "
        "on the same machine and code" % (", ".join(str(s) for s in sorted(sizes)), data["started"], command,
                                          "lab part and the other sizes" if not data.get("lab") else "other sizes", earlier["started"])]
    result["parts"] = list(earlier.get("parts") or [earlier["started"]]) + [data["started"]]
    add_task_split(result.get("lab"))
    return result


def write_outputs(data):
    """results/bench-<UTC>.{json,md,png} (the latest only) and docs/performance.md."""
    stamp = datetime.datetime.strptime(data["started"], "%Y-%m-%d %H:%M:%S").strftime("%Y%m%dT%H%M%SZ")
    os.makedirs(RESULTS, exist_ok=True)
    for old in glob.glob(os.path.join(RESULTS, "bench-*")):
        os.remove(old)
    table_text = table(data)
    with open(os.path.join(RESULTS, "bench-%s.json" % stamp), "w", encoding="utf-8") as handle:
        json.dump(data, handle, indent=1, sort_keys=True)
    with open(os.path.join(RESULTS, "bench-%s.md" % stamp), "w", encoding="utf-8") as handle:
        handle.write(table_text + "\n" + checks_table(data.get("checks", [])))
    plot_png(os.path.join(RESULTS, "bench-%s.png" % stamp), data.get("fleet") or [])
    with open(os.path.join(REPO, "docs", "performance.md"), "w", encoding="utf-8") as handle:
        handle.write(performance_doc(data, stamp, table_text))
    print(table_text)


def checks(data):
    """The issue's goals, each with what this run measured and whether it is met."""
    found = []

    def check(goal, measured, met):
        found.append({"goal": goal, "measured": measured, "met": bool(met)})

    lab = data.get("lab")
    if lab:
        first, noop = lab["first_converge"], lab["noop_converge"]
        changed = lab.get("noop_runs_changed", [noop["tasks_changed"]])
        check("no-op re-converge changes nothing (every run)", " / ".join("%d changed" % c for c in changed), not any(changed))
        check("no-op / ping <= 5x", "%.1fx" % lab["noop_to_ping_ratio"], lab["noop_to_ping_ratio"] <= 5)
        low, high = tasks_per_node(noop)
        check("no-op: at most 25 task executions per node, skips included", "%d-%d" % (low, high), high <= 25)
        base = lab.get("baseline")
        if base:
            ratio = first["wall_s"] / base["first_converge"]["wall_s"]
            check("first converge with reboots: at most 0.6x the baseline's (%s), same run" % base["commit"],
                  "%.1f s against %.1f s: x%.2f" % (first["wall_s"], base["first_converge"]["wall_s"], ratio), ratio <= 0.6)
        per_adapter = noop["firmware"]["per_adapter"]
        check("no-op: exactly one firmware query per adapter with a link type, none for an Ethernet-only one",
              ", ".join("%s %d%s" % (k, v["query"], "" if v.get("expected_noop_queries", 1) else " (Ethernet-only)")
                        for k, v in sorted(per_adapter.items())),
              all(v["query"] == v.get("expected_noop_queries", 1) for v in per_adapter.values()))
        writes = sum(v["write"] for v in noop["firmware"]["per_adapter"].values())
        check("no-op: zero firmware writes", "%d" % writes, writes == 0)
        first_writes = {k: v["write"] for k, v in first["firmware"]["per_adapter"].items() if v["write"]}
        # each role writes its own parameters (link_type, sriov): at most one write per role, still one reboot
        check("change run: at most one write per adapter and role (link_type, sriov)",
              ", ".join("%s %d" % kv for kv in sorted(first_writes.items())) or "none", all(w <= 2 for w in first_writes.values()))
        cycles = first["firmware"].get("power_cycles_per_node", {})
        boots = dict((h, n + cycles.get(h, 0)) for h, n in first["firmware"]["reboots_per_node"].items())
        check("first converge: at most one reboot or power cycle per node", ", ".join("%s %d" % kv for kv in sorted(boots.items())),
              all(b <= 1 for b in boots.values()))
        noop_boots = sum(noop["firmware"]["reboots_per_node"].values())
        check("no-op: zero reboots", "%d" % noop_boots, noop_boots == 0)
    lin = data.get("linearity") or {}
    if lin.get("no_faster_than_linear") is not None:
        steps = "; ".join("%d->%d hosts: time x%.2f" % (st["from"], st["to"], st["time_x"]) for st in lin["steps"])
        check("fleet time grows no faster than hosts / forks", steps, lin["no_faster_than_linear"])
    sized = dict((run["hosts"], run) for run in data.get("fleet") or [] if "noop" in run)
    if 50 in sized:
        check("fleet no-op at 50 nodes, forks 20: at most 8x a ping of the same fleet", "%.1fx" % sized[50]["noop_to_ping_ratio"],
              sized[50]["noop_to_ping_ratio"] <= 8)
        if 10 in sized:
            ratio = sized[50]["seconds_per_host"] / sized[10]["seconds_per_host"]
            check("fleet no-op: time per host at 50 nodes within 1.3x of that at 10",
                  "%.3f s against %.3f s: x%.2f" % (sized[50]["seconds_per_host"], sized[10]["seconds_per_host"], ratio), ratio <= 1.3)
    for run in data.get("fleet") or []:
        sliced = run.get("sliced") or {}
        if "slice_runs" in sliced:
            every = [("reference", sliced["reference"])] + [("slice %d" % i, r) for i, r in enumerate(sliced["slice_runs"], 1)]
            every.append(("fabric job", sliced["fabric_job"]))
            check("sliced workflow over %d fleet nodes: the reference, every slice and the fabric job run clean over their hosts and "
                  "change nothing, no firmware write, no reboot" % sliced["hosts"],
                  "; ".join("%s: rc %d, %d hosts, %d failed, %d changed, %s writes, %s reboots" % (
                      label, r["rc"], r["hosts"], r["failed"], r["tasks_changed"], (r.get("firmware_totals") or {}).get("write", "-"),
                      (r.get("firmware_totals") or {}).get("reboots", "-")) for label, r in every),
                  all(r["rc"] == 0 and not r["failed"] and not r["tasks_changed"]
                      and not (r.get("firmware_totals") or {}).get("write") and not (r.get("firmware_totals") or {}).get("reboots")
                      for _label, r in every)
                  and [r["hosts"] for r in sliced["slice_runs"]] == sliced["slice_hosts"] and sliced["fabric_job"]["hosts"] == sliced["hosts"])
            check("sliced workflow over %d fleet nodes: no slice takes longer than the reference run of as many hosts without the "
                  "fact cache (10 %% allowed for noise)" % sliced["hosts"],
                  ", ".join("slice %d x%.2f" % (i, r["to_reference"]) for i, r in enumerate(sliced["slice_runs"], 1)),
                  all(r["to_reference"] <= 1.1 for r in sliced["slice_runs"]))
        if "noop" in run:
            for index, noop in enumerate(run.get("noop_runs") or [run["noop"]], 1):
                fw = noop.get("firmware_totals") or {}
                check("fleet of %d, no-op run %d: runs clean, changes nothing, one query per adapter with a link type (none for an "
                      "Ethernet-only one), no write, no reboot" % (run["hosts"], index),
                      "%d failed, %d changed, %d adapters not at their one query (or none), %d writes, %d reboots" % (
                          noop["failed"], noop["tasks_changed"], fw.get("adapters_not_one_query", 0), fw.get("write", 0),
                          fw.get("reboots", 0)),
                      not noop["failed"] and noop["tasks_changed"] == 0 and not fw.get("adapters_not_one_query")
                      and not fw.get("write") and not fw.get("reboots"))
    return found


def checks_table(found):
    if not found:
        return ""
    lines = ["| goal | measured | met |", "|---|---|---|"]
    lines += ["| %s | %s | %s |" % (c["goal"], c["measured"], "yes" if c["met"] else "**no**") for c in found]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
