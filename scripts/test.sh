#!/usr/bin/env bash
# `make test` (and CI through .ci/run): every check, in order, stopping at the first
# failure. Prints a banner per step, then a summary with each step's wall time, and
# as its last line "N passed, M failed" (CI reads that line).
#
#   scripts/test.sh              all steps
#   scripts/test.sh lint units   only those steps (deps always runs first)
#
# Two chains run in the background from the end of deps, because they wait on the network or
# keep one core busy while the steps before molecule leave one idle: scripts/prebuild.sh (the
# node images and the kube-apiserver, built when missing), which the molecule and lab steps
# wait for; and the VM disk then the molecule-vm step (Debian's real kernel under QEMU, about
# 13 min; QEMU spends about 810 CPU-s, 2026-11-29), whose output the molecule-vm step, last, prints once it ends. Their logs
# are in .cache/test-background/.
set -uo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "${REPO_ROOT}" || exit 1

BG_DIR="${CACHE_DIR}/test-background"

# --background <part>: a background chain (started by this script, each in a process group of its own).
#   prebuild     the node images and the kube-apiserver
#   molecule-vm  the VM disk, then the _vm scenarios
if [ "${1:-}" = "--background" ]; then
    start="$(now)"
    case "$2" in
        prebuild) scripts/prebuild.sh images k8s >"${BG_DIR}/prebuild.log" 2>&1 ;;
        molecule-vm)
            scripts/prebuild.sh vm >"${BG_DIR}/molecule-vm.log" 2>&1
            scripts/molecule.sh --vm >>"${BG_DIR}/molecule-vm.log" 2>&1 ;;
    esac
    echo "$? $(elapsed "${start}" "$(now)")" >"${BG_DIR}/$2.done"
    exit 0
fi

ALL_STEPS=(deps lint sanity units releases changelog argspecs galaxy molecule lab molecule-vm)

# The command of each step, as shown in its banner and run by run_step.
describe_step() {
    case "$1" in
        deps) echo "scripts/deps.sh" ;;
        lint) echo "scripts/lint.sh" ;;
        sanity) echo "scripts/sanity.sh" ;;
        units) echo "scripts/units.sh" ;;
        releases) echo "scripts/releases.sh" ;;
        changelog) echo "scripts/changelog.sh" ;;
        argspecs) echo "python scripts/check_argument_specs.py" ;;
        galaxy) echo "scripts/galaxy.sh" ;;
        molecule) echo "scripts/molecule.sh" ;;
        lab) echo "scripts/lab.sh" ;;
        molecule-vm) echo "scripts/molecule.sh --vm (in the background since deps)" ;;
        *) return 1 ;;
    esac
}

run_step() {
    case "$1" in
        deps) scripts/deps.sh ;;
        lint) scripts/lint.sh ;;
        sanity) scripts/sanity.sh ;;
        units) scripts/units.sh ;;
        # The tests of what the collection takes from ansible-core's internals, against every supported release.
        releases) scripts/releases.sh ;;
        changelog) scripts/changelog.sh ;;
        argspecs) "${VENV}/bin/python" scripts/check_argument_specs.py ;;
        # The artifact as Galaxy and an EE build see it (9-17 min on the shared 2-core machine).
        galaxy) scripts/galaxy.sh ;;
        # The container scenarios, two at a time.
        molecule) scripts/molecule.sh ;;
        # The demo lab from fresh nodes to verified (resets it; tests/lab/).
        lab) scripts/lab.sh ;;
        # Debian's real kernel under QEMU (the _vm scenarios): its output, once its background run ends.
        molecule-vm) wait_background molecule-vm ;;
    esac
}

steps=()
if [ "$#" -gt 0 ]; then
    [ "$1" = deps ] || steps+=(deps)
    for s in "$@"; do
        describe_step "$s" >/dev/null || die "unknown step '$s' (steps: ${ALL_STEPS[*]})"
        steps+=("$s")
    done
else
    steps=("${ALL_STEPS[@]}")
fi

