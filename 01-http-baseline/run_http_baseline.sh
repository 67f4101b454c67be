#!/usr/bin/env bash
# Phase 1: can an HTTP server fill the link? wrk against the fixed-payload server.
#
# Usage: bash 01-http-baseline/run_http_baseline.sh [-h] [-c FILE] [-l LAB] [-p PROFILE]
#                                                   [-n NAME] [-r RESULTS_ROOT] [-s KEY=VALUE]...
#
# The server (bin/csb-server, one process, bound to SERVER_IP) serves the
# PAYLOADS sizes; one cell per size, in order (with REPEAT=N > 1, N cells
# per size, <size>-r<k>, all in one shuffled order, every one kept):
#   <size>   wrk -t THREADS -c CONNECTIONS -d DURATION --latency
#            -s lib/wrk/report.lua http://SERVER_IP:SERVER_PORT/payload/<size>
# Before each cell an unrecorded wrk run of WARMUP seconds warms the server
# and the connections up; its output is kept in raw/warmup/<size>.txt and
# counts in no figure. wrk's text and the hook's CSB_WRK_JSON line are kept
# verbatim in raw/<size>.txt; one response's headers in raw/headers/.
#
# Per cell (summary.json): rps, throughput_mbps (bytes read, headers
# included), goodput_mbps (bodies only), latency p50..p99.9 in ms, errors by
# kind, both hosts' CPU and the server's and wrk's own (mpstat, pidstat),
# nstat deltas, and link_utilization against the latest Phase 0 run of the
# same lab (its s2c-1 cell), else against the TCP ceiling of LINK_RATE; and a
# verdict: network-, server-CPU-, client-CPU-bound or unclear, with evidence.
#
# With CLIENTS=N >= 2 (netns: N client namespaces behind a switch; ssh:
# CLIENT_HOSTS), a cell's CONNECTIONS are split across the clients (the
# first CONNECTIONS % N get one more; THREADS per client, at most its
# connections) and every client's wrk is started at one due time by `csb
# start-at`: raw/<label>/<size>.txt and <size>.timing.json per client,
# warm-ups in raw/warmup/<label>/. RPS and throughput are summed over the
# window in which every client was loading; latency percentiles come from
# the merged distribution (csb summarize).
#
# Profiles (each setting below overrides its part):
#   smoke  2 s per cell, 1 s warm-up, wrk -t 2 -c 16
#   quick  10 s per cell, 2 s warm-up, wrk -t 2 -c 64
#   full   30 s per cell, 5 s warm-up, wrk -t 4 -c 128 (the seed's experiment)
#
# Settings of this phase (lab.env, environment or -s KEY=VALUE):
#   PAYLOADS      sizes, one cell each, as the server names them (default 1k,10k,100k)
#   THREADS       wrk threads (empty: the profile's)
#   CONNECTIONS   wrk connections (empty: the profile's)
#   WARMUP        seconds of unrecorded warm-up per cell, 0 for none (empty: the profile's)
#   DURATION      seconds per cell (empty: the profile's)
#   REPEAT        runs of every cell, shuffled (default 1); the report gives
#                 each payload's median, min–max and spread
#   SERVER        the server under test: csb (default, the reference server),
#                 nginx, cmd (SERVER_CMD) or url (already running); see README
#   PAYLOAD_PATHS SIZE=PATH,... on that server (default /payload/<size>)
#   SCHEME        http (default) or https: a CA and a certificate made for the
#                 run (TLS_KEY_TYPE, TLS_TICKETS); wrk and oha verify nothing
#
# Options:
#   -c FILE         config file (default: lab.env at the repo root, if any)
#   -l LAB          local | netns | ssh
#   -p PROFILE      smoke | quick | full (default full)
#   -n NAME         run directory suffix (default http-baseline)
#   -r DIR          results root (runs go to DIR/01-http-baseline/<run>/)
#   -s KEY=VALUE    any setting; flags win over the environment, which wins
#                   over the config file
#   -h              this help
#
# Requires: wrk, curl, sysstat, iproute2 and Go on the client; sysstat and
# iproute2 on the server. LAB=netns needs root. Run Phase 0 first in the same
# lab (and results root) to compare against the path's measured ceiling.
# Loads: lib/init.sh. Ends with "results: <run directory>".
#
# Examples:
#   bash 01-http-baseline/run_http_baseline.sh -l local -p smoke
#   sudo LAB=netns PROFILE=quick bash 01-http-baseline/run_http_baseline.sh
#   bash 01-http-baseline/run_http_baseline.sh -p full -s PAYLOADS=1k,4k,10k,100k -s CONNECTIONS=256
#   sudo bash 01-http-baseline/run_http_baseline.sh -l netns -p quick -s REPEAT=5

