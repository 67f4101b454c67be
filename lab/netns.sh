#!/usr/bin/env bash
# lab/netns.sh: emulated hosts on this machine, joined by shaped links.
#
# Usage: lab/netns.sh up|down|status [-h]
#
#   up      create namespaces csb-srv (server, 198.18.0.1/24 on csbs0) and
#           csb-cli (client, 198.18.0.2/24 on csbc0), one veth pair, MTU 1500,
#           tbf at LINK_RATE on both ends (none: unshaped), and a real sshd in
#           the server namespace (own hostname via unshare --uts) with a key
#           pair made for the lab. Idempotent: a healthy lab (the health
#           check of status) is kept; one whose namespaces, links and keys
#           stand but whose tbf or sshd is gone is repaired in place; any
#           other is removed and rebuilt. Cut short (Ctrl-C: exit 130, TERM:
#           143, an error), up removes what it made; until it finishes,
#           /tmp/<id>-netns/building marks the lab as half-built, so a lab
#           left by an up killed outright is rebuilt, never taken as up.
#           With CLIENTS=N (2 to 8): a switch instead of the pair, a bridge
#           in namespace csb-sw with one port per host, every host on
#           198.18.0.0/16: the server 198.18.0.1 (csbs0), client 1 csb-cli
#           198.18.0.2 (csbc0), client k csb-cli<k> 198.18.<k>.2 (csbc<k-1>);
#           tbf at LINK_RATE on every host's NIC and on every switch port
#           toward a host, so the clients share the server's link as behind
#           a real switch; an sshd in every client namespace but the first
#           (the runner runs there). Up with another N rebuilds the lab.
#   down    remove every namespace, link, process and key that `up` made.
#   status  exit 0 when the lab is healthy; 1 otherwise, saying why: a
#           namespace missing, an up that did not finish, a NIC or switch
#           port down or without its address, a tbf qdisc missing (of a lab
#           shaped at a rate), sshd not running, /run/sshd missing, sshd
#           refusing the lab's key, CLIENTS set to another N than the lab has.
#
# While a run holds the lab (lib/lock.sh), `down` and a rebuild by `up` are
# refused (exit 7) naming that run; the repair in place is not.
#
# Settings (environment): LINK_RATE (default 1gbit); CLIENTS (default 1; for
# status: unset accepts the lab's own N); CSB_LAB_ID (default csb) names the
# instance: namespaces <id>-srv, <id>-cli[<k>], <id>-sw. State (keys, sshd
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

# The lab's sshds: "" is the server's (sshd_config, sshd.pid), "c<k>" client
# k's (sshd_config.c<k>, sshd.c<k>.pid).
netns_sshd_pid() {
  local sfx=${1:+.$1}
  local pidfile="${CSB_NETNS_STATE}/sshd${sfx}.pid" pid
  [[ -r "${pidfile}" ]] || return 1
  pid=$(<"${pidfile}")
  [[ "${pid}" =~ ^[0-9]+$ ]] || return 1
  [[ -r /proc/${pid}/cmdline ]] && tr '\0' ' ' <"/proc/${pid}/cmdline" | grep -qF "${CSB_NETNS_STATE}/sshd_config${sfx} " || return 1
  echo "${pid}"
}

# netns_ssh_check [IP]: can the lab's key log in as root to the sshd on IP
# (default: the server's)? Prints ssh's own complaint when it cannot.
netns_ssh_check() {
  ip netns exec "${CSB_NETNS_CLIENT}" ssh -F /dev/null -o BatchMode=yes -o ConnectTimeout=3 \
    -o "UserKnownHostsFile=${CSB_NETNS_STATE}/known_hosts" -o StrictHostKeyChecking=yes \
    -o IdentitiesOnly=yes -o LogLevel=ERROR -i "${CSB_NETNS_STATE}/id_ed25519" \
    "root@${1:-${CSB_NETNS_SERVER_IP}}" true </dev/null 2>&1 >/dev/null
}

# netns_lab_clients: the number of clients of the lab that stands (1 when
# its state says nothing).
netns_lab_clients() {
  local n=1
  [[ -r "${CSB_NETNS_STATE}/clients" ]] && n=$(<"${CSB_NETNS_STATE}/clients")
  [[ "${n}" =~ ^[1-9]$ ]] || n=1
  echo "${n}"
}

