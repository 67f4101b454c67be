# shellcheck shell=bash
# lib/remote.sh: run commands on the server host.
#
# A command is built as an array and quoted for the remote shell exactly once,
# here, with printf %q; the resulting script is fed to `bash -s` on the server
# (over ssh) or on this host (LAB=local). So the same quoting runs in every
# lab, and the server's login shell never re-parses an argument.
#
# ssh uses BatchMode (never a password prompt) and one master connection per
# run (ControlMaster), so a phase pays one handshake, not one per command.

csb_config_declare SSH_RETRY 20 uint \
  "seconds to keep trying when ssh to the server host is lost mid-run before the run stops (0: at once)"

CSB_SSH_CTL_DIR=""

# Every script sent to the server host starts with this: an ordinary user's
# PATH lacks the sbin directories that hold sysctl, ss, ip, tc and ethtool.
# shellcheck disable=SC2016 # expanded by the server's shell
CSB_REMOTE_PRELUDE='PATH="${PATH:-/usr/bin:/bin}:/usr/local/sbin:/usr/sbin:/sbin"; export PATH'

csb_ssh_base() {
  local -a opts=(-o BatchMode=yes -o ConnectTimeout=5 -o ServerAliveInterval=5
    -o ServerAliveCountMax=3 -o LogLevel=ERROR)
  if [[ -n "${CSB_SSH_CTL_DIR}" ]]; then
    opts+=(-o ControlMaster=auto -o "ControlPath=${CSB_SSH_CTL_DIR}/ctl" -o ControlPersist=300)
  fi
  if [[ "${LAB}" == netns ]]; then
    # The lab's own key and host key; the user's ssh config plays no part.
    opts+=(-F /dev/null -o IdentitiesOnly=yes)
  fi
  if [[ -n "${SSH_KNOWN_HOSTS}" ]]; then
    opts+=(-o "UserKnownHostsFile=${SSH_KNOWN_HOSTS}" -o StrictHostKeyChecking=yes)
  fi
  if [[ -n "${SSH_KEY}" ]]; then
    opts+=(-i "${SSH_KEY}")
  fi
  printf '%s\n' ssh "${opts[@]}"
}

# csb_ssh_open: start the per-run master connection (a no-op for LAB=local).
csb_ssh_open() {
  csb_cpu_pin_self
  csb_lab_is_remote || return 0
  CSB_SSH_CTL_DIR="$(mktemp -d /tmp/csb-ssh.XXXXXX)"
  # A refusal in preflight, before csb_run_begin adds the run's exit step,
  # must still stop the master connection.
  csb_exit_add csb_ssh_close
  local -a ssh
  mapfile -t ssh < <(csb_ssh_base)
  if ! "${ssh[@]}" "${SERVER_SSH}" true </dev/null; then
    rm -rf "${CSB_SSH_CTL_DIR}"
    CSB_SSH_CTL_DIR=""
    die "cannot reach the server over ssh as ${SERVER_SSH} (BatchMode: needs key auth). Check: ssh ${SERVER_SSH} true" 4
  fi
  csb_clients_open
}

# csb_ssh_close: stop the master connection (and the client hosts' ones:
# the run's end calls this before the exit steps would).
csb_ssh_close() {
  [[ -n "${CSB_SSH_CTL_DIR}" ]] || return 0
  csb_clients_close
  local -a ssh
  mapfile -t ssh < <(csb_ssh_base)
  "${ssh[@]}" -O exit "${SERVER_SSH}" </dev/null >/dev/null 2>&1 || true
  rm -rf "${CSB_SSH_CTL_DIR}"
  CSB_SSH_CTL_DIR=""
}

