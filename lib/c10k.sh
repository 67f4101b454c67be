# shellcheck shell=bash
# lib/c10k.sh: Phase 3 (C10K): scenarios of many connections, split across
# server processes and client source addresses as the hosts' limits require.
#
# A scenario is one cell: KIND idle | lowrate | active with CONNS
# connections (and RPS requests/s for lowrate). Bash orchestrates, Go plans:
# `csb c10k-plan` (internal/c10kplan) reads both hosts' facts (fd limits,
# sysctls, MemAvailable: c10k_facts_script, kept in raw/limits.*.env) and,
# before each scenario, the client's sockets toward the server and the
# addresses on its NIC, and answers how many server processes share the
# port (SO_REUSEPORT), which source addresses carry how many connections,
# which addresses to add (the netns lab; removed at exit), or why the
# scenario cannot work: a code (fd_limit, ephemeral_ports, time_wait,
# listen_backlog, memory, file_max, rps_below_processes), a sentence and the
# setting to change. The plan document is raw/<cell>.plan.json; the report
# reads its code. This file carries the plan out and never recomputes it:
# preflight refuses the run (exit 6) on a refusal; before a scenario it
# waits once for TIME_WAIT to drain when the plan asks (TW_WAIT_MAX
# seconds at most), adds the addresses, starts the processes. The
# arithmetic and its constants are in internal/c10kplan (doc comments).
#
# The clients announce their states as JSON event lines on stderr
# (connclient: ramp, holding, ready, running); the runner waits for those.
# The low-rate processes of a scenario wait, once their connections are
# open (ready), for one start time the runner writes to raw/<cell>.start.
#
# Around each scenario the server processes' /proc/PID/status, both hosts'
# /proc/net/sockstat and the server host's /proc/slabinfo and page size are
# kept before the clients start and once every connection is held (idle:
# with `ss` of the ESTABLISHED sockets on both hosts), under
# monitors/{server,client}/c10k/; csb summarize computes memory per
# connection (server, client, kernel) and the counts from those files.
# This module changes no sysctl.
#
# With CLIENTS >= 2 (lib/clients.sh) the plan covers every client host:
# each host's facts are read there (raw/limits.<label>.env) and before each
# scenario its sockets and addresses (raw/<cell>.<label>.*); the plan names
# the host of each process (labels client1..N). Addresses are added and
# removed on their host; a process of client k >= 2 runs from its work
# directory (connclient copied there), recorded and stopped by PID like
# every process there, pidstat following it; the start file is written on
# every host; the results come back as raw/<cell>.client-N.json, N over
# the plan's sources; the snapshots of client k as monitors/<label>/c10k/.
# The active scenario (wrk) runs from one host: refused with CLIENTS >= 2.

declare -ga C10K_CELLS=() C10K_ADDED=() C10K_CLIENT_PIDS=() C10K_CLIENT_OUT=() C10K_CLIENT_LOG=() C10K_CLIENT_K=()
declare -ga C10K_SOURCES=() C10K_SHARE_CONNS=() C10K_SHARE_RPS=() C10K_SHARE_RATE=()
C10K_SERVER_PROCS=1
C10K_REFUSAL=""
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

# A connection count: 20000 or 20k (thousands); CONNS is a list of them.
csb_check_conncount() { [[ "$1" =~ ^[1-9][0-9]{0,8}k?$ ]] && (($(c10k_count "$1") <= 10000000)); }
csb_check_conncounts() { csb_check_list conncount "$1"; }
csb_check_conncounts_or_empty() { [[ -z "$1" ]] || csb_check_conncounts "$1"; }
csb_expect_conncounts() { echo "a comma-separated list of connection counts such as 20000,50000 or 20k,50k,100k"; }
csb_expect_conncounts_or_empty() { echo "$(csb_expect_conncounts), or empty for the profile's"; }
csb_expect_posints_or_empty() { echo "a comma-separated list of positive integers such as 2000,5000, or empty for the profile's"; }
csb_check_posints_or_empty() { [[ -z "$1" ]] || csb_check_posints "$1"; }

