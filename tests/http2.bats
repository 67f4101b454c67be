#!/usr/bin/env bats
# HTTP/2 (HTTP=2, HTTP=1.1,2) in Phases 1, 2 and 3 on a netns lab with two
# client hosts: h2load against the reference server and nginx, over TLS
# (ALPN h2) and in cleartext (h2c, prior knowledge), Phase 2 with STREAMS;
# Phase 3's idle connections held over HTTP/2 (connclient idle -http 2)
# and its active scenario as streams over few connections; the merged p99
# recomputed from both hosts' h2load logs; a server that offers only
# HTTP/1.1, bad HTTP or STREAMS values, and HTTP=2 where a scenario or
# phase does not speak it refused with exit 2 before any cell.
# One lab serves every test (brought up once, taken down at the end when
# this file brought it up).

load helpers

P1=01-http-baseline/run_http_baseline.sh
P2=02-http-matrix/run_http_matrix.sh

setup_file() {
  [[ ${EUID} -eq 0 ]] || return 0
  export CSB_H2_WAS_UP=0
  if CLIENTS=2 "${BATS_TEST_DIRNAME}/../lab/netns.sh" status >/dev/null 2>&1; then CSB_H2_WAS_UP=1; fi
  CLIENTS=2 "${BATS_TEST_DIRNAME}/../lab/netns.sh" up >/dev/null
}

teardown_file() {
  [[ ${EUID} -eq 0 ]] || return 0
  ((CSB_H2_WAS_UP)) || CLIENTS=2 "${BATS_TEST_DIRNAME}/../lab/netns.sh" down >/dev/null 2>&1 || true
}

setup() {
  common_setup
  unset PAYLOADS THREADS CONNECTIONS WARMUP LOADGEN REPEAT SERVER SCHEME HTTP STREAMS CONCURRENCY CPU_PIN
  export CLIENTS=2 LAB_KEEP=1 DURATION=1 WARMUP=0 PAYLOADS=1k
}

teardown() { common_teardown; }

# p99_of_logs LOG...: the p99 (us) of the requests of h2load logs that
# completed (status not -1), at wrk's rank round(0.99 n + 0.5) as
# internal/dist computes it: floor(99 n / 100) + 1 in integers.
p99_of_logs() {
  awk -F '\t' '$2 != -1 { print $3 }' "$@" | sort -n |
    awk '{ v[NR] = $1 } END { r = int(99 * NR / 100) + 1; if (r > NR) r = NR; print v[r] }'
}

# check_h2_run DIR PROTO CELL...: the run is ok; each HTTP/2 CELL was
# h2load on both clients with its text and log, speaking PROTO, ok; the
# merged p99 is the p99 of both logs' requests.
check_h2_run() {
  local dir=$1 proto=$2 cell k s
  shift 2
  s="${dir}/summary.json"
  jq -e '.status == "ok"' "${s}"
  jq -e --arg p "${proto}" '.http.http2 == $p' "${s}"
  for cell in "$@"; do
    for k in 1 2; do
      grep -q "^Application protocol: ${proto}$" "${dir}/raw/client${k}/${cell}.h2load.txt"
      [ -s "${dir}/raw/client${k}/${cell}.h2load.log" ]
    done
    jq -e --arg c "${cell}" --arg p "${proto}" '.cells[] | select(.name == $c) | .status == "ok"
      and .details.loadgen == "h2load" and .details.protocol == $p and .latency_merge == "exact"
      and .metrics.rps > 0 and .metrics.errors_total == 0' "${s}"
    local want got
    want=$(p99_of_logs "${dir}/raw/client1/${cell}.h2load.log" "${dir}/raw/client2/${cell}.h2load.log")
    got=$(jq -r --arg c "${cell}" '.cells[] | select(.name == $c) | .metrics.latency_p99_ms * 1000 | round' "${s}")
    echo "${cell}: merged p99 ${got} us, from both logs ${want} us"
    [ "${got}" = "${want}" ]
  done
  grep -q "| HTTP | " "${dir}"/Report_0*.md
}

@test "http2: bad HTTP values exit 2 naming the key, before any traffic" {
  local v
  for v in 3 h2 2,1.1 "1.1,2,2"; do
    run bash "${P1}" -l netns -p smoke -s "HTTP=${v}"
    [ "$status" -eq 2 ] || { echo "HTTP=${v}: status $status: $output"; return 1; }
    [[ "$output" == *"error: HTTP="*"expected one of: 1.1 2 1.1,2"* ]] || { echo "HTTP=${v}: $output"; return 1; }
  done
  [ -z "$(ls -A "${RESULTS_ROOT}")" ]
}

