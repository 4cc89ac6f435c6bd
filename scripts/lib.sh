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

# Probe one interpreter: print "<major*100+minor> <real executable> <x.y.z>", or nothing
# (and fail) if it does not run. Virtualenvs (such as .venv itself, first on PATH under
# make) are rejected; pyenv shims that do not resolve fail to run and are skipped.
python_probe() {
    "$1" -c 'import sys; assert sys.prefix == sys.base_prefix; v = sys.version_info; print(v[0] * 100 + v[1], sys.executable, "%d.%d.%d" % v[:3])' 2>/dev/null
}

# Choose the controller Python. ansible-core 2.20+ needs Python >= 3.12 on the
# controller; 2.19 is the newest line for 3.11, so 3.11 is the fallback (Debian 12).
#   1. $FABRIC_PYTHON if set (3.11 or newer, not a virtualenv);
#   2. else the newest Python >= 3.12: python3.14/3.13/3.12 and python3 on PATH, then
#      pyenv versions in ~/.pyenv/versions (or $PYENV_ROOT);
#   3. else Python 3.11: /usr/bin/python3 if it is 3.11, else python3.11 on PATH.
# Sets CHOSEN_PYTHON (real executable), CHOSEN_PYTHON_NUM (e.g. 313),
# CHOSEN_PYTHON_VERSION (e.g. 3.13.0) and CHOSEN_PYTHON_WHY; returns 1 if none qualifies.
# Call it directly, not in $(...), or the variables are lost.
choose_python() {
    local candidates=() c out num best="" best_num=0
    CHOSEN_PYTHON="" CHOSEN_PYTHON_NUM="" CHOSEN_PYTHON_VERSION="" CHOSEN_PYTHON_WHY=""
    if [ -n "${FABRIC_PYTHON:-}" ]; then
        out="$(python_probe "${FABRIC_PYTHON}")" || return 1
        [ "${out%% *}" -ge 311 ] 2>/dev/null || return 1
        best="${out}"
        CHOSEN_PYTHON_WHY="set by FABRIC_PYTHON"
    else
        for c in python3.14 python3.13 python3.12 python3; do
            c="$(command -v "$c" 2>/dev/null)" && candidates+=("$c")
        done
        for c in "${PYENV_ROOT:-${HOME}/.pyenv}"/versions/3.*/bin/python; do
            [ -x "$c" ] && candidates+=("$c")
        done
        for c in "${candidates[@]}"; do
            out="$(python_probe "$c")" || continue
            num="${out%% *}"
            [ "${num}" -ge 312 ] 2>/dev/null || continue
            if [ "${num}" -gt "${best_num}" ]; then
                best_num="${num}"
                best="${out}"
            fi
        done
        if [ -n "${best}" ]; then
            CHOSEN_PYTHON_WHY="newest Python >= 3.12 found"
        else
            candidates=(/usr/bin/python3)
            c="$(command -v python3.11 2>/dev/null)" && candidates+=("$c")
            for c in "${candidates[@]}"; do
                out="$(python_probe "$c")" || continue
                if [ "${out%% *}" = 311 ]; then
                    best="${out}"
                    break
                fi
            done
            [ -n "${best}" ] || return 1
            CHOSEN_PYTHON_WHY="no Python >= 3.12 found, falling back to Python 3.11"
        fi
    fi
    CHOSEN_PYTHON_NUM="${best%% *}"
    best="${best#* }"
    CHOSEN_PYTHON="${best% *}"
    CHOSEN_PYTHON_VERSION="${best##* }"
}

python_missing_message() {
    if [ -n "${FABRIC_PYTHON:-}" ]; then
        cat <<MSG
FABRIC_PYTHON=${FABRIC_PYTHON} is not usable: it must run, be Python 3.11 or newer
(ansible-core 2.19 needs 3.11, 2.20+ needs 3.12) and not be a virtualenv.
MSG
        return
    fi
    cat <<'MSG'
no Python >= 3.11 found for the controller (ansible-core 2.21 needs >= 3.12, 2.19 needs 3.11).
Looked for python3.14, python3.13, python3.12 and python3 on PATH and in ~/.pyenv/versions/,
then for Python 3.11 as /usr/bin/python3 or python3.11 on PATH.
Install one, for example:
  Debian 13:  apt-get install python3 python3-venv        (Python 3.13)
  Debian 12:  apt-get install python3 python3-venv        (Python 3.11, ansible-core 2.19)
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
