# shellcheck shell=bash
# lib/server.sh: the server under test's life on the server host.
#
# SERVER says what answers on SERVER_IP:SERVER_PORT in every HTTP phase:
#   csb    the reference server (bin/csb-server), built here with
#          CGO_ENABLED=0 (static: the server host needs no Go), copied into the
#          run's server-side work directory, started, stopped by PID.
#   nginx  the distribution's nginx on the server host (lib/nginx.sh).
#   cmd    SERVER_CMD with {ip}, {port} (and {bin}: SERVER_BIN copied first),
#          started, tracked, monitored and stopped like the reference server.
#   url    a server already running there: never started or stopped here;
#          SERVER_PID, else the owner of the listening socket (ss), is what
#          pidstat watches.
# Every kind is waited for with a bound (SERVER_WAIT) and then checked
# (csb_payloads_verify): each path of the run answers 200 with the declared
# body size, not chunked, the same twice; else the run is refused (exit 2).

csb_config_declare SERVER csb "enum:csb|nginx|cmd|url" \
  "the server under test: csb (the reference server), nginx, cmd (SERVER_CMD) or url (already running)"
csb_config_declare SERVER_CMD "" cmdline_or_empty \
  "SERVER=cmd: the command line on the server host, with {ip} and {port} (and {bin} for SERVER_BIN); plain words, no shell syntax"
csb_config_declare SERVER_BIN "" path_or_empty \
  "SERVER=cmd: a local file copied to the server host first ({bin} in SERVER_CMD)"
csb_config_declare SERVER_PID "" posint_or_empty \
  "SERVER=url: the PID pidstat watches (empty: the owner of the listening socket, found with ss)"
csb_config_declare SERVER_WAIT 15 posint \
  "seconds a started server (nginx, cmd) has to listen on SERVER_IP:SERVER_PORT"
csb_config_declare SERVER_CPUS "" cpulist_or_empty \
  "CPUs the server under test (nginx, cmd, csb) runs on, a taskset list such as 1 or 0-1 (empty: all); nginx's default workers: one per CPU listed"
csb_config_declare PAYLOAD_PATHS "" payload_paths_or_empty \
  "the path of each size on the server under test, SIZE=PATH,... (empty, or a size not listed: /payload/<size>)"
csb_config_declare HEALTH_PATH /healthz url_path \
  "the path of Phase 3's idle and low-rate requests (and the reference server's readiness check)"

# csb_truth_declare: SERVICE_TIME and SLOTS, for the runners that can run
# the reference server as a server of known capacity: every request holds
# one of SLOTS slots for SERVICE_TIME, SLOTS / SERVICE_TIME req/s at most.
csb_truth_declare() {
  csb_config_declare SERVICE_TIME "" duration_or_empty "SERVER=csb: each request holds a slot this long (with SLOTS: a server of known capacity)"
  csb_config_declare SLOTS "" posint_or_empty "SERVER=csb: requests served at once (with SERVICE_TIME)"
}

# csb_truth_check: the two go together, and with SERVER=csb only. Exits 2.
csb_truth_check() {
  [[ -n "${SERVICE_TIME}${SLOTS}" ]] || return 0
  [[ -n "${SERVICE_TIME}" && -n "${SLOTS}" ]] || die "SERVICE_TIME and SLOTS go together: set both (a server of SLOTS / SERVICE_TIME req/s), or neither" 2
  [[ "${SERVER}" == csb ]] || die "SERVICE_TIME and SLOTS are the reference server's (SERVER=csb), not SERVER=${SERVER}'s" 2
}

# csb_truth_args ARRAY: csb-server's flags for them into ARRAY (none unset).
csb_truth_args() {
  local -n _t=$1
  _t=()
  [[ -z "${SLOTS}" ]] || _t=(-service-time "${SERVICE_TIME}" -slots "${SLOTS}")
}

