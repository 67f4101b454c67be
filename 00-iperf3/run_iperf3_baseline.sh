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
# per cell: smoke 3, quick 10, full 30 (DURATION overrides); the first
# second (smoke) or two is omitted from the figures (-O).
#
# With CLIENTS=N >= 2 (netns: N client namespaces behind a switch; ssh:
# CLIENT_HOSTS), one iperf3 server per client on its own port (IPERF_PORT,
# IPERF_PORT+1, ...) and every cell runs on all clients at once, started at
# one due time by `csb start-at`: raw/<label>/<cell>.json and
# <cell>.timing.json per client; the aggregate is the sum over the window in
# which every client was sending (csb summarize).
#
# Options:
#   -c FILE         config file (default: lab.env at the repo root, if any)
#   -l LAB          local | netns | ssh
#   -p PROFILE      smoke | quick | full (default full)
#   -n NAME         run directory suffix (default iperf3-baseline)
#   -r DIR          results root (runs go to DIR/00-iperf3/<run>/)
#   -s KEY=VALUE    any setting of lab.env.example; flags win over the
#                   environment, which wins over the config file
#   -h              this help
#
# Requires: iperf3, sysstat, iproute2, curl and Go on the client; iperf3,
# sysstat and iproute2 on the server. LAB=netns needs root.
# Loads: lib/init.sh. Ends with "results: <run directory>".
#
# Examples:
#   bash 00-iperf3/run_iperf3_baseline.sh -l local -p smoke
#   sudo LAB=netns PROFILE=quick bash 00-iperf3/run_iperf3_baseline.sh
#   bash 00-iperf3/run_iperf3_baseline.sh -l ssh -s SERVER_SSH=me@server -s SERVER_IP=192.0.2.10 ...

# shellcheck source=lib/init.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/init.sh"