# shellcheck source=lib/init.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/init.sh"

usage() { sed -n '2,/^$/{s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"; }

PHASE=01-http-baseline

csb_config_declare PAYLOADS 1k,10k,100k sizes "Phase 1: payload sizes, one wrk cell each (GET /payload/<size>)"
csb_config_declare THREADS "" posint_or_empty "wrk threads (empty: the profile's)"
csb_config_declare CONNECTIONS "" posint_or_empty "Phase 1: wrk connections (empty: the profile's)"
csb_config_declare REPEAT 1 posint "Phase 1 and 2: runs of every cell, in one shuffled order"
csb_config_declare WARMUP "" uint_or_empty "seconds of unrecorded load before each cell, 0 for none (empty: the profile's)"

# check_settings: what csb_config_load cannot check alone. Exits 2.
check_settings() {
  csb_payloads_check PAYLOADS "${PAYLOADS}" || exit 2
  if [[ -n "${DURATION}" ]] && ((10#${DURATION} == 0)); then
    usage_error "DURATION=0: a cell needs at least 1 second (empty: the profile's)"
  fi
  REPEAT=$((10#${REPEAT}))
}

# http_cell SIZE REP THREADS CONNECTIONS SECONDS WARMUP: one payload, one
# repetition (named <size>-r<rep> when REPEAT > 1).
http_cell() {
  local size=$1 rep=$2 threads=$3 conns=$4 secs=$5 warmup=$6
  local name=${size}
  ((REPEAT > 1)) && name+="-r${rep}"
  local url raw="${CSB_RUN_DIR}/raw/${name}.txt"
  url=$(csb_payload_url "${size}")
  local -a cmd
  if [[ ! -s "${CSB_RUN_DIR}/raw/headers/${size}.txt" ]]; then
    csb_capture_response "${size}" "${CSB_RUN_DIR}/raw/headers/${size}.txt" ||
      log_warn "could not fetch one /payload/${size} response with curl"
  fi
  if ((warmup > 0)); then
    csb_wrk_cmd cmd "${threads}" "${conns}" "${warmup}" "${url}"
    log_info "warm-up for ${name}: ${warmup} s, not recorded (raw/warmup/${name}.txt)"
    local w="${CSB_RUN_DIR}/raw/warmup/${name}.txt"
    csb_loadgen_exec "${w}" "${w}" "warmup-${name}" "${cmd[@]}" || log_warn "warm-up wrk exited non-zero; see raw/warmup/${name}.txt"
  fi
  csb_wrk_cmd cmd "${threads}" "${conns}" "${secs}" "${url}"
  # cmd[2] is the thread count wrk really gets (never more than connections).
  csb_cell_begin "${name}" "payload=${size}" "payload_bytes=$(csb_size_bytes "${size}")" "rep=${rep}" "loadgen=wrk" \
    "threads=${cmd[2]}" "connections=${conns}" "duration_s=${secs}" "warmup_s=${warmup}"
  local rc=0
  csb_loadgen_exec "${raw}" "${raw}" "loadgen-${name}" "${cmd[@]}" || rc=$?
  if ((rc != 0)); then
    csb_cell_end failed "wrk exited ${rc}; see raw/${name}.txt"
  elif ! grep -q "^${CSB_WRK_JSON_PREFIX}" "${raw}"; then
    csb_cell_end failed "wrk printed no ${CSB_WRK_JSON_PREFIX% } line; see raw/${name}.txt"
  else
    csb_cell_end ok
  fi
}

# http_build K ARRAY THREADS CONNECTIONS SECONDS URL: client K's wrk, with
# its share of the connections (csb_clients_cell's builder).
http_build() {
  local k=$1 threads=$3 conns=$4 secs=$5 url=$6 i script
  # shellcheck disable=SC2178 # a nameref to the caller's array
  local -n _h=$2
  csb_wrk_cmd "$2" "${threads}" "$(csb_clients_split "${conns}" "${k}")" "${secs}" "${url}"
  script=$(csb_client_wrk_script "${k}")
  for i in "${!_h[@]}"; do
    [[ "${_h[i]}" != "${CSB_LIB}/wrk/report.lua" ]] || _h[i]=${script}
  done
}

# http_cell_multi SIZE REP THREADS CONNECTIONS SECONDS WARMUP: one payload,
# one repetition, on every client at once.
http_cell_multi() {
  local size=$1 rep=$2 threads=$3 conns=$4 secs=$5 warmup=$6
  local name=${size} k label ck
  ((REPEAT > 1)) && name+="-r${rep}"
  local url
  url=$(csb_payload_url "${size}")
  if [[ ! -s "${CSB_RUN_DIR}/raw/headers/${size}.txt" ]]; then
    csb_capture_response "${size}" "${CSB_RUN_DIR}/raw/headers/${size}.txt" ||
      log_warn "could not fetch one /payload/${size} response with curl"
  fi
  local -a params=("payload=${size}" "payload_bytes=$(csb_size_bytes "${size}")" "rep=${rep}" "loadgen=wrk"
    "threads=${threads}" "connections=${conns}" "duration_s=${secs}" "warmup_s=${warmup}" "clients=${CSB_CLIENTS_N}")
  for ((k = 1; k <= CSB_CLIENTS_N; k++)); do
    label=${CSB_CL_LABEL[k]} ck=$(csb_clients_split "${conns}" "${k}")
    params+=("${label}.connections=${ck}" "${label}.threads=$((threads < ck ? threads : ck))")
  done
  if ((warmup > 0)); then
    log_info "warm-up for ${name}: ${warmup} s on every client, not recorded (raw/warmup/<client>/${name}.txt)"
    csb_clients_cell "${name}" warmup/ txt same "warmup-${name}" http_build "${threads}" "${conns}" "${warmup}" "${url}" ||
      log_warn "warm-up wrk failed: $(csb_clients_failures); see raw/warmup/<client>/${name}.txt"
  fi
  csb_cell_begin "${name}" "${params[@]}"
  if ! csb_clients_cell "${name}" "" txt same "loadgen-${name}" http_build "${threads}" "${conns}" "${secs}" "${url}"; then
    csb_cell_end failed "wrk failed: $(csb_clients_failures); see raw/<client>/${name}.txt"
    return 0
  fi
  local nojson=""
  for ((k = 1; k <= CSB_CLIENTS_N; k++)); do
    grep -q "^${CSB_WRK_JSON_PREFIX}" "${CSB_RUN_DIR}/raw/${CSB_CL_LABEL[k]}/${name}.txt" 2>/dev/null ||
      nojson+="raw/${CSB_CL_LABEL[k]}/${name}.txt "
  done
  if [[ -n "${nojson}" ]]; then
    csb_cell_end failed "wrk printed no ${CSB_WRK_JSON_PREFIX% } line; see ${nojson% }"
  else
    csb_cell_end ok
  fi
}

main() {
  csb_config_load "$@"
  check_settings
  csb_lab_enter "${BASH_SOURCE[0]}" "$@"
  local duration warmup threads conns size
  duration=${DURATION:-$(csb_profile 2 10 30)}
  warmup=${WARMUP:-$(csb_profile 1 2 5)}
  threads=${THREADS:-$(csb_profile 2 2 4)}
  conns=${CONNECTIONS:-$(csb_profile 16 64 128)}

  if ((conns < CSB_CLIENTS_N)); then
    usage_error "CONNECTIONS=${conns} cannot be split across CLIENTS=${CSB_CLIENTS_N} clients: give at least one connection per client"
  fi

  csb_build_all
  csb_ssh_open
  csb_preflight_tools "wrk curl sar mpstat pidstat sadf nstat ip ss" "sar mpstat pidstat sadf nstat ip ss"
  csb_preflight_route
  csb_run_begin "${PHASE}" http-baseline "$@"
  csb_run_set phase0_results "$(csb_results_root 00-iperf3)"
  mkdir -p "${CSB_RUN_DIR}/raw/warmup" "${CSB_RUN_DIR}/raw/headers"
  csb_capture_env
  csb_monitors_start
  csb_server_deploy
  csb_http_start csb-server "${PAYLOADS}" 1

  local -a sizes cells=()
  local rep cell
  IFS=, read -r -a sizes <<<"${PAYLOADS}"
  for size in "${sizes[@]}"; do
    for ((rep = 1; rep <= REPEAT; rep++)); do
      cells+=("${size} ${rep}")
    done
  done
  if ((REPEAT > 1)); then
    mapfile -t cells < <(printf '%s\n' "${cells[@]}" | shuf)
    log_info "REPEAT=${REPEAT}: ${#cells[@]} cells in shuffled order (cells.tsv keeps it)"
  fi
  for cell in "${cells[@]}"; do
    read -r size rep <<<"${cell}"
    if ((CSB_CLIENTS_N > 1)); then
      http_cell_multi "${size}" "${rep}" "${threads}" "${conns}" "${duration}" "${warmup}"
    else
      http_cell "${size}" "${rep}" "${threads}" "${conns}" "${duration}" "${warmup}"
    fi
  done
  csb_http_stop
}

main "$@"
