# shellcheck shell=bash
# lib/cell.sh: a cell's processes on the run's client hosts, started at one
# due time, followed, waited for with a bound, their files brought back.
#
# A cell runs one process or more on each client host that takes part (a
# load generator per host; Phase 3 one connclient per source address): the
# table CSB_P_HOST[i], CSB_P_OUT[i], CSB_P_ERR[i], CSB_P_CMD[i]
# (csb_proc_add). OUT and ERR are paths under the host's work directory,
# the same once fetched into the run directory (raw/<label>/<cell>.txt);
# ERR may be OUT (wrk prints its errors among its text); CSB_P_MORE[i] is
# what else it writes there (h2load's --log-file; csb_proc_also), removed
# before it starts and brought back with OUT. Each process runs
# under `csb start-at`, which writes its timing (due, start, end, exit)
# beside it (csb_proc_timing); each host's processes are followed by one
# pidstat there. One client host is the table's case of one. CSB_P_ALSO[K]
# is a shell script client K runs in the background with its launch (a
# snapshot timed from the due time: it is there before the due however
# slow the host's ssh).

declare -ga CSB_P_HOST=() CSB_P_OUT=() CSB_P_ERR=() CSB_P_CMD=() CSB_P_PID=() CSB_P_RC=() CSB_P_MORE=()
declare -gA CSB_P_ALSO=()

# csb_procs_reset: an empty table for the next cell, its due time not yet set.
csb_procs_reset() {
  CSB_P_HOST=() CSB_P_OUT=() CSB_P_ERR=() CSB_P_CMD=() CSB_P_PID=() CSB_P_RC=() CSB_P_MORE=() CSB_P_ALSO=()
  CSB_P_DUE_MS=0
}

# csb_proc_add K OUT ERR CMD ARGS...: one process of the cell on client K.
csb_proc_add() {
  local k=$1 out=$2 err=$3
  shift 3
  CSB_P_HOST+=("${k}") CSB_P_OUT+=("${out}") CSB_P_ERR+=("${err}") CSB_P_CMD+=("$(csb_quote "$@")") CSB_P_PID+=("") CSB_P_MORE+=("")
}

