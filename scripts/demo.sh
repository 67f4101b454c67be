#!/usr/bin/env bash
# scripts/demo.sh: run every phase once, in order, and say where the reports are.
#
# Usage: [LAB=netns|local] [PROFILE=quick] [RESULTS_ROOT=DIR] [PHASES=0,1,2,3,4,5] bash scripts/demo.sh [-h]
#
# What `make demo` runs. LAB=netns (the default; root) builds the netns lab
# once, runs every phase (0 to 5) across it, and takes it down at the end even when a
# phase fails; LAB=local needs no root. A phase that fails is reported and the
# demo goes on with the next one; the exit status says whether all succeeded.
# LAB=local skips Phase 4, which changes sysctls (the netns lab's are its own).
# Phase 5 searches one payload, 1k (PAYLOADS=1k: the three of the
# committed reference take three times as long), starting from half the
# closed-loop maximum the demo's Phase 2 just measured.
# PHASES picks phases (default all). Before each phase it logs `phase k/n`
# with the time left, planned from how long each phase's newest run with
# the same lab and profile took (the committed reference runs for netns and
# quick, else your own; else one on another lab); each runner logs `cell
# k/n` with its own.
# The runs land in runs/<phase>/ (RESULTS_ROOT/<phase>/ when RESULTS_ROOT is
# set), which git ignores, never beside the committed reference runs in
# <phase>/results/. Then `bin/csb report` builds the cross-phase report
# from your runs alone into runs/report/README.md (RESULTS_ROOT/report/):
# the committed report/README.md, made from the reference runs, is never
# touched, so `make test` passes after it.
#
# Examples:
#   sudo make demo
#   make demo LAB=local
#   sudo LAB=netns PROFILE=smoke RESULTS_ROOT=/tmp/demo bash scripts/demo.sh

# shellcheck source=lib/init.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/init.sh"

usage() { sed -n '2,/^$/{s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"; }

RUNNERS=(
  00-iperf3/run_iperf3_baseline.sh
  01-http-baseline/run_http_baseline.sh
  02-http-matrix/run_http_matrix.sh
  03-c10k/run_c10k.sh
  03-c10k/run_c10k_beyond.sh
  03-c10k/run_c10k_beyond_lowrate_retry.sh
  04-connections/run_connections.sh
  05-capacity/run_capacity.sh
)

main() {
  case "${1:-}" in
    -h | --help) usage; exit 0 ;;
    "") ;;
    *) usage_error "unexpected argument: $1" ;;
  esac
  export LAB="${LAB:-netns}" PROFILE="${PROFILE:-quick}"
  csb_config_validate LAB PROFILE || exit 2
  [[ "${PHASES:=0,1,2,3,4,5}" =~ ^[0-5](,[0-5])*$ ]] || usage_error "PHASES=${PHASES}: expected phase numbers 0 to 5, comma-separated (e.g. 0,1)"
  csb_netns_hold "make demo runs on the netns lab, which needs root: sudo make demo (or: make demo LAB=local)"
  local runner failed=() results=() out line runs=() plan=() dirs=() took dir k=0 first=${SECONDS}
  for runner in "${RUNNERS[@]}"; do
    [[ -f "${CSB_ROOT}/${runner}" && ",${PHASES}," == *",${runner:1:1},"* ]] || continue
    if [[ "${runner}" == 04-* && "${LAB}" != netns ]]; then
      # Phase 4 changes sysctls (somaxconn, the port range): the netns lab's
      # are its own; a real host's only with APPLY_SYSCTLS=1, never by a demo.
      log_info "demo: ${runner} skipped on LAB=${LAB}: it changes sysctls; run it on LAB=netns, or by hand with APPLY_SYSCTLS=1 on a host you may change"
      continue
    fi
    runs+=("${runner}")
    # The plan goes by the reference runs' times, or your own.
    dirs+=(-dir "${CSB_ROOT}/${runner%%/*}/results" -dir "$(csb_results_root "${runner%%/*}")")
  done
  # Each phase is planned to take as long as its newest run with the same
  # lab and profile took (the committed reference runs, or your own).
  local from lab
  while read -r took from lab dir; do
    plan+=("${took}")
    if ((took < 0)); then
      log_info "demo: plan ${runs[${#plan[@]} - 1]}: no earlier ${LAB}/${PROFILE} run to go by"
    else
      log_info "demo: plan ${runs[${#plan[@]} - 1]}: ${took} s, as ${dir#"${CSB_ROOT}"/} took$([[ "${lab}" == "${LAB}" ]] || echo " on LAB=${lab}, no ${LAB}/${PROFILE} run yet")$( ((from == 0)) || echo " (its REPEAT=${from} cells scaled to REPEAT=${REPEAT:-1})")"
    fi
  done < <("${CSB_ROOT}/bin/csb" progress -took -lab "${LAB}" -profile "${PROFILE}" -repeat "${REPEAT:-1}" "${dirs[@]}" "${runs[@]}")
  for runner in "${runs[@]}"; do
    k=$((k + 1))
    log_info "demo: $("${CSB_ROOT}/bin/csb" progress -what phase -k "${k}" -in "${SECONDS}" -first "${first}" \
      -name "${runner} (LAB=${LAB} PROFILE=${PROFILE})" -- "${plan[@]}")"
    out="$(mktemp)"
    local -a args=()
    [[ "${runner}" != 05-* ]] || args=(-s PAYLOADS=1k)
    if ! bash "${CSB_ROOT}/${runner}" "${args[@]}" 2>&1 | tee "${out}"; then
      failed+=("${runner}")
    fi
    line="$(grep '^results: ' "${out}" | tail -n 1 || true)"
    rm -f "${out}"
    [[ -n "${line}" ]] && results+=("${line#results: }")
  done
  # The cross-phase report of your runs alone, where git ignores it.
  local root
  root="$(csb_runs_root)"
  local -a report=("${CSB_ROOT}/bin/csb" report -root "${root}" -out "${root}/report")
  (cd "${CSB_ROOT}" && "${report[@]}") || failed+=("csb report")
  echo
  log_info "demo: ${#runs[@]} phases in $((SECONDS - first)) s"
  echo "Cross-phase report of these runs: ${report[-1]}/README.md"
  echo "Reports:"
  local r
  for r in "${results[@]}"; do
    printf '  %s\n' "$(ls "${r}"/Report_*.md 2>/dev/null || echo "${r} (no report)")"
  done
  if ((${#failed[@]})); then
    echo "failed: ${failed[*]}" >&2
    exit 1
  fi
}

main "$@"
