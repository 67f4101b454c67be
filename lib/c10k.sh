# shellcheck shell=bash
# lib/c10k.sh: Phase 3 (C10K and beyond): one scenario of many connections
# as one cell, carried out on every client host as its plan says.
#
# A scenario is KIND idle | lowrate | active with CONNS connections (and
# RPS requests/s for lowrate). Before it, lib/c10kplan.sh plans it; the
# server is started for it alone (so its RSS starts fresh, SO_REUSEPORT
# when it needs several processes) and stopped after it. Its processes are
# one table (lib/cell.sh), started together at one due time: one connclient
# per planned source address (idle, lowrate; raw/<cell>.client-N.json and
# .log, N over the plan's sources on every host) or one wrk per client host
# with its share of the connections (active; raw/<label>/<cell>.txt). The
# clients announce their states as JSON event lines on stderr (connclient:
# ramp, holding, ready, running); the runner waits for those, with the
# plan's bound. An idle hold ends at one instant for every process: each
# holds, once all its connections are open, until the end time the runner
# writes (raw/<cell>.hold) once every process holds, so the snapshot sees
# every host's connections. The low-rate processes of a scenario wait,
# once their connections are open, for one start time (raw/<cell>.start).
#
# Around each scenario (lib/c10ksnap.sh) the server processes' /proc/PID/status, every host's
# /proc/net/sockstat and the server host's /proc/slabinfo and page size are
# kept before the clients start and once every connection is held (idle:
# with `ss` of the ESTABLISHED sockets on every host), under
# monitors/<label>/c10k/; csb summarize computes memory per connection
# (server, client, kernel) and the counts from those files. This module
# changes no sysctl.

C10K_CONNECT_RATE=""
C10K_HOLD=""
C10K_SECS=""
# The payload of the active scenario (a runner may set ACTIVE_PAYLOAD).
C10K_PAYLOAD=1k
declare -ga C10K_CELLS=()

# csb_c10k_settings: the settings every Phase 3 runner shares (declared
# before csb_config_load; CONNS and RPS are each runner's own).
csb_c10k_settings() {
  csb_config_declare CONNECT_RATE "" posint_or_empty "Phase 3: connects per second over all client processes, the ramp's ceiling (empty: the profile's: 5000, 5000, 8000)"
  csb_config_declare HOLD "" posint_or_empty "Phase 3: seconds an idle scenario holds its connections once every process holds them (empty: the profile's: 3, 10, 60)"
  csb_config_declare TW_THRESHOLD 500 uint "Phase 3: TIME_WAIT sockets toward the server from which a client address counts as busy; the retry runner waits until the client has fewer"
  csb_config_declare TW_WAIT_MAX 120 posint "Phase 3: longest wait, in seconds, for TIME_WAIT to drain before a scenario"
  csb_config_declare CLIENT_EXTRA_IPS "" ips_or_empty "Phase 3, LAB=ssh: more source addresses already on CLIENT_NIC (netns adds its own, local uses 127.0.0.x)"
}

# c10k_http_declare: HTTP, for the runners with an idle scenario: 2 holds
# the idle connections over HTTP/2 (connclient idle -http 2: h2 by ALPN
# with SCHEME=https, h2c with prior knowledge in cleartext) and loads the
# active scenario with h2load, STREAMS streams per connection.
c10k_http_declare() {
  csb_h2_declare
  csb_config_declare HTTP 1.1 "enum:1.1|2" "Phase 3: HTTP version: 1.1, or 2 (h2 over TLS with SCHEME=https, h2c with prior knowledge with http): idle connections held over HTTP/2 (idle-<n>-h2), the active scenario with h2load (active-<n>-<size>-h2-m<S>); the low-rate scenario is HTTP/1.1 only for now"
}