# csb_h2_declare: H2_MAX_STREAMS, for the runners that load over HTTP/2
# (declared after their HTTP; the rules across settings check it against
# HTTP, SERVER and STREAMS: internal/settings).
csb_h2_declare() {
  csb_config_declare H2_MAX_STREAMS "" posint_or_empty \
    "HTTP=2: the server's SETTINGS_MAX_CONCURRENT_STREAMS, SERVER=csb (-max-concurrent-streams) or nginx (http2_max_concurrent_streams) (empty: their own, 250 and 128); STREAMS above it is refused"
}

declare -ga CSB_HTTP_PIDS=() CSB_HTTP_STOP=()
declare -gA CSB_HTTP_NAME=()
# Facts about the server under test, recorded in run.env (server.*) by
# csb_server_deploy and csb_http_start.
CSB_SERVER_VERSION=""
CSB_SERVER_REMOTE_BIN=""

# csb_server_deploy: what the server under test needs on the server host
# before it starts: the reference server's binary (csb), SERVER_BIN (cmd),
# nginx present (named by package when missing). Records server.kind,
# server.version and server.managed in run.env.
csb_server_deploy() {
  csb_run_set server.kind "${SERVER}"
  csb_run_set server.cpus "${SERVER_CPUS:-${CSB_CPUS_SERVER}}"
  case "${SERVER}" in
    csb)
      csb_host_put 0 "${CSB_ROOT}/bin/csb-server" "${CSB_H_WORK[0]}/bin/csb-server" 0755 ||
        die "could not copy the server binary to ${CSB_H_WORK[0]}/bin on the server host" 1
      CSB_SERVER_VERSION="csb-server $(git -C "${CSB_ROOT}" rev-parse --short HEAD 2>/dev/null || echo unknown)"
      ;;
    nginx)
      local v
      # shellcheck disable=SC2016 # expanded by the server's shell
      v=$(on_server_sh 'command -v nginx >/dev/null 2>&1 || exit 3; nginx -v 2>&1 | head -n 1; dpkg-query -W -f="\${Package} \${Version}\n" nginx-light nginx-core nginx 2>/dev/null | grep -v " $" | head -n 1') ||
        die "SERVER=nginx but nginx is not installed on the server host: install the package nginx-light (or nginx): sudo apt-get install nginx-light, or make setup there" 3
      CSB_SERVER_VERSION=$(tr '\n' ';' <<<"${v}" | sed 's/;$//; s/;/; package /')
      ;;
    cmd)
      if [[ -n "${SERVER_BIN}" ]]; then
        CSB_SERVER_REMOTE_BIN="${CSB_H_WORK[0]}/bin/$(basename "${SERVER_BIN}")"
        csb_host_put 0 "${SERVER_BIN}" "${CSB_SERVER_REMOTE_BIN}" 0755 ||
          die "could not copy SERVER_BIN=${SERVER_BIN} to ${CSB_H_WORK[0]}/bin on the server host" 1
      fi
      local -a words
      csb_server_cmd_words words
      CSB_SERVER_VERSION=$(on_server_sh "$(csb_quote "${words[0]}") --version 2>/dev/null </dev/null | head -n 1" 2>/dev/null) || CSB_SERVER_VERSION=""
      ;;
    url) CSB_SERVER_VERSION="" ;;
  esac
  csb_run_set server.version "${CSB_SERVER_VERSION}"
  csb_run_set server.managed "$([[ "${SERVER}" == url ]] && echo 0 || echo 1)"
  csb_tls_deploy
}

