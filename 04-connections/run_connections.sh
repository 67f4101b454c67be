#!/usr/bin/env bash
# Phase 4: connection setup and teardown: how many new connections a second
# the hosts sustain, what the listen backlog absorbs, where TIME_WAIT and
# the ephemeral ports stop the client, and what SO_LINGER=0 changes.
#
# Usage: bash 04-connections/run_connections.sh [-h] [-c FILE] [-l LAB] [-p PROFILE]
#                                               [-n NAME] [-r RESULTS_ROOT] [-s KEY=VALUE]...
#
# Scenarios, in this order (SCENARIOS picks; each burst gets a fresh server,
# the rate cells of a scenario share one):
#   backlog-<B>[-<N>]     for each listen backlog B in BACKLOGS (default
#                         128,4096) and each burst N in BURST: the server
#                         host's net.core.somaxconn is set to B (the server's
#                         own backlog follows it), then connclient burst
#                         issues N connects at once and waits BURST_TIMEOUT s
#                         for every response (-<N> in the name when BURST
#                         lists several: the report says which burst each
#                         backlog absorbed)
#   accept-<R>            for each R in ACCEPT_RATES: connclient churn at R
#                         new connections/s for DURATION s, closed with
#                         SO_LINGER=0 (no TIME_WAIT anywhere to limit it): the
#                         report finds the highest rate with errors < 1 % and
#                         p99 < ACCEPT_P99_MS, and the server's CPU per
#                         connection
#   accept-<H>-<R>        the same with SCHEME=https, for each H in
#                         ACCEPT_HANDSHAKES: full (every connection a full
#                         TLS handshake) and resumed (connclient -tls-resume:
#                         handshakes resume the session of a ticket): the
#                         handshakes per second the server sustains and its
#                         CPU per handshake, for TLS_KEY_TYPE's key
#   churn-<V>-<R>         for each V in CHURN_CLOSE (linger0,server,client:
#                         who ends the connection) and each R in CHURN_RATES:
#                         connclient churn, one request per connection, from
#                         CLIENT_IP (IP_BIND_ADDRESS_NO_PORT); with
#                         CLIENT_PORT_RANGE the client's
#                         net.ipv4.ip_local_port_range is narrowed first, so
#                         the port wall comes within the cell; with
#                         SCHEME=https every connection a full TLS handshake
# Ground truth of the backlog: with SERVER=csb, BURST_ACCEPT_EVERY (a
# duration) makes each burst's server accept at most one connection per
# that long (csb-server -accept-every), so whether a burst overflows is
# known whatever the host's speed: N connects issued in T s into a backlog
# B must overflow when N > B + T / BURST_ACCEPT_EVERY + 1 and cannot when
# N <= B. The report sets that prediction beside ListenOverflows.
# The bursts stay cleartext with SCHEME=https (their server is started
# without TLS): they measure the listen backlog, which a handshake after
# accept() does not change.
# With CLIENTS=N every cell's burst or rate is split across the client
# hosts (the first ones one more) and every host's connclient starts at one
# due time (`csb start-at`; a burst: at one instant): raw/<client>/<cell>.json
# and .log per host (raw/client/ with one host), merged by csb summarize.
# Before each cell every host's settings are read
# (raw/<cell>.facts.<host>.env) and `csb conn-predict` says which wall each
# client host's share should meet, and when; the report sets the
# prediction beside what happened. TIME_WAIT on each host comes from sar,
# once a second.
#
# Host settings: in the netns lab the sysctls are the lab's own and are set
# freely; on a real host only with APPLY_SYSCTLS=1 (else the run is refused,
# exit 6, with the commands to run by hand). Every old value is recorded in
# run.env and put back after its scenario and on every exit path (lib/sysctl.sh).
#
# Profiles (each setting below overrides its part):
#   smoke  2 s cells; churn 500,2000/s; accept 1000,4000/s; burst 2000, 4 s
#   quick  5 s cells; churn 500,2000,5000/s; accept 1000,2000,4000,8000/s; burst 4000, 8 s
#   full   30 s cells; churn 500,1000,2000,5000,10000/s; accept up to 32000/s; bursts 1000,4000,8000, 16 s
#
# Requires: curl, sysstat, iproute2 and Go on the client; sysstat and
# iproute2 on the server. LAB=netns needs root.
#
# Examples:
#   sudo LAB=netns PROFILE=quick bash 04-connections/run_connections.sh
#   sudo bash 04-connections/run_connections.sh -l netns -p smoke -s CLIENT_PORT_RANGE=40000-40999
#   sudo bash 04-connections/run_connections.sh -l netns -s SCENARIOS=backlog -s BURST=20000

