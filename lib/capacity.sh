# shellcheck shell=bash
# lib/capacity.sh: Phase 5's search, one payload at a time: each step is a
# cell of connclient lowrate (an open-model schedule, latency from the due
# time) on every client host at one start time, its rate and connections
# split across the hosts (csb load-plan); after each step `csb
# capacity-next` (internal/capacity) reads every step so far and says the
# next rate, or the capacity and what bounded it. Bash runs the steps; the
# search, its verdicts and the figures are Go's.
#
# A step is <size>-sNN: raw/<label>/<step>.json (connclient's result, kept
# untouched) and .log (its stderr: event lines) per client host.

declare -gA CSB_CAP=()
declare -ga CSB_CAP_FLAGS=()

# csb_capacity_flags: the SLO and search flags of csb capacity-next, from
# the settings; checked once before anything starts (exit 2 on a bad one).
csb_capacity_flags() {
  CSB_CAP_FLAGS=(-percentile "${SLO_PERCENTILE}" -latency-ms "${SLO_LATENCY_MS}" -errors-pct "${SLO_ERRORS_PCT}"
    -resolution-pct "${SEARCH_RESOLUTION_PCT}" -max-steps "$1" -start "$2")
  "${CSB_ROOT}/bin/csb" capacity-next "${CSB_CAP_FLAGS[@]}" >/dev/null || exit 2
}

# csb_capacity_next STEP...: CSB_CAP from csb capacity-next over the steps
# of the payload so far.
csb_capacity_next() {
  local out step
  local -a cmd=("${CSB_ROOT}/bin/csb" capacity-next "${CSB_CAP_FLAGS[@]}" -dir "${CSB_RUN_DIR}")
  for step in "$@"; do cmd+=(-step "${step}"); done
  out=$("${cmd[@]}") || die "csb capacity-next failed: $(csb_quote "${cmd[@]}")" 1
  CSB_CAP=()
  csb_kv_into CSB_CAP "${out}"
}

# csb_capacity_step STEP SIZE RPS CONNS SECONDS PARAM...: one step as one
# cell: every client host's share of RPS and CONNS, connections opened
# first, then one start time for every schedule.
csb_capacity_step() {
  local step=$1 size=$2 rps=$3 conns=$4 secs=$5 k label
  shift 5
  local -a cmd tls rates=()
  csb_load_plan "${rps}" 1 rate
  for k in $(csb_clients); do rates[k]=${CSB_LOAD[${CSB_H_LABEL[k]}.connections]}; done
  csb_load_plan "${conns}" 1
  csb_procs_reset
  for k in $(csb_clients); do
    label=${CSB_H_LABEL[k]}
    mapfile -t tls < <(csb_tls_client_flags "${k}")
    cmd=("$(csb_client_bin "${k}")/connclient" lowrate -target "$(csb_url_host "${SERVER_IP}"):${SERVER_PORT}"
      -conns "${CSB_LOAD[${label}.connections]}" -rps "${rates[k]}" -duration "${secs}s" -drain 1s
      -path "$(csb_payload_path "${size}")" -start-file "raw/${step}.start" -start-wait 60s "${tls[@]}")
    csb_proc_add "${k}" "raw/${label}/${step}.json" "raw/${label}/${step}.log" "${cmd[@]}"
  done
  csb_cell_begin "${step}" "payload=${size}" "payload_bytes=${CSB_SIZE_BYTES[${size}]}" "offered_rps=${rps}" \
    "connections=${conns}" "duration_s=${secs}" "clients=${CSB_CLIENTS_N}" "$@"
  csb_procs_start "connclient-${step}"
  csb_procs_wait_event "${CONNCLIENT_EVENT_READY}" 30 ||
    log_warn "${step}: not every client process has its connections open after 30 s; the schedule starts anyway"
  csb_procs_put_file "raw/${step}.start" "$(($(csb_epoch_ms) + 500))" ||
    log_warn "could not hand ${step}.start to every client host (see above)"
  csb_procs_end "$((secs + 45))" csb_capacity_has_result
}

# csb_capacity_has_result FILE: one JSON document (a step's figures are
# judged by the search, not here: a step past the capacity has errors).
csb_capacity_has_result() { "${CSB_ROOT}/bin/csb" check json "$1"; }

# csb_capacity_search SIZE CONNS SECONDS MAX_STEPS: the search of one
# payload; its steps' plan entries not needed are taken off CSB_PLAN.
csb_capacity_search() {
  local size=$1 conns=$2 secs=$3 max=$4 n=0 step failed
  local -a steps=()
  while :; do
    csb_capacity_next "${steps[@]}"
    ((n == 0)) || log_info "${step}: ${CSB_CAP[last_code]}: ${CSB_CAP[last_text]}"
    ((CSB_CAP[done] == 0)) || break
    n=$((n + 1))
    printf -v step '%s-s%02d' "${size}" "${n}"
    failed=${CSB_CELLS_FAILED}
    csb_capacity_step "${step}" "${size}" "${CSB_CAP[rps]}" "${conns}" "${secs}" "reason=${CSB_CAP[reason]}"
    if ((CSB_CELLS_FAILED > failed)); then
      log_warn "${size}: step ${step} failed: the search of ${size} ends here"
      break
    fi
    steps+=("${step}")
  done
  # The steps not run leave the plan (its k/n and time left).
  local rest=$((max - n))
  ((rest <= 0)) || CSB_PLAN=("${CSB_PLAN[@]:0:$((${#CSB_PLAN[@]} - rest))}")
  ((CSB_CAP[done] == 0)) || log_info "${size}: ${CSB_CAP[text]}"
}