# c10k_http_check KIND...: with HTTP=2, every scenario of the runner that
# SCENARIOS wants must speak it (lowrate does not yet); STREAMS (the
# runners with an active scenario) only with HTTP=2: exit 2 before
# anything starts. (That each STREAMS value divides every count of CONNS
# is csb check-settings' rule.)
c10k_http_check() {
  local kind
  if [[ -n "${CSB_CHECK[STREAMS]+x}" ]] && ! csb_http2_on; then
    # shellcheck disable=SC2153 # STREAMS is a setting (csb_config_declare)
    [[ "${STREAMS}" == "${CSB_DEFAULT[STREAMS]}" ]] ||
      die "STREAMS=${STREAMS}: streams per connection are HTTP/2's; set HTTP=2" 2
  fi
  csb_http2_on || return 0
  for kind in "$@"; do
    [[ "${kind}" != lowrate ]] || ! csb_wants lowrate ||
      die "HTTP=2: the lowrate scenario is HTTP/1.1 only for now (its open-model client speaks HTTP/1.1); set SCENARIOS without it" 2
  done
}

# c10k_scenarios KIND...: the cells of a run, in order, as "KIND CONNS RPS
# STREAMS": for each count in CONNS, each KIND that SCENARIOS wants (every
# KIND when the runner has no SCENARIOS setting), a low-rate one per rate
# in RPS, over HTTP/2 an active one per value of STREAMS (else STREAMS 0).
c10k_scenarios() {
  local -a counts rates slist=()
  local c r kind
  # shellcheck disable=SC2153 # CONNS and RPS are settings the runner declares
  IFS=, read -r -a counts <<<"${CONNS}"
  IFS=, read -r -a rates <<<"${RPS}"
  ! csb_http2_on || IFS=, read -r -a slist <<<"${STREAMS:-}"
  for c in "${counts[@]}"; do
    c=$(csb_count "${c}")
    for kind in "$@"; do
      [[ -z "${CSB_CHECK[SCENARIOS]+x}" ]] || csb_wants "${kind}" || continue
      if [[ "${kind}" == lowrate ]]; then
        for r in "${rates[@]}"; do echo "lowrate ${c} $((10#${r})) 0"; done
      elif [[ "${kind}" == active ]] && ((${#slist[@]})); then
        for r in "${slist[@]}"; do echo "active ${c} 0 $((10#${r}))"; done
      else
        echo "${kind} ${c} 0 0"
      fi
    done
  done
}

# c10k_profile: resolve the profile's values (HOLD, DURATION, CONNECT_RATE)
# and the payload the server serves (the active scenario's; with SERVER=nginx
# its file is made from CSB_SIZE_BYTES).
c10k_profile() {
  C10K_PAYLOAD=${ACTIVE_PAYLOAD:-${C10K_PAYLOAD}}
  csb_payloads_check ACTIVE_PAYLOAD "${C10K_PAYLOAD}" || exit 2
  C10K_HOLD=${HOLD:-$(csb_profile 3 5 60)}
  C10K_SECS=${DURATION:-$(csb_profile 5 5 30)}
  C10K_CONNECT_RATE=${CONNECT_RATE:-$(csb_profile 5000 5000 8000)}
  ((10#${C10K_SECS} > 0)) || usage_error "DURATION=0: a scenario needs at least 1 second (empty: the profile's)"
}

# c10k_begin NAME "CLIENT TOOLS" ARGV...: everything before the first
# scenario, the same for every Phase 3 runner: build, ssh, preflight (tools,
# route, every cell of C10K_CELLS planned against every host's limits), then
# the run directory, the facts, environment, monitors, and the server.
c10k_begin() {
  local name=$1 tools=$2
  shift 2
  csb_build_all connclient
  csb_ssh_open
  csb_preflight_tools "${tools} curl sar mpstat pidstat sadf nstat ip ss" "sar mpstat pidstat sadf nstat ip ss"
  csb_preflight_route
  c10k_preflight "${C10K_CELLS[@]}"
  csb_run_begin 03-c10k "${name}" "$@"
  c10k_record_facts
  csb_capture_env
  csb_monitors_start
  csb_server_deploy
}

# c10k_run_cells: every scenario of C10K_CELLS, in order.
c10k_run_cells() {
  local cell kind conns
  local -A len=([idle]=${C10K_HOLD} [lowrate]=${C10K_SECS} [active]=${C10K_SECS})
  for cell in "${C10K_CELLS[@]}"; do # planned: the ramp, the hold or the schedule, the server's start
    read -r kind conns _ <<<"${cell}"
    CSB_PLAN+=("$((conns / C10K_CONNECT_RATE + len[${kind}] + 3))")
  done
  for cell in "${C10K_CELLS[@]}"; do
    # shellcheck disable=SC2086 # a cell is "kind conns rps"
    c10k_scenario ${cell}
  done
}

# c10k_cell_name KIND CONNS RPS [STREAMS]: idle-10k (idle-10k-h2 over
# HTTP/2), lowrate-10k-1000rps, active-10k-1k (over HTTP/2 with STREAMS S:
# active-10k-1k-h2-m<S>, CONNS streams in flight).
c10k_cell_name() {
  local kind=$1 conns=$2 rps=${3:-0} streams=${4:-0} count h2=""
  count=$(csb_count_name "${conns}")
  case "${kind}" in
    idle)
      ! csb_http2_on || h2=-h2
      echo "idle-${count}${h2}"
      ;;
    lowrate) echo "lowrate-${count}-${rps}rps" ;;
    active)
      ((streams == 0)) || h2="-h2-m${streams}"
      echo "active-${count}-${C10K_PAYLOAD}${h2}"
      ;;
  esac
}

# c10k_procs CELL KIND ARGS...: the cell's table: one connclient KIND per
# planned source, on its host, with its shares (ARGS go to every one), or
# for the active scenario one wrk per source (one per client host) on
# ACTIVE_PAYLOAD; over HTTP/2 (ARGS: the streams per connection) or over
# TLS (ARGS: 1 WARMUP_S 1.1) one h2load per source instead, its share of
# the connections with that many streams each, measured after the warm-up
# (raw/<label>/<cell>.h2load.txt and its log of every request).
c10k_procs() {
  local cell=$1 kind=$2 i k bin label out
  shift 2
  local -a cmd tls
  csb_procs_reset
  for i in "${!C10K_SRC_IP[@]}"; do
    k=${C10K_SRC_HOST[i]} bin=$(csb_client_bin "${C10K_SRC_HOST[i]}") label=${CSB_H_LABEL[${C10K_SRC_HOST[i]}]}
    if [[ "${kind}" == active ]] && (($# > 0)); then
      out="raw/${label}/${cell}.h2load.txt"
      csb_h2load_cmd cmd "${C10K_SRC_THREADS[i]}" "${C10K_SRC_CONNS[i]}" "$1" "${C10K_SECS}" "$(csb_payload_url "${C10K_PAYLOAD}")" \
        "${out%.txt}.log" "${2:-0}" "${3:-2}"
      csb_proc_add "${k}" "${out}" "${out}" "${cmd[@]}"
      csb_proc_also "${out%.txt}.log"
      continue
    elif [[ "${kind}" == active ]]; then
      csb_wrk_cmd cmd "${k}" "${C10K_SRC_THREADS[i]}" "${C10K_SRC_CONNS[i]}" "${C10K_SECS}" "$(csb_payload_url "${C10K_PAYLOAD}")"
      csb_proc_add "${k}" "raw/${label}/${cell}.txt" "raw/${label}/${cell}.txt" "${cmd[@]}"
      continue
    fi
    mapfile -t tls < <(csb_tls_client_flags "${k}")
    cmd=("${bin}/connclient" "${kind}" -target "$(csb_url_host "${SERVER_IP}"):${SERVER_PORT}"
      -conns "${C10K_SRC_CONNS[i]}" -rate "${C10K_SRC_RATE[i]}" -source "${C10K_SRC_IP[i]}" "${tls[@]}")
    [[ "${kind}" != lowrate ]] || cmd+=(-rps "${C10K_SRC_RPS[i]}")
    csb_proc_add "${k}" "raw/${cell}.client-$((i + 1)).json" "raw/${cell}.client-$((i + 1)).log" "${cmd[@]}" "$@"
  done
}

# c10k_at_file FILE MS: one instant, MS milliseconds from now (Unix
# milliseconds), written whole into FILE on every host of the cell's
# table: the start (lowrate) or the end of the hold (idle) that every
# process waits for. Prints the instant.
c10k_at_file() {
  local at=$(($(csb_epoch_ms) + $2))
  csb_procs_put_file "$1" "${at}" || log_warn "could not hand ${1##*/} to every client host (see above)"
  echo "${at}"
}

# c10k_scenario KIND CONNS [RPS [STREAMS]]: plan, run and record one
# scenario as one cell (STREAMS > 0: the active scenario over HTTP/2, CONNS
# requests in flight as CONNS / STREAMS connections of STREAMS streams).
# The server is started for it alone and stopped after it; the processes
# run in the background and the run waits for them, so a signal stops
# everything at once.
c10k_scenario() {
  local kind=$1 conns=$2 rps=${3:-0} streams=${4:-0} cell tool
  cell=$(c10k_cell_name "${kind}" "${conns}" "${rps}" "${streams}")
  tool=${C10K_TOOL[${kind}]}
  local -a params=("scenario=${kind}") h2=()
  ((streams == 0)) || tool=h2load h2=("${streams}")
  local planned=0
  c10k_plan "${cell}" "${kind}" "${conns}" "${rps}" "${streams}" || planned=$?
  # The plan's connections: over HTTP/2 the active scenario's requests in
  # flight over STREAMS streams each.
  conns=${C10K_PLAN[connections]:-${conns}}
  ((streams == 0)) || params+=("loadgen=h2load" "streams=${streams}" "http=2")
  params+=("connections=${conns}")
  case "${kind}" in
    idle) params+=("hold_s=${C10K_HOLD}" "path=${HEALTH_PATH}" "tool=connclient" "http=$(csb_http_list)") ;;
    lowrate) params+=("rps=${rps}" "duration_s=${C10K_SECS}" "path=${HEALTH_PATH}" "tool=connclient") ;;
    active) params+=("payload=${C10K_PAYLOAD}" "duration_s=${C10K_SECS}" "path=$(csb_payload_path "${C10K_PAYLOAD}")" "tool=${tool}") ;;
  esac
  if ((planned != 0)); then
    csb_cell_begin "${cell}" "${params[@]}"
    csb_cell_end refused "${C10K_REFUSAL}"
    return 0
  fi
  params+=("server_procs=${C10K_PLAN[server_procs]}" "client_procs=${#C10K_SRC_IP[@]}"
    "sources=$(IFS=, && echo "${C10K_SRC_IP[*]}")" "connect_rate_per_s=${C10K_CONNECT_RATE}" "clients=${CSB_CLIENTS_N}")
  local bound=${C10K_PLAN[ramp_bound_s]} hold="raw/${cell}.hold" start="raw/${cell}.start"
  local ctimeout="${C10K_PLAN[connect_timeout_s]}s"
  local -a h2idle=()
  ! csb_http2_on || h2idle=(-http 2)
  # Its connections stay idle through the ramp (at most its bound) and the
  # hold or the schedule: the server must not close them before.
  # Over TLS the active scenario's connections all start at once (h2load)
  # and queue for their handshakes: the reference server waits for them
  # as long as the longest warm-up (its 5 s deadline closed 7,204 of 10k).
  local tls_h1=0
  [[ "${kind}" != active ]] || ((streams != 0)) || ! csb_tls_on || tls_h1=1
  CSB_SERVER_CONNS=${conns} CSB_SERVER_IDLE_S=$((bound + C10K_HOLD + C10K_SECS)) \
    CSB_SERVER_HANDSHAKE_S=$((tls_h1 ? C10K_WARMUP_MAX_S + 60 : 0)) \
    csb_http_start "csb-server-${cell}" "${C10K_PAYLOAD}" "${C10K_PLAN[server_procs]}"
  # Over TLS the active scenario's connections are opened in a warm-up
  # sized from the server's handshakes, measured now (h2load: wrk has no
  # warm-up); a server too slow for one is the cell's refusal.
  local warm=0
  if ((tls_h1)); then
    if ! c10k_tls_warmup "${cell}" "${conns}"; then
      csb_cell_begin "${cell}" "${params[@]}" "${C10K_WARMUP_PARAMS[@]}"
      csb_cell_end refused "${C10K_WARMUP[refusal]}"
      csb_http_stop
      return 0
    fi
    warm=${C10K_WARMUP[warmup_s]} tool=h2load h2=(1 "${warm}" 1.1)
    params=("${params[@]/#tool=wrk/tool=h2load}" "loadgen=h2load" "http=1.1" "${C10K_WARMUP_PARAMS[@]}")
  fi
  c10k_snapshot "${cell}" before
  case "${kind}" in
    idle) c10k_procs "${cell}" idle -ramp-max "${bound}s" -connect-timeout "${ctimeout}" -hold-file "${hold}" -hold-wait "$((bound + 60))s" -path "${HEALTH_PATH}" "${h2idle[@]}" ;;
    # -close-late: a process that ends first does not close its
    # connections while the others' last requests are under way.
    lowrate) c10k_procs "${cell}" lowrate -ramp-max "${bound}s" -connect-timeout "${ctimeout}" -duration "${C10K_SECS}s" -path "${HEALTH_PATH}" -start-file "${start}" -start-wait "$((bound + 60))s" -close-late ;;
    active) c10k_procs "${cell}" active "${h2[@]}" ;;
  esac
  csb_cell_begin "${cell}" "${params[@]}"
  # wrk and h2load print nothing until they end; half way through their
  # run (from the due time, not from the launch), every connection they
  # open is open: each host takes the snapshot then.
  if [[ "${kind}" == active ]]; then
    csb_procs_due
    c10k_snapshot_with_launch "${cell}" $((CSB_P_DUE_MS + warm * 1000 + (C10K_SECS * 1000 + 1) / 2))
  fi
  csb_procs_start "${tool}-${cell}"
  case "${kind}" in
    idle)
      # The ramps may take up to the bound, and the last attempts their timeouts.
      csb_procs_wait_event "${CONNCLIENT_EVENT_HOLDING}" "$((bound + 15))" ||
        log_warn "${cell}: not every client process holds its connections after ${bound} s; the hold ends anyway"
      # Every process holds until one end, the start lead and HOLD from
      # now; each host takes the snapshot a start lead from now, HOLD
      # before that end, while it holds all of its connections (over a
      # loaded host's ssh, a snapshot asked for now came after a 2 s hold).
      local end
      end=$(c10k_at_file "${hold}" "$((CSB_START_LEAD_MS + C10K_HOLD * 1000))")
      csb_run_set "c10k.${cell}.hold_end_ms" "${end}"
      c10k_snapshot "${cell}" held 1 "$((end - C10K_HOLD * 1000))"
      ;;
    lowrate)
      # Every process opens its connections, then waits for one start time,
      # so their schedules make one schedule of RPS requests/s from one
      # moment, never one process's while another still ramps up.
      csb_procs_wait_event "${CONNCLIENT_EVENT_READY}" "$((bound + 15))" ||
        log_warn "${cell}: not every client process has its connections open after ${bound} s; the schedule starts anyway"
      # The start is the run's start lead away (csb clock: the hosts' ssh
      # round trips), so every host reads it before it is due.
      c10k_at_file "${start}" "${CSB_START_LEAD_MS}" >/dev/null
      csb_procs_wait_event "${CONNCLIENT_EVENT_RUNNING}" 30 ||
        log_warn "${cell}: not every client process runs its schedule 30 s after the start time; snapshot taken anyway"
      # The event comes as the schedule starts: the snapshot is taken half
      # way through it.
      if ((C10K_SECS / 2 > 0)); then sleep $((C10K_SECS / 2)); fi
      c10k_snapshot "${cell}" held
      ;;
    active) csb_wait_jobs "${C10K_SNAP_JOB}" || true ;;
  esac
  csb_procs_end "$((bound + warm + C10K_SECS + C10K_HOLD + 90))" c10k_has_result
  csb_http_stop
  c10k_cost_files "${cell}"
}