# csb_quote ARGS...: the arguments as one shell-quoted command line.
csb_quote() {
  (($#)) || return 0
  local q
  q="$(printf '%q ' "$@")"
  printf '%s' "${q% }"
}

# on_server_sh SCRIPT: run a bash script on the server host. Its stdout and
# stderr come back; its stdin is the script, so it must not read stdin.
# When ssh itself fails (exit 255) the connection is retried for SSH_RETRY
# seconds and the script run again; when it stays lost the run stops
# (csb_ssh_lost). CSB_SSH_ONCE=1 (on_server_bg) never runs a script twice.
on_server_sh() {
  local script pin rc=0
  pin=$(csb_cpu_pin_line "${CSB_CPUS_SERVER}")
  script="${CSB_REMOTE_PRELUDE}
${pin}
$1"
  if ! csb_lab_is_remote; then
    # (The status is passed on explicitly: a bare return inside an exit
    # step would return the status the shell is exiting with.)
    printf '%s\n' "${script}" | bash -s || rc=$?
    return "${rc}"
  fi
  csb_ssh_lost_check || return 255
  local -a ssh
  mapfile -t ssh < <(csb_ssh_base)
  printf '%s\n' "${script}" | "${ssh[@]}" "${SERVER_SSH}" bash -s || rc=$?
  ((rc == 255)) || return "${rc}"
  csb_ssh_recover || return 255
  [[ "${CSB_SSH_ONCE:-0}" != 1 ]] || return 255
  rc=0
  printf '%s\n' "${script}" | "${ssh[@]}" "${SERVER_SSH}" bash -s || rc=$?
  return "${rc}"
}

# csb_ssh_lost_mark / csb_ssh_is_lost: a marker beside the master connection,
# so subshells ($(on_server_sh ...)) and the runner agree that ssh is gone.
csb_ssh_lost_mark() { [[ -z "${CSB_SSH_CTL_DIR}" ]] || : >"${CSB_SSH_CTL_DIR}/lost"; }
csb_ssh_is_lost() { [[ -n "${CSB_SSH_CTL_DIR}" && -e "${CSB_SSH_CTL_DIR}/lost" ]]; }

# csb_ssh_lost_check: 0 when ssh may be used. Once it is lost, the runner
# itself (not a subshell) stops the run here; on the way out (CSB_EXITING)
# one quick reconnection is tried before the server is given up.
csb_ssh_lost_check() {
  csb_ssh_is_lost || return 0
  if [[ -n "${CSB_EXITING:-}" ]]; then
    [[ -z "${CSB_SSH_EXIT_TRIED:-}" ]] || return 1
    CSB_SSH_EXIT_TRIED=1
    local -a ssh
    mapfile -t ssh < <(csb_ssh_base)
    if "${ssh[@]}" "${SERVER_SSH}" true </dev/null >/dev/null 2>&1; then
      rm -f "${CSB_SSH_CTL_DIR}/lost"
      log_info "ssh to ${SERVER_SSH} is back: stopping what the run started there"
      return 0
    fi
    return 1
  fi
  if [[ "${BASHPID}" == "$$" ]]; then
    # shellcheck disable=SC2034 # read by lib/rundir.sh (csb_on_exit)
    CSB_RUN_ERROR="lost ssh to the server host ${SERVER_SSH}"
    die "lost ssh to the server host ${SERVER_SSH} for ${SSH_RETRY} s; stopping the run (what was measured so far is kept)" 4
  fi
  return 1
}

# csb_ssh_recover: after ssh failed, try to reconnect for SSH_RETRY seconds,
# logging the wait. 0 when the server host answers again.
csb_ssh_recover() {
  local -a ssh
  mapfile -t ssh < <(csb_ssh_base)
  local start=${SECONDS} waited=0
  [[ -n "${CSB_EXITING:-}" ]] && return 1
  log_warn "ssh to ${SERVER_SSH} failed: retrying for up to ${SSH_RETRY} s"
  while ((waited < SSH_RETRY)); do
    if "${ssh[@]}" "${SERVER_SSH}" true </dev/null >/dev/null 2>&1; then
      log_info "ssh to ${SERVER_SSH} is back after ${waited} s"
      return 0
    fi
    sleep 1
    waited=$((SECONDS - start))
    ((waited % 5 == 0)) && log_warn "ssh to ${SERVER_SSH} still lost: ${waited} s of at most ${SSH_RETRY} s"
  done
  csb_ssh_lost_mark
  log_error "ssh to ${SERVER_SSH} lost for ${waited} s: giving up"
  csb_ssh_lost_check
  return 1
}

# on_server CMD ARGS...: run one command on the server host.
on_server() {
  on_server_sh "$(csb_quote "$@")"
}

# on_server_bg LOG CMD ARGS...: start CMD detached on the server, stdin from
# /dev/null and stdout+stderr to LOG (a server-side path), in its own session
# so the ssh channel can close. Prints the PID. Inside a run, the PID, its
# start time and the command are appended to the run's server-side pids
# file, so a run that loses the server can have them stopped later
# (csb_reap_leftovers).
on_server_bg() {
  local log=$1
  shift
  local record=""
  if [[ -n "${CSB_REMOTE_RUN:-}" ]]; then
    # shellcheck disable=SC2016 # expanded by the server's shell
    record='st=$(sed "s/.*) //" /proc/$p/stat 2>/dev/null | cut -d" " -f20); printf "%s %s %s\n" "$p" "${st:-0}" '"$(csb_quote "$(csb_quote "$@")")"' >>'"$(csb_quote "${CSB_REMOTE_RUN}/pids")"'; '
  fi
  local guard=""
  [[ -z "${CSB_REMOTE_RUN:-}" ]] || guard="$(csb_remote_guard "${CSB_REMOTE_RUN}")"$'\n'
  CSB_SSH_ONCE=1 on_server_sh "${guard}setsid $(csb_quote "$@") </dev/null >$(csb_quote "${log}") 2>&1 & p=\$!; ${record}echo \$p"
}

# on_client_bg LOG CMD ARGS...: the same on this host (the client). Prints the PID.
on_client_bg() {
  local log=$1
  shift
  setsid "$@" </dev/null >"${log}" 2>&1 &
  echo "$!"
}

# csb_kill_script PID NAME [GRACE_S] [SIGNAL] [GROUP]: a script that stops
# PID only if its command line still names NAME (so a reused PID is never
# hit): SIGNAL (default TERM), up to GRACE_S seconds, then KILL. GROUP=1
# signals PID's process group (started by setsid, so PID leads it): sar's
# sadc child stops at once with it instead of after its next interval.
csb_kill_script() {
  local pid=$1 name=$2 grace=${3:-10} sig=${4:-TERM} group=${5:-0}
  # shellcheck disable=SC2016 # $pid expands in the generated script
  local target='"$pid"'
  # shellcheck disable=SC2016 # likewise
  ((group)) && target='-- "-$pid"'
  cat <<EOF
pid=$(csb_quote "${pid}"); name=$(csb_quote "${name}")
if [ -r /proc/\$pid/cmdline ] && tr '\\0' ' ' </proc/\$pid/cmdline | grep -qF -- "\$name"; then
  kill -$(csb_quote "${sig}") ${target} 2>/dev/null || true
  i=0
  while kill -0 "\$pid" 2>/dev/null && [ \$i -lt $((grace * 10)) ]; do sleep 0.1; i=\$((i+1)); done
  if kill -0 "\$pid" 2>/dev/null; then kill -KILL "\$pid" 2>/dev/null || true; echo "killed \$pid (\$name) with KILL" >&2; fi
fi
EOF
}

# csb_stop_server_pid PID NAME [GRACE_S] [SIGNAL]
csb_stop_server_pid() { on_server_sh "$(csb_kill_script "$@")"; }

# csb_stop_client_pid PID NAME [GRACE_S] [SIGNAL]
csb_stop_client_pid() { bash -c "$(csb_kill_script "$@")"; }

# csb_server_fetch REMOTE_DIR LOCAL_DIR: copy a server-side directory's
# contents into a local directory (tar over the same channel).
csb_server_fetch() {
  local rdir=$1 ldir=$2
  mkdir -p "${ldir}"
  on_server_sh "cd $(csb_quote "${rdir}") && tar -cf - --exclude=./bin ." | tar -C "${ldir}" -xf -
}

# csb_server_put LOCAL_FILE REMOTE_PATH [MODE]: copy one file to the server.
csb_server_put() {
  local src=$1 dst=$2 mode=${3:-0644}
  local script
  script="$(csb_remote_guard "${CSB_REMOTE_RUN}")
mkdir -p $(csb_quote "$(dirname "${dst}")") && cat >$(csb_quote "${dst}.tmp") && chmod ${mode} $(csb_quote "${dst}.tmp") && mv -f $(csb_quote "${dst}.tmp") $(csb_quote "${dst}")"
  if csb_lab_is_remote; then
    local -a ssh
    mapfile -t ssh < <(csb_ssh_base)
    "${ssh[@]}" "${SERVER_SSH}" "${script}" <"${src}"
  else
    bash -c "${script}" <"${src}"
  fi
}

# csb_remote_workdir_script: a script for the server host ($1 = the base,
# REMOTE_DIR) that checks the base and every directory above it, then makes
# this run's private work directory in it and prints its path. A directory
# another user could change (theirs, or writable by others and not sticky,
# or a symlink of theirs) is refused: exit 2 and one line on stderr.
csb_remote_workdir_script() {
  cat <<'EOS'
base=$1; me=$(id -u)
refuse() { printf 'csb-refused=%s\n' "$*"; exit 2; }
check() {
  q=$1
  if [ -L "$q" ]; then
    lu=$(stat -c %u "$q")
    [ "$lu" = 0 ] || [ "$lu" = "$me" ] ||
      refuse "REMOTE_DIR: $q on the server host is a symlink owned by $(stat -c %U "$q"): refusing to follow it; set REMOTE_DIR to a directory of your own"
  fi
  [ -d "$q" ] || refuse "REMOTE_DIR: $q on the server host is not a directory; set REMOTE_DIR to a directory of your own"
  set -- $(stat -L -c '%u %a %U' "$q")
  m=$((0$2))
  if [ "$1" != 0 ] && [ "$1" != "$me" ]; then
    refuse "REMOTE_DIR: $q on the server host is owned by $3 with mode $(printf %04o $m): refusing to copy or run anything from it; set REMOTE_DIR to a directory of your own"
  fi
  if [ $((m & 022)) -ne 0 ] && [ $((m & 01000)) -eq 0 ]; then
    refuse "REMOTE_DIR: $q on the server host is owned by $3 with mode $(printf %04o $m): writable by others and not sticky; refusing to use it; set REMOTE_DIR to a directory of your own"
  fi
}
case "$base" in /*) ;; *) refuse "REMOTE_DIR=$base: expected an absolute path on the server host, such as /tmp";; esac
p=""; rest=${base#/}
while [ -n "$rest" ]; do
  c=${rest%%/*}; rest=${rest#"$c"}; rest=${rest#/}
  [ -n "$c" ] || continue
  check "${p:-/}"
  p="$p/$c"
  if [ ! -e "$p" ] && [ ! -L "$p" ]; then
    (umask 077 && mkdir "$p") 2>/dev/null || refuse "REMOTE_DIR: cannot create $p on the server host"
  fi
done
check "${p:-/}"
d=$(mktemp -d "${p%/}/csb-run.XXXXXXXXXX") || refuse "REMOTE_DIR: cannot create a work directory in ${p:-/} on the server host (full disk? see df there)"
set -- $(stat -c '%u %a' "$d")
{ [ "$1" = "$me" ] && [ "$2" = 700 ] && [ ! -L "$d" ]; } || refuse "REMOTE_DIR: $d is not a private directory of yours (owner $1, mode $2)"
mkdir -p "$d/bin" "$d/server" "$d/monitors/server" "$d/env/server" && printf 'csb-workdir=%s\n' "$d"
EOS
}

# csb_remote_guard DIR: a line of script that stops (exit 2) unless DIR on
# the server host is still this user's own, mode 0700, not a symlink: run
# before anything is copied into it or executed from it.
csb_remote_guard() {
  local d
  d=$(csb_quote "$1")
  # shellcheck disable=SC2016 # $(stat ...) runs on the server host
  printf '[ ! -L %s ] && [ -O %s ] && [ "$(stat -c %%a %s)" = 700 ] || { echo "the work directory %s on the server host is no longer private: refusing" >&2; exit 2; }\n' \
    "${d}" "${d}" "${d}" "$1"
}

# csb_remote_workdir: make this run's private work directory on the server
# host (sets CSB_REMOTE_RUN). csb_remote_workdir_record then writes in it what
# the run is, so a later run can stop what this one leaves behind
# (csb_reap_leftovers).
csb_remote_workdir() {
  local out rc=0 dir refused
  out=$(on_server_sh "set -- $(csb_quote "${REMOTE_DIR}")
$(csb_remote_workdir_script)" 2>&1) || rc=$?
  refused=$(sed -n 's/^csb-refused=//p' <<<"${out}")
  dir=$(sed -n 's/^csb-workdir=//p' <<<"${out}")
  [[ -z "${refused}" ]] || die "${refused}" 2
  if ((rc != 0)) || [[ "${dir}" != /* ]]; then
    die "cannot create a work directory under ${REMOTE_DIR} on the server host: $(tail -n 1 <<<"${out}")" 1
  fi
  CSB_REMOTE_RUN=${dir}
  csb_exit_add csb_remote_workdir_abandon
}

# csb_remote_workdir_abandon: an exit step: a run that stops between making
# its server-side work directory and its run directory leaves nothing there.
# (Once the run directory exists, csb_on_exit fetches and removes it.)
csb_remote_workdir_abandon() {
  [[ -n "${CSB_REMOTE_RUN}" && -z "${CSB_RUN_DIR}" ]] || return 0
  on_server rm -rf "${CSB_REMOTE_RUN}" >/dev/null 2>&1 || true
}

# csb_remote_workdir_record: what the run is, in its server-side directory.
csb_remote_workdir_record() {
  on_server_sh "printf '%s\\n' $(csb_quote "lab=$(csb_lock_key)" "controller=$(hostname)" \
    "runner_pid=$$" "run_dir=${CSB_RUN_DIR:-}" "started=$(date -u +%Y-%m-%dT%H:%M:%SZ)") >$(csb_quote "${CSB_REMOTE_RUN}/run.state")" ||
    die "cannot write to ${CSB_REMOTE_RUN} on the server host" 1
}

# csb_reap_leftovers [K]: stop what earlier runs of this lab, from this
# host, left running on the server host (or on client K >= 2) because they
# lost it (their runner is gone and their work directory is still there):
# each PID only when its start time is still the one recorded. Names every
# one; keeps their files (copied into the old run directory when it is on
# this host).
csb_reap_leftovers() {
  local -a run=(on_server_sh)
  local host="the server host" keep=${CSB_REMOTE_RUN} into=server-leftovers
  if [[ -n "${1:-}" ]]; then
    run=(on_client_sh "$1") host=${CSB_CL_LABEL[$1]} keep=${CSB_CL_WORK[$1]:-none} into=${CSB_CL_LABEL[$1]}-leftovers
  fi
  local list
  # One line per leftover directory of ours: DIR<TAB>state lines joined by ';'.
  # shellcheck disable=SC2016 # expanded by the server's shell
  list=$("${run[@]}" 'for s in '"$(csb_quote "${REMOTE_DIR%/}")"'/csb-run.*/run.state; do
  [ -O "$s" ] || continue; d=${s%/run.state}; [ "$d" = '"$(csb_quote "${keep}")"' ] && continue
  printf "%s\t%s\n" "$d" "$(tr "\n" ";" <"$s")"; done') || return 0
  local d state lab controller pid rundir me
  me=$(hostname)
  while IFS=$'\t' read -r d state; do
    [[ -n "${d}" ]] || continue
    lab=$(sed -n 's/.*\(^\|;\)lab=\([^;]*\).*/\2/p' <<<"${state}")
    controller=$(sed -n 's/.*;controller=\([^;]*\).*/\1/p' <<<"${state}")
    pid=$(sed -n 's/.*;runner_pid=\([0-9]*\).*/\1/p' <<<"${state}")
    rundir=$(sed -n 's/.*;run_dir=\([^;]*\).*/\1/p' <<<"${state}")
    [[ "${lab}" == "$(csb_lock_key)" && "${controller}" == "${me}" ]] || continue
    if [[ -n "${pid}" ]] && kill -0 "${pid}" 2>/dev/null; then continue; fi
    local stopped
    # shellcheck disable=SC2016 # expanded by the server's shell
    stopped=$("${run[@]}" 'f='"$(csb_quote "${d}/pids")"'; [ -f "$f" ] || exit 0
while read -r p st cmd; do
  now=$(sed "s/.*) //" /proc/$p/stat 2>/dev/null | cut -d" " -f20)
  [ -n "$now" ] && [ "$now" = "$st" ] || continue
  kill -TERM -- "-$p" 2>/dev/null; kill -TERM "$p" 2>/dev/null
  i=0; while kill -0 "$p" 2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i+1)); done
  kill -0 "$p" 2>/dev/null && { kill -KILL -- "-$p" 2>/dev/null; kill -KILL "$p" 2>/dev/null; }
  printf "PID %s (%s); " "$p" "$cmd"
done <"$f"') || stopped="(could not stop them: see ${d}/pids on ${host})"
    if [[ -n "${stopped}" ]]; then
      log_warn "a run that lost ${host} (runner PID ${pid:-?}, ${rundir:-run directory unknown}) left these running there; stopped now: ${stopped% }"
    else
      log_info "leftover work directory ${d} of runner PID ${pid:-?} on ${host}: nothing of it was still running"
    fi
    if [[ -n "${rundir}" && -d "${rundir}" ]] && mkdir -p "${rundir}/${into}" &&
      "${run[@]}" "cd $(csb_quote "${d}") && tar -cf - --exclude=./bin ." 2>/dev/null | tar -C "${rundir}/${into}" -xf - 2>/dev/null; then
      "${run[@]}" "rm -rf $(csb_quote "${d}")" >/dev/null 2>&1 || true
      log_info "its files on ${host} are now in ${rundir}/${into}"
    else
      log_warn "its files stay in ${d} on ${host}"
    fi
  done <<<"${list}"
}
