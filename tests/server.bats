#!/usr/bin/env bats
# The server under test (SERVER=csb|nginx|cmd|url) on the netns lab, smoke
# profile: nginx end to end in Phase 1 and holding Phase 3's idle
# connections, the reference server run through SERVER_CMD, a server the
# test started itself measured as SERVER=url, and every bad input refused
# with its own message, exit 2 and nothing left running.

load helpers

P1=01-http-baseline/run_http_baseline.sh

setup() {
  common_setup
  unset SERVER SERVER_CMD SERVER_BIN SERVER_PID SERVER_WAIT PAYLOAD_PATHS HEALTH_PATH \
    NGINX_WORKERS NGINX_WORKER_CONNECTIONS NGINX_KEEPALIVE_REQUESTS NGINX_KEEPALIVE_TIMEOUT \
    PAYLOADS THREADS CONNECTIONS WARMUP CONNS SCENARIOS HOLD
  export LAB_KEEP=1
}

teardown() { common_teardown; }

# nothing_left DIR: every server-side process the run started is gone, and
# no process runs from its server-side work directory. A process killed at
# the end of the run may take a moment to leave the process table: each is
# given 3 s, and what is still there is printed.
nothing_left() {
  local dir=$1 pid name work left i
  while read -r pid name; do
    for ((i = 0; i < 30; i++)); do alive "${pid}" || break; sleep 0.1; done
    ! alive "${pid}" || { echo "left running: ${pid} ${name}"; return 1; }
  done < <(sed -n 's/^started\.server=//p' "${dir}/run.env")
  work=$(sed -n 's/^server_workdir=//p' "${dir}/run.env")
  [ -n "${work}" ]
  for ((i = 0; i < 30; i++)); do
    left=$(procs_matching "${work}")
    [ -n "${left}" ] || return 0
    sleep 0.1
  done
  echo "left running from ${work}: ${left}"
  return 1
}

# rps DIR CELL: a cell's requests per second from summary.json.
rps() { jq -r --arg c "$2" '.cells[] | select(.name == $c) | .metrics.rps' "$1/summary.json"; }

need_nginx() {
  command -v nginx >/dev/null 2>&1 || PATH="${PATH}:/usr/sbin" command -v nginx >/dev/null 2>&1 ||
    skip "nginx is not installed (make setup: nginx-light)"
}

@test "server: SERVER_CMD with shell syntax and inconsistent settings exit 2 before anything starts" {
  local cmd
  # shellcheck disable=SC2016 # the shell syntax is the input under test, unexpanded
  for cmd in '{bin} -port {port};rm -rf /tmp/x' 'a $(id) {port}' 'a `id` {port}' 'a {port} >/tmp/x' "a '{port}'"; do
    run env SERVER=cmd SERVER_BIN=bin/csb-server SERVER_CMD="${cmd}" bash "${P1}" -l netns -p smoke
    [ "$status" -eq 2 ] || { echo "${cmd}: $status $output"; return 1; }
    [[ "$output" == *"error: SERVER_CMD="*"is not valid"*"no ; | & \$("* ]] || { echo "$output"; return 1; }
  done
  run env SERVER=cmd bash "${P1}" -l netns -p smoke
  [ "$status" -eq 2 ]
  [[ "$output" == *"SERVER=cmd needs SERVER_CMD"* ]]
  run env SERVER=nginx PAYLOAD_PATHS=1k=/x bash "${P1}" -l netns -p smoke -s SERVER=csb
  [ "$status" -eq 2 ]
  [[ "$output" == *"PAYLOAD_PATHS is set but SERVER=csb"* ]]
  run env SERVER=url SERVER_CPUS=1 bash "${P1}" -l netns -p smoke
  [ "$status" -eq 2 ]
  [[ "$output" == *"SERVER_CPUS is set but SERVER=url"* ]]
  run env SERVER=nginx SERVER_CPUS=one bash "${P1}" -l netns -p smoke
  [ "$status" -eq 2 ]
  [[ "$output" == *"error: SERVER_CPUS=one is not valid"*"a CPU list as taskset -c takes it"* ]]
  run env SERVER=url PAYLOAD_PATHS='1k=/a;b' bash "${P1}" -l netns -p smoke
  [ "$status" -eq 2 ]
  [[ "$output" == *"error: PAYLOAD_PATHS="*"SIZE=PATH pairs"* ]]
  [ -z "$(ls -A "${RESULTS_ROOT}")" ]
}

