#!/usr/bin/env bash
# Step 04: Phase 0 by hand: one iperf3 test of the raw TCP path.
#
# Usage: rehearsal/04_iperf3.sh [-h] [-c FILE] [-l LAB] [-s KEY=VALUE]... [s2c|c2s] [STREAMS]
#
# Starts `iperf3 --server --one-off` on the server host, bound to SERVER_IP
# (it serves one test and exits), waits until it listens, then runs on the
# client
#   iperf3 --client SERVER_IP --bind CLIENT_IP --time DURATION --omit 1
#          --parallel STREAMS [--reverse]
# s2c (default) is --reverse: the server sends, as it does with HTTP
# responses; c2s: the client sends. STREAMS defaults to 1. iperf3's text is
# shown and kept in REHEARSAL_DIR/client/iperf3-<dir>-<streams>.txt. The
# iperf3 server is stopped by PID if it is still there when the step ends.
#
# Settings: DURATION seconds (default 3), IPERF_PORT. Exit status: 0 ok,
# 1 iperf3 failed, 2 bad usage, 4 the server is unreachable.
#
# Requires: iperf3 on both hosts, ss (iproute2) on the server. Loads:
# rehearsal/lib.sh (lib/init.sh).
#
# Examples:
#   rehearsal/04_iperf3.sh                 # 1 stream, server -> client, 3 s
#   DURATION=30 rehearsal/04_iperf3.sh c2s 4

# shellcheck source=rehearsal/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

main() {
  rh_init "$@"
  rh_args_max 2
  local dir=${RH_ARGS[0]:-s2c} streams=${RH_ARGS[1]:-1} secs=${DURATION:-3}
  [[ "${dir}" == s2c || "${dir}" == c2s ]] || usage_error "direction ${dir}: expected s2c or c2s"
  rh_check_posint STREAMS "${streams}"
  rh_enter
  rh_connect

  rh_say "iperf3 server on the server host, bound to ${SERVER_IP}, for one test"
  local -a srv=(iperf3 --server --bind "${SERVER_IP}" --port "${IPERF_PORT}" --one-off)
  printf 'server$ %s &   (log: %s)\n' "$(csb_quote "${srv[@]}")" "${RH_SRV_DIR}/iperf3.log"
  local pid
  pid=$(on_server_bg "${RH_SRV_DIR}/iperf3.log" "${srv[@]}") || die "could not start iperf3 on the server host" 1
  rh_track server "${pid}" iperf3
  csb_wait_listen "${IPERF_PORT}" 10 || die "iperf3 did not listen on ${SERVER_IP}:${IPERF_PORT} within 10 s" 1

  rh_say "${streams} stream(s), ${dir}, ${secs} s (the first second omitted)"
  local -a cli=(iperf3 --client "${SERVER_IP}" --port "${IPERF_PORT}" --bind "${CLIENT_IP}"
    --time "${secs}" --omit 1 --parallel "${streams}")
  [[ "${dir}" == s2c ]] && cli+=(--reverse)
  rh_run "${cli[@]}" | tee "${REHEARSAL_DIR}/client/iperf3-${dir}-${streams}.txt"
}

main "$@"
