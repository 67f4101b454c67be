#!/usr/bin/env bash
# Phase 2: what payload and concurrency do to RPS, CPU and tail latency (oha).
#
# Usage: bash 02-http-matrix/run_http_matrix.sh [-h] [-c FILE] [-l LAB] [-p PROFILE]
#                                               [-n NAME] [-r RESULTS_ROOT] [-s KEY=VALUE]...
#
# The server (bin/csb-server, one process, bound to SERVER_IP) serves the
# PAYLOADS sizes. One cell per payload x concurrency, named <size>-c<N>
# (<size>-c<N>-r<k> with REPEAT > 1), each a closed loop of N connections
# for DURATION seconds against /payload/<size>:
#   oha  oha --no-tui --output-format json (-j on older oha) -z <D>s -c N
#            --wait-ongoing-requests-after-deadline URL    -> raw/<cell>.json
#   wrk  wrk -t min(THREADS,N) -c N -d <D>s --latency -s lib/wrk/report.lua URL
#                                                            -> raw/<cell>.txt
# LOADGEN=auto (default) runs oha when it is installed, else wrk, and then the
# summary and the report say in their first lines that wrk stood in for oha.
# HTTP=2 loads over HTTP/2 with h2load instead (h2 with SCHEME=https, h2c
# with prior knowledge with http; the server is asked for it before the
# first cell, as in Phase 1), and the matrix gains STREAMS, the streams per
# connection (-m, default 1,10,100): one cell per payload x streams x
# concurrency, named <size>-c<N>-m<S>:
#   h2load  h2load -t min(THREADS,N) -c N -m S -D <D> --log-file=...
#                                                  -> raw/<cell>.h2load.{txt,log}
#   oha     (LOADGEN=oha, where oha is installed) oha ... -z <D>s -c N
#            --http2 -p S URL                        -> raw/<cell>.json
# and each payload x streams is a series whose plateau the report finds
# (h2load logs every request, so several client hosts' percentiles merge
# exactly; oha's JSON has percentiles only).
# Before each cell WARMUP seconds of the same load run unrecorded (output in
# raw/warmup/). REPEAT=N runs every cell N times, all in one shuffled order;
# the report shows the median and the min-max.
#
# Each cell is planned across the client hosts (csb load-plan): a host
# whose hard fd limit cannot hold its share of the connections (+64 spare)
# refuses the cell (cells.tsv: refused, with the reason), never run
# half-broken; every tool runs with its soft limit raised to the hard one.
# The summary notes a server net.core.somaxconn (env/server) below the
# largest concurrency.
#
# Profiles (each setting below overrides its part):
#   smoke  1k,4k x 16,64 (the matrix's top-left corner), 2 s per cell, 1 s warm-up
#   quick  1k,10k,100k x 16,64,256, 5 s per cell, 1 s warm-up
#   full   1k,4k,10k,100k x 16,64,128,256,512,1024, 30 s per cell, 5 s warm-up
#          (the seed's experiment)
#
# Every cell runs on every client host at once (CLIENTS=N; netns: N client
# namespaces behind a switch; ssh: CLIENT_HOSTS): its concurrency split
# across them (the first CONCURRENCY % N get one more), each host's load
# generator started at one due time by `csb start-at`:
# raw/<client>/<cell>.<ext> and <cell>.timing.json per host (raw/client/
# with one); rates are summed over the hosts, latency percentiles come from
# the merged distribution (csb summarize); one host's figures are its own.
#
# Requires: oha (or wrk), curl, sysstat, iproute2 and Go on the client;
# sysstat and iproute2 on the server. LAB=netns needs root. Run Phase 0 first
# in the same lab (and results root) to compare against the path's ceiling.
#
# Examples:
#   bash 02-http-matrix/run_http_matrix.sh -l local -p smoke
#   sudo LAB=netns PROFILE=quick bash 02-http-matrix/run_http_matrix.sh
#   bash 02-http-matrix/run_http_matrix.sh -s PAYLOADS=1k,100k -s CONCURRENCY=64,1024 -s REPEAT=3
#   sudo bash 02-http-matrix/run_http_matrix.sh -l netns -p quick -s HTTP=2 -s STREAMS=1,10
#   sudo bash 02-http-matrix/run_http_matrix.sh -l netns -p quick -s HTTP=2 -s LOADGEN=oha   # where oha is installed

