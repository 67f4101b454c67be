#!/usr/bin/env bats
# Phase 1 (01-http-baseline): the runner's help, every bad input it refuses
# before any traffic, and the whole flow on the netns lab with the smoke
# profile: Phase 0 first (the baseline), then Phase 1 against it, with the
# real wrk, server, sysstat and nstat.

load helpers

RUNNER=01-http-baseline/run_http_baseline.sh

setup() {
  common_setup
  unset PAYLOADS THREADS CONNECTIONS WARMUP CONCURRENCY LOADGEN REPEAT
}

teardown() { common_teardown; }

@test "phase 1: -h prints the usage on stdout and exits 0" {
  run bash "${RUNNER}" -h
  [ "$status" -eq 0 ]
  [[ "$output" == "Phase 1: can an HTTP server fill the link?"* ]]
  [[ "$output" == *"Usage: bash 01-http-baseline/run_http_baseline.sh"* ]]
  [[ "$output" == *"PAYLOADS"*"THREADS"*"CONNECTIONS"*"WARMUP"* ]]
}

@test "phase 1: bad input exits 2 naming the key and the fix, before any traffic" {
  local key value expect
  while IFS='|' read -r key value expect; do
    run env "${key}=${value}" bash "${RUNNER}" -l netns -p smoke
    [ "$status" -eq 2 ] || { echo "${key}=${value}: status $status: $output"; return 1; }
    [[ "$output" == *"error: ${key}="*"${expect}"* ]] || { echo "${key}=${value}: $output"; return 1; }
  done <<'CASES'
PAYLOADS|1x|expected a comma-separated list of payload sizes
PAYLOADS|1k,,10k|expected a comma-separated list of payload sizes
PAYLOADS|1024|serves 1024 bytes as /payload/1k, not /payload/1024: write 1k
PAYLOADS|10k,1k,10k|10k is listed twice
PAYLOADS|65m|larger than the server serves
THREADS|0|expected a positive integer
CONNECTIONS|many|expected a positive integer
WARMUP|-1|expected a whole number
DURATION|0|a cell needs at least 1 second
REPEAT|0|expected a positive integer
CASES
  # The server of known capacity: both settings, and the reference server's only.
  run env SLOTS=40 bash "${RUNNER}" -l netns -p smoke
  [ "$status" -eq 2 ] && [[ "$output" == *"SERVICE_TIME and SLOTS go together"* ]]
  run env SLOTS=40 SERVICE_TIME=10ms SERVER=nginx bash "${RUNNER}" -l netns -p smoke
  [ "$status" -eq 2 ] && [[ "$output" == *"not SERVER=nginx's"* ]]
  # Refused before the lab was entered: no run directory, nothing started.
  [ -z "$(ls -A "${RESULTS_ROOT}")" ]
}

@test "phase 1 end to end (netns, smoke): wrk cells, summary against Phase 0, report" {
  need_root
  run bash 00-iperf3/run_iperf3_baseline.sh -l netns -p smoke -s IPERF_PORT=15281 -s DURATION=1
  [ "$status" -eq 0 ]
  local p0
  p0=$(results_line "$output")
  [ -f "${p0}/summary.json" ]

  run bash "${RUNNER}" -l netns -p smoke -s SERVER_PORT=18181
  echo "$output" | tail -n 20
  [ "$status" -eq 0 ]
  local dir
  dir=$(results_line "$output")
  [[ "${dir}" == "${RESULTS_ROOT}/01-http-baseline/"* && -f "${dir}/run.env" ]]

  # Raw output kept verbatim: wrk's text with the hook's line, the warm-ups,
  # one response's headers, pidstat on wrk and on the server.
  local size
  for size in 1k 10k 100k; do
    grep -q '^Running 2s test @ http://198.18.0.1:18181/payload/'"${size}"'$' "${dir}/raw/client/${size}.txt"
    grep -q '^CSB_WRK_JSON {"schema":1,' "${dir}/raw/client/${size}.txt"
    grep -q '^CSB_WRK_JSON ' "${dir}/raw/warmup/client/${size}.txt"
    grep -q '^HTTP/1.1 200 OK' "${dir}/raw/headers/${size}.txt"
    [ -s "${dir}/monitors/client/pidstat-loadgen-${size}.txt" ]
  done
  [ -s "${dir}/monitors/server/pidstat-csb-server.txt" ]
  [ "$(grep -c $'\tok\t' "${dir}/cells.tsv")" -eq 3 ]
  grep -q 'wrk -t 2 -c 16 -d 2s --latency -s .*/report.lua http://198.18.0.1:18181/payload/1k' "${dir}/logs/console.log"

  # summary.json: the contract's fields, every cell measured.
  local s="${dir}/summary.json"
  [ "$(jq -r .phase "$s")" = 01-http-baseline ]
  [ "$(jq -r .status "$s")" = ok ]
  [ "$(jq '.cells | length' "$s")" -eq 3 ]
  [ "$(jq -r '.link.baseline_run' "$s")" = "../../00-iperf3/$(basename "${p0}")" ]
  jq -e '.link.baseline_mbps > 0' "$s"
  jq -e '[.cells[] | .metrics | .rps > 0 and .throughput_mbps > 0 and .goodput_mbps > 0
    and .goodput_mbps < .throughput_mbps and .latency_p50_ms > 0 and .latency_p99_ms >= .latency_p50_ms
    and .latency_p99_9_ms != null and .errors_total == 0 and .server_cpu_pct != null
    and .client_cpu_pct != null and .server_proc_cpu_pct != null and .client_proc_cpu_pct != null
    and .server_retrans_segs != null and .server_listen_overflows != null and .link_utilization > 0] | all' "$s"
  jq -e '[.cells[] | .verdict.bound | IN("network-bound", "server-CPU-bound", "client-CPU-bound",
    "server- and client-CPU-bound", "CPU-bound (server and client share the CPUs)", "unclear")] | all' "$s"
  jq -e '[.cells[] | .verdict.evidence | test("Mbit/s = [0-9.]+% of Phase 0 s2c-1")] | all' "$s"
  # Bodies only: goodput is requests x body size (to the rounding of duration_s).
  jq -e '.cells[] | select(.name == "100k") | .metrics
    | ((.goodput_mbps - .requests * 102400 * 8 / .duration_s / 1e6) / .goodput_mbps | fabs) < 0.001' "$s"

  # The report: its sections, the basis named, the chart written.
  local rep="${dir}/Report_01-http-baseline.md"
  head -n 1 "${rep}" | grep -q '^<!-- Generated by `bin/csb summarize'
  local section
  for section in "## What HTTP delivers" "## Cells" "## Verdict per cell" "## CPU" "## Errors" \
    "## The hosts' own counters" "## Chart" "## Notes" "## Environment" "## Files"; do
    grep -qF -- "${section}" "${rep}" || { echo "missing ${section}"; return 1; }
  done
  grep -qF 'Throughput is compared with Phase 0 s2c-1' "${rep}"
  grep -qF 'Verdict rules, in order' "${rep}"
  [ -s "${dir}/throughput.gp" ] && [ -s "${dir}/throughput.dat" ]

  # Nothing of the run is left on either host.
  [ -z "$(procs_matching "$(basename "${dir}")")" ]
}
