#!/usr/bin/env bash
# Step 09: Phase 3 by hand: hold many idle keep-alive connections and see
# what they cost the server.
#
# Usage: rehearsal/09_c10k_idle.sh [-h] [-c FILE] [-l LAB] [-s KEY=VALUE]... [CONNS]
#
# Starts on the client
#   bin/connclient idle -target SERVER_IP:SERVER_PORT -source CLIENT_IP
#                  -conns CONNS -rate 1000 -hold DURATIONs
# (CONNS defaults to 1000, 10000 is C10K; one GET /healthz per connection,
# then silence), waits until the server counts CONNS established
# connections on its port, shows `ss -s` and the server process's RSS there,
# then waits for connclient and shows its JSON result (kept in
# REHEARSAL_DIR/client/idle-CONNS.json). connclient's progress goes to
# stderr once a second.
#
# Settings: DURATION hold seconds (default 3; the seed held 60). Exit
# status: 0 ok, 1 connclient failed or no server, 2 bad usage, 4 the server
# is unreachable.
#
# Requires: bin/connclient (step 02), ss on the server; the server running
# (step 05). Loads: rehearsal/lib.sh (lib/init.sh).
#
# Examples:
#   rehearsal/09_c10k_idle.sh                  # 1000 connections, 3 s
#   DURATION=60 rehearsal/09_c10k_idle.sh 10000

# shellcheck source=rehearsal/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

main() {
  rh_init "$@"
  rh_args_max 1
  local conns=${RH_ARGS[0]:-1000} secs=${DURATION:-3}
  rh_check_posint CONNS "${conns}"
  ((10#${secs} > 0)) || usage_error "DURATION=0: hold at least 1 second"
  [[ -x "${CSB_ROOT}/bin/connclient" ]] || die "bin/connclient is not built: run rehearsal/02_build.sh" 1
  rh_enter
  rh_connect
  local spid
  spid=$(rh_need_server) || exit 1

  rh_say "connclient: ${conns} idle connections, held ${secs} s"
  local out="${REHEARSAL_DIR}/client/idle-${conns}.json"
  local -a cmd=("${CSB_ROOT}/bin/connclient" idle -target "$(csb_url_host "${SERVER_IP}"):${SERVER_PORT}"
    -source "${CLIENT_IP}" -conns "${conns}" -rate 1000 -hold "${secs}s")
  printf 'client$ %s >%s &\n' "$(csb_quote "${cmd[@]}")" "$(csb_quote "${out}")"
  "${cmd[@]}" </dev/null >"${out}" &
  local pid=$!
  rh_track client "${pid}" connclient

  rh_say "the server's view once every connection is up"
  local count=0 deadline=$((SECONDS + conns / 1000 + 15))
  while kill -0 "${pid}" 2>/dev/null && ((SECONDS < deadline)); do
    count=$(on_server_sh "ss -Htn state established '( sport = :$((SERVER_PORT)) )' | wc -l")
    ((count >= conns)) && break
    sleep 0.2
  done
  echo "established on the server's port ${SERVER_PORT}: ${count}"
  rh_on_server ss -s
  rh_on_server ps -o pid,rss,vsz,nlwp,pcpu,comm -p "${spid}"

  rh_say "connclient's result"
  local rc=0
  wait "${pid}" || rc=$?
  rh_untrack "${pid}"
  cat "${out}"
  ((rc == 0)) || die "connclient exited ${rc}; see ${out}" 1
}

main "$@"
