#!/usr/bin/env bash
# The lab test: playbooks/site.yml on the simulated lab of `make demo`, from fresh nodes to
# verified (check mode first, then through ansible-runner as AWX runs it, with reboots), then again
# (0 changed). tests/lab/ says what is asserted. It RESETS the demo lab (`labctl reset`:
# the nodes start fresh) and leaves it down.
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
require_venv
cd "${REPO_ROOT}"

header "lab: tests/lab on the demo lab (inventories/lab)"
# --durations: the time of each test in the summary (the run through ansible-runner is the long one).
exec python -m pytest -p no:cacheprovider -v --durations=0 tests/lab "$@"