# netns_namespaces N: every namespace of a lab with N clients.
netns_namespaces() {
  local k
  echo "${CSB_NETNS_SERVER}"
  for ((k = 1; k <= $1; k++)); do csb_netns_client_ns "${k}"; done
  (($1 < 2)) || echo "${CSB_NETNS_SWITCH}"
}

# netns_building_note: why the lab is half-built, when an `up` marked it
# as building (STATE/building holds that up's PID) and did not finish;
# nothing when no up is building it.
netns_building_note() {
  local f=${CSB_NETNS_STATE}/building pid=""
  [[ -e "${f}" ]] || return 0
  pid=$(<"${f}") || true
  if [[ "${pid}" =~ ^[0-9]+$ && -r /proc/${pid}/cmdline ]] && tr '\0' ' ' <"/proc/${pid}/cmdline" | grep -qF 'netns.sh up'; then
    echo "lab/netns.sh up (PID ${pid}) is building it"
  else
    echo "an earlier lab/netns.sh up was cut short while building it (${f} is left); lab/netns.sh up rebuilds it"
  fi
}

# netns_host_nics N: "NAMESPACE NIC IP" of every host of a lab with N
# clients.
netns_host_nics() {
  local k ns nic
  echo "${CSB_NETNS_SERVER} ${CSB_NETNS_SERVER_NIC} ${CSB_NETNS_SERVER_IP}"
  for ((k = 1; k <= $1; k++)); do
    ns=$(csb_netns_client_ns "${k}")
    nic=$(csb_netns_client_nic "${k}")
    echo "${ns} ${nic} $(csb_netns_client_ip "${k}")"
  done
}

# netns_switch_ports N: the switch's ports toward the hosts (none with one
# client).
netns_switch_ports() {
  local k
  (($1 >= 2)) || return 0
  echo p-srv
  for ((k = 1; k <= $1; k++)); do echo "p-c${k}"; done
}

# netns_why_broken N: why the lab's namespaces and links do not make a lab
# with N clients (one line; nothing when they do): a namespace missing, an
# up that did not finish, a NIC down or without its address, a switch port
# missing or down. What a rebuild is for.
netns_why_broken() {
  local want=$1 have ns dev ip holders port building
  building=$(netns_building_note)
  [[ -z "${building}" ]] || { echo "${building}"; return; }
  have=$(netns_lab_clients)
  if [[ "${want}" != "${have}" ]] && netns_exists "${CSB_NETNS_SERVER}"; then
    echo "the lab has ${have} client(s), CLIENTS=${want} asks for ${want}; lab/netns.sh up rebuilds it"
    return
  fi
  for ns in $(netns_namespaces "${want}"); do
    netns_exists "${ns}" || { echo "namespace ${ns} does not exist"; return; }
  done
  while read -r ns dev ip; do
    [[ -n "$(ip -n "${ns}" -o link show dev "${dev}" up 2>/dev/null)" ]] ||
      { echo "${dev} in ${ns} is missing or down"; return; }
    holders=$(ip -n "${ns}" -j addr show dev "${dev}" 2>/dev/null | csb_ipj holders "${ip}" 2>/dev/null) || holders=""
    grep -qxF -- "${dev}" <<<"${holders}" || { echo "${dev} in ${ns} does not carry ${ip}"; return; }
  done < <(netns_host_nics "${want}")
  for port in $(netns_switch_ports "${want}"); do
    [[ -n "$(ip -n "${CSB_NETNS_SWITCH}" -o link show dev "${port}" up 2>/dev/null)" ]] ||
      { echo "switch port ${port} in ${CSB_NETNS_SWITCH} is missing or down"; return; }
  done
}

# netns_why_unshaped N: a NIC or switch port without the tbf the lab was
# shaped with (STATE/link_rate; a lab made before that file existed is not
# checked). What netns_reshape repairs.
netns_why_unshaped() {
  local rate="" ns dev _ port
  [[ -r "${CSB_NETNS_STATE}/link_rate" ]] && rate=$(<"${CSB_NETNS_STATE}/link_rate")
  [[ -n "${rate}" && "${rate}" != none ]] || return 0
  while read -r ns dev _; do
    tc -n "${ns}" qdisc show dev "${dev}" root 2>/dev/null | grep -q '^qdisc tbf ' ||
      { echo "${dev} in ${ns} has no tbf qdisc (the lab is shaped at ${rate})"; return; }
  done < <(netns_host_nics "$1")
  for port in $(netns_switch_ports "$1"); do
    tc -n "${CSB_NETNS_SWITCH}" qdisc show dev "${port}" root 2>/dev/null | grep -q '^qdisc tbf ' ||
      { echo "switch port ${port} has no tbf qdisc (the lab is shaped at ${rate})"; return; }
  done
}

