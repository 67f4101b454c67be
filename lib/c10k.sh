# shellcheck shell=bash
# lib/c10k.sh: Phase 3 (C10K): scenarios of many connections, split across
# server processes and client source addresses as the hosts' limits require.
#
# A scenario is one cell: KIND idle | lowrate | active with CONNS
# connections (and RPS requests/s for lowrate). Before it runs, c10k_plan
# reads what bounds it and decides how to split it. What cannot work is
# refused before a connection is opened, naming the setting to change; what
# the runner can fix itself (more processes, more client addresses) it does
# and records in raw/<cell>.plan.env:
#
#   fds      server: ceil(conns / (0.9 x (hard - 64))) processes sharing the
#            port with SO_REUSEPORT (the kernel spreads connections by a hash
#            of the 4-tuple, not evenly: 10 % slack). client: connclient
#            needs conns + 64 fds, so ceil(conns / (hard - 64)) processes,
#            one per source address. wrk (active) is one process and is
#            refused above hard - 64.
#   ports    toward one server IP:port a source address has the
#            ip_local_port_range ports minus the sockets already there; a
#            TIME_WAIT socket keeps its port 60 s unless tcp_tw_reuse applies
#            (1, or 2 on loopback). An address with TW_THRESHOLD or more
#            TIME_WAIT sockets there is busy: every connect() searches past
#            them (seconds of system CPU per 10k connects). The netns lab
#            then adds a fresh address (CLIENT_IP + 1, + 2, ...; removed at
#            exit), LAB=local takes the next 127.0.0.x, LAB=ssh the next of
#            CLIENT_EXTRA_IPS; when none is left a busy address with enough
#            free ports is used (and the report says so); when the ports do
#            not suffice the scenario waits for TIME_WAIT to drain
#            (TW_WAIT_MAX seconds at most) and is refused after that.
#   backlog  the server's somaxconn and tcp_max_syn_backlog must hold 100 ms
#            of connects at the paced rate (CONNECT_RATE / 10). wrk opens its
#            connections at once: a backlog below them is a warning.
#   memory   an estimate per connection (C10K_KB_PER_CONN) against
#            MemAvailable, and the connections' files against fs.file-max
#            (one budget when both ends share the machine: netns, local).
#
# Around each scenario the server processes' /proc/PID/status and both
# hosts' /proc/net/sockstat are kept before the clients start and once every
# connection is held (idle: with `ss` of the ESTABLISHED sockets on both
# hosts), under monitors/{server,client}/c10k/; csb summarize computes RSS
# per connection and the counts from those files.
# This module changes no sysctl.

# Descriptors a process needs beyond one per connection (connclient checks
# the same 64 itself).
C10K_FD_MARGIN=64
# Ports of a source address left unused, so a stray connection never fails.
C10K_PORT_MARGIN=256
# Estimated KiB per connection: server (user space, about 20 KiB measured,
# plus the kernel socket) and client by tool.
declare -gA C10K_KB_PER_CONN=([server]=32 [idle]=8 [lowrate]=16 [active]=8)

declare -gA C10K_SRV=() C10K_CLI=()
declare -ga C10K_CELLS=() C10K_ADDED=() C10K_CLIENT_PIDS=() C10K_CLIENT_OUT=() C10K_CLIENT_LOG=()
declare -ga C10K_SOURCES=() C10K_SHARE_CONNS=() C10K_SHARE_RPS=() C10K_SHARE_RATE=()
C10K_SERVER_PROCS=1
C10K_REFUSAL=""
C10K_PLAN_NOTE=""
C10K_CONNECT_RATE=""
C10K_HOLD=""
C10K_SECS=""

# csb_c10k_settings: the settings every Phase 3 runner shares (declared
# before csb_config_load; CONNS and RPS are each runner's own).
csb_c10k_settings() {
  csb_config_declare CONNECT_RATE "" posint_or_empty "Phase 3: connects per second over all client processes (empty: the profile's: smoke and quick 5000, full 2000)"
  csb_config_declare HOLD "" posint_or_empty "Phase 3: seconds an idle scenario holds its connections (empty: the profile's: 3, 15, 60)"
  csb_config_declare TW_THRESHOLD 500 uint "Phase 3: TIME_WAIT sockets toward the server from which a client address counts as busy; the retry runner waits until the client has fewer"
  csb_config_declare TW_WAIT_MAX 120 posint "Phase 3: longest wait, in seconds, for TIME_WAIT to drain before a scenario"
  csb_config_declare CLIENT_EXTRA_IPS "" ips_or_empty "Phase 3, LAB=ssh: more source addresses already on CLIENT_NIC (netns adds its own, local uses 127.0.0.x)"
}

csb_check_ips_or_empty() { [[ -z "$1" ]] || csb_check_list ip "$1"; }

csb_check_scenarios() { [[ "$1" =~ ^[a-z]+(,[a-z]+)*$ ]]; }

# c10k_check_scenarios ALLOWED...: SCENARIOS must list only ALLOWED, once each.
c10k_check_scenarios() {
  local -a items
  local item a ok
  local -A seen=()
  IFS=, read -r -a items <<<"${SCENARIOS}"
  for item in "${items[@]}"; do
    ok=0
    for a in "$@"; do [[ "${item}" == "${a}" ]] && ok=1; done
    ((ok)) || usage_error "SCENARIOS=${SCENARIOS}: ${item} is not a scenario of this runner: expected a comma-separated list of $*"
    [[ -z "${seen[${item}]+x}" ]] || usage_error "SCENARIOS=${SCENARIOS}: ${item} is listed twice"
    seen[${item}]=1
  done
}

# c10k_wants KIND: is KIND in SCENARIOS?
c10k_wants() { [[ ",${SCENARIOS}," == *",$1,"* ]]; }

