#!/usr/bin/env bash
# scripts/references.sh: re-make the committed reference runs and the csb-vs-nginx comparison.
#
# Usage: sudo bash scripts/references.sh [-h]
#
# On the netns lab with the quick profile, in order: Phase 0; Phase 1 with
# REPEAT=5 and Phase 2 with REPEAT=3 (so their CPU-bound figures are
# medians); the three Phase 3 runners; Phase 4 (with CLIENT_PORT_RANGE=
# 40000-40999, so the client-closed churn meets its port wall within the
# quick cells); bin/csb report. Then Phases 0-3
# (run_c10k.sh) once with SERVER=csb and once with SERVER=nginx, the server
# pinned to CPU 1 (SERVER_CPUS=1), into compare/csb-vs-nginx/{csb,nginx}/, and
# bin/csb compare -roots writes compare/csb-vs-nginx/README.md. About 25
# minutes; run it on a quiet machine (the reports mark disturbed cells).
# The new runs go beside the old ones: remove the old directories (git rm)
# and update README.md's "Results at a glance" before committing
# (git add -f: results/ is ignored for test runs).
#
# Requires root (the netns lab), nginx (make setup). Loads lib/init.sh.
#
# Examples:
#   sudo bash scripts/references.sh

# shellcheck source=lib/init.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/init.sh"

usage() { sed -n '2,/^$/{s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"; }

# refs_run RUNNER ARGS...: one runner; a failure is counted, the rest goes on.
REFS_FAILED=()
refs_run() {
  log_info "references: $*"
  bash "${CSB_ROOT}/$1" "${@:2}" || REFS_FAILED+=("$1")
}

main() {
  case "${1:-}" in
    -h | --help) usage; exit 0 ;;
    "") ;;
    *) usage_error "unexpected argument: $1" ;;
  esac
  [[ ${EUID} -eq 0 ]] || die "the reference runs use the netns lab, which needs root: sudo bash scripts/references.sh" 2
  export LAB=netns PROFILE=quick
  unset RESULTS_ROOT SERVER SERVER_CPUS REPEAT
  cd "${CSB_ROOT}"
  make build >/dev/null
  refs_run 00-iperf3/run_iperf3_baseline.sh
  refs_run 01-http-baseline/run_http_baseline.sh -s REPEAT=5
  refs_run 02-http-matrix/run_http_matrix.sh -s REPEAT=3
  refs_run 03-c10k/run_c10k.sh
  refs_run 03-c10k/run_c10k_beyond.sh
  refs_run 03-c10k/run_c10k_beyond_lowrate_retry.sh
  refs_run 04-connections/run_connections.sh -s CLIENT_PORT_RANGE=40000-40999
  bin/csb report || REFS_FAILED+=("csb report")
  local s
  for s in csb nginx; do
    refs_run 00-iperf3/run_iperf3_baseline.sh -r "${CSB_ROOT}/compare/csb-vs-nginx/${s}"
    refs_run 01-http-baseline/run_http_baseline.sh -r "${CSB_ROOT}/compare/csb-vs-nginx/${s}" -s SERVER="${s}" -s SERVER_CPUS=1
    refs_run 02-http-matrix/run_http_matrix.sh -r "${CSB_ROOT}/compare/csb-vs-nginx/${s}" -s SERVER="${s}" -s SERVER_CPUS=1
    refs_run 03-c10k/run_c10k.sh -r "${CSB_ROOT}/compare/csb-vs-nginx/${s}" -s SERVER="${s}" -s SERVER_CPUS=1
  done
  # The same relative paths as scripts/check-generated.sh regenerates it with.
  bin/csb compare -roots -out compare/csb-vs-nginx/README.md compare/csb-vs-nginx/csb compare/csb-vs-nginx/nginx ||
    REFS_FAILED+=("csb compare -roots")
  if ((${#REFS_FAILED[@]})); then
    die "failed: ${REFS_FAILED[*]}" 1
  fi
  log_info "references made; now git rm the old runs, update README.md, git add -f the new ones"
}

main "$@"
