#!/usr/bin/env bats
# Phase 2 (02-http-matrix): the runner's help, every bad input it refuses
# before any traffic, how the oha and wrk commands are spelled, and the
# whole flow on the netns lab with the smoke profile (wrk standing in for
# oha, which is not installed here), plus a cell refused for want of fds.

load helpers

RUNNER=02-http-matrix/run_http_matrix.sh

setup() {
  common_setup
  unset PAYLOADS THREADS CONNECTIONS WARMUP CONCURRENCY LOADGEN REPEAT
}

teardown() { common_teardown; }

# loadgen_lib: a script that sources the library, for its pure functions.
loadgen_lib() {
  printf 'source %q\nLAB=local SERVER_IP=198.18.0.1 SERVER_PORT=8080\n%s\n' "${REPO}/lib/init.sh" "$1" >"${BATS_TEST_TMPDIR}/lib.sh"
  bash "${BATS_TEST_TMPDIR}/lib.sh"
}

@test "phase 2: -h prints the usage on stdout and exits 0" {
  run bash "${RUNNER}" -h
  [ "$status" -eq 0 ]
  [[ "$output" == "Phase 2: what payload and concurrency do to RPS"* ]]
  [[ "$output" == *"PAYLOADS"*"CONCURRENCY"*"LOADGEN"*"REPEAT"* ]]
}

@test "phase 2: bad input exits 2 naming the key and the fix, before any traffic" {
  local key value expect
  while IFS='|' read -r key value expect; do
    run env "${key}=${value}" bash "${RUNNER}" -l netns -p smoke
    [ "$status" -eq 2 ] || { echo "${key}=${value}: status $status: $output"; return 1; }
    [[ "$output" == *"error: ${key}="*"${expect}"* ]] || { echo "${key}=${value}: $output"; return 1; }
  done <<'CASES'
PAYLOADS|3x|expected a comma-separated list of payload sizes
PAYLOADS|2048|serves 2048 bytes as /payload/2k, not /payload/2048: write 2k
CONCURRENCY|0|expected a comma-separated list of positive integers
CONCURRENCY|16,-64|expected a comma-separated list of positive integers
CONCURRENCY|16,1.5|expected a comma-separated list of positive integers
CONCURRENCY|sixteen|expected a comma-separated list of positive integers
CONCURRENCY|16,64,16|16 is listed twice
LOADGEN|ab|expected one of: auto oha wrk
REPEAT|0|expected a positive integer
DURATION|0|a cell needs at least 1 second
CASES
  [ -z "$(ls -A "${RESULTS_ROOT}")" ]
}

@test "phase 2: LOADGEN=oha without oha installed is refused before any traffic" {
  if command -v oha >/dev/null 2>&1; then
    skip "oha is installed here"
  fi
  run env LOADGEN=oha bash "${RUNNER}" -l netns -p smoke
  [ "$status" -eq 2 ]
  [[ "$output" == *"error: LOADGEN=oha but oha is not installed on this (client) host"*"cargo install oha"*"or use LOADGEN=wrk"* ]]
  # Over HTTP/2 too (oha --http2).
  run env LOADGEN=oha bash "${RUNNER}" -l netns -p smoke -s HTTP=2
  [ "$status" -eq 2 ]
  [[ "${lines[0]}" == "error: LOADGEN=oha but oha is not installed on this (client) host"* ]]
  [ -z "$(ls -A "${RESULTS_ROOT}")" ]
}

