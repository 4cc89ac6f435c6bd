#!/usr/bin/env bash
# ansible-test sanity on a clean copy of the collection.
#
# ansible-test needs the collection at .../ansible_collections/fabric/infiniband/, so
# the files git knows about (tracked, plus untracked ones not ignored) are copied to
# .cache/sanity/ansible_collections/fabric/infiniband/ and tested there. The simulator
# (lab/) is left out: it is not collection content (galaxy.yml build_ignore), runs on
# the lab nodes' Python and has its own ruff and pytest checks.
#
# ansible-test runs --local, with .venv's Python (the controller) and
# ansible-core. Each sanity test gets its own virtualenv with pinned requirements from
# PyPI, which ansible-test creates once and keeps in ~/.ansible/test/venv/.
# The tests for code that runs on managed nodes (compile, import) run on every Python
# that ansible-core supports for modules, within tests/config.yml's python_requires,
# and that this machine has (on PATH or in ~/.pyenv/versions); the others are listed
# as not checked.
#
# Arguments go to ansible-test, e.g. `scripts/sanity.sh --test pep8` or
# `scripts/sanity.sh --python 3.13` (that one version only).
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
require_venv
cd "${REPO_ROOT}"

SANITY_ROOT="${CACHE_DIR}/sanity"
DEST="${SANITY_ROOT}/ansible_collections/fabric/infiniband"
PYTHON_BIN="${CACHE_DIR}/sanity-pythons"
# Top-level paths not copied into the sanity tree (see above).
EXCLUDE_RE='^(lab)/'

header "sanity: copy the collection to ${DEST#"${REPO_ROOT}"/}"
rm -rf "${SANITY_ROOT}"
mkdir -p "${DEST}"
# Tracked files deleted in the work tree are listed by git but skipped here.
git ls-files -z --cached --others --exclude-standard \
    | tr '\0' '\n' | grep -Ev "${EXCLUDE_RE}" \
    | while IFS= read -r f; do if [ -e "$f" ] || [ -L "$f" ]; then printf '%s\0' "$f"; fi; done \
    | rsync -a --from0 --files-from=- ./ "${DEST}/"
# ansible-test lists files through git when it finds a .git directory, looking upwards
# from the collection: without its own repository here it would find this checkout's,
# where .cache/ is ignored, and skip every target.
git -C "${DEST}" init -q
git -C "${DEST}" add -A
info "$(git -C "${DEST}" ls-files | wc -l) files"

# Target Pythons: make each one found reachable as pythonX.Y in PYTHON_BIN (pyenv
# shims on PATH only work for the selected version, so they are not enough).
rm -rf "${PYTHON_BIN}"
mkdir -p "${PYTHON_BIN}"
read -r controller wanted < <(python - <<'PY'
import sys
import yaml
from packaging.specifiers import SpecifierSet
from ansible_test._util.target.common.constants import CONTROLLER_PYTHON_VERSIONS, REMOTE_ONLY_PYTHON_VERSIONS

with open("tests/config.yml") as handle:
    spec = SpecifierSet(((yaml.safe_load(handle) or {}).get("modules") or {}).get("python_requires", ">=0"))
versions = [v for v in REMOTE_ONLY_PYTHON_VERSIONS + CONTROLLER_PYTHON_VERSIONS if v in spec]
print("%d.%d" % sys.version_info[:2], " ".join(versions))
PY
)
available=()
missing=()
for v in ${wanted}; do
    exe=""
    # First one that runs: PATH, then pyenv's newest patch release.
    while IFS= read -r c; do
        if [ -n "$c" ] && [ -x "$c" ] && "$c" -c '' >/dev/null 2>&1; then
            exe="$c"
            break
        fi
    done < <(command -v "python$v" 2>/dev/null || true
             printf '%s\n' "${PYENV_ROOT:-${HOME}/.pyenv}"/versions/"$v".*/bin/"python$v" | sort -V -r)
    if [ -n "${exe}" ]; then
        ln -s "${exe}" "${PYTHON_BIN}/python$v"
        available+=("$v")
    else
        missing+=("$v")
    fi
done
export PATH="${PYTHON_BIN}:${PATH}"
info "controller: Python ${controller} (.venv); module targets checked: ${available[*]:-none}"
[ "${#missing[@]}" -eq 0 ] || info "module targets not on this machine, not checked: ${missing[*]}"

# ansible-test installs pip into each virtualenv it makes with a bootstrap script from
# ci-files.testing.ansible.com. Where that host is unreachable (only PyPI is), provide
# an equivalent built from the pip wheel on PyPI (scripts/get_pip_standin.py).
pip_version="$(python -c 'import types; from ansible_test._internal.python_requirements import get_venv_packages; print(get_venv_packages(types.SimpleNamespace(version="3"))["pip"])')"
get_pip="${HOME}/.ansible/test/cache/get_pip_${pip_version//./_}.py"
if [ ! -s "${get_pip}" ]; then
    wheel="${DOWNLOAD_CACHE}/pip-${pip_version}-py3-none-any.whl"
    if [ ! -s "${wheel}" ]; then
        python -m pip download --quiet --no-deps --only-binary=:all: --dest "${DOWNLOAD_CACHE}" "pip==${pip_version}" \
            >"${CACHE_DIR}/pip-download.log" 2>&1 || { cat "${CACHE_DIR}/pip-download.log" >&2; die "cannot download pip==${pip_version} from PyPI"; }
    fi
    mkdir -p "$(dirname "${get_pip}")"
    sed "s|@WHEEL@|${wheel}|" "${REPO_ROOT}/scripts/get_pip_standin.py" >"${get_pip}.tmp"
    mv "${get_pip}.tmp" "${get_pip}"
    info "wrote ${get_pip} (pip ${pip_version} bootstrap from PyPI's wheel)"
fi

header "sanity: ansible-test sanity --local (ansible-core $(python -c 'import ansible; print(ansible.__version__)'))"
cd "${DEST}"
start="$(now)"
# pip's notes about the unused extra indexes of some machines' pip.conf are dropped.
ansible-test sanity --local --color "$([ -t 1 ] && echo yes || echo no)" "$@" 2>&1 \
    | grep --line-buffered -v 'is ignored: it is neither a file nor a directory'
info "ansible-test sanity took $(elapsed "${start}" "$(now)") s"