# c10k_tls_warmup CELL CONNS: the warm-up of the active scenario over TLS:
# a probe of the server's handshakes from the first client host, h2load
# --h1 with as many clients as requests (each one handshake and one
# request; at most C10K_PROBE_CONNS, raw/<label>/<cell>.tls-probe.txt),
# sized by `csb tls-warmup` into C10K_WARMUP (its KEY=VALUE answer) and
# C10K_WARMUP_PARAMS (the cell's parameters that record it). Returns 1
# when the cell cannot have one (C10K_WARMUP[refusal] says why).
C10K_PROBE_CONNS=400
C10K_WARMUP_MAX_S=300
declare -gA C10K_WARMUP=()
declare -ga C10K_WARMUP_PARAMS=()
c10k_tls_warmup() {
  local cell=$1 conns=$2 k label out n line
  k=$(csb_clients | head -n 1)
  label=${CSB_H_LABEL[k]}
  out="${CSB_RUN_DIR}/raw/${label}/${cell}.tls-probe.txt"
  n=$((conns < C10K_PROBE_CONNS ? conns : C10K_PROBE_CONNS))
  mkdir -p "${CSB_RUN_DIR}/raw/${label}"
  local -a cmd=(h2load --h1 -t 1 -n "${n}" -c "${n}" "$(csb_base_url)${HEALTH_PATH}")
  log_cmd "${label}:" "${cmd[@]}"
  on_host "${k}" "${cmd[@]}" >"${out}" 2>&1 || true
  local answer
  answer=$("${CSB_ROOT}/bin/csb" tls-warmup -probe "${out}" -conns "${conns}" -max-s "${C10K_WARMUP_MAX_S}") ||
    die "csb tls-warmup could not read ${out} (see above)" 1
  C10K_WARMUP=()
  while IFS= read -r line; do
    C10K_WARMUP[${line%%=*}]=${line#*=}
  done <<<"${answer}"
  C10K_WARMUP_PARAMS=("warmup_s=${C10K_WARMUP[warmup_s]}" "tls_probe_conns=${C10K_WARMUP[probe_conns]}"
    "tls_probe_s=${C10K_WARMUP[probe_s]}" "handshakes_per_s=${C10K_WARMUP[handshakes_per_s]}")
  if [[ "${C10K_WARMUP[ok]}" != 1 ]]; then
    log_warn "${cell}: ${C10K_WARMUP[refusal]}"
    return 1
  fi
  log_info "${cell}: ${C10K_WARMUP[probe_conns]} TLS handshakes in ${C10K_WARMUP[probe_s]} s from ${label}: a warm-up of ${C10K_WARMUP[warmup_s]} s opens ${conns} connections before the ${C10K_SECS} s measured"
}

# The tool of each kind (its pidstat file is pidstat-<tool>-<cell>.txt;
# h2load for the active scenario over HTTP/2).
declare -gA C10K_TOOL=([idle]=connclient [lowrate]=connclient [active]=wrk)

# c10k_has_result FILE: a process's output a summary can read, judged by
# the summary's own verdict (csb check): wrk's or h2load's text by the HTTP
# phases' (NON2XX_MAX); connclient's result document well-formed, and a
# low-rate one with no request failed (exit 3: the cell's figures stand, it
# is not ok).
c10k_has_result() {
  if [[ "$1" == *.txt ]]; then
    csb_has_loadgen_output "$1"
  else
    "${CSB_ROOT}/bin/csb" check connclient "$1"
  fi
}