usage() { sed -n '2,/^$/{s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"; }

PHASE=00-iperf3
CELLS=(
  # name   streams  reverse
  "c2s-1   1        0"
  "c2s-4   4        0"
  "s2c-1   1        1"
  "s2c-4   4        1"
)

iperf3_cell() {
  local name=$1 streams=$2 reverse=$3 duration=$4 omit=$5
  local -a cmd=(iperf3 --client "${SERVER_IP}" --port "${IPERF_PORT}" --bind "${CLIENT_IP}"
    --time "${duration}" --omit "${omit}" --parallel "${streams}" --json)
  ((reverse)) && cmd+=(--reverse)
  csb_cell_begin "${name}" "streams=${streams}" "reverse=${reverse}" "duration_s=${duration}" "omit_s=${omit}"
  local raw="${CSB_RUN_DIR}/raw/${name}.json" err
  # csb_loadgen_exec: with pidstat on the iperf3 client (the run's own CPU
  # apart from other processes'; see DISTURB_THRESHOLD).
  if ! csb_loadgen_exec "${raw}" "${raw}" "iperf3-${name}" "${cmd[@]}"; then
    csb_cell_end failed "iperf3 exited non-zero; see raw/${name}.json"
  elif ! err=$("${CSB_ROOT}/bin/csb" check iperf3 "${raw}" 2>&1); then
    # iperf3 -J can exit 0 and still report an error in its JSON.
    csb_cell_end failed "${err#error: }"
  else
    csb_cell_end ok
  fi
}

# iperf3_build K ARRAY STREAMS REVERSE DURATION OMIT: client K's iperf3
# (csb_clients_cell's builder), against the server on its own port.
iperf3_build() {
  local k=$1 streams=$3 reverse=$4 duration=$5 omit=$6
  # shellcheck disable=SC2178 # a nameref to the caller's array
  local -n _c=$2
  _c=(iperf3 --client "${SERVER_IP}" --port "$((IPERF_PORT + k - 1))" --bind "${CSB_CL_ADDRS[k]%%,*}"
    --time "${duration}" --omit "${omit}" --parallel "${streams}" --json)
  ((reverse)) && _c+=(--reverse)
  return 0
}

# iperf3_cell_multi NAME STREAMS REVERSE DURATION OMIT: one cell on every client.
iperf3_cell_multi() {
  local name=$1 streams=$2 reverse=$3 duration=$4 omit=$5 k label err bad=""
  local -a params=("streams=${streams}" "reverse=${reverse}" "duration_s=${duration}" "omit_s=${omit}" "clients=${CSB_CLIENTS_N}")
  for ((k = 1; k <= CSB_CLIENTS_N; k++)); do
    params+=("${CSB_CL_LABEL[k]}.port=$((IPERF_PORT + k - 1))" "${CSB_CL_LABEL[k]}.streams=${streams}")
  done
  csb_cell_begin "${name}" "${params[@]}"
  if ! csb_clients_cell "${name}" "" json same "iperf3-${name}" iperf3_build "${streams}" "${reverse}" "${duration}" "${omit}"; then
    csb_cell_end failed "iperf3 failed: $(csb_clients_failures); see raw/<client>/${name}.json"
    return 0
  fi
  for ((k = 1; k <= CSB_CLIENTS_N; k++)); do
    label=${CSB_CL_LABEL[k]}
    err=$("${CSB_ROOT}/bin/csb" check iperf3 "${CSB_RUN_DIR}/raw/${label}/${name}.json" 2>&1) || bad+="${label}: ${err#error: }; "
  done
  if [[ -n "${bad}" ]]; then
    csb_cell_end failed "${bad%; }"
  else
    csb_cell_end ok
  fi
}

# iperf3_servers_multi: one iperf3 server per client, each on its own port.
iperf3_servers_multi() {
  local k port pid pids=""
  ((IPERF_PORT + CSB_CLIENTS_N - 1 <= 65535)) ||
    usage_error "IPERF_PORT=${IPERF_PORT}: the ${CSB_CLIENTS_N} clients need ports up to $((IPERF_PORT + CSB_CLIENTS_N - 1)); choose a lower one"
  for ((k = 1; k <= CSB_CLIENTS_N; k++)); do
    port=$((IPERF_PORT + k - 1))
    pid=$(on_server_bg "${CSB_REMOTE_RUN}/server/iperf3-server-${CSB_CL_LABEL[k]}.log" \
      iperf3 --server --bind "${SERVER_IP}" --port "${port}") ||
      die "could not start iperf3 on the server host (port ${port})" 1
    csb_track_server "${pid}" iperf3
    pids+="${pid},"
  done
  csb_monitor_pids iperf3 "${pids%,}"
  for ((k = 1; k <= CSB_CLIENTS_N; k++)); do
    port=$((IPERF_PORT + k - 1))
    csb_wait_listen "${port}" 10 ||
      die "iperf3 on the server did not listen on ${SERVER_IP}:${port} within 10 s; see server/iperf3-server-${CSB_CL_LABEL[k]}.log" 1
  done
}

main() {
  csb_config_load "$@"
  csb_lab_enter "${BASH_SOURCE[0]}" "$@"
  local duration omit
  duration=${DURATION:-$(csb_profile 3 10 30)}
  omit=$(csb_profile 1 2 2)

  csb_build_all
  csb_ssh_open
  csb_preflight_tools "iperf3 sar mpstat pidstat sadf nstat ip ss curl" "iperf3 sar mpstat pidstat sadf nstat ip ss"
  csb_preflight_route
  csb_run_begin "${PHASE}" iperf3-baseline "$@"
  csb_capture_env
  csb_monitors_start

  local cell
  if ((CSB_CLIENTS_N > 1)); then
    iperf3_servers_multi
    for cell in "${CELLS[@]}"; do
      # shellcheck disable=SC2086 # a cell row is whitespace-separated fields
      iperf3_cell_multi ${cell} "${duration}" "${omit}"
    done
    return 0
  fi

  local pid
  pid=$(on_server_bg "${CSB_REMOTE_RUN}/server/iperf3-server.log" \
    iperf3 --server --bind "${SERVER_IP}" --port "${IPERF_PORT}") ||
    die "could not start iperf3 on the server host" 1
  csb_track_server "${pid}" iperf3
  csb_monitor_pids iperf3 "${pid}"
  csb_wait_listen "${IPERF_PORT}" 10 ||
    die "iperf3 on the server did not listen on ${SERVER_IP}:${IPERF_PORT} within 10 s; see server/iperf3-server.log" 1

  for cell in "${CELLS[@]}"; do
    # shellcheck disable=SC2086 # a cell row is whitespace-separated fields
    iperf3_cell ${cell} "${duration}" "${omit}"
  done
}

main "$@"