# netns_why_no_sshd N: why the lab's sshds do not answer (nothing when
# they all do). What restarting them repairs.
netns_why_no_sshd() {
  local want=$1 out k
  if [[ ! -d /run/sshd ]]; then
    echo "/run/sshd (sshd's privilege-separation directory) is missing: sshd refuses every login; lab/netns.sh up makes it again"
    return
  fi
  netns_sshd_pid >/dev/null || { echo "the lab's sshd is not running (no live PID in ${CSB_NETNS_STATE}/sshd.pid)"; return; }
  out=$(netns_ssh_check) || { echo "the lab's sshd runs but refuses the lab's key: ${out:-ssh failed}" | tr '\n' ' '; return; }
  for ((k = 2; k <= want; k++)); do
    netns_sshd_pid "c${k}" >/dev/null ||
      { echo "the sshd of client ${k} ($(csb_netns_client_ns "${k}")) is not running (no live PID in ${CSB_NETNS_STATE}/sshd.c${k}.pid)"; return; }
    out=$(netns_ssh_check "$(csb_netns_client_ip "${k}")") ||
      { echo "the sshd of client ${k} runs but refuses the lab's key: ${out:-ssh failed}" | tr '\n' ' '; return; }
  done
}

# netns_why_down [N]: why the lab is not usable with N clients (default:
# the lab's own N), in one line (nothing when it is): the health check of
# `status` and of `up`'s "already up" — namespaces, a finished build,
# links and addresses, the tbf qdiscs, every sshd answering the lab's key.
netns_why_down() {
  local want=${1:-$(netns_lab_clients)} why
  why=$(netns_why_broken "${want}")
  [[ -n "${why}" ]] || why=$(netns_why_unshaped "${want}")
  [[ -n "${why}" ]] || why=$(netns_why_no_sshd "${want}")
  [[ -z "${why}" ]] || echo "${why}"
}

netns_status() { [[ -z "$(netns_why_down "$@")" ]]; }

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

# netns_start_sshd [K]: the lab's sshd in the server namespace (or, with K,
# in client K's), with its own hostname.
netns_start_sshd() {
  local k=${1:-} ns=${CSB_NETNS_SERVER} host=csb-server sfx=""
  if [[ -n "${k}" ]]; then
    ns=$(csb_netns_client_ns "${k}") host=csb-client${k} sfx=.c${k}
  fi
  # sshd's privilege-separation directory is shared by every lab on this
  # machine (and by the host's own sshd): made when missing, never removed.
  if [[ ! -d /run/sshd ]]; then
    mkdir -p /run/sshd
    chmod 0755 /run/sshd
  fi
  # sshd -D stays in the foreground of its own session; every stream is
  # redirected so nothing waits on it. (The trailing space after the config
  # file's name lets netns_sshd_pid tell sshd_config from sshd_config.c2.)
  # shellcheck disable=SC2016 # $0, $1 and $2 expand in the inner bash, by design
  setsid ip netns exec "${ns}" unshare --uts \
    bash -c 'hostname "$2" && exec "$0" -D -e -f "$1"' "$(command -v sshd)" \
    "${CSB_NETNS_STATE}/sshd_config${sfx}" "${host}" </dev/null >"${CSB_NETNS_STATE}/sshd${sfx}.log" 2>&1 &
  local i
  for ((i = 0; i < 50; i++)); do
    if [[ -z "${k}" ]]; then
      netns_sshd_pid >/dev/null && netns_ssh_check >/dev/null && return 0
    else
      netns_sshd_pid "c${k}" >/dev/null && netns_ssh_check "$(csb_netns_client_ip "${k}")" >/dev/null && return 0
    fi
    sleep 0.1
  done
  die "sshd in ${ns} did not answer within 5 s: $(netns_why_no_sshd "${k:-1}"); see ${CSB_NETNS_STATE}/sshd${sfx}.log" 1
}

