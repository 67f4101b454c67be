#!/usr/bin/env bats
# shellcheck disable=SC2016 # backquoted cell names in the report are literal text
# How far a figure can be trusted (issue 14), on the netns lab with the real
# tools: a cell run beside a busy loop that the test starts outside the
# lab's processes is marked disturbed and names it; the same cell without it
# is not; a Phase 3 ramp asked for more connects per second than the client
# can make names the short ramp as its wall.

load helpers

RUNNER=01-http-baseline/run_http_baseline.sh

setup() {
  common_setup
  unset PAYLOADS THREADS CONNECTIONS WARMUP CONCURRENCY LOADGEN REPEAT DISTURB_THRESHOLD
  HOG=""
}

teardown() {
  if [[ -n "${HOG}" ]]; then
    kill "${HOG}" 2>/dev/null || true
    wait "${HOG}" 2>/dev/null || true
  fi
  common_teardown
}

# one_cell: Phase 1, one 3-second cell of 1k, no warm-up.
one_cell() {
  run bash "${RUNNER}" -l netns -p smoke -s SERVER_PORT=18381 -s PAYLOADS=1k -s DURATION=3 -s WARMUP=0
  echo "$output" | tail -n 5
  [ "$status" -eq 0 ]
  DIR=$(results_line "$output")
  S="${DIR}/summary.json"
  [ -s "${DIR}/monitors/client/procs-pidstat.txt" ]
}

# run_pids: every PID the run watched with its own pidstat files.
run_pids() {
  cat "${DIR}"/monitors/*/pidstat-*.txt | awk '$1 ~ /^[0-9]+$/ { print $3 }' | sort -u
}

@test "trust: a cell beside a busy loop is disturbed and names it" {
  need_root
  bash -c 'while :; do :; done' &
  HOG=$!
  one_cell
  kill "${HOG}"
  wait "${HOG}" 2>/dev/null || true
  [ "$(jq -r '.cells[0].trust.disturbed' "$S")" = true ]
  [ "$(jq '.cells[0].trust.disturb_threshold_pct' "$S")" = 10 ]
  # The busy loop is among the top other processes, by its PID.
  jq -e --argjson p "${HOG}" '.cells[0].trust.other_load[0].top | map(.pid) | index($p) != null' "$S"
  HOG=""
  local report="${DIR}/Report_01-http-baseline.md"
  grep -q '^- ⚑ `1k` disturbed (over 10 % of one core): on the machine, other processes took' "${report}"
  grep -q '^| `1k` | -t 2 -c 16 | 3 s | [0-9.]* ⚑' "${report}"
}

@test "trust: the same cell without it is not disturbed" {
  need_root
  one_cell
  [ "$(jq -r '.cells[0].trust.other_load[0].host' "$S")" = machine ]
  jq -e '.cells[0].trust.other_load[0].others_cpu_pct | type == "number"' "$S"
  # Whatever was named, it is none of the run's own processes.
  local pid
  for pid in $(run_pids); do
    if jq -e --argjson p "${pid}" '.cells[0].trust.other_load[0].top | map(.pid) | index($p) != null' "$S" >/dev/null; then
      echo "the run's own PID ${pid} is named as another process" >&2
      return 1
    fi
  done
  if [[ "$(jq -r '.cells[0].trust.disturbed' "$S")" == true ]]; then
    # The machine is shared: another user's work may really disturb the
    # cell. Then the mark is right and this test cannot show the contrary.
    skip "the machine was busy with other work: $(grep -m1 '^- ⚑' "${DIR}/Report_01-http-baseline.md")"
  fi
  [ "$(jq -r '.cells[0].trust.disturbed' "$S")" = false ]
  # No figure of the cell carries the mark, no line says it was disturbed.
  run grep -E '^\| `1k` .*⚑|^- ⚑' "${DIR}/Report_01-http-baseline.md"
  [ "$status" -eq 1 ]
}

@test "trust: a Phase 3 ramp asked for more connects per second than the client makes names the short ramp" {
  need_root
  # 20000/s is the most the plan allows on this lab's listen queues
  # (somaxconn 4096, tcp_max_syn_backlog 2048: 100 ms of connects);
  # 2000 connections take a tenth of a second at that pace. Unpinned
  # (CPU_PIN=0), client and server share both cores: pinned, the client
  # has a core of its own and may just make it (18,273/s seen).
  run bash 03-c10k/run_c10k.sh -l netns -p smoke -s SCENARIOS=idle -s CONNS=2000 -s CONNECT_RATE=20000 -s SERVER_PORT=18381 -s CPU_PIN=0
  echo "$output" | tail -n 5
  [ "$status" -eq 0 ]
  DIR=$(results_line "$output")
  S="${DIR}/summary.json"
  jq '.cells[0].metrics | {connect_rate_target_per_s, connect_rate_achieved_per_s, connect_latency_p99_ms}' "$S"
  [ "$(jq '.cells[0].metrics.connect_rate_target_per_s' "$S")" = 20000 ]
  [ "$(jq -r '.cells[0].details.ramp.wall' "$S")" = short_ramp ]
  jq -r '.cells[0].details.ramp.cause' "$S" | grep -qxE 'client_cpu|syn_retransmits|listen_overflows|unknown'
  [[ "$(jq -r '.cells[0].verdict.bound' "$S")" == "short ramp: "*" of 20000 connects/s"* ]]
  [[ "$(jq -r '.cells[0].verdict.evidence' "$S")" == *"client SYN retransmits"*"server ListenOverflows"* ]]
  grep -q '\*\*short ramp: ' "${DIR}/Report_03-c10k.md"
}