# shellcheck source=lib/init.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/init.sh"

usage() { csb_usage http-matrix PAYLOADS CONCURRENCY HTTP STREAMS H2_MAX_STREAMS LOADGEN THREADS REPEAT \
  WARMUP DURATION SERVER PAYLOAD_PATHS SCHEME NON2XX_MAX; }

PHASE=02-http-matrix

# PAYLOADS and CONCURRENCY default to the full matrix; smoke and quick take
# their part of it unless the setting was given (check_settings).
csb_config_declare PAYLOADS 1k,4k,10k,100k sizes "sizes as the server names them (default: the profile's)"
csb_config_declare CONCURRENCY 16,64,128,256,512,1024 posints "connections per cell, positive integers (default: the profile's)"
csb_config_declare HTTP 1.1 "enum:1.1|2" "1.1 (oha or wrk) or 2 (h2load: h2 over TLS with SCHEME=https, h2c with prior knowledge with http)"
csb_h2_declare
csb_config_declare STREAMS 1,10,100 posints "HTTP=2: streams per connection (h2load -m), a matrix dimension beside CONCURRENCY (default 1,10,100)"
csb_config_declare LOADGEN auto "enum:auto|oha|wrk" "auto | oha | wrk (default auto); HTTP=2: auto loads with h2load, oha with oha --http2 -p STREAMS"
csb_config_declare THREADS "" posint_or_empty "wrk threads when wrk runs (empty: this host's CPUs)"
csb_config_declare REPEAT 1 posint "runs of every cell, shuffled (default 1)"
csb_config_declare WARMUP "" uint_or_empty "seconds of unrecorded load per cell, 0 for none (empty: the profile's)"