# shellcheck source=lib/init.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/init.sh"

usage() { csb_usage connections SCENARIOS CHURN_RATES CHURN_CLOSE \
  CLIENT_PORT_RANGE ACCEPT_RATES ACCEPT_HANDSHAKES ACCEPT_P99_MS BACKLOGS \
  BURST BURST_TIMEOUT BURST_ACCEPT_EVERY ABORT_ON_OVERFLOW APPLY_SYSCTLS \
  DURATION SERVER; }

csb_config_declare SCENARIOS backlog,accept,churn scenarios "which of backlog,accept,churn to run (default all)"
csb_config_declare CHURN_RATES "" posints_or_empty "new connections/s of the churn cells (empty: the profile's)"
csb_config_declare CHURN_CLOSE linger0,server,client closes "who closes: a list of linger0,server,client (default all three)"
csb_config_declare CLIENT_PORT_RANGE "" portrange_or_empty "LO-HI: the client's ip_local_port_range during churn (empty: as it is)"
csb_config_declare ACCEPT_RATES "" posints_or_empty "rates of the accept cells (empty: the profile's)"
csb_config_declare ACCEPT_HANDSHAKES full,resumed handshakes "SCHEME=https: the accept steps' TLS handshakes, a list of full,resumed (default both)"
csb_config_declare ACCEPT_P99_MS 50 posint "latency bound of a sustained accept rate (default 50)"
csb_config_declare BACKLOGS 128,4096 posints "listen backlogs of the burst cells (default 128,4096)"
csb_config_declare BURST "" posints_or_empty "connects per burst, a list (empty: the profile's)"
csb_config_declare BURST_TIMEOUT "" posint_or_empty "seconds a burst waits for its responses (empty: the profile's)"
csb_config_declare BURST_ACCEPT_EVERY "" duration_or_empty "SERVER=csb: each burst's server accepts at most one connection per this long (a known accept rate)"
csb_config_declare ABORT_ON_OVERFLOW 0 bool "1: set the server's tcp_abort_on_overflow during the bursts"

P4_SECS="" P4_BURST_TIMEOUT=""
declare -ga P4_CELLS=() P4_CHURN_RATES=() P4_ACCEPT_RATES=() P4_BACKLOGS=() P4_BURSTS=()