# csb_server_cmd_words ARRAY: SERVER_CMD split into words, placeholders
# replaced ({ip}, {port}, {bin}). The words were checked at load time.
csb_server_cmd_words() {
  local -n _w=$1
  local i
  read -r -a _w <<<"${SERVER_CMD}"
  for i in "${!_w[@]}"; do
    _w[i]=${_w[i]//\{ip\}/${SERVER_IP}}
    _w[i]=${_w[i]//\{port\}/${SERVER_PORT}}
    _w[i]=${_w[i]//\{bin\}/${CSB_SERVER_REMOTE_BIN}}
  done
}

# csb_server_pin ARRAY: prefix a server command with taskset when
# SERVER_CPUS is set (taskset execs it: the PID and command line are the
# server's own).
csb_server_pin() {
  local -n _c=$1
  [[ -z "${SERVER_CPUS}" ]] || _c=(taskset -c "${SERVER_CPUS}" "${_c[@]}")
}

# csb_http_start NAME SIZES [PROCS] [EXTRA FLAGS...]: start the server under
# test (PROCS and EXTRA FLAGS are the reference server's), log in
# server/NAME-N.log, pidstat on its processes in
# monitors/server/pidstat-NAME.txt, their limits in
# monitors/server/limits-NAME.txt; returns once it listens and every path of
# SIZES answers as it must (csb_payloads_verify). Sets CSB_HTTP_PIDS (the
# processes watched) and CSB_HTTP_STOP (the ones this run stops).
csb_http_start() {
  local name=$1 sizes=$2 procs=${3:-1}
  shift 3 || shift $#
  CSB_HTTP_PIDS=() CSB_HTTP_STOP=() CSB_HTTP_NAME=()
  case "${SERVER}" in
    csb) csb_start_csb "${name}" "${sizes}" "${procs}" "$@" ;;
    nginx) csb_start_nginx "${name}" "${sizes}" "${procs}" ;;
    cmd) csb_start_cmd "${name}" ;;
    url) csb_start_url ;;
  esac
  csb_payloads_verify "${sizes}"
  csb_tls_probe
  local pids
  pids=$(IFS=,; echo "${CSB_HTTP_PIDS[*]}")
  if [[ -n "${pids}" ]]; then
    csb_monitor_pids 0 "${name}" "${pids}"
    local qpids qout
    csb_quote_to qpids "${CSB_HTTP_PIDS[@]}"
    csb_quote_to qout "${CSB_H_WORK[0]}/monitors/server/limits-${name}.txt"
    on_server_sh "for p in ${qpids}; do echo \"== \$p\"; cat /proc/\$p/limits; done >${qout}" ||
      log_warn "could not record the server processes' limits"
  else
    log_warn "no PID of the server under test is known: no pidstat on it (set SERVER_PID)"
  fi
  csb_run_set "server_pids.${name}" "${pids}"
  # Named by what it is (csb-server, nginx, SERVER_CMD's program, what listens for SERVER=url).
  local what=${CSB_HTTP_NAME[${CSB_HTTP_PIDS[0]:-_}]:-unknown}
  log_info "server under test up: $([[ "${SERVER}" == nginx ]] && echo nginx || echo "${what##*/}") (SERVER=${SERVER}, watched as ${name}), PID ${pids:-unknown}, on ${SERVER_IP}:${SERVER_PORT}"
}

# csb_http_track PID NAME [STOP]: watch PID (its command line holds NAME);
# STOP=1: this run started it and stops it.
csb_http_track() {
  CSB_HTTP_PIDS+=("$1")
  CSB_HTTP_NAME[$1]=$2
  if [[ "${3:-0}" == 1 ]]; then
    CSB_HTTP_STOP+=("$1")
    csb_track 0 "$1" "$2"
  fi
}

