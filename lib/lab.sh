# shellcheck shell=bash
# lib/lab.sh: the three labs, one code path.
#
#   local  server and client are this host on 127.0.0.1; server commands run
#          here through the same helper that would send them over ssh.
#   netns  two emulated hosts (lab/netns.sh): the runner re-executes itself
#          inside the client namespace and drives the server namespace's sshd
#          exactly as LAB=ssh drives a real machine.
#   ssh    two real machines: this is the client, SERVER_SSH the server.

# The netns lab's fixed shape. Addresses are in 198.18.0.0/15 (RFC 2544).
# CSB_LAB_ID names one lab instance (namespaces <id>-srv and <id>-cli, state
# in /tmp/<id>-netns), so two people on one machine can each have a lab.
CSB_LAB_ID="${CSB_LAB_ID:-csb}"
if [[ ! "${CSB_LAB_ID}" =~ ^[a-z][a-z0-9]{0,7}$ ]]; then
  printf 'error: CSB_LAB_ID=%q is not valid: expected a short lower-case name such as csb\n' "${CSB_LAB_ID}" >&2
  exit 2
fi
# shellcheck disable=SC2034 # read by lab/netns.sh
CSB_NETNS_SERVER=${CSB_LAB_ID}-srv
CSB_NETNS_CLIENT=${CSB_LAB_ID}-cli
CSB_NETNS_SERVER_NIC=csbs0
CSB_NETNS_CLIENT_NIC=csbc0
CSB_NETNS_SERVER_IP=198.18.0.1
CSB_NETNS_CLIENT_IP=198.18.0.2
# shellcheck disable=SC2034 # read by lab/netns.sh and lib/c10k.sh
CSB_NETNS_PREFIX=24
CSB_NETNS_STATE="/tmp/${CSB_LAB_ID}-netns"
# With CLIENTS=N >= 2 (lab/netns.sh), a switch: a bridge in namespace
# <id>-sw with one port per host; every host on 198.18.0.0/16. Client 1 is
# <id>-cli at 198.18.0.2 on csbc0 as with one client (and keeps 198.18.0.3-
# .254 for Phase 3's source addresses); client k >= 2 is <id>-cli<k> at
# 198.18.<k>.2 on csbc<k-1>, and 198.18.<k>.3-.254 are its Phase 3 range.
# 198.18.1.0/24 is left unused. One client keeps the plain veth pair and /24.
# shellcheck disable=SC2034 # read by lab/netns.sh
CSB_NETNS_SWITCH=${CSB_LAB_ID}-sw
# shellcheck disable=SC2034 # read by lab/netns.sh
CSB_NETNS_LAN_PREFIX=16
# The namespace `up` creates the others from, then removes (lab/netns.sh,
# netns_add), and the TCP established-hash buckets each of them gets: a
# host's own table, as two machines have, sized for C1M (1m connections a
# side). Shared, the 2m sockets of both sides hung in chains of 8 in the
# kernel's 262,144 buckets, and their lookups took 20 % of both CPUs.
# shellcheck disable=SC2034 # read by lab/netns.sh
CSB_NETNS_PARENT=${CSB_LAB_ID}-mk
# shellcheck disable=SC2034 # read by lab/netns.sh
CSB_NETNS_EHASH=1048576

# csb_netns_client_ns K / _ip K / _nic K: client K's namespace, address, NIC.
csb_netns_client_ns() { if (($1 == 1)); then echo "${CSB_NETNS_CLIENT}"; else echo "${CSB_NETNS_CLIENT}$1"; fi; }
csb_netns_client_ip() { if (($1 == 1)); then echo "${CSB_NETNS_CLIENT_IP}"; else echo "198.18.$1.2"; fi; }
csb_netns_client_nic() { echo "csbc$(($1 - 1))"; }

# csb_lab_defaults: fill what the lab implies and the user left empty.
csb_lab_defaults() {
  case "${LAB}" in
    local)
      : "${SERVER_IP:=127.0.0.1}" "${CLIENT_IP:=127.0.0.1}"
      : "${SERVER_NIC:=lo}" "${CLIENT_NIC:=lo}"
      ;;
    netns)
      : "${SERVER_IP:=${CSB_NETNS_SERVER_IP}}" "${CLIENT_IP:=${CSB_NETNS_CLIENT_IP}}"
      : "${SERVER_NIC:=${CSB_NETNS_SERVER_NIC}}" "${CLIENT_NIC:=${CSB_NETNS_CLIENT_NIC}}"
      : "${SERVER_SSH:=root@${CSB_NETNS_SERVER_IP}}"
      : "${SSH_KEY:=${CSB_NETNS_STATE}/id_ed25519}"
      : "${SSH_KNOWN_HOSTS:=${CSB_NETNS_STATE}/known_hosts}"
      ;;
  esac
}

