# shellcheck shell=bash
# rehearsal/lib.sh: what every rehearsal step shares. Sourced, never run.
#
#   source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
#   rh_init "$@"        settings (lib/init.sh: lab.env, environment, -s), the
#                       step's own words in RH_ARGS, REHEARSAL_DIR
#   rh_enter            LAB=netns: re-run this step inside the client namespace
#   rh_connect          the ssh hop to the server (exit 4 when it fails), and
#                       REHEARSAL_DIR on the server host
#   rh_run CMD...       print "client$ CMD" exactly as it runs, then run it
#   rh_on_server CMD... print "server$ CMD", then run it on the server host
#
# State between steps (the server's PID on the server host) is one KEY=VALUE
# file, REHEARSAL_DIR/state, on the client. Everything a step writes goes
# under REHEARSAL_DIR on the host that writes it (client/ and server/), never
# in the repo; a .csb-rehearsal marker lets the cleanup step remove exactly
# that directory. A process a step starts and does not hand over (iperf3's
# server, connclient) is stopped by PID when the step exits: an exit step in
# lib/exit.sh's registry, like every other cleanup.

# shellcheck source=lib/init.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/init.sh"

# Per lab instance, so two people's rehearsals on one machine do not meet:
# /tmp/csb-rehearsal for the default lab.
csb_config_declare REHEARSAL_DIR "/tmp/${CSB_LAB_ID}-rehearsal" path \
  "rehearsal: state and outputs, on each host (environment or -s; not lab.env)"

# The sizes rehearsal/05_start_server.sh asks the server for.
RH_SIZES=1k,4k,10k,100k

usage() { sed -n '2,/^$/{s/^# \{0,1\}//;p}' "$0"; }

declare -ga RH_ARGS=() RH_ALL_ARGS=() RH_PIDS=()

# rh_init ARGS...: the common flags (-c -l -p -n -r -s, -h) go to
# csb_config_load, which validates every setting and exits 2 on a bad one;
# the other words are the step's own (RH_ARGS).
rh_init() {
  RH_ALL_ARGS=("$@")
  local -a opts=()
  while (($#)); do
    case "$1" in
      -h | --help) usage; exit 0 ;;
      -[clpnrs]) (($# > 1)) || usage_error "option $1 needs a value"; opts+=("$1" "$2"); shift 2 ;;
      -[clpnrs]?*) opts+=("$1"); shift ;;
      -?*) usage_error "unknown option $1" ;;
      *) RH_ARGS+=("$1"); shift ;;
    esac
  done
  csb_config_load "${opts[@]}"
  [[ "${REHEARSAL_DIR}" == /?* && "${REHEARSAL_DIR}" != *..* ]] ||
    usage_error "REHEARSAL_DIR=${REHEARSAL_DIR}: expected an absolute path such as /tmp/csb-rehearsal"
  # The steps share one lab: a step that brings the netns lab up leaves it
  # up for the next one (take it down yourself: lab/netns.sh down).
  LAB_KEEP=1
  RH_STATE="${REHEARSAL_DIR}/state"
  RH_SRV_DIR="${REHEARSAL_DIR}/server"
}

