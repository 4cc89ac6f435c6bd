#!/usr/bin/env bash
# `make test` (and CI through .ci/run): every check, in order, stopping at the first
# failure. Prints a banner per step, then a summary with each step's wall time, and
# as its last line "N passed, M failed" (CI reads that line).
#
#   scripts/test.sh              all steps
#   scripts/test.sh lint units   only those steps (deps always runs first)
set -uo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "${REPO_ROOT}" || exit 1

ALL_STEPS=(deps lint sanity units releases changelog argspecs galaxy molecule lab)

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
        molecule) echo "scripts/molecule.sh --all" ;;
        lab) echo "scripts/lab.sh" ;;
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
        # Every scenario, the containers' and Debian's real kernel under QEMU (the _vm ones), two at a time.
        molecule) scripts/molecule.sh --all ;;
        # The demo lab from fresh nodes to verified (resets it; tests/lab/).
        lab) scripts/lab.sh ;;
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
# scripts/prebuild.sh in the background from the end of deps to the first step that runs nodes
# (the node images, the VM disk, the kube-apiserver: downloads and builds on a fresh machine).
prebuild_pid=""
prebuild_log="${CACHE_DIR}/prebuild.log"
start_prebuild() {
    case " ${steps[*]} " in *" molecule "* | *" lab "*) ;; *) return 0 ;; esac
    mkdir -p "${CACHE_DIR}"
    prebuild_start="$(now)"
    scripts/prebuild.sh >"${prebuild_log}" 2>&1 &
    prebuild_pid=$!
    info "prebuild: started in the background (scripts/prebuild.sh, log ${prebuild_log})"
}
wait_prebuild() {
    [ -n "${prebuild_pid}" ] || return 0
    local prc=0
    wait "${prebuild_pid}" || prc=$?
    prebuild_pid=""
    banner "prebuild: exit ${prc} after $(elapsed "${prebuild_start}" "$(now)") s (the parts that failed are built again by the step)"
    # its own lines, and the last ones of the builders' output
    grep '^prebuild: ' "${prebuild_log}" || true
    [ "${prc}" -eq 0 ] || tail -n 40 "${prebuild_log}"
}

total_start="$(now)"
for i in "${!steps[@]}"; do
    s="${steps[$i]}"
    case "$s" in molecule | lab) wait_prebuild ;; esac
    banner "[$((i + 1))/${#steps[@]}] ${s}: $(describe_step "$s") (at $(elapsed "${total_start}" "$(now)") s)"
    start="$(now)"
    run_step "$s"
    rc=$?
    seconds[$s]="$(elapsed "${start}" "$(now)")"
    if [ "${rc}" -eq 0 ]; then
        result[$s]=passed
        passed=$((passed + 1))
        [ "$s" != deps ] || start_prebuild
    else
        result[$s]="FAILED (exit ${rc})"
        failed=$((failed + 1))
        fail_line "step ${s} failed with exit status ${rc}; stopping."
        [ -z "${prebuild_pid}" ] || kill -- "${prebuild_pid}" 2>/dev/null || true
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
