# shellcheck shell=bash
# lib/server.sh: the server under test's life on the server host.
#
# SERVER says what answers on SERVER_IP:SERVER_PORT in every HTTP phase:
#   csb    the reference server (bin/csb-server), built here with
#          CGO_ENABLED=0 (static: the server host needs no Go), copied into the
#          run's server-side work directory, started, stopped by PID.
#   nginx  the distribution's nginx on the server host: a config written into
#          the work directory serves the same bytes at the same paths (files
#          made there), bound to SERVER_IP:SERVER_PORT only, a foreground
#          master (daemon off) tracked and stopped by PID, no root needed.
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
csb_config_declare NGINX_WORKERS "" workers_or_empty \
  "SERVER=nginx: worker_processes, a number or auto (empty: auto, one per CPU)"
csb_config_declare NGINX_WORKER_CONNECTIONS "" posint_or_empty \
  "SERVER=nginx: worker_connections (empty: 4096, or the phase's largest connection count + 1024)"
csb_config_declare NGINX_KEEPALIVE_REQUESTS "" posint_or_empty \
  "SERVER=nginx: keepalive_requests (empty: 1000000, so no busy connection is closed mid-cell)"
csb_config_declare NGINX_KEEPALIVE_TIMEOUT "" posint_or_empty \
  "SERVER=nginx: keepalive_timeout in seconds (empty: 75, or Phase 3's hold + 60 so idle connections last the hold)"
csb_config_declare SERVER_CPUS "" cpulist_or_empty \
  "CPUs the server under test (nginx, cmd, csb) runs on, a taskset list such as 1 or 0-1 (empty: all); nginx's default workers: one per CPU listed"
csb_config_declare PAYLOAD_PATHS "" payload_paths_or_empty \
  "the path of each size on the server under test, SIZE=PATH,... (empty, or a size not listed: /payload/<size>)"
csb_config_declare HEALTH_PATH /healthz url_path \
  "the path of Phase 3's idle and low-rate requests (and the reference server's readiness check)"