# netns_stop_sshd [K]: stop the lab's sshd (by the PID in its own PID file,
# after checking its command line).
netns_stop_sshd() {
  local pid i
  pid=$(netns_sshd_pid ${1:+"c$1"}) || return 0
  kill -TERM "${pid}" 2>/dev/null || true
  for ((i = 0; i < 30; i++)); do
    csb_alive "${pid}" || break
    sleep 0.1
  done
  kill -KILL "${pid}" 2>/dev/null || true
}

# netns_stop_sshds: every sshd of the lab (the server's and each client's).
netns_stop_sshds() {
  local f k
  netns_stop_sshd
  for f in "${CSB_NETNS_STATE}"/sshd.c*.pid; do
    [[ -e "${f}" ]] || continue
    k=${f##*/sshd.c}
    k=${k%.pid}
    [[ "${k}" =~ ^[0-9]+$ ]] && netns_stop_sshd "${k}"
  done
}

# netns_start_sshds N: the server's sshd and those of clients 2..N.
netns_start_sshds() {
  local k
  netns_start_sshd
  for ((k = 2; k <= $1; k++)); do netns_start_sshd "${k}"; done
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

# netns_sshd_config FILE LISTEN_IP SUFFIX: one sshd's configuration.
# SetEnv SHLVL=1: bash run by sshd sources ~/.bashrc even for `ssh host
# cmd` (Debian builds it with SSH_SOURCE_BASHRC) unless it is a nested
# shell; a runner opens ~30 sessions a run, and a slow .bashrc (pyenv init:
# 0.7 s) was most of a short run's time. The lab's hosts are the lab's own;
# a real host's sshd and .bashrc are its owner's (docs/labs.md).
netns_sshd_config() {
  cat >"$1" <<EOF
# Written by lab/netns.sh for the CS Benchmark netns lab; removed by 'down'.
ListenAddress $2
Port ${SSHD_PORT}
HostKey ${CSB_NETNS_STATE}/ssh_host_ed25519_key
PidFile ${CSB_NETNS_STATE}/sshd$3.pid
AuthorizedKeysFile ${CSB_NETNS_STATE}/authorized_keys
PermitRootLogin prohibit-password
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
MaxStartups 100:30:200
MaxSessions 64
SetEnv SHLVL=1
LogLevel ERROR
EOF
}

# netns_host_link NS DEV IP PREFIX: address, MTU and shaping of a host's NIC.
netns_host_link() {
  local ns=$1 dev=$2 ip=$3 prefix=$4
  ip -n "${ns}" link set lo up
  ip -n "${ns}" link set "${dev}" mtu 1500
  ip -n "${ns}" addr add "${ip}/${prefix}" dev "${dev}"
  ip -n "${ns}" link set "${dev}" up
  netns_shape "${ns}" "${dev}"
}

# netns_switch_port NS DEV PORT: a veth pair from host namespace NS (DEV) to
# the switch (PORT, on the bridge, shaped toward the host).
netns_switch_port() {
  local ns=$1 dev=$2 port=$3
  ip link add "${dev}" netns "${ns}" type veth peer name "${port}" netns "${CSB_NETNS_SWITCH}"
  ip -n "${CSB_NETNS_SWITCH}" link set "${port}" mtu 1500
  ip -n "${CSB_NETNS_SWITCH}" link set "${port}" master br0
  ip -n "${CSB_NETNS_SWITCH}" link set "${port}" up
  netns_shape "${CSB_NETNS_SWITCH}" "${port}"
}

# netns_reshape N: LINK_RATE on every NIC and switch port of a lab with N clients.
netns_reshape() {
  local n=$1 k ns
  netns_shape "${CSB_NETNS_SERVER}" "${CSB_NETNS_SERVER_NIC}"
  for ((k = 1; k <= n; k++)); do
    ns=$(csb_netns_client_ns "${k}")
    netns_shape "${ns}" "$(csb_netns_client_nic "${k}")"
  done
  if ((n >= 2)); then
    netns_shape "${CSB_NETNS_SWITCH}" p-srv
    for ((k = 1; k <= n; k++)); do netns_shape "${CSB_NETNS_SWITCH}" "p-c${k}"; done
  fi
}

# What `up` has under way, for netns_up_undo: "build" (a lab from
# nothing), "sshd" (restarting the sshds of a lab that stands) or "".
NETNS_UP_DOING=""

# netns_up_undo: an exit step. An `up` cut short (Ctrl-C: exit 130; TERM:
# 143; an error) removes what it made: the half-built lab, or the sshds it
# was restarting; the exit status stays. A second signal during the undo
# stops it, and leaves STATE/building, so the next `up` rebuilds.
netns_up_undo() {
  local rc=$?
  case "${NETNS_UP_DOING}" in
    build)
      log_warn "lab/netns.sh up did not finish (exit ${rc}): removing the half-built lab ${CSB_LAB_ID}"
      netns_teardown || log_warn "could not remove all of it: run lab/netns.sh down"
      ;;
    sshd)
      log_warn "lab/netns.sh up did not finish (exit ${rc}): stopping the sshd(s) it was starting"
      netns_stop_sshds
      ;;
  esac
  NETNS_UP_DOING=""
}

