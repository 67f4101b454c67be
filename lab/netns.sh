#!/usr/bin/env bash
# lab/netns.sh: two emulated hosts on this machine, joined by a shaped link.
#
# Usage: lab/netns.sh up|down|status [-h]
#
#   up      create namespaces csb-srv (server, 198.18.0.1/24 on csbs0) and
#           csb-cli (client, 198.18.0.2/24 on csbc0), one veth pair, MTU 1500,
#           tbf at LINK_RATE on both ends (none: unshaped), and a real sshd in
#           the server namespace (own hostname via unshare --uts) with a key
#           pair made for the lab. Idempotent: an existing healthy lab is kept.
#   down    remove every namespace, link, process and key that `up` made.
#   status  exit 0 when the lab is up and its sshd answers; 1 otherwise,
#           saying why (a namespace missing, sshd not running, /run/sshd
#           missing, sshd refusing the lab's key).
#
# While a run holds the lab (lib/lock.sh), `down` and a rebuild by `up` are
# refused (exit 7) naming that run; `up` on a lab whose namespaces stand but
# whose sshd is gone restarts sshd alone.
#
# Settings (environment): LINK_RATE (default 1gbit); CSB_LAB_ID (default csb)
# names the instance: namespaces <id>-srv and <id>-cli. State (keys, sshd
# config, PID) lives in /tmp/<id>-netns, outside the repo: a directory of
# root's own, mode 0711 (one owned by another user is refused), private keys
# 0600, the authorized keys 0644 so an ordinary user can log in too.
# Requires root, iproute2, openssh-server, openssh-client. Addresses are from 198.18.0.0/15, the range
# RFC 2544 sets aside for benchmarking: no traffic can leave this machine.
#
# Examples:
#   sudo lab/netns.sh up
#   sudo LINK_RATE=none lab/netns.sh up
#   sudo ip netns exec csb-cli ping -c1 198.18.0.1
#   sudo lab/netns.sh down

# shellcheck source=lib/init.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/init.sh"

