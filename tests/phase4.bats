#!/usr/bin/env bats
# shellcheck disable=SC2016 # jq programs are single-quoted on purpose
# Phase 4 end to end on the real netns lab (smoke profile), one run shared by
# the assertions: every scenario (backlog, accept, churn by who closes); the
# churn cell predicted to meet the port wall (a 500-port range in the client
# namespace) meets it and the report says it was predicted; SO_LINGER=0
# leaves the client no TIME_WAIT; with the accept paced at one per ms (a
# known answer) backlog 128 must overflow and does, 4096 does not.
# Then Ctrl-C mid-scenario: the sysctls the run changed are back.

load helpers

# The lab's own values, read before the runs (the lab is brought up here
# if it was down, and taken down at the end).
setup_file() {
  [[ ${EUID} -eq 0 ]] || return 0
  cd "${BATS_TEST_DIRNAME}/.." || return 1
  export PATH="${PATH}:/usr/local/go/bin"
  P4_WAS_UP=0
  if lab_is_up; then P4_WAS_UP=1; else lab/netns.sh up >/dev/null 2>&1; fi
  export P4_WAS_UP
  P4_ROOT="$(mktemp -d "${BATS_TMPDIR:-/tmp}/csb-p4.XXXXXX")"
  export P4_ROOT
  P4_RANGE=$(ip netns exec "${LAB_ID}-cli" sysctl -n net.ipv4.ip_local_port_range | tr -s '\t ' ' ')
  P4_SOMAXCONN=$(ip netns exec "${LAB_ID}-srv" sysctl -n net.core.somaxconn)
  export P4_RANGE P4_SOMAXCONN
  P4_OUT="${P4_ROOT}/run.out"
  export P4_OUT
  CSB_CONFIG=/dev/null RESULTS_ROOT="${P4_ROOT}" bash 04-connections/run_connections.sh -l netns -p smoke \
    -s CLIENT_PORT_RANGE=40000-40499 -s CHURN_RATES=500,2000 -s ACCEPT_RATES=2000 -s BURST_ACCEPT_EVERY=1ms >"${P4_OUT}" 2>&1 || true
}

teardown_file() {
  [[ ${EUID} -eq 0 ]] || return 0
  if [[ "${P4_WAS_UP:-1}" == 0 ]]; then "${BATS_TEST_DIRNAME}/../lab/netns.sh" down >/dev/null 2>&1 || true; fi
  [[ -z "${P4_ROOT:-}" ]] || rm -rf "${P4_ROOT}"
}

setup() {
  need_root
  cd "${BATS_TEST_DIRNAME}/.." || return 1
  DIR=$(results_line "$(cat "${P4_OUT}")")
  SUM="${DIR}/summary.json"
}

@test "phase 4 smoke: every scenario ran, ok, one report" {
  tail -n 5 "${P4_OUT}"
  [[ "${DIR}" == "${P4_ROOT}/04-connections/"* ]]
  jq -e '.phase == "04-connections" and .status == "ok" and .error == null' "${SUM}"
  jq -e '[.cells[].name] == ["backlog-128","backlog-4096","accept-2000",
    "churn-linger0-500","churn-linger0-2000","churn-server-500","churn-server-2000","churn-client-500","churn-client-2000"]' "${SUM}"
  jq -e 'all(.cells[]; .status == "ok" and .verdict.bound != null)' "${SUM}"
  [ -s "${DIR}/Report_04-connections.md" ]
  grep -q '^## Churn: new connections per second' "${DIR}/Report_04-connections.md"
  grep -q 'prediction churn-client-500 on client: wall=ephemeral_ports' "${P4_OUT}"
  jq -e '.schema_version == 1 and .mode == "churn" and (.histograms.latency.buckets | length) > 0' "${DIR}/raw/client/churn-server-500.json"
}

@test "phase 4: the churn cell predicted to hit EADDRNOTAVAIL hits it, and the report says it was predicted" {
  jq -e '.cells[] | select(.name == "churn-client-500") | .metrics.predicted_eaddrnotavail == 1
    and .metrics.errors_eaddrnotavail > 0 and .verdict.bound == "ephemeral ports"
    and .metrics.predicted_sustainable_rate_per_s < 10' "${SUM}"
  grep -q 'churn-client-500.*predicted: the ports run out after' "${DIR}/Report_04-connections.md"
  # The variants without TIME_WAIT on the client sustain the same rate.
  jq -e '.cells[] | select(.name == "churn-server-500" or .name == "churn-linger0-500")
    | .metrics.predicted_eaddrnotavail == 0 and .metrics.errors_eaddrnotavail == 0 and .metrics.connections_completed == 1000' "${SUM}"
}

@test "phase 4: SO_LINGER=0 leaves no TIME_WAIT on the client; the server-closed variant leaves it on the server" {
  jq -e '[.cells[] | select(.params.close == "linger0" and .params.scenario == "churn")
    | .metrics.client_time_wait <= .metrics.client_time_wait_before] | length == 2 and all' "${SUM}"
  # ... at most one per client port used (connect() takes the 250 even ports
  # of the 500 while they are free): a SYN on the 4-tuple of a server
  # TIME_WAIT socket takes it over.
  jq -e '.cells[] | select(.name == "churn-server-2000") | .metrics.server_time_wait_peak > 100
    and .metrics.server_time_wait_peak <= 500 and .metrics.predicted_server_time_wait == 250' "${SUM}"
}

