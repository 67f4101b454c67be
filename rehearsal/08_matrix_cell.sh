#!/usr/bin/env bash
# Step 08: Phase 2 by hand: one cell of the payload x concurrency matrix.
#
# Usage: rehearsal/08_matrix_cell.sh [-h] [-c FILE] [-l LAB] [-s KEY=VALUE]... [SIZE] [CONCURRENCY]
#
# A closed loop of CONCURRENCY connections (default 64) on /payload/SIZE
# (default 10k) for DURATION seconds (default 3), with oha when it is
# installed:
#   oha --no-tui -z DURATIONs -c CONCURRENCY
#       [--wait-ongoing-requests-after-deadline] URL
# and otherwise with wrk in its place, as the Phase 2 runner does:
#   wrk -t CPUS -c CONCURRENCY -d DURATIONs --latency -s lib/wrk/report.lua URL
# The text is shown and kept in REHEARSAL_DIR/client/matrix-SIZE-cN.txt. The
# soft fd limit is raised to cover CONCURRENCY when it is too low; when the
# hard limit cannot, the cell is refused, as the runner refuses it.
#
# Exit status: 0 ok, 1 the tool failed, no server, or the fd limit refused
# the cell, 2 bad usage, 4 the server is unreachable.
#
# Requires: oha or wrk on the client; the server running (step 05). Loads:
# rehearsal/lib.sh (lib/init.sh).
#
# Examples:
#   rehearsal/08_matrix_cell.sh                    # 10k x c64, 3 s
#   DURATION=30 rehearsal/08_matrix_cell.sh 1k 1024

# shellcheck source=rehearsal/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

main() {
  rh_init "$@"
  rh_args_max 2
  local size=${RH_ARGS[0]:-10k} conc=${RH_ARGS[1]:-64} secs=${DURATION:-3}
  rh_check_size "${size}"
  rh_check_posint CONCURRENCY "${conc}"
  ((10#${secs} > 0)) || usage_error "DURATION=0: a cell needs at least 1 second"
  rh_enter
  rh_connect
  rh_need_server >/dev/null
  rh_fd_raise "${conc}"

  local url tool=oha
  url=$(csb_payload_url "${size}")
  local -a cmd
  if command -v oha >/dev/null 2>&1; then
    csb_oha_flags "$(oha --help 2>&1)" || true
    cmd=(oha --no-tui -z "${secs}s" -c "${conc}")
    [[ -z "${CSB_OHA_WAIT}" ]] || cmd+=("${CSB_OHA_WAIT}")
    cmd+=("${url}")
  else
    tool=wrk
    echo "note: oha is not installed on this host: wrk stands in for it (so does the Phase 2 runner)"
    local t
    t=$(nproc)
    cmd=(wrk -t "$((conc < t ? conc : t))" -c "${conc}" -d "${secs}s" --latency -s "${CSB_LIB}/wrk/report.lua" "${url}")
  fi
  rh_say "${tool}: ${conc} connections on /payload/${size} for ${secs} s"
  rh_run "${cmd[@]}" | tee "${REHEARSAL_DIR}/client/matrix-${size}-c${conc}.txt"
}

main "$@"
