# shellcheck shell=bash
# lib/c10kplan.sh: Phase 3's plan, computed by `csb c10k-plan`
# (internal/c10kplan) and carried out here, never recomputed.
#
# Every host's facts (fd limits, CPUs, sysctls, MemAvailable, files open:
# csb_facts_read, lib/scenario.sh; kept in raw/limits.<label>.env) and,
# before each scenario, each client host's sockets toward the server and the
# addresses on its NIC (lib/sources.sh) go to the planner, which answers how
# many server processes share the port (SO_REUSEPORT), which source
# addresses on which client host carry how many connections (and wrk's
# threads in the active scenario), which addresses to add, how long the ramp
# may take, or why the scenario cannot work: a code (fd_limit,
# ephemeral_ports, time_wait, listen_backlog, memory, file_max,
# rps_below_processes, tcp_mem), a sentence and the setting to change. The
# plan document is raw/<cell>.plan.json; the report reads its code.
# Memory is predicted from the estimates for a run's first step and, before
# each later one, from the cost per connection the run's largest earlier
# step measured (`-cost-run`: MemAvailable's fall and the TCP buffer pages).
# Preflight refuses the run (exit 2 for memory or files, else 6) on a refusal; before a scenario the plan waits
# once for TIME_WAIT to drain when it asks (TW_WAIT_MAX at most). The
# arithmetic and its constants are in internal/c10kplan (doc comments).

# C10K_PLAN: the KEY=VALUE answer of the last `csb c10k-plan` (ok, code,
# refusal, retry_after_time_wait, server_procs, sources, add, share_conns,
# share_rate, share_rps, share_threads, source_hosts, connections,
# ramp_bound_s, connect_timeout_s, note, limits).
declare -gA C10K_PLAN=()

