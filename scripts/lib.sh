# Shared by the scripts in this directory; source it, do not run it.
# shellcheck shell=bash
# Variables set here are used by the scripts that source this file.
# shellcheck disable=SC2034

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${REPO_ROOT}/.venv"
COLLECTIONS_DIR="${REPO_ROOT}/.collections"
CACHE_DIR="${REPO_ROOT}/.cache"
# Downloads shared by all checkouts on this machine (the ansible wheel).
DOWNLOAD_CACHE="${XDG_CACHE_HOME:-${HOME}/.cache}/fabric-infiniband"

# Everything that runs Ansible must find the dependencies and this collection in
# .collections/ (molecule otherwise tries to reach Galaxy).
export ANSIBLE_COLLECTIONS_PATH="${COLLECTIONS_DIR}"
export PATH="${VENV}/bin:${PATH}"
export PIP_DISABLE_PIP_VERSION_CHECK=1

# No colour codes in logs (CI): NO_COLOR is honoured by ansible, ansible-lint, ruff, pytest.
[ -t 1 ] || export NO_COLOR=1
if [ -t 1 ] && [ -z "${NO_COLOR:-}" ]; then
    _bold=$'\e[1m'; _red=$'\e[31m'; _green=$'\e[32m'; _reset=$'\e[0m'
else
    _bold=''; _red=''; _green=''; _reset=''
fi

header() {
    printf '\n%s==== %s ====%s\n' "${_bold}" "$*" "${_reset}"
}

info() {
    printf '%s\n' "$*"
}

die() {
    printf '%sERROR:%s %s\n' "${_red}" "${_reset}" "$*" >&2
    exit 1
}

ok() {
    printf '%s%s%s\n' "${_green}" "$*" "${_reset}"
}

# Fail early with a clear message when `make deps` has not run.
require_venv() {
    [ -x "${VENV}/bin/ansible" ] || die "no virtualenv in ${VENV}: run 'make deps' first"
    [ -e "${COLLECTIONS_DIR}/ansible_collections/fabric/infiniband" ] \
        || die "collections missing in ${COLLECTIONS_DIR}: run 'make deps' first"
}

# Seconds since the epoch with sub-second precision, and a difference in seconds.
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

# Print the newest Python >= 3.12 on this machine (ansible-core 2.20+ needs it on the
# controller). Order of search: $FABRIC_PYTHON if set; python3.14/3.13/3.12 and python3
# on PATH; pyenv versions in ~/.pyenv/versions (or $PYENV_ROOT). pyenv shims that do
# not resolve are skipped, because each candidate is actually run.
find_python() {
    local candidates=() c out best="" best_ver=0 ver
    if [ -n "${FABRIC_PYTHON:-}" ]; then
        candidates=("${FABRIC_PYTHON}")
    else
        for c in python3.14 python3.13 python3.12 python3; do
            c="$(command -v "$c" 2>/dev/null)" && candidates+=("$c")
        done
        for c in "${PYENV_ROOT:-${HOME}/.pyenv}"/versions/3.*/bin/python; do
            [ -x "$c" ] && candidates+=("$c")
        done
    fi
    for c in "${candidates[@]}"; do
        # "<major*100+minor> <real executable>", or nothing if it does not run.
        # Virtualenvs (such as .venv itself, first on PATH under make) are skipped.
        out="$("$c" -c 'import sys; assert sys.prefix == sys.base_prefix; print(sys.version_info[0] * 100 + sys.version_info[1], sys.executable)' 2>/dev/null)" || continue
        ver="${out%% *}"
        [ "${ver}" -ge 312 ] 2>/dev/null || continue
        if [ "${ver}" -gt "${best_ver}" ]; then
            best_ver="${ver}"
            best="${out#* }"
        fi
    done
    [ -n "${best}" ] || return 1
    printf '%s\n' "${best}"
}

python_missing_message() {
    cat <<'MSG'
no Python >= 3.12 found (ansible-core 2.21 needs it on the controller).
Looked for python3.14, python3.13, python3.12 and python3 on PATH and in ~/.pyenv/versions/.
Install one, for example:
  Debian 13:  apt-get install python3 python3-venv        (Python 3.13)
  Debian 12:  pyenv install 3.13                           (Debian 12 ships 3.11 only)
or point FABRIC_PYTHON at an interpreter: make FABRIC_PYTHON=/opt/python3.13/bin/python3 deps
MSG
}

# A step banner and a failure line for scripts/test.sh.
banner() {
    printf '\n%s######## %s ########%s\n' "${_bold}" "$*" "${_reset}"
}

fail_line() {
    printf '%s%s%s\n' "${_red}" "$*" "${_reset}"
}
