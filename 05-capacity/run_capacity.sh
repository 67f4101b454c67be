#!/usr/bin/env bash
# Phase 5: how many requests per second does the server take before its
# latency leaves the budget? An open-model search per payload.
#
# Usage: bash 05-capacity/run_capacity.sh [-h] [-c FILE] [-l LAB] [-p PROFILE]
#                                         [-n NAME] [-r RESULTS_ROOT] [-s KEY=VALUE]...
#
# Per payload (PAYLOADS) a search for the highest offered rate at which the
# SLO holds: the SLO_PERCENTILE of the latency from each request's due time
# (coordinated-omission free) at most SLO_LATENCY_MS, failed requests at
# most SLO_ERRORS_PCT % of those due, and the server in steady state: the
# rate it delivered while the schedule ran (answers from the first tenth
# of the step after its median latency to the schedule's end; those in the
# drain do not count) at least 99 % of offered, and the latency from the
# due time growing at most SEARCH_RESOLUTION_PCT x 5 ms per s over the
# schedule (a queue that grows fails the step: code queue).
# Each step is a cell of connclient lowrate (an open-model schedule:
# request i due at start + i/rate, whatever the answers before it) with
# CONNECTIONS connections, STEP seconds long, on every client host at one
# start time, rate and connections split across the hosts. From a start
# rate (START_RPS; when empty, half the payload's closed-loop maximum in the
# newest Phase 2 run of the same lab, server and scheme, else half of what
# a 2 s probe at full speed, <size>-probe, achieved) the rate doubles while
# the SLO holds, halves while it does not, then
# bisects between the highest passing and the lowest failing rate until
# they are within SEARCH_RESOLUTION_PCT %; at most SEARCH_MAX_STEPS steps
# and, with SEARCH_MAX_S, no step that would take the steps past it.
# With REPEAT=N > 1 the bracket's two rates are then stepped until each has
# N steps; a rate passes only when all of its steps do (a repetition that
# fails moves the bracket and the bisection goes on).
# A step that broke the SLO while its client was the limit (its CPUs >= 90 %
# busy, whoever used them, its event loops busy >= 90 % of their time, or
# its own sender lag p99 over 1 ms or half SLO_LATENCY_MS, whichever is
# more) is client-bound: never counted as the server's capacity, it ends
# the search naming the client's ceiling.
# The search is Go's (csb capacity-next, internal/capacity), after each
# step, from the raw results: csb summarize replays it.
#
# Raw: raw/<client>/<size>-sNN.json (connclient's result: rates, counts,
# mergeable histograms of the latency from the due time, of the service
# time and of the sender lag) and .log per client host and step.
#
# Ground truth: with SERVER=csb, SERVICE_TIME (a duration) and SLOTS (a
# count) make every request hold one of SLOTS slots for SERVICE_TIME, so
# the capacity is SLOTS / SERVICE_TIME (the server measures the hold it
# really gave; its /stats before and after each step, raw/<step>.statsN.json,
# give the hold at the capacity's rate, and the report compares the
# capacity found with SLOTS / that hold).
#
# Profiles (each setting below overrides its part):
#   smoke  2 s steps, 32 connections, at most 10 steps, fallback start 1000 req/s
#   quick  5 s steps, 64 connections, at most 12 steps, fallback start 4000 req/s
#   full   10 s steps, 128 connections, at most 14 steps, fallback start 4000 req/s
# (with REPEAT=N, 2 x (N - 1) steps more; the fallback start is for a probe
# that failed)
#
# Requires: sysstat, iproute2 and Go on the client and the server. LAB=netns
# needs root.
#
# Examples:
#   bash 05-capacity/run_capacity.sh -l local -p smoke -s PAYLOADS=1k
#   sudo bash 05-capacity/run_capacity.sh -l netns -p smoke -s SLOTS=40 -s SERVICE_TIME=10ms -s PAYLOADS=1k
#   sudo bash 05-capacity/run_capacity.sh -l netns -p quick -s SLO_LATENCY_MS=5 -s SLO_PERCENTILE=99.9

# shellcheck source=lib/init.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/init.sh"

usage() { csb_usage capacity PAYLOADS CONNECTIONS STEP START_RPS \
  SLO_PERCENTILE SLO_LATENCY_MS SLO_ERRORS_PCT SEARCH_RESOLUTION_PCT \
  SEARCH_MAX_STEPS SEARCH_MAX_S REPEAT SERVICE_TIME SLOTS HTTP SERVER SCHEME; }

PHASE=05-capacity