@test "http2: the reference server over TLS, HTTP/1.1 and HTTP/2 side by side (ALPN h2), two clients" {
  need_root
  run bash "${P1}" -l netns -p smoke -s SCHEME=https -s HTTP=1.1,2
  echo "$output" | tail -n 15
  [ "$status" -eq 0 ]
  local dir
  dir=$(results_line "$output")
  check_h2_run "${dir}" h2 1k-h2
  jq -e '.cells[] | select(.name == "1k") | .status == "ok" and .details.loadgen == "wrk"' "${dir}/summary.json"
  grep -qF -- '-http 1.1\,2' "${dir}/run.env"
  grep -qE 'h2load -t [0-9]+ -c 8 -m 1 -D 1 --log-file=raw/client1/1k-h2.h2load.log --npn-list=h2 https://198.18.0.1:8080/payload/1k$' "${dir}/logs/console.log"
  grep -q '^## HTTP/1.1 → HTTP/2$' "${dir}/Report_01-http-baseline.md"
  [ -s "${dir}/raw/verify/1k-h2-1.headers" ]
}

@test "http2: nginx in cleartext (h2c, prior knowledge), two clients, merged exactly" {
  need_root
  run bash "${P1}" -l netns -p smoke -s SERVER=nginx -s HTTP=2 -s H2_MAX_STREAMS=64
  echo "$output" | tail -n 15
  [ "$status" -eq 0 ]
  local dir
  dir=$(results_line "$output")
  check_h2_run "${dir}" h2c 1k-h2
  grep -q 'listen 198.18.0.1:8080 http2 ' "${dir}/nginx/nginx.conf"
  grep -q '^  http2_max_concurrent_streams 64;$' "${dir}/nginx/nginx.conf"
  # nginx 1.22 stalls each h2c response ~40 ms with sendfile on.
  grep -q '^  sendfile off;$' "${dir}/nginx/nginx.conf"
  grep -q '^HTTP/2 200' "${dir}/raw/headers/1k.txt"
}

@test "http2: nginx over TLS (ALPN h2) and the reference server in cleartext (h2c)" {
  need_root
  run bash "${P1}" -l netns -p smoke -s SERVER=nginx -s SCHEME=https -s HTTP=2 -n nginx-h2
  echo "$output" | tail -n 15
  [ "$status" -eq 0 ]
  check_h2_run "$(results_line "$output")" h2 1k-h2
  run bash "${P1}" -l netns -p smoke -s HTTP=2 -s H2_MAX_STREAMS=32 -n csb-h2c
  echo "$output" | tail -n 15
  [ "$status" -eq 0 ]
  check_h2_run "$(results_line "$output")" h2c 1k-h2
  grep -q -- '-max-concurrent-streams 32' "$(results_line "$output")/run.env"
}

@test "http2: HTTP=2 from a server that offers only HTTP/1.1 exits 2 naming what it offered, before any cell" {
  need_root
  run bash "${P1}" -l netns -p smoke -s HTTP=2 -s SERVER=cmd -s SERVER_BIN=bin/csb-server \
    -s 'SERVER_CMD={bin} -addr {ip} -port {port} -sizes 1k'
  echo "$output" | tail -n 5
  [ "$status" -eq 2 ]
  [[ "$output" == *'error: HTTP=2 asked, but the server under test offers HTTP/1.1 only: it answered the HTTP/2 preface with "HTTP/1.1 '* ]]
  local dir
  dir=$(find "${RESULTS_ROOT}" -name run.env -printf '%h\n' | head -n 1)
  [ -n "${dir}" ]
  # No cell ran, and every process the run started is gone (stopping
  # them may take a moment after the runner's exit).
  run grep -q $'\tok\t' "${dir}/cells.tsv"
  [ "$status" -ne 0 ]
  local pid i
  grep -q '^started\.server=[0-9]* .*csb-server$' "${dir}/run.env"
  while read -r pid; do
    for ((i = 0; i < 50; i++)); do kill -0 "${pid}" 2>/dev/null || break; sleep 0.1; done
    ! kill -0 "${pid}" 2>/dev/null || { echo "left running: $(ps -o args= -p "${pid}")"; return 1; }
  done < <(sed -n 's/^started\.[a-z0-9]*=\([0-9]*\) .*/\1/p' "${dir}/run.env")
}

