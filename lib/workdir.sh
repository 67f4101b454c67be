# shellcheck shell=bash
# lib/workdir.sh: each host's private work directory for one run, and what
# a run that lost a host (or was killed) left there.
#
# Every host of the run (lib/hosts.sh: the server host and each client host,
# the runner's own included) gets a directory REMOTE_DIR/csb-run.XXXXXXXXXX:
# made with mktemp (mode 0700, owned by the ssh user) after the base and
# every directory above it were checked (owner root or you, not writable by
# others unless sticky, no symlink of another user's); checked again
# (csb_remote_guard) before anything is copied into it or run from it. Its
# run.state says which run and which host it is; its pids file lists every
# process the run started there (PID, start time, command line) before that
# process does any work. At the end of the run its files are copied into the
# run directory and it is removed. The next run of the same lab stops, on
# every host, what a run whose runner is gone left running there (each PID
# only while its start time is the recorded one), names each, and files the
# directory under that host's name: <old run>/<label>-leftovers/.

# csb_remote_workdir_script: a script for a host ($1 = the base, REMOTE_DIR;
# $2 = the host's label) that checks the base and every directory above it,
# then makes the run's private work directory in it with its layout and
# prints "csb-workdir=PATH". A directory another user could change is
# refused: "csb-refused=REASON" and exit 2.
csb_remote_workdir_script() {
  cat <<'EOS'
base=$1; label=$2; me=$(id -u)
refuse() { printf 'csb-refused=%s\n' "$*"; exit 2; }
check() {
  q=$1
  if [ -L "$q" ]; then
    lu=$(stat -c %u "$q")
    [ "$lu" = 0 ] || [ "$lu" = "$me" ] ||
      refuse "REMOTE_DIR: $q on the $label host is a symlink owned by $(stat -c %U "$q"): refusing to follow it; set REMOTE_DIR to a directory of your own"
  fi
  [ -d "$q" ] || refuse "REMOTE_DIR: $q on the $label host is not a directory; set REMOTE_DIR to a directory of your own"
  set -- $(stat -L -c '%u %a %U' "$q")
  m=$((0$2))
  if [ "$1" != 0 ] && [ "$1" != "$me" ]; then
    refuse "REMOTE_DIR: $q on the $label host is owned by $3 with mode $(printf %04o $m): refusing to copy or run anything from it; set REMOTE_DIR to a directory of your own"
  fi
  if [ $((m & 022)) -ne 0 ] && [ $((m & 01000)) -eq 0 ]; then
    refuse "REMOTE_DIR: $q on the $label host is owned by $3 with mode $(printf %04o $m): writable by others and not sticky; refusing to use it; set REMOTE_DIR to a directory of your own"
  fi
}
case "$base" in /*) ;; *) refuse "REMOTE_DIR=$base: expected an absolute path on the $label host, such as /tmp";; esac
p=""; rest=${base#/}
while [ -n "$rest" ]; do
  c=${rest%%/*}; rest=${rest#"$c"}; rest=${rest#/}
  [ -n "$c" ] || continue
  check "${p:-/}"
  p="$p/$c"
  if [ ! -e "$p" ] && [ ! -L "$p" ]; then
    (umask 077 && mkdir "$p") 2>/dev/null || refuse "REMOTE_DIR: cannot create $p on the $label host"
  fi
done
check "${p:-/}"
d=$(mktemp -d "${p%/}/csb-run.XXXXXXXXXX") || refuse "REMOTE_DIR: cannot create a work directory in ${p:-/} on the $label host (full disk? see df there)"
set -- $(stat -c '%u %a' "$d")
{ [ "$1" = "$me" ] && [ "$2" = 700 ] && [ ! -L "$d" ]; } || refuse "REMOTE_DIR: $d is not a private directory of yours (owner $1, mode $2)"
cd "$d" && mkdir -p bin server "raw/$label" "raw/warmup/$label" "monitors/$label/counters" "env/$label" "logs/$label" &&
  printf 'csb-workdir=%s\n' "$d"
EOS
}

# csb_remote_guard DIR: a line of script that stops (exit 2) unless DIR on
# its host is still this user's own, mode 0700, not a symlink: run before
# anything is copied into it or executed from it.
csb_remote_guard() {
  local d
  d=$(csb_quote "$1")
  # shellcheck disable=SC2016 # $(stat ...) runs on the host
  printf '[ ! -L %s ] && [ -O %s ] && [ "$(stat -c %%a %s)" = 700 ] || { echo "the work directory %s is no longer private: refusing" >&2; exit 2; }\n' \
    "${d}" "${d}" "${d}" "$1"
}

# csb_workdirs_make: every host's work directory (CSB_H_WORK), refused
# (exit 2) as the script says; an exit step removes them should the run stop
# before its run directory exists.
csb_workdirs_make() {
  local h out rc dir refused
  csb_exit_add csb_workdirs_abandon
  for h in $(csb_hosts); do
    rc=0
    out=$(on_host_sh "${h}" "set -- $(csb_quote "${REMOTE_DIR}" "${CSB_H_LABEL[h]}")
$(csb_remote_workdir_script)" 2>&1) || rc=$?
    refused=$(sed -n 's/^csb-refused=//p' <<<"${out}")
    dir=$(sed -n 's/^csb-workdir=//p' <<<"${out}")
    [[ -z "${refused}" ]] || die "${refused}" 2
    if ((rc != 0)) || [[ "${dir}" != /* ]]; then
      local hn
      hn=$(csb_host_name "${h}")
      die "cannot create a work directory under ${REMOTE_DIR} on ${hn}: $(tail -n 1 <<<"${out}")" 1
    fi
    CSB_H_WORK[h]=${dir}
  done
}

# csb_workdirs_abandon: an exit step: a run that stops between making its
# work directories and its run directory leaves nothing there. (Once the
# run directory exists, csb_workdirs_finish fetches and removes them.)
csb_workdirs_abandon() {
  [[ -z "${CSB_RUN_DIR}" ]] || return 0
  local h
  for h in "${!CSB_H_WORK[@]}"; do
    [[ -z "${CSB_H_WORK[h]}" ]] || on_host "${h}" rm -rf "${CSB_H_WORK[h]}" >/dev/null 2>&1 || true
  done
}

# csb_workdirs_record: in run.env each host's directory, in each directory
# what the run is; then what earlier runs left on every host is stopped.
csb_workdirs_record() {
  local h
  for h in $(csb_hosts); do
    if ((h == 0)); then csb_run_set server_workdir "${CSB_H_WORK[0]}"; else csb_run_set "client.${h}.workdir" "${CSB_H_WORK[h]}"; fi
    local key controller started lines qstate
    key=$(csb_lock_key)
    controller=$(hostname)
    started=$(date -u +%Y-%m-%dT%H:%M:%SZ)
    csb_quote_to lines "lab=${key}" "host=${CSB_H_LABEL[h]}" "controller=${controller}" \
      "runner_pid=$$" "run_dir=${CSB_RUN_DIR:-}" "started=${started}"
    csb_quote_to qstate "${CSB_H_WORK[h]}/run.state"
    on_host_sh "${h}" "printf '%s\\n' ${lines} >${qstate}" ||
      die "cannot write to ${CSB_H_WORK[h]} on $(csb_host_name "${h}")" 1
  done
  for h in $(csb_hosts); do csb_reap_leftovers "${h}"; done
}

# csb_workdirs_finish: at exit, every host's files into the run directory
# (the server's whole directory but bin/; a client's raw/, logs/ and its own
# monitors/ and env/), then its work directory removed (kept when the copy
# fails, or the host is lost: the next run files it).
csb_workdirs_finish() {
  local h label
  for h in "${!CSB_H_WORK[@]}"; do
    [[ -n "${CSB_H_WORK[h]}" ]] || continue
    csb_ssh_lost "${h}" && continue
    # A full results disk has room for the status and the summary (the
    # reserve), not for the hosts' files: they stay where they are, named.
    if [[ "${CSB_RUN_ERROR}" == "disk full:"* ]]; then
      log_warn "the results disk is full: the files of $(csb_host_name "${h}") stay in ${CSB_H_WORK[h]} there; copy them into ${CSB_RUN_DIR} once there is room"
      csb_run_set "${CSB_H_LABEL[h]}_files_left_in" "${CSB_H_WORK[h]}"
      continue
    fi
    label=${CSB_H_LABEL[h]}
    local -a what=()
    ((h == 0)) || what=(raw logs "monitors/${label}" "env/${label}")
    if csb_host_fetch "${h}" "${CSB_H_WORK[h]}" "${CSB_RUN_DIR}" "${what[@]}"; then
      on_host "${h}" rm -rf "${CSB_H_WORK[h]}" >/dev/null 2>&1 || true
    else
      log_warn "could not fetch ${CSB_H_WORK[h]} from $(csb_host_name "${h}"); it stays there"
    fi
    CSB_H_WORK[h]=""
  done
}

# csb_reap_leftovers H: stop what earlier runs of this lab, from this host,
# left running on host H (their runner is gone and their work directory for
# H is still there): each PID only when its start time is still the one
# recorded. Names every one; files the directory into the old run
# directory's <label>-leftovers/ when that is on this host.
csb_reap_leftovers() {
  local h=$1 label=${CSB_H_LABEL[$1]} list
  local who
  who=$(csb_host_name "${h}")
  # One line per leftover directory of ours: DIR<TAB>state lines joined by ';'.
  # shellcheck disable=SC2016 # expanded by the host's shell
  list=$(on_host_sh "${h}" 'for s in '"$(csb_quote "${REMOTE_DIR%/}")"'/csb-run.*/run.state; do
  [ -O "$s" ] || continue; d=${s%/run.state}; [ "$d" = '"$(csb_quote "${CSB_H_WORK[h]}")"' ] && continue
  printf "%s\t;%s\n" "$d" "$(tr "\n" ";" <"$s")"; done') || return 0
  local d state pid rundir stopped key controller
  key=$(csb_lock_key)
  controller=$(hostname)
  while IFS=$'\t' read -r d state; do
    [[ -n "${d}" ]] || continue
    local slab sctl
    slab=$(csb_state_get "${state}" lab)
    sctl=$(csb_state_get "${state}" controller)
    [[ "${slab}" == "${key}" && "${sctl}" == "${controller}" ]] || continue
    # A directory of a run made before run.state named its host is the server's.
    [[ "$(csb_state_get "${state}" host)" == "${label}" ]] || [[ ${h} == 0 && -z "$(csb_state_get "${state}" host)" ]] || continue
    pid=$(csb_state_get "${state}" runner_pid)
    rundir=$(csb_state_get "${state}" run_dir)
    if [[ "${pid}" =~ ^[0-9]+$ ]] && kill -0 "${pid}" 2>/dev/null; then continue; fi
    stopped=$(on_host_sh "${h}" "$(csb_stop_recorded_script "${d}/pids")") || stopped="(could not stop them: see ${d}/pids on ${who})"
    if [[ -n "${stopped}" ]]; then
      log_warn "a run that lost or never cleaned up ${who} (runner PID ${pid:-?}, ${rundir:-run directory unknown}) left these running there; stopped now: ${stopped% }"
    else
      log_info "leftover work directory ${d} of runner PID ${pid:-?} on ${who}: nothing of it was still running"
    fi
    if [[ -n "${rundir}" && -d "${rundir}" ]] && csb_host_fetch "${h}" "${d}" "${rundir}/${label}-leftovers" 2>/dev/null; then
      on_host "${h}" rm -rf "${d}" >/dev/null 2>&1 || true
      log_info "its files on ${who} are now in ${rundir}/${label}-leftovers"
    else
      log_warn "its files stay in ${d} on ${who}"
    fi
  done <<<"${list}"
}

# csb_state_get STATE KEY: KEY's value in run.state lines joined by ';'.
csb_state_get() {
  local rest=";$1" key=";$2="
  [[ "${rest}" == *"${key}"* ]] || return 0
  rest=${rest#*"${key}"}
  printf '%s' "${rest%%;*}"
}
