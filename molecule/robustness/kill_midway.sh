#!/usr/bin/env bash
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# kill_midway.sh <container> <ansible-playbook args...>
# Runs ansible-playbook in a process group of its own and kills the whole group (SIGKILL, as a lost
# controller or an OOM kill would) as soon as <container>'s simulator logs a successful firmware write:
# the run stops half-way, after a write and before the role could record what waits for a reboot.
# Fails when the playbook ends before that.
set -euo pipefail
container="$1"
shift

writes() {
    podman exec "${container}" python3 -c 'import json
n = 0
try:
    for line in open("/var/log/fabricsim/calls.jsonl"):
        call = json.loads(line)
        n += call["kind"] == "write" and call["rc"] == 0
except FileNotFoundError:
    pass
print(n)'
}

before="$(writes)"
setsid ansible-playbook "$@" >/dev/null 2>&1 &
pid=$!
start=$SECONDS
while kill -0 "${pid}" 2>/dev/null; do
    if [ "$(writes)" -gt "${before}" ]; then
        kill -KILL -- "-${pid}"
        wait "${pid}" || true
        echo "killed ansible-playbook $((SECONDS - start)) s after its start, after a firmware write on ${container}"
        exit 0
    fi
    sleep 0.3
done
wait "${pid}" || true
echo "ansible-playbook ended before any firmware write on ${container}: nothing was killed" >&2
exit 1