# The snippets below are single-quoted on purpose: the bash that runs them
# expands them, not this one.
# shellcheck disable=SC2016
@test "loadgen: oha's flags are spelled as the installed version takes them" {
  # oha >= 1.5: --output-format, -w/--wait-ongoing-requests-after-deadline.
  run loadgen_lib '
help="Options:
  -z <DURATION>  Duration of application to send requests.
  -w, --wait-ongoing-requests-after-deadline  When the duration is reached, ongoing requests are waited
      --no-tui  No realtime tui
      --output-format <OUTPUT_FORMAT>  Output format [default: text]"
csb_oha_flags "$help"
csb_oha_cmd cmd 256 30 "$(csb_payload_url 10k)"
printf "%s\n" "${cmd[*]}"'
  [ "$status" -eq 0 ]
  [ "$output" = "oha --no-tui --output-format json -z 30s -c 256 --wait-ongoing-requests-after-deadline http://198.18.0.1:8080/payload/10k" ]

  # HTTP=2 (LOADGEN=oha): HTTP/2 only, 4 requests at once on each of 16 connections.
  run loadgen_lib '
csb_oha_flags "  -w, --wait-ongoing-requests-after-deadline  ...
      --http2  Only HTTP2
  -p <N_HTTP2_PARALLEL>  Number of parallel requests to send on HTTP/2
      --output-format <OUTPUT_FORMAT>  Output format [default: text]"
csb_oha_cmd cmd 16 5 "$(csb_payload_url 1k)" 4
printf "%s\n" "${cmd[*]}"'
  [ "$status" -eq 0 ]
  [ "$output" = "oha --no-tui --output-format json -z 5s -c 16 --http2 -p 4 --wait-ongoing-requests-after-deadline http://198.18.0.1:8080/payload/1k" ]

  # oha 1.0-1.4: -j, --json (and -w).
  run loadgen_lib '
csb_oha_flags "  -j, --json  Print results as JSON
  -w, --wait-ongoing-requests-after-deadline  When the duration is reached, ongoing requests are waited"
csb_oha_cmd cmd 16 5 "$(csb_payload_url 1k)"
printf "%s\n" "${cmd[*]}"'
  [ "$output" = "oha --no-tui -j -z 5s -c 16 --wait-ongoing-requests-after-deadline http://198.18.0.1:8080/payload/1k" ]

  # An oha with JSON but no wait flag: no flag it would reject.
  run loadgen_lib '
csb_oha_flags "  -j, --json  Print results as JSON"
csb_oha_cmd cmd 16 5 "$(csb_payload_url 1k)"
printf "%s\n" "${cmd[*]}"'
  [ "$output" = "oha --no-tui -j -z 5s -c 16 http://198.18.0.1:8080/payload/1k" ]

  # No JSON at all: refused.
  run loadgen_lib 'csb_oha_flags "  --no-tui  No realtime tui" && echo accepted || echo refused'
  [ "$output" = refused ]
}

# shellcheck disable=SC2016 # expanded by the bash that runs the snippet
@test "loadgen: wrk's command on a client host, never more threads than connections (csb load-plan)" {
  run loadgen_lib '
CSB_H_WORK[1]=/w
csb_wrk_cmd cmd 1 2 2 5 "$(csb_payload_url 1k)"
printf "%s\n" "${cmd[*]}"'
  [ "$output" = "wrk -t 2 -c 2 -d 5s --latency -s /w/bin/report.lua http://198.18.0.1:8080/payload/1k" ]
  make -s build >/dev/null
  run bin/csb load-plan -conns 2 -threads 4 -host client:8:0
  [[ "${lines[*]}" == *"client.connections=2 client.threads=2"* ]]
  run bin/csb load-plan -conns 5 -threads 0 -host client1:1:0 -host client2:4:0
  [[ "${lines[*]}" == *"client1.connections=3 client1.threads=1 client2.connections=2 client2.threads=2"* ]]
}

