# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What a role could have written on a lab node (run on the node, python3 only).

``snapshot.py save <file>`` records: ``state``, the SHA-256 of the simulator's state (firmware, VFs, GUIDs,
netns mode...) without ``fabric_view``, which the port sync rewrites on its own; ``writes``, the firmware
writes and resets in the call log; ``files``, the SHA-256 of every file under the directories the roles
manage. ``snapshot.py compare <file>`` prints, as a JSON list, what differs from that record now: the
state, the new writes and the paths of the files added, removed or changed (empty: nothing was written).
"""

import hashlib
import json
import os
import sys

STATE = "/var/lib/fabricsim/state.json"
CALLS = "/var/log/fabricsim/calls.jsonl"
DIRS = ("/etc", "/var/lib/fabric-infiniband", "/usr/local/bin", "/usr/local/lib/fabric-infiniband")


def state_digest():
    with open(STATE, encoding="utf-8") as handle:
        state = json.load(handle)
    state.pop("fabric_view", None)
    return hashlib.sha256(json.dumps(state, sort_keys=True).encode()).hexdigest()


def writes():
    out = []
    if os.path.exists(CALLS):
        with open(CALLS, encoding="utf-8") as handle:
            for line in handle:
                call = json.loads(line)
                if call.get("kind") in ("write", "reset"):
                    out.append(" ".join(call.get("argv", [])))
    return out


def files():
    out = {}
    for top in DIRS:
        for root, _dirs, names in os.walk(top):
            for name in names:
                path = os.path.join(root, name)
                if os.path.islink(path) or not os.path.isfile(path):
                    out[path] = "link:" + os.readlink(path) if os.path.islink(path) else "special"
                    continue
                try:
                    with open(path, "rb") as handle:
                        out[path] = hashlib.sha256(handle.read()).hexdigest()
                except OSError:
                    out[path] = "unreadable"
    return out


def snapshot():
    return {"state": state_digest(), "writes": writes(), "files": files()}


def compare(old, new):
    out = ["the simulated hardware (%s)" % STATE] if old["state"] != new["state"] else []
    out.extend("call: %s" % call for call in new["writes"][len(old["writes"]):])
    paths = set(old["files"]) | set(new["files"])
    out.extend("file: %s" % path for path in sorted(paths) if old["files"].get(path) != new["files"].get(path))
    return out


def main(argv):
    if len(argv) != 3 or argv[1] not in ("save", "compare"):
        sys.stderr.write("usage: snapshot.py save|compare <file>\n")
        return 2
    if argv[1] == "save":
        with open(argv[2], "w", encoding="utf-8") as handle:
            json.dump(snapshot(), handle, sort_keys=True)
        return 0
    with open(argv[2], encoding="utf-8") as handle:
        old = json.load(handle)
    json.dump(compare(old, snapshot()), sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
