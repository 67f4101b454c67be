#!/usr/bin/env bash
# Step 05: start the fixed-payload HTTP server on the server host.
#
# Usage: rehearsal/05_start_server.sh [-h] [-c FILE] [-l LAB] [-s KEY=VALUE]...
#
# Starts, detached on the server host (setsid, output to
# REHEARSAL_DIR/server/server.log):
#   REHEARSAL_DIR/server/bin/csb-server -addr SERVER_IP -port SERVER_PORT
#                                       -sizes 1k,4k,10k,100k
# records its PID in REHEARSAL_DIR/state (server_pid=...), waits at most
# 15 s until http://SERVER_IP:SERVER_PORT/healthz answers from the client,
# then shows the server's "listening" line and one response's headers. The
# server keeps running after the step; step 12 stops it by that PID.
#
# Exit status: 0 ok, 1 not started (or one already runs), 2 bad usage,
# 4 the server is unreachable.
#
# Requires: the server binary on the server host (step 03), curl on the
# client. Loads: rehearsal/lib.sh (lib/init.sh).
#
# Example:
#   rehearsal/05_start_server.sh

# shellcheck source=rehearsal/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

main() {
  rh_init "$@"
  rh_args_max 0
  rh_enter
  rh_connect
  local pid bin="${RH_SRV_DIR}/bin/csb-server"
  if pid=$(rh_server_pid); then
    die "the server already runs (PID ${pid}); stop it with rehearsal/12_stop_server.sh" 1
  fi
  on_server test -x "${bin}" || die "${bin} is not on the server host: run rehearsal/03_copy_server.sh" 1

  rh_say "start the server, bound to ${SERVER_IP} only"
  local -a cmd=("${bin}" -addr "${SERVER_IP}" -port "${SERVER_PORT}" -sizes "${RH_SIZES}")
  printf 'server$ setsid %s </dev/null >%s 2>&1 &\n' "$(csb_quote "${cmd[@]}")" "$(csb_quote "${RH_SRV_DIR}/server.log")"
  pid=$(on_server_bg "${RH_SRV_DIR}/server.log" "${cmd[@]}") || die "could not start the server" 1
  rh_state_set server_pid "${pid}"
  echo "server PID ${pid} (recorded in ${RH_STATE})"

  local url
  url="http://$(csb_url_host "${SERVER_IP}"):${SERVER_PORT}/healthz"
  rh_say "wait (at most 15 s) until ${url} answers from the client"
  csb_wait_http "${url}" 15 || die "no answer from ${url} within 15 s; read ${RH_SRV_DIR}/server.log on the server host" 1
  rh_on_server cat "${RH_SRV_DIR}/server.log"
  rh_run curl -sS --noproxy '*' -D - -o /dev/null "http://$(csb_url_host "${SERVER_IP}"):${SERVER_PORT}/payload/1k"
  echo "server up: PID ${pid} on ${SERVER_IP}:${SERVER_PORT}"
}

main "$@"
