#!/usr/bin/env bash
# The tests that pin what the collection takes from ansible-core's internals, against every supported
# ansible-core release (tests/ansible-core-releases.txt), each in a virtualenv of its own under
# .cache/releases/<version>/ (made once, then reused; about a minute each the first time):
#   - the preload callback: the plugin loader loads the filter and test plugins in ansible-playbook, and a
#     worker forked for a task finds them loaded (plugins/callback/preload.py);
#   - node_facts: ansible-core's fact collectors give what setup gives (plugins/modules/node_facts.py);
#   - the run_id lookup and fact_current filter: a worker is a forked child of ansible-playbook, one identity
#     per run (plugins/plugin_utils/node_state.py).
# The other unit tests run with the ansible-core of .venv only (scripts/units.sh).
#
#   scripts/releases.sh                 every release of the list
#   scripts/releases.sh 2.19.14         only these
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
require_venv
cd "${REPO_ROOT}"

LIST=tests/ansible-core-releases.txt
TESTS=(
    tests/unit/plugins/callback/test_preload.py
    tests/unit/plugins/modules/test_node_facts.py
    tests/unit/plugins/plugin_utils/test_node_state.py
    # hostvars.raw_get: the registered results of a host that left the play (the verify report's "failed" or "unreachable")
    tests/unit/plugins/action/test_verify_stopped.py
)
# The test tools at the versions .venv has.
TOOLS=()
for tool in pytest pytest-mock; do
    pin="$(grep -E "^${tool}==" requirements-dev.txt)" || die "no pin of ${tool} in requirements-dev.txt"
    TOOLS+=("${pin}")
done

mapfile -t releases < <(sed -n 's/^ansible-core==\([0-9][0-9.]*\)$/\1/p' "${LIST}")
[ "${#releases[@]}" -gt 0 ] || die "no ansible-core==X.Y.Z line in ${LIST}"
if [ "$#" -gt 0 ]; then
    for wanted in "$@"; do
        printf '%s\n' "${releases[@]}" | grep -qx "${wanted}" || die "${wanted} is not in ${LIST} (${releases[*]})"
    done
    releases=("$@")
fi

choose_python || die "$(python_missing_message)"

failed=()
for version in "${releases[@]}"; do
    header "releases: ansible-core ${version} (${CHOSEN_PYTHON_VERSION})"
    venv="${CACHE_DIR}/releases/${version}"
    want="${CHOSEN_PYTHON} ansible-core==${version} ${TOOLS[*]}"
    if [ "$(cat "${venv}/.stamp" 2>/dev/null)" != "${want}" ]; then
        info "making ${venv#"${REPO_ROOT}"/} (log: .cache/logs/releases-${version}.log)"
        rm -rf "${venv}"
        mkdir -p "${CACHE_DIR}/logs"
        if ! { "${CHOSEN_PYTHON}" -m venv "${venv}" \
                && "${venv}/bin/python" -m pip install -q "ansible-core==${version}" "${TOOLS[@]}"; } \
                >"${CACHE_DIR}/logs/releases-${version}.log" 2>&1; then
            tail -20 "${CACHE_DIR}/logs/releases-${version}.log" >&2
            die "cannot install ansible-core ${version} with Python ${CHOSEN_PYTHON_VERSION}"
        fi
        printf '%s' "${want}" >"${venv}/.stamp"
    fi
    # The venv's own ansible-playbook for the tests' real runs (they take it next to sys.executable).
    if PATH="${venv}/bin:${PATH}" PYTHONPATH="${COLLECTIONS_DIR}" \
            "${venv}/bin/python" -m pytest -p no:cacheprovider -q "${TESTS[@]}"; then
        ok "ansible-core ${version}: passed"
    else
        failed+=("${version}")
    fi
done

if [ "${#failed[@]}" -gt 0 ]; then
    die "the tests of ansible-core's internals failed with ansible-core ${failed[*]}"
fi
ok "ansible-core ${releases[*]}: the internals the collection uses behave as its tests expect"
