# shellcheck shell=bash
# lib/rundir.sh: the run directory, run.env, cells.tsv, and the run's end.
#
# A run directory <root>/<YYYY-MM-DD_HHMMSS>_<name> is created with mkdir
# (never -p on the last part), so an existing one is never reused or
# overwritten; a second run in the same second gets a -2, -3... suffix.
# The run id (run.env) is that name and 8 random hex digits.
#
#   run.env      what the runner knows: phase, argv, settings, hosts, times,
#                every process started (started.<host>), status
#   cells.tsv    one line per cell: name status start end params error
#   logs/        console.log; logs/<host>/ each tool's stderr
#   env/<host>/  environment captures      monitors/<host>/ sar, mpstat,
#   server/      the server's own log(s)   pidstat, nstat, sockstat
#   raw/<host>/  each cell's raw tool output per client host, verbatim
#
# At exit (csb_on_exit, a step in lib/exit.sh's registry; INT/TERM/HUP too)
# everything the run started on every host is stopped by PID, the hosts'
# files are fetched, how the run ended is recorded (error, cells_begun,
# signal, runner_exit), the summary and report are generated from what exists, and csb
# summarize decides the run's status (ok/partial/failed) from that and every
# cell's verdict and appends it to run.env; the runner logs "run <status>"
# and exits from it, and the last line printed is "results: <dir>".

CSB_RUN_DIR=""
CSB_RUN_ID=""
CSB_RUN_ERROR=""
CSB_CELLS_FAILED=0
CSB_CELLS_BEGUN=0
CSB_ARGV=""

# csb_results_root PHASE: where this phase's runs go: RESULTS_ROOT/<phase>,
# by default runs/<phase> in the repo (git ignores runs/). The committed
# reference runs in <phase>/results/ are scripts/references.sh's alone: a
# user's run never lands beside them.
csb_results_root() {
  printf '%s/%s\n' "$(csb_runs_root)" "$1"
}

# csb_runs_root: the root of a user's runs, RESULTS_ROOT or runs/.
csb_runs_root() {
  printf '%s\n' "${RESULTS_ROOT:-${CSB_ROOT}/runs}"
}

