#!/usr/bin/env bash
# The lab test: playbooks/site.yml on the simulated lab of `make demo`, from fresh nodes to
# verified (check mode first, then as an AWX job through `ansible-runner transmit | worker |
# process`, with reboots), then again (0 changed); the sliced AWX workflow the same way; and
# README.md's controller path with the lowest supported ansible-core on two nodes
# (test_lab_user_controller.py: its virtualenv is kept in ~/.cache/fabric-infiniband/).
# tests/lab/ says what is asserted. It RESETS the demo lab (`labctl reset`: the nodes start fresh)
# and leaves it down; with FABRIC_LAB_INSTANCE=<name>, that lab instance instead (lab/labctl.py).
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
require_venv
cd "${REPO_ROOT}"

if [ -n "${FABRIC_LAB_INSTANCE:-}" ] && [ "${FABRIC_LAB_INSTANCE}" != lab ]; then
    header "lab: tests/lab on the lab instance ${FABRIC_LAB_INSTANCE}"
else
    header "lab: tests/lab on the demo lab (inventories/lab)"
fi
# --durations: the time of each test in the summary (the AWX jobs through ansible-runner are the long ones).
exec python -m pytest -p no:cacheprovider -v --durations=0 tests/lab "$@"