# Words of SERVER_CMD: letters, digits and . _ / : = , + @ % - plus the
# placeholders {ip} {port} {bin}; anything else (; | & $ ` < > ( ) quotes,
# backslashes, globs) is shell syntax the runner will not pass on.
csb_check_cmdline_or_empty() {
  local w rest
  local -a words
  read -r -a words <<<"$1"
  for w in "${words[@]}"; do
    rest=${w//\{ip\}/}
    rest=${rest//\{port\}/}
    rest=${rest//\{bin\}/}
    [[ "${rest}" =~ ^[A-Za-z0-9_./:=,+@%-]*$ ]] || return 1
  done
}
csb_expect_cmdline_or_empty() {
  echo "plain words (letters, digits, . _ / : = , + @ % -) with the placeholders {ip} {port} {bin}; no ; | & \$( \` < > quotes or other shell syntax"
}
csb_check_cpulist_or_empty() { [[ -z "$1" || "$1" =~ ^[0-9]{1,4}(-[0-9]{1,4})?(,[0-9]{1,4}(-[0-9]{1,4})?)*$ ]]; }
csb_expect_cpulist_or_empty() { echo "a CPU list as taskset -c takes it, such as 1, 0-1 or 0,2"; }
csb_check_workers_or_empty() { [[ -z "$1" || "$1" == auto ]] || csb_check_posint "$1"; }
csb_expect_workers_or_empty() { echo "a positive number of workers, or auto"; }
csb_check_url_path() { [[ "$1" =~ ^/[A-Za-z0-9._~/%+=-]*$ ]]; }
csb_expect_url_path() { echo "a URL path starting with / of letters, digits and . _ ~ / % + = -"; }
csb_check_payload_paths_or_empty() {
  [[ -z "$1" ]] && return 0
  local item
  local -a items
  [[ "$1" != *,, && "$1" != ,* && "$1" != *, ]] || return 1
  IFS=, read -r -a items <<<"$1"
  for item in "${items[@]}"; do
    [[ "${item}" == *=* ]] || return 1
    csb_check_size "${item%%=*}" && csb_check_url_path "${item#*=}" || return 1
  done
}
csb_expect_payload_paths_or_empty() { echo "SIZE=PATH pairs such as 1k=/static/1k.bin,10k=/static/10k.bin"; }

# csb_server_settings_check: what the key checks cannot see alone (run by
# csb_config_validate, so before anything starts). Prints the error, returns 1.
csb_server_settings_check() {
  local e
  case "${SERVER}" in
    cmd)
      if [[ -z "${SERVER_CMD}" ]]; then
        e="SERVER=cmd needs SERVER_CMD, the command line that starts your server, e.g. SERVER_CMD='/usr/local/bin/myserver -listen {ip}:{port}'"
      elif [[ "${SERVER_CMD}" == *'{bin}'* && -z "${SERVER_BIN}" ]]; then
        e="SERVER_CMD uses {bin} but SERVER_BIN is empty: set SERVER_BIN to the local file to copy to the server host"
      elif [[ -n "${SERVER_BIN}" && ! -f "${SERVER_BIN}" ]]; then
        e="SERVER_BIN=${SERVER_BIN} is not a file on this host: give the local server binary to copy to the server host"
      fi
      ;;
    *)
      local k
      for k in SERVER_CMD SERVER_BIN; do
        [[ -z "${!k}" ]] || e="${k} is set but SERVER=${SERVER}: ${k} is for SERVER=cmd; set SERVER=cmd or unset ${k}"
      done
      ;;
  esac
  if [[ -z "${e:-}" && -n "${SERVER_CPUS}" && "${SERVER}" == url ]]; then
    e="SERVER_CPUS is set but SERVER=url: the runner does not start that server, so it cannot pin it; pin it yourself (taskset) or unset SERVER_CPUS"
  fi
  if [[ -z "${e:-}" && -n "${SERVER_PID}" && "${SERVER}" != url ]]; then
    e="SERVER_PID is set but SERVER=${SERVER}: SERVER_PID names a server the runner did not start (SERVER=url)"
  fi
  if [[ -z "${e:-}" && -n "${PAYLOAD_PATHS}" && "${SERVER}" == csb ]]; then
    e="PAYLOAD_PATHS is set but SERVER=csb: the reference server serves /payload/<size> only; unset PAYLOAD_PATHS or choose another SERVER"
  fi
  [[ -z "${e:-}" ]] && return 0
  printf 'error: %s\n' "${e}" >&2
  return 1
}
CSB_CONFIG_CHECKS+=(csb_server_settings_check)

declare -ga CSB_HTTP_PIDS=() CSB_HTTP_STOP=()
declare -gA CSB_HTTP_NAME=()
# Facts about the server under test, recorded in run.env (server.*) by
# csb_server_deploy and csb_http_start.
CSB_SERVER_VERSION=""
CSB_SERVER_REMOTE_BIN=""

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

# csb_server_deploy: what the server under test needs on the server host
# before it starts: the reference server's binary (csb), SERVER_BIN (cmd),
# nginx present (named by package when missing). Records server.kind,
# server.version and server.managed in run.env.
csb_server_deploy() {
  csb_run_set server.kind "${SERVER}"
  csb_run_set server.cpus "${SERVER_CPUS:-${CSB_CPUS_SERVER}}"
  case "${SERVER}" in
    csb)
      csb_server_put "${CSB_ROOT}/bin/csb-server" "${CSB_REMOTE_RUN}/bin/csb-server" 0755 ||
        die "could not copy the server binary to ${CSB_REMOTE_RUN}/bin on the server host" 1
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
        CSB_SERVER_REMOTE_BIN="${CSB_REMOTE_RUN}/bin/$(basename "${SERVER_BIN}")"
        csb_server_put "${SERVER_BIN}" "${CSB_SERVER_REMOTE_BIN}" 0755 ||
          die "could not copy SERVER_BIN=${SERVER_BIN} to ${CSB_REMOTE_RUN}/bin on the server host" 1
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

# csb_cpulist_count LIST: how many CPUs a taskset list names.
csb_cpulist_count() {
  local item n=0
  local -a items
  IFS=, read -r -a items <<<"$1"
  for item in "${items[@]}"; do
    if [[ "${item}" == *-* ]]; then n=$((n + 10#${item#*-} - 10#${item%-*} + 1)); else n=$((n + 1)); fi
  done
  echo "${n}"
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
    nginx) csb_start_nginx "${name}" "${sizes}" ;;
    cmd) csb_start_cmd "${name}" ;;
    url) csb_start_url ;;
  esac
  csb_payloads_verify "${sizes}"
  csb_tls_probe
  local pids
  pids=$(IFS=,; echo "${CSB_HTTP_PIDS[*]}")
  if [[ -n "${pids}" ]]; then
    csb_monitor_pids "${name}" "${pids}"
    on_server_sh "for p in $(csb_quote "${CSB_HTTP_PIDS[@]}"); do echo \"== \$p\"; cat /proc/\$p/limits; done >$(csb_quote "${CSB_REMOTE_RUN}/monitors/server/limits-${name}.txt")" ||
      log_warn "could not record the server processes' limits"
  else
    log_warn "no PID of the server under test is known: no pidstat on it (set SERVER_PID)"
  fi
  csb_run_set "server_pids.${name}" "${pids}"
  log_info "server under test up (${name}, SERVER=${SERVER}): PID ${pids:-unknown}, on ${SERVER_IP}:${SERVER_PORT}"
}