# csb_start_csb NAME SIZES PROCS [FLAGS...]: PROCS reference server processes
# (SO_REUSEPORT when more than one). Returns once every process listens (with
# SO_REUSEPORT a late one would get none of the early connections) and
# HEALTH_PATH answers through SERVER_IP.
csb_start_csb() {
  local name=$1 sizes=$2 procs=$3
  shift 3
  local -a cmd=("${CSB_H_WORK[0]}/bin/csb-server" -addr "${SERVER_IP}" -port "${SERVER_PORT}" -sizes "${sizes}")
  ((procs > 1)) && cmd+=(-reuseport)
  # A Phase 3 scenario's connections stay idle for its ramp and hold.
  ((${CSB_SERVER_IDLE_S:-0} <= 600)) || cmd+=(-idle-timeout "$((CSB_SERVER_IDLE_S + 60))s")
  # Many TLS connections opened at once wait their turn for a handshake:
  # longer than the 5 s read-header deadline that also bounds a handshake.
  ((${CSB_SERVER_HANDSHAKE_S:-0} == 0)) || cmd+=(-read-header-timeout "${CSB_SERVER_HANDSHAKE_S}s")
  cmd+=("${CSB_TLS_SERVER_FLAGS[@]}")
  # HTTP/2 asked: h2 and h2c beside HTTP/1.1 (curl's checks speak it).
  ! csb_http2_on || cmd+=(-http "1.1,2")
  ! csb_http2_on || [[ -z "${H2_MAX_STREAMS:-}" ]] || cmd+=(-max-concurrent-streams "${H2_MAX_STREAMS}")
  cmd+=("$@")
  csb_server_pin cmd
  local i pid logs=()
  for ((i = 1; i <= procs; i++)); do
    log_cmd "${cmd[@]}"
    logs+=("${CSB_H_WORK[0]}/server/${name}-${i}.log")
    pid=$(on_server_bg "${logs[-1]}" "${cmd[@]}") ||
      die "could not start the server on the server host" 1
    csb_http_track "${pid}" csb-server 1
  done
  csb_run_set server.cmdline "$(csb_quote "${cmd[@]}")"
  csb_run_set server.workers "${procs}"
  # Each process prints one JSON line (CSB_SERVER_EVENT_LISTENING) once bound; one that
  # exits (the port is taken) ends the wait at once.
  local script qlogs qevent qpids
  csb_quote_to qlogs "${logs[@]}"
  csb_quote_to qevent "\"event\":\"${CSB_SERVER_EVENT_LISTENING}\""
  csb_quote_to qpids "${CSB_HTTP_PIDS[@]}"
  script="for i in \$(seq $((SERVER_WAIT * 5))); do ok=1; for f in ${qlogs}; do grep -qF ${qevent} \"\$f\" 2>/dev/null || ok=0; done; [ \$ok = 1 ] && exit 0; for p in ${qpids}; do csb_alive \"\$p\" || exit 2; done; sleep 0.2; done; exit 1"
  if ! on_server_sh "${script}"; then
    for pid in "${CSB_HTTP_PIDS[@]}"; do
      csb_server_alive "${pid}" csb-server ||
        die "the server process ${pid} exited before it listened (is ${SERVER_IP}:${SERVER_PORT} taken by another process? see server/${name}-*.log in the run directory); set SERVER_PORT to a free port" 1
    done
    die "the server processes did not all listen within ${SERVER_WAIT} s; see server/${name}-*.log in the run directory" 1
  fi
  csb_wait_http "$(csb_base_url)${HEALTH_PATH}" "${SERVER_WAIT}" ||
    die "the server did not answer ${HEALTH_PATH} on ${SERVER_IP}:${SERVER_PORT} within ${SERVER_WAIT} s; see server/${name}-1.log in the run directory" 1
}

# csb_start_cmd NAME: SERVER_CMD on the server host, in the foreground of its
# own session, stdout and stderr in server/NAME-1.log.
csb_start_cmd() {
  local name=$1 pid
  local -a cmd
  csb_server_cmd_words cmd
  local track=${cmd[0]}
  csb_server_pin cmd
  log_cmd "${cmd[@]}"
  local log="${CSB_H_WORK[0]}/server/${name}-1.log"
  pid=$(on_server_bg "${log}" "${cmd[@]}") || die "could not start SERVER_CMD on the server host" 1
  csb_http_track "${pid}" "${track}" 1
  csb_run_set server.cmdline "$(csb_quote "${cmd[@]}")"
  csb_run_set server.workers ""
  csb_server_wait_listen "${pid}" "${track}" "${log}" "server/${name}-1.log"
}

