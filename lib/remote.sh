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

CSB_SSH_CTL_DIR=""

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
}

# csb_ssh_close: stop the master connection.
csb_ssh_close() {
  [[ -n "${CSB_SSH_CTL_DIR}" ]] || return 0
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
on_server_sh() {
  local script=$1
  if csb_lab_is_remote; then
    local -a ssh
    mapfile -t ssh < <(csb_ssh_base)
    printf '%s\n' "${script}" | "${ssh[@]}" "${SERVER_SSH}" bash -s
  else
    printf '%s\n' "${script}" | bash -s
  fi
}

# on_server CMD ARGS...: run one command on the server host.
on_server() {
  on_server_sh "$(csb_quote "$@")"
}

# on_server_bg LOG CMD ARGS...: start CMD detached on the server, stdin from
# /dev/null and stdout+stderr to LOG (a server-side path), in its own session
# so the ssh channel can close. Prints the PID.
on_server_bg() {
  local log=$1
  shift
  on_server_sh "setsid $(csb_quote "$@") </dev/null >$(csb_quote "${log}") 2>&1 & echo \$!"
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
  script="mkdir -p $(csb_quote "$(dirname "${dst}")") && cat >$(csb_quote "${dst}.tmp") && chmod ${mode} $(csb_quote "${dst}.tmp") && mv -f $(csb_quote "${dst}.tmp") $(csb_quote "${dst}")"
  if csb_lab_is_remote; then
    local -a ssh
    mapfile -t ssh < <(csb_ssh_base)
    "${ssh[@]}" "${SERVER_SSH}" "${script}" <"${src}"
  else
    bash -c "${script}" <"${src}"
  fi
}
