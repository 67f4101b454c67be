# shellcheck shell=bash
# lib/lock.sh: one run at a time on a lab, and private directories.
#
# A run holds its lab's lock for its whole life: the netns instance
# (CSB_LAB_ID), or the server host and port (LAB=ssh), or the loopback port
# (LAB=local). A second run on the same lab is refused (LAB_LOCK=refuse, the
# default: exit 7, naming the holder's PID, start time and runner) or waits
# for it (LAB_LOCK=wait, at most LAB_LOCK_WAIT seconds, logging how long).
#
# The lock is flock(1) on <lock dir>/<key>.lock, held by a small holder
# process (flock running `tail --pid=<runner>`) rather than by a descriptor of
# the runner, so no process the runner starts (sshd, ssh's master connection,
# a server) inherits it, and it is released within a second of the runner's
# end however it ends. <key>.holder names the holder; one left by a run that
# died (kill -9) is taken over, and the log says so. The netns re-exec keeps
# the runner's PID, so the lock taken before it stays held inside.
#
# Lock directory: /run/lock/csb for root, else $XDG_RUNTIME_DIR/csb-locks
# (or ~/.cache/csb-locks): created private (0700) and checked like every
# directory this project writes into (csb_private_dir).

csb_config_declare LAB_LOCK refuse "enum:refuse|wait" \
  "a run on a lab another run is using: refuse (exit 7, naming it) or wait for it"
csb_config_declare LAB_LOCK_WAIT 600 posint "LAB_LOCK=wait: the longest wait for the lab, in seconds"

CSB_LOCK_FILE=""
CSB_LOCK_HOLDER=""

# csb_private_dir DIR: make DIR (mode 0700) if missing, then refuse (return 1,
# one line on stderr naming it, its owner and mode) unless it is a real
# directory, not a symlink, owned by this user and writable by nobody else.
csb_private_dir() {
  local d=$1
  [[ -e "${d}" || -L "${d}" ]] || (umask 077 && mkdir -p -- "${d}") || {
    printf 'error: cannot create %s\n' "${d}" >&2
    return 1
  }
  csb_dir_is_mine "${d}"
}

# csb_dir_is_mine DIR: the check of csb_private_dir alone, on a DIR that exists.
csb_dir_is_mine() {
  local d=$1 owner mode
  if [[ -L "${d}" || ! -d "${d}" ]]; then
    printf 'error: %s is not a plain directory (a symlink or a file): refusing to use it; remove it or choose another path\n' "${d}" >&2
    return 1
  fi
  read -r owner mode < <(stat -c '%u %a' -- "${d}")
  if [[ "${owner}" != "${EUID}" ]] || (((8#${mode}) & 8#022)); then
    printf 'error: %s is owned by %s with mode %04o: refusing to use it (it must be yours and writable by no one else); remove it or choose another path\n' \
      "${d}" "$(stat -c %U -- "${d}")" "$((8#${mode}))" >&2
    return 1
  fi
}

# csb_lock_dir: where this user's lab locks live.
csb_lock_dir() {
  if ((EUID == 0)); then
    echo /run/lock/csb
  else
    echo "${XDG_RUNTIME_DIR:-${HOME}/.cache}/csb-locks"
  fi
}

# csb_lock_key: the lab this run uses, as a file name.
csb_lock_key() {
  case "${LAB}" in
    netns) printf 'netns-%s\n' "${CSB_LAB_ID}" ;;
    local) printf 'local-%s\n' "${SERVER_PORT}" ;;
    ssh)
      local host=${SERVER_SSH#*@}
      printf 'ssh-%s-%s\n' "${host//[^A-Za-z0-9._-]/_}" "${SERVER_PORT}"
      ;;
  esac
}

# csb_lock_path KEY: the lock file of KEY (its directory made private).
csb_lock_path() {
  local dir
  dir=$(csb_lock_dir)
  csb_private_dir "${dir}" || exit 2
  printf '%s/%s.lock\n' "${dir}" "$1"
}

# csb_lock_holder_text LOCK: "PID 123 (runner, started T)" from LOCK's
# holder file, or "an unknown process".
csb_lock_holder_text() {
  local f="${1%.lock}.holder" k v pid="" runner="" started=""
  if [[ -r "${f}" ]]; then
    while IFS='=' read -r k v; do
      case "${k}" in
        pid) pid=${v} ;;
        runner) runner=${v} ;;
        started) started=${v} ;;
      esac
    done <"${f}"
  fi
  if [[ -n "${pid}" ]]; then
    printf 'run PID %s (%s, started %s)' "${pid}" "${runner:-unknown runner}" "${started:-at an unknown time}"
  else
    printf 'an unknown process (no holder file beside %s)' "$1"
  fi
}

