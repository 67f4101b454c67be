#!/usr/bin/env bash
# Step 06: watch one host with one tool for a few seconds.
#
# Usage: rehearsal/06_watch.sh [-h] [-c FILE] [-l LAB] [-s KEY=VALUE]... [TOOL] [server|client]
#
# Run it in a second terminal while a load step (04, 07-10) runs. TOOL:
#   sar      sar -n DEV,TCP,ETCP 1 N    NIC packets and kB/s, TCP opens,
#                                       retransmits, resets (default)
#   mpstat   mpstat -P ALL 1 N          each CPU: %usr %sys %soft %idle
#   pidstat  pidstat -u -r -p PID 1 N   the server process: CPU %, RSS
#                                       (server only; PID from step 05)
#   nstat    nstat -asz COUNTERS...     absolute TCP counters: listen
#                                       overflows and drops, retransmits,
#                                       resets, opens (once)
#   ss       ss -s                      sockets by state, TIME_WAIT (once)
# on the server host (default) or the client. N is DURATION (default 3).
#
# Exit status: 0 ok, 1 the tool failed (or no server for pidstat), 2 bad
# usage, 4 the server is unreachable.
#
# Requires: sysstat and iproute2 on the watched host; pidstat: the server
# (step 05). Loads: rehearsal/lib.sh (lib/init.sh).
#
# Examples:
#   rehearsal/06_watch.sh                      # sar on the server, 3 s
#   DURATION=30 rehearsal/06_watch.sh mpstat client
#   rehearsal/06_watch.sh pidstat

# shellcheck source=rehearsal/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

COUNTERS=(TcpActiveOpens TcpPassiveOpens TcpEstabResets TcpRetransSegs
  TcpExtListenOverflows TcpExtListenDrops TcpExtTCPTimeouts TcpExtTCPAbortOnData)

main() {
  rh_init "$@"
  rh_args_max 2
  local tool=${RH_ARGS[0]:-sar} host=${RH_ARGS[1]:-server} secs=${DURATION:-3}
  ((10#${secs} > 0)) || usage_error "DURATION=0: watch at least 1 second"
  [[ "${host}" == server || "${host}" == client ]] || usage_error "host ${host}: expected server or client"
  local -a cmd
  # shellcheck disable=SC2054 # DEV,TCP,ETCP is one argument of sar -n
  case "${tool}" in
    sar) cmd=(sar -n DEV,TCP,ETCP 1 "${secs}") ;;
    mpstat) cmd=(mpstat -P ALL 1 "${secs}") ;;
    pidstat) [[ "${host}" == server ]] || usage_error "pidstat watches the server process: use it with server" ;;
    nstat) cmd=(nstat -asz "${COUNTERS[@]}") ;;
    ss) cmd=(ss -s) ;;
    *) usage_error "tool ${tool}: expected sar, mpstat, pidstat, nstat or ss" ;;
  esac
  rh_enter
  rh_connect
  if [[ "${tool}" == pidstat ]]; then
    local pid
    pid=$(rh_need_server) || exit 1
    cmd=(pidstat -u -r -p "${pid}" 1 "${secs}")
  fi

  rh_say "${tool} on the ${host} host"
  if [[ "${host}" == server ]]; then
    rh_on_server "${cmd[@]}"
  else
    rh_run "${cmd[@]}"
  fi
}

main "$@"
