#!/usr/bin/env bash
# Install everything `make demo` and `make test` need, and remember it:
#   1. Debian packages from scripts/apt-packages.txt (podman, runc, netavark, ibsim, ...)
#      and a podman drop-in selecting netavark and runc;
#   2. .venv/ with the controller Python chosen by choose_python (scripts/lib.sh): the
#      newest Python >= 3.12 with requirements-dev.txt (ansible-core 2.21), or, where
#      there is none (Debian 12), Python 3.11 with requirements-dev-py311.txt
#      (ansible-core 2.19);
#   3. .collections/: the Ansible collections from the PyPI `ansible` wheel that matches
#      that ansible-core (no Galaxy) and a link fabric/infiniband -> this checkout.
# Each part has a stamp holding a hash of its inputs; a part whose inputs did not
# change is skipped, so a second call takes well under a second.
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# Per controller Python: the pinned tools and the community package whose wheel
# provides the collections (its ansible-core requirement must match the ansible-core
# pin in the requirements file). Set by select_toolset.
#   Python >= 3.12: requirements-dev.txt (ansible-core 2.21.x) and ansible 14.x;
#   Python 3.11:    requirements-dev-py311.txt (ansible-core 2.19.x) and ansible 12.x.
ANSIBLE_BUNDLE_PY312="ansible==14.5.0"
ANSIBLE_BUNDLE_PY311="ansible==12.3.0"
REQUIREMENTS=""
ANSIBLE_BUNDLE=""
# Collections needed by the tests only (molecule's podman driver); the run-time ones
# come from collections/requirements.yml.
TEST_COLLECTIONS=(containers.podman)
PODMAN_DROPIN="/etc/containers/containers.conf.d/50-fabric-lab.conf"

APT_LIST="${REPO_ROOT}/scripts/apt-packages.txt"
APT_STAMP="${CACHE_DIR}/apt.stamp"
VENV_STAMP="${VENV}/.fabric-deps.stamp"
COLL_STAMP="${COLLECTIONS_DIR}/.fabric-deps.stamp"
LOG_DIR="${CACHE_DIR}/logs"

hash_of() {
    # sha256 over the given files' contents and any extra words on stdin.
    { cat "$@"; cat; } | sha256sum | cut -d' ' -f1
}

stamp_ok() {
    [ -f "$1" ] && [ "$(cat "$1")" = "$2" ]
}

apt_packages() {
    sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "${APT_LIST}" | tr -d '[:blank:]'
}

as_root() {
    if [ "$(id -u)" -eq 0 ]; then
        "$@"
    elif command -v sudo >/dev/null 2>&1; then
        sudo "$@"
    else
        die "need root for: $* (run as root, or install sudo)"
    fi
}

# --- podman: netavark network backend and runc runtime ---------------------------
# Podman 4.3 (Debian 12) reads /usr/share/containers/containers.conf, then
# /etc/containers/containers.conf, then /etc/containers/containers.conf.d/*.conf in
# order. A key already set by the administrator is left alone (and reported if it
# differs); the drop-in only sets the ones nobody set. runc because crun fails with
# "cgroups in hybrid mode not supported" on these machines.
podman_key_set_elsewhere() {
    local key="$1" f
    for f in /etc/containers/containers.conf /etc/containers/containers.conf.d/*.conf; do
        if [ -f "$f" ] && [ "$f" != "${PODMAN_DROPIN}" ] && grep -Eq "^[[:space:]]*${key}[[:space:]]*=" "$f"; then
            return 0
        fi
    done
    return 1
}

podman_dropin_content() {
    printf '# Written by fabric.infiniband scripts/deps.sh for the simulated lab and molecule.\n'
    if ! podman_key_set_elsewhere network_backend; then
        printf '[network]\nnetwork_backend = "netavark"\n'
    fi
    if ! podman_key_set_elsewhere runtime; then
        printf '[engine]\nruntime = "runc"\n'
    fi
}

configure_podman() {
    local want
    want="$(podman_dropin_content)"
    if [ "$(cat "${PODMAN_DROPIN}" 2>/dev/null)" != "${want}" ]; then
        as_root mkdir -p "$(dirname "${PODMAN_DROPIN}")"
        printf '%s\n' "${want}" | as_root tee "${PODMAN_DROPIN}" >/dev/null
        info "wrote ${PODMAN_DROPIN}"
    fi
    local got
    got="$(podman info --format '{{.Host.NetworkBackend}} {{.Host.OCIRuntime.Name}}' 2>/dev/null || true)"
    if [ "${got}" != "netavark runc" ]; then
        info "WARNING: podman uses '${got:-?}' (network backend, OCI runtime); the lab expects 'netavark runc'."
        info "         Check /etc/containers/containers.conf and /etc/containers/containers.conf.d/."
    fi
}

# --- 1. Debian packages ----------------------------------------------------------
deps_apt() {
    local key missing=() pkg
    key="$(hash_of "${APT_LIST}" "${BASH_SOURCE[0]}" </dev/null)"
    if stamp_ok "${APT_STAMP}" "${key}"; then
        return 0
    fi
    header "deps: Debian packages"
    command -v dpkg-query >/dev/null || die "this needs Debian (dpkg/apt); install by hand: $(apt_packages | tr '\n' ' ')"
    for pkg in $(apt_packages); do
        if ! dpkg-query -W -f='${db:Status-Abbrev}' "${pkg}" 2>/dev/null | grep -q '^ii'; then
            missing+=("${pkg}")
        fi
    done
    if [ "${#missing[@]}" -gt 0 ]; then
        info "installing: ${missing[*]}"
        mkdir -p "${LOG_DIR}"
        # env passes DEBIAN_FRONTEND through sudo, which resets the environment.
        if ! { as_root env DEBIAN_FRONTEND=noninteractive apt-get update \
                && as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"; } \
                >"${LOG_DIR}/apt.log" 2>&1; then
            tail -n 30 "${LOG_DIR}/apt.log" >&2
            die "apt-get failed (full log: ${LOG_DIR}/apt.log)"
        fi
    else
        info "all $(apt_packages | wc -l) packages already installed"
    fi
    configure_podman
    mkdir -p "${CACHE_DIR}"
    printf '%s\n' "${key}" >"${APT_STAMP}"
}

# --- 2. virtualenv -----------------------------------------------------------------
# Requirements file and bundle for the chosen Python, and the line saying so.
select_toolset() {
    if [ "${CHOSEN_PYTHON_NUM}" -ge 312 ]; then
        REQUIREMENTS="${REPO_ROOT}/requirements-dev.txt"
        ANSIBLE_BUNDLE="${ANSIBLE_BUNDLE_PY312}"
    else
        REQUIREMENTS="${REPO_ROOT}/requirements-dev-py311.txt"
        ANSIBLE_BUNDLE="${ANSIBLE_BUNDLE_PY311}"
    fi
    local core why="${CHOSEN_PYTHON_WHY}"
    core="$(sed -n 's/^ansible-core==\([^[:space:]#]*\).*/\1/p' "${REQUIREMENTS}")"
    [ -n "${core}" ] || die "no ansible-core==<version> pin in ${REQUIREMENTS#"${REPO_ROOT}"/}"
    [ "${CHOSEN_PYTHON_NUM}" -ge 312 ] || why="${why} (ansible-core 2.20+ needs Python >= 3.12; 2.19 is the newest for 3.11)"
    info "deps: Python ${CHOSEN_PYTHON_VERSION} (${CHOSEN_PYTHON}) with ansible-core ${core}," \
        "${REQUIREMENTS#"${REPO_ROOT}"/} and ${ANSIBLE_BUNDLE}: ${why}"
}

