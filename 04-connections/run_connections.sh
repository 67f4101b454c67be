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
# The bursts stay cleartext with SCHEME=https (their server is started
# without TLS): they measure the listen backlog, which a handshake after
# accept() does not change.
# Before each cell both hosts' settings are read (raw/<cell>.facts.*.env)
# and `csb conn-predict` says which wall the cell should meet, and when;
# the report sets the prediction beside what happened. TIME_WAIT on each
# host comes from sar, once a second.
#
# Host settings: in the netns lab the sysctls are the lab's own and are set
# freely; on a real host only with APPLY_SYSCTLS=1 (else the run is refused,
# exit 6, with the commands to run by hand). Every old value is recorded in
# run.env and put back after its scenario and on every exit path (lib/sysctl.sh).
#
# Profiles (each setting below overrides its part):
#   smoke  2 s cells; churn 500,2000/s; accept 1000,4000/s; burst 2000, 4 s
#   quick  10 s cells; churn 500,2000,5000/s; accept 1000,2000,4000,8000/s; burst 4000, 8 s
#   full   30 s cells; churn 500,1000,2000,5000,10000/s; accept up to 32000/s; bursts 1000,4000,8000, 16 s
#
# Settings of this phase (lab.env, environment or -s KEY=VALUE):
#   SCENARIOS          which of backlog,accept,churn to run (default all)
#   CHURN_RATES        new connections/s of the churn cells (empty: the profile's)
#   CHURN_CLOSE        who closes: a list of linger0,server,client (default all three)
#   CLIENT_PORT_RANGE  LO-HI: the client's ip_local_port_range during churn (empty: as it is)
#   ACCEPT_RATES       rates of the accept cells (empty: the profile's)
#   ACCEPT_HANDSHAKES  SCHEME=https: the accept steps' TLS handshakes, a list
#                      of full,resumed (default both)
#   ACCEPT_P99_MS      latency bound of a sustained accept rate (default 50)
#   BACKLOGS           listen backlogs of the burst cells (default 128,4096)
#   BURST              connects per burst, a list (empty: the profile's)
#   BURST_TIMEOUT      seconds a burst waits for its responses (empty: the profile's)
#   ABORT_ON_OVERFLOW  1: set the server's tcp_abort_on_overflow during the bursts
#   APPLY_SYSCTLS      1: a real host's sysctls may be changed (see above)
#   DURATION           seconds per churn/accept cell (empty: the profile's)
#   SERVER             the server under test (default csb; see README)
#
# Options:
#   -c FILE         config file (default: lab.env at the repo root, if any)
#   -l LAB          local | netns | ssh
#   -p PROFILE      smoke | quick | full (default full)
#   -n NAME         run directory suffix (default connections)
#   -r DIR          results root (runs go to DIR/04-connections/<run>/)
#   -s KEY=VALUE    any setting; flags win over the environment, which wins
#                   over the config file
#   -h              this help
#
# Exit status: 0 every cell ran; 1 a cell failed (the run is partial); 2 bad
# usage; 3 a tool is missing; 4 the server host cannot be reached; 5 the
# route guard refused; 6 a host setting may not be changed (the message
# gives the commands); 130/143 interrupted (the sysctls are put back).
#
# Requires: curl, sysstat, iproute2 and Go on the client; sysstat and
# iproute2 on the server. LAB=netns needs root.
# Loads: lib/init.sh (lib/sysctl.sh). Ends with "results: <run directory>".
#
# Examples:
#   sudo LAB=netns PROFILE=quick bash 04-connections/run_connections.sh
#   sudo bash 04-connections/run_connections.sh -l netns -p smoke -s CLIENT_PORT_RANGE=40000-40999
#   sudo bash 04-connections/run_connections.sh -l netns -s SCENARIOS=backlog -s BURST=20000

# shellcheck source=lib/init.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/init.sh"

