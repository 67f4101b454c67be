#!/usr/bin/env bash
# Phase 1: can an HTTP server fill the link? wrk (and h2load over HTTP/2) against the fixed-payload server.
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
# HTTP=2 loads over HTTP/2 instead, HTTP=1.1,2 over both side by side: cell
# <size>-h2 is h2load -t THREADS -c CONNECTIONS -m 1 -D DURATION (one stream
# per connection: the concurrency of the HTTP/1.1 cell) with its
# --log-file, every request's status and latency, kept beside its text in
# raw/<client>/<size>-h2.h2load.{txt,log}. SCHEME=https is h2 (ALPN), http
# h2c with prior knowledge. Before the first cell the server is asked for
# HTTP/2 as h2load asks (csb check-paths -http): a server that answers
# otherwise is refused (exit 2), naming what it offered. The reference
# server then serves HTTP/1.1 and HTTP/2; nginx gets http2 on its listen
# (nginx before 1.25.1 speaks only h2c on a cleartext http2 listen, so
# HTTP=1.1,2 with SERVER=nginx needs SCHEME=https).
#
# Per cell (summary.json): rps, throughput_mbps (bytes read, headers
# included), goodput_mbps (bodies only), latency p50..p99.9 in ms, errors by
# kind, both hosts' CPU and the server's and wrk's own (mpstat, pidstat),
# nstat deltas, and link_utilization against the latest Phase 0 run of the
# same lab (its s2c-1 cell), else against the TCP ceiling of LINK_RATE; and a
# verdict: network-, server-CPU-, client-CPU-bound or unclear, with evidence.
#
# The cell runs on every client host at once (CLIENTS=N; netns: N client
# namespaces behind a switch; ssh: CLIENT_HOSTS): its CONNECTIONS split
# across them (the first CONNECTIONS % N get one more; THREADS per host, at
# most its connections; csb load-plan), each host's wrk started at one due
# time by `csb start-at`: raw/<client>/<size>.txt and <size>.timing.json per
# host (raw/client/ with one), warm-ups in raw/warmup/<client>/. RPS and
# throughput are summed over the hosts; latency percentiles come from the
# merged distribution (csb summarize); one host's figures are its own.
#
# With SERVER=csb, SERVICE_TIME and SLOTS make it a server of known
# capacity (every request holds one of SLOTS slots for SERVICE_TIME: SLOTS /
# SERVICE_TIME req/s at most, reached with CONNECTIONS >= SLOTS), as in
# Phase 5: a known difference for an A/B (scripts/ab.sh -a SLOTS=40 -b
# SLOTS=44).
#
# Profiles (each setting below overrides its part):
#   smoke  2 s per cell, 1 s warm-up, wrk -t 2 -c 16
#   quick  10 s per cell, 2 s warm-up, wrk -t 2 -c 64
#   full   30 s per cell, 5 s warm-up, wrk -t 4 -c 128 (the seed's experiment)
#
# Requires: wrk, curl, sysstat, iproute2 and Go on the client; sysstat and
# iproute2 on the server. LAB=netns needs root. Run Phase 0 first in the same
# lab (and results root) to compare against the path's measured ceiling.
#
# Examples:
#   bash 01-http-baseline/run_http_baseline.sh -l local -p smoke
#   sudo LAB=netns PROFILE=quick bash 01-http-baseline/run_http_baseline.sh
#   bash 01-http-baseline/run_http_baseline.sh -p full -s PAYLOADS=1k,4k,10k,100k -s CONNECTIONS=256
#   sudo bash 01-http-baseline/run_http_baseline.sh -l netns -p quick -s REPEAT=5

# shellcheck source=lib/init.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/init.sh"

usage() { csb_usage http-baseline PAYLOADS HTTP H2_MAX_STREAMS THREADS CONNECTIONS WARMUP DURATION \
  REPEAT SERVICE_TIME SLOTS SERVER PAYLOAD_PATHS SCHEME NON2XX_MAX; }

PHASE=01-http-baseline