csb_config_declare PAYLOADS 1k,10k,100k sizes "sizes, one search each, as the server names them (default 1k,10k,100k)"
csb_config_declare CONNECTIONS "" posint_or_empty "connections of the open-model client over all client hosts (empty: the profile's)"
csb_config_declare STEP "" posint_or_empty "seconds of each step (empty: the profile's)"
csb_config_declare START_RPS "" posint_or_empty "the first step's rate, req/s (empty: the profile's)"
csb_config_declare SLO_PERCENTILE 99 decimal "the SLO's percentile of the latency from the due time (default 99)"
csb_config_declare SLO_LATENCY_MS 10 decimal "the SLO's latency bound in ms, 0.1 to 60000 (default 10)"
csb_config_declare SLO_ERRORS_PCT 0.1 decimal "the SLO's failed requests, at most this % of those due (default 0.1)"
csb_config_declare SEARCH_RESOLUTION_PCT 2 decimal "the bisection ends when its bracket is within this % (default 2)"
csb_config_declare SEARCH_MAX_STEPS "" posint_or_empty "steps per payload at most (empty: the profile's)"
csb_config_declare SEARCH_MAX_S "" posint_or_empty "seconds of steps per payload at most: no step that would pass it (empty: no bound)"
csb_config_declare REPEAT 1 posint "steps at each of the bracket's two rates at the end; a rate passes when all pass (default 1)"
csb_truth_declare
csb_config_declare HTTP 1.1 "enum:1.1|2" "HTTP version of the steps: 1.1 only for now (2 is refused: the open-model client speaks HTTP/1.1)"

declare -gA CAP=() CAP_FROM=() CAP_STARTS=()
CAP_START="" CAP_DEFAULT_START="" CAP_DRAIN=1s
# The probe: an offered rate no server takes, for CAPACITY_PROBE_S seconds.
readonly CAPACITY_PROBE_RPS=10000000 CAPACITY_PROBE_S=2
declare -ga CAP_FLAGS=()

# capacity_flags: the SLO and search flags of csb capacity-next, from
# the settings; checked once before anything starts (exit 2 on a bad one).
capacity_flags() {
  CAP_FLAGS=(-percentile "${SLO_PERCENTILE}" -latency-ms "${SLO_LATENCY_MS}" -errors-pct "${SLO_ERRORS_PCT}"
    -resolution-pct "${SEARCH_RESOLUTION_PCT}" -repeat "${REPEAT}" -max-steps "$1" -start "$2"
    -max-seconds "${SEARCH_MAX_S:-0}")
  "${CSB_ROOT}/bin/csb" capacity-next "${CAP_FLAGS[@]}" >/dev/null || exit 2
}

# capacity_starts SIZE...: where each payload's search starts, before the
# plan (a probe is a cell more): START_RPS; else half of Phase 2's
# closed-loop maximum (csb capacity-next -phase2), recorded in run.env for
# csb summarize's replay; else a probe (CAP_FROM[SIZE]=probe).
capacity_starts() {
  local out size
  for size in "$@"; do
    CAP_FROM[${size}]=setting
    if [[ -n "${START_RPS}" ]]; then
      CAP_STARTS[${size}]=${START_RPS}
      csb_run_set "capacity.start_rps.${size}" "${START_RPS}"
      continue
    fi
    out=$("${CSB_ROOT}/bin/csb" capacity-next "${CAP_FLAGS[@]}" -phase2 "$(csb_results_root 02-http-matrix)" \
      -lab "${LAB}" -server "${SERVER}" -scheme "${SCHEME}" -payload "${size}") || die "csb capacity-next -phase2 failed" 1
    csb_kv_into CAP "${out}"
    if [[ "${CAP[start_from]}" == phase2 ]]; then
      CAP_FROM[${size}]=phase2
      log_info "${size}: starts at ${CAP[rps]} req/s, half the closed-loop maximum of Phase 2 (${CAP[phase2_max_rps]} RPS in ${CAP[phase2_run]#"${CSB_ROOT}"/})"
      csb_run_set "capacity.phase2_max_rps.${size}" "${CAP[phase2_max_rps]}"
      csb_run_set "capacity.phase2_run.${size}" "${CAP[phase2_run]}"
      CAP_STARTS[${size}]=${CAP[rps]}
      csb_run_set "capacity.start_rps.${size}" "${CAP[rps]}"
    else
      CAP_FROM[${size}]=probe
      log_info "${size}: no Phase 2 run of LAB=${LAB} SERVER=${SERVER} SCHEME=${SCHEME} at ${size} to start from: a ${CAPACITY_PROBE_S} s probe at full speed first"
    fi
  done
}