# csb_http_track PID NAME [STOP]: watch PID (its command line holds NAME);
# STOP=1: this run started it and stops it.
csb_http_track() {
  CSB_HTTP_PIDS+=("$1")
  CSB_HTTP_NAME[$1]=$2
  if [[ "${3:-0}" == 1 ]]; then
    CSB_HTTP_STOP+=("$1")
    csb_track_server "$1" "$2"
  fi
}

# csb_start_csb NAME SIZES PROCS [FLAGS...]: PROCS reference server processes
# (SO_REUSEPORT when more than one). Returns once every process listens (with
# SO_REUSEPORT a late one would get none of the early connections) and
# HEALTH_PATH answers through SERVER_IP.
csb_start_csb() {
  local name=$1 sizes=$2 procs=$3
  shift 3
  local -a cmd=("${CSB_REMOTE_RUN}/bin/csb-server" -addr "${SERVER_IP}" -port "${SERVER_PORT}" -sizes "${sizes}")
  ((procs > 1)) && cmd+=(-reuseport)
  cmd+=("${CSB_TLS_SERVER_FLAGS[@]}" "$@")
  csb_server_pin cmd
  local i pid logs=()
  for ((i = 1; i <= procs; i++)); do
    log_cmd "${cmd[@]}"
    logs+=("${CSB_REMOTE_RUN}/server/${name}-${i}.log")
    pid=$(on_server_bg "${logs[-1]}" "${cmd[@]}") ||
      die "could not start the server on the server host" 1
    csb_http_track "${pid}" csb-server 1
  done
  csb_run_set server.cmdline "$(csb_quote "${cmd[@]}")"
  csb_run_set server.workers "${procs}"
  # Each process prints one "listening" JSON line once bound; one that
  # exits (the port is taken) ends the wait at once.
  local script
  script="for i in \$(seq $((SERVER_WAIT * 5))); do ok=1; for f in $(csb_quote "${logs[@]}"); do grep -q '\"event\":\"listening\"' \"\$f\" 2>/dev/null || ok=0; done; [ \$ok = 1 ] && exit 0; for p in $(csb_quote "${CSB_HTTP_PIDS[@]}"); do kill -0 \"\$p\" 2>/dev/null || exit 2; done; sleep 0.2; done; exit 1"
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
  local log="${CSB_REMOTE_RUN}/server/${name}-1.log"
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
  on_server_sh "for i in \$(seq $((SERVER_WAIT * 5))); do ss -Hltn 'sport = :$((SERVER_PORT))' | grep -qF $(csb_quote "$(csb_url_host "${SERVER_IP}"):${SERVER_PORT}") && exit 0; kill -0 $((pid)) 2>/dev/null || exit 3; sleep 0.2; done; exit 1" || rc=$?
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
  csb_stop_server_pid "${pid}" "${name}" 5 >/dev/null 2>&1 || true
  csb_untrack_server "${pid}"
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
  local pid=${SERVER_PID} comm=""
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

# csb_nginx_defaults: the nginx settings of this phase, as NGX_* globals.
# worker_connections covers the phase's largest connection count (Phase 2's
# CONCURRENCY, Phase 1's CONNECTIONS, Phase 3's scenario: CSB_SERVER_CONNS)
# in every worker, since one worker may accept them all; keepalive_timeout
# outlasts Phase 3's hold (C10K_HOLD).
csb_nginx_defaults() {
  local conns=${CSB_SERVER_CONNS:-0} m
  for m in "${CONCURRENCY:-}" "${CONNECTIONS:-}"; do
    [[ -z "${m}" ]] || { m=$(csb_list_max "${m}"); ((m > conns)) && conns=${m}; }
  done
  NGX_WORKERS=${NGINX_WORKERS:-auto}
  # nginx's auto counts the host's CPUs, not the ones it may run on.
  [[ -n "${NGINX_WORKERS}" || -z "${SERVER_CPUS}" ]] || NGX_WORKERS=$(csb_cpulist_count "${SERVER_CPUS}")
  NGX_CONNS=${NGINX_WORKER_CONNECTIONS:-$((conns + 1024 > 4096 ? conns + 1024 : 4096))}
  NGX_KA_REQUESTS=${NGINX_KEEPALIVE_REQUESTS:-1000000}
  local hold=$((${C10K_HOLD:-0} + 60))
  NGX_KA_TIMEOUT=${NGINX_KEEPALIVE_TIMEOUT:-$((hold > 75 ? hold : 75))}
}

# csb_nginx_conf DIR USER NOFILE SIZES: the config, on stdout. DIR is the
# server-side work directory; USER is set only when the server host's user
# is root (the workers must read the 0700 work directory).
csb_nginx_conf() {
  local dir=$1 user=$2 nofile=$3 sizes=$4 size
  local -a items
  IFS=, read -r -a items <<<"${sizes}"
  printf '# Written by lib/server.sh for one run; nginx -p %s -c %s\n' "${dir}/nginx/" "${dir}/nginx/nginx.conf"
  printf 'daemon off;\nmaster_process on;\n'
  [[ -z "${user}" ]] || printf 'user %s;\n' "${user}"
  printf 'worker_processes %s;\nworker_rlimit_nofile %s;\n' "${NGX_WORKERS}" "${nofile}"
  printf 'pid %s/nginx/nginx.pid;\nerror_log %s/server/nginx-error.log warn;\n' "${dir}" "${dir}"
  printf 'events {\n  worker_connections %s;\n}\n' "${NGX_CONNS}"
  printf 'http {\n  access_log off;\n  sendfile on;\n  tcp_nopush on;\n  tcp_nodelay on;\n'
  printf '  keepalive_requests %s;\n  keepalive_timeout %ss;\n' "${NGX_KA_REQUESTS}" "${NGX_KA_TIMEOUT}"
  printf '  types { }\n  default_type application/octet-stream;\n  chunked_transfer_encoding off;\n'
  local t
  for t in client_body proxy fastcgi uwsgi scgi; do
    printf '  %s_temp_path %s/bin/nginx-tmp/%s;\n' "${t}" "${dir}" "${t}"
  done
  printf '  server {\n    listen %s:%s%s backlog=65535;\n    server_name _;\n' "$(csb_url_host "${SERVER_IP}")" "${SERVER_PORT}" "$(csb_tls_on && echo ' ssl')"
  if csb_tls_on; then
    # The run's certificate and key (bin/tls, read by the master at start);
    # TLS 1.3 and 1.2 as the reference server; tickets as TLS_TICKETS.
    printf '    ssl_certificate %s/cert.pem;\n    ssl_certificate_key %s/key.pem;\n' "${CSB_TLS_DIR}" "${CSB_TLS_DIR}"
    printf '    ssl_protocols TLSv1.2 TLSv1.3;\n    ssl_session_tickets %s;\n' "$( ((TLS_TICKETS)) && echo on || echo off)"
  fi
  printf '    location = /healthz { default_type "text/plain; charset=utf-8"; return 200 "ok\\n"; }\n'
  [[ "${HEALTH_PATH}" == /healthz ]] ||
    printf '    location = %s { default_type "text/plain; charset=utf-8"; return 200 "ok\\n"; }\n' "${HEALTH_PATH}"
  for size in "${items[@]}"; do
    printf '    location = %s { alias %s/bin/www/%s; }\n' "$(csb_payload_path "${size}")" "${dir}" "${size}"
  done
  printf '  }\n}\n'
}

# csb_start_nginx NAME SIZES: the payload files (the reference server's
# bytes: its 64-byte pattern line repeated, cut at the size) and the config
# in the work directory, checked with nginx -t, then the master started in
# the foreground of its own session and its workers watched.
csb_start_nginx() {
  local name=$1 sizes=$2 dir=${CSB_REMOTE_RUN} size facts uid hard
  csb_nginx_defaults
  facts=$(on_server_sh 'id -u; id -un; ulimit -Hn') || die "cannot read the server host's user and fd limit" 1
  { read -r uid; read -r CSB_NGX_USER; read -r hard; } <<<"${facts}"
  [[ "${uid}" == 0 ]] || CSB_NGX_USER=""
  local nofile=$((2 * NGX_CONNS + 1024))
  if [[ "${hard}" != unlimited ]] && ((nofile > hard)); then
    log_warn "nginx: worker_rlimit_nofile ${nofile} is above the server host's hard fd limit ${hard}: capped there"
    nofile=${hard}
  fi
  local -a items
  local script
  IFS=, read -r -a items <<<"${sizes}"
  script="$(csb_remote_guard "${dir}")
mkdir -p $(csb_quote "${dir}/bin/www" "${dir}/nginx")
for t in client_body proxy fastcgi uwsgi scgi; do mkdir -p $(csb_quote "${dir}/bin/nginx-tmp")/\$t; done"
  for size in "${items[@]}"; do
    script+="
[ -f $(csb_quote "${dir}/bin/www/${size}") ] || { yes $(csb_quote "${CSB_PAYLOAD_LINE}") | head -c $(($(csb_size_bytes "${size}"))) >$(csb_quote "${dir}/bin/www/${size}.tmp") && mv $(csb_quote "${dir}/bin/www/${size}.tmp" "${dir}/bin/www/${size}"); }"
  done
  script+="
cat >$(csb_quote "${dir}/nginx/nginx.conf") <<'CSB_NGINX_CONF'
$(csb_nginx_conf "${dir}" "${CSB_NGX_USER}" "${nofile}" "${sizes}")
CSB_NGINX_CONF
"
  on_server_sh "${script}" || die "could not write the nginx config and payload files in ${dir} on the server host" 1
  local -a cmd=(nginx -p "${dir}/nginx/" -e "${dir}/server/nginx-error.log" -c "${dir}/nginx/nginx.conf")
  local out
  out=$(on_server_sh "$(csb_quote "${cmd[@]}") -t 2>&1") ||
    die "nginx -t refused the config written for this run (${dir}/nginx/nginx.conf): $(tr '\n' ' ' <<<"${out}" | cut -c1-400)" 1
  csb_server_pin cmd
  log_cmd "${cmd[@]}"
  local pid log="${dir}/server/${name}-1.log"
  pid=$(on_server_bg "${log}" "${cmd[@]}") || die "could not start nginx on the server host" 1
  csb_http_track "${pid}" "${dir}/nginx/nginx.conf" 1
  csb_run_set server.cmdline "$(csb_quote "${cmd[@]}")"
  csb_server_wait_listen "${pid}" "${dir}/nginx/nginx.conf" "${dir}/server/nginx-error.log" server/nginx-error.log
  local w
  for w in $(on_server_sh "cat /proc/$((pid))/task/*/children 2>/dev/null" || true); do
    csb_http_track "${w}" "nginx: worker" 0
  done
  csb_run_set server.workers "$((${#CSB_HTTP_PIDS[@]} - 1))"
  csb_run_set server.nginx "worker_processes=${NGX_WORKERS} worker_connections=${NGX_CONNS} worker_rlimit_nofile=${nofile} keepalive_requests=${NGX_KA_REQUESTS} keepalive_timeout=${NGX_KA_TIMEOUT}s access_log=off"
}

# csb_http_stop: stop, by PID, what this run started (SIGTERM: the reference
# server shuts down gracefully, nginx's master stops its workers). A server
# of SERVER=url is left running.
csb_http_stop() {
  local pid
  for pid in "${CSB_HTTP_STOP[@]}"; do
    csb_stop_server_pid "${pid}" "${CSB_HTTP_NAME[${pid}]}" 10 || true
    csb_untrack_server "${pid}"
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
    if curl -fsS --noproxy '*' --max-time 1 "${CSB_CURL_TLS[@]}" -o /dev/null "${url}" 2>/dev/null; then
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
  on_server_sh "{ tr '\\0' ' ' </proc/$(csb_quote "$1")/cmdline; } 2>/dev/null | grep -qF -- $(csb_quote "$2")"
}

# csb_wait_listen PORT SECONDS: wait on the server host until something
# listens on SERVER_IP:PORT (checked with ss, so no test connection is made).
csb_wait_listen() {
  local port=$1 limit=$2
  on_server_sh "for i in \$(seq $((limit * 5))); do ss -Hltn 'sport = :$((port))' | grep -qF $(csb_quote "${SERVER_IP}:${port}") && exit 0; sleep 0.2; done; exit 1"
}