usage() { sed -n '2,/^$/{s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"; }

SSHD_PORT=22

# netns_exists NAME: NAME is among `ip -j netns list`'s names (exactly).
netns_exists() {
  local names
  names=$(ip -j netns list 2>/dev/null | csb_ipj netns) || return 1
  grep -qxF -- "$1" <<<"${names}"
}

netns_sshd_pid() {
  local pidfile="${CSB_NETNS_STATE}/sshd.pid" pid
  [[ -r "${pidfile}" ]] || return 1
  pid=$(<"${pidfile}")
  [[ "${pid}" =~ ^[0-9]+$ ]] || return 1
  [[ -r /proc/${pid}/cmdline ]] && tr '\0' ' ' <"/proc/${pid}/cmdline" | grep -qF "${CSB_NETNS_STATE}/sshd_config" || return 1
  echo "${pid}"
}

# netns_ssh_check: can the lab's key log in to the server namespace as root?
# Prints ssh's own complaint when it cannot.
netns_ssh_check() {
  ip netns exec "${CSB_NETNS_CLIENT}" ssh -F /dev/null -o BatchMode=yes -o ConnectTimeout=3 \
    -o "UserKnownHostsFile=${CSB_NETNS_STATE}/known_hosts" -o StrictHostKeyChecking=yes \
    -o IdentitiesOnly=yes -o LogLevel=ERROR -i "${CSB_NETNS_STATE}/id_ed25519" \
    "root@${CSB_NETNS_SERVER_IP}" true </dev/null 2>&1 >/dev/null
}

# netns_why_down: why the lab is not usable, in one line (nothing when it is).
netns_why_down() {
  local ns out
  for ns in "${CSB_NETNS_SERVER}" "${CSB_NETNS_CLIENT}"; do
    netns_exists "${ns}" || { echo "namespace ${ns} does not exist"; return; }
  done
  if [[ ! -d /run/sshd ]]; then
    echo "/run/sshd (sshd's privilege-separation directory) is missing: sshd refuses every login; lab/netns.sh up makes it again"
    return
  fi
  netns_sshd_pid >/dev/null || { echo "the lab's sshd is not running (no live PID in ${CSB_NETNS_STATE}/sshd.pid)"; return; }
  out=$(netns_ssh_check) || { echo "the lab's sshd runs but refuses the lab's key: ${out:-ssh failed}" | tr '\n' ' '; return; }
}

netns_status() { [[ -z "$(netns_why_down)" ]]; }

# netns_state_dir: make the state directory (0711: the authorized keys file
# inside must be readable by an ordinary user the lab's sshd logs in as) or
# check the one there; one that is not root's own is refused.
netns_state_dir() {
  local d=${CSB_NETNS_STATE}
  if [[ ! -e "${d}" && ! -L "${d}" ]]; then
    mkdir -m 0711 "${d}" || die "cannot create ${d}" 1
  fi
  csb_private_dir "${d}" || exit 2
  chmod 0711 "${d}"
}

# netns_lock_guard WHAT: refuse WHAT (tear down, rebuild) while another run
# holds this lab.
netns_lock_guard() {
  local holder
  if holder=$(csb_lock_busy_by_other "netns-${CSB_LAB_ID}"); then
    die "lab ${CSB_LAB_ID} is in use by ${holder}: not going to ${1} it under that run; wait for it to end" 7
  fi
}

# netns_start_sshd: sshd in the server namespace, with its own hostname.
netns_start_sshd() {
  # sshd's privilege-separation directory is shared by every lab on this
  # machine (and by the host's own sshd): made when missing, never removed.
  if [[ ! -d /run/sshd ]]; then
    mkdir -p /run/sshd
    chmod 0755 /run/sshd
  fi
  # sshd -D stays in the foreground of its own session; every stream is
  # redirected so nothing waits on it.
  # shellcheck disable=SC2016 # $0 and $1 expand in the inner bash, by design
  setsid ip netns exec "${CSB_NETNS_SERVER}" unshare --uts \
    bash -c 'hostname csb-server && exec "$0" -D -e -f "$1"' "$(command -v sshd)" \
    "${CSB_NETNS_STATE}/sshd_config" </dev/null >"${CSB_NETNS_STATE}/sshd.log" 2>&1 &
  local i
  for ((i = 0; i < 50; i++)); do
    netns_status && return 0
    sleep 0.1
  done
  die "sshd in ${CSB_NETNS_SERVER} did not answer within 5 s: $(netns_why_down); see ${CSB_NETNS_STATE}/sshd.log" 1
}

# netns_stop_sshd: stop the lab's sshd (by the PID in its own PID file,
# after checking its command line).
netns_stop_sshd() {
  local pid i
  pid=$(netns_sshd_pid) || return 0
  kill -TERM "${pid}" 2>/dev/null || true
  for ((i = 0; i < 30; i++)); do
    kill -0 "${pid}" 2>/dev/null || break
    sleep 0.1
  done
  kill -KILL "${pid}" 2>/dev/null || true
}

netns_shape() {
  local ns=$1 dev=$2
  if [[ "${LINK_RATE}" == none ]]; then
    ip netns exec "${ns}" tc qdisc del dev "${dev}" root 2>/dev/null || true
    return 0
  fi
  # burst must hold a whole GSO super-packet (64 KiB) or tbf drops it; 256 KiB
  # at 1 Gbit/s is a 2 ms burst, as a switch port buffer might allow.
  ip netns exec "${ns}" tc qdisc replace dev "${dev}" root tbf rate "${LINK_RATE}" \
    burst 256kb latency 20ms
}

netns_up() {
  [[ ${EUID} -eq 0 ]] || die "lab/netns.sh up needs root" 2
  need_tool ip iproute2
  need_tool tc iproute2
  need_tool sshd openssh-server
  need_tool ssh openssh-client
  need_tool ssh-keygen openssh-client
  need_tool unshare util-linux
  local why
  why=$(netns_why_down)
  if [[ -z "${why}" ]]; then
    log_info "netns lab already up (${CSB_NETNS_SERVER} ${CSB_NETNS_SERVER_IP} <-> ${CSB_NETNS_CLIENT} ${CSB_NETNS_CLIENT_IP})"
    netns_shape "${CSB_NETNS_SERVER}" "${CSB_NETNS_SERVER_NIC}"
    netns_shape "${CSB_NETNS_CLIENT}" "${CSB_NETNS_CLIENT_NIC}"
    return 0
  fi
  # Namespaces and keys in place, only sshd down (killed, or /run/sshd
  # removed): restart sshd alone, so whatever runs in the namespaces (and a
  # run's leftovers, which its next run stops) is kept.
  if netns_exists "${CSB_NETNS_SERVER}" && netns_exists "${CSB_NETNS_CLIENT}" &&
    [[ -f "${CSB_NETNS_STATE}/sshd_config" && -f "${CSB_NETNS_STATE}/id_ed25519" ]]; then
    netns_state_dir
    log_info "netns lab: ${why}: restarting its sshd"
    netns_stop_sshd
    netns_start_sshd
    log_info "netns lab up again: sshd restarted"
    return 0
  fi
  netns_lock_guard rebuild
  # A half-built lab (a crash, a kill -9) is removed first, then rebuilt.
  netns_down quiet

  log_info "creating namespaces ${CSB_NETNS_SERVER} and ${CSB_NETNS_CLIENT}"
  ip netns add "${CSB_NETNS_SERVER}"
  ip netns add "${CSB_NETNS_CLIENT}"
  ip link add "${CSB_NETNS_SERVER_NIC}" netns "${CSB_NETNS_SERVER}" type veth \
    peer name "${CSB_NETNS_CLIENT_NIC}" netns "${CSB_NETNS_CLIENT}"
  local ns dev ip
  for ns in "${CSB_NETNS_SERVER}" "${CSB_NETNS_CLIENT}"; do
    if [[ "${ns}" == "${CSB_NETNS_SERVER}" ]]; then
      dev=${CSB_NETNS_SERVER_NIC} ip=${CSB_NETNS_SERVER_IP}
    else
      dev=${CSB_NETNS_CLIENT_NIC} ip=${CSB_NETNS_CLIENT_IP}
    fi
    ip -n "${ns}" link set lo up
    ip -n "${ns}" link set "${dev}" mtu 1500
    ip -n "${ns}" addr add "${ip}/${CSB_NETNS_PREFIX}" dev "${dev}"
    ip -n "${ns}" link set "${dev}" up
    netns_shape "${ns}" "${dev}"
  done

  log_info "starting sshd in ${CSB_NETNS_SERVER} on ${CSB_NETNS_SERVER_IP}:${SSHD_PORT}"
  netns_state_dir
  (
    umask 077
    ssh-keygen -q -t ed25519 -N '' -C csb-netns-lab -f "${CSB_NETNS_STATE}/id_ed25519"
    ssh-keygen -q -t ed25519 -N '' -C csb-netns-host -f "${CSB_NETNS_STATE}/ssh_host_ed25519_key"
  )
  # The lab's public key logs in as root or as any ordinary user (sshd reads
  # the authorized keys file as that user: it is world-readable, the private
  # keys are root's alone).
  install -m 0644 "${CSB_NETNS_STATE}/id_ed25519.pub" "${CSB_NETNS_STATE}/authorized_keys"
  printf '%s %s\n' "${CSB_NETNS_SERVER_IP}" "$(cut -d' ' -f1-2 "${CSB_NETNS_STATE}/ssh_host_ed25519_key.pub")" \
    >"${CSB_NETNS_STATE}/known_hosts"
  cat >"${CSB_NETNS_STATE}/sshd_config" <<EOF
# Written by lab/netns.sh for the CS Benchmark netns lab; removed by 'down'.
ListenAddress ${CSB_NETNS_SERVER_IP}
Port ${SSHD_PORT}
HostKey ${CSB_NETNS_STATE}/ssh_host_ed25519_key
PidFile ${CSB_NETNS_STATE}/sshd.pid
AuthorizedKeysFile ${CSB_NETNS_STATE}/authorized_keys
PermitRootLogin prohibit-password
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
MaxStartups 100:30:200
MaxSessions 64
LogLevel ERROR
EOF
  netns_start_sshd
  log_info "netns lab up: server ${CSB_NETNS_SERVER_IP} (${CSB_NETNS_SERVER_NIC}), client ${CSB_NETNS_CLIENT_IP} (${CSB_NETNS_CLIENT_NIC}), link ${LINK_RATE}"
}

# netns_is_ancestor PID: is PID this process or one of its parents?
netns_is_ancestor() {
  local p=${BASHPID} stat
  while [[ "${p}" -gt 1 ]]; do
    [[ "${p}" == "$1" ]] && return 0
    stat=$(<"/proc/${p}/stat") || return 1
    stat=${stat##*) }
    read -r _ p _ <<<"${stat}"
  done
  return 1
}

netns_down() {
  local quiet=${1:-}
  [[ ${EUID} -eq 0 ]] || die "lab/netns.sh down needs root" 2
  netns_lock_guard "take down"
  # A state directory that is not root's own (another user made it, or
  # put a symlink there) is neither used nor removed: refused, named.
  if [[ -e "${CSB_NETNS_STATE}" || -L "${CSB_NETNS_STATE}" ]]; then
    csb_dir_is_mine "${CSB_NETNS_STATE}" || exit 2
  fi
  netns_stop_sshd
  local ns
  for ns in "${CSB_NETNS_SERVER}" "${CSB_NETNS_CLIENT}"; do
    if netns_exists "${ns}"; then
      # Anything a run left inside the namespace was started by this lab;
      # the runner that calls `down` from inside it (and its parents) is spared.
      local p
      for p in $(ip netns pids "${ns}" 2>/dev/null); do
        netns_is_ancestor "${p}" || kill -TERM "${p}" 2>/dev/null || true
      done
      ip netns del "${ns}"
    fi
  done
  if [[ -e "${CSB_NETNS_STATE}" || -L "${CSB_NETNS_STATE}" ]]; then
    rm -rf "${CSB_NETNS_STATE}"
  fi
  [[ -n "${quiet}" ]] || log_info "netns lab down"
}

main() {
  case "${1:-}" in
    -h | --help) usage; exit 0 ;;
    up | down | status) ;;
    "") usage_error "missing command: up, down or status" ;;
    *) usage_error "unknown command: $1" ;;
  esac
  (($# == 1)) || usage_error "unexpected argument: $2"
  : "${LINK_RATE:=1gbit}"
  csb_check_rate "${LINK_RATE}" || usage_error "LINK_RATE=${LINK_RATE} is not valid: expected a tc rate such as 1gbit, or none"
  case "$1" in
    up) netns_up ;;
    down) netns_down ;;
    status)
      local why
      why=$(netns_why_down)
      if [[ -z "${why}" ]]; then
        echo "up: ${CSB_NETNS_SERVER} ${CSB_NETNS_SERVER_IP} <-> ${CSB_NETNS_CLIENT} ${CSB_NETNS_CLIENT_IP}"
      else
        echo "down: ${why}"
        exit 1
      fi
      ;;
  esac
}

main "$@"