# rh_args_max N: refuse more than N words.
rh_args_max() {
  ((${#RH_ARGS[@]} <= $1)) || usage_error "unexpected argument: ${RH_ARGS[$1]}"
}

# rh_enter: with LAB=netns, re-run this step inside the client namespace
# (bringing the lab up when it is down; a no-op for the other labs); then
# make REHEARSAL_DIR on this (the client) host. Call it once the step's own
# words are checked.
rh_enter() {
  # A REHEARSAL_DIR that is there already is checked before the lab is
  # taken: refused (exit 2) even while another run holds the lab.
  [[ ! -e "${REHEARSAL_DIR}" && ! -L "${REHEARSAL_DIR}" ]] || csb_dir_is_mine "${REHEARSAL_DIR}" || exit 2
  csb_lab_enter "$0" "${RH_ALL_ARGS[@]}"
  # Reused from step to step, so checked each time: this user's own, mode
  # 0700, not a symlink (another user's directory there is refused, exit 2).
  csb_private_dir "${REHEARSAL_DIR}" || exit 2
  mkdir -p "${REHEARSAL_DIR}/client"
  touch "${REHEARSAL_DIR}/.csb-rehearsal"
}

# rh_connect: open the ssh hop (no-op for LAB=local) and make sure the
# step's directory exists on the server host. From here on, the processes
# a step tracks are stopped at exit, before the ssh connection closes (exit
# steps run last-added first: lib/exit.sh).
rh_connect() {
  csb_ssh_open
  csb_exit_add rh_stop_tracked
  local out rc=0 script
  # The same check on the server host, where the steps copy the server
  # binary into it and run it from there ($1: the directory, $2: its
  # server/ part).
  # shellcheck disable=SC2016 # expanded by the server's shell
  script='d=$1
[ -e "$d" ] || [ -L "$d" ] || (umask 077 && mkdir -p "$d")
if [ -L "$d" ] || [ ! -O "$d" ] || [ $(( 0$(stat -c %a "$d") & 022 )) -ne 0 ]; then
  echo "$d on the server host is owned by $(stat -c %U "$d") with mode $(stat -c %a "$d"): refusing to copy or run anything from it; set REHEARSAL_DIR to a directory of your own"
  exit 2
fi
mkdir -p "$2" && touch "$d/.csb-rehearsal"'
  out=$(on_server_sh "set -- $(csb_quote "${REHEARSAL_DIR}" "${RH_SRV_DIR}")
${script}" 2>&1) || rc=$?
  ((rc != 2)) || die "$(tail -n 1 <<<"${out}")" 2
  ((rc == 0)) || die "cannot create ${RH_SRV_DIR} on the server host: $(tail -n 1 <<<"${out}")" 1
}

rh_say() { printf '\n==> %s\n' "$*"; }
rh_run() { printf 'client$ %s\n' "$(csb_quote "$@")"; "$@"; }
rh_on_server() { printf 'server$ %s\n' "$(csb_quote "$@")"; on_server "$@"; }
rh_on_server_sh() { printf 'server$ %s\n' "$1"; on_server_sh "$1"; }

# rh_state_get KEY / rh_state_set KEY VALUE / rh_state_del KEY: the state
# file is read as text, never sourced.
rh_state_get() {
  [[ -f "${RH_STATE}" ]] || return 0
  sed -n "s/^$1=//p" "${RH_STATE}" | tail -n 1
}
rh_state_set() {
  rh_state_del "$1"
  printf '%s=%s\n' "$1" "$2" >>"${RH_STATE}"
}
rh_state_del() {
  [[ -f "${RH_STATE}" ]] || return 0
  local rest
  rest=$(grep -v "^$1=" "${RH_STATE}" || true)
  printf '%s\n' "${rest}" | sed '/^$/d' >"${RH_STATE}"
}

# rh_server_pid: the recorded server PID when that process still runs.
rh_server_pid() {
  local pid
  pid=$(rh_state_get server_pid)
  # (csb_server_alive lets the shell report a missing /proc/PID on stderr.)
  [[ "${pid}" =~ ^[0-9]+$ ]] && csb_server_alive "${pid}" csb-server 2>/dev/null && echo "${pid}"
}

# rh_need_server: the recorded server PID, or exit 1 with the step to run.
rh_need_server() {
  rh_server_pid || die "no server is running for this rehearsal (${RH_STATE}); start it: rehearsal/05_start_server.sh" 1
}

# rh_track HOST PID NAME: stop PID (only while its command line names NAME)
# when the step exits. rh_untrack PID: it ended by itself.
rh_track() { RH_PIDS+=("$1 $2 $3"); }
rh_untrack() {
  local e pid keep=()
  for e in "${RH_PIDS[@]}"; do
    read -r _ pid _ <<<"${e}"
    [[ "${pid}" == "$1" ]] || keep+=("${e}")
  done
  RH_PIDS=("${keep[@]}")
}

rh_stop_tracked() {
  local e host pid name
  for e in "${RH_PIDS[@]}"; do
    read -r host pid name <<<"${e}"
    if [[ "${host}" == server ]]; then
      csb_stop_pid 0 "${pid}" "${name}" 5 || true
    else
      csb_stop_pid 1 "${pid}" "${name}" 5 || true
    fi
  done
  RH_PIDS=()
}

# rh_fd_raise N: make this shell's soft fd limit cover N connections plus 64
# spare (every connection is a file descriptor), or exit 1.
rh_fd_raise() {
  local need=$(($1 + 64)) soft hard
  soft=$(ulimit -Sn) hard=$(ulimit -Hn)
  if [[ "${soft}" == unlimited ]] || ((soft >= need)); then
    return 0
  fi
  if [[ "${hard}" != unlimited ]] && ((hard < need)); then
    die "${1} connections need ${need} fds; the hard limit here is ${hard}: raise it (ulimit -Hn as root, /etc/security/limits.conf, LimitNOFILE)" 1
  fi
  rh_run ulimit -Sn "${need}"
}

# rh_check_size SIZE: one of the sizes the server was started with.
rh_check_size() {
  [[ ",${RH_SIZES}," == *",$1,"* ]] || usage_error "payload size $1: the rehearsal's server serves ${RH_SIZES}"
}

# rh_check_posint NAME VALUE
rh_check_posint() {
  [[ "$2" =~ ^[0-9]{0,8}[1-9][0-9]{0,8}$ && ${#2} -le 9 ]] || usage_error "$1=$2: expected a positive integer"
}
