# shellcheck shell=bash
# lib/monitor.sh: what both hosts record while a run goes on.
#
# For the whole run, on each host: sar (binary file, every activity sadc
# collects by default: CPU, memory, network DEV/TCP/ETCP/SOCK; converted with
# `sadf -j` at the end) and `mpstat -P ALL -o JSON`, one sample a second.
# On the server: `pidstat -H -h -u -r` on the server process(es).
# On each machine: `pidstat -H -h -u 1` of every process (pidstat prints the
# ones that used CPU in each second) in monitors/<host>/procs-pidstat.txt:
# with the pidstat files of the run's own processes it tells how much CPU
# went to anything else during each cell and names the top ones (`csb
# summarize` marks such a cell disturbed above DISTURB_THRESHOLD). LAB=local
# and netns share one kernel: one such file, on the client, serves both.
# sar's file also holds the run queue (sar -q), converted with the rest.
# Around every cell, on both hosts: `nstat -a -s -z -j` (absolute counters,
# history untouched) and /proc/net/sockstat (TIME_WAIT, sockets in use).
# Monitors are stopped with SIGINT, which makes sysstat close its files well
# formed; they are tracked by PID like everything else.

# Every sysstat tool runs with this environment: ISO dates, UTC, C locale.
CSB_SYSSTAT_ENV=(env LC_ALL=C TZ=UTC S_TIME_FORMAT=ISO)
declare -ga CSB_MONITORS=()

csb_config_declare DISTURB_THRESHOLD 10 uint \
  "CPU that anything other than the run's processes may take on a host during a cell, in % of one core (mean over the cell, steal included), before the cell is marked disturbed"
csb_config_declare UNSTEADY_CV 10 posint \
  "coefficient of variation, in %, of a cell's per-second throughput (sar, the sender's NIC, after warm-up) above which the cell is marked unsteady (so is a significant trend of half that over the cell)"

csb_monitor_add() {
  CSB_MONITORS+=("$1 $2 $3")
  csb_run_set "started.$1" "$2 $3"
}

# csb_monitors_start: sar and mpstat on both hosts.
csb_monitors_start() {
  local pid d="${CSB_REMOTE_RUN}/monitors/server"
  pid=$(on_server_bg "${d}/sar.log" "${CSB_SYSSTAT_ENV[@]}" sar -o "${d}/sar.bin" 1) &&
    csb_monitor_add server "${pid}" sar
  pid=$(on_server_bg "${d}/mpstat.json" "${CSB_SYSSTAT_ENV[@]}" mpstat -P ALL -o JSON 1) &&
    csb_monitor_add server "${pid}" mpstat
  d="${CSB_RUN_DIR}/monitors/${CSB_CLIENT_LABEL}"
  pid=$(on_client_bg "${d}/sar.log" "${CSB_SYSSTAT_ENV[@]}" sar -o "${d}/sar.bin" 1) &&
    csb_monitor_add client "${pid}" sar
  pid=$(on_client_bg "${d}/mpstat.json" "${CSB_SYSSTAT_ENV[@]}" mpstat -P ALL -o JSON 1) &&
    csb_monitor_add client "${pid}" mpstat
  pid=$(on_client_bg "${d}/procs-pidstat.txt" "${CSB_SYSSTAT_ENV[@]}" pidstat -H -h -u 1) &&
    csb_monitor_add client "${pid}" pidstat
  if [[ "${LAB}" == ssh ]]; then
    d="${CSB_REMOTE_RUN}/monitors/server"
    pid=$(on_server_bg "${d}/procs-pidstat.txt" "${CSB_SYSSTAT_ENV[@]}" pidstat -H -h -u 1) &&
      csb_monitor_add server "${pid}" pidstat
  fi
  csb_clients_monitors_start
  log_info "monitors started: ${CSB_MONITORS[*]}"
}