# capacity_start SIZE CONNS: CAP_START, the first step's rate of SIZE, as
# capacity_starts found it, or half of what a probe achieved: a step
# offering far more than any server takes (every connection kept busy, as
# a closed loop does), CONNS connections, CAPACITY_PROBE_S seconds. A probe
# that fails leaves the profile's rate.
capacity_start() {
  local size=$1 conns=$2 out failed=${CSB_CELLS_FAILED}
  CAP_START=${CAP_STARTS[${size}]:-}
  [[ "${CAP_FROM[${size}]}" == probe ]] || return 0
  CAP_START=${CAP_DEFAULT_START}
  # No drain: what the probe's schedule left unsent would be sent in it,
  # and the rate over the schedule overstated.
  CAP_DRAIN=0s
  capacity_step "${size}-probe" "${size}" "${CAPACITY_PROBE_RPS}" "${conns}" "${CAPACITY_PROBE_S}" "reason=probe"
  CAP_DRAIN=1s
  if ((CSB_CELLS_FAILED > failed)); then
    log_warn "${size}: the probe failed: the search starts at the profile's ${CAP_START} req/s"
  else
    out=$("${CSB_ROOT}/bin/csb" capacity-next "${CAP_FLAGS[@]}" -dir "${CSB_RUN_DIR}" -probe "${size}-probe") ||
      die "csb capacity-next -probe failed" 1
    csb_kv_into CAP "${out}"
    CAP_START=${CAP[rps]}
    log_info "${size}: the probe achieved ${CAP[probe_rps]} req/s: the search starts at half of it, ${CAP_START} req/s"
    csb_run_set "capacity.probe_rps.${size}" "${CAP[probe_rps]}"
  fi
  csb_run_set "capacity.start_rps.${size}" "${CAP_START}"
}

# capacity_next STEP...: CAP from csb capacity-next over the steps
# of the payload so far.
capacity_next() {
  local out step
  local -a cmd=("${CSB_ROOT}/bin/csb" capacity-next "${CAP_FLAGS[@]}" -start "${CAP_START}" -dir "${CSB_RUN_DIR}")
  for step in "$@"; do cmd+=(-step "${step}"); done
  out=$("${cmd[@]}") || die "csb capacity-next failed: $(csb_quote "${cmd[@]}")" 1
  CAP=()
  csb_kv_into CAP "${out}"
}

# capacity_step STEP SIZE RPS CONNS SECONDS PARAM...: one step as one
# cell: every client host's share of RPS and CONNS, connections opened
# first, then one start time for every schedule.
capacity_step() {
  local step=$1 size=$2 rps=$3 conns=$4 secs=$5 k label target bin path
  shift 5
  local -a cmd tls rates=()
  target="$(csb_url_host "${SERVER_IP}"):${SERVER_PORT}"
  path=$(csb_payload_path "${size}")
  csb_load_plan "${rps}" 1 rate
  for k in $(csb_clients); do rates[k]=${CSB_LOAD[${CSB_H_LABEL[k]}.connections]}; done
  csb_load_plan "${conns}" 1
  csb_procs_reset
  for k in $(csb_clients); do
    label=${CSB_H_LABEL[k]}
    mapfile -t tls < <(csb_tls_client_flags "${k}")
    bin=$(csb_client_bin "${k}")
    cmd=("${bin}/connclient" lowrate -target "${target}"
      -conns "${CSB_LOAD[${label}.connections]}" -rps "${rates[k]}" -duration "${secs}s" -drain "${CAP_DRAIN}"
      -path "${path}" -start-file "raw/${step}.start" -start-wait 60s "${tls[@]}")
    csb_proc_add "${k}" "raw/${label}/${step}.json" "raw/${label}/${step}.log" "${cmd[@]}"
  done
  csb_cell_begin "${step}" "payload=${size}" "payload_bytes=${CSB_SIZE_BYTES[${size}]}" "offered_rps=${rps}" \
    "connections=${conns}" "duration_s=${secs}" "clients=${CSB_CLIENTS_N}" "$@"
  capacity_stats "${step}" 0
  csb_procs_start "connclient-${step}"
  csb_procs_wait_event "${CONNCLIENT_EVENT_READY}" 30 ||
    log_warn "${step}: not every client process has its connections open after 30 s; the schedule starts anyway"
  csb_procs_put_file "raw/${step}.start" "$(($(csb_epoch_ms) + 500))" ||
    log_warn "could not hand ${step}.start to every client host (see above)"
  csb_procs_end "$((secs + 45))" capacity_has_result
  capacity_stats "${step}" 1
}

