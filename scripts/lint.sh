#!/usr/bin/env bash
# Lint: ruff (Python in plugins/, tests/, lab/, scripts/), yamllint (all YAML),
# ansible-lint (production profile, offline). Stops at the first linter that fails.
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
require_venv
cd "${REPO_ROOT}"

py_dirs=()
for d in plugins tests lab scripts; do
    [ -d "$d" ] && py_dirs+=("$d")
done

header "lint: ruff check ${py_dirs[*]}"
ruff check --no-cache "${py_dirs[@]}"

header "lint: yamllint"
yamllint --strict .

header "lint: ansible-lint"
ansible-lint
