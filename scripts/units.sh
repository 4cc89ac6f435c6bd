#!/usr/bin/env bash
# Unit tests: the collection's (tests/unit, with the collection importable as
# ansible_collections.fabric.infiniband from .collections/) and the simulator's (lab/tests).
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
require_venv
cd "${REPO_ROOT}"

run_pytest() {
    local dir="$1"; shift
    if [ -z "$(find "${dir}" -name 'test_*.py' -print -quit 2>/dev/null)" ]; then
        info "no tests in ${dir}/ yet: nothing to run"
        return 0
    fi
    python -m pytest -p no:cacheprovider "$@" "${dir}"
}

header "units: tests/unit (collection)"
# The collection is imported through .collections/ansible_collections/fabric/infiniband,
# which links to this checkout.
PYTHONPATH="${COLLECTIONS_DIR}${PYTHONPATH:+:${PYTHONPATH}}" run_pytest tests/unit

header "units: lab/tests (simulator)"
run_pytest lab/tests