csb_config_declare PAYLOADS 1k,10k,100k sizes "sizes, one cell each, as the server names them (default 1k,10k,100k)"
csb_config_declare HTTP 1.1 "enum:1.1|2|1.1,2" "HTTP versions of the cells: 1.1 (wrk), 2 (h2load: h2 over TLS with SCHEME=https, h2c with prior knowledge with http), 1.1,2 both, side by side"
csb_h2_declare
csb_config_declare THREADS "" posint_or_empty "wrk (h2load) threads (empty: the profile's)"
csb_config_declare CONNECTIONS "" posint_or_empty "wrk (h2load) connections (empty: the profile's)"
csb_config_declare REPEAT 1 posint "runs of every cell, shuffled (default 1); the report gives each payload's median, min–max and spread"
csb_config_declare WARMUP "" uint_or_empty "seconds of unrecorded warm-up per cell, 0 for none (empty: the profile's)"
csb_truth_declare

# check_settings: what csb_config_load cannot check alone. Exits 2.
check_settings() {
  csb_payloads_check PAYLOADS "${PAYLOADS}" || exit 2
  csb_truth_check
  if [[ -n "${DURATION}" ]] && ((10#${DURATION} == 0)); then
    usage_error "DURATION=0: a cell needs at least 1 second (empty: the profile's)"
  fi
  REPEAT=$((10#${REPEAT}))
}

# http_cell SIZE HTTP REP THREADS CONNECTIONS SECONDS WARMUP: one payload
# over one HTTP version, one repetition (named <size>[-h2][-r<rep>]), on
# every client host.
http_cell() {
  local size=$1 http=$2 rep=$3 threads=$4 conns=$5 secs=$6 warmup=$7
  local name=${size} tool=wrk
  local -a proto=()
  if [[ "${http}" == 2 ]]; then
    name+=-h2 tool=h2load proto=("streams=1")
  fi
  ((REPEAT > 1)) && name+="-r${rep}"
  if [[ ! -s "${CSB_RUN_DIR}/raw/headers/${size}.txt" ]]; then
    csb_capture_response "${size}" "${CSB_RUN_DIR}/raw/headers/${size}.txt" ||
      log_warn "could not fetch one /payload/${size} response with curl"
  fi
  csb_load_plan "${conns}" "${threads}"
  local -a params
  mapfile -t params < <(csb_load_params)
  csb_load_cell "${name}" "$(csb_payload_url "${size}")" "${secs}" "${warmup}" "payload=${size}" \
    "payload_bytes=${CSB_SIZE_BYTES[${size}]}" "rep=${rep}" "http=${http}" "loadgen=${tool}" "${proto[@]}" "threads=${threads}" \
    "connections=${conns}" "duration_s=${secs}" "warmup_s=${warmup}" "${params[@]}"
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

  csb_build_all
  csb_ssh_open
  local tools="curl sar mpstat pidstat sadf nstat ip ss"
  ! csb_http1_on || tools="wrk ${tools}"
  ! csb_http2_on || tools="h2load ${tools}"
  csb_preflight_tools "${tools}" "sar mpstat pidstat sadf nstat ip ss"
  csb_load_plan "${conns}" "${threads}"
  ((CSB_LOAD[ok])) || usage_error "CONNECTIONS=${conns}: ${CSB_LOAD[refusal]}"
  csb_preflight_route
  csb_run_begin "${PHASE}" http-baseline "$@"
  csb_run_set phase0_results "$(csb_results_root 00-iperf3)"
  mkdir -p "${CSB_RUN_DIR}/raw/headers"
  csb_capture_env
  csb_monitors_start
  csb_server_deploy
  local -a truth
  csb_truth_args truth
  csb_http_start csb-server "${PAYLOADS}" 1 "${truth[@]}"

  local -a sizes versions cells=()
  local rep cell http
  IFS=, read -r -a sizes <<<"${PAYLOADS}"
  IFS=, read -r -a versions <<<"${HTTP}"
  for size in "${sizes[@]}"; do
    for http in "${versions[@]}"; do
      for ((rep = 1; rep <= REPEAT; rep++)); do
        cells+=("${size} ${http} ${rep}")
      done
    done
  done
  csb_cells_shuffle cells "$((duration + warmup))"
  for cell in "${cells[@]}"; do
    read -r size http rep <<<"${cell}"
    http_cell "${size}" "${http}" "${rep}" "${threads}" "${conns}" "${duration}" "${warmup}"
  done
  csb_http_stop
}

main "$@"