usage() { sed -n '2,/^$/{s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"; }

csb_check_closes() { [[ "$1" =~ ^(linger0|server|client)(,(linger0|server|client))*$ ]]; }
csb_expect_closes() { echo "a comma-separated list of linger0, server, client"; }
csb_check_portrange_or_empty() {
  [[ -z "$1" ]] && return 0
  [[ "$1" =~ ^([0-9]{4,5})-([0-9]{4,5})$ ]] || return 1
  ((10#${BASH_REMATCH[1]} >= 1024 && 10#${BASH_REMATCH[1]} <= 10#${BASH_REMATCH[2]} && 10#${BASH_REMATCH[2]} <= 65535))
}
csb_expect_portrange_or_empty() { echo "LO-HI with 1024 <= LO <= HI <= 65535, such as 40000-40999, or empty"; }
csb_check_handshakes() { [[ "$1" =~ ^(full|resumed)(,(full|resumed))?$ ]]; }
csb_expect_handshakes() { echo "a comma-separated list of full, resumed"; }
csb_check_posints_or_empty() { [[ -z "$1" ]] || csb_check_posints "$1"; }
csb_expect_posints_or_empty() { echo "a comma-separated list of positive integers, or empty for the profile's"; }

csb_config_declare SCENARIOS backlog,accept,churn scenarios "Phase 4 (run_connections.sh): which of backlog,accept,churn to run"
csb_config_declare CHURN_RATES "" posints_or_empty "Phase 4: new connections per second of the churn cells (empty: the profile's: 500,2000 / 500,2000,5000 / 500,1000,2000,5000,10000)"
csb_config_declare CHURN_CLOSE linger0,server,client closes "Phase 4: who ends a churn connection: linger0 (client, SO_LINGER=0), server (Connection: close), client"
csb_config_declare CLIENT_PORT_RANGE "" portrange_or_empty "Phase 4: LO-HI, the client's net.ipv4.ip_local_port_range during the churn cells (empty: left as it is)"
csb_config_declare ACCEPT_RATES "" posints_or_empty "Phase 4: new connections per second of the accept-rate steps (empty: the profile's)"
csb_config_declare ACCEPT_HANDSHAKES full,resumed handshakes "Phase 4, SCHEME=https: the accept steps' TLS handshakes: full (each connection a full handshake), resumed (connclient -tls-resume)"
csb_config_declare ACCEPT_P99_MS 50 posint "Phase 4: an accept-rate step is sustained with errors under 1 % and p99 (from the due time) under this many ms"
csb_config_declare BACKLOGS 128,4096 posints "Phase 4: listen backlogs (the server's net.core.somaxconn) of the burst cells"
csb_config_declare BURST "" posints_or_empty "Phase 4: connects per burst, a list (empty: the profile's: 2000 / 4000 / 1000,4000,8000)"
csb_config_declare BURST_TIMEOUT "" posint_or_empty "Phase 4: seconds a burst waits for its responses (empty: the profile's: 4, 8, 16)"
csb_config_declare ABORT_ON_OVERFLOW 0 bool "Phase 4: 1 sets the server's net.ipv4.tcp_abort_on_overflow during the bursts (an overflow is then a reset, not a dropped ACK)"

P4_SECS="" P4_BURST_TIMEOUT=""
declare -ga P4_CELLS=() P4_CHURN_RATES=() P4_ACCEPT_RATES=() P4_BACKLOGS=() P4_BURSTS=()

# p4_profile: the profile's values for what the settings leave empty.
p4_profile() {
  P4_SECS=${DURATION:-$(csb_profile 2 10 30)}
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
  if c10k_wants backlog; then
    for b in "${P4_BACKLOGS[@]}"; do
      for n in "${P4_BURSTS[@]}"; do echo "backlog $((10#${n})) $((10#${b}))"; done
    done
  fi
  if c10k_wants accept; then
    for h in "${hs[@]}"; do
      for r in "${P4_ACCEPT_RATES[@]}"; do echo "accept ${h} $((10#${r}))"; done
    done
  fi
  if c10k_wants churn; then
    IFS=, read -r -a closes <<<"${CHURN_CLOSE}"
    for v in "${closes[@]}"; do
      for r in "${P4_CHURN_RATES[@]}"; do echo "churn ${v} $((10#${r}))"; done
    done
  fi
}

# p4_preflight: may the run change what its scenarios need? (exit 6 if not)
p4_preflight() {
  local -a srv=()
  local b
  if c10k_wants backlog; then
    for b in "${P4_BACKLOGS[@]}"; do srv+=(net.core.somaxconn "$((10#${b}))"); done
    ((ABORT_ON_OVERFLOW == 0)) || srv+=(net.ipv4.tcp_abort_on_overflow 1)
    csb_sysctl_allowed server "${srv[@]}"
  fi
  if c10k_wants churn && [[ -n "${CLIENT_PORT_RANGE}" ]]; then
    csb_sysctl_allowed client net.ipv4.ip_local_port_range "${CLIENT_PORT_RANGE/-/ }"
  fi
}

# The settings each cell's prediction reads, and the TIME_WAIT of the host.
p4_facts_script() {
  cat <<'SCRIPT'
for k in net.ipv4.ip_local_port_range net.ipv4.ip_local_reserved_ports net.ipv4.tcp_tw_reuse \
  net.ipv4.tcp_timestamps net.ipv4.tcp_max_tw_buckets net.ipv4.tcp_fin_timeout net.core.somaxconn \
  net.ipv4.tcp_max_syn_backlog net.ipv4.tcp_syncookies net.ipv4.tcp_abort_on_overflow \
  net.ipv4.tcp_synack_retries net.ipv4.tcp_syn_retries; do
  printf '%s=%s\n' "$k" "$(sysctl -n "$k" 2>/dev/null | tr -s '\t ' '  ')"
done
printf 'sockstat=%s\n' "$(grep '^TCP:' /proc/net/sockstat)"
SCRIPT
}

# p4_facts CELL: both hosts' settings before CELL, then the prediction.
p4_facts() {
  local raw="${CSB_RUN_DIR}/raw/$1"
  on_server_sh "$(p4_facts_script)" >"${raw}.facts.server.env" || die "cannot read the server's settings" 4
  bash -c "$(p4_facts_script)" >"${raw}.facts.client.env" || die "cannot read this host's settings" 1
}

# p4_predict CELL CLOSE RATE: log what `csb conn-predict` expects of the cell.
p4_predict() {
  local raw="${CSB_RUN_DIR}/raw/$1" line
  local -a cmd=("${CSB_ROOT}/bin/csb" conn-predict -client "${raw}.facts.client.env" -server "${raw}.facts.server.env"
    -close "$2" -rate "$3" -duration "${P4_SECS}" -sources 1 -lab "${LAB}")
  line=$("${cmd[@]}") || die "csb conn-predict failed (see above): $(printf '%q ' "${cmd[@]}")" 1
  log_info "prediction $1: ${line}"
}

# p4_client CELL ARGS...: connclient ARGS... in the background, tracked by
# PID, its JSON to raw/CELL.json and its progress to raw/CELL.log; returns
# its exit status.
p4_client() {
  local cell=$1 pid rc=0
  shift
  local -a cmd=("${CSB_ROOT}/bin/connclient" "$@" -target "$(csb_url_host "${SERVER_IP}"):${SERVER_PORT}"
    -source "${CLIENT_IP}" -path "${HEALTH_PATH}")
  log_cmd "${cmd[@]}"
  "${cmd[@]}" </dev/null >"${CSB_RUN_DIR}/raw/${cell}.json" 2>"${CSB_RUN_DIR}/raw/${cell}.log" &
  pid=$!
  csb_track_client "${pid}" connclient
  csb_monitor_client_pids "connclient-${cell}" "${pid}"
  wait "${pid}" || rc=$?
  csb_untrack_client "${pid}"
  return "${rc}"
}

# p4_cell KIND ARG VALUE: one cell: settings, fresh server, facts,
# prediction, the client, the server stopped.
p4_cell() {
  local kind=$1 arg=$2 value=$3 cell
  local -a params client
  # The bursts stay cleartext: their server, its checks and the client
  # see SCHEME=http (dynamic scope: this cell only).
  if [[ "${kind}" == backlog ]]; then
    local SCHEME=http
    local -a CSB_TLS_SERVER_FLAGS=() CSB_TLS_CLIENT_FLAGS=() CSB_CURL_TLS=()
  fi
  case "${kind}" in
    backlog)
      cell="backlog-${value}"
      ((${#P4_BURSTS[@]} == 1)) || cell+="-${arg}"
      csb_sysctl_set server net.core.somaxconn "${value}"
      ((ABORT_ON_OVERFLOW == 0)) || csb_sysctl_set server net.ipv4.tcp_abort_on_overflow 1
      params=("scenario=backlog" "backlog=${value}" "connections=${arg}" "timeout_s=${P4_BURST_TIMEOUT}")
      client=(burst -conns "${arg}" -timeout "${P4_BURST_TIMEOUT}s")
      ;;
    accept)
      cell="accept-${value}"
      params=("scenario=accept" "close=linger0" "rate=${value}" "duration_s=${P4_SECS}" "p99_bound_ms=${ACCEPT_P99_MS}")
      client=(churn -rate "${value}" -duration "${P4_SECS}s" -close linger0)
      if [[ "${arg}" != - ]]; then
        cell="accept-${arg}-${value}"
        params+=("handshake=${arg}")
        [[ "${arg}" != resumed ]] || client+=(-tls-resume)
      fi
      ;;
    churn)
      cell="churn-${arg}-${value}"
      params=("scenario=churn" "close=${arg}" "rate=${value}" "duration_s=${P4_SECS}")
      client=(churn -rate "${value}" -duration "${P4_SECS}s" -close "${arg}")
      ! csb_tls_on || params+=("handshake=full")
      ;;
  esac
  [[ "${kind}" == backlog ]] || client+=("${CSB_TLS_CLIENT_FLAGS[@]}")
  # A burst gets a fresh server, which reads the somaxconn just set; the
  # rate cells share one per scenario, started before the client's port
  # range narrows (its readiness check connects from the client too).
  if [[ "${kind}" == backlog ]]; then
    csb_http_start "csb-server-${cell}" 1k 1
    params+=("server=csb-server-${cell}")
  else
    params+=("server=csb-server-${kind}")
  fi
  p4_facts "${cell}"
  case "${kind}" in
    accept) p4_predict "${cell}" linger0 "${value}" ;;
    churn) p4_predict "${cell}" "${arg}" "${value}" ;;
  esac
  csb_cell_begin "${cell}" "${params[@]}"
  local rc=0
  p4_client "${cell}" "${client[@]}" || rc=$?
  if ((rc != 0)); then
    csb_cell_end failed "connclient exited ${rc}; see raw/${cell}.log"
  elif [[ ! -s "${CSB_RUN_DIR}/raw/${cell}.json" ]]; then
    csb_cell_end failed "no result in raw/${cell}.json"
  else
    csb_cell_end ok
  fi
  [[ "${kind}" != backlog ]] || csb_http_stop
}

# p4_scenario_begin KIND: the server of a rate scenario, then the settings
# it changes.
p4_scenario_begin() {
  [[ "$1" == backlog ]] || csb_http_start "csb-server-$1" 1k 1
  if [[ "$1" == churn && -n "${CLIENT_PORT_RANGE}" ]]; then
    csb_sysctl_set client net.ipv4.ip_local_port_range "${CLIENT_PORT_RANGE/-/ }"
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
  c10k_check_scenarios backlog accept churn
  p4_profile
  csb_lab_enter "${BASH_SOURCE[0]}" "$@"
  mapfile -t P4_CELLS < <(p4_cells)
  csb_build_all
  csb_build connclient cmd/connclient
  csb_ssh_open
  csb_preflight_tools "curl sar mpstat pidstat sadf nstat ip ss sysctl" "sar mpstat pidstat sadf nstat ip ss sysctl"
  csb_preflight_route
  p4_preflight
  csb_run_begin 04-connections connections "$@"
  csb_capture_env
  csb_monitors_start
  csb_server_deploy
  local cell kind arg value last=""
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