@test "http2: HTTP=2 where a scenario or phase does not speak it exits 2 in one line, before anything starts" {
  local args expect
  while IFS='|' read -r args expect; do
    # shellcheck disable=SC2086 # the case's runner and -s flags, one word each
    run bash ${args} -l netns -p smoke
    [ "$status" -eq 2 ] || { echo "${args}: status $status: $output"; return 1; }
    [[ "${lines[0]}" == "${expect}" ]] || { echo "${args}: ${lines[0]}"; return 1; }
  done <<'CASES'
03-c10k/run_c10k.sh -s HTTP=2|error: HTTP=2: the lowrate scenario is HTTP/1.1 only for now (its open-model client speaks HTTP/1.1); set SCENARIOS without it
03-c10k/run_c10k_beyond.sh -s HTTP=2|error: HTTP=2: the lowrate scenario is HTTP/1.1 only for now (its open-model client speaks HTTP/1.1); set SCENARIOS without it
03-c10k/run_c10k.sh -s HTTP=2 -s SCENARIOS=active -s STREAMS=3|error: STREAMS=3: 3 streams per connection do not divide CONNS 10000: the active scenario keeps CONNS requests in flight as CONNS / STREAMS connections
03-c10k/run_c10k.sh -s STREAMS=10|error: STREAMS=10: streams per connection are HTTP/2's; set HTTP=2
03-c10k/run_c10k_beyond.sh -s HTTP=3|error: HTTP=3 is not valid (from flag): expected one of: 1.1 2
03-c10k/run_c10k_beyond_lowrate_retry.sh -s HTTP=2|error: HTTP is a setting of other runners, not of this one (its settings are listed below)
05-capacity/run_capacity.sh -s HTTP=2|error: HTTP=2: capacity is HTTP/1.1 only for now (its open-model client, connclient lowrate, speaks HTTP/1.1); run it with HTTP=1.1, or Phase 1 or 2 for HTTP/2
CASES
  [ -z "$(ls -A "${RESULTS_ROOT}")" ]
}

@test "http2: Phase 2 with bad STREAMS, STREAMS without HTTP=2 or wrk for HTTP/2 exits 2, before any traffic" {
  local args expect
  while IFS='|' read -r args expect; do
    # shellcheck disable=SC2086 # the case's -s flags, one word each
    run bash "${P2}" -l netns -p smoke ${args}
    [ "$status" -eq 2 ] || { echo "${args}: status $status: $output"; return 1; }
    [[ "${lines[0]}" == *"${expect}"* ]] || { echo "${args}: ${lines[0]}"; return 1; }
  done <<'CASES'
-s HTTP=2 -s STREAMS=0|error: STREAMS=0 is not valid
-s HTTP=2 -s STREAMS=1,x|is not valid (from flag): expected a comma-separated list of positive integers
-s HTTP=2 -s STREAMS=10,1,10|error: STREAMS=10,1,10: 10 is listed twice
-s STREAMS=10|error: STREAMS=10: streams per connection are HTTP/2's; set HTTP=2
-s HTTP=2 -s LOADGEN=wrk|error: LOADGEN=wrk speaks HTTP/1.1 only: HTTP=2 loads with h2load
-s HTTP=2 -s SERVER=nginx -s STREAMS=1,200|error: STREAMS=1,200: 200 streams per connection is above the server's SETTINGS_MAX_CONCURRENT_STREAMS, 128 (SERVER=nginx's default)
-s HTTP=2 -s H2_MAX_STREAMS=4 -s STREAMS=1,10|error: STREAMS=1,10: 10 streams per connection is above the server's SETTINGS_MAX_CONCURRENT_STREAMS, 4 (H2_MAX_STREAMS)
-s H2_MAX_STREAMS=10|error: H2_MAX_STREAMS=10 is HTTP/2's: set HTTP=2, or unset H2_MAX_STREAMS
-s HTTP=2 -s SERVER=url -s H2_MAX_STREAMS=10|error: H2_MAX_STREAMS is given to SERVER=csb or SERVER=nginx; SERVER=url sets its own
-s HTTP=3|error: HTTP=3 is not valid
CASES
  [ -z "$(ls -A "${RESULTS_ROOT}")" ]
}

@test "http2: Phase 2 over h2c with STREAMS=1,10, two clients: a series per streams value, merged exactly" {
  need_root
  run bash "${P2}" -l netns -p smoke -s HTTP=2 -s STREAMS=1,10 -s CONCURRENCY=4,8
  echo "$output" | tail -n 15
  [ "$status" -eq 0 ]
  local dir
  dir=$(results_line "$output")
  check_h2_run "${dir}" h2c 1k-c4-m1 1k-c8-m1 1k-c4-m10 1k-c8-m10
  jq -e '[.cells[].name] | sort == ["1k-c4-m1","1k-c4-m10","1k-c8-m1","1k-c8-m10"]' "${dir}/summary.json"
  jq -e '.cells[] | select(.name == "1k-c8-m10") | .params.streams == "10" and .params["client1.connections"] == "4"' "${dir}/summary.json"
  grep -qE 'h2load -t [0-9]+ -c 4 -m 10 -D 1 --log-file=raw/client1/1k-c8-m10.h2load.log http://198.18.0.1:8080/payload/1k$' "${dir}/logs/console.log"
  local r="${dir}/Report_02-http-matrix.md"
  grep -q '^### Payload 1k -m 10$' "${r}"
  grep -q '^### Payload 1k -m 1$' "${r}"
  # shellcheck disable=SC2016 # backquotes of the markdown, not a command
  grep -q '^| `1k -m 10` | \*\*c[48]\*\* |' "${r}"
  grep -q 'c in these formulas is c × m' "${r}"
}

