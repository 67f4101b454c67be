#!/usr/bin/env bash
# Phase 0: the raw TCP ceiling of the server-to-client path, with iperf3.
#
# Usage: bash 00-iperf3/run_iperf3_baseline.sh [-h] [-c FILE] [-l LAB] [-p PROFILE]
#                                              [-n NAME] [-r RESULTS_ROOT] [-s KEY=VALUE]...
#
# Four cells, each `iperf3 --json` against an iperf3 server started on the
# server host, bound to SERVER_IP, for this run only:
#   c2s-1   1 stream, client -> server
#   c2s-4   4 streams, client -> server
#   s2c-1   1 stream, server -> client (-R)
#   s2c-4   4 streams, server -> client (-R)
# Per cell: receiver throughput, sender throughput, retransmits, both ends'
# CPU as iperf3 reports it, and each stream for the 4-stream cells. Seconds
# per cell: smoke 3, quick 5, full 30 (DURATION overrides); the first
# second (smoke, quick) or two (full) is omitted from the figures (-O).
#
# One iperf3 server per client host (IPERF_PORT, IPERF_PORT+1, ...; one
# client: IPERF_PORT alone), and every cell runs on all client hosts at once,
# started at one due time by `csb start-at`: raw/<client>/<cell>.json and
# <cell>.timing.json per client (raw/client/ with one client host); the
# aggregate is the sum over the window in which every client was sending
# (csb summarize), and one client's figures are its own.
#
# Requires: iperf3, sysstat, iproute2, curl and Go on the client; iperf3,
# sysstat and iproute2 on the server. LAB=netns needs root.
#
# Examples:
#   bash 00-iperf3/run_iperf3_baseline.sh -l local -p smoke
#   sudo LAB=netns PROFILE=quick bash 00-iperf3/run_iperf3_baseline.sh
#   bash 00-iperf3/run_iperf3_baseline.sh -l ssh -s SERVER_SSH=me@server -s SERVER_IP=192.0.2.10 ...

# shellcheck source=lib/init.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/init.sh"

usage() { csb_usage iperf3-baseline; }

PHASE=00-iperf3
CELLS=(
  # name   streams  reverse
  "c2s-1   1        0"
  "c2s-4   4        0"
  "s2c-1   1        1"
  "s2c-4   4        1"
)

# iperf3_cell NAME STREAMS REVERSE DURATION OMIT: one cell on every client
# host at once, each against its own iperf3 server.
iperf3_cell() {
  local name=$1 streams=$2 reverse=$3 duration=$4 omit=$5 k label
  local -a params=("streams=${streams}" "reverse=${reverse}" "duration_s=${duration}" "omit_s=${omit}" "clients=${CSB_CLIENTS_N}")
  csb_procs_reset
  for k in $(csb_clients); do
    label=${CSB_H_LABEL[k]}
    params+=("${label}.port=$((IPERF_PORT + k - 1))" "${label}.streams=${streams}")
    local -a cmd=(iperf3 --client "${SERVER_IP}" --port "$((IPERF_PORT + k - 1))" --bind "${CSB_H_ADDRS[k]%%,*}"
      --time "${duration}" --omit "${omit}" --parallel "${streams}" --json)
    ((reverse)) && cmd+=(--reverse)
    csb_proc_add "${k}" "raw/${label}/${name}.json" "raw/${label}/${name}.json" "${cmd[@]}"
  done
  csb_procs_cell "${name}" "iperf3-${name}" "$((duration + omit + 30))" iperf3_ok "${params[@]}"
}

# iperf3_ok FILE: iperf3's JSON reports no error (iperf3 -J can exit 0 and
# still report one).
iperf3_ok() { "${CSB_ROOT}/bin/csb" check iperf3 "$1"; }

# iperf3_servers: one iperf3 server per client host, each on its own port.
iperf3_servers() {
  local k port pid pids=""
  ((IPERF_PORT + CSB_CLIENTS_N - 1 <= 65535)) ||
    usage_error "IPERF_PORT=${IPERF_PORT}: the ${CSB_CLIENTS_N} clients need ports up to $((IPERF_PORT + CSB_CLIENTS_N - 1)); choose a lower one"
  for k in $(csb_clients); do
    port=$((IPERF_PORT + k - 1))
    pid=$(on_server_bg "${CSB_H_WORK[0]}/server/iperf3-server-${CSB_H_LABEL[k]}.log" \
      iperf3 --server --bind "${SERVER_IP}" --port "${port}") ||
      die "could not start iperf3 on the server host (port ${port})" 1
    csb_track 0 "${pid}" iperf3
    pids+="${pid},"
  done
  csb_monitor_pids 0 iperf3 "${pids%,}"
  for k in $(csb_clients); do
    port=$((IPERF_PORT + k - 1))
    csb_wait_listen "${port}" 10 ||
      die "iperf3 on the server did not listen on ${SERVER_IP}:${port} within 10 s; see server/iperf3-server-${CSB_H_LABEL[k]}.log" 1
  done
}

main() {
  csb_config_load "$@"
  # The iperf3 servers' ports are this run's too (one per client host).
  local k
  for ((k = 0; k < CSB_CLIENTS_N; k++)); do CSB_LOCK_PORTS+=("$((IPERF_PORT + k))"); done
  csb_lab_enter "${BASH_SOURCE[0]}" "$@"
  local duration omit
  duration=${DURATION:-$(csb_profile 3 5 30)}
  omit=$(csb_profile 1 1 2)

  csb_build_all
  csb_ssh_open
  csb_preflight_tools "iperf3 sar mpstat pidstat sadf nstat ip ss curl" "iperf3 sar mpstat pidstat sadf nstat ip ss"
  csb_preflight_route
  csb_run_begin "${PHASE}" iperf3-baseline "$@"
  csb_capture_env
  csb_monitors_start

  iperf3_servers
  local cell
  CSB_PLAN=("${CELLS[@]/*/$((duration + omit))}")
  for cell in "${CELLS[@]}"; do
    # shellcheck disable=SC2086 # a cell row is whitespace-separated fields
    iperf3_cell ${cell} "${duration}" "${omit}"
  done
}

main "$@"