@test "server: Phase 1 with SERVER=nginx end to end (netns, smoke)" {
  need_root
  need_nginx
  run bash "${P1}" -l netns -p smoke -s SERVER=nginx -s PAYLOADS=1k,100k -s SERVER_CPUS=1
  echo "$output" | tail -n 15
  [ "$status" -eq 0 ]
  local dir
  dir=$(results_line "$output")
  grep -q '^server.kind=nginx$' "${dir}/run.env"
  grep -q '^server.version=nginx version: nginx/' "${dir}/run.env"
  grep -q '^Server: nginx' "${dir}/raw/headers/1k.txt"
  grep -q '^Content-Length: 102400' "${dir}/raw/headers/100k.txt"
  grep -q 'access_log off;' "${dir}/nginx/nginx.conf"
  # Pinned to CPU 1: one worker (auto would count the host's CPUs), taskset.
  grep -q '^worker_processes 1;' "${dir}/nginx/nginx.conf"
  grep -q '^server.cmdline=taskset -c 1 nginx ' "${dir}/run.env"
  grep -q '| server under test | nginx — nginx version: nginx/.* — 1 worker/process(es) — pinned to CPU(s) 1 ' "${dir}/Report_01-http-baseline.md"
  grep -q 'listen 198.18.0.1:8080 ' "${dir}/nginx/nginx.conf"
  [ -f "${dir}/server/nginx-error.log" ]
  [ "$(grep -c $'\tok\t' "${dir}/cells.tsv")" -eq 2 ]
  [ -s "${dir}/monitors/server/pidstat-csb-server.txt" ]
  grep -q '| server under test | nginx' "${dir}/Report_01-http-baseline.md"
  nothing_left "${dir}"
}

@test "server: SERVER=cmd runs the reference server within noise of SERVER=csb" {
  need_root
  run bash "${P1}" -l netns -p smoke -s PAYLOADS=1k -n ref
  [ "$status" -eq 0 ]
  local ref
  ref=$(results_line "$output")
  run bash "${P1}" -l netns -p smoke -s PAYLOADS=1k -n cmd -s SERVER=cmd -s SERVER_BIN=bin/csb-server \
    -s 'SERVER_CMD={bin} -addr {ip} -port {port} -sizes 1k'
  echo "$output" | tail -n 10
  [ "$status" -eq 0 ]
  local dir
  dir=$(results_line "$output")
  grep -q '^server.kind=cmd$' "${dir}/run.env"
  grep -q '^server.cmdline=/.*/bin/csb-server -addr 198.18.0.1 -port 8080 -sizes 1k$' "${dir}/run.env"
  grep -q '"event":"listening"' "${dir}/server/csb-server-1.log"
  nothing_left "${dir}"
  # Two hosts sharing two busy cores: "within noise" is a factor of two.
  local a b
  a=$(rps "${ref}" 1k) b=$(rps "${dir}" 1k)
  echo "rps csb ${a}, cmd ${b}"
  within() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a > 0 && b > a / 2 && b < a * 2) }'; }
  within "${a}" "${b}" && return 0
  # A shared machine can halve one 2 s cell: once more, the best of two each.
  run bash "${P1}" -l netns -p smoke -s PAYLOADS=1k -n ref2
  a=$(printf '%s\n' "${a}" "$(rps "$(results_line "$output")" 1k)" | sort -g | tail -n 1)
  run bash "${P1}" -l netns -p smoke -s PAYLOADS=1k -n cmd2 -s SERVER=cmd -s SERVER_BIN=bin/csb-server \
    -s 'SERVER_CMD={bin} -addr {ip} -port {port} -sizes 1k'
  b=$(printf '%s\n' "${b}" "$(rps "$(results_line "$output")" 1k)" | sort -g | tail -n 1)
  echo "best of two: rps csb ${a}, cmd ${b}"
  within "${a}" "${b}"
}

@test "server: SERVER=url measures a server the test started, and leaves it running" {
  need_root
  bash lab/netns.sh up >/dev/null
  local pid
  # shellcheck disable=SC2016 # $1 and $! expand in the namespace's shell
  pid=$(ip netns exec "${LAB_ID}-srv" bash -c 'setsid "$1" -addr 198.18.0.1 -port 18282 -sizes 1k </dev/null >/dev/null 2>&1 & echo $!' _ "${REPO}/bin/csb-server")
  run bash "${P1}" -l netns -p smoke -s SERVER=url -s SERVER_PORT=18282 -s PAYLOADS=1k
  echo "$output" | tail -n 10
  local alive=0
  kill -0 "${pid}" 2>/dev/null && alive=1
  kill "${pid}"
  [ "$status" -eq 0 ]
  [ "${alive}" = 1 ]
  local dir
  dir=$(results_line "$output")
  grep -q "^server_pids.csb-server=${pid}$" "${dir}/run.env"
  grep -q '^server.managed=0$' "${dir}/run.env"
  grep -q 'not started or stopped by this run' "${dir}/Report_01-http-baseline.md"
}