# check_h2_idle DIR CELL CONNS: an idle cell over HTTP/2 held every
# connection, every connclient result says http 2, and memory per
# connection is there three ways.
check_h2_idle() {
  local dir=$1 cell=$2 conns=$3 s="$1/summary.json" f
  jq -c --arg c "${cell}" '.cells[] | select(.name == $c) | [.status, .params.http, .metrics.connections_established,
    .metrics.connections_alive_end, .metrics.server_rss_per_conn_kb, .metrics.client_rss_per_conn_kb,
    .metrics.kernel_tcp_slab_kb_per_conn]' "${s}"
  # The kernel's slab is machine-wide: beside the other lanes' runs its
  # change is not this cell's alone, so it is only asked to be measured.
  jq -e --arg c "${cell}" --argjson n "${conns}" '.cells[] | select(.name == $c) | .status == "ok"
    and .params.http == "2" and .metrics.connections_established == $n and .metrics.connections_alive_end == $n
    and .metrics.server_rss_per_conn_kb > 0 and .metrics.client_rss_per_conn_kb > 0
    and .metrics.kernel_tcp_slab_kb_per_conn != null' "${s}"
  for f in "${dir}/raw/${cell}".client-*.json; do
    jq -e '.http == "2" and .connections_failed == 0' "${f}" >/dev/null || { echo "${f}: $(jq -c '{http, connections_failed, errors}' "${f}")"; return 1; }
  done
}

@test "http2: Phase 3 over h2c on two clients: 10k idle held, 10k streams over 100 connections merged exactly" {
  need_root
  run bash 03-c10k/run_c10k.sh -l netns -p quick -s SCENARIOS=active,idle -s HTTP=2 -s CONNS=10000 -s STREAMS=100
  echo "$output" | tail -n 15
  [ "$status" -eq 0 ]
  local dir cell=active-10k-1k-h2-m100 want got
  dir=$(results_line "$output")
  check_h2_idle "${dir}" idle-10k-h2 10000
  grep -qE 'connclient idle .* -http 2( |$)' "${dir}/logs/console.log"
  # 10k streams in flight: 50 connections of 100 streams on each client.
  jq -e --arg c "${cell}" '.cells[] | select(.name == $c) | .status == "ok" and .params.connections == "100"
    and .params.streams == "100" and .metrics.connections_established == 100 and .metrics.errors_total == 0
    and .metrics.server_rss_per_stream_kb > 0 and .details.latency_merge == "exact"' "${dir}/summary.json"
  grep -qE 'h2load -t [0-9]+ -c 50 -m 100 -D [0-9]+ --log-file=raw/client1/active-10k-1k-h2-m100.h2load.log http://' "${dir}/logs/console.log"
  want=$(p99_of_logs "${dir}/raw/client1/${cell}.h2load.log" "${dir}/raw/client2/${cell}.h2load.log")
  got=$(jq -r --arg c "${cell}" '.cells[] | select(.name == $c) | .metrics.latency_p99_ms * 1000 | round' "${dir}/summary.json")
  echo "${cell}: merged p99 ${got} us, from both logs ${want} us"
  [ "${got}" = "${want}" ]
  grep -q 'HTTP/2 connections × 100 streams' "${dir}/Report_03-c10k.md"
}

@test "http2: Phase 3 idle with nginx over TLS (ALPN h2), 2k connections" {
  need_root
  run bash 03-c10k/run_c10k_beyond.sh -l netns -p smoke -s SCENARIOS=idle -s HTTP=2 -s CONNS=2000 -s SERVER=nginx -s SCHEME=https
  echo "$output" | tail -n 15
  [ "$status" -eq 0 ]
  local dir
  dir=$(results_line "$output")
  check_h2_idle "${dir}" idle-2k-h2 2000
  jq -e '.tls.first.alpn == "h2"' "${dir}"/raw/idle-2k-h2.client-1.json
}