# csb_run_begin PHASE NAME ARGV...: the hosts' work directories, then the
# run directory and run.env, the exit step, what earlier runs left on every
# host, and csb (and report.lua) on every client host. Call it after
# csb_ssh_open and the preflight checks, so a refused run leaves nothing.
csb_run_begin() {
  local phase=$1 name=$2
  shift 2
  CSB_ARGV="$(csb_quote "$@")"
  [[ -n "${RUN_NAME}" ]] && name=${RUN_NAME}
  local root stamp dir n=1
  root="$(csb_results_root "${phase}")"
  csb_results_root_check "${root}"
  # The hosts next: a base directory that is not safe is refused before
  # anything is recorded here.
  csb_workdirs_make
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
  CSB_RUN_ID=$(head -c 4 /dev/urandom | od -An -tx1 | tr -d ' \n')
  CSB_RUN_ID="${CSB_RUN_DIR##*/}.${CSB_RUN_ID}"
  mkdir -p "${CSB_RUN_DIR}"/{logs,server,raw}
  CSB_CONSOLE_LOG="${CSB_RUN_DIR}/logs/console.log"
  : >"${CSB_CONSOLE_LOG}"
  printf 'name\tstatus\tstart\tend\tparams\terror\n' >"${CSB_RUN_DIR}/cells.tsv"
  {
    echo "# Written by the runner; read by: csb summarize. One KEY=VALUE per line, last one wins."
    echo "schema_version=2"
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
  csb_hosts_record
  csb_workdirs_record
  local k
  for k in $(csb_clients); do
    csb_host_put_bins "${k}" "${CSB_CLIENT_BINS[@]}" ||
      die "could not copy ${CSB_CLIENT_BINS[*]} and report.lua to ${CSB_H_WORK[k]}/bin on $(csb_host_name "${k}")" 1
  done
}

# The commands every client host gets in its work directory's bin/ (a
# runner that needs more adds to it before csb_run_begin).
declare -ga CSB_CLIENT_BINS=(csb)

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

csb_epoch_ms() {
  local t
  t=${EPOCHREALTIME/./}
  echo "${t:0:-3}"
}

CSB_CELL_NAME=""
CSB_CELL_START=""
CSB_CELL_PARAMS=""
CSB_PLAN=() # each cell's planned seconds, in order: its start logs `cell k/n`, time left

# csb_cells_shuffle ARRAY SECONDS: the cells of ARRAY, of SECONDS each, planned
# (CSB_PLAN); with REPEAT > 1 in a shuffled order (so a drift of the machine
# spreads over every cell), logged.
csb_cells_shuffle() {
  local -n _cells=$1
  CSB_PLAN+=("${_cells[@]/*/$2}")
  ((REPEAT > 1)) || return 0
  mapfile -t _cells < <(printf '%s\n' "${_cells[@]}" | shuf)
  log_info "REPEAT=${REPEAT}: ${#_cells[@]} cells in shuffled order (cells.tsv keeps it)"
}

# csb_cell_begin NAME KEY=VALUE...: a measured cell starts now.
csb_cell_begin() {
  CSB_CELL_NAME=$1
  shift
  CSB_CELL_PARAMS="$(IFS=';' && echo "$*")"
  [[ "${CSB_CELL_NAME}" =~ ^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$ ]] || die "internal: bad cell name ${CSB_CELL_NAME}"
  ((CSB_CELLS_BEGUN > 0)) || csb_disk_reserve
  csb_snapshot_counters "${CSB_CELL_NAME}" before
  CSB_CELL_START="$(csb_epoch_ms)"
  CSB_CELLS_BEGUN=$((CSB_CELLS_BEGUN + 1))
  ((CSB_CELLS_BEGUN > 1)) || CSB_PLAN_FIRST=${SECONDS}
  log_info "$("${CSB_ROOT}/bin/csb" progress -k "${CSB_CELLS_BEGUN}" -in "${SECONDS}" -first "${CSB_PLAN_FIRST}" \
    -name "${CSB_CELL_NAME} (${CSB_CELL_PARAMS}) starts" -- "${CSB_PLAN[@]:--1}")"
}

# csb_cell_end STATUS [ERROR]: the cell ends; STATUS is ok, failed, refused
# or errors (its output was read, with errors: logged as failed).
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
  # The row is written whole: cells.tsv and the row into a temporary file,
  # renamed over it, so a full disk leaves the old file, never half a row.
  local row tsv="${CSB_RUN_DIR}/cells.tsv" tmp="${CSB_RUN_DIR}/.cells.tsv.tmp"
  # A cell cut short before it started (its begin failed) has no start.
  printf -v row '%s\t%s\t%s\t%s\t%s\t%s\n' "${CSB_CELL_NAME}" "${status}" "${CSB_CELL_START}" "${end}" \
    "${CSB_CELL_PARAMS}" "${err}"
  if ! { { cat -- "${tsv}" && printf '%s' "${row}"; } 2>/dev/null >"${tmp}" && mv -f -- "${tmp}" "${tsv}"; }; then
    rm -f -- "${tmp}"
    csb_disk_note "${tsv}"
    full=1
  fi
  CSB_CELL_START=""
  [[ "${status}" == ok ]] || CSB_CELLS_FAILED=$((CSB_CELLS_FAILED + 1))
  log_info "cell ${CSB_CELL_NAME} ${status/#errors/failed}${err:+: ${err}}"
  CSB_CELL_NAME=""
  if [[ -n "${full}" && -z "${CSB_EXITING:-}" ]]; then
    die "${CSB_RUN_ERROR}; free space there and run again (what was measured so far is kept)" 1
  fi
  if [[ -n "${dead}" ]]; then
    CSB_RUN_ERROR="the server died (PID ${dead})"
    die "the server process(es) ${dead} died; stopping the run (what was measured so far is kept)" 1
  fi
}