# capacity_stats STEP N: with the ground-truth server, its /stats (the
# holds so far) into raw/STEP.statsN.json: csb summarize takes the truth of
# the steps around the capacity from the difference of 0 and 1, the hold
# the server gave at that load. Best effort: without them the run's mean.
capacity_stats() {
  [[ -n "${SLOTS}" ]] || return 0
  curl -fsS --noproxy '*' --max-time 2 "${CSB_CURL_TLS[@]}" -o "${CSB_RUN_DIR}/raw/$1.stats$2.json" "$(csb_base_url)/stats" ||
    log_warn "$1: the server's /stats could not be read: the truth is the run's mean hold"
}

# capacity_has_result FILE: one JSON document (a step's figures are
# judged by the search, not here: a step past the capacity has errors).
capacity_has_result() { "${CSB_ROOT}/bin/csb" check json "$1"; }

# capacity_search SIZE CONNS SECONDS MAX_STEPS: the search of one
# payload; its steps' plan entries not needed are taken off CSB_PLAN.
capacity_search() {
  local size=$1 conns=$2 secs=$3 max=$4 n=0 step failed
  local -a steps=()
  capacity_start "${size}" "${conns}"
  while :; do
    capacity_next "${steps[@]}"
    ((n == 0)) || log_info "${step}: ${CAP[last_code]}: ${CAP[last_text]}"
    ((CAP[done] == 0)) || break
    n=$((n + 1))
    printf -v step '%s-s%02d' "${size}" "${n}"
    failed=${CSB_CELLS_FAILED}
    capacity_step "${step}" "${size}" "${CAP[rps]}" "${conns}" "${secs}" "reason=${CAP[reason]}"
    if ((CSB_CELLS_FAILED > failed)); then
      log_warn "${size}: step ${step} failed: the search of ${size} ends here"
      break
    fi
    steps+=("${step}")
  done
  # The steps not run leave the plan (its k/n and time left).
  local rest=$((max - n))
  ((rest <= 0)) || CSB_PLAN=("${CSB_PLAN[@]:0:$((${#CSB_PLAN[@]} - rest))}")
  ((CAP[done] == 0)) || log_info "${size}: ${CAP[text]}"
}

# check_settings: what csb_config_load cannot check alone. Exits 2.
check_settings() {
  [[ "${HTTP}" == 1.1 ]] || die "HTTP=${HTTP}: capacity is HTTP/1.1 only for now (its open-model client, connclient lowrate, speaks HTTP/1.1); run it with HTTP=1.1, or Phase 1 or 2 for HTTP/2" 2
  csb_payloads_check PAYLOADS "${PAYLOADS}" || exit 2
  csb_truth_check
}

main() {
  csb_config_load "$@"
  check_settings
  local secs conns start max size
  secs=${STEP:-$(csb_profile 2 5 10)}
  conns=${CONNECTIONS:-$(csb_profile 32 64 128)}
  start=${START_RPS:-$(csb_profile 1000 4000 4000)}
  max=${SEARCH_MAX_STEPS:-$(($(csb_profile 10 12 14) + 2 * (10#${REPEAT} - 1)))}
  capacity_flags "${max}" "${start}"
  CAP_DEFAULT_START=${start}
  csb_lab_enter "${BASH_SOURCE[0]}" "$@"

  csb_build_all connclient
  csb_ssh_open
  csb_preflight_tools "sar mpstat pidstat sadf nstat ip ss" "sar mpstat pidstat sadf nstat ip ss"
  csb_load_plan "${conns}" 1
  ((CSB_LOAD[ok])) || usage_error "CONNECTIONS=${conns}: ${CSB_LOAD[refusal]}"
  csb_preflight_route
  csb_run_begin "${PHASE}" capacity "$@"
  # What csb summarize needs to replay the search as it ran.
  csb_run_set capacity.start_rps "${start}"
  csb_run_set capacity.max_steps "${max}"
  csb_capture_env
  csb_monitors_start
  csb_server_deploy
  local -a truth
  csb_truth_args truth
  csb_http_start csb-server "${PAYLOADS}" 1 "${truth[@]}"

  local -a sizes
  IFS=, read -r -a sizes <<<"${PAYLOADS}"
  capacity_starts "${sizes[@]}"
  CSB_PLAN=()
  for size in "${sizes[@]}"; do
    [[ "${CAP_FROM[${size}]}" != probe ]] || CSB_PLAN+=("$((CAPACITY_PROBE_S + 2))")
    for ((k = 0; k < max; k++)); do CSB_PLAN+=("$((secs + 2))"); done
  done
  for size in "${sizes[@]}"; do
    capacity_search "${size}" "${conns}" "${secs}" "${max}"
  done
  csb_http_stop
}

main "$@"