# p4_profile: the profile's values for what the settings leave empty.
p4_profile() {
  P4_SECS=${DURATION:-$(csb_profile 2 5 30)}
  ((10#${P4_SECS} > 0)) || usage_error "DURATION=0: a cell needs at least 1 second (empty: the profile's)"
  IFS=, read -r -a P4_BURSTS <<<"${BURST:-$(csb_profile 2000 4000 1000,4000,8000)}"
  P4_BURST_TIMEOUT=${BURST_TIMEOUT:-$(csb_profile 4 8 16)}
  IFS=, read -r -a P4_CHURN_RATES <<<"${CHURN_RATES:-$(csb_profile 500,2000 500,2000,5000 500,1000,2000,5000,10000)}"
  IFS=, read -r -a P4_ACCEPT_RATES <<<"${ACCEPT_RATES:-$(csb_profile 1000,4000 1000,2000,4000,8000 1000,2000,4000,8000,16000,32000)}"
  IFS=, read -r -a P4_BACKLOGS <<<"${BACKLOGS}"
}

# p4_cells: every cell of the run, in order, as "KIND ARG VALUE":
# "backlog N B", "accept - R" (or "accept H R" with https), "churn V R".
p4_cells() {
  local b n r v h
  local -a closes hs=(-)
  ! csb_tls_on || IFS=, read -r -a hs <<<"${ACCEPT_HANDSHAKES}"
  if csb_wants backlog; then
    for b in "${P4_BACKLOGS[@]}"; do
      for n in "${P4_BURSTS[@]}"; do echo "backlog $((10#${n})) $((10#${b}))"; done
    done
  fi
  if csb_wants accept; then
    for h in "${hs[@]}"; do
      for r in "${P4_ACCEPT_RATES[@]}"; do echo "accept ${h} $((10#${r}))"; done
    done
  fi
  if csb_wants churn; then
    IFS=, read -r -a closes <<<"${CHURN_CLOSE}"
    for v in "${closes[@]}"; do
      for r in "${P4_CHURN_RATES[@]}"; do echo "churn ${v} $((10#${r}))"; done
    done
  fi
}

# p4_preflight: may the run change what its scenarios need? (exit 6 if not)
p4_preflight() {
  local -a srv=()
  local b k
  if csb_wants backlog; then
    for b in "${P4_BACKLOGS[@]}"; do srv+=(net.core.somaxconn "$((10#${b}))"); done
    ((ABORT_ON_OVERFLOW == 0)) || srv+=(net.ipv4.tcp_abort_on_overflow 1)
    csb_sysctl_allowed 0 "${srv[@]}"
  fi
  if csb_wants churn && [[ -n "${CLIENT_PORT_RANGE}" ]]; then
    for k in $(csb_clients); do csb_sysctl_allowed "${k}" net.ipv4.ip_local_port_range "${CLIENT_PORT_RANGE/-/ }"; done
  fi
}

# p4_predict CELL CLOSE RATE: log what `csb conn-predict` expects of each
# client host's share of the cell (its own port range and TIME_WAIT).
p4_predict() {
  local raw="${CSB_RUN_DIR}/raw/$1" k label line
  for k in $(csb_clients); do
    label=${CSB_H_LABEL[k]}
    local -a cmd=("${CSB_ROOT}/bin/csb" conn-predict -client "${raw}.facts.${label}.env" -server "${raw}.facts.server.env"
      -close "$2" -rate "${CSB_LOAD[${label}.connections]}" -duration "${P4_SECS}" -sources 1 -lab "${LAB}")
    line=$("${cmd[@]}") || die "csb conn-predict failed (see above): $(csb_quote "${cmd[@]}")" 1
    log_info "prediction $1 on ${label}: ${line}"
  done
}

# p4_procs CELL ARGS...: the cell's table: connclient ARGS... on every
# client host, each with its share of the count or rate (the last load
# plan: ARGS' -conns or -rate is replaced by the host's share), from the
# host's first address, JSON to raw/<label>/CELL.json, progress to
# raw/<label>/CELL.log.
p4_procs() {
  local cell=$1 k label i target bin
  shift
  local -a args tls
  target="$(csb_url_host "${SERVER_IP}"):${SERVER_PORT}"
  csb_procs_reset
  for k in $(csb_clients); do
    label=${CSB_H_LABEL[k]} args=("$@")
    for i in "${!args[@]}"; do
      [[ "${args[i]}" != -conns && "${args[i]}" != -rate ]] || args[i + 1]=${CSB_LOAD[${label}.connections]}
    done
    tls=()
    [[ "${SCHEME}" != https ]] || mapfile -t tls < <(csb_tls_client_flags "${k}")
    bin=$(csb_client_bin "${k}")
    csb_proc_add "${k}" "raw/${label}/${cell}.json" "raw/${label}/${cell}.log" "${bin}/connclient" "${args[@]}" \
      "${tls[@]}" -target "${target}" -source "${CSB_H_ADDRS[k]%%,*}" -path "${HEALTH_PATH}"
  done
}

# p4_cell KIND ARG VALUE: one cell: settings, fresh server, facts,
# prediction, the clients at one due time, the server stopped.
p4_cell() {
  local kind=$1 arg=$2 value=$3 cell total
  local -a params client
  # The bursts stay cleartext: their server, its checks and the client
  # see SCHEME=http (dynamic scope: this cell only).
  if [[ "${kind}" == backlog ]]; then
    local SCHEME=http
    local -a CSB_TLS_SERVER_FLAGS=() CSB_CURL_TLS=()
  fi
  case "${kind}" in
    backlog)
      cell="backlog-${value}" total=${arg}
      ((${#P4_BURSTS[@]} == 1)) || cell+="-${arg}"
      csb_sysctl_set 0 net.core.somaxconn "${value}"
      ((ABORT_ON_OVERFLOW == 0)) || csb_sysctl_set 0 net.ipv4.tcp_abort_on_overflow 1
      params=("scenario=backlog" "backlog=${value}" "connections=${arg}" "timeout_s=${P4_BURST_TIMEOUT}")
      [[ -z "${BURST_ACCEPT_EVERY}" ]] || params+=("accept_every=${BURST_ACCEPT_EVERY}")
      client=(burst -conns "${arg}" -timeout "${P4_BURST_TIMEOUT}s")
      ;;
    accept)
      cell="accept-${value}" total=${value}
      params=("scenario=accept" "close=linger0" "rate=${value}" "duration_s=${P4_SECS}" "p99_bound_ms=${ACCEPT_P99_MS}")
      client=(churn -rate "${value}" -duration "${P4_SECS}s" -close linger0)
      if [[ "${arg}" != - ]]; then
        cell="accept-${arg}-${value}"
        params+=("handshake=${arg}")
        [[ "${arg}" != resumed ]] || client+=(-tls-resume)
      fi
      ;;
    churn)
      cell="churn-${arg}-${value}" total=${value}
      params=("scenario=churn" "close=${arg}" "rate=${value}" "duration_s=${P4_SECS}")
      client=(churn -rate "${value}" -duration "${P4_SECS}s" -close "${arg}")
      ! csb_tls_on || params+=("handshake=full")
      ;;
  esac
  # The count or the rate, split across the client hosts: every host's
  # share starts at one due time (a burst: at one instant).
  if [[ "${kind}" == backlog ]]; then csb_load_plan "${total}" 1; else csb_load_plan "${total}" 1 rate; fi
  local -a shares
  mapfile -t shares < <(csb_load_params)
  params+=("${shares[@]}")
  # A burst gets a fresh server, which reads the somaxconn just set; the
  # rate cells share one per scenario, started before the client's port
  # range narrows (its readiness check connects from the client too).
  if [[ "${kind}" == backlog ]]; then
    local -a pace=()
    [[ -z "${BURST_ACCEPT_EVERY}" ]] || pace=(-accept-every "${BURST_ACCEPT_EVERY}")
    csb_http_start "csb-server-${cell}" 1k 1 "${pace[@]}"
    params+=("server=csb-server-${cell}")
  else
    params+=("server=csb-server-${kind}")
  fi
  if ((!CSB_LOAD[ok])); then
    csb_cell_begin "${cell}" "${params[@]}"
    csb_cell_end refused "${CSB_LOAD[refusal]}"
    [[ "${kind}" != backlog ]] || csb_http_stop
    return 0
  fi
  # Every host's settings before the cell, for the predictions.
  csb_facts_read "${CSB_RUN_DIR}/raw/${cell}.facts." .env
  case "${kind}" in
    accept) p4_predict "${cell}" linger0 "${value}" ;;
    churn) p4_predict "${cell}" "${arg}" "${value}" ;;
  esac
  p4_procs "${cell}" "${client[@]}"
  csb_procs_cell "${cell}" "connclient-${cell}" "$((P4_SECS + P4_BURST_TIMEOUT + 60))" c10k_has_result "${params[@]}"
  [[ "${kind}" != backlog ]] || csb_http_stop
}