# netns_state_complete N: the state files an `up` writes before it starts
# the sshds of a lab with N clients are all there.
netns_state_complete() {
  local f k
  for f in clients id_ed25519 authorized_keys known_hosts ssh_host_ed25519_key sshd_config; do
    [[ -f "${CSB_NETNS_STATE}/${f}" ]] || return 1
  done
  for ((k = 2; k <= $1; k++)); do [[ -f "${CSB_NETNS_STATE}/sshd_config.c${k}" ]] || return 1; done
}

netns_up() {
  [[ ${EUID} -eq 0 ]] || die "lab/netns.sh up needs root" 2
  need_tool ip iproute2
  need_tool tc iproute2
  need_tool sshd openssh-server
  need_tool ssh openssh-client
  need_tool ssh-keygen openssh-client
  need_tool unshare util-linux
  csb_exit_add netns_up_undo
  local n=${CLIENTS:-1} why
  why=$(netns_why_down "${n}")
  if [[ -z "${why}" ]]; then
    log_info "netns lab already up (${CSB_NETNS_SERVER} ${CSB_NETNS_SERVER_IP} <-> ${n} client(s), ${CSB_NETNS_CLIENT} ${CSB_NETNS_CLIENT_IP} first)"
    netns_reshape "${n}"
    echo "${LINK_RATE}" >"${CSB_NETNS_STATE}/link_rate"
    return 0
  fi
  # Namespaces, links, addresses and keys in place, only a qdisc or an
  # sshd missing (a tc command, a killed sshd, /run/sshd removed): repair
  # those alone, so whatever runs in the namespaces (and a run's
  # leftovers, which its next run stops) is kept.
  if [[ -z "$(netns_why_broken "${n}")" ]] && netns_state_complete "${n}"; then
    netns_state_dir
    log_info "netns lab: ${why}: repairing it"
    netns_reshape "${n}"
    echo "${LINK_RATE}" >"${CSB_NETNS_STATE}/link_rate"
    if [[ -n "$(netns_why_no_sshd "${n}")" ]]; then
      NETNS_UP_DOING=sshd
      netns_stop_sshds
      netns_start_sshds "${n}"
      NETNS_UP_DOING=""
    fi
    log_info "netns lab up again: qdiscs at ${LINK_RATE}, sshd(s) answering"
    return 0
  fi
  netns_lock_guard rebuild
  if [[ -n "$(netns_lab_namespaces)" || -e "${CSB_NETNS_STATE}" ]]; then
    log_info "netns lab: ${why%; lab/netns.sh up rebuilds it}: removing what stands and building it again"
  fi
  # A half-built lab (an up cut short, a crash, a kill -9), or one with
  # another number of clients, is removed first, then rebuilt. From here
  # an up cut short removes what it made (netns_up_undo), and until it
  # finishes STATE/building says that the lab is not whole.
  netns_teardown || exit 2
  NETNS_UP_DOING=build
  netns_state_dir
  echo "$$" >"${CSB_NETNS_STATE}/building"
  echo "${n}" >"${CSB_NETNS_STATE}/clients"

  local k ns nic prefix=${CSB_NETNS_PREFIX}
  log_info "creating namespaces $(netns_namespaces "${n}" | tr '\n' ' ')"
  # shellcheck disable=SC2046 # one name per line
  netns_add $(netns_namespaces "${n}")
  if ((n == 1)); then
    ip link add "${CSB_NETNS_SERVER_NIC}" netns "${CSB_NETNS_SERVER}" type veth \
      peer name "${CSB_NETNS_CLIENT_NIC}" netns "${CSB_NETNS_CLIENT}"
  else
    # The switch: a bridge in its own namespace (nothing in the root one).
    prefix=${CSB_NETNS_LAN_PREFIX}
    ip -n "${CSB_NETNS_SWITCH}" link set lo up
    ip -n "${CSB_NETNS_SWITCH}" link add br0 type bridge
    ip -n "${CSB_NETNS_SWITCH}" link set br0 up
    netns_switch_port "${CSB_NETNS_SERVER}" "${CSB_NETNS_SERVER_NIC}" p-srv
    for ((k = 1; k <= n; k++)); do
      ns=$(csb_netns_client_ns "${k}")
      netns_switch_port "${ns}" "$(csb_netns_client_nic "${k}")" "p-c${k}"
    done
  fi
  netns_host_link "${CSB_NETNS_SERVER}" "${CSB_NETNS_SERVER_NIC}" "${CSB_NETNS_SERVER_IP}" "${prefix}"
  for ((k = 1; k <= n; k++)); do
    ns=$(csb_netns_client_ns "${k}")
    nic=$(csb_netns_client_nic "${k}")
    netns_host_link "${ns}" "${nic}" "$(csb_netns_client_ip "${k}")" "${prefix}"
  done

  log_info "starting sshd in ${CSB_NETNS_SERVER} on ${CSB_NETNS_SERVER_IP}:${SSHD_PORT}$( ((n < 2)) || echo " and in clients 2..${n}")"
  (
    umask 077
    ssh-keygen -q -t ed25519 -N '' -C csb-netns-lab -f "${CSB_NETNS_STATE}/id_ed25519"
    ssh-keygen -q -t ed25519 -N '' -C csb-netns-host -f "${CSB_NETNS_STATE}/ssh_host_ed25519_key"
  )
  # The lab's public key logs in as root or as any ordinary user (sshd reads
  # the authorized keys file as that user: it is world-readable, the private
  # keys are root's alone). Every sshd of the lab has the same host key.
  install -m 0644 "${CSB_NETNS_STATE}/id_ed25519.pub" "${CSB_NETNS_STATE}/authorized_keys"
  local hostkey
  hostkey=$(cut -d' ' -f1-2 "${CSB_NETNS_STATE}/ssh_host_ed25519_key.pub")
  {
    printf '%s %s\n' "${CSB_NETNS_SERVER_IP}" "${hostkey}"
    for ((k = 2; k <= n; k++)); do printf '%s %s\n' "$(csb_netns_client_ip "${k}")" "${hostkey}"; done
  } >"${CSB_NETNS_STATE}/known_hosts"
  netns_sshd_config "${CSB_NETNS_STATE}/sshd_config" "${CSB_NETNS_SERVER_IP}" ""
  for ((k = 2; k <= n; k++)); do
    netns_sshd_config "${CSB_NETNS_STATE}/sshd_config.c${k}" "$(csb_netns_client_ip "${k}")" ".c${k}"
  done
  netns_start_sshds "${n}"
  echo "${LINK_RATE}" >"${CSB_NETNS_STATE}/link_rate"
  rm -f "${CSB_NETNS_STATE}/building"
  NETNS_UP_DOING=""
  if ((n == 1)); then
    log_info "netns lab up: server ${CSB_NETNS_SERVER_IP} (${CSB_NETNS_SERVER_NIC}), client ${CSB_NETNS_CLIENT_IP} (${CSB_NETNS_CLIENT_NIC}), link ${LINK_RATE}"
  else
    log_info "netns lab up: server ${CSB_NETNS_SERVER_IP} (${CSB_NETNS_SERVER_NIC}) and ${n} clients $(for ((k = 1; k <= n; k++)); do printf '%s ' "$(csb_netns_client_ip "${k}")"; done)on switch ${CSB_NETNS_SWITCH}, every port ${LINK_RATE}"
  fi
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

# netns_lab_namespaces: every namespace of this lab that exists, whatever
# its number of clients (<id>-srv, <id>-cli, <id>-cli<k>, <id>-sw).
netns_lab_namespaces() {
  local names
  names=$(ip -j netns list 2>/dev/null | csb_ipj netns) || return 0
  grep -xE -- "(${CSB_NETNS_SERVER}|${CSB_NETNS_CLIENT}[0-9]*|${CSB_NETNS_SWITCH}|${CSB_NETNS_PARENT})" <<<"${names}" || true
}

# netns_add NS...: create the namespaces, each with a TCP established hash
# of its own (CSB_NETNS_EHASH buckets) where the kernel has
# net.ipv4.tcp_child_ehash_entries (Linux >= 6.1), which a new namespace
# reads from the namespace that creates it: they are created from inside
# CSB_NETNS_PARENT (nsenter --net: the mount namespace stays this one, so
# /run/netns sees them), which is removed again. Nothing of the root
# namespace is changed. Elsewhere they share the kernel's table, as before.
netns_add() {
  local ns
  local -a via=()
  ip netns add "${CSB_NETNS_PARENT}"
  if command -v nsenter >/dev/null &&
    ip netns exec "${CSB_NETNS_PARENT}" sysctl -qw "net.ipv4.tcp_child_ehash_entries=${CSB_NETNS_EHASH}" 2>/dev/null; then
    via=(nsenter "--net=/run/netns/${CSB_NETNS_PARENT}")
  else
    log_info "this kernel has no net.ipv4.tcp_child_ehash_entries: the lab's namespaces share the kernel's TCP hash"
  fi
  for ns in "$@"; do "${via[@]}" ip netns add "${ns}"; done
  ip netns del "${CSB_NETNS_PARENT}"
}

# netns_teardown: remove every namespace, process and key of this lab.
# A state directory that is not root's own (another user made it, or put
# a symlink there) is neither used nor removed: refused, named, status 1.
netns_teardown() {
  if [[ -e "${CSB_NETNS_STATE}" || -L "${CSB_NETNS_STATE}" ]]; then
    csb_dir_is_mine "${CSB_NETNS_STATE}" || return 1
  fi
  netns_stop_sshds
  local ns p
  for ns in $(netns_lab_namespaces); do
    # Anything a run left inside the namespace was started by this lab;
    # the runner that calls `down` from inside it (and its parents) is spared.
    for p in $(ip netns pids "${ns}" 2>/dev/null); do
      netns_is_ancestor "${p}" || kill -TERM "${p}" 2>/dev/null || true
    done
    ip netns del "${ns}"
  done
  if [[ -e "${CSB_NETNS_STATE}" || -L "${CSB_NETNS_STATE}" ]]; then
    rm -rf "${CSB_NETNS_STATE}"
  fi
}

netns_down() {
  [[ ${EUID} -eq 0 ]] || die "lab/netns.sh down needs root" 2
  netns_lock_guard "take down"
  netns_teardown || exit 2
  log_info "netns lab down"
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
  [[ "${LINK_RATE}" == none || "${LINK_RATE}" =~ ^[1-9][0-9]{0,5}(k|m|g)?bit$ ]] || usage_error "LINK_RATE=${LINK_RATE} is not valid: expected a tc rate such as 1gbit, or none"
  if [[ -n "${CLIENTS:-}" ]] && { [[ ! "${CLIENTS}" =~ ^[1-9]$ ]] || ((CLIENTS > CSB_NETNS_MAX_CLIENTS)); }; then
    usage_error "CLIENTS=${CLIENTS} is not valid: expected a number of client hosts from 1 to ${CSB_NETNS_MAX_CLIENTS}"
  fi
  case "$1" in
    up) netns_up ;;
    down) netns_down ;;
    status)
      local why n k
      why=$(netns_why_down "${CLIENTS:-}")
      n=$(netns_lab_clients)
      if [[ -z "${why}" ]] && ((n > 1)); then
        echo "up: ${CSB_NETNS_SERVER} ${CSB_NETNS_SERVER_IP} <-> ${n} clients on ${CSB_NETNS_SWITCH}: $(for ((k = 1; k <= n; k++)); do printf '%s %s ' "$(csb_netns_client_ns "${k}")" "$(csb_netns_client_ip "${k}")"; done)"
      elif [[ -z "${why}" ]]; then
        echo "up: ${CSB_NETNS_SERVER} ${CSB_NETNS_SERVER_IP} <-> ${CSB_NETNS_CLIENT} ${CSB_NETNS_CLIENT_IP}"
      else
        echo "down: ${why}"
        exit 1
      fi
      ;;
  esac
}

main "$@"