# csb_on_exit_hook FUNC: call FUNC at exit, after every tracked process is
# stopped and before the summary (for what a runner changed on a host and
# must undo, such as an address it added).
declare -ga CSB_EXIT_HOOKS=()
csb_on_exit_hook() { CSB_EXIT_HOOKS+=("$1"); }

csb_on_exit() {
  local rc=$?
  set +e
  CSB_EXITING=1
  [[ -n "${CSB_SIGNAL}" ]] && CSB_RUN_ERROR="interrupted by SIG${CSB_SIGNAL}"
  local lost
  lost=$(csb_ssh_lost_hosts)
  if [[ -n "${lost}" ]]; then
    # However the runner noticed (a subshell's failed command), a lost host
    # ends the run with its own reason and status 4.
    [[ -n "${CSB_RUN_ERROR}" ]] || CSB_RUN_ERROR="lost ssh to $(csb_host_name "${lost%%$'\n'*}")"
    ((rc == 130 || rc == 143)) || rc=4
  fi
  csb_hosts_unreachable_report
  csb_monitors_stop
  csb_stop_all
  csb_stop_recorded
  local hook
  for hook in "${CSB_EXIT_HOOKS[@]}"; do
    "${hook}" || log_warn "exit hook ${hook} failed"
  done
  [[ -z "${CSB_CELL_NAME}" ]] || csb_cell_end failed "${CSB_RUN_ERROR:-interrupted}"
  ((!CSB_OOM_RECORDED)) || csb_oom_record after
  csb_workdirs_finish
  # A full results or server disk (found now, or by a write that failed
  # before) makes the run partial or failed, whatever else went right.
  csb_disk_check || ((rc != 0)) || rc=1
  [[ -z "${CSB_RUN_DIR}" ]] || rm -f "${CSB_RUN_DIR}/.disk-reserve"
  # The runner records how it ended (its reason, its exit status so far, a
  # signal); csb summarize decides the run's status from that and every
  # cell's verdict, appends it to run.env, and the log line and the exit
  # status below are read from it.
  ((rc == 0)) || [[ -n "${CSB_RUN_ERROR}" ]] || CSB_RUN_ERROR="runner exited with status ${rc}"
  csb_run_set finished_at "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  csb_run_set error "${CSB_RUN_ERROR}"
  csb_run_set cells_begun "${CSB_CELLS_BEGUN}"
  [[ -z "${CSB_SIGNAL}" ]] || csb_run_set signal "${CSB_SIGNAL}"
  csb_run_set runner_exit "${rc}"
  local summarized=1
  if ! csb_summarize "${CSB_RUN_DIR}"; then
    log_warn "summary generation failed; rerun: bin/csb summarize ${CSB_RUN_DIR}"
    summarized=0
  fi
  local status why=${CSB_RUN_ERROR} found
  status=$(csb_run_get status)
  found=$(csb_run_get summarize_error)
  [[ -z "${found}" ]] || why+="${why:+; }${found}"
  if [[ -z "${status}" ]]; then
    # csb could not decide (it could not read the run): not an ok run.
    log_error "run status undecided: csb summarize could not record it in ${CSB_RUN_DIR}/run.env${why:+ (${why})}"
    ((rc != 0)) || rc=1
  else
    log_info "run ${status}${why:+: ${why}}"
    [[ "${status}" == ok ]] || ((rc != 0)) || rc=1
  fi
  # A summary that could not be written, or a raw file that could not be
  # parsed (the run is then partial), is not an ok run.
  ((summarized)) || ((rc != 0)) || rc=1
  csb_ssh_close
  csb_lab_release
  printf 'results: %s\n' "${CSB_RUN_DIR}"
  # shellcheck disable=SC2034 # read by lib/exit.sh: the status the shell exits with
  CSB_EXIT_STATUS=${rc}
}

# csb_run_get KEY: KEY's value in run.env (the last one), or "".
csb_run_get() {
  [[ -n "${CSB_RUN_DIR}" ]] || return 0
  sed -n "s/^$1=//p" "${CSB_RUN_DIR}/run.env" 2>/dev/null | tail -n 1
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