@test "phase 4: a server accepting one connection per ms: backlog 128 must overflow under the burst, and does; 4096 absorbs it" {
  # The known answer: with the accept paced (BURST_ACCEPT_EVERY=1ms), 2000
  # connects issued in T s overflow a backlog of 128 whenever 2000 > 128 +
  # T/1ms + 1 (T < 1.87 s; a burst is issued in well under 0.5 s), on any
  # host, and cannot overflow 4096.
  jq -e '.cells[0] | .metrics.backlog == 128 and .metrics.server_somaxconn == 128 and .metrics.accept_every_ms == 1
    and .metrics.burst_issue_s < 1.5 and .metrics.predicted_listen_overflow == 1 and .metrics.server_listen_overflows > 0
    and .verdict.bound == "listen backlog"' "${SUM}"
  jq -e '.cells[1] | .metrics.backlog == 4096 and .metrics.predicted_listen_overflow == 0 and .metrics.server_listen_overflows == 0
    and .metrics.connections_never_up == 0 and .metrics.connections_completed == 2000' "${SUM}"
  grep -q '`backlog-128` (2000 connects issued in .* into 128) must overflow: ListenOverflows [1-9]' "${DIR}/Report_04-connections.md"
  # The sysctls are back to the lab's values after the run.
  [ "$(ip netns exec "${LAB_ID}-srv" sysctl -n net.core.somaxconn)" == "${P4_SOMAXCONN}" ]
  grep -q "^sysctl.server.net.core.somaxconn.restored=${P4_SOMAXCONN}$" "${DIR}/run.env"
}

@test "phase 4: Ctrl-C mid-scenario puts the client's port range back" {
  local out="${BATS_TEST_TMPDIR}/out"
  # A background job of a non-interactive shell starts with SIGINT ignored;
  # env --default-signal gives the runner the SIGINT a terminal would.
  CSB_CONFIG=/dev/null RESULTS_ROOT="${P4_ROOT}" env --default-signal=INT bash 04-connections/run_connections.sh -l netns -p smoke \
    -s SCENARIOS=churn -s CHURN_CLOSE=linger0 -s CHURN_RATES=200 -s DURATION=30 -s CLIENT_PORT_RANGE=40000-40999 >"${out}" 2>&1 &
  local pid=$!
  wait_for "${out}" 'cell [0-9]+/[0-9]+ churn-linger0-200 \(' 180
  [ "$(ip netns exec "${LAB_ID}-cli" sysctl -n net.ipv4.ip_local_port_range | tr -s '\t ' ' ')" == "40000 40999" ]
  sleep 1
  kill -INT "${pid}"
  local rc=0
  wait "${pid}" || rc=$?
  tail -n 8 "${out}"
  interrupted "${rc}" "${out}" 130
  [ "$(ip netns exec "${LAB_ID}-cli" sysctl -n net.ipv4.ip_local_port_range | tr -s '\t ' ' ')" == "${P4_RANGE}" ]
  local dir
  dir=$(results_line "$(cat "${out}")")
  grep -q "^sysctl.client.net.ipv4.ip_local_port_range.restored=${P4_RANGE}$" "${dir}/run.env"
  jq -e --arg sig "$(signal_word SIGINT)" '.status == "partial" and (.error | test($sig))' "${dir}/summary.json"
  pids_gone "${dir}"
  trap_bug_skip
}

@test "phase 4 on a real host: a sysctl it may not change refuses the run with the commands, nothing started" {
  local root="${BATS_TEST_TMPDIR}/res"
  run env CSB_CONFIG=/dev/null RESULTS_ROOT="${root}" bash 04-connections/run_connections.sh -l local -p smoke -s SCENARIOS=backlog -s SERVER_PORT=18911
  echo "$output" | tail -n 6
  [ "$status" -eq 6 ]
  [[ "$output" == *"APPLY_SYSCTLS is not 1"* ]]
  [[ "$output" == *"sysctl -w net.core.somaxconn=128"* ]]
  [[ "$output" == *"sysctl -w net.core.somaxconn=4096"* ]]
  [ ! -e "${root}/04-connections" ]
}

@test "phase 4: bad settings are refused with one line, exit 2" {
  run env CSB_CONFIG=/dev/null bash 04-connections/run_connections.sh -l local -s CLIENT_PORT_RANGE=40999-40000
  [ "$status" -eq 2 ]
  [[ "${lines[0]}" == "error: CLIENT_PORT_RANGE=40999-40000 is not valid (from flag): expected LO-HI with 1024 <= LO <= HI <= 65535"* ]]
  run env CSB_CONFIG=/dev/null bash 04-connections/run_connections.sh -l local -s CHURN_CLOSE=client,never
  [ "$status" -eq 2 ]
  [[ "${lines[0]}" == "error: CHURN_CLOSE="*"never is not valid (from flag): expected a comma-separated list of linger0, server, client" ]]
  run env CSB_CONFIG=/dev/null bash 04-connections/run_connections.sh -l local -s SCENARIOS=churn,idle
  [ "$status" -eq 2 ]
  [[ "$output" == *"idle is not a scenario of this runner"* ]]
  run env CSB_CONFIG=/dev/null bash 04-connections/run_connections.sh -l local -s SERVER=nginx -s BURST_ACCEPT_EVERY=1ms
  [ "$status" -eq 2 ]
  [[ "${lines[0]}" == "error: BURST_ACCEPT_EVERY paces the reference server's accept (SERVER=csb), not SERVER=nginx's"* ]]
  run env CSB_CONFIG=/dev/null bash 04-connections/run_connections.sh -l local -s BURST_ACCEPT_EVERY=1
  [ "$status" -eq 2 ]
  [[ "${lines[0]}" == "error: BURST_ACCEPT_EVERY=1 is not valid"* ]]
}