# csb_monitor_pids NAME PID[,PID...]: pidstat on server processes, written to
# monitors/server/pidstat-NAME.txt.
csb_monitor_pids() {
  local name=$1 pids=$2 pid
  pid=$(on_server_bg "${CSB_REMOTE_RUN}/monitors/server/pidstat-${name}.txt" \
    "${CSB_SYSSTAT_ENV[@]}" pidstat -H -h -u -r -p "${pids}" 1) &&
    csb_monitor_add server "${pid}" pidstat
}

# csb_monitor_client_pids NAME PID[,PID...]: the same for client processes.
csb_monitor_client_pids() {
  local name=$1 pids=$2 pid
  pid=$(on_client_bg "${CSB_RUN_DIR}/monitors/${CSB_CLIENT_LABEL}/pidstat-${name}.txt" \
    "${CSB_SYSSTAT_ENV[@]}" pidstat -H -h -u -r -p "${pids}" 1) &&
    csb_monitor_add client "${pid}" pidstat
}

# csb_monitors_stop: SIGINT every monitor (all at once per host: sar takes
# up to an interval to finish), then convert sar files to JSON.
csb_monitors_stop() {
  local e host pid name server_script="" client_script=""
  for e in "${CSB_MONITORS[@]}"; do
    read -r host pid name <<<"${e}"
    local group=0
    [[ "${name}" == sar ]] && group=1
    if [[ "${host}" == server ]]; then
      server_script+="( $(csb_kill_script "${pid}" "${name}" 5 INT "${group}")
) & "
    elif [[ "${host}" == client ]]; then
      client_script+="( $(csb_kill_script "${pid}" "${name}" 5 INT "${group}")
) & "
    fi
  done
  [[ -z "${server_script}" ]] || on_server_sh "${server_script} wait" >/dev/null 2>&1 || true
  [[ -z "${client_script}" ]] || bash -c "${client_script} wait" >/dev/null 2>&1 || true
  ((${#CSB_MONITORS[@]})) || return 0
  csb_clients_monitors_stop
  CSB_MONITORS=()
  # shellcheck disable=SC2054 # DEV,TCP,... is one argument of sadf -n
  local sadf=("${CSB_SYSSTAT_ENV[@]}" sadf -j sar.bin -- -n DEV,TCP,ETCP,SOCK -u -r -q)
  on_server_sh "cd $(csb_quote "${CSB_REMOTE_RUN}/monitors/server") && [ -f sar.bin ] && $(csb_quote "${sadf[@]}") >sar.json" ||
    log_warn "sadf on the server failed"
  if [[ -f "${CSB_RUN_DIR}/monitors/${CSB_CLIENT_LABEL}/sar.bin" ]]; then
    (cd "${CSB_RUN_DIR}/monitors/${CSB_CLIENT_LABEL}" && "${sadf[@]}" >sar.json) || log_warn "sadf on the client failed"
  fi
}

# csb_snapshot_counters CELL WHEN: nstat and sockstat on both hosts.
csb_snapshot_counters() {
  local cell=$1 when=$2 others=""
  # The other clients' snapshots are taken meanwhile (each over its own ssh).
  if ((CSB_CLIENTS_N > 1)); then
    csb_clients_snapshot "${cell}" "${when}" &
    others=$!
  fi
  local rd="${CSB_REMOTE_RUN}/monitors/server/counters" ld="${CSB_RUN_DIR}/monitors/${CSB_CLIENT_LABEL}/counters"
  mkdir -p "${ld}"
  nstat -a -s -z -j >"${ld}/${cell}.${when}.nstat.json" 2>/dev/null || log_warn "nstat failed on the client"
  cat /proc/net/sockstat >"${ld}/${cell}.${when}.sockstat" 2>/dev/null || true
  on_server_sh "mkdir -p $(csb_quote "${rd}") && nstat -a -s -z -j >$(csb_quote "${rd}/${cell}.${when}.nstat.json") && cat /proc/net/sockstat >$(csb_quote "${rd}/${cell}.${when}.sockstat")" ||
    log_warn "counter snapshot failed on the server"
  [[ -z "${others}" ]] || wait "${others}" || true
}
