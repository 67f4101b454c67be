# shellcheck shell=bash
# lib/remote.sh: run commands on the run's hosts (lib/hosts.sh), one layer
# for every host.
#
# A command is built as an array and quoted for the remote shell exactly
# once, here, with printf %q; the resulting script is fed to `bash -s` on the
# host (over ssh, or on this host when its destination is "local"). So the
# same quoting runs in every lab and on every host, and a login shell never
# re-parses an argument. ssh uses BatchMode (never a password prompt) and one
# master connection per host and run (ControlMaster). When ssh to a host
# fails mid-run it is retried for SSH_RETRY seconds; a host that stays lost
# stops the run (exit 4) naming it, and what the run left there is named and
# stopped by the next run (lib/workdir.sh).

csb_config_declare SSH_RETRY 20 uint \
  "seconds to keep trying when ssh to a host is lost mid-run before the run stops (0: at once)"

CSB_SSH_CTL_DIR=""

# csb_alive PID: is PID running? (Asked instead of kill -0: a process that
# has exited stays a zombie until its parent reaps it, and init, the parent
# of what setsid started, may do that only every second or so.)
csb_alive() {
  local st
  { read -r st <"/proc/$1/stat"; } 2>/dev/null || return 1
  st=${st##*) }
  [[ "${st}" != Z* && "${st}" != X* ]]
}

# Every script sent to a host starts with this: an ordinary user's PATH
# lacks the sbin directories that hold sysctl, ss, ip, tc and ethtool; and
# csb_alive.
# shellcheck disable=SC2016 # expanded by the host's shell
CSB_REMOTE_PRELUDE='PATH="${PATH:-/usr/bin:/bin}:/usr/local/sbin:/usr/sbin:/sbin"; export PATH'"
$(declare -f csb_alive)"

# csb_ssh_base H: host H's ssh command line, one word a line.
csb_ssh_base() {
  local -a opts=(-o BatchMode=yes -o ConnectTimeout=5 -o ServerAliveInterval=5
    -o ServerAliveCountMax=3 -o LogLevel=ERROR)
  if [[ -n "${CSB_SSH_CTL_DIR}" ]]; then
    opts+=(-o ControlMaster=auto -o "ControlPath=${CSB_SSH_CTL_DIR}/ctl-$1" -o ControlPersist=300)
  fi
  if [[ "${LAB}" == netns ]]; then
    # The lab's own key and host key; the user's ssh config plays no part.
    opts+=(-F /dev/null -o IdentitiesOnly=yes)
  fi
  # ssh splits a known_hosts path at blanks and expands % in both: each
  # goes in double quotes, its \ " and % escaped.
  local kh=${SSH_KNOWN_HOSTS//\\/\\\\} key=${SSH_KEY//\\/\\\\}
  kh=${kh//\"/\\\"} key=${key//\"/\\\"}
  kh=${kh//%/%%} key=${key//%/%%}
  [[ -z "${SSH_KNOWN_HOSTS}" ]] || opts+=(-o "UserKnownHostsFile=\"${kh}\"" -o StrictHostKeyChecking=yes)
  [[ -z "${SSH_KEY}" ]] || opts+=(-o "IdentityFile=\"${key}\"")
  printf '%s\n' ssh "${opts[@]}"
}

# csb_ssh_run H ARGS...: ssh to host H (its master connection) with ARGS.
csb_ssh_run() {
  local h=$1
  shift
  local -a ssh
  mapfile -t ssh < <(csb_ssh_base "${h}")
  "${ssh[@]}" "${CSB_H_DEST[h]}" "$@"
}

# csb_ssh_open: pin the runner, then a master connection to every host
# reached over ssh (exit 4 naming the first that cannot be reached).
csb_ssh_open() {
  csb_cpu_pin_self
  local h
  for h in $(csb_hosts); do
    [[ "${CSB_H_DEST[h]}" != local ]] || continue
    if [[ -z "${CSB_SSH_CTL_DIR}" ]]; then
      csb_ssh_reap
      CSB_SSH_CTL_DIR="$(mktemp -d /tmp/csb-ssh.XXXXXX)"
      echo "$$ $(csb_starttime $$)" >"${CSB_SSH_CTL_DIR}/runner"
      # A refusal before csb_run_begin must still stop the master connections.
      csb_exit_add csb_ssh_close
    fi
    csb_ssh_run "${h}" true </dev/null ||
      die "cannot reach $(csb_host_name "${h}") over ssh (BatchMode: needs key auth). Check: ssh ${CSB_H_DEST[h]} true" 4
  done
}

# csb_starttime PID: PID's start time (clock ticks since boot), or nothing.
csb_starttime() { sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f20; }

# csb_ssh_reap: stop the master connections a runner killed outright left
# (its /tmp/csb-ssh.* of ours whose runner, by PID and start time, is gone).
csb_ssh_reap() {
  local f d pid st s m
  for f in /tmp/csb-ssh.*/runner; do
    [[ -f "${f}" && ! -L "${f}" && -O "${f}" ]] || continue
    read -r pid st <"${f}" || continue
    [[ "$(csb_starttime "${pid}")" != "${st}" ]] || continue
    d=${f%/runner} m=""
    for s in "${d}"/ctl-*; do
      [[ -S "${s}" ]] || continue
      # (A socket whose master is already gone makes -O check fail.)
      m+="$({ ssh -F /dev/null -o ControlPath="${s}" -O check _ 2>&1 || :; } | sed -n 's/.*pid=\([0-9]*\).*/PID \1 /p')"
      ssh -F /dev/null -o ControlPath="${s}" -O exit _ >/dev/null 2>&1 || :
    done
    rm -rf -- "${d}"
    log_info "ssh master connections left by runner PID ${pid}, which is gone (${d}): ${m:-none was running}${m:+stopped}"
  done
}

# csb_ssh_close: stop every master connection (the run's end calls this
# before the exit steps would).
csb_ssh_close() {
  [[ -n "${CSB_SSH_CTL_DIR}" ]] || return 0
  local h
  for h in $(csb_hosts); do
    [[ "${CSB_H_DEST[h]}" == local ]] || csb_ssh_run "${h}" -O exit </dev/null >/dev/null 2>&1 || true
  done
  rm -rf "${CSB_SSH_CTL_DIR}"
  CSB_SSH_CTL_DIR=""
}

# csb_quote ARGS...: the arguments as one shell-quoted command line.
csb_quote() {
  local q
  csb_quote_to q "$@"
  printf '%s' "${q}"
}

# csb_quote_to VAR ARGS...: csb_quote's line into VAR, with no command
# substitution: bash 5.2 loses a signal that comes while a command expands
# its first $(...) when the same command has a second, so a command has at
# most one (internal/shcheck checks every file of lib/ and the runners), and
# a script built of many quoted words takes them from here.
csb_quote_to() {
  local csb_qt_var=$1
  shift
  if (($# == 0)); then
    printf -v "${csb_qt_var}" ''
    return 0
  fi
  printf -v "${csb_qt_var}" '%q ' "$@"
  printf -v "${csb_qt_var}" '%s' "${!csb_qt_var% }"
}

# on_host_sh H SCRIPT: run a bash script on host H. Its stdout and stderr
# come back; its stdin is the script, so it must not read stdin. When ssh
# itself fails (exit 255) the connection is retried for SSH_RETRY seconds
# and the script run again; when it stays lost the run stops
# (csb_ssh_lost_check). CSB_SSH_ONCE=1 (on_host_bg) never runs a script twice.
on_host_sh() {
  local h=$1 script rc=0
  script="${CSB_REMOTE_PRELUDE}
$(csb_cpu_pin_line "$(csb_host_cpus "${h}")")
$2"
  if [[ "${CSB_H_DEST[h]}" == local ]]; then
    # (The status is passed on explicitly: a bare return inside an exit
    # step would return the status the shell is exiting with.)
    printf '%s\n' "${script}" | bash -s || rc=$?
    return "${rc}"
  fi
  csb_ssh_lost_check "${h}" || return 255
  printf '%s\n' "${script}" | csb_ssh_run "${h}" bash -s || rc=$?
  ((rc == 255)) || return "${rc}"
  csb_ssh_recover "${h}" || return 255
  [[ "${CSB_SSH_ONCE:-0}" != 1 ]] || return 255
  rc=0
  printf '%s\n' "${script}" | csb_ssh_run "${h}" bash -s || rc=$?
  return "${rc}"
}

# on_host H CMD ARGS...: run one command on host H.
on_host() {
  local h=$1
  shift
  on_host_sh "${h}" "$(csb_quote "$@")"
}

# The server host, by name (host 0).
on_server_sh() { on_host_sh 0 "$@"; }
on_server() { on_host 0 "$@"; }
on_server_bg() { on_host_bg 0 "$@"; }

# csb_cpu_pin_line CPUS: a line of script that pins the shell running it
# (and so everything it starts) to CPUS; nothing when CPUS is empty.
csb_cpu_pin_line() {
  [[ -n "$1" ]] || return 0
  printf 'taskset -pc %s $$ >/dev/null 2>&1 || echo "warning: could not pin to CPUs %s" >&2\n' "$1" "$1"
}

# csb_ssh_lost_mark H / csb_ssh_lost H: a marker beside the master
# connections, so subshells ($(on_host_sh ...)) and the runner agree that
# ssh to H is gone. csb_ssh_lost_hosts: the hosts that are lost, one a line.
csb_ssh_lost_mark() { [[ -z "${CSB_SSH_CTL_DIR}" ]] || : >"${CSB_SSH_CTL_DIR}/lost-$1"; }
csb_ssh_lost() { [[ -n "${CSB_SSH_CTL_DIR}" && -e "${CSB_SSH_CTL_DIR}/lost-$1" ]]; }
csb_ssh_lost_hosts() { [[ -z "${CSB_SSH_CTL_DIR}" ]] || compgen -G "${CSB_SSH_CTL_DIR}/lost-*" | sed 's#.*/lost-##' || true; }

# csb_ssh_lost_stop: the runner stops the run (exit 4, naming the host) when
# a subshell or a background job found a host lost; called after each.
csb_ssh_lost_stop() { local h; for h in $(csb_ssh_lost_hosts); do csb_ssh_lost_check "${h}"; done; }

# csb_wait_jobs PID...: wait for background jobs (one a host), then
# csb_ssh_lost_stop; 1 when one failed.
csb_wait_jobs() { local j rc=0; for j in "$@"; do wait "${j}" || rc=1; done; csb_ssh_lost_stop; return "${rc}"; }

# csb_ssh_lost_check H: 0 when ssh to H may be used. Once it is lost, the
# runner itself (not a subshell) stops the run here; on the way out
# (CSB_EXITING) one quick reconnection is tried before the host is given up.
csb_ssh_lost_check() {
  local h=$1
  csb_ssh_lost "${h}" || return 0
  if [[ -n "${CSB_EXITING:-}" ]]; then
    local tried="${CSB_SSH_CTL_DIR}/tried-${h}"
    [[ ! -e "${tried}" ]] || return 1
    : >"${tried}"
    if csb_ssh_run "${h}" true </dev/null >/dev/null 2>&1; then
      rm -f "${CSB_SSH_CTL_DIR}/lost-${h}"
      log_info "ssh to $(csb_host_name "${h}") is back: stopping what the run started there"
      return 0
    fi
    return 1
  fi
  if [[ "${BASHPID}" == "$$" ]]; then
    # shellcheck disable=SC2034 # read by lib/rundir.sh (csb_on_exit)
    CSB_RUN_ERROR="lost ssh to $(csb_host_name "${h}")"
    die "lost ssh to $(csb_host_name "${h}") for ${SSH_RETRY} s; stopping the run (what was measured so far is kept)" 4
  fi
  return 1
}

# csb_ssh_recover H: after ssh to H failed, try to reconnect for SSH_RETRY
# seconds, logging the wait. 0 when the host answers again.
csb_ssh_recover() {
  local h=$1 who start=${SECONDS} waited=0
  [[ -z "${CSB_EXITING:-}" ]] || return 1
  who=$(csb_host_name "${h}")
  log_warn "ssh to ${who} failed: retrying for up to ${SSH_RETRY} s"
  while ((waited < SSH_RETRY)); do
    if csb_ssh_run "${h}" true </dev/null >/dev/null 2>&1; then
      log_info "ssh to ${who} is back after ${waited} s"
      return 0
    fi
    sleep 1
    waited=$((SECONDS - start))
    ((waited % 5 != 0)) || log_warn "ssh to ${who} still lost: ${waited} s of at most ${SSH_RETRY} s"
  done
  csb_ssh_lost_mark "${h}"
  log_error "ssh to ${who} lost for ${waited} s: giving up"
  csb_ssh_lost_check "${h}"
  return 1
}

# csb_record_line DIR: a line of script that appends "$p START CMD" (the
# start time from /proc, so a reused PID is never taken for it) to DIR/pids
# on the host; nothing without DIR. CMD is the rest of the arguments.
csb_record_line() {
  local dir=$1
  shift
  [[ -n "${dir}" ]] || return 0
  local cmd qcmd qpids
  csb_quote_to cmd "$@"
  csb_quote_to qcmd "${cmd}"
  csb_quote_to qpids "${dir}/pids"
  # shellcheck disable=SC2016 # expanded by the host's shell
  printf 'st=$(sed "s/.*) //" /proc/$p/stat 2>/dev/null | cut -d" " -f20); printf "%%s %%s %%s\\n" "$p" "${st:-0}" %s >>%s; ' \
    "${qcmd}" "${qpids}"
}

# on_host_bg H LOG CMD ARGS...: start CMD detached on host H (its own
# session, stdin from /dev/null, stdout and stderr to LOG, a path there).
# Inside a run its PID, start time and command go to the host's work
# directory's pids file first, so a run that loses the host can have them
# stopped later. Prints the PID.
on_host_bg() {
  local h=$1 log=$2
  shift 2
  local dir=${CSB_H_WORK[h]:-} guard="" cmd qlog record
  [[ -z "${dir}" ]] || guard="$(csb_remote_guard "${dir}")"$'\n'
  csb_quote_to cmd "$@"
  csb_quote_to qlog "${log}"
  record=$(csb_record_line "${dir}" "$@")
  CSB_SSH_ONCE=1 on_host_sh "${h}" "${guard}setsid ${cmd} </dev/null >${qlog} 2>&1 & p=\$!; ${record}echo \$p"
}

# csb_kill_fn: the shell function csb_stop_one PID NAME GRACE_S SIGNAL
# GROUP for a host's script: it stops PID only if its command line still
# names NAME (so a reused PID is never hit): SIGNAL, up to GRACE_S seconds,
# then KILL. GROUP=1 signals PID's process group (started by setsid, so PID
# leads it): sar's sadc child stops at once with it instead of after its
# next interval. Defined once per script, called once per process (`&`
# each, then `wait`): at C1M a run stops 130 processes, and a subshell per
# process cost seconds each on the loaded machine.
csb_kill_fn() {
  # shellcheck disable=SC2016 # expanded by the host's shell
  printf '%s\n' 'csb_stop_one() {
  pid=$1 name=$2 grace=$3 sig=$4
  if [ -r /proc/$pid/cmdline ] && tr "\0" " " </proc/$pid/cmdline | grep -qF -- "$name"; then
    if [ "$5" = 1 ]; then kill -"$sig" -- "-$pid" 2>/dev/null || true; else kill -"$sig" "$pid" 2>/dev/null || true; fi
    i=0
    while csb_alive "$pid" && [ $i -lt $((grace * 20)) ]; do sleep 0.05; i=$((i+1)); done
    if csb_alive "$pid"; then kill -KILL "$pid" 2>/dev/null || true; echo "killed $pid ($name) with KILL" >&2; fi
  fi
}'
}

# csb_kill_call PID NAME [GRACE_S] [SIGNAL] [GROUP]: the line that stops
# one process with csb_stop_one.
csb_kill_call() {
  local pid name sig
  csb_quote_to pid "$1"
  csb_quote_to name "$2"
  csb_quote_to sig "${4:-TERM}"
  printf 'csb_stop_one %s %s %s %s %s\n' "${pid}" "${name}" "$((${3:-10}))" "${sig}" "$((${5:-0}))"
}

# csb_kill_script PID NAME [GRACE_S] [SIGNAL] [GROUP]: a script that stops
# one process.
csb_kill_script() {
  csb_kill_fn
  csb_kill_call "$@"
}

# csb_stop_pid H PID NAME [GRACE_S] [SIGNAL]: stop one process of host H.
csb_stop_pid() {
  local h=$1
  shift
  on_host_sh "${h}" "$(csb_kill_script "$@")"
}

# csb_host_fetch H DIR LOCAL_DIR [PATH...]: copy host H's DIR (or the PATHs
# under it) into LOCAL_DIR, one tar stream; bin/ stays where it is.
csb_host_fetch() {
  local h=$1 dir=$2 into=$3
  shift 3
  local -a what=("$@")
  ((${#what[@]})) || what=(.)
  mkdir -p "${into}"
  local qdir qwhat
  csb_quote_to qdir "${dir}"
  csb_quote_to qwhat "${what[@]}"
  on_host_sh "${h}" "cd ${qdir} && tar -cf - --exclude=./bin --ignore-failed-read ${qwhat} 2>/dev/null" |
    tar -C "${into}" -xf -
}

# csb_host_put H LOCAL_FILE PATH [MODE]: copy one file to host H (into its
# work directory, checked first), written whole (temp and rename).
csb_host_put() {
  local h=$1 src=$2 dst=$3 mode=${4:-0644} guard qdir qtmp qdst
  guard=$(csb_remote_guard "${CSB_H_WORK[h]}")
  # dst is a path in the work directory, never a bare name.
  csb_quote_to qdir "${dst%/*}"
  csb_quote_to qtmp "${dst}.tmp"
  csb_quote_to qdst "${dst}"
  csb_host_exec "${h}" "${guard}
mkdir -p ${qdir} && cat >${qtmp} && chmod ${mode} ${qtmp} && mv -f ${qtmp} ${qdst}" <"${src}"
}

# csb_host_put_bins H FILE...: the given files of bin/ (and lib/wrk's
# report.lua) into host H's work directory's bin/, one tar stream.
csb_host_put_bins() {
  local h=$1
  shift
  local guard qbin qfiles
  guard=$(csb_remote_guard "${CSB_H_WORK[h]}")
  csb_quote_to qbin "${CSB_H_WORK[h]}/bin"
  csb_quote_to qfiles "$@"
  tar -cf - -C "${CSB_ROOT}/bin" "$@" -C "${CSB_LIB}/wrk" report.lua | csb_host_exec "${h}" "${guard}
cd ${qbin} && tar -xf - && chmod 0755 ${qfiles} && chmod 0644 report.lua"
}

# csb_host_exec H SCRIPT: SCRIPT as it is (no prelude, no retry) on host
# H, its stdin passed through: for a stream of data into a file there.
csb_host_exec() {
  if [[ "${CSB_H_DEST[$1]}" == local ]]; then bash -c "$2"; else csb_ssh_run "$1" "$2"; fi
}