# csb_proc_also FILE: the last process added also writes FILE (a path
# under the work directory, in OUT's directory).
csb_proc_also() { CSB_P_MORE[${#CSB_P_HOST[@]} - 1]=$1; }

# csb_client_bin K: the directory holding csb, connclient and report.lua on
# client K (its work directory's bin/).
csb_client_bin() { echo "${CSB_H_WORK[$1]}/bin"; }

# csb_proc_timing K OUT: the timing file of client K's output OUT: beside
# it in its host's raw/<label>/, else (Phase 3's raw/<cell>.client-N.json,
# which a glob of results must not catch) in raw/<label>/ by its name.
csb_proc_timing() {
  local label=${CSB_H_LABEL[$1]} base=${2%.*}
  if [[ "$(dirname "$2")" == */"${label}" ]]; then echo "${base}.timing.json"; else echo "raw/${label}/${base##*/}.timing.json"; fi
}

# csb_procs_of K: the table's indexes of client K's processes, one a word.
csb_procs_of() {
  local i
  for i in "${!CSB_P_HOST[@]}"; do ((CSB_P_HOST[i] != $1)) || echo "${i}"; done
}

# csb_procs_hosts: the client hosts with processes in the table.
csb_procs_hosts() { printf '%s\n' "${CSB_P_HOST[@]}" | sort -nu; }

# csb_procs_due: the table's one due time from now (CSB_P_DUE_MS, Unix
# ms): the clocks' lead, and CSB_START_LEAD_PER_PROC_MS for each process
# of the host that starts the most. A cell that times something from it
# sets it before csb_procs_start, which keeps it.
CSB_P_DUE_MS=0
csb_procs_due() {
  local most
  most=$(printf '%s\n' "${CSB_P_HOST[@]}" | sort | uniq -c | sort -rn | awk 'NR == 1 { print $1 }')
  CSB_P_DUE_MS=$(($(csb_epoch_ms) + CSB_START_LEAD_MS + ${most:-0} * CSB_START_LEAD_PER_PROC_MS))
}

# csb_procs_start NAME: start every process of the table at its due time
# (csb_procs_due), each host's in one call, with a pidstat per host following them
# (monitors/<label>/pidstat-NAME.txt) and its CSB_P_ALSO script. A process that could not be started
# is logged with its host and why; its CSB_P_PID stays empty.
csb_procs_start() {
  local name=$1 k i due work out line
  ((CSB_P_DUE_MS > 0)) || csb_procs_due
  due=${CSB_P_DUE_MS}
  for k in $(csb_procs_hosts); do
    work=${CSB_H_WORK[k]}
    local script pidfiles="" mon bin q1 q2 q3 q4 q5 record
    # Every tool runs in the work directory with its soft fd limit raised to
    # the hard one (the plans checked the hard limits). (Each command below
    # expands at most one $(...): see csb_quote_to.)
    script=$(csb_remote_guard "${work}")
    bin=$(csb_client_bin "${k}")
    csb_quote_to q1 "${work}"
    script+="
cd ${q1} || exit 1
ulimit -Sn \"\$(ulimit -Hn)\" 2>/dev/null || true"
    record=$(csb_record_line "${work}" start-at)
    for i in $(csb_procs_of "${k}"); do
      local t pf
      # start-at's pid file stays on the host (run/, never fetched).
      t=$(csb_proc_timing "${k}" "${CSB_P_OUT[i]}")
      pf=$(csb_proc_pidfile "${i}")
      csb_quote_to q1 "${work}/${pf}"
      pidfiles+=" ${q1}"
      csb_log_line CMD "${CSB_H_LABEL[k]}: ${bin}/csb start-at -due ${due} -- ${CSB_P_CMD[i]}"
      local dout=. derr=.
      [[ "${CSB_P_OUT[i]}" != */* ]] || dout=${CSB_P_OUT[i]%/*}
      [[ "${CSB_P_ERR[i]}" != */* ]] || derr=${CSB_P_ERR[i]%/*}
      csb_quote_to q1 "${dout}" "${derr}"
      csb_quote_to q2 "${pf}" "${t}" ${CSB_P_MORE[i]:+"${CSB_P_MORE[i]}"}
      csb_quote_to q3 "${bin}/csb" start-at -due "${due}" -out "${work}/${t}" -pid-file "${work}/${pf}"
      csb_quote_to q4 "${CSB_P_OUT[i]}"
      csb_quote_to q5 "${CSB_P_ERR[i]}"
      script+="
mkdir -p run ${q1} && rm -f ${q2}
setsid ${q3} -- ${CSB_P_CMD[i]} </dev/null >${q4} 2>>${q5} & p=\$!
${record}echo \"proc ${i} \$p\""
    done
    # The host's pidstat waits for every tool to have started (start-at's
    # pid files), then follows them until the last one ends.
    mon="$(csb_monitor_dir "${k}")/pidstat-${name}.txt"
    local waitp
    csb_quote_to q1 "${CSB_SYSSTAT_ENV[@]}"
    # shellcheck disable=SC2016 # expanded by the inner bash on the host
    waitp='for i in $(seq 1 400); do l=""; for f in "$@"; do [ -s "$f" ] || { l=; break; }; l="$l${l:+,}$(cat "$f")"; done; [ -n "$l" ] && exec '"${q1}"' pidstat -H -h -u -r -p "$l" 1; sleep 0.05; done'
    csb_quote_to q1 "${waitp}"
    csb_quote_to q2 "${mon}"
    record=$(csb_record_line "${work}" pidstat)
    script+="
setsid bash -c ${q1} _ ${pidfiles} </dev/null >${q2} 2>&1 & p=\$!
${record}echo \"mon \$p\""
    if [[ -n "${CSB_P_ALSO[${k}]:-}" ]]; then
      csb_quote_to q1 ": csb-also; ${CSB_P_ALSO[${k}]}"
      record=$(csb_record_line "${work}" csb-also)
      script+="
setsid sh -c ${q1} </dev/null >/dev/null 2>&1 & p=\$!
${record}echo \"also \$p\""
    fi
    out=$(on_host_sh "${k}" "${script}") || csb_ssh_lost_stop
    while read -r line; do
      case "${line}" in
        "proc "*)
          read -r _ i p <<<"${line}"
          CSB_P_PID[i]=${p}
          csb_track "${k}" "${p}" start-at
          ;;
        "mon "*)
          CSB_MONITORS+=("${k} ${line#mon } pidstat")
          csb_run_set "started.${CSB_H_LABEL[k]}" "${line#mon } pidstat"
          ;;
        "also "*)
          CSB_MONITORS+=("${k} ${line#also } csb-also")
          csb_run_set "started.${CSB_H_LABEL[k]}" "${line#also } csb-also"
          ;;
      esac
    done <<<"${out}"
    local host_name
    host_name=$(csb_host_name "${k}")
    for i in $(csb_procs_of "${k}"); do
      [[ -n "${CSB_P_PID[i]}" ]] || log_error "could not start ${CSB_P_CMD[i]%% *} on ${host_name}: $(tail -n 3 <<<"${out}" | tr '\n' ' ')"
    done
  done
}

# csb_procs_wait BOUND_S: wait for every started process, one poller per
# host, all at once, at most BOUND_S seconds (then the host's are stopped:
# a tool that does not end is not waited for forever); then each host's
# files back into the run directory and CSB_P_RC set. Returns 0 when every
# tool exited 0.
csb_procs_wait() {
  local bound=$1 k i pids files rc all=0
  local -a waiters=()
  for k in $(csb_procs_hosts); do
    pids="" files=()
    for i in $(csb_procs_of "${k}"); do
      [[ -z "${CSB_P_PID[i]}" ]] || pids+=" ${CSB_P_PID[i]}"
      local timing pidfile
      timing=$(csb_proc_timing "${k}" "${CSB_P_OUT[i]}")
      pidfile=$(csb_proc_pidfile "${i}")
      files+=("${CSB_P_OUT[i]}" "${CSB_P_ERR[i]}" "${timing}" "${pidfile}" ${CSB_P_MORE[i]:+"${CSB_P_MORE[i]}"})
    done
    # shellcheck disable=SC2016 # expanded by the host's shell
    local poll='end=$((SECONDS + '"$((bound))"')); for p in '"${pids}"'; do while csb_alive "$p"; do
  if [ "$SECONDS" -ge "$end" ]; then echo "warning: process $p did not end within '"$((bound))"' s: stopping it" >&2; kill -TERM "$p" 2>/dev/null; sleep 2; kill -KILL "$p" 2>/dev/null; fi
  sleep 0.05; done; done'
    local qwork qfiles
    csb_quote_to qwork "${CSB_H_WORK[k]}"
    csb_quote_to qfiles "${files[@]}"
    {
      on_host_sh "${k}" "${poll}
cd ${qwork} && tar -cf - --ignore-failed-read ${qfiles} 2>/dev/null" |
        tar -C "${CSB_RUN_DIR}" -xf -
    } &
    waiters+=($!)
  done
  csb_wait_jobs "${waiters[@]}" || true
  for i in "${!CSB_P_HOST[@]}"; do
    k=${CSB_P_HOST[i]}
    [[ -z "${CSB_P_PID[i]}" ]] || csb_untrack "${k}" "${CSB_P_PID[i]}"
    # The tool itself (start-at's child, which pidstat followed) is the
    # run's too: in run.env beside start-at.
    local pf child tool=${CSB_P_CMD[i]%% *}
    pf="${CSB_RUN_DIR}/$(csb_proc_pidfile "${i}")"
    if child=$(cat "${pf}" 2>/dev/null) && [[ "${child}" =~ ^[0-9]+$ ]]; then
      csb_run_set "started.${CSB_H_LABEL[k]}" "${child} ${tool##*/}"
    fi
    rm -f "${pf}"
    rc=$(sed -n 's/.*"exit":\([0-9]*\).*/\1/p' "${CSB_RUN_DIR}/$(csb_proc_timing "${k}" "${CSB_P_OUT[i]}")" 2>/dev/null)
    CSB_P_RC[i]=${rc:-255}
    ((CSB_P_RC[i] == 0)) || all=1
  done
  rmdir "${CSB_RUN_DIR}/run" 2>/dev/null || true
  return "${all}"
}

# csb_proc_pidfile I: where process I's start-at writes its tool's PID, on
# its host (run/ of the work directory, brought back only to be read).
csb_proc_pidfile() { echo "run/${CSB_P_OUT[$1]//\//_}.pid"; }

# csb_procs_cell NAME MON BOUND CHECK PARAM...: the table as one measured
# cell NAME (its PARAMs in cells.tsv): begun, its processes run (pidstat
# MON), ended by csb_procs_end BOUND CHECK.
csb_procs_cell() {
  csb_cell_begin "$1" "${@:5}"
  csb_procs_start "$2"
  csb_procs_end "$3" "$4"
}

# csb_procs_end BOUND CHECK: the started cell's processes waited for (at
# most BOUND s); it is ok only when every process exited 0 and every output
# passes `CHECK FILE` (the check a summary makes: it says why not; its exit
# 3, errors in an output it read, ends the cell "errors").
csb_procs_end() {
  local why rc=0
  csb_procs_wait "$1" || { csb_cell_end failed "client process(es) failed: $(csb_procs_failures)"; return; }
  why=$(csb_procs_missing "$2") || rc=$?
  case "${rc}" in
    0) csb_cell_end ok ;;
    3) csb_cell_end errors "${why}" ;;
    *) csb_cell_end failed "no result a summary can read in ${why}" ;;
  esac
}

