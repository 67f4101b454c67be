# shellcheck shell=bash
# lib/rundir.sh: run directories, cell bookkeeping, process tracking, cleanup.
#
# A run directory <root>/<YYYY-MM-DD_HHMMSS>_<name> is created with mkdir
# (never -p on the last part), so an existing one is never reused or
# overwritten; a second run in the same second gets a -2, -3... suffix.
# The run id (run.env) is that name and 8 random hex digits.
#
#   run.env      what the runner knows: phase, argv, settings, times, status
#   cells.tsv    one line per cell: name status start end params error
#   logs/        console.log and each client tool's stdout/stderr
#   env/{server,client}/      environment captures
#   monitors/{server,client}/ sar, mpstat, pidstat, nstat, sockstat
#   server/      the server's own log(s), fetched from the server host
#   raw/         each cell's raw tool output, verbatim
#
# At exit (csb_on_exit, a step in lib/exit.sh's registry; INT/TERM/HUP too)
# everything the run started on either host is stopped by PID, the server
# side's files are fetched, the status (ok/partial/failed) and reason are
# recorded, the summary and report are generated from what exists, and the
# last line printed is "results: <dir>".

CSB_RUN_DIR=""
CSB_RUN_ID=""
CSB_REMOTE_RUN=""
CSB_RUN_ERROR=""
CSB_CELLS_FAILED=0
CSB_CELLS_BEGUN=0
declare -ga CSB_CLIENT_PIDS=() CSB_SERVER_PIDS=()
CSB_ARGV=""

# csb_results_root PHASE: where this phase's runs go.
csb_results_root() {
  if [[ -n "${RESULTS_ROOT}" ]]; then
    printf '%s/%s\n' "${RESULTS_ROOT}" "$1"
  else
    printf '%s/%s/results\n' "${CSB_ROOT}" "$1"
  fi
}

# csb_run_begin PHASE NAME ARGV...: create the run directory, record the run,
# install the traps and create the server-side work directory. Call it after
# csb_ssh_open and the preflight checks, so a refused run leaves nothing.
csb_run_begin() {
  local phase=$1 name=$2
  shift 2
  CSB_ARGV="$(csb_quote "$@")"
  [[ -n "${RUN_NAME}" ]] && name=${RUN_NAME}
  local root stamp dir n=1
  root="$(csb_results_root "${phase}")"
  csb_results_root_check "${root}"
  # The server side next: a base directory that is not safe is refused
  # before anything is recorded here.
  csb_remote_workdir
  mkdir -p "${root}" || die "cannot create results root ${root}" 1
  stamp="$(date -u +%Y-%m-%d_%H%M%S)"
  dir="${root}/${stamp}_${name}"
  until mkdir "${dir}" 2>/dev/null; do
    n=$((n + 1))
    ((n < 100)) || die "cannot create a new run directory under ${root}" 1
    dir="${root}/${stamp}_${name}-${n}"
  done
  CSB_RUN_DIR="$(cd "${dir}" && pwd -P)"
  # The run id is the directory's name and a random part: two runs started
  # in the same second under different results roots (or labs) never share
  # one, whatever they are keyed by.
  CSB_RUN_ID="$(basename "${CSB_RUN_DIR}").$(head -c 4 /dev/urandom | od -An -tx1 | tr -d ' \n')"
  mkdir -p "${CSB_RUN_DIR}"/{logs,env/server,monitors/server,server,raw} \
    "${CSB_RUN_DIR}/env/${CSB_CLIENT_LABEL}" "${CSB_RUN_DIR}/monitors/${CSB_CLIENT_LABEL}"
  CSB_CONSOLE_LOG="${CSB_RUN_DIR}/logs/console.log"
  : >"${CSB_CONSOLE_LOG}"
  printf 'name\tstatus\tstart\tend\tparams\terror\n' >"${CSB_RUN_DIR}/cells.tsv"
  {
    echo "# Written by the runner; read by: csb summarize. One KEY=VALUE per line, last one wins."
    echo "schema_version=1"
    echo "phase=${phase}"
    echo "run_id=${CSB_RUN_ID}"
    echo "lab_lock=$(csb_lock_key)"
    echo "runner=${0#"${CSB_ROOT}/"}"
    echo "argv=${CSB_ARGV}"
    echo "started_at=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "lab=${LAB}"
    echo "config_file=${CSB_CONFIG_FILE:-}"
    echo "git_commit=$(git -C "${CSB_ROOT}" rev-parse HEAD 2>/dev/null || echo unknown)"
    if [[ -n "$(git -C "${CSB_ROOT}" status --porcelain --untracked-files=no 2>/dev/null)" ]]; then
      echo "git_dirty=true"
    else
      echo "git_dirty=false"
    fi
    csb_settings_dump
  } >"${CSB_RUN_DIR}/run.env"
  csb_exit_add csb_on_exit
  log_info "run ${CSB_RUN_ID} (${phase}, LAB=${LAB}, PROFILE=${PROFILE}) in ${CSB_RUN_DIR}"
  log_info "argv: ${CSB_ARGV}"
  csb_run_set server_workdir "${CSB_REMOTE_RUN}"
  csb_remote_workdir_record
  csb_reap_leftovers
  csb_clients_begin
}

