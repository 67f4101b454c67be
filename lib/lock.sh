# shellcheck shell=bash
# lib/lock.sh: one run at a time on each thing a run binds, and private
# directories.
#
# A run holds its locks for its whole life: its lab (the netns instance,
# CSB_LAB_ID; or the server host and SERVER_PORT, LAB=ssh; or the loopback
# port, LAB=local) and every other port it listens on or range it changes
# (CSB_LOCK_PORTS, CSB_LOCK_PORT_RANGE). Every account on the machine sees
# them: `csb lock` (internal/lablock) takes all of them or none, with flock
# in a sticky directory (/run/lock, else /tmp), and holds them in a small
# process of its own (no process the runner starts inherits them) until the
# runner ends, however it ends. A second run is refused (LAB_LOCK=refuse,
# the default: exit 7, naming the holder's PID, start time and runner) or
# waits (LAB_LOCK=wait, at most LAB_LOCK_WAIT seconds, saying how long). A
# holder file a killed run left is taken over, and the log says so. The
# netns re-exec keeps the runner's PID, so its locks stay held inside.

csb_config_declare LAB_LOCK refuse "enum:refuse|wait" \
  "a run on a lab another run is using: refuse (exit 7, naming it) or wait for it"
csb_config_declare LAB_LOCK_WAIT 600 posint "LAB_LOCK=wait: the longest wait for the lab, in seconds"


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

# csb_lock_key: the lab this run uses, as a name: the netns instance, or
# the server host and port (LAB=local: this host's loopback port).
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

# Every other resource the run binds, besides its lab (a runner adds to
# them before csb_lab_enter): CSB_LOCK_PORTS, the server host's ports it
# listens on (Phase 0's iperf3 servers); CSB_LOCK_PORT_RANGE=1, the client
# hosts' ephemeral port range it changes (Phase 4). The netns lab is one
# key: everything in it is this run's.
declare -ga CSB_LOCK_PORTS=()
CSB_LOCK_PORT_RANGE=0

# csb_lock_keys: every key of this run, its lab's first.
csb_lock_keys() {
  local key port k dest
  key=$(csb_lock_key)
  echo "${key}"
  [[ "${LAB}" != netns ]] || return 0
  for port in "${CSB_LOCK_PORTS[@]}"; do echo "${key%-*}-${port}"; done
  ((CSB_LOCK_PORT_RANGE)) || return 0
  for k in $(csb_clients); do
    dest=${CSB_H_DEST[k]}
    [[ "${dest}" != local ]] || dest=$(hostname)
    dest=${dest#*@}
    echo "portrange-${dest//[^A-Za-z0-9._-]/_}"
  done
}

# csb_lab_lock: take every lock of this run (`csb lock`: all or none, seen
# by every account on the machine), refusing (exit 7, naming the holder) or
# waiting (LAB_LOCK=wait, at most LAB_LOCK_WAIT seconds) when another run
# holds one. A no-op inside the netns re-exec, which keeps the runner's PID
# and so its locks.
csb_lab_lock() {
  [[ "${CSB_LAB_LOCK_PID:-}" != "$$" ]] || return 0
  csb_csb lock -h >/dev/null
  local wait=0 line rfd
  [[ "${LAB_LOCK}" != wait ]] || wait=${LAB_LOCK_WAIT}
  local -a keys
  mapfile -t keys < <(csb_lock_keys)
  # The holder: setsid keeps a Ctrl-C sent to the runner's group from
  # releasing the locks before the runner's own cleanup is done.
  # (exec: $! is then the holder itself, which csb_lab_unlock stops.)
  exec {rfd}< <(exec setsid "${CSB_ROOT}/bin/csb" lock -pid "$$" -runner "${0#"${CSB_ROOT}/"}" -user "$(id -un)" \
    -wait "${wait}" "${keys[@]}" 2> >(while IFS= read -r line; do log_info "${line}"; done) </dev/null)
  CSB_LOCK_HOLDER=$!
  line=""
  while read -r line <&"${rfd}"; do
    case "${line}" in
      locked) break ;;
      "taken-over "*) read -r _ key text <<<"${line}"; log_warn "lab ${key}: the lock was left by ${text}, which is gone; taking it over" ;;
      "waited "*) log_info "lab ${keys[0]} is free after ${line#waited } s: this run holds its locks" ;;
      "busy "*)
        read -r _ key text <<<"${line}"
        exec {rfd}<&-
        if ((wait)); then die "lab ${key} is still in use by ${text} after ${wait} s (LAB_LOCK_WAIT=${wait}); try again later" 7; fi
        die "lab ${key} is in use by ${text}; wait for it to end, or set LAB_LOCK=wait to queue behind it" 7
        ;;
      *) exec {rfd}<&-; die "cannot take the lab lock (csb lock: ${line:-no answer})" 1 ;;
    esac
  done
  exec {rfd}<&-
  [[ "${line}" == locked ]] || die "cannot take the lab lock (csb lock ended without an answer)" 1
  CSB_LOCK_DIR=$("${CSB_ROOT}/bin/csb" lock -dir)
  export CSB_LAB_LOCK_PID=$$ CSB_LAB_LOCK_HOLDER=${CSB_LOCK_HOLDER} CSB_LOCK_DIR
  if [[ -e "${CSB_LOCK_DIR}/csb-${keys[0]}.handover" ]]; then
    # The previous run kept the netns lab up because this one was waiting:
    # it is this run's to take down now.
    rm -f "${CSB_LOCK_DIR}/csb-${keys[0]}.handover"
    export CSB_NETNS_HANDED_OVER=1
  fi
}
CSB_LOCK_HOLDER=""
CSB_LOCK_DIR=""

# csb_lab_waiters: the PIDs of live runs waiting for this run's lab.
csb_lab_waiters() {
  [[ -n "${CSB_LOCK_DIR}" ]] || return 0
  local f pid
  for f in "${CSB_LOCK_DIR}/csb-$(csb_lock_key).wait."*; do
    pid=${f##*.}
    if [[ -e "${f}" ]] && csb_alive "${pid}"; then echo "${pid}"; fi
  done
}

# csb_lab_handover: keep the lab for the run that waits for it.
csb_lab_handover() { : >"${CSB_LOCK_DIR}/csb-$(csb_lock_key).handover"; }

# csb_lab_unlock: let go of the locks now (their holder would within 200 ms
# of the runner's end), and wait (at most 2 s) until they are free: what
# the user runs next (lab/netns.sh down) must not find them held. Called
# at the very end of the run.
csb_lab_unlock() {
  local h=${CSB_LOCK_HOLDER:-${CSB_LAB_LOCK_HOLDER:-}} i
  if [[ -n "${h}" ]] && { tr '\0' ' ' <"/proc/${h}/cmdline"; } 2>/dev/null | grep -qF -- "lock -pid $$ "; then
    kill -TERM "${h}" 2>/dev/null || true
    for ((i = 0; i < 40; i++)); do csb_alive "${h}" || break; sleep 0.05; done
  fi
  CSB_LOCK_HOLDER="" CSB_LAB_LOCK_HOLDER=""
}

# csb_lock_busy_by_other KEY: is KEY's lock held by a run other than
# CSB_LAB_LOCK_PID? Prints the holder when it is. For lab/netns.sh, which
# must not tear down or rebuild a lab under a running run.
csb_lock_busy_by_other() {
  [[ -x "${CSB_ROOT}/bin/csb" ]] || return 1
  "${CSB_ROOT}/bin/csb" lock -check -not-pid "${CSB_LAB_LOCK_PID:-0}" "$1" 2>/dev/null
}
