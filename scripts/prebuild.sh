#!/usr/bin/env bash
# Build what the molecule and lab steps run on, when it is missing: the lab's node images
# (Debian 12 and 13, lab/image/), the VM lab's base disk (lab/vm/) and the real kube-apiserver
# (lab/k8s/). Each is cached and reused while its inputs are the same, so on a machine that
# has them this takes seconds. On a fresh one it downloads from Debian's archive and builds for
# some minutes: `make test` (scripts/test.sh) runs it in the background after deps, so that
# the downloads overlap lint, sanity and the unit tests.
# Usage: scripts/prebuild.sh [images] [vm] [k8s]
# Each part that fails is built again, with its error, by the step that needs it.
set -uo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
require_venv
cd "${REPO_ROOT}" || exit 1

# Parts: images (the node images), vm (the VM disk), k8s (the kube-apiserver); all three by default.
parts=("$@")
[ "${#parts[@]}" -gt 0 ] || parts=(images vm k8s)
rc=0
part() {
    local start
    start="$(now)"
    if "$@"; then
        info "prebuild: $* done in $(elapsed "${start}" "$(now)") s"
    else
        info "prebuild: $* FAILED after $(elapsed "${start}" "$(now)") s"
        rc=1
    fi
}
for p in "${parts[@]}"; do
    case "${p}" in
        images)
            part python lab/labctl.py image
            part python lab/labctl.py image --suite trixie ;;
        vm) part python lab/vm/vmctl.py image ;;
        k8s) part lab/k8s/build.sh ;;
        *) die "unknown part '${p}' (images, vm, k8s)" ;;
    esac
done
exit "${rc}"