# csb_results_root_check DIR: refuse (exit 2) a results directory, or the
# nearest existing directory above it, that someone other than its owner
# may write and that is not sticky: another user could change the raw
# files and reports in it under the run.
csb_results_root_check() {
  local d=$1 mode owner
  while [[ ! -e "${d}" && "${d}" == */* ]]; do d=${d%/*}; done
  [[ -n "${d}" ]] || d=/
  read -r mode owner < <(stat -L -c '%a %U' -- "${d}")
  if (((8#${mode}) & 8#022)) && ! (((8#${mode}) & 8#1000)); then
    die "the results directory ${d} is owned by ${owner} with mode $(printf '%04o' "$((8#${mode}))"): writable by others and not sticky; set RESULTS_ROOT to a directory of your own" 2
  fi
}

# csb_run_set KEY VALUE: record a fact about the run in run.env.
# Outside a run (no run directory yet) it does nothing. A write that fails
# on a full disk stops the run (csb_disk_stop).
csb_run_set() {
  [[ -n "${CSB_RUN_DIR}" ]] || return 0
  printf '%s=%s\n' "$1" "$2" 2>/dev/null >>"${CSB_RUN_DIR}/run.env" ||
    csb_disk_stop "${CSB_RUN_DIR}/run.env"
}

# A full disk. A run whose results directory or server-side work directory
# fills stops with "disk full: no space left on MOUNT (writing PATH)", status
# partial (failed before the first cell), exit 1. So that the status and the
# summary can still be written, each run keeps CSB_DISK_RESERVE_KB of zeros
# in <run>/.disk-reserve from its first cell on and removes it at exit.
# A filesystem with less than CSB_DISK_MIN_KB free counts as full: a tool's
# write to it (a raw output, a monitor) may have failed already.
CSB_DISK_RESERVE_KB=512
CSB_DISK_MIN_KB=64

# csb_disk_full_where DIR [server]: print "MOUNT" and succeed when DIR's
# filesystem (on the server host with "server") has less than
# CSB_DISK_MIN_KB free; fail otherwise, or when df cannot tell.
csb_disk_full_where() {
  local dir=$1 out avail mount
  if [[ "${2:-}" == server ]]; then
    out=$(on_server df -k --output=avail,target "${dir}" 2>/dev/null) || return 1
  else
    out=$(df -k --output=avail,target "${dir}" 2>/dev/null) || return 1
  fi
  read -r avail mount <<<"${out##*$'\n'}"
  [[ "${avail}" =~ ^[0-9]+$ ]] && ((avail < CSB_DISK_MIN_KB)) || return 1
  printf '%s\n' "${mount}"
}

# csb_disk_note PATH [server]: a write to PATH failed or its disk filled:
# record why as the run's error (the first such reason wins) and free the
# reserve, so the cell's line, the status and the summary still fit.
csb_disk_note() {
  local path=$1 where=${2:-} mount
  mount=$(csb_disk_full_where "$(dirname "${path}")" "${where}") || mount="$(dirname "${path}")"
  [[ "${CSB_RUN_ERROR}" == "disk full:"* ]] ||
    CSB_RUN_ERROR="disk full: no space left on ${mount}${where:+ on the ${where} host} (writing ${path})"
  [[ -z "${CSB_RUN_DIR}" ]] || rm -f "${CSB_RUN_DIR}/.disk-reserve"
}

# csb_disk_stop PATH [server]: csb_disk_note, then stop the run (outside the
# exit path, which records the status next).
csb_disk_stop() {
  csb_disk_note "$@"
  [[ -n "${CSB_EXITING:-}" ]] && return 1
  die "${CSB_RUN_ERROR}; free space there and run again (what was measured so far is kept)" 1
}

# csb_disk_check: fail (after csb_disk_note) when the results directory or
# the server's work directory is full.
csb_disk_check() {
  [[ -n "${CSB_RUN_DIR}" ]] || return 0
  if csb_disk_full_where "${CSB_RUN_DIR}" >/dev/null; then
    csb_disk_note "${CSB_RUN_DIR}/raw/"
    return 1
  fi
  if [[ -n "${CSB_REMOTE_RUN}" ]] && csb_disk_full_where "${CSB_REMOTE_RUN}" server >/dev/null; then
    csb_disk_note "${CSB_REMOTE_RUN}/" server
    return 1
  fi
}

csb_epoch_ms() {
  local t
  t=${EPOCHREALTIME/./}
  echo "${t:0:-3}"
}

CSB_CELL_NAME=""
CSB_CELL_START=""
CSB_CELL_PARAMS=""

# csb_cell_begin NAME KEY=VALUE...: a measured cell starts now.
csb_cell_begin() {
  CSB_CELL_NAME=$1
  shift
  CSB_CELL_PARAMS="$(
    IFS=';'
    echo "$*"
  )"
  csb_check_name "${CSB_CELL_NAME}" || die "internal: bad cell name ${CSB_CELL_NAME}"
  if ((CSB_CELLS_BEGUN == 0)) && [[ -n "${CSB_RUN_DIR}" ]]; then
    head -c "$((CSB_DISK_RESERVE_KB * 1024))" /dev/zero 2>/dev/null >"${CSB_RUN_DIR}/.disk-reserve" ||
      { rm -f "${CSB_RUN_DIR}/.disk-reserve"; csb_disk_stop "${CSB_RUN_DIR}/.disk-reserve"; }
  fi
  csb_snapshot_counters "${CSB_CELL_NAME}" before
  CSB_CELL_START="$(csb_epoch_ms)"
  CSB_CELLS_BEGUN=$((CSB_CELLS_BEGUN + 1))
  log_info "cell ${CSB_CELL_NAME} (${CSB_CELL_PARAMS}) starts"
}

# csb_cell_end STATUS [ERROR]: the cell ends; STATUS is ok, failed or refused.
csb_cell_end() {
  local status=$1 err=${2:-}
  local end dead=""
  end="$(csb_epoch_ms)"
  # A server that died during the cell fails it, and the run stops there
  # (outside the exit path, where the servers are being stopped anyway).
  if [[ -z "${CSB_EXITING:-}" ]] && ((${#CSB_HTTP_PIDS[@]})); then
    dead=$(csb_http_dead)
    if [[ -n "${dead}" ]]; then
      status=failed
      err="the server process(es) ${dead} died during the cell (see server/ in the run directory)${err:+; ${err}}"
    fi
  fi
  csb_snapshot_counters "${CSB_CELL_NAME}" after || true
  err=${err//$'\t'/ }
  err=${err//$'\n'/ }
  local full=""
  if [[ -z "${CSB_EXITING:-}" ]] && ! csb_disk_check; then
    full=1
    status=failed
    err="${CSB_RUN_ERROR}${err:+; ${err}}"
  fi
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "${CSB_CELL_NAME}" "${status}" "${CSB_CELL_START}" "${end}" \
    "${CSB_CELL_PARAMS}" "${err}" 2>/dev/null >>"${CSB_RUN_DIR}/cells.tsv" ||
    { csb_disk_note "${CSB_RUN_DIR}/cells.tsv"; full=1; }
  [[ "${status}" == ok ]] || CSB_CELLS_FAILED=$((CSB_CELLS_FAILED + 1))
  log_info "cell ${CSB_CELL_NAME} ${status}${err:+: ${err}}"
  CSB_CELL_NAME=""
  if [[ -n "${full}" && -z "${CSB_EXITING:-}" ]]; then
    die "${CSB_RUN_ERROR}; free space there and run again (what was measured so far is kept)" 1
  fi
  if [[ -n "${dead}" ]]; then
    CSB_RUN_ERROR="the server died (PID ${dead})"
    die "the server process(es) ${dead} died; stopping the run (what was measured so far is kept)" 1
  fi
}

# Process tracking: "PID NAME" per entry; NAME is matched against the
# process's command line before it is signalled.
# Every tracked PID is also recorded in run.env (started.server / .client).
csb_track_client() {
  CSB_CLIENT_PIDS+=("$1 $2")
  [[ -z "${CSB_RUN_DIR}" ]] || csb_run_set started.client "$1 $2"
}
csb_track_server() {
  CSB_SERVER_PIDS+=("$1 $2")
  [[ -z "${CSB_RUN_DIR}" ]] || csb_run_set started.server "$1 $2"
}
csb_untrack_client() { csb_untrack CSB_CLIENT_PIDS "$1"; }
csb_untrack_server() { csb_untrack CSB_SERVER_PIDS "$1"; }
csb_untrack() {
  local -n arr=$1
  local pid=$2 e keep=()
  for e in "${arr[@]}"; do
    [[ "${e%% *}" == "${pid}" ]] || keep+=("${e}")
  done
  arr=("${keep[@]}")
}

# csb_client_run LOG CMD ARGS...: run a client-side tool to completion in the
# background (so a signal is handled at once), tracked by PID. Returns its
# exit status.
csb_client_run() {
  local log=$1
  shift
  log_cmd "$@"
  "$@" </dev/null >"${log}" 2>&1 &
  local pid=$!
  csb_track_client "${pid}" "$1"
  local rc=0
  wait "${pid}" || rc=$?
  csb_untrack_client "${pid}"
  return "${rc}"
}

# csb_on_exit_hook FUNC: call FUNC at exit, after every tracked process is
# stopped and before the summary (for what a runner changed on a host and
# must undo, such as an address it added).
declare -ga CSB_EXIT_HOOKS=()
csb_on_exit_hook() { CSB_EXIT_HOOKS+=("$1"); }

csb_stop_all() {
  local e
  for e in "${CSB_CLIENT_PIDS[@]}"; do
    log_info "stopping client process ${e}"
    csb_stop_client_pid "${e%% *}" "${e#* }" 5 >/dev/null 2>&1 || true
  done
  CSB_CLIENT_PIDS=()
  for e in "${CSB_SERVER_PIDS[@]}"; do
    log_info "stopping server process ${e}"
    # shellcheck disable=SC2086 # ${e} is "PID NAME", two words by design
    csb_stop_server_pid ${e} 10 || log_warn "could not stop server process ${e}; stop it by hand"
  done
  CSB_SERVER_PIDS=()
}

csb_on_exit() {
  local rc=$?
  set +e
  CSB_EXITING=1
  [[ -n "${CSB_SIGNAL}" ]] && CSB_RUN_ERROR="interrupted by SIG${CSB_SIGNAL}"
  if csb_ssh_is_lost; then
    # However the runner noticed (a subshell's failed command), a lost
    # server host ends the run with its own reason and status 4.
    [[ -n "${CSB_RUN_ERROR}" ]] || CSB_RUN_ERROR="lost ssh to the server host ${SERVER_SSH}"
    ((rc == 130 || rc == 143)) || rc=4
  fi
  csb_server_unreachable_report
  csb_monitors_stop
  csb_stop_all
  csb_clients_stop_all
  local hook
  for hook in "${CSB_EXIT_HOOKS[@]}"; do
    "${hook}" || log_warn "exit hook ${hook} failed"
  done
  if [[ -n "${CSB_CELL_NAME}" ]]; then
    csb_cell_end failed "${CSB_RUN_ERROR:-interrupted}"
  fi
  if [[ -n "${CSB_REMOTE_RUN}" ]] && ! csb_ssh_is_lost; then
    if csb_server_fetch "${CSB_REMOTE_RUN}" "${CSB_RUN_DIR}"; then
      on_server rm -rf "${CSB_REMOTE_RUN}" >/dev/null 2>&1
    else
      log_warn "could not fetch ${CSB_REMOTE_RUN} from the server; it stays there"
    fi
  fi
  csb_clients_finish
  # A full results or server disk (found now, or by a write that failed
  # before) makes the run partial or failed, whatever else went right.
  csb_disk_check || ((rc != 0)) || rc=1
  [[ -z "${CSB_RUN_DIR}" ]] || rm -f "${CSB_RUN_DIR}/.disk-reserve"
  local status=ok
  if ((rc != 0)) || [[ -n "${CSB_RUN_ERROR}" ]] || ((CSB_CELLS_FAILED > 0)); then
    # A run cut short once measuring began (a signal, a dead server, a
    # dropped ssh, a failed cell) is partial: what was measured so far is
    # kept. One that never began measuring failed.
    if ((CSB_CELLS_BEGUN > 0)) || [[ -n "${CSB_SIGNAL}" ]]; then status=partial; else status=failed; fi
    [[ -n "${CSB_RUN_ERROR}" ]] || CSB_RUN_ERROR="runner exited with status ${rc}"
    ((CSB_CELLS_FAILED > 0 && rc == 0)) && CSB_RUN_ERROR="${CSB_CELLS_FAILED} cell(s) failed or refused"
    ((rc != 0)) || rc=1
  fi
  csb_run_set finished_at "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  csb_run_set status "${status}"
  csb_run_set error "${CSB_RUN_ERROR}"
  log_info "run ${status}${CSB_RUN_ERROR:+: ${CSB_RUN_ERROR}}"
  if ! csb_summarize "${CSB_RUN_DIR}"; then
    log_warn "summary generation failed; rerun: bin/csb summarize ${CSB_RUN_DIR}"
    # A summary that could not be written, or a raw file that could not be
    # parsed (csb summarize then marks the run partial), is not an ok run.
    [[ ! -x "${CSB_ROOT}/bin/csb" ]] || ((rc != 0)) || rc=1
  fi
  csb_ssh_close
  csb_lab_release
  printf 'results: %s\n' "${CSB_RUN_DIR}"
  # shellcheck disable=SC2034 # read by lib/exit.sh: the status the shell exits with
  CSB_EXIT_STATUS=${rc}
}

# csb_server_unreachable_report: on the way out with ssh lost (and one more
# try failed), name everything the run leaves running on the server host and
# forget it here: the next run against that host stops it (csb_reap_leftovers).
csb_server_unreachable_report() {
  csb_ssh_is_lost || return 0
  csb_ssh_lost_check && return 0
  local e host pid name left=()
  for e in "${CSB_MONITORS[@]}"; do
    read -r host pid name <<<"${e}"
    [[ "${host}" == server ]] && left+=("PID ${pid} (${name})")
  done
  for e in "${CSB_SERVER_PIDS[@]}"; do
    left+=("PID ${e%% *} (${e#* })")
  done
  local list
  list=$(printf '%s, ' "${left[@]}")
  log_error "the server host ${SERVER_SSH} is unreachable: left running there, to be stopped by the next run against it (recorded in ${CSB_REMOTE_RUN}/pids): ${list%, }"
  csb_run_set server_leftovers "${list%, }"
  local -a keep=()
  for e in "${CSB_MONITORS[@]}"; do
    [[ "${e%% *}" == server ]] || keep+=("${e}")
  done
  CSB_MONITORS=("${keep[@]}")
  CSB_SERVER_PIDS=()
}

# csb_summarize DIR: regenerate summary.json, summary.csv and the report;
# csb's errors are logged (they name the file and what was wrong).
csb_summarize() {
  [[ -x "${CSB_ROOT}/bin/csb" ]] || return 1
  local err line rc=0
  err=$("${CSB_ROOT}/bin/csb" summarize "$1" 2>&1 >>"${CSB_CONSOLE_LOG:-/dev/null}") || rc=$?
  while IFS= read -r line; do
    [[ -z "${line}" ]] || log_error "csb summarize: ${line#error: }"
  done <<<"${err}"
  return "${rc}"
}