# csb_server_wait_listen PID NAME LOG RUNLOG: wait (SERVER_WAIT) until
# something listens on SERVER_IP:SERVER_PORT on the server host while PID
# lives. A server that exits, or listens elsewhere, is refused (exit 2) with
# the tail of its log and what it listens on.
csb_server_wait_listen() {
  local pid=$1 name=$2 log=$3 runlog=$4 rc=0
  on_server_sh "for i in \$(seq $((SERVER_WAIT * 5))); do ss -Hltn 'sport = :$((SERVER_PORT))' | grep -qF $(csb_quote "$(csb_url_host "${SERVER_IP}"):${SERVER_PORT}") && exit 0; csb_alive $((pid)) || exit 3; sleep 0.2; done; exit 1" || rc=$?
  ((rc == 0)) && return 0
  local tail where
  tail=$(on_server_sh "tail -n 3 $(csb_quote "${log}") 2>/dev/null" | tr '\n' ' ' | cut -c1-300) || tail=""
  if ((rc == 3)); then
    die "the server under test (SERVER=${SERVER}, PID ${pid}) exited before it listened on ${SERVER_IP}:${SERVER_PORT}; its log (${runlog}): ${tail:-empty}" 2
  fi
  where=$(on_server_sh "ss -Hltnp | grep -F 'pid=$((pid)),' | awk '{print \$4}' | sort -u | tr '\n' ' '" 2>/dev/null) || where=""
  local hint=""
  if [[ -n "${where}" ]]; then
    hint="; it listens on ${where% } instead"
    [[ "${SERVER}" != cmd || "${SERVER_CMD}" == *'{port}'* ]] || hint+=" (SERVER_CMD has no {port}: add {port} where your command takes its port, or set SERVER_PORT to the port it binds)"
  fi
  csb_stop_pid 0 "${pid}" "${name}" 5 >/dev/null 2>&1 || true
  csb_untrack 0 "${pid}"
  CSB_HTTP_PIDS=() CSB_HTTP_STOP=()
  die "the server under test (SERVER=${SERVER}, PID ${pid}) did not listen on ${SERVER_IP}:${SERVER_PORT} within SERVER_WAIT=${SERVER_WAIT} s${hint}; stopped it; its log (${runlog}): ${tail:-empty}" 2
}