# once_each KEY: every number of the list setting KEY is listed once (exit
# 2 naming the first one listed twice).
once_each() {
  local -A seen=()
  local -a items
  local n
  IFS=, read -r -a items <<<"${!1}"
  for n in "${items[@]}"; do
    [[ -z "${seen[$((10#${n}))]+x}" ]] || usage_error "$1=${!1}: ${n} is listed twice"
    seen[$((10#${n}))]=1
  done
}

# check_settings: what csb_config_load cannot check alone. Exits 2.
check_settings() {
  if [[ "${CSB_ORIGIN[PAYLOADS]}" == default ]]; then
    PAYLOADS=$(csb_profile 1k,4k 1k,10k,100k "${PAYLOADS}")
  fi
  if [[ "${CSB_ORIGIN[CONCURRENCY]}" == default ]]; then
    CONCURRENCY=$(csb_profile 16,64 16,64,256 "${CONCURRENCY}")
  fi
  csb_payloads_check PAYLOADS "${PAYLOADS}" || exit 2
  once_each CONCURRENCY
  if [[ -n "${DURATION}" ]] && ((10#${DURATION} == 0)); then
    usage_error "DURATION=0: a cell needs at least 1 second (empty: the profile's)"
  fi
  REPEAT=$((10#${REPEAT}))
  if [[ "${HTTP}" == 2 ]]; then
    [[ "${LOADGEN}" != wrk ]] ||
      usage_error "LOADGEN=wrk speaks HTTP/1.1 only: HTTP=2 loads with h2load (LOADGEN=auto) or oha --http2 (LOADGEN=oha)"
    once_each STREAMS
    CSB_LOADGEN=h2load CSB_LOADGEN_STANDIN=0
    # oha over HTTP/2 only when asked: h2load logs every request, so its
    # percentiles merge exactly; oha's JSON has percentiles only.
    [[ "${LOADGEN}" != oha ]] || csb_loadgen_resolve
  else
    # (By value, not origin: entering the lab runs this again with every
    # setting from the environment.)
    # shellcheck disable=SC2153 # STREAMS is the setting (csb_config_declare)
    [[ "${STREAMS}" == "${CSB_DEFAULT[STREAMS]}" ]] ||
      usage_error "STREAMS=${STREAMS}: streams per connection are HTTP/2's; set HTTP=2 (HTTP/1.1 keeps one request a connection)"
    csb_loadgen_resolve
  fi
}

# matrix_cell SIZE CONCURRENCY STREAMS REP SECONDS WARMUP: one cell of the
# matrix (STREAMS: - over HTTP/1.1), on every client host.
matrix_cell() {
  local size=$1 conc=$((10#$2)) m=$3 rep=$4 secs=$5 warmup=$6
  local name="${size}-c${conc}"
  [[ "${m}" == - ]] || name+="-m$((10#${m}))"
  ((REPEAT > 1)) && name+="-r${rep}"
  local -a params=("payload=${size}" "payload_bytes=${CSB_SIZE_BYTES[${size}]}" "concurrency=${conc}")
  [[ "${m}" == - ]] || params+=("http=2" "streams=$((10#${m}))")
  params+=("rep=${rep}" "loadgen=${CSB_LOADGEN}")
  [[ "${CSB_LOADGEN}" == oha ]] || params+=("threads=${THREADS:-cpus}")
  params+=("duration_s=${secs}" "warmup_s=${warmup}" "connections=${conc}")
  csb_load_plan "${conc}" "${THREADS:-0}"
  local -a shares
  mapfile -t shares < <(csb_load_params)
  params+=("${shares[@]}")
  if ((!CSB_LOAD[ok])); then
    csb_cell_begin "${name}" "${params[@]}"
    csb_cell_end refused "${CSB_LOAD[refusal]}"
    return 0
  fi
  csb_load_cell "${name}" "$(csb_payload_url "${size}")" "${secs}" "${warmup}" "${params[@]}"
}

main() {
  csb_config_load "$@"
  check_settings
  csb_lab_enter "${BASH_SOURCE[0]}" "$@"
  local duration warmup size conc rep
  duration=${DURATION:-$(csb_profile 2 5 30)}
  warmup=${WARMUP:-$(csb_profile 1 1 5)}

  csb_build_all
  csb_ssh_open
  csb_preflight_tools "${CSB_LOADGEN} curl sar mpstat pidstat sadf nstat ip ss" "sar mpstat pidstat sadf nstat ip ss"
  csb_preflight_route
  [[ "${CSB_LOADGEN}" != oha ]] || csb_oha_probe "$([[ "${HTTP}" != 2 ]] || echo h2)"
  csb_run_begin "${PHASE}" http-matrix "$@"
  csb_run_set phase0_results "$(csb_results_root 00-iperf3)"
  csb_run_set payloads "${PAYLOADS}"
  csb_run_set concurrency "${CONCURRENCY}"
  csb_run_set loadgen "${CSB_LOADGEN}"
  csb_run_set loadgen_standin "${CSB_LOADGEN_STANDIN}"
  if ((CSB_LOADGEN_STANDIN)); then
    log_warn "oha is not installed on this host: wrk (with lib/wrk/report.lua) stands in for oha (LOADGEN=auto)"
  fi
  [[ "${CSB_LOADGEN}" == oha ]] && csb_run_set oha_flags "${CSB_OHA_JSON[*]} ${CSB_OHA_WAIT}"
  mkdir -p "${CSB_RUN_DIR}/raw/headers"
  csb_capture_env
  csb_monitors_start
  csb_server_deploy
  csb_http_start csb-server "${PAYLOADS}" 1

  local -a sizes concs mvals=(-) cells=()
  local m
  IFS=, read -r -a sizes <<<"${PAYLOADS}"
  IFS=, read -r -a concs <<<"${CONCURRENCY}"
  [[ "${HTTP}" != 2 ]] || IFS=, read -r -a mvals <<<"${STREAMS}"
  for size in "${sizes[@]}"; do
    csb_capture_response "${size}" "${CSB_RUN_DIR}/raw/headers/${size}.txt" ||
      log_warn "could not fetch one /payload/${size} response with curl"
    for m in "${mvals[@]}"; do
      for conc in "${concs[@]}"; do
        for ((rep = 1; rep <= REPEAT; rep++)); do
          cells+=("${size} ${conc} ${m} ${rep}")
        done
      done
    done
  done
  csb_cells_shuffle cells "$((duration + warmup))"
  local cell
  for cell in "${cells[@]}"; do
    # shellcheck disable=SC2086 # a cell is "size concurrency streams rep"
    matrix_cell ${cell} "${duration}" "${warmup}"
  done
  csb_http_stop
}

main "$@"
