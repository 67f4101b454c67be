#!/usr/bin/env bash
# Step 07: Phase 1 by hand: one wrk run against one payload.
#
# Usage: rehearsal/07_wrk.sh [-h] [-c FILE] [-l LAB] [-s KEY=VALUE]... [SIZE] [CONNECTIONS]
#
# Runs on the client, against the server of step 05:
#   wrk -t 2 -c CONNECTIONS -d DURATIONs --latency -s lib/wrk/report.lua
#       http://SERVER_IP:SERVER_PORT/payload/SIZE
# SIZE is 1k (default), 4k, 10k or 100k; CONNECTIONS defaults to 16. wrk's
# text (requests/s, latency distribution, transfer/s) and the hook's
# CSB_WRK_JSON line are shown and kept in
# REHEARSAL_DIR/client/wrk-SIZE-cCONNECTIONS.txt. The soft fd limit is
# raised to cover CONNECTIONS when it is too low.
#
# Settings: DURATION seconds (default 3). Exit status: 0 ok, 1 wrk failed or
# no server, 2 bad usage, 4 the server is unreachable.
#
# Requires: wrk on the client; the server running (step 05). Loads:
# rehearsal/lib.sh (lib/init.sh).
#
# Examples:
#   rehearsal/07_wrk.sh                       # 1k, 16 connections, 3 s
#   DURATION=30 rehearsal/07_wrk.sh 100k 128

# shellcheck source=rehearsal/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

main() {
  rh_init "$@"
  rh_args_max 2
  local size=${RH_ARGS[0]:-1k} conns=${RH_ARGS[1]:-16} secs=${DURATION:-3}
  rh_check_size "${size}"
  rh_check_posint CONNECTIONS "${conns}"
  ((10#${secs} > 0)) || usage_error "DURATION=0: a run needs at least 1 second"
  rh_enter
  rh_connect
  rh_need_server >/dev/null
  rh_fd_raise "${conns}"

  rh_say "wrk: ${conns} connections on /payload/${size} for ${secs} s"
  local -a cmd
  # The runners' wrk: the repo's done() hook prints one CSB_WRK_JSON line.
  cmd=(wrk -t "$((conns < 2 ? conns : 2))" -c "${conns}" -d "${secs}s" --latency -s "${CSB_LIB}/wrk/report.lua" "$(csb_payload_url "${size}")")
  rh_run "${cmd[@]}" | tee "${REHEARSAL_DIR}/client/wrk-${size}-c${conns}.txt"
}

main "$@"