# csb_lock_holder_pid LOCK: the PID its holder file names, or nothing.
csb_lock_holder_pid() {
  [[ -r "${1%.lock}.holder" ]] || return 0
  sed -n 's/^pid=\([0-9][0-9]*\)$/\1/p' "${1%.lock}.holder" 2>/dev/null | head -n 1
}

# csb_lock_try LOCK: try once to take LOCK for this process ($$). Returns 0
# when held (the holder process runs until $$ ends), 1 when another holds it.
csb_lock_try() {
  local lock=$1 line="" rfd
  # The holder: flock takes the lock or fails at once (-n, exit 75), then
  # says so and waits for the runner to end. setsid keeps a Ctrl-C sent to
  # the runner's process group from releasing the lock before the runner's
  # own cleanup is done.
  # shellcheck disable=SC2016 # $1 expands in the holder's shell, by design
  # (In an if, flock's failure is an answer, not an error for the ERR trap.)
  exec {rfd}< <(
    if setsid flock -n -E 75 "${lock}" "${BASH}" -c 'echo "locked $$"; exec tail --pid="$1" -f /dev/null >/dev/null' holder "$$" 2>/dev/null </dev/null; then
      echo "ended 0"
    else
      echo "ended $?"
    fi
  )
  read -r -t 10 line <&"${rfd}" || true
  exec {rfd}<&-
  if [[ "${line}" =~ ^locked\ ([0-9]+)$ ]]; then
    # The holder's PID (tail, once sh has exec'd it): csb_lab_unlock stops
    # it so the lab is free the moment the run ends.
    CSB_LOCK_HOLDER=${BASH_REMATCH[1]}
    return 0
  fi
  [[ "${line}" == "ended 75" ]] ||
    die "cannot take the lab lock ${lock}: flock ended with ${line:-no answer} (are flock, setsid and tail installed? util-linux, coreutils)" 1
  return 1
}