@test "phase 2 end to end (netns, smoke): wrk stands in for oha, plateau and charts" {
  need_root
  run bash "${RUNNER}" -l netns -p smoke -s SERVER_PORT=18182
  echo "$output" | tail -n 20
  [ "$status" -eq 0 ]
  local dir
  dir=$(results_line "$output")
  [[ "${dir}" == "${RESULTS_ROOT}/02-http-matrix/"* && -f "${dir}/run.env" ]]
  grep -qF 'wrk (with lib/wrk/report.lua) stands in for oha' "${dir}/logs/console.log"

  local cell
  for cell in 1k-c16 1k-c64 4k-c16 4k-c64; do
    grep -q "^${cell}"$'\tok\t' "${dir}/cells.tsv" || { echo "cell ${cell}"; return 1; }
    grep -q '^CSB_WRK_JSON ' "${dir}/raw/client/${cell}.txt"
    grep -q '^CSB_WRK_JSON ' "${dir}/raw/warmup/client/${cell}.txt"
  done
  # wrk gets one thread per CPU the client host has: 1 when the netns lab
  # pins it (CPU_PIN), the machine's otherwise.
  grep -qE "wrk -t $(grep -q '^client.1.cpus=.' "${dir}/run.env" && echo 1 || nproc) -c 64 -d 2s --latency .* http://198.18.0.1:18182/payload/4k" "${dir}/logs/console.log"

  local s="${dir}/summary.json"
  [ "$(jq -r .status "$s")" = ok ]
  [[ "$(jq -r '.notes[0]' "$s")" == "wrk stood in for oha"* ]]
  [ "$(jq '.cells | length' "$s")" -eq 4 ]
  jq -e '[.cells[] | .metrics | .rps > 0 and .throughput_mbps > 0 and .latency_p95_ms > 0
    and .latency_p99_ms >= .latency_p95_ms and .server_time_wait != null and .client_time_wait != null
    and .server_cpu_pct != null and .client_proc_cpu_pct != null] | all' "$s"
  jq -e '[.cells[] | .details.status_codes["2xx/3xx"] > 0 and (.details.errors | has("timeout"))] | all' "$s"
  jq -e '[.cells[] | .verdict.bound != null] | all' "$s"

  local rep="${dir}/Report_02-http-matrix.md"
  # The stand-in is said in the report's first lines.
  head -n 5 "${rep}" | grep -qF '**wrk stood in for oha'
  local section
  for section in "## What the matrix shows" "## Plateau per payload" "### Payload 1k" "### Payload 4k" \
    "## Little's law" "## Charts" "## Verdict per cell" "## Status codes and errors" \
    "## Limits: file descriptors and listen backlog" "## Environment"; do
    grep -qF -- "${section}" "${rep}" || { echo "missing ${section}"; return 1; }
  done
  grep -q '^\*\*1k\*\* plateaus at \*\*c[0-9]*\*\* ([0-9]* RPS' "${rep}"
  grep -q '\*\*4k\*\* plateaus at \*\*c[0-9]*\*\* ([0-9]* RPS' "${rep}"
  grep -qF 'Every cell got its fds.' "${rep}"
  grep -q 'somaxconn` = [0-9]*' "${rep}"
  local ch
  for ch in rps p99; do
    [ -s "${dir}/${ch}.gp" ] && [ -s "${dir}/${ch}.dat" ]
    if command -v gnuplot >/dev/null; then
      [ -s "${dir}/${ch}.svg" ]
      grep -qF "(${ch}.svg)" "${rep}"
    fi
  done
  [ -z "$(procs_matching "$(basename "${dir}")")" ]
}

@test "phase 2 (netns): a cell the fd limit cannot cover is refused, not run; REPEAT shuffles" {
  need_root
  # A hard limit of 100 fds covers c16 (+64 spare) but not c64.
  run bash -c 'ulimit -Sn 100 && ulimit -Hn 100 && exec bash "$@"' _ "${RUNNER}" -l netns -p smoke \
    -s SERVER_PORT=18182 -s PAYLOADS=1k -s CONCURRENCY=16,64 -s REPEAT=2 -s DURATION=1 -s WARMUP=0
  echo "$output" | tail -n 20
  [ "$status" -eq 1 ]
  local dir
  dir=$(results_line "$output")
  grep -q '^1k-c16-r1'$'\tok\t' "${dir}/cells.tsv"
  grep -q '^1k-c16-r2'$'\tok\t' "${dir}/cells.tsv"
  grep -q '^1k-c64-r1'$'\trefused\t.*fd limit: concurrency 64 needs 128 fds (+64 spare) on client, whose hard limit is 100' "${dir}/cells.tsv"
  grep -q '^1k-c64-r2'$'\trefused\t' "${dir}/cells.tsv"
  # Refused means not run: no raw output, no warm-up.
  [ ! -e "${dir}/raw/client/1k-c64-r1.txt" ] && [ ! -e "${dir}/raw/client/1k-c64-r2.txt" ]
  grep -q '^client.1.fd_hard=100$' "${dir}/run.env"

  local s="${dir}/summary.json"
  [ "$(jq -r .status "$s")" = partial ]
  [ "$(jq -r '.cells[] | select(.name == "1k-c64-r1") | .verdict.bound' "$s")" = "not measured" ]
  jq -e '.cells[] | select(.name == "1k-c64-r1") | .metrics.rps == null' "$s"
  jq -e '[.notes[] | select(test("refused before they ran"))] | length == 1' "$s"
  local rep="${dir}/Report_02-http-matrix.md"
  # The backquotes are the report's Markdown; the order is the shuffle's.
  # shellcheck disable=SC2016
  grep -qE 'Refused, not run: `1k-c64-r[12]`, `1k-c64-r[12]`\.' "${rep}"
  grep -qF 'Each cell ran 2 times, all cells in one shuffled order' "${rep}"
}