# csb_procs_failures: "client2: raw/client2/1k.txt exited 1; ..." for the
# processes of the last csb_procs_wait that did not exit 0.
csb_procs_failures() {
  local i out="" why
  for i in "${!CSB_P_HOST[@]}"; do
    [[ "${CSB_P_RC[i]:-255}" != 0 ]] || continue
    why="exited ${CSB_P_RC[i]:-255}"
    [[ -n "${CSB_P_PID[i]}" ]] || why="could not be started"
    [[ "${CSB_P_RC[i]:-255}" != 255 || -z "${CSB_P_PID[i]}" ]] || why="left no timing (stopped, or lost)"
    out+="${CSB_H_LABEL[${CSB_P_HOST[i]}]}: ${CSB_P_OUT[i]} ${why}; "
  done
  printf '%s' "${out%; }"
}

# csb_procs_missing TEST: the outputs (in the run directory) that fail
# `TEST FILE`, each with what TEST said of it, space-separated; returns 1.
# When TEST read every output and found errors (exit 3), prints the first
# one's words (its host's label first with several hosts) and returns 3.
csb_procs_missing() {
  local i out="" why rc first=""
  for i in "${!CSB_P_OUT[@]}"; do
    rc=0 && why=$("$1" "${CSB_RUN_DIR}/${CSB_P_OUT[i]}" 2>&1) || rc=$?
    ((rc == 0)) || out+="${CSB_P_OUT[i]}${why:+ (${why#error: })} "
    ((rc != 3)) || [[ -n "${first}" ]] || first="$([[ "$(csb_procs_hosts | wc -l)" == 1 ]] || echo "${CSB_H_LABEL[${CSB_P_HOST[i]}]}: ")${why#error: }"
    ((rc == 0 || rc == 3)) || first=-
  done
  [[ -n "${out}" ]] || return 0
  [[ "${first}" == - ]] || { printf '%s' "${first}" && return 3; }
  printf '%s' "${out% }" && return 1
}