# csb_lab_validate: the combinations each lab needs.
csb_lab_validate() {
  case "${LAB}" in
    local)
      if [[ "${SERVER_IP}" != 127.* && "${SERVER_IP}" != ::1 ]]; then
        printf 'error: LAB=local runs both ends on this host: SERVER_IP must be a loopback address, got %s\n' "${SERVER_IP}" >&2
        return 1
      fi
      ;;
    netns)
      if [[ "${SERVER_IP}" != "${CSB_NETNS_SERVER_IP}" || "${CLIENT_IP}" != "${CSB_NETNS_CLIENT_IP}" ]]; then
        printf 'error: LAB=netns has fixed addresses: SERVER_IP=%s CLIENT_IP=%s (got %s and %s)\n' \
          "${CSB_NETNS_SERVER_IP}" "${CSB_NETNS_CLIENT_IP}" "${SERVER_IP}" "${CLIENT_IP}" >&2
        return 1
      fi
      ;;
    ssh)
      local missing=()
      [[ -n "${SERVER_SSH}" ]] || missing+=(SERVER_SSH)
      [[ -n "${SERVER_IP}" ]] || missing+=(SERVER_IP)
      [[ -n "${CLIENT_IP}" ]] || missing+=(CLIENT_IP)
      if ((${#missing[@]})); then
        printf 'error: LAB=ssh needs %s: set them in lab.env (see lab.env.example) or with -s KEY=VALUE\n' "${missing[*]}" >&2
        return 1
      fi
      ;;
  esac
}

# csb_lab_is_remote: true when server commands go over ssh.
csb_lab_is_remote() { [[ "${LAB}" != local ]]; }

# csb_lab_enter SCRIPT ARGS...: with LAB=netns and not yet inside the client
# namespace, bring the lab up if needed and re-execute SCRIPT there. Returns
# (does nothing) for the other labs or once inside.
csb_lab_enter() {
  csb_lab_lock
  # Registered first, so it runs last: the lock is let go (and a lab this
  # run brought up taken down) once everything else is undone.
  csb_exit_add csb_lab_release
  [[ "${LAB}" == netns ]] || return 0
  # Inside the namespace the step above also takes down, on a refusal
  # before csb_run_begin, a lab this run brought up.
  [[ "${CSB_NETNS_INSIDE:-}" != 1 ]] || return 0
  [[ ${EUID} -eq 0 ]] || die "LAB=netns needs root (it creates namespaces and an sshd); run as root or use LAB=local" 2
  local owned=${CSB_NETNS_HANDED_OVER:-0}
  if ! "${CSB_ROOT}/lab/netns.sh" status >/dev/null 2>&1; then
    log_info "netns lab is down: bringing it up (LINK_RATE=${LINK_RATE})"
    "${CSB_ROOT}/lab/netns.sh" up || die "could not bring the netns lab up (see above); try: make lab-down && make lab-up" 1
    owned=1
  fi
  local script=$1
  shift
  # The kernel's tcp_mem, read here: no namespace of the lab sees it. (An
  # exec runs no exit step: this shell's error-mark directory goes first.)
  [[ -z "${CSB_ERR_DIR}" ]] || rm -rf "${CSB_ERR_DIR}"
  exec ip netns exec "${CSB_NETNS_CLIENT}" env CSB_NETNS_INSIDE=1 CSB_NETNS_OWNED="${owned}" \
    CSB_NETNS_TCP_MEM="$(cat /proc/sys/net/ipv4/tcp_mem 2>/dev/null || true)" bash "${script}" "$@"
}

# csb_netns_hold WHY: for a script that runs several runners on LAB=netns
# (make demo, scripts/ab.sh), so that they share one lab: bring it up once
# when it is down, and take it down at the script's end if this call
# brought it up. WHY is the refusal when not root. Nothing for other labs.
csb_netns_hold() {
  [[ "${LAB}" == netns ]] || return 0
  [[ ${EUID} -eq 0 ]] || die "$1" 2
  ! "${CSB_ROOT}/lab/netns.sh" status >/dev/null 2>&1 || return 0
  "${CSB_ROOT}/lab/netns.sh" up || die "could not bring the netns lab up (see above); try: make lab-down && make lab-up" 1
  csb_exit_add csb_netns_hold_release
}
csb_netns_hold_release() { "${CSB_ROOT}/lab/netns.sh" down || true; }

# csb_lab_release: at the end of a run, take down a netns lab the run brought
# up itself (unless LAB_KEEP=1, or another run waits for the lab: then it is
# handed over to that run), and let go of the lab lock. Once: a second call
# does nothing.
csb_lab_release() {
  if [[ "${LAB}" == netns && "${CSB_NETNS_OWNED:-0}" == 1 && "${LAB_KEEP}" != 1 ]]; then
    CSB_NETNS_OWNED=0
    local waiters
    waiters=$(csb_lab_waiters | tr '\n' ' ')
    if [[ -n "${waiters}" ]]; then
      log_info "keeping the netns lab up: run PID ${waiters% } waits for it (it takes the lab down when it ends)"
      csb_lab_handover
    else
      log_info "taking down the netns lab this run brought up"
      "${CSB_ROOT}/lab/netns.sh" down >/dev/null 2>&1 || log_warn "lab/netns.sh down failed; run: make lab-down"
    fi
  fi
  csb_lab_unlock
}