# c10k_scenarios KIND...: the cells of a run, in order, as "KIND CONNS RPS":
# for each count in CONNS, each KIND that SCENARIOS wants (every KIND when
# the runner has no SCENARIOS setting), a low-rate one per rate in RPS.
c10k_scenarios() {
  local -a counts rates
  local c r kind
  IFS=, read -r -a counts <<<"${CONNS}"
  IFS=, read -r -a rates <<<"${RPS}"
  for c in "${counts[@]}"; do
    c=$((10#${c}))
    for kind in "$@"; do
      [[ -z "${CSB_CHECK[SCENARIOS]+x}" ]] || c10k_wants "${kind}" || continue
      if [[ "${kind}" == lowrate ]]; then
        for r in "${rates[@]}"; do echo "lowrate ${c} $((10#${r}))"; done
      else
        echo "${kind} ${c} 0"
      fi
    done
  done
}

# c10k_begin NAME "CLIENT TOOLS" ARGV...: everything before the first
# scenario, the same for every Phase 3 runner: build, ssh, preflight (tools,
# route, every cell of C10K_CELLS planned against both hosts' limits), then
# the run directory, the facts, the fd limit, environment, monitors, and the
# server binary on the server host.
c10k_begin() {
  local name=$1 tools=$2
  shift 2
  csb_build_all
  csb_build connclient cmd/connclient
  csb_ssh_open
  csb_preflight_tools "${tools} curl sar mpstat pidstat sadf nstat ip ss" "sar mpstat pidstat sadf nstat ip ss"
  csb_preflight_route
  c10k_facts
  c10k_preflight "${C10K_CELLS[@]}"
  csb_run_begin 03-c10k "${name}" "$@"
  c10k_record_facts
  c10k_raise_fd
  csb_capture_env
  csb_monitors_start
  csb_server_deploy
}

# c10k_run_cells: every scenario of C10K_CELLS, in order.
c10k_run_cells() {
  local cell
  for cell in "${C10K_CELLS[@]}"; do
    # shellcheck disable=SC2086 # a cell is "kind conns rps"
    c10k_scenario ${cell}
  done
}

# c10k_profile: resolve the profile's values (HOLD, DURATION, CONNECT_RATE).
c10k_profile() {
  C10K_HOLD=${HOLD:-$(csb_profile 3 15 60)}
  C10K_SECS=${DURATION:-$(csb_profile 5 15 30)}
  C10K_CONNECT_RATE=${CONNECT_RATE:-$(csb_profile 5000 5000 2000)}
  ((10#${C10K_SECS} > 0)) || usage_error "DURATION=0: a scenario needs at least 1 second (empty: the profile's)"
}

# c10k_name CONNS: 10000 -> 10k, 12345 -> 12345 (for cell names).
c10k_name() {
  if (($1 % 1000 == 0)); then echo "$(($1 / 1000))k"; else echo "$1"; fi
}

c10k_ceil() { echo $((($1 + $2 - 1) / $2)); }

# ---- limits of both hosts ----------------------------------------------------

c10k_facts_script() {
  cat <<'EOF'
echo "fd_hard=$(ulimit -Hn)"
echo "fd_soft=$(ulimit -Sn)"
for k in net.core.somaxconn net.ipv4.tcp_max_syn_backlog net.ipv4.tcp_syncookies \
  net.ipv4.ip_local_port_range net.ipv4.tcp_tw_reuse net.ipv4.tcp_max_tw_buckets \
  fs.file-max fs.nr_open fs.file-nr; do
  printf '%s=%s\n' "$k" "$(sysctl -n "$k" 2>/dev/null | tr -s '\t ' '  ')"
done
printf 'mem_available_kb=%s\n' "$(sed -n 's/^MemAvailable: *\([0-9]*\) kB$/\1/p' /proc/meminfo)"
EOF
}

# c10k_read_facts ARRAY TEXT: KEY=VALUE lines into an associative array.
c10k_read_facts() {
  local -n _f=$1
  local k v
  while IFS='=' read -r k v; do
    [[ -n "${k}" ]] && _f["${k}"]=${v}
  done <<<"$2"
}

# c10k_num VALUE: VALUE when it is a number ("unlimited": a large one), else 0.
c10k_num() {
  case "$1" in
    unlimited) echo 1000000000 ;;
    '' | *[!0-9]*) echo 0 ;;
    *) echo $((10#$1)) ;;
  esac
}

# c10k_facts: read both hosts' limits (ulimit -Hn of a process started the
# way the runner starts them, sysctls, MemAvailable) into C10K_SRV/C10K_CLI.
c10k_facts() {
  local out
  out=$(on_server_sh "$(c10k_facts_script)") || die "cannot read the server's limits" 4
  c10k_read_facts C10K_SRV "${out}"
  out=$(bash -c "$(c10k_facts_script)") || die "cannot read this host's limits" 1
  c10k_read_facts C10K_CLI "${out}"
  local lo hi
  read -r lo hi <<<"${C10K_CLI[net.ipv4.ip_local_port_range]}"
  C10K_CLI[port_lo]=$(c10k_num "${lo}")
  C10K_CLI[port_hi]=$(c10k_num "${hi}")
  C10K_CLI[ports]=$((C10K_CLI[port_hi] - C10K_CLI[port_lo] + 1))
  # TIME_WAIT frees its port for a new connect() only with tcp_tw_reuse=1,
  # or =2 (the default) on loopback.
  C10K_CLI[tw_reusable]=0
  if [[ "${C10K_CLI[net.ipv4.tcp_tw_reuse]}" == 1 ]] ||
    [[ "${C10K_CLI[net.ipv4.tcp_tw_reuse]}" == 2 && "${SERVER_IP}" == 127.* ]]; then
    C10K_CLI[tw_reusable]=1
  fi
  log_info "limits: server fd hard ${C10K_SRV[fd_hard]}, somaxconn ${C10K_SRV[net.core.somaxconn]}, tcp_max_syn_backlog ${C10K_SRV[net.ipv4.tcp_max_syn_backlog]}; client fd hard ${C10K_CLI[fd_hard]}, ports ${C10K_CLI[port_lo]}-${C10K_CLI[port_hi]} (${C10K_CLI[ports]}), tcp_tw_reuse ${C10K_CLI[net.ipv4.tcp_tw_reuse]}"
}

# c10k_record_facts: keep the limits read above in the run directory.
c10k_record_facts() {
  local k
  for k in $(printf '%s\n' "${!C10K_SRV[@]}" | sort); do
    printf '%s=%s\n' "${k}" "${C10K_SRV[${k}]}"
  done >"${CSB_RUN_DIR}/raw/limits.server.env"
  for k in $(printf '%s\n' "${!C10K_CLI[@]}" | sort); do
    printf '%s=%s\n' "${k}" "${C10K_CLI[${k}]}"
  done >"${CSB_RUN_DIR}/raw/limits.client.env"
  csb_run_set sysctls_changed none
}

# c10k_shared_host: do both ends share one machine's memory and files?
c10k_shared_host() { [[ "${LAB}" == netns || "${LAB}" == local ]]; }

# c10k_static_refusal KIND CONNS RPS: print why the scenario cannot work on
# these hosts whatever the sockets in use (and return 0), or return 1.
c10k_static_refusal() {
  local kind=$1 conns=$2 rps=${3:-0}
  local srv_hard cli_hard procs per why=()
  srv_hard=$(c10k_num "${C10K_SRV[fd_hard]}")
  cli_hard=$(c10k_num "${C10K_CLI[fd_hard]}")
  if ((srv_hard <= C10K_FD_MARGIN + 100)); then
    why+=("the server's hard fd limit is ${C10K_SRV[fd_hard]}: raise it (limits.conf nofile, LimitNOFILE) to run any C10K scenario")
  fi
  if ((cli_hard <= C10K_FD_MARGIN + 100)); then
    why+=("the client's hard fd limit is ${C10K_CLI[fd_hard]}: raise it (ulimit -Hn as root, limits.conf nofile)")
  fi
  if [[ "${kind}" == active ]] && ((conns + C10K_FD_MARGIN > cli_hard)); then
    why+=("wrk opens all ${conns} connections from one process: it needs $((conns + C10K_FD_MARGIN)) fds, the client's hard limit is ${cli_hard}: raise it (ulimit -Hn, limits.conf nofile) or lower CONNS")
  fi
  if [[ "${kind}" == active ]] && ((conns + C10K_PORT_MARGIN > C10K_CLI[ports])); then
    why+=("wrk connects from CLIENT_IP only: ${conns} connections need more than the ${C10K_CLI[ports]} ports of net.ipv4.ip_local_port_range=${C10K_CLI[port_lo]}-${C10K_CLI[port_hi]}: widen it on the client")
  fi
  if ((C10K_CLI[ports] <= C10K_PORT_MARGIN)); then
    why+=("net.ipv4.ip_local_port_range=${C10K_CLI[port_lo]}-${C10K_CLI[port_hi]} on the client leaves no ports")
  elif [[ "${kind}" != active ]] && ((cli_hard > C10K_FD_MARGIN + 100)); then
    # One connclient process per source address: as many addresses as
    # the ports and the fd limit each ask for.
    local by_ports by_fd max_addrs
    by_ports=$(c10k_ceil "${conns}" $((C10K_CLI[ports] - C10K_PORT_MARGIN)))
    by_fd=$(c10k_ceil "${conns}" $((cli_hard - C10K_FD_MARGIN)))
    max_addrs=$(c10k_max_sources)
    if ((by_ports > max_addrs)); then
      why+=("client ports: ${conns} connections need ${by_ports} source addresses of ${C10K_CLI[ports]} ports (net.ipv4.ip_local_port_range=${C10K_CLI[port_lo]}-${C10K_CLI[port_hi]}), ${max_addrs} available: add addresses on CLIENT_NIC and list them in CLIENT_EXTRA_IPS, or widen the range")
    elif ((by_fd > max_addrs)); then
      why+=("client fd limit: ${conns} connections need ${by_fd} connclient processes (hard fd limit ${cli_hard}: $((cli_hard - C10K_FD_MARGIN)) connections each), one per source address, and ${max_addrs} source address(es) are available: raise the client's hard fd limit (ulimit -Hn, limits.conf nofile) or add addresses on CLIENT_NIC and list them in CLIENT_EXTRA_IPS")
    fi
  fi
  if [[ "${kind}" == lowrate ]]; then
    procs=$(c10k_client_procs "${kind}" "${conns}")
    ((rps >= procs)) || why+=("RPS=${rps} is below the ${procs} client processes it is split across: raise RPS")
  fi
  if [[ "${kind}" != active ]]; then
    local need
    need=$(c10k_ceil "${C10K_CONNECT_RATE}" 10)
    if (($(c10k_num "${C10K_SRV[net.core.somaxconn]}") < need)); then
      why+=("the server's net.core.somaxconn=${C10K_SRV[net.core.somaxconn]} cannot queue 100 ms of connects at CONNECT_RATE=${C10K_CONNECT_RATE}/s (${need}): raise it (sysctl -w net.core.somaxconn=${need}) or lower CONNECT_RATE")
    fi
    if (($(c10k_num "${C10K_SRV[net.ipv4.tcp_max_syn_backlog]}") < need)) && [[ "${C10K_SRV[net.ipv4.tcp_syncookies]}" == 0 ]]; then
      why+=("the server's net.ipv4.tcp_max_syn_backlog=${C10K_SRV[net.ipv4.tcp_max_syn_backlog]} (syncookies off) cannot hold 100 ms of SYNs at CONNECT_RATE=${C10K_CONNECT_RATE}/s (${need}): raise it or lower CONNECT_RATE")
    fi
  fi
  local srv_kb cli_kb avail_s avail_c
  srv_kb=$((conns * C10K_KB_PER_CONN[server]))
  cli_kb=$((conns * C10K_KB_PER_CONN[${kind}]))
  avail_s=$(c10k_num "${C10K_SRV[mem_available_kb]}")
  avail_c=$(c10k_num "${C10K_CLI[mem_available_kb]}")
  if c10k_shared_host; then
    if ((srv_kb + cli_kb > avail_c * 9 / 10)); then
      why+=("memory: ${conns} connections need about $(((srv_kb + cli_kb) / 1024)) MiB on this machine (both ends), $((avail_c / 1024)) MiB are available: lower CONNS")
    fi
  else
    ((srv_kb <= avail_s * 9 / 10)) || why+=("memory: about $((srv_kb / 1024)) MiB on the server for ${conns} connections, $((avail_s / 1024)) MiB available: lower CONNS")
    ((cli_kb <= avail_c * 9 / 10)) || why+=("memory: about $((cli_kb / 1024)) MiB on the client for ${conns} connections, $((avail_c / 1024)) MiB available: lower CONNS")
  fi
  local s_used s_max c_used c_max
  read -r s_used _ s_max <<<"${C10K_SRV[fs.file-nr]}"
  read -r c_used _ c_max <<<"${C10K_CLI[fs.file-nr]}"
  s_used=$(c10k_num "${s_used}") c_used=$(c10k_num "${c_used}")
  s_max=$(c10k_num "${s_max}") c_max=$(c10k_num "${c_max}")
  if c10k_shared_host; then
    ((c_used + 2 * conns < c_max)) || why+=("fs.file-max=${c_max} with ${c_used} files open cannot take $((2 * conns)) more (both ends on this machine): raise fs.file-max")
  else
    ((s_used + conns < s_max)) || why+=("the server's fs.file-max=${s_max} with ${s_used} files open cannot take ${conns} more: raise fs.file-max there")
    ((c_used + conns < c_max)) || why+=("the client's fs.file-max=${c_max} with ${c_used} files open cannot take ${conns} more: raise fs.file-max")
  fi
  ((${#why[@]})) || return 1
  local IFS=';'
  printf '%s\n' "${why[*]}"
}

c10k_num_hard() { c10k_num "${C10K_CLI[fd_hard]}"; }

# c10k_client_procs KIND CONNS: processes the client side needs for its fds
# (and for ports: one source address per process).
c10k_client_procs() {
  local kind=$1 conns=$2 by_fd by_ports
  [[ "${kind}" == active ]] && { echo 1; return; }
  by_fd=$(c10k_ceil "${conns}" $(($(c10k_num_hard) - C10K_FD_MARGIN)))
  by_ports=$(c10k_ceil "${conns}" $((C10K_CLI[ports] - C10K_PORT_MARGIN)))
  echo $((by_fd > by_ports ? by_fd : by_ports))
}

# c10k_preflight SCENARIO...: refuse the run (exit 6) before anything starts
# when a scenario ("KIND CONNS RPS") cannot work on these hosts.
c10k_preflight() {
  local sc kind conns rps why bad=0
  for sc in "$@"; do
    read -r kind conns rps <<<"${sc}"
    if why=$(c10k_static_refusal "${kind}" "${conns}" "${rps}"); then
      printf 'error: %s %s: %s\n' "${kind}" "${conns}" "${why//;/; }" >&2
      bad=1
    fi
  done
  ((bad == 0)) || die "a Phase 3 scenario cannot work on these hosts (see above); nothing was started" 6
  log_info "preflight: every scenario fits the fd limits, backlog, memory and files of both hosts"
}

# ---- client source addresses ----------------------------------------------------

# c10k_ip_plus IP N: IPv4 address N after IP.
c10k_ip_plus() {
  local a b c d
  IFS=. read -r a b c d <<<"$1"
  d=$((d + $2))
  ((d <= 254)) || return 1
  echo "${a}.${b}.${c}.${d}"
}

# c10k_candidates: the client's possible source addresses, CLIENT_IP first.
c10k_candidates() {
  echo "${CLIENT_IP}"
  local i ip
  case "${LAB}" in
    netns | local)
      for ((i = 1; i <= 32; i++)); do
        ip=$(c10k_ip_plus "${CLIENT_IP}" "${i}") || break
        echo "${ip}"
      done
      ;;
    ssh)
      local -a extra=()
      [[ -z "${CLIENT_EXTRA_IPS}" ]] || IFS=, read -r -a extra <<<"${CLIENT_EXTRA_IPS}"
      ((${#extra[@]} == 0)) || printf '%s\n' "${extra[@]}"
      ;;
  esac
}

c10k_max_sources() { c10k_candidates | wc -l; }

# c10k_addr_present IP: is IP on CLIENT_NIC (always, for loopback)?
c10k_addr_present() {
  [[ "${LAB}" == local ]] && return 0
  [[ "$1" == "${CLIENT_IP}" ]] && return 0
  ip -o -4 addr show dev "${CLIENT_NIC}" | grep -qF " $1/"
}

# c10k_addr_add IP: add IP to CLIENT_NIC in the netns lab's client namespace
# (this process runs inside it) and remember it for c10k_addrs_remove.
c10k_addr_add() {
  local ip=$1
  local -a cmd=(ip addr add "${ip}/${CSB_NETNS_PREFIX}" dev "${CLIENT_NIC}")
  log_cmd "${cmd[@]}"
  "${cmd[@]}" || die "could not add ${ip} to ${CLIENT_NIC}" 1
  if ((${#C10K_ADDED[@]} == 0)); then
    csb_on_exit_hook c10k_addrs_remove
  fi
  C10K_ADDED+=("${ip}")
  csb_run_set client_addrs_added "$(IFS=,; echo "${C10K_ADDED[*]}")"
}

# c10k_addrs_remove: remove every address this run added (an exit hook).
c10k_addrs_remove() {
  local ip removed=()
  for ip in "${C10K_ADDED[@]}"; do
    if ip addr del "${ip}/${CSB_NETNS_PREFIX}" dev "${CLIENT_NIC}"; then
      removed+=("${ip}")
    else
      log_warn "could not remove ${ip} from ${CLIENT_NIC}; remove it by hand: ip addr del ${ip}/${CSB_NETNS_PREFIX} dev ${CLIENT_NIC}"
    fi
  done
  ((${#removed[@]})) || return 0
  log_info "removed the client addresses this run added: ${removed[*]}"
  csb_run_set client_addrs_removed "$(IFS=,; echo "${removed[*]}")"
  C10K_ADDED=()
}

# c10k_ports_scan FILE: the client's sockets toward SERVER_IP:SERVER_PORT
# (ss, kept in FILE), counted per source address into C10K_INUSE (every
# socket that holds its port) and C10K_TW (TIME_WAIT).
declare -gA C10K_INUSE=() C10K_TW=()
c10k_ports_scan() {
  local file=$1 state local_addr
  ss -Htan dst "$(csb_url_host "${SERVER_IP}"):${SERVER_PORT}" >"${file}" 2>&1 || true
  C10K_INUSE=() C10K_TW=()
  while read -r state _ _ local_addr _; do
    local_addr=${local_addr%:*}
    local_addr=${local_addr#[}
    local_addr=${local_addr%]}
    if [[ "${state}" == TIME-WAIT ]]; then
      C10K_TW[${local_addr}]=$((${C10K_TW[${local_addr}]:-0} + 1))
      ((C10K_CLI[tw_reusable])) && continue
    fi
    C10K_INUSE[${local_addr}]=$((${C10K_INUSE[${local_addr}]:-0} + 1))
  done <"${file}"
}

c10k_free() { echo $((C10K_CLI[ports] - ${C10K_INUSE[$1]:-0})); }
c10k_busy() { ((!C10K_CLI[tw_reusable] && ${C10K_TW[$1]:-0} >= TW_THRESHOLD)); }

# c10k_pick_sources N SHARE: choose N source addresses with SHARE free ports
# each into C10K_SOURCES, CLIENT_IP first. Clean addresses first, then (netns)
# new ones, then busy ones with enough ports. Returns 1 when N cannot be had.
c10k_pick_sources() {
  local n=$1 share=$2 ip pass
  C10K_SOURCES=()
  C10K_PLAN_NOTE=""
  local -a cands
  mapfile -t cands < <(c10k_candidates)
  local -A taken=()
  for pass in clean add busy; do
    for ip in "${cands[@]}"; do
      ((${#C10K_SOURCES[@]} < n)) || break 2
      [[ -z "${taken[${ip}]+x}" ]] || continue
      (($(c10k_free "${ip}") >= share + C10K_PORT_MARGIN)) || continue
      case "${pass}" in
        clean)
          if ! c10k_addr_present "${ip}" || c10k_busy "${ip}"; then continue; fi
          ;;
        add)
          if [[ "${LAB}" != netns ]] || c10k_addr_present "${ip}" || c10k_busy "${ip}"; then continue; fi
          c10k_addr_add "${ip}"
          C10K_PLAN_NOTE+="added ${ip} to ${CLIENT_NIC}; "
          ;;
        busy)
          c10k_addr_present "${ip}" || continue
          C10K_PLAN_NOTE+="${ip} has ${C10K_TW[${ip}]:-0} sockets in TIME_WAIT toward the server (connect() searches past them); "
          ;;
      esac
      C10K_SOURCES+=("${ip}")
      taken[${ip}]=1
    done
  done
  ((${#C10K_SOURCES[@]} == n))
}

# c10k_tw_count [ADDR]: TIME_WAIT sockets toward the server (from ADDR).
c10k_tw_count() {
  local -a lines filter=(dst "$(csb_url_host "${SERVER_IP}"):${SERVER_PORT}")
  [[ -z "${1:-}" ]] || filter+=(src "$1")
  mapfile -t lines < <(ss -Htn state time-wait "${filter[@]}" 2>/dev/null)
  echo "${#lines[@]}"
}

# c10k_tw_wait FILE [ADDR]: wait until fewer than TW_THRESHOLD sockets toward
# the server are in TIME_WAIT (from ADDR, or from anywhere on the client), at
# most TW_WAIT_MAX seconds, saying where it stands every 10 s. Each poll is a
# line "epoch_ms<TAB>count" of FILE. Returns 1 on timeout.
c10k_tw_wait() {
  local out=$1 addr=${2:-}
  local start=${SECONDS} n first="" next_log=0
  printf 'epoch_ms\ttime_wait\n' >"${out}"
  while :; do
    n=$(c10k_tw_count "${addr}")
    printf '%s\t%s\n' "$(csb_epoch_ms)" "${n}" >>"${out}"
    [[ -n "${first}" ]] || first=${n}
    if ((n < TW_THRESHOLD)); then
      log_info "TIME_WAIT toward ${SERVER_IP}:${SERVER_PORT}${addr:+ from ${addr}}: ${first} -> ${n} (< ${TW_THRESHOLD}) after $((SECONDS - start)) s"
      return 0
    fi
    if ((SECONDS - start >= TW_WAIT_MAX)); then
      log_warn "TIME_WAIT toward ${SERVER_IP}:${SERVER_PORT}${addr:+ from ${addr}} still ${n} (>= ${TW_THRESHOLD}) after ${TW_WAIT_MAX} s (TW_WAIT_MAX)"
      return 1
    fi
    if ((SECONDS >= next_log)); then
      log_info "waiting for TIME_WAIT to drain: ${n} sockets toward ${SERVER_IP}:${SERVER_PORT}${addr:+ from ${addr}}, waiting for < ${TW_THRESHOLD} ($((SECONDS - start)) s of at most ${TW_WAIT_MAX} s)"
      next_log=$((SECONDS + 10))
    fi
    sleep 1
  done
}

# c10k_split TOTAL N ARRAY: TOTAL split into N near-equal integer shares.
c10k_split() {
  local total=$1 n=$2 i
  local -n _out=$3
  _out=()
  for ((i = 0; i < n; i++)); do
    _out+=($((total / n + (i < total % n ? 1 : 0))))
  done
}

# c10k_plan CELL KIND CONNS RPS: decide how the scenario runs; on success
# C10K_SERVER_PROCS, C10K_SOURCES and the C10K_SHARE_* arrays are set, else
# C10K_REFUSAL says why. Writes raw/CELL.plan.env.
c10k_plan() {
  local cell=$1 kind=$2 conns=$3 rps=${4:-0}
  local plan="${CSB_RUN_DIR}/raw/${cell}.plan.env" ports="${CSB_RUN_DIR}/raw/${cell}.ports.txt"
  local srv_hard cli_hard per nprocs share waited=0 why
  C10K_REFUSAL=""
  srv_hard=$(c10k_num "${C10K_SRV[fd_hard]}")
  cli_hard=$(c10k_num_hard)
  per=$(((srv_hard - C10K_FD_MARGIN) * 9 / 10))
  C10K_SERVER_PROCS=$(c10k_ceil "${conns}" "${per}")
  nprocs=$(c10k_client_procs "${kind}" "${conns}")
  share=$(c10k_ceil "${conns}" "${nprocs}")
  if why=$(c10k_static_refusal "${kind}" "${conns}" "${rps}"); then
    C10K_REFUSAL=${why//;/; }
  else
    c10k_ports_scan "${ports}"
    if [[ "${kind}" == active ]]; then
      # wrk cannot choose its source: it connects from CLIENT_IP.
      C10K_SOURCES=("${CLIENT_IP}")
      C10K_PLAN_NOTE=""
      if (($(c10k_free "${CLIENT_IP}") < conns + C10K_PORT_MARGIN)); then
        waited=1
        c10k_tw_wait "${CSB_RUN_DIR}/raw/${cell}.tw-wait.tsv" "${CLIENT_IP}" || true
        c10k_ports_scan "${ports}"
      fi
      if (($(c10k_free "${CLIENT_IP}") < conns + C10K_PORT_MARGIN)); then
        C10K_REFUSAL="client ports: wrk connects from ${CLIENT_IP} only, which has $(c10k_free "${CLIENT_IP}") free ports toward ${SERVER_IP}:${SERVER_PORT} (${C10K_TW[${CLIENT_IP}]:-0} in TIME_WAIT) for ${conns} connections: wait for TIME_WAIT to drain (60 s), widen net.ipv4.ip_local_port_range or set net.ipv4.tcp_tw_reuse=1 on the client"
      elif c10k_busy "${CLIENT_IP}"; then
        C10K_PLAN_NOTE="${CLIENT_IP} has ${C10K_TW[${CLIENT_IP}]:-0} sockets in TIME_WAIT toward the server (connect() searches past them); "
      fi
    elif ! c10k_pick_sources "${nprocs}" "${share}"; then
      waited=1
      c10k_tw_wait "${CSB_RUN_DIR}/raw/${cell}.tw-wait.tsv" || true
      c10k_ports_scan "${ports}"
      if ! c10k_pick_sources "${nprocs}" "${share}"; then
        local ip have=()
        while read -r ip; do
          c10k_addr_present "${ip}" && have+=("${ip} ($(c10k_free "${ip}") free, ${C10K_TW[${ip}]:-0} in TIME_WAIT)")
        done < <(c10k_candidates)
        C10K_REFUSAL="client ports: ${conns} connections need ${nprocs} source address(es) with ${share} free ports each toward ${SERVER_IP}:${SERVER_PORT}; have: ${have[*]}. Wait for TIME_WAIT to drain (60 s; run_c10k_beyond_lowrate_retry.sh does), add addresses (CLIENT_EXTRA_IPS), widen net.ipv4.ip_local_port_range or set net.ipv4.tcp_tw_reuse=1 on the client"
      fi
    fi
  fi
  c10k_split "${conns}" "${#C10K_SOURCES[@]}" C10K_SHARE_CONNS
  c10k_split "${C10K_CONNECT_RATE}" "${#C10K_SOURCES[@]}" C10K_SHARE_RATE
  c10k_split "${rps}" "${#C10K_SOURCES[@]}" C10K_SHARE_RPS
  local ip
  {
    echo "# Written by lib/c10k.sh c10k_plan before the scenario ran; read by csb summarize."
    echo "scenario=${kind}"
    echo "connections_target=${conns}"
    echo "server_fd_hard=${srv_hard}"
    echo "server_fd_margin=${C10K_FD_MARGIN}"
    echo "server_conns_per_proc_max=${per}"
    echo "server_procs=${C10K_SERVER_PROCS}"
    echo "client_fd_hard=${cli_hard}"
    echo "client_procs=${#C10K_SOURCES[@]}"
    echo "client_procs_needed=${nprocs}"
    echo "client_sources=$(IFS=,; echo "${C10K_SOURCES[*]}")"
    echo "client_shares=$(IFS=,; echo "${C10K_SHARE_CONNS[*]}")"
    echo "client_port_range=${C10K_CLI[port_lo]}-${C10K_CLI[port_hi]}"
    echo "client_ports_per_source=${C10K_CLI[ports]}"
    echo "client_tcp_tw_reuse=${C10K_CLI[net.ipv4.tcp_tw_reuse]}"
    echo "client_tw_reusable=${C10K_CLI[tw_reusable]}"
    echo "tw_threshold=${TW_THRESHOLD}"
    for ip in $(c10k_candidates); do
      [[ -n "${C10K_TW[${ip}]+x}${C10K_INUSE[${ip}]+x}" ]] || continue
      echo "source.${ip}.in_use=${C10K_INUSE[${ip}]:-0}"
      echo "source.${ip}.time_wait=${C10K_TW[${ip}]:-0}"
    done
    echo "connect_rate_per_s=${C10K_CONNECT_RATE}"
    echo "backlog_needed=$(c10k_ceil "${C10K_CONNECT_RATE}" 10)"
    echo "server_somaxconn=${C10K_SRV[net.core.somaxconn]}"
    echo "server_tcp_max_syn_backlog=${C10K_SRV[net.ipv4.tcp_max_syn_backlog]}"
    echo "server_kb_per_conn_estimate=${C10K_KB_PER_CONN[server]}"
    echo "client_kb_per_conn_estimate=${C10K_KB_PER_CONN[${kind}]}"
    echo "server_mem_available_kb=${C10K_SRV[mem_available_kb]}"
    echo "client_mem_available_kb=${C10K_CLI[mem_available_kb]}"
    echo "shared_host=$(c10k_shared_host && echo 1 || echo 0)"
    echo "tw_waited=${waited}"
    echo "note=${C10K_PLAN_NOTE%; }"
    echo "refusal=${C10K_REFUSAL}"
  } >"${plan}"
  if [[ -n "${C10K_REFUSAL}" ]]; then
    log_warn "scenario ${cell} refused: ${C10K_REFUSAL}"
    return 1
  fi
  log_info "plan ${cell}: ${C10K_SERVER_PROCS} server process(es) (fd hard ${srv_hard}), ${#C10K_SOURCES[@]} client process(es) from ${C10K_SOURCES[*]}${C10K_PLAN_NOTE:+; ${C10K_PLAN_NOTE%; }}"
}

# ---- the server, per scenario ---------------------------------------------------

# c10k_server_start CELL PROCS SIZES: a fresh server for each scenario, so
# its RSS starts from a new process: PROCS processes (SO_REUSEPORT when more
# than one), named csb-server-CELL (logs, pidstat, limits). CSB_HTTP_PIDS
# holds their PIDs; csb_http_stop stops them.
c10k_server_start() { csb_http_start "csb-server-$1" "$3" "$2"; }

# c10k_snapshot CELL WHEN [SS]: the server processes' /proc/PID/status and
# both hosts' /proc/net/sockstat; with SS=1 also the ESTABLISHED sockets of
# the server port on both hosts (ss). Raw files; counted by csb summarize.
# ss walks the kernel's socket hash, shared by every namespace of a machine:
# with 10k connections it stalled a low-rate client's sender by 20 ms, so it
# is taken only while no request is in flight (idle holds).
c10k_snapshot() {
  local cell=$1 when=$2 with_ss=${3:-0}
  local rd="${CSB_REMOTE_RUN}/monitors/server/c10k" ld="${CSB_RUN_DIR}/monitors/client/c10k"
  local base="${cell}.${when}" port_filter="( sport = :${SERVER_PORT} )"
  local script
  script="mkdir -p $(csb_quote "${rd}") && cd $(csb_quote "${rd}") && for p in $(csb_quote "${CSB_HTTP_PIDS[@]}"); do echo \"== \$p\"; cat /proc/\$p/status; done >$(csb_quote "${base}.status") 2>&1; cat /proc/net/sockstat >$(csb_quote "${base}.sockstat")"
  if ((with_ss)); then
    script+="; ss -Htn state established $(csb_quote "${port_filter}") >$(csb_quote "${base}.established")"
  fi
  on_server_sh "${script}" || log_warn "snapshot ${base} failed on the server"
  mkdir -p "${ld}"
  cat /proc/net/sockstat >"${ld}/${base}.sockstat" 2>/dev/null || true
  if ((with_ss)); then
    ss -Htn state established "( dport = :${SERVER_PORT} )" >"${ld}/${base}.established" 2>/dev/null || true
  fi
}

# ---- the clients ----------------------------------------------------------------

# c10k_clients_start CELL KIND ARGS...: one connclient KIND per planned
# source, each with its share; stdout (the JSON result) to
# raw/CELL.client-N.json, stderr (progress) to raw/CELL.client-N.log.
c10k_clients_start() {
  local cell=$1 kind=$2
  shift 2
  local i pid out log
  local -a cmd
  C10K_CLIENT_PIDS=() C10K_CLIENT_OUT=() C10K_CLIENT_LOG=()
  for i in "${!C10K_SOURCES[@]}"; do
    cmd=("${CSB_ROOT}/bin/connclient" "${kind}" -target "$(csb_url_host "${SERVER_IP}"):${SERVER_PORT}"
      -conns "${C10K_SHARE_CONNS[i]}" -rate "${C10K_SHARE_RATE[i]}" -source "${C10K_SOURCES[i]}")
    if [[ "${kind}" == lowrate ]]; then
      cmd+=(-rps "${C10K_SHARE_RPS[i]}")
    fi
    cmd+=("$@")
    out="${CSB_RUN_DIR}/raw/${cell}.client-$((i + 1)).json"
    log="${CSB_RUN_DIR}/raw/${cell}.client-$((i + 1)).log"
    log_cmd "${cmd[@]}"
    "${cmd[@]}" </dev/null >"${out}" 2>"${log}" &
    pid=$!
    csb_track_client "${pid}" connclient
    C10K_CLIENT_PIDS+=("${pid}") C10K_CLIENT_OUT+=("${out}") C10K_CLIENT_LOG+=("${log}")
  done
  csb_monitor_client_pids "connclient-${cell}" "$(IFS=,; echo "${C10K_CLIENT_PIDS[*]}")"
}

# c10k_wrk_start CELL CONNS SECONDS URL: wrk with the repo's done() hook,
# output to raw/CELL.wrk.txt.
c10k_wrk_start() {
  local cell=$1 conns=$2 secs=$3 url=$4 pid
  local -a cmd
  csb_wrk_cmd cmd "$(nproc)" "${conns}" "${secs}" "${url}"
  local out="${CSB_RUN_DIR}/raw/${cell}.wrk.txt"
  log_cmd "${cmd[@]}"
  "${cmd[@]}" </dev/null >"${out}" 2>&1 &
  pid=$!
  csb_track_client "${pid}" wrk
  C10K_CLIENT_PIDS=("${pid}") C10K_CLIENT_OUT=("${out}") C10K_CLIENT_LOG=("${out}")
  csb_monitor_client_pids "wrk-${cell}" "${pid}"
}

# c10k_wait_marker MARKER SECONDS: wait until every client has printed a
# progress line starting with MARKER ("hold " once its connections are all
# open and held, "run " once its schedule runs) or has finished, at most
# SECONDS. Returns 1 on timeout.
c10k_wait_marker() {
  local marker=$1 deadline=$((SECONDS + $2)) i ready
  while ((SECONDS < deadline)); do
    ready=1
    for i in "${!C10K_CLIENT_PIDS[@]}"; do
      [[ -s "${C10K_CLIENT_OUT[i]}" ]] && continue
      grep -q "^${marker}" "${C10K_CLIENT_LOG[i]}" 2>/dev/null && continue
      ready=0
      break
    done
    ((ready)) && return 0
    sleep 0.2
  done
  return 1
}

# c10k_clients_wait: wait for every client (in this shell: they are its
# children); C10K_CLIENTS_FAILED names the ones that exited non-zero.
C10K_CLIENTS_FAILED=""
c10k_clients_wait() {
  local i rc failed=()
  for i in "${!C10K_CLIENT_PIDS[@]}"; do
    rc=0
    wait "${C10K_CLIENT_PIDS[i]}" || rc=$?
    csb_untrack_client "${C10K_CLIENT_PIDS[i]}"
    ((rc == 0)) || failed+=("${C10K_CLIENT_OUT[i]#"${CSB_RUN_DIR}/"} (exit ${rc})")
  done
  C10K_CLIENT_PIDS=()
  C10K_CLIENTS_FAILED=""
  ((${#failed[@]} == 0)) || C10K_CLIENTS_FAILED="client(s) failed: ${failed[*]}"
}

# ---- one scenario ---------------------------------------------------------------

# c10k_raise_fd: raise this shell's soft fd limit to the hard one, for wrk
# (connclient raises its own; the server is a Go program, which does too).
c10k_raise_fd() {
  local soft hard
  soft=$(ulimit -Sn) hard=$(ulimit -Hn)
  if [[ "${soft}" != "${hard}" ]]; then
    ulimit -Sn "${hard}" || die "cannot raise the soft fd limit ${soft} to the hard limit ${hard}" 1
    log_info "fd limit of this shell (and wrk): soft ${soft} -> ${hard}"
  fi
  csb_run_set client_fd_soft "$(ulimit -Sn)"
  csb_run_set client_fd_hard "${hard}"
}

# The payload of the active scenario (a runner may set ACTIVE_PAYLOAD).
C10K_PAYLOAD=1k

# c10k_cell_name KIND CONNS RPS: idle-10k, lowrate-10k-1000rps, active-10k-1k.
c10k_cell_name() {
  local kind=$1 conns=$2 rps=${3:-0}
  case "${kind}" in
    idle) echo "idle-$(c10k_name "${conns}")" ;;
    lowrate) echo "lowrate-$(c10k_name "${conns}")-${rps}rps" ;;
    active) echo "active-$(c10k_name "${conns}")-${C10K_PAYLOAD}" ;;
  esac
}

# c10k_scenario KIND CONNS [RPS]: plan, run and record one scenario as one
# cell. The server is started for it alone (so its RSS starts fresh) and
# stopped after it; the clients run in the background and the run waits for
# them, so a signal stops everything at once.
c10k_scenario() {
  local kind=$1 conns=$2 rps=${3:-0}
  local cell
  cell=$(c10k_cell_name "${kind}" "${conns}" "${rps}")
  local -a params=("scenario=${kind}" "connections=${conns}")
  case "${kind}" in
    idle) params+=("hold_s=${C10K_HOLD}" "path=/healthz" "tool=connclient") ;;
    lowrate) params+=("rps=${rps}" "duration_s=${C10K_SECS}" "path=/healthz" "tool=connclient") ;;
    active) params+=("payload=${C10K_PAYLOAD}" "duration_s=${C10K_SECS}" "path=/payload/${C10K_PAYLOAD}" "tool=wrk") ;;
  esac
  if ! c10k_plan "${cell}" "${kind}" "${conns}" "${rps}"; then
    csb_cell_begin "${cell}" "${params[@]}"
    csb_cell_end refused "${C10K_REFUSAL}"
    return 0
  fi
  params+=("server_procs=${C10K_SERVER_PROCS}" "client_procs=${#C10K_SOURCES[@]}"
    "sources=$(IFS=,; echo "${C10K_SOURCES[*]}")" "connect_rate_per_s=${C10K_CONNECT_RATE}")
  c10k_server_start "${cell}" "${C10K_SERVER_PROCS}" "${C10K_PAYLOAD}"
  c10k_snapshot "${cell}" before
  csb_cell_begin "${cell}" "${params[@]}"
  # Opening the connections takes conns/rate seconds when the hosts keep up;
  # after three times that and 30 s more the snapshot is taken anyway.
  local bound=$((3 * conns / C10K_CONNECT_RATE + 30))
  case "${kind}" in
    idle)
      c10k_clients_start "${cell}" idle -hold "${C10K_HOLD}s"
      c10k_wait_marker "hold " "${bound}" ||
        log_warn "${cell}: not every client holds its connections after ${bound} s; snapshot taken anyway"
      ;;
    lowrate)
      c10k_clients_start "${cell}" lowrate -duration "${C10K_SECS}s" -path /healthz
      c10k_wait_marker "run " "${bound}" ||
        log_warn "${cell}: not every client runs its schedule after ${bound} s; snapshot taken anyway"
      # The first "run" line comes 1 s into the schedule: the snapshot is
      # taken half way through it.
      if ((C10K_SECS / 2 > 1)); then sleep $((C10K_SECS / 2 - 1)); fi
      ;;
    active)
      c10k_wrk_start "${cell}" "${conns}" "${C10K_SECS}" \
        "http://$(csb_url_host "${SERVER_IP}"):${SERVER_PORT}/payload/${C10K_PAYLOAD}"
      # wrk prints nothing until it ends; half way through, every connection
      # it opens is open.
      sleep $(((C10K_SECS + 1) / 2))
      ;;
  esac
  if [[ "${kind}" == idle ]]; then c10k_snapshot "${cell}" held 1; else c10k_snapshot "${cell}" held; fi
  local out missing=()
  c10k_clients_wait
  for out in "${C10K_CLIENT_OUT[@]}"; do
    if [[ "${kind}" == active ]]; then
      grep -q "^${CSB_WRK_JSON_PREFIX}" "${out}" || missing+=("${out#"${CSB_RUN_DIR}/"}")
    else
      [[ -s "${out}" ]] || missing+=("${out#"${CSB_RUN_DIR}/"}")
    fi
  done
  if [[ -n "${C10K_CLIENTS_FAILED}" ]]; then
    csb_cell_end failed "${C10K_CLIENTS_FAILED}; see raw/${cell}.*"
  elif ((${#missing[@]})); then
    csb_cell_end failed "no result in ${missing[*]}"
  else
    csb_cell_end ok
  fi
  csb_http_stop
}