deps_venv() {
    local python="$1" key reqs="${REQUIREMENTS#"${REPO_ROOT}"/}"
    # The interpreter's path and full version and the requirements file's content: a
    # change of any of them (another Python, 3.11 <-> 3.12+) rebuilds .venv.
    key="$(printf '%s %s\n' "${python}" "$("${python}" -VV)" | hash_of "${REQUIREMENTS}")"
    if stamp_ok "${VENV_STAMP}" "${key}" && [ -x "${VENV}/bin/python" ]; then
        return 0
    fi
    header "deps: virtualenv .venv ($("${python}" -V) from ${python})"
    rm -rf "${VENV}"
    mkdir -p "${LOG_DIR}"
    if ! "${python}" -m venv "${VENV}" >"${LOG_DIR}/venv.log" 2>&1; then
        cat "${LOG_DIR}/venv.log" >&2
        die "${python} -m venv failed; for a Debian python, install python3-venv (or python3.X-venv)"
    fi
    info "installing ${reqs} (log: ${LOG_DIR}/pip.log)"
    if ! "${VENV}/bin/python" -m pip install --disable-pip-version-check -r "${REQUIREMENTS}" \
            >"${LOG_DIR}/pip.log" 2>&1; then
        grep -v 'is ignored: it is neither a file nor a directory' "${LOG_DIR}/pip.log" | tail -n 30 >&2
        die "pip install -r ${reqs} failed (full log: ${LOG_DIR}/pip.log)"
    fi
    # Not `ansible --version | head -n 1`: ansible-core 2.21 can fail with a broken pipe
    # when head exits first, and pipefail then stops this script.
    local version
    version="$("${VENV}/bin/ansible" --version)" || die "${VENV}/bin/ansible --version failed"
    printf '%s\n' "${version%%$'\n'*}"
    printf '%s\n' "${key}" >"${VENV_STAMP}"
}

# --- 3. collections ----------------------------------------------------------------
deps_collections() {
    local key
    key="$(printf '%s %s\n' "${ANSIBLE_BUNDLE}" "${TEST_COLLECTIONS[*]}" \
        | hash_of "${REPO_ROOT}/collections/requirements.yml" "${REPO_ROOT}/scripts/install_collections.py")"
    if stamp_ok "${COLL_STAMP}" "${key}" && [ -e "${COLLECTIONS_DIR}/ansible_collections/fabric/infiniband/galaxy.yml" ]; then
        return 0
    fi
    header "deps: collections from ${ANSIBLE_BUNDLE} into .collections"
    rm -rf "${COLLECTIONS_DIR}"
    local extra=() c
    for c in "${TEST_COLLECTIONS[@]}"; do extra+=(--extra "$c"); done
    "${VENV}/bin/python" "${REPO_ROOT}/scripts/install_collections.py" \
        --bundle "${ANSIBLE_BUNDLE}" --cache "${DOWNLOAD_CACHE}" \
        --requirements "${REPO_ROOT}/collections/requirements.yml" "${extra[@]}" \
        --dest "${COLLECTIONS_DIR}"
    printf '%s\n' "${key}" >"${COLL_STAMP}"
}

main() {
    local start
    start="$(now)"
    mkdir -p "${CACHE_DIR}"
    exec 9>"${CACHE_DIR}/deps.lock"
    flock 9
    # apt first: on a fresh Debian it brings python3 and python3-venv.
    deps_apt
    choose_python || die "$(python_missing_message)"
    select_toolset
    deps_venv "${CHOSEN_PYTHON}"
    deps_collections
    info "deps: ready in $(elapsed "${start}" "$(now)") s ($("${VENV}/bin/python" -V), .venv, .collections)"
}

main "$@"
