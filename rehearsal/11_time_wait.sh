#!/usr/bin/env bash
# Step 11: count the TIME_WAIT sockets towards the server, and optionally
# wait until they drain.
#
# Usage: rehearsal/11_time_wait.sh [-h] [-c FILE] [-l LAB] [-s KEY=VALUE]... [MAX]
#
# The side that closes a TCP connection first keeps it in TIME_WAIT for 60 s,
# and on the client each such socket holds one local port towards
# SERVER_IP:SERVER_PORT. Counts, on both hosts,
#   ss -Htan state time-wait dst SERVER_IP:SERVER_PORT   (on the client)
#   ss -Htan state time-wait src SERVER_IP:SERVER_PORT   (on the server)
# and says how many of the client's ephemeral ports
# (net.ipv4.ip_local_port_range) are left for new connections. With MAX,
# polls once a second (at most 70 s) until the client holds at most MAX, as
# the TIME_WAIT-aware retry does before a 20k run.
#
# Exit status: 0 ok, 1 still above MAX after 70 s, 2 bad usage, 4 the
# server is unreachable.
#
# Requires: ss and sysctl on both hosts. Loads: rehearsal/lib.sh
# (lib/init.sh).
#
# Examples:
#   rehearsal/11_time_wait.sh
#   rehearsal/11_time_wait.sh 0            # wait until every one is gone

# shellcheck source=rehearsal/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

main() {
  rh_init "$@"
  rh_args_max 1
  local max=${RH_ARGS[0]:-}
  [[ "${max}" =~ ^[0-9]{0,9}$ ]] || usage_error "MAX=${max}: expected a whole number"
  rh_enter
  rh_connect

  local addr
  addr="$(csb_url_host "${SERVER_IP}"):${SERVER_PORT}"
  local -a cli=(ss -Htan state time-wait dst "${addr}") srv=(ss -Htan state time-wait src "${addr}")
  local lo hi n
  read -r lo hi < <(sysctl -n net.ipv4.ip_local_port_range)
  rh_say "TIME_WAIT towards ${SERVER_IP}:${SERVER_PORT}"
  printf 'client$ %s | wc -l\n' "$(csb_quote "${cli[@]}")"
  n=$("${cli[@]}" | wc -l)
  echo "${n}"
  printf 'server$ %s | wc -l\n' "$(csb_quote "${srv[@]}")"
  on_server_sh "$(csb_quote "${srv[@]}") | wc -l"
  local ports=$((hi - lo + 1))
  echo "client ports ${lo}-${hi}: ${ports}, ${n} held by TIME_WAIT, $((ports - n)) free for new connections to ${addr}"
  [[ -n "${max}" ]] || return 0

  rh_say "wait (at most 70 s) until the client holds at most ${max}"
  local deadline=$((SECONDS + 70))
  while ((n > max)); do
    ((SECONDS < deadline)) || die "still ${n} sockets in TIME_WAIT after 70 s (MAX ${max})" 1
    sleep 1
    n=$("${cli[@]}" | wc -l)
    echo "$(date -u +%H:%M:%S) ${n}"
  done
  echo "ok: ${n} in TIME_WAIT, at most ${max}"
}

main "$@"
