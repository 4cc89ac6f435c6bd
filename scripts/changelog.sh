#!/usr/bin/env bash
# Changelog: the fragments in changelogs/fragments/ and changelogs/changelog.yaml are valid.
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
require_venv
cd "${REPO_ROOT}"

header "changelog: antsibull-changelog lint"
antsibull-changelog lint
antsibull-changelog lint-changelog-yaml changelogs/changelog.yaml
info "$(find changelogs/fragments -name '*.y*ml' | wc -l) fragment(s), changelog.yaml valid"
