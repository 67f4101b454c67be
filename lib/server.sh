# shellcheck shell=bash
# lib/server.sh: the fixed-payload HTTP server's life on the server host.
#
# Built here with CGO_ENABLED=0 (a static binary: the server host needs no
# Go), copied into the run's server-side work directory, started detached and
# bound to SERVER_IP only, waited for through the benchmark address with a
# bound, stopped by PID, its log fetched with the rest of the run.

declare -ga CSB_HTTP_PIDS=()

# csb_build OUT PKG: build one Go command into bin/OUT.
csb_build() {
  local out=$1 pkg=$2
  need_tool go golang-go
  mkdir -p "${CSB_ROOT}/bin"
  (cd "${CSB_ROOT}" && CGO_ENABLED=0 go build -trimpath -o "bin/${out}" "./${pkg}") ||
    die "go build ./${pkg} failed; is Go >= 1.22 installed? (make setup)" 1
}

# csb_build_all: the commands every runner needs on this host.
csb_build_all() {
  csb_build csb cmd/csb
  csb_build csb-server server
}

# csb_server_deploy: copy the server binary to the server host.
csb_server_deploy() {
  csb_server_put "${CSB_ROOT}/bin/csb-server" "${CSB_REMOTE_RUN}/bin/csb-server" 0755 ||
    die "could not copy the server binary to ${CSB_REMOTE_RUN}/bin on the server host" 1
}

# csb_http_start NAME SIZES [PROCS] [EXTRA FLAGS...]: start PROCS server
# processes (SO_REUSEPORT when more than one), logs in server/NAME-N.log,
# pidstat on all of them in monitors/server/pidstat-NAME.txt, their limits
# in monitors/server/limits-NAME.txt. Returns once every process listens
# (with SO_REUSEPORT a late one would get none of the early connections)
# and /healthz answers through SERVER_IP. Sets CSB_HTTP_PIDS.
csb_http_start() {
  local name=$1 sizes=$2 procs=${3:-1}
  shift 3 || shift $#
  local -a cmd=("${CSB_REMOTE_RUN}/bin/csb-server" -addr "${SERVER_IP}" -port "${SERVER_PORT}" -sizes "${sizes}")
  ((procs > 1)) && cmd+=(-reuseport)
  cmd+=("$@")
  local i pid logs=()
  CSB_HTTP_PIDS=()
  for ((i = 1; i <= procs; i++)); do
    log_cmd "${cmd[@]}"
    logs+=("${CSB_REMOTE_RUN}/server/${name}-${i}.log")
    pid=$(on_server_bg "${logs[-1]}" "${cmd[@]}") ||
      die "could not start the server on the server host" 1
    csb_track_server "${pid}" csb-server
    CSB_HTTP_PIDS+=("${pid}")
  done
  # Each process prints one "listening" JSON line once bound; one that
  # exits (the port is taken) ends the wait at once.
  local script
  script="for i in \$(seq 75); do ok=1; for f in $(csb_quote "${logs[@]}"); do grep -q '\"event\":\"listening\"' \"\$f\" 2>/dev/null || ok=0; done; [ \$ok = 1 ] && exit 0; for p in $(csb_quote "${CSB_HTTP_PIDS[@]}"); do kill -0 \"\$p\" 2>/dev/null || exit 2; done; sleep 0.2; done; exit 1"
  if ! on_server_sh "${script}"; then
    for pid in "${CSB_HTTP_PIDS[@]}"; do
      csb_server_alive "${pid}" csb-server ||
        die "the server process ${pid} exited before it listened (is ${SERVER_IP}:${SERVER_PORT} taken by another process? see server/${name}-*.log in the run directory); set SERVER_PORT to a free port" 1
    done
    die "the server processes did not all listen within 15 s; see server/${name}-*.log in the run directory" 1
  fi
  csb_wait_http "http://$(csb_url_host "${SERVER_IP}"):${SERVER_PORT}/healthz" 15 ||
    die "the server did not answer /healthz on ${SERVER_IP}:${SERVER_PORT} within 15 s; see server/${name}-1.log in the run directory" 1
  local pids
  pids=$(IFS=,; echo "${CSB_HTTP_PIDS[*]}")
  csb_monitor_pids "${name}" "${pids}"
  on_server_sh "for p in $(csb_quote "${CSB_HTTP_PIDS[@]}"); do echo \"== \$p\"; cat /proc/\$p/limits; done >$(csb_quote "${CSB_REMOTE_RUN}/monitors/server/limits-${name}.txt")" ||
    log_warn "could not record the server processes' limits"
  csb_run_set "server_pids.${name}" "${pids}"
  log_info "server up (${name}): ${procs} process(es), PID ${pids}, on ${SERVER_IP}:${SERVER_PORT}"
}

# csb_http_stop: SIGTERM (graceful shutdown) each server process by PID.
csb_http_stop() {
  local pid
  for pid in "${CSB_HTTP_PIDS[@]}"; do
    csb_stop_server_pid "${pid}" csb-server 10 || true
    csb_untrack_server "${pid}"
  done
  CSB_HTTP_PIDS=()
}

csb_url_host() {
  if [[ "$1" == *:* ]]; then printf '[%s]' "$1"; else printf '%s' "$1"; fi
}

# csb_wait_http URL SECONDS: poll URL from the client until it answers 200,
# at most SECONDS; fail early when a tracked server process has died.
csb_wait_http() {
  local url=$1 limit=$2 deadline
  deadline=$((SECONDS + limit))
  while ((SECONDS < deadline)); do
    if curl -fsS --noproxy '*' --max-time 1 -o /dev/null "${url}" 2>/dev/null; then
      return 0
    fi
    sleep 0.2
  done
  return 1
}

# csb_http_dead: the PIDs of CSB_HTTP_PIDS that are no longer running (one
# round trip for all of them).
csb_http_dead() {
  on_server_sh "for p in $(csb_quote "${CSB_HTTP_PIDS[@]}"); do { tr '\\0' ' ' </proc/\$p/cmdline; } 2>/dev/null | grep -qF csb-server || printf '%s ' \"\$p\"; done" |
    sed 's/ $//'
}

# csb_server_alive PID NAME: is the process still there on the server?
csb_server_alive() {
  on_server_sh "{ tr '\\0' ' ' </proc/$(csb_quote "$1")/cmdline; } 2>/dev/null | grep -qF -- $(csb_quote "$2")"
}

# csb_wait_listen PORT SECONDS: wait on the server host until something
# listens on SERVER_IP:PORT (checked with ss, so no test connection is made).
csb_wait_listen() {
  local port=$1 limit=$2
  on_server_sh "for i in \$(seq $((limit * 5))); do ss -Hltn 'sport = :$((port))' | grep -qF $(csb_quote "${SERVER_IP}:${port}") && exit 0; sleep 0.2; done; exit 1"
}