# csb_start_url: a server the runner does not start: something must listen
# on SERVER_IP:SERVER_PORT; SERVER_PID (checked alive) or the socket's owner
# is watched, never stopped.
csb_start_url() {
  local line
  line=$(on_server_sh "ss -Hltnp 'sport = :$((SERVER_PORT))' | grep -F $(csb_quote "$(csb_url_host "${SERVER_IP}"):${SERVER_PORT}") | head -n 1") || line=""
  if [[ -z "${line}" ]]; then
    line=$(on_server_sh "ss -Hltnp 'sport = :$((SERVER_PORT))' | grep -E '(\\*|0\\.0\\.0\\.0|\\[::\\]):$((SERVER_PORT)) ' | head -n 1") || line=""
  fi
  [[ -n "${line}" ]] ||
    die "SERVER=url: nothing listens on ${SERVER_IP}:${SERVER_PORT} on the server host; start your server there first (or use SERVER=cmd to have the runner start it)" 2
  local pid=${SERVER_PID:-} comm=""
  if [[ -z "${pid}" && "${line}" =~ \(\"([^\"]+)\",pid=([0-9]+), ]]; then
    comm=${BASH_REMATCH[1]} pid=${BASH_REMATCH[2]}
  fi
  if [[ -n "${pid}" ]]; then
    if [[ -z "${comm}" ]]; then
      comm=$(on_server_sh "cat /proc/$((pid))/comm 2>/dev/null") ||
        die "SERVER_PID=${SERVER_PID}: no such process on the server host; give the PID of the server listening on ${SERVER_IP}:${SERVER_PORT}" 2
    fi
    csb_http_track "${pid}" "${comm}" 0
    local child
    for child in $(on_server_sh "cat /proc/$((pid))/task/*/children 2>/dev/null" || true); do
      csb_http_track "${child}" "$(on_server_sh "cat /proc/$((child))/comm 2>/dev/null" || true)" 0
    done
  fi
  local cmdline=""
  if [[ -n "${pid}" ]]; then
    cmdline=$(on_server_sh "tr '\\0' ' ' </proc/$((pid))/cmdline 2>/dev/null") || cmdline=""
  fi
  csb_run_set server.cmdline "${cmdline% }"
  csb_run_set server.workers "$((${#CSB_HTTP_PIDS[@]} > 1 ? ${#CSB_HTTP_PIDS[@]} - 1 : ${#CSB_HTTP_PIDS[@]}))"
  log_info "SERVER=url: the server on ${SERVER_IP}:${SERVER_PORT} (PID ${pid:-unknown}) was not started by this run and will not be stopped by it"
}

# csb_http_stop: stop, by PID, what this run started (SIGTERM: the reference
# server shuts down gracefully, nginx's master stops its workers). A server
# of SERVER=url is left running.
csb_http_stop() {
  local pid
  for pid in "${CSB_HTTP_STOP[@]}"; do
    csb_stop_pid 0 "${pid}" "${CSB_HTTP_NAME[${pid}]}" 10 || true
    csb_untrack 0 "${pid}"
  done
  CSB_HTTP_PIDS=() CSB_HTTP_STOP=() CSB_HTTP_NAME=()
}

csb_url_host() {
  if [[ "$1" == *:* ]]; then printf '[%s]' "$1"; else printf '%s' "$1"; fi
}

# csb_wait_http URL SECONDS: poll URL from the client until it answers 200,
# at most SECONDS.
csb_wait_http() {
  local url=$1 limit=$2 deadline
  deadline=$((SECONDS + limit))
  while ((SECONDS < deadline)); do
    # shellcheck disable=SC2046 # one flag or none
    if curl -fsS --noproxy '*' --max-time 1 "${CSB_CURL_TLS[@]}" $(csb_curl_http) -o /dev/null "${url}" 2>/dev/null; then
      return 0
    fi
    sleep 0.2
  done
  return 1
}

# csb_http_dead: the PIDs of CSB_HTTP_PIDS that are no longer running (one
# round trip for all of them), each checked against its recorded name.
csb_http_dead() {
  local pid script=""
  for pid in "${CSB_HTTP_PIDS[@]}"; do
    script+="{ tr '\\0' ' ' </proc/$((pid))/cmdline; } 2>/dev/null | grep -qF -- $(csb_quote "${CSB_HTTP_NAME[${pid}]:-}") || printf '%s ' $((pid)); "
  done
  on_server_sh "${script}" | sed 's/ $//'
}

# csb_server_alive PID NAME: is the process still there on the server?
csb_server_alive() {
  local qpid qname
  csb_quote_to qpid "$1"
  csb_quote_to qname "$2"
  on_server_sh "{ tr '\\0' ' ' </proc/${qpid}/cmdline; } 2>/dev/null | grep -qF -- ${qname}"
}

# csb_wait_listen PORT SECONDS: wait on the server host until something
# listens on SERVER_IP:PORT (checked with ss, so no test connection is made).
csb_wait_listen() {
  local port=$1 limit=$2
  on_server_sh "for i in \$(seq $((limit * 5))); do ss -Hltn 'sport = :$((port))' | grep -qF $(csb_quote "${SERVER_IP}:${port}") && exit 0; sleep 0.2; done; exit 1"
}