# csb_lab_lock: take this run's lab lock (refuse or wait, per LAB_LOCK).
# A no-op inside the netns re-exec, which inherits the lock.
csb_lab_lock() {
  if [[ -n "${CSB_LAB_LOCK_PID:-}" && "${CSB_LAB_LOCK_PID}" == "$$" ]]; then
    CSB_LOCK_FILE=${CSB_LAB_LOCK_FILE}
    return 0
  fi
  local key lock waited=0 limit=${LAB_LOCK_WAIT} waitfile=""
  key=$(csb_lock_key)
  lock=$(csb_lock_path "${key}") || exit 2
  local grace=0
  while ! csb_lock_try "${lock}"; do
    # A lock without a holder file is a run in its last second (its holder
    # file is gone, its holder process not yet): give it that second.
    if [[ ! -e "${lock%.lock}.holder" ]] && ((grace < 3)); then
      grace=$((grace + 1))
      sleep 1
      continue
    fi
    if [[ "${LAB_LOCK}" != wait ]]; then
      die "lab ${key} is in use by $(csb_lock_holder_text "${lock}"); wait for it to end, or set LAB_LOCK=wait to queue behind it" 7
    fi
    if [[ -z "${waitfile}" ]]; then
      waitfile="${lock%.lock}.wait.$$"
      : >"${waitfile}"
    fi
    if ((waited >= limit)); then
      rm -f "${waitfile}"
      die "lab ${key} is still in use by $(csb_lock_holder_text "${lock}") after ${waited} s (LAB_LOCK_WAIT=${limit}); try again later" 7
    fi
    ((waited % 10 == 0)) && log_info "waiting for lab ${key}, in use by $(csb_lock_holder_text "${lock}"): ${waited} s of at most ${limit} s"
    sleep 1
    waited=$((waited + 1))
  done
  [[ -z "${waitfile}" ]] || rm -f "${waitfile}"
  local old
  old=$(csb_lock_holder_pid "${lock}")
  if [[ -n "${old}" && "${old}" != "$$" ]]; then
    log_warn "lab ${key}: the lock was left by $(csb_lock_holder_text "${lock}"), which is gone; taking it over"
  fi
  local holder="${lock%.lock}.holder"
  printf 'pid=%s\nstarted=%s\nrunner=%s\nuser=%s\nlab=%s\n' "$$" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
    "${0#"${CSB_ROOT}/"}" "$(id -un)" "${key}" >"${holder}.tmp.$$" && mv -f "${holder}.tmp.$$" "${holder}"
  CSB_LOCK_FILE=${lock}
  export CSB_LAB_LOCK_PID=$$ CSB_LAB_LOCK_FILE=${lock} CSB_LAB_LOCK_HOLDER=${CSB_LOCK_HOLDER}
  if [[ -e "${lock%.lock}.handover" ]]; then
    # The previous run kept the netns lab up because this one was waiting:
    # it is this run's to take down now.
    rm -f "${lock%.lock}.handover"
    export CSB_NETNS_HANDED_OVER=1
  fi
  ((waited == 0)) || log_info "lab ${key} is free after ${waited} s: this run holds it"
}

# csb_lab_waiters: the PIDs of live runs waiting for this run's lab.
csb_lab_waiters() {
  [[ -n "${CSB_LOCK_FILE}" ]] || return 0
  local f pid
  for f in "${CSB_LOCK_FILE%.lock}".wait.*; do
    [[ -e "${f}" ]] || continue
    pid=${f##*.}
    if kill -0 "${pid}" 2>/dev/null; then echo "${pid}"; else rm -f "${f}"; fi
  done
}

# csb_lab_unlock: forget the holder file (the lock itself goes with the
# runner's PID). Called at the very end of the run.
csb_lab_unlock() {
  [[ -n "${CSB_LOCK_FILE}" ]] || return 0
  [[ "$(csb_lock_holder_pid "${CSB_LOCK_FILE}")" != "$$" ]] || rm -f "${CSB_LOCK_FILE%.lock}.holder"
  local h=${CSB_LOCK_HOLDER:-${CSB_LAB_LOCK_HOLDER:-}}
  if [[ -n "${h}" ]] && { tr '\0' ' ' <"/proc/${h}/cmdline"; } 2>/dev/null | grep -qF -- "tail --pid=$$ -f /dev/null"; then
    kill -TERM "${h}" 2>/dev/null || true
  fi
  CSB_LOCK_FILE=""
}

# csb_lock_busy_by_other KEY: is KEY's lock held by a run other than
# CSB_LAB_LOCK_PID? Prints the holder when it is. For lab/netns.sh, which
# must not tear down or rebuild a lab under a running run.
csb_lock_busy_by_other() {
  local lock
  lock="$(csb_lock_dir)/$1.lock"
  [[ -e "${lock}" ]] || return 1
  flock -n -E 75 "${lock}" true 2>/dev/null && return 1
  [[ -n "${CSB_LAB_LOCK_PID:-}" && "$(csb_lock_holder_pid "${lock}")" == "${CSB_LAB_LOCK_PID}" ]] && return 1
  csb_lock_holder_text "${lock}"
}