# csb_procs_wait_event EVENT BOUND_S: wait until every process of the table
# has printed the JSON event line EVENT on its ERR (connclient's
# CONNCLIENT_EVENT_*) or has finished (its OUT is not empty), at most
# BOUND_S; one watcher per host, all at once, each also ending once none of
# its host's processes is left. Returns 1 on timeout.
csb_procs_wait_event() {
  local event=$1 bound=$2 k i rc=0
  local -a watchers=()
  for k in $(csb_procs_hosts); do
    local files=() pids=""
    for i in $(csb_procs_of "${k}"); do
      files+=("${CSB_P_OUT[i]}" "${CSB_P_ERR[i]}")
      [[ -z "${CSB_P_PID[i]}" ]] || pids+=" ${CSB_P_PID[i]}"
    done
    # Every 10 s the host's csb prints how far its processes' ramps are
    # (csb progress -ramp), logged here with the host's name.
    local qwork qargs bin
    bin=$(csb_client_bin "${k}")
    csb_quote_to qwork "${CSB_H_WORK[k]}"
    csb_quote_to qargs "${CONNCLIENT_EVENT_PREFIX}${event}\"" "${bound}" "${pids}" "${bin}/csb" "${files[@]}"
    # shellcheck disable=SC2016 # expanded by the host's shell
    { on_host_sh "${k}" "cd ${qwork} || exit 1
set -- ${qargs}"'
pat=$1; end=$((SECONDS + $2)); pids=$3; csb=$4; shift 4
start=$SECONDS; next=$((SECONDS + 10))
while [ "${SECONDS}" -lt "${end}" ]; do
  if [ "${SECONDS}" -ge "${next}" ]; then
    next=$((SECONDS + 10)); errs=""; i=0
    for f in "$@"; do i=$((i + 1)); [ $((i % 2)) = 0 ] && errs="$errs $f"; done
    # shellcheck disable=SC2086 # the files, one word each
    "$csb" progress -ramp -in $((SECONDS - start)) $errs 2>/dev/null || true
  fi
  ready=1
  i=0
  for f in "$@"; do
    i=$((i + 1))
    if [ $((i % 2)) = 1 ]; then o=$f; continue; fi
    [ -s "$o" ] || grep -qF -- "$pat" "$f" 2>/dev/null || { ready=0; break; }
  done
  [ "$ready" = 1 ] && exit 0
  alive=0
  for p in $pids; do csb_alive "$p" && alive=1; done
  [ "$alive" = 1 ] || exit 1
  sleep 0.2
done
exit 1' | while IFS= read -r line; do log_info "$(csb_host_name "${k}"): ${line}"; done; } &
    watchers+=($!)
  done
  csb_wait_jobs "${watchers[@]}" || rc=1
  return "${rc}"
}

# csb_procs_put_file FILE TEXT: TEXT written whole (temp and rename) as
# FILE (a path under the work directory) on every host of the table, all at
# once: a start or end time every process of a cell reads.
csb_procs_put_file() {
  local file=$1 text=$2 k
  local -a jobs=()
  for k in $(csb_procs_hosts); do
    local qwork qtext qtmp qmv
    csb_quote_to qwork "${CSB_H_WORK[k]}"
    csb_quote_to qtext "${text}"
    csb_quote_to qtmp "${file}.tmp"
    csb_quote_to qmv "${file}.tmp" "${file}"
    on_host_sh "${k}" "cd ${qwork} && printf '%s\n' ${qtext} >${qtmp} && mv -f ${qmv}" &
    jobs+=($!)
  done
  csb_wait_jobs "${jobs[@]}"
}