declare -A result=() seconds=()
passed=0
failed=0
rc=0
declare -A bg_pid=()
start_background() {
    case " ${steps[*]} " in *" molecule "* | *" lab "* | *" molecule-vm "*) ;; *) return 0 ;; esac
    rm -rf "${BG_DIR}"
    mkdir -p "${BG_DIR}"
    local part
    for part in prebuild molecule-vm; do
        [ "${part}" = prebuild ] || case " ${steps[*]} " in *" ${part} "*) ;; *) continue ;; esac
        setsid "${BASH_SOURCE[0]}" --background "${part}" </dev/null >"${BG_DIR}/${part}.chain.log" 2>&1 &
        bg_pid[${part}]=$!
        info "background: ${part} started (log in ${BG_DIR}/${part}.log)"
    done
}
stop_background() {
    local part
    for part in "${!bg_pid[@]}"; do
        kill -- "-${bg_pid[${part}]}" 2>/dev/null || true
    done
    # QEMU daemonizes out of the chain's process group: a guest the killed chain started would keep running, holding its
    # ports (the next run's guests then fail "Address already in use"). Stop this checkout's guests too.
    if [ -n "${bg_pid[molecule-vm]:-}" ]; then
        "${VENV}/bin/python" lab/vm/vmctl.py destroy --all >/dev/null 2>&1 || true
    fi
}
# Wait for a part of the background chain (prebuild, molecule-vm), print what it says, return its status.
wait_background() {
    local part="$1" rc_secs
    [ -n "${bg_pid[${part}]:-}" ] || { fail_line "${part}: it was not started in the background"; return 1; }
    while [ ! -e "${BG_DIR}/${part}.done" ]; do
        if ! kill -0 "${bg_pid[${part}]}" 2>/dev/null && [ ! -e "${BG_DIR}/${part}.done" ]; then
            fail_line "${part}: the background chain ended without it (see ${BG_DIR})"
            return 1
        fi
        sleep 2
    done
    read -r -a rc_secs <"${BG_DIR}/${part}.done"
    if [ "${part}" = prebuild ]; then
        banner "prebuild: exit ${rc_secs[0]} after ${rc_secs[1]} s in the background (a part that failed is built again by the step that needs it)"
        grep '^prebuild: ' "${BG_DIR}/prebuild.log" || true
        [ "${rc_secs[0]}" -eq 0 ] || tail -n 40 "${BG_DIR}/prebuild.log"
        return 0
    fi
    cat "${BG_DIR}/${part}.log"
    info "${part}: exit ${rc_secs[0]} after ${rc_secs[1]} s in the background"
    return "${rc_secs[0]}"
}
prebuild_waited=false

total_start="$(now)"
for i in "${!steps[@]}"; do
    s="${steps[$i]}"
    case "$s" in
        molecule | lab)
            if [ "${prebuild_waited}" = false ]; then
                wait_background prebuild
                prebuild_waited=true
            fi ;;
    esac
    banner "[$((i + 1))/${#steps[@]}] ${s}: $(describe_step "$s") (at $(elapsed "${total_start}" "$(now)") s)"
    start="$(now)"
    run_step "$s"
    rc=$?
    seconds[$s]="$(elapsed "${start}" "$(now)")"
    if [ "${rc}" -eq 0 ]; then
        result[$s]=passed
        passed=$((passed + 1))
        [ "$s" != deps ] || start_background
    else
        result[$s]="FAILED (exit ${rc})"
        failed=$((failed + 1))
        fail_line "step ${s} failed with exit status ${rc}; stopping."
        stop_background
        break
    fi
done

not_run=0
banner "summary"
for s in "${steps[@]}"; do
    if [ -n "${result[$s]:-}" ]; then
        printf '  %-10s %-18s %8s s\n' "$s" "${result[$s]}" "${seconds[$s]}"
    else
        printf '  %-10s %-18s %8s\n' "$s" "not run" "-"
        not_run=$((not_run + 1))
    fi
done
printf '  %-10s %-18s %8s s\n' "total" "" "$(elapsed "${total_start}" "$(now)")"
[ "${not_run}" -eq 0 ] || printf '%d step(s) not run\n' "${not_run}"
printf '%d passed, %d failed\n' "${passed}" "${failed}"
exit "${rc}"