# c10k_plan_run KIND CONNS RPS FACTS_DIR [CELL] [FLAG...]: run `csb
# c10k-plan` for one scenario over every client host (its facts in
# FACTS_DIR; with CELL its sockets and addresses, and the plan document in
# raw/CELL.plan.json) and read its answer into C10K_PLAN.
c10k_plan_run() {
  local kind=$1 conns=$2 rps=$3 dir=$4 cell=${5:-} out k spec first extra label
  shift 4
  (($# == 0)) || shift
  local -a cmd=("${CSB_ROOT}/bin/csb" c10k-plan -kind "${kind}" -conns "${conns}" -rps "${rps}"
    -connect-rate "${C10K_CONNECT_RATE}" -lab "${LAB}" -server-ip "${SERVER_IP}" -server-port "${SERVER_PORT}"
    -tw-threshold "${TW_THRESHOLD}" -server-facts "${dir}/limits.server.env" -server-kind "${SERVER}")
  for k in $(csb_clients); do
    label=${CSB_H_LABEL[k]} first=${CSB_H_ADDRS[k]%%,*} extra=""
    [[ "${CSB_H_ADDRS[k]}" != *,* ]] || extra=${CSB_H_ADDRS[k]#*,}
    ((k > 1)) || [[ -z "${CLIENT_EXTRA_IPS}" ]] || extra=${extra:+${extra},}${CLIENT_EXTRA_IPS}
    spec="name=${label},ip=${first},nic=${CSB_H_NIC[k]},facts=${dir}/limits.${label}.env"
    [[ -z "${extra}" ]] || spec+=",extra=${extra//,/+}"
    [[ -z "${cell}" ]] || spec+=",sockets=${CSB_RUN_DIR}/raw/${cell}.${label}.ports.txt,addrs=${CSB_RUN_DIR}/raw/${cell}.${label}.addrs.json"
    cmd+=(-client-host "${spec}")
  done
  # In the run, memory is predicted from what its earlier steps measured.
  [[ -z "${cell}" ]] || cmd+=(-out "${CSB_RUN_DIR}/raw/${cell}.plan.json" -cost-run "${CSB_RUN_DIR}")
  out=$("${cmd[@]}" "$@") || die "csb c10k-plan failed (see above): $(csb_quote "${cmd[@]}" "$@")" 1
  csb_kv_into C10K_PLAN "${out}"
}

# c10k_preflight SCENARIO...: refuse the run before anything starts when a
# scenario ("KIND CONNS RPS STREAMS") cannot work on these hosts: exit 2 when only a
# smaller CONNS cures it (memory, files), else 6 (the plan's exit). A step
# after a smaller one is checked on memory again before it starts, from
# what the smaller one measured: here its estimate only warns.
c10k_preflight() {
  local sc kind conns rps streams bad=0 tmp first="" rc=0
  # The run directory does not exist yet: the hosts' facts in files here.
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/csb-c10k-facts.XXXXXX")
  csb_facts_read "${tmp}/limits." .env
  for sc in "$@"; do
    read -r kind conns rps streams <<<"${sc}"
    local -a after=()
    [[ -z "${first}" ]] || ((conns <= first)) || after=(-after-step)
    first=${first:-${conns}}
    # Over HTTP/2 the plan splits the active scenario's requests in flight
    # into connections of STREAMS streams (-streams).
    c10k_plan_run "${kind}" "${conns}" "${rps}" "${tmp}" "" "${after[@]}" -streams "${streams:-0}"
    [[ -z "${C10K_PLAN[port_range_wanted]}" ]] || C10K_PORT_RANGE=${C10K_PLAN[port_range_wanted]}
    if ((!C10K_PLAN[ok])); then
      printf 'error: %s %s: %s\n' "${kind}" "${conns}" "${C10K_PLAN[refusal]}" >&2
      bad=1
      ((rc == 2)) || rc=${C10K_PLAN[exit]}
    elif [[ "${C10K_PLAN[note]}" == *"memory: "* ]]; then
      log_warn "${kind} ${conns}: ${C10K_PLAN[note]}"
    fi
  done
  C10K_FACTS_TMP=${tmp}
  log_info "limits: ${C10K_PLAN[limits]}"
  if ((bad)); then
    rm -rf "${tmp}"
    die "a Phase 3 scenario cannot work on these hosts (see above); nothing was started" "${rc}"
  fi
  log_info "preflight: every scenario fits the fd limits, backlog, memory and files of every host${C10K_PLAN[note]:+ (${C10K_PLAN[note]})}"
  c10k_port_range_allowed
}
C10K_FACTS_TMP=""

# C10K_PORT_RANGE: the client port range ("LO HI") the plans asked for and
# this run sets on every client host once the run directory exists (empty:
# none). A source past three quarters of its range's even half makes
# connect() slow (internal/c10kplan, wantPortRange); the netns lab's
# namespaces are the lab's own, a real host's range is changed only with
# APPLY_SYSCTLS=1 (lib/sysctl.sh), and put back at exit either way.
C10K_PORT_RANGE=""

# c10k_port_range_allowed: keep C10K_PORT_RANGE where the run may set it,
# else say what it would have done and plan with the range as it is.
c10k_port_range_allowed() {
  local k
  [[ -n "${C10K_PORT_RANGE}" ]] || return 0
  if [[ "${LAB}" != netns && "${APPLY_SYSCTLS}" != 1 ]]; then
    log_warn "the client's net.ipv4.ip_local_port_range is narrow for these steps: each source address would fill more than 3/4 of its even ports, where connects slow down; APPLY_SYSCTLS=1 lets the run set it to ${C10K_PORT_RANGE} (put back at exit)"
    C10K_PORT_RANGE=""
    return 0
  fi
  for k in $(csb_clients); do csb_sysctl_allowed "${k}" net.ipv4.ip_local_port_range "${C10K_PORT_RANGE}"; done
}

# c10k_record_facts: the facts read in preflight, kept in raw/ (read again
# once C10K_PORT_RANGE is set); the plans from here on read these files.
c10k_record_facts() {
  local k
  if [[ -z "${C10K_PORT_RANGE}" ]]; then
    cp "${C10K_FACTS_TMP}"/limits.*.env "${CSB_RUN_DIR}/raw/"
    csb_run_set sysctls_changed none
  else
    # The range is set before anything is measured, and the facts read
    # again with it: every plan of the run sees the range its cells ran on.
    for k in $(csb_clients); do csb_sysctl_set "${k}" net.ipv4.ip_local_port_range "${C10K_PORT_RANGE}"; done
    csb_facts_read "${CSB_RUN_DIR}/raw/limits." .env
    csb_run_set sysctls_changed "net.ipv4.ip_local_port_range on the client hosts"
  fi
  rm -rf "${C10K_FACTS_TMP}"
}

# c10k_plan CELL KIND CONNS RPS [STREAMS]: plan the scenario
# (raw/CELL.plan.json; STREAMS > 0: the active scenario over HTTP/2, CONNS
# requests in flight as the plan's C10K_PLAN[connections]) and carry the
# plan out: wait for TIME_WAIT to drain once when the plan asks, add the
# addresses it lists on their hosts. On success the C10K_SRC_* arrays
# describe the sources (host, address, shares); else C10K_REFUSAL says why
# (for people; the plan has the code).
declare -ga C10K_SRC_HOST=() C10K_SRC_IP=() C10K_SRC_CONNS=() C10K_SRC_RATE=() C10K_SRC_RPS=() C10K_SRC_THREADS=()
C10K_REFUSAL=""
c10k_plan() {
  local cell=$1 kind=$2 conns=$3 rps=${4:-0} streams=${5:-0} dir="${CSB_RUN_DIR}/raw" i ip
  C10K_REFUSAL=""
  csb_sockets_scan "${cell}"
  c10k_plan_run "${kind}" "${conns}" "${rps}" "${dir}" "${cell}" -streams "${streams}"
  if ((!C10K_PLAN[ok] && C10K_PLAN[retry_after_time_wait])); then
    # wrk and h2load cannot choose their source: only the hosts' first addresses matter.
    ip=""
    [[ "${kind}" != active ]] || ip=${CLIENT_IP}
    csb_tw_wait "${dir}/${cell}.tw-wait.tsv" ${ip:+"${ip}"} || true
    csb_sockets_scan "${cell}"
    c10k_plan_run "${kind}" "${conns}" "${rps}" "${dir}" "${cell}" -streams "${streams}" -tw-waited
  fi
  if ((!C10K_PLAN[ok])); then
    C10K_REFUSAL=${C10K_PLAN[refusal]}
    log_warn "scenario ${cell} refused (${C10K_PLAN[code]}): ${C10K_REFUSAL}"
    return 1
  fi
  local -a hosts add=()
  IFS=, read -r -a C10K_SRC_IP <<<"${C10K_PLAN[sources]}"
  IFS=, read -r -a hosts <<<"${C10K_PLAN[source_hosts]}"
  # shellcheck disable=SC2034 # the shares are read by lib/c10k.sh (c10k_procs)
  {
    IFS=, read -r -a C10K_SRC_CONNS <<<"${C10K_PLAN[share_conns]}"
    IFS=, read -r -a C10K_SRC_RATE <<<"${C10K_PLAN[share_rate]}"
    IFS=, read -r -a C10K_SRC_RPS <<<"${C10K_PLAN[share_rps]}"
    IFS=, read -r -a C10K_SRC_THREADS <<<"${C10K_PLAN[share_threads]}"
  }
  C10K_SRC_HOST=()
  for i in "${!hosts[@]}"; do
    C10K_SRC_HOST[i]=$(csb_host_of "${hosts[i]}") || die "internal: the plan names a client host ${hosts[i]} this run does not have" 1
  done
  [[ -z "${C10K_PLAN[add]}" ]] || IFS=, read -r -a add <<<"${C10K_PLAN[add]}"
  for ip in "${add[@]}"; do
    for i in "${!C10K_SRC_IP[@]}"; do
      [[ "${C10K_SRC_IP[i]}" != "${ip}" ]] || csb_addr_add "${C10K_SRC_HOST[i]}" "${ip}"
    done
  done
  log_info "plan ${cell}: ${C10K_PLAN[server_procs]} server process(es), ${#C10K_SRC_IP[@]} client process(es) from ${C10K_SRC_IP[*]} on ${C10K_PLAN[source_hosts]//,/ }${C10K_PLAN[note]:+; ${C10K_PLAN[note]}}"
}
