# shellcheck shell=bash
# lib/monitor.sh: what every host records while a run goes on.
#
# For the whole run, on every host (lib/hosts.sh), into its work directory's
# monitors/<label>/: sar (binary file, every activity sadc collects by
# default: CPU, memory, network DEV/TCP/ETCP/SOCK, the run queue; converted
# with `sadf -j` at the end) and `mpstat -P ALL -o JSON`, one sample a
# second; `pidstat -H -h -u 1` of every process (pidstat prints the ones that
# used CPU in each second) in procs-pidstat.txt: with the pidstat files of
# the run's own processes it tells how much CPU went to anything else during
# each cell and names the top ones (`csb summarize` marks such a cell
# disturbed above DISTURB_THRESHOLD). LAB=local and netns share one kernel:
# the client hosts' files serve the server host too, which has none.
# `pidstat -H -h -u -r` follows the run's own processes (csb_monitor_pids).
# Around every cell, on every host: `nstat -a -s -z -j` (absolute counters,
# history untouched) and /proc/net/sockstat (TIME_WAIT, sockets in use).
# Monitors are stopped with SIGINT, which makes sysstat close its files well
# formed; they are tracked by PID like everything else ("H PID NAME").

# Every sysstat tool runs with this environment: ISO dates, UTC, C locale.
CSB_SYSSTAT_ENV=(env LC_ALL=C TZ=UTC S_TIME_FORMAT=ISO)
declare -ga CSB_MONITORS=()

csb_config_declare DISTURB_THRESHOLD 10 uint \
  "CPU that anything other than the run's processes may take on a host during a cell, in % of one core (mean over the cell, steal included), before the cell is marked disturbed"
csb_config_declare UNSTEADY_CV 10 posint \
  "coefficient of variation, in %, of a cell's per-second throughput (sar, the sender's NIC, after warm-up) above which the cell is marked unsteady (so is a significant trend of half that over the cell)"

# csb_monitor_dir H: host H's monitors directory, on that host.
csb_monitor_dir() { echo "${CSB_H_WORK[$1]}/monitors/${CSB_H_LABEL[$1]}"; }

# csb_monitor_start H FILE NAME CMD ARGS...: one monitor on host H, its
# output in FILE of its monitors directory.
csb_monitor_start() {
  local h=$1 file=$2 name=$3 pid
  shift 3
  pid=$(on_host_bg "${h}" "$(csb_monitor_dir "${h}")/${file}" "$@") || return 1
  CSB_MONITORS+=("${h} ${pid} ${name}")
  csb_run_set "started.${CSB_H_LABEL[h]}" "${pid} ${name}"
}

# csb_monitors_start: sar, mpstat and every process's pidstat on every host.
csb_monitors_start() {
  local h d
  for h in $(csb_hosts); do
    d=$(csb_monitor_dir "${h}")
    csb_monitor_start "${h}" sar.log sar "${CSB_SYSSTAT_ENV[@]}" sar -o "${d}/sar.bin" 1 ||
      log_warn "could not start sar on $(csb_host_name "${h}")"
    csb_monitor_start "${h}" mpstat.json mpstat "${CSB_SYSSTAT_ENV[@]}" mpstat -P ALL -o JSON 1 ||
      log_warn "could not start mpstat on $(csb_host_name "${h}")"
    ((h != 0)) || [[ "${LAB}" == ssh ]] || continue
    csb_monitor_start "${h}" procs-pidstat.txt pidstat "${CSB_SYSSTAT_ENV[@]}" pidstat -H -h -u 1 ||
      log_warn "could not start pidstat on $(csb_host_name "${h}")"
  done
  log_info "monitors started: ${CSB_MONITORS[*]}"
}

# csb_monitor_pids H NAME PID[,PID...]: pidstat on processes of host H, in
# monitors/<label>/pidstat-NAME.txt (it ends by itself with the last PID).
csb_monitor_pids() {
  csb_monitor_start "$1" "pidstat-$2.txt" pidstat "${CSB_SYSSTAT_ENV[@]}" pidstat -H -h -u -r -p "$3" 1 ||
    log_warn "could not start pidstat on $2's processes on $(csb_host_name "$1")"
}

# csb_monitors_stop: SIGINT every monitor (every host at once, all of a
# host together: sar takes up to an interval to finish), then sar's file to
# JSON there.
csb_monitors_stop() {
  ((${#CSB_MONITORS[@]})) || return 0
  local h e eh pid name script
  local -a jobs=()
  # shellcheck disable=SC2054 # DEV,TCP,... is one argument of sadf -n
  local sadf=("${CSB_SYSSTAT_ENV[@]}" sadf -j sar.bin -- -n DEV,TCP,ETCP,SOCK -u -r -q)
  for h in $(csb_hosts); do
    [[ -n "${CSB_H_WORK[h]:-}" ]] || continue
    script=""
    for e in "${CSB_MONITORS[@]}"; do
      read -r eh pid name <<<"${e}"
      ((eh == h)) || continue
      local group=0
      [[ "${name}" != sar ]] || group=1
      script+="$(csb_kill_call "${pid}" "${name}" 5 INT "${group}") &
"
    done
    [[ -n "${script}" ]] || continue
    local fn qdir qsadf hn
    fn=$(csb_kill_fn)
    hn=$(csb_host_name "${h}")
    qdir=$(csb_monitor_dir "${h}")
    csb_quote_to qdir "${qdir}"
    csb_quote_to qsadf "${sadf[@]}"
    {
      on_host_sh "${h}" "${fn}
${script}wait
cd ${qdir} && { [ ! -f sar.bin ] || ${qsadf} >sar.json; }" >/dev/null 2>&1 ||
        log_warn "stopping the monitors or sadf on ${hn} failed: $(csb_pids_of "${h}")"
    } &
    jobs+=($!)
  done
  csb_wait_jobs "${jobs[@]}" || true
  CSB_MONITORS=()
}

# csb_snapshot_counters CELL WHEN: nstat and sockstat on every host, all at
# once (monitors/<label>/counters/CELL.WHEN.{nstat.json,sockstat}).
csb_snapshot_counters() {
  local cell=$1 when=$2 h d
  local -a jobs=()
  for h in $(csb_hosts); do
    if [[ -z "${CSB_H_WORK[h]:-}" ]] || csb_ssh_lost "${h}"; then continue; fi
    d="$(csb_monitor_dir "${h}")/counters"
    local qd qb
    csb_quote_to qd "${d}"
    csb_quote_to qb "${d}/${cell}.${when}"
    on_host_sh "${h}" "mkdir -p ${qd} && nstat -a -s -z -j >${qb}.nstat.json && cat /proc/net/sockstat >${qb}.sockstat" ||
      log_warn "counter snapshot failed on $(csb_host_name "${h}")" &
    jobs+=($!)
  done
  csb_wait_jobs "${jobs[@]}" || true
}
