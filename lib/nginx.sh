# shellcheck shell=bash
# lib/nginx.sh: SERVER=nginx, the distribution's nginx on the server host.
#
# A config written into the run's work directory serves the reference
# server's bytes (its 64-byte pattern line repeated, cut at the size: files
# made there) at the same paths, bound to SERVER_IP:SERVER_PORT only, a
# foreground master (daemon off) tracked and stopped by PID, no root needed.
# `csb nginx-conf` (internal/nginxconf) writes the config and sizes it:
# worker_connections for the phase's largest connection count, the fd limit,
# keep-alive beyond Phase 3's hold, one worker per CPU of SERVER_CPUS.

csb_config_declare NGINX_WORKERS "" workers_or_empty \
  "SERVER=nginx: worker_processes, a number or auto (empty: auto, one per CPU)"
csb_config_declare NGINX_WORKER_CONNECTIONS "" posint_or_empty \
  "SERVER=nginx: worker_connections (empty: 4096, or the phase's largest connection count + 1024)"
csb_config_declare NGINX_KEEPALIVE_REQUESTS "" posint_or_empty \
  "SERVER=nginx: keepalive_requests (empty: 1000000, so no busy connection is closed mid-cell)"
csb_config_declare NGINX_KEEPALIVE_TIMEOUT "" posint_or_empty \
  "SERVER=nginx: keepalive_timeout in seconds (empty: 75, or Phase 3's hold + 60 so idle connections last the hold)"
csb_config_declare NGINX_TCP_NOPUSH on on_off \
  "SERVER=nginx: tcp_nopush, on (as Debian ships nginx) or off (a 10 KB answer's last segment can wait on the cork)"

# The phase's largest connection count (CSB_SERVER_CONNS: a Phase 3
# scenario's; Phase 1's CONNECTIONS, Phase 2's CONCURRENCY).
csb_nginx_max_conns() {
  local conns=${CSB_SERVER_CONNS:-0} m
  for m in "${CONCURRENCY:-}" "${CONNECTIONS:-}"; do
    [[ -z "${m}" ]] || { m=$(csb_list_max "${m}"); ((m > conns)) && conns=${m}; }
  done
  echo "${conns}"
}

# csb_start_nginx NAME SIZES [PROCS]: the payload files and the config in
# the work directory, checked with nginx -t, then the master started in the
# foreground of its own session and its workers watched. PROCS > 1 (a Phase
# 3 plan's server processes) is that many workers, each listening with
# reuseport; CSB_SERVER_IDLE_S (a Phase 3 scenario's ramp bound and hold)
# how long a connection may stay idle.
csb_start_nginx() {
  local name=$1 sizes=$2 procs=${3:-1} dir=${CSB_H_WORK[0]} size facts uid user="" hard conf paths=""
  facts=$(on_server_sh 'id -u; id -un; ulimit -Hn') || die "cannot read the server host's user and fd limit" 1
  { read -r uid; read -r user; read -r hard; } <<<"${facts}"
  [[ "${uid}" == 0 ]] || user=""
  [[ "${hard}" =~ ^[0-9]+$ ]] || hard=0
  local -a items
  IFS=, read -r -a items <<<"${sizes}"
  for size in "${items[@]}"; do paths+="${size}=$(csb_payload_path "${size}"),"; done
  local -a gen=("${CSB_ROOT}/bin/csb" nginx-conf -dir "${dir}" -user "${user}" -listen "$(csb_url_host "${SERVER_IP}"):${SERVER_PORT}"
    -sizes "${sizes}" -paths "${paths%,}" -health "${HEALTH_PATH}" -workers "${NGINX_WORKERS}" -server-cpus "${SERVER_CPUS}"
    -worker-connections "${NGINX_WORKER_CONNECTIONS:-0}" -max-conns "$(csb_nginx_max_conns)"
    -keepalive-requests "${NGINX_KEEPALIVE_REQUESTS:-0}" -keepalive-timeout "${NGINX_KEEPALIVE_TIMEOUT:-0}"
    -tcp-nopush "${NGINX_TCP_NOPUSH}"
    -hold "${CSB_SERVER_IDLE_S:-${C10K_HOLD:-0}}" -fd-hard "${hard}" -procs "${procs}")
  ! csb_http2_on || gen+=(-http2 -http2-max-streams "${H2_MAX_STREAMS:-0}")
  if csb_tls_on; then
    gen+=(-tls-dir "${CSB_TLS_DIR}" -tls-tickets="$( ((TLS_TICKETS)) && echo true || echo false)")
  fi
  conf=$("${gen[@]}") || die "csb nginx-conf failed: $(csb_quote "${gen[@]}")" 1
  local warning
  warning=$(sed -n 's/^# warning: //p' <<<"${conf}")
  [[ -z "${warning}" ]] || log_warn "${warning}"
  local script q1 q2 qline qfile
  script=$(csb_remote_guard "${dir}")
  csb_quote_to q1 "${dir}/bin/www" "${dir}/nginx"
  csb_quote_to q2 "${dir}/bin/nginx-tmp"
  script+="
mkdir -p ${q1}
for t in client_body proxy fastcgi uwsgi scgi; do mkdir -p ${q2}/\$t; done"
  csb_quote_to qline "${CSB_PAYLOAD_LINE}"
  for size in "${items[@]}"; do
    csb_quote_to qfile "${dir}/bin/www/${size}"
    script+="
[ -f ${qfile} ] || { yes ${qline} | head -c ${CSB_SIZE_BYTES[${size}]} >${qfile}.tmp && mv ${qfile}.tmp ${qfile}; }"
  done
  csb_quote_to qfile "${dir}/nginx/nginx.conf"
  script+="
cat >${qfile} <<'CSB_NGINX_CONF'
${conf}
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
  csb_run_set server.nginx "$(sed -n 's/^# settings: //p' <<<"${conf}")"
}