@test "server: bad servers are refused with exit 2, named, nothing measured or left running" {
  need_root
  local dir
  # A path whose body is not the declared size.
  run bash "${P1}" -l netns -p smoke -s PAYLOADS=1k -n size -s SERVER=cmd -s SERVER_BIN=bin/csb-server \
    -s 'SERVER_CMD={bin} -addr {ip} -port {port} -sizes 1k,4k' -s PAYLOAD_PATHS=1k=/payload/4k
  [ "$status" -eq 2 ]
  [[ "$output" == *"answered GET /payload/4k with a 4096-byte body: expected 1024 bytes (1k)"* ]]
  dir=$(results_line "$output")
  [ "$(wc -l <"${dir}/cells.tsv")" -eq 1 ] # the header only: nothing measured
  nothing_left "${dir}"
  rm -rf "${RESULTS_ROOT:?}"/*

  # A server that does not bind within the bound: named, with its log.
  run bash "${P1}" -l netns -p smoke -n nobind -s SERVER=cmd -s SERVER_WAIT=2 -s 'SERVER_CMD=sh -c exec_sleep_30'
  [ "$status" -eq 2 ]
  [[ "$output" == *"exited before it listened on 198.18.0.1:8080; its log (server/csb-server-1.log): "*"exec_sleep_30"* ]]
  dir=$(results_line "$output")
  nothing_left "${dir}"
  rm -rf "${RESULTS_ROOT:?}"/*
  run bash "${P1}" -l netns -p smoke -n slow -s SERVER=cmd -s SERVER_WAIT=2 -s 'SERVER_CMD=sleep 30'
  [ "$status" -eq 2 ]
  [[ "$output" == *"did not listen on 198.18.0.1:8080 within SERVER_WAIT=2 s; stopped it"* ]]
  dir=$(results_line "$output")
  nothing_left "${dir}"
  rm -rf "${RESULTS_ROOT:?}"/*

  # No {port} while SERVER_PORT is not the command's own port.
  run bash "${P1}" -l netns -p smoke -n noport -s SERVER=cmd -s SERVER_BIN=bin/csb-server -s SERVER_WAIT=3 \
    -s SERVER_PORT=18383 -s 'SERVER_CMD={bin} -addr {ip} -sizes 1k'
  [ "$status" -eq 2 ]
  [[ "$output" == *"it listens on 198.18.0.1:8080 instead (SERVER_CMD has no {port}"* ]]
  dir=$(results_line "$output")
  nothing_left "${dir}"
  rm -rf "${RESULTS_ROOT:?}"/*

  # SERVER=url with nothing listening.
  run bash "${P1}" -l netns -p smoke -n url -s SERVER=url -s SERVER_PORT=18484
  [ "$status" -eq 2 ]
  [[ "$output" == *"SERVER=url: nothing listens on 198.18.0.1:18484 on the server host"* ]]
}

@test "server: Phase 3 idle with nginx holding 2000 connections (netns, smoke)" {
  need_root
  need_nginx
  run bash 03-c10k/run_c10k.sh -l netns -p smoke -s SERVER=nginx -s CONNS=2000 -s SCENARIOS=idle
  echo "$output" | tail -n 10
  [ "$status" -eq 0 ]
  local dir
  dir=$(results_line "$output")
  # Idle connections outlast the ramp's bound and the hold (3 s): nginx
  # must not close them before.
  local ka bound
  ka=$(sed -n 's/^ *keepalive_timeout \([0-9]*\)s;$/\1/p' "${dir}/nginx/nginx.conf")
  bound=$(grep -o -- '-ramp-max [0-9]*s' "${dir}/logs/console.log" | head -n 1 | tr -dc '0-9')
  echo "keepalive_timeout ${ka} s, ramp bound ${bound} s"
  [ -n "${ka}" ] && [ -n "${bound}" ] && [ "${ka}" -ge $((bound + 3 + 60)) ]
  [ "$(jq -r '.cells[0].status' "${dir}/summary.json")" = ok ]
  grep -q '2000 of 2000 connections held' "${dir}/Report_03-c10k.md"
  nothing_left "${dir}"
}

@test "server: Phase 3 names a server that closes idle connections before the hold ends; HEALTH_PATH" {
  need_root
  need_nginx
  run bash 03-c10k/run_c10k.sh -l netns -p smoke -s SERVER=nginx -s CONNS=200 -s SCENARIOS=idle \
    -s NGINX_KEEPALIVE_TIMEOUT=1 -s HEALTH_PATH=/ping
  [ "$status" -eq 0 ]
  local dir
  dir=$(results_line "$output")
  # HEALTH_PATH: nginx serves it, the idle clients ask for it.
  [ "$(jq -r '.status_codes["200"]' "${dir}/raw/idle-200.client-1.json")" = 200 ]
  jq -e '.argv | index("/ping")' "${dir}/raw/idle-200.client-1.json" >/dev/null
  jq -c ".cells[0].verdict, .cells[0].metrics" "${dir}/summary.json"
  [ "$(jq -r '.cells[0].verdict.bound' "${dir}/summary.json")" = "the server under test closes idle connections" ]
  grep -q 'closed by the server under test before the 3 s hold ended' "${dir}/Report_03-c10k.md"
  nothing_left "${dir}"
}