# c10k_count COUNT: 20k -> 20000, 20000 -> 20000 (a checked conncount).
c10k_count() {
  if [[ "$1" == *k ]]; then echo $((10#${1%k} * 1000)); else echo $((10#$1)); fi
}

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
  # wrk cannot be split across hosts by source address: it runs on one.
  if ((CSB_CLIENTS_N > 1)) && [[ -n "${seen[active]+x}" ]]; then
    usage_error "SCENARIOS=${SCENARIOS}: the active scenario (wrk) runs from one client host, and CLIENTS=${CSB_CLIENTS_N}: give SCENARIOS=idle,lowrate, or CLIENTS=1"
  fi
  # connclient over TLS trusts the run's CA, which is on this host only.
  if ((CSB_CLIENTS_N > 1)) && [[ "${SCHEME:-http}" == https ]]; then
    usage_error "SCHEME=https with CLIENTS=${CSB_CLIENTS_N}: Phase 3 over TLS runs from one client host (the run's CA is on this one); give CLIENTS=1"
  fi
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
    c=$(c10k_count "${c}")
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
  c10k_put_connclient
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

# ---- limits of both hosts ----------------------------------------------------

# c10k_facts_script: the facts `csb c10k-plan` reads (KEY=VALUE). A value
# that cannot be read (an empty sysctl as a non-root user) stays empty: the
# plan calls it unreadable and skips the check that needs it.
c10k_facts_script() {
  cat <<'SCRIPT'
echo "fd_hard=$(ulimit -Hn)"
echo "fd_soft=$(ulimit -Sn)"
for k in net.core.somaxconn net.ipv4.tcp_max_syn_backlog net.ipv4.tcp_syncookies \
  net.ipv4.ip_local_port_range net.ipv4.tcp_tw_reuse net.ipv4.tcp_max_tw_buckets \
  fs.file-max fs.nr_open fs.file-nr; do
  printf '%s=%s\n' "$k" "$(sysctl -n "$k" 2>/dev/null | tr -s '\t ' '  ')"
done
printf 'mem_available_kb=%s\n' "$(sed -n 's/^MemAvailable: *\([0-9]*\) kB$/\1/p' /proc/meminfo)"
SCRIPT
}

# c10k_facts: read both hosts' limits (ulimit -Hn of a process started the
# way the runner starts them, sysctls, MemAvailable) into C10K_SRV_FACTS and
# C10K_CLI_FACTS, verbatim; `csb c10k-plan` reads them.
# With CLIENTS >= 2 each client host's facts are read there (through its
# ssh: the fd limit its processes get) into C10K_CL_FACTS[k].
C10K_SRV_FACTS="" C10K_CLI_FACTS=""
declare -ga C10K_CL_FACTS=()
c10k_facts() {
  local k
  C10K_SRV_FACTS=$(on_server_sh "$(c10k_facts_script)") || die "cannot read the server's limits" 4
  C10K_CLI_FACTS=$(bash -c "$(c10k_facts_script)") || die "cannot read this host's limits" 1
  C10K_CL_FACTS=([1]="${C10K_CLI_FACTS}")
  for ((k = 2; k <= CSB_CLIENTS_N; k++)); do
    C10K_CL_FACTS[k]=$(on_client_sh "${k}" "$(c10k_facts_script)") ||
      die "cannot read the limits of ${CSB_CL_LABEL[k]} (${CSB_CL_SSH[k]})" 4
  done
}

# c10k_record_facts: keep the facts read above in the run directory; the
# plans from here on read these files.
c10k_record_facts() {
  printf '%s\n' "${C10K_SRV_FACTS}" >"${CSB_RUN_DIR}/raw/limits.server.env"
  printf '%s\n' "${C10K_CLI_FACTS}" >"${CSB_RUN_DIR}/raw/limits.client.env"
  local k
  for ((k = 1; k <= CSB_CLIENTS_N && CSB_CLIENTS_N > 1; k++)); do
    printf '%s\n' "${C10K_CL_FACTS[k]}" >"${CSB_RUN_DIR}/raw/limits.${CSB_CL_LABEL[k]}.env"
  done
  csb_run_set sysctls_changed none
}

# ---- the plan (computed by csb c10k-plan, carried out here) -------------------

# C10K_PLAN: the KEY=VALUE answer of the last `csb c10k-plan` (ok, code,
# refusal, retry_after_time_wait, server_procs, sources, add, share_conns,
# share_rate, share_rps, note, limits).
declare -gA C10K_PLAN=()

# c10k_plan_run KIND CONNS RPS SERVER_FACTS CLIENT_FACTS [FLAG...]: run
# `csb c10k-plan` for one scenario and read its answer into C10K_PLAN.
c10k_plan_run() {
  local kind=$1 conns=$2 rps=$3 srv=$4 cli=$5 out k v
  shift 5
  local -a cmd=("${CSB_ROOT}/bin/csb" c10k-plan -kind "${kind}" -conns "${conns}" -rps "${rps}"
    -connect-rate "${C10K_CONNECT_RATE}" -lab "${LAB}" -server-ip "${SERVER_IP}" -server-port "${SERVER_PORT}"
    -client-ip "${CLIENT_IP}" -client-nic "${CLIENT_NIC:-}" -extra-ips "${CLIENT_EXTRA_IPS}"
    -tw-threshold "${TW_THRESHOLD}" -server-facts "${srv}" -client-facts "${cli}" "$@")
  out=$("${cmd[@]}") || die "csb c10k-plan failed (see above): $(printf '%q ' "${cmd[@]}")" 1
  C10K_PLAN=()
  while IFS='=' read -r k v; do
    [[ -n "${k}" ]] && C10K_PLAN["${k}"]=${v}
  done <<<"${out}"
}

# c10k_host_flags ARRAY FACTS_PREFIX [CELL]: with CLIENTS >= 2, one
# -client-host of `csb c10k-plan` per client host into ARRAY: named by its
# label (client<k>), its first address, its NIC, its other addresses (and,
# on client 1, CLIENT_EXTRA_IPS), its facts FACTS_PREFIX<label>.env; with
# CELL its sockets toward the server and the addresses on its NIC
# (raw/CELL.<label>.ports.txt, .addrs.json). Empty with one client.
c10k_host_flags() {
  local -n _flags=$1
  local pre=$2 cell=${3:-} k spec first extra label
  _flags=()
  ((CSB_CLIENTS_N > 1)) || return 0
  for ((k = 1; k <= CSB_CLIENTS_N; k++)); do
    label=${CSB_CL_LABEL[k]} first=${CSB_CL_ADDRS[k]%%,*} extra=""
    [[ "${CSB_CL_ADDRS[k]}" != *,* ]] || extra=${CSB_CL_ADDRS[k]#*,}
    ((k > 1)) || [[ -z "${CLIENT_EXTRA_IPS}" ]] || extra=${extra:+${extra},}${CLIENT_EXTRA_IPS}
    spec="name=${label},ip=${first},nic=${CSB_CL_NIC[k]},facts=${pre}${label}.env"
    [[ -z "${extra}" ]] || spec+=",extra=${extra//,/+}"
    [[ -z "${cell}" ]] || spec+=",sockets=${CSB_RUN_DIR}/raw/${cell}.${label}.ports.txt,addrs=${CSB_RUN_DIR}/raw/${cell}.${label}.addrs.json"
    _flags+=(-client-host "${spec}")
  done
}

# c10k_preflight SCENARIO...: refuse the run (exit 6) before anything starts
# when a scenario ("KIND CONNS RPS") cannot work on these hosts.
c10k_preflight() {
  local sc kind conns rps bad=0 tmp="" k
  local -a hostf=()
  if ((CSB_CLIENTS_N > 1)); then
    # The run directory does not exist yet: the hosts' facts in files here.
    tmp=$(mktemp -d "${TMPDIR:-/tmp}/csb-c10k-facts.XXXXXX")
    for ((k = 1; k <= CSB_CLIENTS_N; k++)); do
      printf '%s\n' "${C10K_CL_FACTS[k]}" >"${tmp}/limits.${CSB_CL_LABEL[k]}.env"
    done
    c10k_host_flags hostf "${tmp}/limits."
  fi
  for sc in "$@"; do
    read -r kind conns rps <<<"${sc}"
    c10k_plan_run "${kind}" "${conns}" "${rps}" <(printf '%s\n' "${C10K_SRV_FACTS}") <(printf '%s\n' "${C10K_CLI_FACTS}") "${hostf[@]}"
    if ((!C10K_PLAN[ok])); then
      printf 'error: %s %s: %s\n' "${kind}" "${conns}" "${C10K_PLAN[refusal]}" >&2
      bad=1
    fi
  done
  [[ -z "${tmp}" ]] || rm -rf "${tmp}"
  log_info "limits: ${C10K_PLAN[limits]}"
  ((bad == 0)) || die "a Phase 3 scenario cannot work on these hosts (see above); nothing was started" 6
  log_info "preflight: every scenario fits the fd limits, backlog, memory and files of both hosts${C10K_PLAN[note]:+ (${C10K_PLAN[note]})}"
}

# ---- client source addresses ----------------------------------------------------

# c10k_addr_add IP [K]: add IP to client K's NIC (default 1, the netns
# lab's client namespace this process runs in; K >= 2 through its ssh) and
# remember it for c10k_addrs_remove. With CLIENTS >= 2 the lab's hosts share
# one /CSB_NETNS_LAN_PREFIX, and the address takes that prefix.
c10k_addr_add() {
  local ip=$1 k=${2:-1} prefix=${CSB_NETNS_PREFIX}
  ((CSB_CLIENTS_N == 1)) || prefix=${CSB_NETNS_LAN_PREFIX}
  local nic=${CSB_CL_NIC[k]:-${CLIENT_NIC}}
  local -a cmd=(ip addr add "${ip}/${prefix}" dev "${nic}")
  if ((k == 1)); then
    log_cmd "${cmd[@]}"
    "${cmd[@]}" || die "could not add ${ip} to ${nic}" 1
  else
    log_cmd "${CSB_CL_LABEL[k]}:" "${cmd[@]}"
    on_client_sh "${k}" "$(csb_quote "${cmd[@]}")" || die "could not add ${ip} to ${nic} on ${CSB_CL_LABEL[k]}" 1
  fi
  if ((${#C10K_ADDED[@]} == 0)); then
    csb_on_exit_hook c10k_addrs_remove
  fi
  C10K_ADDED+=("${k} ${ip}/${prefix} ${nic}")
  csb_run_set client_addrs_added "$(c10k_added_ips "${C10K_ADDED[@]}")"
}

# c10k_added_ips ENTRY...: the addresses of C10K_ADDED entries
# ("K IP/PREFIX NIC"), comma-separated.
c10k_added_ips() {
  local e k a n ips=()
  for e in "$@"; do
    read -r k a n <<<"${e}"
    ips+=("${a%/*}")
  done
  (IFS=,; echo "${ips[*]}")
}

# c10k_addrs_remove: remove every address this run added, on its host (an
# exit hook).
c10k_addrs_remove() {
  local e k a nic removed=()
  for e in "${C10K_ADDED[@]}"; do
    read -r k a nic <<<"${e}"
    if ((k == 1)) && ip addr del "${a}" dev "${nic}"; then
      removed+=("${e}")
    elif ((k > 1)) && on_client_sh "${k}" "ip addr del $(csb_quote "${a}") dev $(csb_quote "${nic}")"; then
      removed+=("${e}")
    else
      log_warn "could not remove ${a%/*} from ${nic}$( ((k == 1)) || echo " on ${CSB_CL_LABEL[k]}"); remove it by hand: ip addr del ${a} dev ${nic}"
    fi
  done
  ((${#removed[@]})) || return 0
  log_info "removed the client addresses this run added: $(c10k_added_ips "${removed[@]}" | tr , ' ')"
  csb_run_set client_addrs_removed "$(c10k_added_ips "${removed[@]}")"
  C10K_ADDED=()
}

# c10k_sockets_scan CELL: what the plan reads about the client before a
# scenario: its sockets toward SERVER_IP:SERVER_PORT (ss, raw/CELL.ports.txt)
# and the addresses on CLIENT_NIC (ip -j, raw/CELL.addrs.json; LAB=local
# uses 127.0.0.x, always there). With CLIENTS >= 2 the same of every client
# host, read there: raw/CELL.<label>.ports.txt and .addrs.json.
c10k_sockets_scan() {
  local raw="${CSB_RUN_DIR}/raw/$1" k label
  if ((CSB_CLIENTS_N > 1)); then
    for ((k = 1; k <= CSB_CLIENTS_N; k++)); do
      label=${CSB_CL_LABEL[k]}
      on_client_sh "${k}" "ss -Htan dst $(csb_quote "$(csb_url_host "${SERVER_IP}"):${SERVER_PORT}") 2>&1" >"${raw}.${label}.ports.txt" || true
      on_client_sh "${k}" "ip -j -4 addr show dev $(csb_quote "${CSB_CL_NIC[k]}")" >"${raw}.${label}.addrs.json" ||
        die "cannot list the addresses of ${CSB_CL_NIC[k]} on ${label}" 1
    done
    return 0
  fi
  ss -Htan dst "$(csb_url_host "${SERVER_IP}"):${SERVER_PORT}" >"${raw}.ports.txt" 2>&1 || true
  if [[ "${LAB}" == local ]]; then
    echo '[]' >"${raw}.addrs.json"
  else
    ip -j -4 addr show dev "${CLIENT_NIC}" >"${raw}.addrs.json" || die "cannot list the addresses of ${CLIENT_NIC}" 1
  fi
}

# c10k_tw_count [ADDR]: TIME_WAIT sockets toward the server (from ADDR);
# with CLIENTS >= 2 the sum over the client hosts, each counted there.
c10k_tw_count() {
  local -a lines filter=(dst "$(csb_url_host "${SERVER_IP}"):${SERVER_PORT}")
  [[ -z "${1:-}" ]] || filter+=(src "$1")
  local k n total=0
  if ((CSB_CLIENTS_N > 1)); then
    for ((k = 1; k <= CSB_CLIENTS_N; k++)); do
      n=$(on_client_sh "${k}" "ss -Htn state time-wait $(csb_quote "${filter[@]}") 2>/dev/null | wc -l") || n=0
      total=$((total + ${n:-0}))
    done
    echo "${total}"
    return 0
  fi
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


# c10k_plan CELL KIND CONNS RPS: plan the scenario with `csb c10k-plan`
# (raw/CELL.plan.json) and carry the plan out: wait for TIME_WAIT to drain
# once when the plan asks for it, add the addresses it lists. On success
# C10K_SERVER_PROCS, C10K_SOURCES and the C10K_SHARE_* arrays are set, else
# C10K_REFUSAL says why (for people; the plan has the code).
c10k_plan() {
  local cell=$1 kind=$2 conns=$3 rps=${4:-0}
  local raw="${CSB_RUN_DIR}/raw/${cell}" ip k
  local -a flags=(-sockets "${raw}.ports.txt" -addrs "${raw}.addrs.json" -out "${raw}.plan.json") hostf
  local -a facts=("${CSB_RUN_DIR}/raw/limits.server.env" "${CSB_RUN_DIR}/raw/limits.client.env")
  c10k_host_flags hostf "${CSB_RUN_DIR}/raw/limits." "${cell}"
  flags+=("${hostf[@]}")
  C10K_REFUSAL=""
  c10k_sockets_scan "${cell}"
  c10k_plan_run "${kind}" "${conns}" "${rps}" "${facts[@]}" "${flags[@]}"
  if ((!C10K_PLAN[ok] && C10K_PLAN[retry_after_time_wait])); then
    # wrk cannot choose its source: only CLIENT_IP's TIME_WAIT matters.
    ip=""
    [[ "${kind}" != active ]] || ip=${CLIENT_IP}
    c10k_tw_wait "${raw}.tw-wait.tsv" ${ip:+"${ip}"} || true
    c10k_sockets_scan "${cell}"
    c10k_plan_run "${kind}" "${conns}" "${rps}" "${facts[@]}" "${flags[@]}" -tw-waited
  fi
  if ((!C10K_PLAN[ok])); then
    C10K_REFUSAL=${C10K_PLAN[refusal]}
    log_warn "scenario ${cell} refused (${C10K_PLAN[code]}): ${C10K_REFUSAL}"
    return 1
  fi
  C10K_SERVER_PROCS=${C10K_PLAN[server_procs]}
  IFS=, read -r -a C10K_SOURCES <<<"${C10K_PLAN[sources]}"
  c10k_source_hosts
  local -a add=()
  local i
  [[ -z "${C10K_PLAN[add]}" ]] || IFS=, read -r -a add <<<"${C10K_PLAN[add]}"
  for ip in "${add[@]}"; do
    k=1
    for i in "${!C10K_SOURCES[@]}"; do
      [[ "${C10K_SOURCES[i]}" != "${ip}" ]] || k=${C10K_SOURCE_K[i]}
    done
    c10k_addr_add "${ip}" "${k}"
  done
  IFS=, read -r -a C10K_SHARE_CONNS <<<"${C10K_PLAN[share_conns]}"
  IFS=, read -r -a C10K_SHARE_RATE <<<"${C10K_PLAN[share_rate]}"
  IFS=, read -r -a C10K_SHARE_RPS <<<"${C10K_PLAN[share_rps]}"
  log_info "plan ${cell}: ${C10K_SERVER_PROCS} server process(es), ${#C10K_SOURCES[@]} client process(es) from ${C10K_SOURCES[*]}$( ((CSB_CLIENTS_N == 1)) || echo " on ${C10K_PLAN[source_hosts]//,/ }")${C10K_PLAN[note]:+; ${C10K_PLAN[note]}}"
}

# c10k_source_hosts: C10K_SOURCE_K[i], the client host (k) that runs
# source i, from the plan's source_hosts (the labels the hosts were given;
# "local" with one client: client 1).
declare -ga C10K_SOURCE_K=()
c10k_source_hosts() {
  local -a hosts
  local i k
  C10K_SOURCE_K=()
  IFS=, read -r -a hosts <<<"${C10K_PLAN[source_hosts]:-}"
  for i in "${!C10K_SOURCES[@]}"; do
    C10K_SOURCE_K[i]=1
    for ((k = 2; k <= CSB_CLIENTS_N; k++)); do
      [[ "${hosts[i]:-}" != "${CSB_CL_LABEL[k]}" ]] || C10K_SOURCE_K[i]=${k}
    done
  done
}

# ---- the server, per scenario ---------------------------------------------------

# c10k_server_start CELL PROCS SIZES CONNS: a fresh server for each scenario, so
# its RSS starts from a new process: PROCS processes (SO_REUSEPORT when more
# than one), named csb-server-CELL (logs, pidstat, limits). CSB_HTTP_PIDS
# holds their PIDs; csb_http_stop stops them.
c10k_server_start() { CSB_SERVER_CONNS=$4 csb_http_start "csb-server-$1" "$3" "$2"; }

# c10k_snapshot CELL WHEN [SS]: the server processes' /proc/PID/status,
# both hosts' /proc/net/sockstat, and the server host's /proc/slabinfo
# ("unreadable" when not root) and page size: the three ways of memory per
# connection; with SS=1 also the ESTABLISHED sockets of the server port on
# both hosts (ss). Raw files; counted by csb summarize.
# ss walks the kernel's socket hash, shared by every namespace of a machine:
# with 10k connections it stalled a low-rate client's sender by 20 ms, so it
# is taken only while no request is in flight (idle holds).
c10k_snapshot() {
  local cell=$1 when=$2 with_ss=${3:-0}
  local rd="${CSB_REMOTE_RUN}/monitors/server/c10k" ld="${CSB_RUN_DIR}/monitors/${CSB_CLIENT_LABEL}/c10k"
  local base="${cell}.${when}" port_filter="( sport = :${SERVER_PORT} )"
  local script
  script="mkdir -p $(csb_quote "${rd}") && cd $(csb_quote "${rd}") && for p in $(csb_quote "${CSB_HTTP_PIDS[@]}"); do echo \"== \$p\"; cat /proc/\$p/status; done >$(csb_quote "${base}.status") 2>&1; cat /proc/net/sockstat >$(csb_quote "${base}.sockstat"); { cat /proc/slabinfo 2>/dev/null || echo unreadable; } >$(csb_quote "${base}.slabinfo"); getconf PAGESIZE >$(csb_quote "${base}.pagesize")"
  if ((with_ss)); then
    script+="; ss -Htn state established $(csb_quote "${port_filter}") >$(csb_quote "${base}.established")"
  fi
  on_server_sh "${script}" || log_warn "snapshot ${base} failed on the server"
  mkdir -p "${ld}"
  cat /proc/net/sockstat >"${ld}/${base}.sockstat" 2>/dev/null || true
  if ((with_ss)); then
    ss -Htn state established "( dport = :${SERVER_PORT} )" >"${ld}/${base}.established" 2>/dev/null || true
  fi
  # Every other client host's, read there, kept under monitors/<label>/c10k/.
  local k cscript="cat /proc/net/sockstat"
  ((with_ss)) && cscript+="; echo ==ss; ss -Htn state established $(csb_quote "( dport = :${SERVER_PORT} )")"
  for ((k = 2; k <= CSB_CLIENTS_N; k++)); do
    ld="${CSB_RUN_DIR}/monitors/${CSB_CL_LABEL[k]}/c10k"
    mkdir -p "${ld}"
    on_client_sh "${k}" "${cscript}" >"${ld}/${base}.snap" 2>/dev/null || log_warn "snapshot ${base} failed on ${CSB_CL_LABEL[k]}"
    sed '/^==ss$/,$d' "${ld}/${base}.snap" >"${ld}/${base}.sockstat"
    ((with_ss)) && sed '1,/^==ss$/d' "${ld}/${base}.snap" >"${ld}/${base}.established"
    rm -f "${ld}/${base}.snap"
  done
}

# ---- the clients ----------------------------------------------------------------

# c10k_clients_start CELL KIND ARGS...: one connclient KIND per planned
# source, each with its share, on the client host the plan puts it on;
# stdout (the JSON result) to raw/CELL.client-N.json, stderr (progress) to
# raw/CELL.client-N.log, N numbering the plan's sources over every host.
# A process of client K >= 2 runs from its work directory's bin/ and
# writes there (an argument naming a path of the run directory names the
# same path there); c10k_clients_wait copies its files back.
c10k_clients_start() {
  local cell=$1 kind=$2
  shift 2
  local i k pid out log
  local -a cmd
  local -A remote=()
  C10K_CLIENT_PIDS=() C10K_CLIENT_OUT=() C10K_CLIENT_LOG=() C10K_CLIENT_K=()
  for i in "${!C10K_SOURCES[@]}"; do
    k=${C10K_SOURCE_K[i]:-1}
    out="${CSB_RUN_DIR}/raw/${cell}.client-$((i + 1)).json"
    log="${CSB_RUN_DIR}/raw/${cell}.client-$((i + 1)).log"
    C10K_CLIENT_OUT+=("${out}") C10K_CLIENT_LOG+=("${log}") C10K_CLIENT_K+=("${k}")
    if ((k > 1)); then
      remote[${k}]+=" ${i}"
      C10K_CLIENT_PIDS+=("")
      continue
    fi
    c10k_client_cmd cmd "${CSB_ROOT}/bin/connclient" "${i}" "${kind}" "$@"
    log_cmd "${cmd[@]}"
    "${cmd[@]}" </dev/null >"${out}" 2>"${log}" &
    pid=$!
    csb_track_client "${pid}" connclient
    C10K_CLIENT_PIDS[i]=${pid}
  done
  local -a local_pids=()
  for i in "${!C10K_CLIENT_PIDS[@]}"; do
    ((C10K_CLIENT_K[i] == 1)) && local_pids+=("${C10K_CLIENT_PIDS[i]}")
  done
  ((${#local_pids[@]} == 0)) || csb_monitor_client_pids "connclient-${cell}" "$(IFS=,; echo "${local_pids[*]}")"
  for k in "${!remote[@]}"; do
    # shellcheck disable=SC2086 # the list of source indexes
    c10k_clients_start_on "${k}" "${cell}" "${kind}" "${remote[${k}]}" "$@"
  done
}

# c10k_client_cmd ARRAY BIN I KIND ARGS...: source I's connclient command.
c10k_client_cmd() {
  local -n _cmd=$1
  local bin=$2 i=$3 kind=$4
  shift 4
  _cmd=("${bin}" "${kind}" -target "$(csb_url_host "${SERVER_IP}"):${SERVER_PORT}"
    -conns "${C10K_SHARE_CONNS[i]}" -rate "${C10K_SHARE_RATE[i]}" -source "${C10K_SOURCES[i]}")
  if [[ "${kind}" == lowrate ]]; then
    _cmd+=(-rps "${C10K_SHARE_RPS[i]}")
  fi
  _cmd+=("${CSB_TLS_CLIENT_FLAGS[@]}" "$@")
}

# c10k_clients_start_on K CELL KIND "I..." ARGS...: the connclient processes
# of sources I on client K, in one ssh call: each detached (its own
# session) under a small shell that records its exit status (base.rc);
# each PID recorded in the work directory's pids file, in run.env and here
# (stopped by PID at exit), and pidstat following them there.
c10k_clients_start_on() {
  local k=$1 cell=$2 kind=$3 idx=$4
  shift 4
  local work=${CSB_CL_WORK[k]} label=${CSB_CL_LABEL[k]} i a base script out p
  local -a cmd args=() c10k_started
  for a in "$@"; do
    [[ "${a}" != "${CSB_RUN_DIR}/"* ]] || a="${work}/${a#"${CSB_RUN_DIR}/"}"
    args+=("${a}")
  done
  script="$(csb_remote_guard "${work}")
mkdir -p $(csb_quote "${work}/raw" "${work}/monitors/${label}")"
  # shellcheck disable=SC2016 # expanded by the client's shell
  local sup='b=$1; shift; setsid "$@" </dev/null >"$b.json" 2>"$b.log" & c=$!; echo "$c" >"$b.pid"; wait "$c"; echo $? >"$b.rc"'
  for i in ${idx}; do
    base="${work}/raw/${cell}.client-$((i + 1))"
    c10k_client_cmd cmd "${work}/bin/connclient" "${i}" "${kind}" "${args[@]}"
    log_cmd "${label}:" "${cmd[@]}"
    # shellcheck disable=SC2016 # $p expands in the client's shell
    script+="
rm -f $(csb_quote "${base}.pid")
setsid bash -c $(csb_quote "${sup}") _ $(csb_quote "${base}" "${cmd[@]}") </dev/null >/dev/null 2>&1 &
n=0; while [ ! -s $(csb_quote "${base}.pid") ] && [ \$n -lt 100 ]; do sleep 0.05; n=\$((n+1)); done
p=\$(cat $(csb_quote "${base}.pid") 2>/dev/null); rm -f $(csb_quote "${base}.pid")
st=\$(sed 's/.*) //' /proc/\$p/stat 2>/dev/null | cut -d' ' -f20)
printf '%s %s %s\\n' \"\$p\" \"\${st:-0}\" connclient >>$(csb_quote "${work}/pids")
echo \"\$p\""
  done
  out=$(on_client_sh "${k}" "${script}") || out=""
  mapfile -t c10k_started <<<"${out}"
  local j=0
  for i in ${idx}; do
    p=${c10k_started[j]:-}
    j=$((j + 1))
    if [[ ! "${p}" =~ ^[0-9]+$ ]]; then
      log_error "could not start connclient $((i + 1)) on ${label}: ${out}"
      continue
    fi
    csb_client_record "${k}" "${p}" connclient
    C10K_CLIENT_PIDS[i]=${p}
  done
  local list=()
  for i in ${idx}; do [[ -z "${C10K_CLIENT_PIDS[i]}" ]] || list+=("${C10K_CLIENT_PIDS[i]}"); done
  ((${#list[@]})) || return 0
  p=$(on_client_bg_k "${k}" "${work}/monitors/${label}/pidstat-connclient-${cell}.txt" \
    "${CSB_SYSSTAT_ENV[@]}" pidstat -H -h -u -r -p "$(IFS=,; echo "${list[*]}")" 1) &&
    csb_monitor_add "${label}" "${p}" pidstat
}

# c10k_put_connclient: bin/connclient into the work directory's bin/ of
# every client k >= 2 (beside csb, as Phase 1 puts its tools there).
c10k_put_connclient() {
  local k
  local -a ssh
  for ((k = 2; k <= CSB_CLIENTS_N; k++)); do
    mapfile -t ssh < <(csb_client_ssh "${k}")
    tar -cf - -C "${CSB_ROOT}/bin" connclient |
      "${ssh[@]}" "${CSB_CL_SSH[k]}" "$(csb_remote_guard "${CSB_CL_WORK[k]}")
cd $(csb_quote "${CSB_CL_WORK[k]}/bin") && tar -xf - && chmod 0755 connclient" ||
      die "could not copy bin/connclient to ${CSB_CL_WORK[k]}/bin on ${CSB_CL_LABEL[k]}" 1
  done
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
  C10K_CLIENT_PIDS=("${pid}") C10K_CLIENT_OUT=("${out}") C10K_CLIENT_LOG=("${out}") C10K_CLIENT_K=(1)
  csb_monitor_client_pids "wrk-${cell}" "${pid}"
}

# c10k_wait_event EVENT SECONDS: wait until every client has printed the
# JSON event line EVENT on stderr (CONNCLIENT_EVENT_HOLDING once its
# connections are all open and held, CONNCLIENT_EVENT_RUNNING once its
# schedule starts) or has finished, at most SECONDS. Returns 1 on timeout.
# The processes of a client host k >= 2 are watched there, one watcher per
# host, all at once.
c10k_wait_event() {
  local deadline=$((SECONDS + $2)) i ready k rc=0
  local -a watchers=()
  for ((k = 2; k <= CSB_CLIENTS_N; k++)); do
    local files=() c10k_hpids=()
    for i in "${!C10K_CLIENT_K[@]}"; do
      ((C10K_CLIENT_K[i] == k)) || continue
      files+=("$(c10k_remote_path "${k}" "${C10K_CLIENT_OUT[i]}")" "$(c10k_remote_path "${k}" "${C10K_CLIENT_LOG[i]}")")
      [[ -z "${C10K_CLIENT_PIDS[i]}" ]] || c10k_hpids+=("${C10K_CLIENT_PIDS[i]}")
    done
    ((${#files[@]})) || continue
    # The watcher also ends once none of the host's processes is left (a
    # run stopped meanwhile stops them: nothing waits on there).
    # shellcheck disable=SC2016 # expanded by the client's shell
    on_client_sh "${k}" "set -- $(csb_quote "${CONNCLIENT_EVENT_PREFIX}$1\"" "$2" "${c10k_hpids[*]}" "${files[@]}")"'
pat=$1; end=$((SECONDS + $2)); pids=$3; shift 3
while [ "${SECONDS}" -lt "${end}" ]; do
  ready=1
  for f in "$@"; do
    case "$f" in
      *.json) o=$f ;;
      *) [ -s "$o" ] || grep -qF -- "$pat" "$f" 2>/dev/null || { ready=0; break; } ;;
    esac
  done
  [ "$ready" = 1 ] && exit 0
  alive=0
  for p in $pids; do kill -0 "$p" 2>/dev/null && alive=1; done
  [ "$alive" = 1 ] || exit 1
  sleep 0.2
done
exit 1' &
    watchers+=($!)
  done
  # The runner's own host (client 1), as with one client.
  while ((SECONDS < deadline)); do
    ready=1
    for i in "${!C10K_CLIENT_PIDS[@]}"; do
      ((${C10K_CLIENT_K[i]:-1} == 1)) || continue
      [[ -s "${C10K_CLIENT_OUT[i]}" ]] && continue
      grep -qF -- "${CONNCLIENT_EVENT_PREFIX}$1\"" "${C10K_CLIENT_LOG[i]}" 2>/dev/null && continue
      ready=0
      break
    done
    ((ready)) && break
    sleep 0.2
  done
  ((ready)) || rc=1
  for i in "${watchers[@]}"; do wait "${i}" || rc=1; done
  return "${rc}"
}

# c10k_hold_overlap CELL: with several client hosts each idle process holds
# HOLD s from its own last connect: a host whose ramp ended much sooner may
# have closed its connections before the slowest host held all of its own.
# Names such hosts (log and run.env c10k.CELL.hold_ended=LABEL,...): the
# held snapshot then misses their connections; a HOLD longer than the
# ramps' spread avoids it.
c10k_hold_overlap() {
  local cell=$1 i k done_hosts=()
  local -A seen=()
  for i in "${!C10K_CLIENT_OUT[@]}"; do
    k=${C10K_CLIENT_K[i]:-1}
    [[ -z "${seen[${k}]+x}" ]] || continue
    if ((k == 1)); then
      [[ -s "${C10K_CLIENT_OUT[i]}" ]] || continue
    else
      on_client_sh "${k}" "test -s $(csb_quote "$(c10k_remote_path "${k}" "${C10K_CLIENT_OUT[i]}")")" || continue
    fi
    seen[${k}]=1
    done_hosts+=("${CSB_CL_LABEL[k]}")
  done
  ((${#done_hosts[@]})) || return 0
  log_warn "${cell}: the processes on ${done_hosts[*]} ended their ${C10K_HOLD} s hold before every host held its connections (their ramps were shorter): the held snapshot misses theirs; a HOLD longer than the ramps' spread avoids it"
  csb_run_set "c10k.${cell}.hold_ended" "$(IFS=,; echo "${done_hosts[*]}")"
}

# c10k_remote_path K PATH: a path of the run directory as client K's work
# directory holds it.
c10k_remote_path() { echo "${CSB_CL_WORK[$1]}/${2#"${CSB_RUN_DIR}/"}"; }

# c10k_start_at FILE MS: hand the clients one start time, MS milliseconds
# from now (Unix milliseconds, written whole: temp file and rename). With
# CLIENTS >= 2 every client host with processes gets the same file in its
# work directory (written there the same way, all at once), and MS is at
# least the lead time of csb_clients_cell (a second, and twice the slowest
# ssh round trip per client).
c10k_start_at() {
  local file=$1 lead=$2 at k i
  local -a hosts=() writers=()
  for ((k = 2; k <= CSB_CLIENTS_N; k++)); do
    for i in "${!C10K_CLIENT_K[@]}"; do
      if ((C10K_CLIENT_K[i] == k)); then hosts+=("${k}"); break; fi
    done
  done
  if ((${#hosts[@]})); then
    local per=$((CSB_CLIENTS_MAX_RTT_US / 500))
    ((per >= 250)) || per=250
    ((lead >= 1000 + per * CSB_CLIENTS_N)) || lead=$((1000 + per * CSB_CLIENTS_N))
  fi
  at=$(($(csb_epoch_ms) + lead))
  for k in "${hosts[@]}"; do
    local rf
    rf=$(c10k_remote_path "${k}" "${file}")
    on_client_sh "${k}" "printf '%s\n' ${at} >$(csb_quote "${rf}.tmp") && mv -f $(csb_quote "${rf}.tmp" "${rf}")" &
    writers+=($!)
  done
  printf '%s\n' "${at}" >"${file}.tmp"
  mv -f "${file}.tmp" "${file}"
  for k in "${writers[@]}"; do wait "${k}" || log_warn "could not hand the start time to a client host (see above)"; done
  log_info "start time handed to the clients: ${at} (epoch ms, in ${lead} ms)"
}

# c10k_clients_wait: wait for every client (in this shell: they are its
# children; on a client k >= 2, one watcher per host that then sends their
# files back into raw/); C10K_CLIENTS_FAILED names the ones that exited
# non-zero.
C10K_CLIENTS_FAILED=""
c10k_clients_wait() {
  local i rc k failed=() w
  local -a waiters=()
  for ((k = 2; k <= CSB_CLIENTS_N; k++)); do
    local c10k_hpids=() files=()
    for i in "${!C10K_CLIENT_K[@]}"; do
      ((C10K_CLIENT_K[i] == k)) || continue
      [[ -z "${C10K_CLIENT_PIDS[i]}" ]] || c10k_hpids+=("${C10K_CLIENT_PIDS[i]}")
      files+=("raw/$(basename "${C10K_CLIENT_OUT[i]}" .json).json" "raw/$(basename "${C10K_CLIENT_OUT[i]}" .json).log" "raw/$(basename "${C10K_CLIENT_OUT[i]}" .json).rc")
    done
    ((${#files[@]})) || continue
    # shellcheck disable=SC2016 # expanded by the client's shell
    on_client_sh "${k}" "for p in ${c10k_hpids[*]}; do while kill -0 \"\$p\" 2>/dev/null; do sleep 0.2; done; done
sleep 0.2
cd $(csb_quote "${CSB_CL_WORK[k]}") && tar -cf - --ignore-failed-read $(csb_quote "${files[@]}") 2>/dev/null; rm -f raw/*.rc" |
      tar -C "${CSB_RUN_DIR}" -xf - &
    waiters+=($!)
  done
  for i in "${!C10K_CLIENT_PIDS[@]}"; do
    ((${C10K_CLIENT_K[i]:-1} == 1)) || continue
    rc=0
    wait "${C10K_CLIENT_PIDS[i]}" || rc=$?
    csb_untrack_client "${C10K_CLIENT_PIDS[i]}"
    ((rc == 0)) || failed+=("${C10K_CLIENT_OUT[i]#"${CSB_RUN_DIR}/"} (exit ${rc})")
  done
  for w in "${waiters[@]}"; do wait "${w}" || true; done
  for i in "${!C10K_CLIENT_PIDS[@]}"; do
    k=${C10K_CLIENT_K[i]:-1}
    ((k > 1)) || continue
    [[ -z "${C10K_CLIENT_PIDS[i]}" ]] || csb_untrack_cl "${k}" "${C10K_CLIENT_PIDS[i]}"
    local rcf="${C10K_CLIENT_OUT[i]%.json}.rc"
    rc=$(cat "${rcf}" 2>/dev/null) || rc=""
    rm -f "${rcf}"
    [[ "${rc}" == 0 ]] || failed+=("${C10K_CLIENT_OUT[i]#"${CSB_RUN_DIR}/"} on ${CSB_CL_LABEL[k]} (exit ${rc:-unknown})")
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
    idle) params+=("hold_s=${C10K_HOLD}" "path=${HEALTH_PATH}" "tool=connclient") ;;
    lowrate) params+=("rps=${rps}" "duration_s=${C10K_SECS}" "path=${HEALTH_PATH}" "tool=connclient") ;;
    active) params+=("payload=${C10K_PAYLOAD}" "duration_s=${C10K_SECS}" "path=$(csb_payload_path "${C10K_PAYLOAD}")" "tool=wrk") ;;
  esac
  if ! c10k_plan "${cell}" "${kind}" "${conns}" "${rps}"; then
    csb_cell_begin "${cell}" "${params[@]}"
    csb_cell_end refused "${C10K_REFUSAL}"
    return 0
  fi
  params+=("server_procs=${C10K_SERVER_PROCS}" "client_procs=${#C10K_SOURCES[@]}"
    "sources=$(IFS=,; echo "${C10K_SOURCES[*]}")" "connect_rate_per_s=${C10K_CONNECT_RATE}")
  c10k_server_start "${cell}" "${C10K_SERVER_PROCS}" "${C10K_PAYLOAD}" "${conns}"
  c10k_snapshot "${cell}" before
  csb_cell_begin "${cell}" "${params[@]}"
  # Opening the connections takes conns/rate seconds when the hosts keep up;
  # after three times that and 30 s more the snapshot is taken anyway.
  local bound=$((3 * conns / C10K_CONNECT_RATE + 30))
  case "${kind}" in
    idle)
      c10k_clients_start "${cell}" idle -hold "${C10K_HOLD}s" -path "${HEALTH_PATH}"
      c10k_wait_event "${CONNCLIENT_EVENT_HOLDING}" "${bound}" ||
        log_warn "${cell}: not every client holds its connections after ${bound} s; snapshot taken anyway"
      ((CSB_CLIENTS_N == 1)) || c10k_hold_overlap "${cell}"
      ;;
    lowrate)
      # Every process opens its connections, then waits for one start time
      # (raw/CELL.start), so their schedules make one schedule of RPS
      # requests/s from one moment, never one process's while another still
      # ramps up.
      local start_file="${CSB_RUN_DIR}/raw/${cell}.start"
      c10k_clients_start "${cell}" lowrate -duration "${C10K_SECS}s" -path "${HEALTH_PATH}" \
        -start-file "${start_file}" -start-wait "$((bound + 60))s"
      c10k_wait_event "${CONNCLIENT_EVENT_READY}" "${bound}" ||
        log_warn "${cell}: not every client has its connections open after ${bound} s; the schedule starts anyway"
      c10k_start_at "${start_file}" 500
      c10k_wait_event "${CONNCLIENT_EVENT_RUNNING}" 30 ||
        log_warn "${cell}: not every client runs its schedule 30 s after the start time; snapshot taken anyway"
      # The event comes as the schedule starts: the snapshot is taken half
      # way through it.
      if ((C10K_SECS / 2 > 0)); then sleep $((C10K_SECS / 2)); fi
      ;;
    active)
      c10k_wrk_start "${cell}" "${conns}" "${C10K_SECS}" "$(csb_payload_url "${C10K_PAYLOAD}")"
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
