# shellcheck shell=bash
# lib/sysctl.sh: host settings a scenario changes, recorded and put back.
#
# Phase 4 needs sysctls changed on a host: the server's net.core.somaxconn
# for the listen backlog, the client's net.ipv4.ip_local_port_range to show
# the port wall; Phase 3 widens the client's range when its plan asks
# (lib/c10kplan.sh, C10K_PORT_RANGE). In the netns lab they are per namespace (the lab's own),
# and the runner sets them freely. On a real host (LAB=local, LAB=ssh) a
# sysctl is changed only with APPLY_SYSCTLS=1, only the ones a scenario
# lists, as root or through `sudo -n`; otherwise the run is refused before
# anything starts (exit 6) with the exact commands to run by hand.
#
#   csb_sysctl_allowed H KEY VALUE...   preflight: may the run set these
#                         (KEY VALUE pairs) on host H (lib/hosts.sh: 0 the
#                         server, 1..N the clients)? Dies with exit 6 and
#                         the commands when it may not.
#   csb_sysctl_set H KEY VALUE          record the old value in run.env
#                         (sysctl.<label>.KEY.old; the first one only, when a key
#                         changes twice), then set it (…set); the first
#                         change registers csb_sysctl_restore as an exit step
#                         (lib/exit.sh), so Ctrl-C, a failed cell or a lost
#                         ssh connection put it back too.
#   csb_sysctl_restore    put back every value changed so far, newest first
#                         (…restored in run.env); one that cannot be put back
#                         is logged with the command to run by hand. Runners
#                         call it after the scenario that needed the change.
#   csb_sysctl_get H KEY                the value now (tabs as spaces).
# Never a key under fs.* (host-wide even in a namespace) and never on the
# host outside the lab's namespaces unless told so.

csb_config_declare APPLY_SYSCTLS 0 bool \
  "real hosts (LAB=local, ssh): 1 lets a runner change the sysctls its scenarios list (old values in run.env, put back at exit); the netns lab's are its own and always set"

# CSB_SYSCTL_CHANGED: "H KEY OLD" per change, oldest first.
declare -ga CSB_SYSCTL_CHANGED=()
declare -gA CSB_SYSCTL_SUDO=()

csb_sysctl_get() {
  local v
  v=$(on_host_sh "$1" "sysctl -n $(csb_quote "$2")") || return 1
  printf '%s\n' "${v//$'\t'/ }"
}

# csb_sysctl_cmd HOST KEY VALUE: the command that sets KEY on HOST.
csb_sysctl_cmd() {
  printf '%ssysctl -w %s' "${CSB_SYSCTL_SUDO[$1]:-}" "$(csb_quote "$2=$3")"
}

csb_sysctl_allowed() {
  local host=$1
  shift
  local -a cmds=()
  local why="" k
  while (($# >= 2)); do
    [[ "$1" != fs.* ]] || die "internal: ${1} is host-wide; no runner changes it" 1
    cmds+=("sysctl -w $(csb_quote "$1=$2")")
    shift 2
  done
  [[ "${LAB}" != netns ]] || return 0
  if [[ "${APPLY_SYSCTLS}" != 1 ]]; then
    why="APPLY_SYSCTLS is not 1"
  elif [[ "$(on_host_sh "${host}" 'id -u')" == 0 ]]; then
    return 0
  elif on_host_sh "${host}" 'sudo -n true' >/dev/null 2>&1; then
    CSB_SYSCTL_SUDO[${host}]="sudo -n "
    return 0
  else
    why="not root there and sudo -n is refused"
  fi
  log_error "the sysctls of $(csb_host_name "${host}") must change for this scenario, and this run may not change them (${why}). Either run again with APPLY_SYSCTLS=1 as root (or with passwordless sudo), or run these there by hand (as root), note the old values first (sysctl -n KEY) and put them back afterwards:"
  for k in "${cmds[@]}"; do log_error "  ${k}"; done
  die "refused: sysctls of $(csb_host_name "${host}") not changed (see above); nothing was started" 6
}

csb_sysctl_set() {
  local host=$1 key=$2 value=$3 old
  old=$(csb_sysctl_get "${host}" "${key}") || die "cannot read ${key} on $(csb_host_name "${host}")" 1
  [[ "${old}" != "${value}" ]] || return 0
  # Changed again before it was put back: the value to put back stays the
  # first one.
  local e first=1
  for e in "${CSB_SYSCTL_CHANGED[@]}"; do
    [[ "${e}" != "${host} ${key} "* ]] || first=0
  done
  if ((first)); then
    csb_run_set "sysctl.${CSB_H_LABEL[host]}.${key}.old" "${old}"
    csb_exit_add csb_sysctl_restore
    CSB_SYSCTL_CHANGED+=("${host} ${key} ${old}")
  fi
  local cmd
  cmd=$(csb_sysctl_cmd "${host}" "${key}" "${value}")
  log_info "${CSB_H_LABEL[host]}: ${cmd} (was ${old})"
  on_host_sh "${host}" "${cmd} >/dev/null" || die "could not set ${key}=${value} on $(csb_host_name "${host}")" 1
  csb_run_set "sysctl.${CSB_H_LABEL[host]}.${key}.set" "${value}"
}

csb_sysctl_restore() {
  local i host key old cmd
  for ((i = ${#CSB_SYSCTL_CHANGED[@]} - 1; i >= 0; i--)); do
    read -r host key old <<<"${CSB_SYSCTL_CHANGED[i]}"
    cmd=$(csb_sysctl_cmd "${host}" "${key}" "${old}")
    if on_host_sh "${host}" "${cmd} >/dev/null" 2>/dev/null; then
      log_info "${CSB_H_LABEL[host]}: ${key} put back to ${old}"
      csb_run_set "sysctl.${CSB_H_LABEL[host]}.${key}.restored" "${old}"
    else
      log_error "could not put ${key} back on $(csb_host_name "${host}"); run there by hand: ${cmd}"
      csb_run_set "sysctl.${CSB_H_LABEL[host]}.${key}.restored" ""
    fi
  done
  CSB_SYSCTL_CHANGED=()
}