# p4_scenario_begin KIND: the server of a rate scenario, then the settings
# it changes.
p4_scenario_begin() {
  local k
  [[ "$1" == backlog ]] || csb_http_start "csb-server-$1" 1k 1
  if [[ "$1" == churn && -n "${CLIENT_PORT_RANGE}" ]]; then
    for k in $(csb_clients); do csb_sysctl_set "${k}" net.ipv4.ip_local_port_range "${CLIENT_PORT_RANGE/-/ }"; done
  fi
}

# p4_scenario_end KIND: what a scenario changed is put back once its last
# cell is done (and at exit in any case).
p4_scenario_end() {
  csb_http_stop
  csb_sysctl_restore
  log_info "scenario $1 done"
}

main() {
  csb_config_load "$@"
  csb_scenarios_check "Phase 4" backlog accept churn
  [[ -z "${BURST_ACCEPT_EVERY}" || "${SERVER}" == csb ]] ||
    die "BURST_ACCEPT_EVERY paces the reference server's accept (SERVER=csb), not SERVER=${SERVER}'s" 2
  p4_profile
  # The client hosts' port range is this run's while its churn cells run.
  if csb_wants churn && [[ -n "${CLIENT_PORT_RANGE}" ]]; then CSB_LOCK_PORT_RANGE=1; fi
  csb_lab_enter "${BASH_SOURCE[0]}" "$@"
  mapfile -t P4_CELLS < <(p4_cells)
  csb_build_all connclient
  csb_ssh_open
  csb_preflight_tools "curl sar mpstat pidstat sadf nstat ip ss sysctl" "sar mpstat pidstat sadf nstat ip ss sysctl"
  csb_preflight_route
  p4_preflight
  csb_run_begin 04-connections connections "$@"
  csb_capture_env
  csb_monitors_start
  csb_server_deploy
  local cell kind arg value last=""
  CSB_PLAN=("${P4_CELLS[@]/*/$((P4_SECS + 2))}")
  for cell in "${P4_CELLS[@]}"; do
    read -r kind arg value <<<"${cell}"
    if [[ "${kind}" != "${last}" ]]; then
      [[ -z "${last}" ]] || p4_scenario_end "${last}"
      p4_scenario_begin "${kind}"
      last=${kind}
    fi
    p4_cell "${kind}" "${arg}" "${value}"
  done
  [[ -z "${last}" ]] || p4_scenario_end "${last}"
}

main "$@"
