#!/usr/bin/env bash
# Step 10: Phase 3 by hand: a low, open-model request rate spread over many
# connections.
#
# Usage: rehearsal/10_c10k_lowrate.sh [-h] [-c FILE] [-l LAB] [-s KEY=VALUE]... [CONNS] [RPS] [PATH]
#
# Runs on the client
#   bin/connclient lowrate -target SERVER_IP:SERVER_PORT -source CLIENT_IP
#                  -conns CONNS -rps RPS -duration DURATIONs -path PATH
# CONNS defaults to 1000, RPS to 1000, PATH to /healthz (or /payload/SIZE).
# Request i is due at start + i/RPS whatever happened before it, so a stall
# shows in latency_* (from the due time) and not only in service_latency_*
# (from the send): no coordinated omission. The JSON result is shown and
# kept in REHEARSAL_DIR/client/lowrate-CONNS-RPS.json; progress goes to
# stderr once a second.
#
# Settings: DURATION seconds of schedule (default 3). Exit status: 0 ok,
# 1 connclient failed or no server, 2 bad usage, 4 the server is
# unreachable.
#
# Requires: bin/connclient (step 02); the server running (step 05). Loads:
# rehearsal/lib.sh (lib/init.sh).
#
# Examples:
#   rehearsal/10_c10k_lowrate.sh               # 1000 connections, 1000 RPS
#   DURATION=60 rehearsal/10_c10k_lowrate.sh 10000 2000

# shellcheck source=rehearsal/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

main() {
  rh_init "$@"
  rh_args_max 3
  local conns=${RH_ARGS[0]:-1000} rps=${RH_ARGS[1]:-1000} path=${RH_ARGS[2]:-/healthz} secs=${DURATION:-3}
  rh_check_posint CONNS "${conns}"
  rh_check_posint RPS "${rps}"
  [[ "${path}" == /healthz || "${path}" =~ ^/payload/(1k|4k|10k|100k)$ ]] ||
    usage_error "path ${path}: expected /healthz or /payload/SIZE (SIZE one of ${RH_SIZES})"
  ((10#${secs} > 0)) || usage_error "DURATION=0: a schedule needs at least 1 second"
  [[ -x "${CSB_ROOT}/bin/connclient" ]] || die "bin/connclient is not built: run rehearsal/02_build.sh" 1
  rh_enter
  rh_connect
  rh_need_server >/dev/null

  rh_say "connclient: ${rps} requests/s over ${conns} connections on ${path} for ${secs} s"
  local out="${REHEARSAL_DIR}/client/lowrate-${conns}-${rps}.json"
  local -a cmd=("${CSB_ROOT}/bin/connclient" lowrate -target "$(csb_url_host "${SERVER_IP}"):${SERVER_PORT}"
    -source "${CLIENT_IP}" -conns "${conns}" -rps "${rps}" -duration "${secs}s" -path "${path}")
  printf 'client$ %s >%s\n' "$(csb_quote "${cmd[@]}")" "$(csb_quote "${out}")"
  "${cmd[@]}" </dev/null >"${out}" &
  local pid=$! rc=0
  rh_track client "${pid}" connclient
  wait "${pid}" || rc=$?
  rh_untrack "${pid}"
  cat "${out}"
  ((rc == 0)) || die "connclient exited ${rc}; see ${out}" 1
}

main "$@"
