# shellcheck shell=bash
# lib/clients.sh: N client hosts, each treated as the server host is.
#
# CLIENTS=N (default 1) client hosts; client k (1-based) has the label
# client<k> (one client keeps the label "client" and today's paths). Client
# 1 is the host the runner runs on (`local`); clients 2..N are driven over
# ssh exactly as the server is: a master connection each, a private work
# directory (REMOTE_DIR/csb-run.*), every PID recorded there and in run.env
# (started.client<k>), stopped by PID on exit or Ctrl-C, their files copied
# back into the run directory (raw/<label>/, monitors/<label>/,
# env/<label>/, logs/<label>/) and the work directory removed.
#
# CLIENT_HOSTS (LAB=ssh) lists them, separated by spaces, one entry
#   DEST/ADDR[+ADDR...]/NIC
# DEST the ssh destination ([user@]host) or `local` (the first entry must be
# local: the runner runs on client 1), ADDR its benchmark address(es), NIC
# the interface its traffic to SERVER_IP must leave through. LAB=netns fills
# it from CLIENTS (lab/netns.sh's addresses); LAB=local has one client.
#
# Before a run: tools on every client, the route guard on every client
# (traffic to SERVER_IP leaves through that client's NIC from one of its
# addresses, else exit 5 naming the host and the NIC), and the clock check:
# each host's offset against the controller (the runner's host), measured
# through ssh, the best of three by round trip; beyond CLOCK_BOUND_MS the
# run is refused (exit 5) naming the host. A network namespace cannot have a
# wall clock of its own, so the tests skew one with CSB_TEST_CLOCK_OFFSET_MS
# (LABEL=MS[,LABEL=MS]: added to that host's measured offset; test-only).
#
# CPU_PIN (auto: on for LAB=netns on a machine with >= 2 CPUs) pins every
# process the runner starts on the server host to its first allowed CPU and
# every process on the client hosts (the runner included) to the others
# (taskset on the shell that starts them: children inherit it).
#
# A cell with N clients (csb_clients_cell) starts the same tool on every
# client at one due time through `csb start-at` (raw/<label>/<cell>.<ext>
# and <cell>.timing.json), waits for all, copies the remote raw files back.

csb_config_declare CLIENTS 1 clients \
  "number of client hosts (netns: 1 to 8 namespaces; ssh: the entries of CLIENT_HOSTS)"
csb_config_declare CLIENT_HOSTS "" client_hosts \
  "LAB=ssh with several clients: space-separated DEST/ADDR[+ADDR...]/NIC entries, the first local (the runner's host)"
csb_config_declare CPU_PIN auto "enum:auto|0|1" \
  "pin the server host's processes to one CPU and the clients' to the rest (auto: on for netns with >= 2 CPUs)"
csb_config_declare CLOCK_BOUND_MS 100 posint \
  "largest clock offset, in ms, of any host against the controller that a run accepts"

csb_check_clients() { [[ "$1" =~ ^[1-9]$ ]] && ((10#$1 <= CSB_NETNS_MAX_CLIENTS)); }
csb_expect_clients() { echo "a number of client hosts from 1 to ${CSB_NETNS_MAX_CLIENTS}"; }
csb_check_client_hosts() {
  local e dest addrs nic a
  [[ -n "$1" ]] || return 0
  for e in $1; do
    [[ "${e}" =~ ^([^/]+)/([^/]+)/([^/]+)$ ]] || return 1
    dest=${BASH_REMATCH[1]} addrs=${BASH_REMATCH[2]} nic=${BASH_REMATCH[3]}
    [[ "${dest}" == local ]] || csb_check_ssh_dest "${dest}" || return 1
    csb_check_nic "${nic}" || return 1
    local -a list
    IFS=+ read -r -a list <<<"${addrs}"
    ((${#list[@]})) || return 1
    for a in "${list[@]}"; do csb_check_ip "${a}" || return 1; done
  done
}
csb_expect_client_hosts() {
  echo "space-separated entries DEST/ADDR[+ADDR...]/NIC, DEST an ssh destination or local, such as 'local/192.0.2.11/enp1s0 me@c2/192.0.2.12/enp1s0'"
}

CSB_CLIENTS_N=1
# The label of client 1, the runner's own host: its directories are
# monitors/<label>/ and env/<label>/ (client with one client, else client1).
# shellcheck disable=SC2034 # read by lib/rundir.sh, monitor.sh, envcap.sh, loadgen.sh
CSB_CLIENT_LABEL=client
declare -ga CSB_CL_LABEL=() CSB_CL_SSH=() CSB_CL_ADDRS=() CSB_CL_NIC=() CSB_CL_WORK=() CSB_CL_OFFSET=()
declare -ga CSB_CL_PIDS=() CSB_CL_CLOCK_ERR=()
CSB_SERVER_CLOCK_ERR=""
CSB_CLIENTS_MAX_RTT_US=0
CSB_CPUS_SERVER=""
CSB_CPUS_CLIENT=""
CSB_SERVER_OFFSET=""

csb_clients_error() { printf 'error: %s\n' "$*" >&2; }

# csb_clients_resolve: from LAB, CLIENTS and CLIENT_HOSTS, the client table
# and the CPU sets. Prints the error and returns 1 on a bad combination.
csb_clients_resolve() {
  local n=$((10#${CLIENTS})) k
  CSB_CL_LABEL=() CSB_CL_SSH=() CSB_CL_ADDRS=() CSB_CL_NIC=() CSB_CL_WORK=() CSB_CL_OFFSET=()
  case "${LAB}" in
    local)
      if ((n > 1)) || [[ -n "${CLIENT_HOSTS}" ]]; then
        csb_clients_error "LAB=local has one client host, this one (CLIENTS=${CLIENTS}${CLIENT_HOSTS:+, CLIENT_HOSTS set}): use LAB=netns with CLIENTS=N, or LAB=ssh with CLIENT_HOSTS"
        return 1
      fi
      CSB_CL_SSH[1]=local CSB_CL_ADDRS[1]=${CLIENT_IP} CSB_CL_NIC[1]=${CLIENT_NIC}
      ;;
    netns)
      if [[ -n "${CLIENT_HOSTS}" ]]; then
        csb_clients_error "CLIENT_HOSTS is set, but LAB=netns makes its client hosts from CLIENTS (1 to ${CSB_NETNS_MAX_CLIENTS}): leave CLIENT_HOSTS empty"
        return 1
      fi
      for ((k = 1; k <= n; k++)); do
        CSB_CL_ADDRS[k]=$(csb_netns_client_ip "${k}") CSB_CL_NIC[k]=$(csb_netns_client_nic "${k}")
        CSB_CL_SSH[k]=local
        ((k == 1)) || CSB_CL_SSH[k]=root@${CSB_CL_ADDRS[k]}
      done
      ;;
    ssh)
      if [[ -z "${CLIENT_HOSTS}" ]]; then
        if ((n > 1)); then
          csb_clients_error "CLIENTS=${n} with LAB=ssh needs CLIENT_HOSTS listing them: $(csb_expect_client_hosts)"
          return 1
        fi
        CSB_CL_SSH[1]=local CSB_CL_ADDRS[1]=${CLIENT_IP} CSB_CL_NIC[1]=${CLIENT_NIC}
      else
        local e m=0 dest addrs nic
        for e in ${CLIENT_HOSTS}; do
          m=$((m + 1))
          IFS=/ read -r dest addrs nic <<<"${e}"
          if ((m == 1)) && [[ "${dest}" != local ]]; then
            csb_clients_error "CLIENT_HOSTS: the first entry must be local (the runner runs on client 1), got ${dest}"
            return 1
          elif ((m > 1)) && [[ "${dest}" == local ]]; then
            csb_clients_error "CLIENT_HOSTS: entry ${m} is local: only the first client is this host; give its ssh destination"
            return 1
          fi
          CSB_CL_SSH[m]=${dest} CSB_CL_ADDRS[m]=${addrs//+/,} CSB_CL_NIC[m]=${nic}
        done
        if ((m > CSB_NETNS_MAX_CLIENTS)); then
          csb_clients_error "CLIENT_HOSTS lists ${m} hosts: at most ${CSB_NETNS_MAX_CLIENTS}"
          return 1
        fi
        if [[ "${CSB_ORIGIN[CLIENTS]:-default}" == default ]]; then
          n=${m}
        elif ((n != m)); then
          csb_clients_error "CLIENTS=${n} but CLIENT_HOSTS lists ${m} hosts: make them agree (or leave CLIENTS unset)"
          return 1
        fi
        local first=${CSB_CL_ADDRS[1]%%,*}
        if [[ -n "${CLIENT_IP}" && "${CLIENT_IP}" != "${first}" ]] || [[ -n "${CLIENT_NIC}" && "${CLIENT_NIC}" != "${CSB_CL_NIC[1]}" ]]; then
          csb_clients_error "CLIENT_IP=${CLIENT_IP} CLIENT_NIC=${CLIENT_NIC} disagree with CLIENT_HOSTS's first entry (${first} on ${CSB_CL_NIC[1]}): leave them empty or make them agree"
          return 1
        fi
        CLIENT_IP=${first} CLIENT_NIC=${CSB_CL_NIC[1]}
      fi
      ;;
  esac
  CLIENTS=${n}
  CSB_CLIENTS_N=${n}
  for ((k = 1; k <= n; k++)); do
    if ((n == 1)); then CSB_CL_LABEL[k]=client; else CSB_CL_LABEL[k]=client${k}; fi
  done
  # shellcheck disable=SC2034 # read by lib/rundir.sh, monitor.sh, envcap.sh, loadgen.sh
  CSB_CLIENT_LABEL=${CSB_CL_LABEL[1]}
  csb_cpu_resolve
}

# csb_cpu_list_expand LIST: the CPUs of a list such as 0-3,6, one a line.
csb_cpu_list_expand() {
  local part a b
  local -a parts
  IFS=, read -r -a parts <<<"$1"
  for part in "${parts[@]}"; do
    if [[ "${part}" == *-* ]]; then
      a=${part%-*} b=${part#*-}
      seq "${a}" "${b}"
    else
      echo "${part}"
    fi
  done
}

# csb_cpu_resolve: CSB_CPUS_SERVER and CSB_CPUS_CLIENT from CPU_PIN and this
# process's allowed CPUs (empty: not pinned).
csb_cpu_resolve() {
  CSB_CPUS_SERVER="" CSB_CPUS_CLIENT=""
  local allowed
  allowed=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status)
  local -a cpus
  mapfile -t cpus < <(csb_cpu_list_expand "${allowed}")
  local pin=0
  case "${CPU_PIN}" in
    1)
      if [[ "${LAB}" == ssh ]]; then
        csb_clients_error "CPU_PIN=1 with LAB=ssh: each host is its own machine with its own CPUs; set CPU_PIN=0 (or auto), and SERVER_CPUS to pin the server under test"
        return 1
      fi
      if ((${#cpus[@]} < 2)); then
        csb_clients_error "CPU_PIN=1 needs at least 2 CPUs, this process may use ${allowed}: set CPU_PIN=0"
        return 1
      fi
      pin=1
      ;;
    auto) [[ "${LAB}" == netns ]] && ((${#cpus[@]} >= 2)) && pin=1 ;;
  esac
  ((pin)) || return 0
  CSB_CPUS_SERVER=${cpus[0]}
  CSB_CPUS_CLIENT=$(
    IFS=,
    echo "${cpus[*]:1}"
  )
}

# csb_cpu_pin_line CPUS: a line of script that pins the shell running it
# (and so everything it starts) to CPUS; nothing when CPUS is empty.
csb_cpu_pin_line() {
  [[ -n "$1" ]] || return 0
  printf 'taskset -pc %s $$ >/dev/null 2>&1 || echo "warning: could not pin to CPUs %s" >&2\n' "$1" "$1"
}

# csb_cpu_pin_self: pin the runner (client 1's processes are its children).
csb_cpu_pin_self() {
  [[ -n "${CSB_CPUS_CLIENT}" ]] || return 0
  taskset -pc "${CSB_CPUS_CLIENT}" "$$" >/dev/null ||
    die "could not pin the runner to CPUs ${CSB_CPUS_CLIENT} (CPU_PIN=${CPU_PIN}): set CPU_PIN=0" 1
  log_info "CPU pinning: server host on CPU ${CSB_CPUS_SERVER}, client host(s) on CPU ${CSB_CPUS_CLIENT} (CPU_PIN=${CPU_PIN})"
}

# ---- remote execution on client k >= 2 --------------------------------------

# csb_client_ssh K: the ssh command line for client K (one a line), with its
# own master connection beside the server's.
csb_client_ssh() {
  local line
  while IFS= read -r line; do
    [[ "${line}" == ControlPath=* ]] && line="ControlPath=${CSB_SSH_CTL_DIR}/ctl-c$1"
    printf '%s\n' "${line}"
  done < <(csb_ssh_base)
}

# on_client_sh K SCRIPT: run a bash script on client K (K = 1: this host).
on_client_sh() {
  local k=$1 script pin rc=0
  pin=$(csb_cpu_pin_line "${CSB_CPUS_CLIENT}")
  script="${CSB_REMOTE_PRELUDE}
${pin}
$2"
  if [[ "${CSB_CL_SSH[k]}" == local ]]; then
    printf '%s\n' "$2" | bash -s || rc=$?
    return "${rc}"
  fi
  local -a ssh
  mapfile -t ssh < <(csb_client_ssh "${k}")
  printf '%s\n' "${script}" | "${ssh[@]}" "${CSB_CL_SSH[k]}" bash -s || rc=$?
  return "${rc}"
}

# csb_client_put_bin K: bin/csb and lib/wrk/report.lua into client K's
# work directory's bin/ (one tar stream, after the guard).
csb_client_put_bin() {
  local k=$1
  local -a ssh
  mapfile -t ssh < <(csb_client_ssh "${k}")
  tar -cf - -C "${CSB_ROOT}/bin" csb -C "${CSB_LIB}/wrk" report.lua |
    "${ssh[@]}" "${CSB_CL_SSH[k]}" "$(csb_remote_guard "${CSB_CL_WORK[k]}")
cd $(csb_quote "${CSB_CL_WORK[k]}/bin") && tar -xf - && chmod 0755 csb && chmod 0644 report.lua"
}

# csb_client_record K PID NAME: a process started on client K, recorded in
# its work directory's pids file (by the launching script), in run.env and
# here, to be stopped by PID.
csb_client_record() {
  CSB_CL_PIDS+=("$1 $2 $3")
  csb_run_set "started.${CSB_CL_LABEL[$1]}" "$2 $3"
}

# csb_client_bg_script DIR LOG CMD ARGS...: a script line that starts CMD
# detached (own session, no stdin, output to LOG), appends its PID and start
# time to DIR/pids (empty DIR: not recorded) and prints the PID.
csb_client_bg_script() {
  local dir=$1 log=$2
  shift 2
  local record=""
  if [[ -n "${dir}" ]]; then
    # shellcheck disable=SC2016 # expanded by the client's shell
    record='st=$(sed "s/.*) //" /proc/$p/stat 2>/dev/null | cut -d" " -f20); printf "%s %s %s\n" "$p" "${st:-0}" '"$(csb_quote "$(csb_quote "$@")")"' >>'"$(csb_quote "${dir}/pids")"'; '
  fi
  # shellcheck disable=SC2016 # $! and $p expand in the client's shell
  printf 'setsid %s </dev/null >%s 2>&1 & p=$!; %secho $p\n' "$(csb_quote "$@")" "$(csb_quote "${log}")" "${record}"
}

# on_client_bg_k K LOG CMD ARGS...: start CMD detached on client K (LOG a
# path there). Prints the PID.
on_client_bg_k() {
  local k=$1
  shift
  if [[ "${CSB_CL_SSH[k]}" == local ]]; then
    on_client_bg "$@"
    return
  fi
  on_client_sh "${k}" "$(csb_remote_guard "${CSB_CL_WORK[k]}")
$(csb_client_bg_script "${CSB_CL_WORK[k]}" "$@")"
}

# csb_client_dir K: where client K's files are made on its own host (the
# run directory for client 1, its work directory for the others).
csb_client_dir() {
  if [[ "${CSB_CL_SSH[$1]}" == local ]]; then echo "${CSB_RUN_DIR}"; else echo "${CSB_CL_WORK[$1]}"; fi
}

# csb_client_bin K: the directory holding csb and report.lua on client K.
csb_client_bin() {
  if [[ "${CSB_CL_SSH[$1]}" == local ]]; then echo "${CSB_ROOT}/bin"; else echo "${CSB_CL_WORK[$1]}/bin"; fi
}

# csb_client_wrk_script K: lib/wrk/report.lua as client K sees it.
csb_client_wrk_script() {
  if [[ "${CSB_CL_SSH[$1]}" == local ]]; then echo "${CSB_LIB}/wrk/report.lua"; else echo "${CSB_CL_WORK[$1]}/bin/report.lua"; fi
}

# ---- before the run ----------------------------------------------------------

# csb_clients_open: a master connection to every client k >= 2.
csb_clients_open() {
  ((CSB_CLIENTS_N > 1)) || return 0
  local k
  local -a ssh
  for ((k = 2; k <= CSB_CLIENTS_N; k++)); do
    mapfile -t ssh < <(csb_client_ssh "${k}")
    "${ssh[@]}" "${CSB_CL_SSH[k]}" true </dev/null ||
      die "cannot reach ${CSB_CL_LABEL[k]} over ssh as ${CSB_CL_SSH[k]} (BatchMode: needs key auth). Check: ssh ${CSB_CL_SSH[k]} true" 4
  done
  csb_exit_add csb_clients_close
}

csb_clients_close() {
  [[ -n "${CSB_SSH_CTL_DIR}" ]] || return 0
  local k
  local -a ssh
  for ((k = 2; k <= CSB_CLIENTS_N; k++)); do
    mapfile -t ssh < <(csb_client_ssh "${k}")
    "${ssh[@]}" -O exit "${CSB_CL_SSH[k]}" </dev/null >/dev/null 2>&1 || true
  done
}

# csb_clients_preflight_tools "TOOLS": the tools on every client k >= 2.
csb_clients_preflight_tools() {
  local k out t
  local -a missing
  for ((k = 2; k <= CSB_CLIENTS_N; k++)); do
    out=$(on_client_sh "${k}" "for t in $1 taskset; do command -v \"\$t\" >/dev/null 2>&1 || echo \"\$t\"; done") ||
      die "cannot run commands on ${CSB_CL_LABEL[k]} (${CSB_CL_SSH[k]})" 4
    [[ -n "${out}" ]] || continue
    mapfile -t missing <<<"${out}"
    die "missing on ${CSB_CL_LABEL[k]} (${CSB_CL_SSH[k]}): ${missing[*]}; install there: $(for t in "${missing[@]}"; do printf '%s; ' "$(csb_pkg_of "${t}")"; done)" 3
  done
}

# csb_clients_route_check K ROUTE_JSON: client K's route to SERVER_IP must
# leave through its NIC from one of its addresses.
csb_clients_route_check() {
  local k=$1 json=$2 fields dev="" src="" who
  who="${CSB_CL_LABEL[k]} (${CSB_CL_SSH[k]})"
  if fields=$(csb_ipj route <<<"${json}" 2>/dev/null); then
    IFS=$'\t' read -r dev src <<<"${fields}"
  fi
  if [[ -z "${dev}" ]]; then
    printf 'error: %s has no route to SERVER_IP=%s (ip route get: %s)\n' "${who}" "${SERVER_IP}" "${json}" >&2
    return 1
  fi
  if [[ "${dev}" != "${CSB_CL_NIC[k]}" ]]; then
    printf 'error: on %s, traffic to SERVER_IP=%s would leave through %s, not its NIC %s: fix the route there (ip route get %s: dev %s%s)\n' \
      "${who}" "${SERVER_IP}" "${dev}" "${CSB_CL_NIC[k]}" "${SERVER_IP}" "${dev}" "${src:+ src ${src}}" >&2
    return 1
  fi
  if [[ -n "${src}" && ",${CSB_CL_ADDRS[k]}," != *",${src},"* ]]; then
    printf 'error: on %s, traffic to SERVER_IP=%s would come from %s on %s, not from its address(es) %s\n' \
      "${who}" "${SERVER_IP}" "${src}" "${dev}" "${CSB_CL_ADDRS[k]}" >&2
    return 1
  fi
}

# csb_clients_preflight_route: the route guard on every client k >= 2.
csb_clients_preflight_route() {
  local k route
  for ((k = 2; k <= CSB_CLIENTS_N; k++)); do
    route=$(on_client_sh "${k}" "ip -j route get $(csb_quote "${SERVER_IP}") 2>&1") || route="(none: ${route})"
    csb_clients_route_check "${k}" "${route}" || exit 5
  done
  ((CSB_CLIENTS_N < 2)) || log_info "route guard: clients 2..${CSB_CLIENTS_N} reach ${SERVER_IP} through their own NICs"
}

# csb_clock_samples LABEL RUNNER ARGS...: three timed readings of the clock
# of the host RUNNER (on_server_sh, or on_client_sh K) reaches, as the lines
# `csb clock` reads: "LABEL T0_US REMOTE_US T1_US" (this host's clock before
# asking and after the answer, the other's in between).
csb_clock_samples() {
  local label=$1 t0 t1 remote
  shift
  for _ in 1 2 3; do
    t0=${EPOCHREALTIME/./}
    remote=$("$@" 'date +%s%6N') || return 1
    t1=${EPOCHREALTIME/./}
    [[ "${remote}" =~ ^[0-9]+$ ]] || return 1
    printf '%s %s %s %s\n' "${label}" "${t0}" "${remote}" "${t1}"
  done
}

# csb_clients_clock: every host's clock offset against this one (the
# controller), estimated and judged by `csb clock` (internal/clock) from
# timed readings through ssh; refuse (exit 5) a host beyond CLOCK_BOUND_MS,
# naming it. CSB_TEST_CLOCK_OFFSET_MS=LABEL=MS,... (tests only: a network
# namespace shares the machine's clock) adds to a host's offset.
declare -gA CSB_CLOCK=()
csb_clients_clock() {
  local k samples out key v
  local -a names=(-name "server=server host (${SERVER_SSH:-this host})")
  samples=$(csb_clock_samples server on_server_sh) || die "cannot read the server host's clock (date +%s%6N)" 4
  for ((k = 2; k <= CSB_CLIENTS_N; k++)); do
    samples+=$'\n'$(csb_clock_samples "${CSB_CL_LABEL[k]}" on_client_sh "${k}") ||
      die "cannot read the clock of ${CSB_CL_LABEL[k]} (${CSB_CL_SSH[k]})" 4
    names+=(-name "${CSB_CL_LABEL[k]}=${CSB_CL_LABEL[k]} (${CSB_CL_SSH[k]})")
  done
  out=$("${CSB_ROOT}/bin/csb" clock -bound-ms "${CLOCK_BOUND_MS}" "${names[@]}" \
    -test-offset "${CSB_TEST_CLOCK_OFFSET_MS:-}" <<<"${samples}") || die "csb clock failed on: ${samples}" 1
  CSB_CLOCK=()
  while IFS='=' read -r key v; do
    [[ -n "${key}" ]] && CSB_CLOCK["${key}"]=${v}
  done <<<"${out}"
  ((CSB_CLOCK[ok])) || die "${CSB_CLOCK[refusal]}" 5
  CSB_CLIENTS_MAX_RTT_US=${CSB_CLOCK[max_rtt_us]}
  CSB_SERVER_OFFSET=${CSB_CLOCK[server.offset_ms]} CSB_SERVER_CLOCK_ERR=${CSB_CLOCK[server.error_ms]}
  CSB_CL_OFFSET[1]=0.000 CSB_CL_CLOCK_ERR[1]=0.000
  for ((k = 2; k <= CSB_CLIENTS_N; k++)); do
    CSB_CL_OFFSET[k]=${CSB_CLOCK[${CSB_CL_LABEL[k]}.offset_ms]}
    CSB_CL_CLOCK_ERR[k]=${CSB_CLOCK[${CSB_CL_LABEL[k]}.error_ms]}
  done
  log_info "clocks: server ${CSB_SERVER_OFFSET} ms$(for ((k = 2; k <= CSB_CLIENTS_N; k++)); do printf ', %s %s ms' "${CSB_CL_LABEL[k]}" "${CSB_CL_OFFSET[k]}"; done) against this host (bound ${CLOCK_BOUND_MS} ms)"
}

# ---- the run -------------------------------------------------------------------

# csb_clients_begin: (after csb_run_begin) every client in run.env, a private
# work directory on each client k >= 2 with csb and report.lua in it, and
# the per-client directories of the run.
csb_clients_begin() {
  local k label dir out refused
  csb_run_set clients "${CSB_CLIENTS_N}"
  csb_run_set server.cpus "${SERVER_CPUS:-${CSB_CPUS_SERVER}}"
  csb_run_set server.clock_offset_ms "${CSB_SERVER_OFFSET}"
  csb_run_set server.clock_error_ms "${CSB_SERVER_CLOCK_ERR}"
  csb_run_set clock_bound_ms "${CLOCK_BOUND_MS}"
  for ((k = 1; k <= CSB_CLIENTS_N; k++)); do
    label=${CSB_CL_LABEL[k]}
    csb_run_set "client.${k}.label" "${label}"
    csb_run_set "client.${k}.ssh" "${CSB_CL_SSH[k]}"
    csb_run_set "client.${k}.addrs" "${CSB_CL_ADDRS[k]}"
    csb_run_set "client.${k}.nic" "${CSB_CL_NIC[k]}"
    csb_run_set "client.${k}.cpus" "${CSB_CPUS_CLIENT}"
    csb_run_set "client.${k}.clock_offset_ms" "${CSB_CL_OFFSET[k]:-}"
    csb_run_set "client.${k}.clock_error_ms" "${CSB_CL_CLOCK_ERR[k]:-}"
    ((CSB_CLIENTS_N > 1)) || continue
    mkdir -p "${CSB_RUN_DIR}/raw/${label}" "${CSB_RUN_DIR}/monitors/${label}" "${CSB_RUN_DIR}/env/${label}" "${CSB_RUN_DIR}/logs/${label}"
    [[ "${CSB_CL_SSH[k]}" != local ]] || continue
    csb_reap_leftovers "${k}"
    # The work directory script, then its layout for this client.
    out=$(on_client_sh "${k}" "set -- $(csb_quote "${REMOTE_DIR}")
$(csb_remote_workdir_script | sed '$d')
cd \"\$d\" && mkdir -p bin $(csb_quote "raw/${label}" "raw/warmup/${label}" "monitors/${label}/counters" "env/${label}" "logs/${label}") &&
printf '%s\\n' $(csb_quote "lab=$(csb_lock_key)" "controller=$(hostname)" "runner_pid=$$" "run_dir=${CSB_RUN_DIR}") >run.state &&
printf 'csb-workdir=%s\\n' \"\$d\"" 2>&1) || true
    dir=$(sed -n 's/^csb-workdir=//p' <<<"${out}")
    refused=$(sed -n 's/^csb-refused=//p' <<<"${out}")
    [[ -z "${refused}" ]] || die "${label} (${CSB_CL_SSH[k]}): ${refused//the server host/that client host}" 2
    [[ "${dir}" == /* ]] || die "cannot create a work directory under ${REMOTE_DIR} on ${label} (${CSB_CL_SSH[k]}): $(tail -n 1 <<<"${out}")" 1
    CSB_CL_WORK[k]=${dir}
    csb_run_set "client.${k}.workdir" "${dir}"
    csb_client_put_bin "${k}" || die "could not copy bin/csb and lib/wrk/report.lua to ${dir}/bin on ${label}" 1
  done
  ((CSB_CLIENTS_N < 2)) || log_info "clients: $(for ((k = 1; k <= CSB_CLIENTS_N; k++)); do printf '%s=%s ' "${CSB_CL_LABEL[k]}" "${CSB_CL_SSH[k]}"; done)"
}

# csb_clients_capture_env: env/<label>/ of every client k >= 2.
csb_clients_capture_env() {
  local k script
  script="$(<"${CSB_LIB}/host/capture-env.sh")"
  for ((k = 2; k <= CSB_CLIENTS_N; k++)); do
    on_client_sh "${k}" "set -- $(csb_quote "${CSB_CL_WORK[k]}/env/${CSB_CL_LABEL[k]}" "${CSB_CL_NIC[k]}")
${script}" || log_warn "environment capture on ${CSB_CL_LABEL[k]} failed"
  done
}

# csb_clients_monitors_start: sar, mpstat and every process's pidstat on
# every client k >= 2 (monitors/<label>/, the files client 1 has).
csb_clients_monitors_start() {
  local k d pid label
  for ((k = 2; k <= CSB_CLIENTS_N; k++)); do
    label=${CSB_CL_LABEL[k]} d="${CSB_CL_WORK[k]}/monitors/${CSB_CL_LABEL[k]}"
    pid=$(on_client_bg_k "${k}" "${d}/sar.log" "${CSB_SYSSTAT_ENV[@]}" sar -o "${d}/sar.bin" 1) &&
      csb_monitor_add "${label}" "${pid}" sar
    pid=$(on_client_bg_k "${k}" "${d}/mpstat.json" "${CSB_SYSSTAT_ENV[@]}" mpstat -P ALL -o JSON 1) &&
      csb_monitor_add "${label}" "${pid}" mpstat
    pid=$(on_client_bg_k "${k}" "${d}/procs-pidstat.txt" "${CSB_SYSSTAT_ENV[@]}" pidstat -H -h -u 1) &&
      csb_monitor_add "${label}" "${pid}" pidstat
  done
}

# csb_client_k_of LABEL: the k of a label client<k> (k >= 2), else nothing.
csb_client_k_of() {
  local k
  for ((k = 2; k <= CSB_CLIENTS_N; k++)); do
    [[ "${CSB_CL_LABEL[k]}" != "$1" ]] || { echo "${k}"; return 0; }
  done
  return 1
}

# csb_clients_monitors_stop: SIGINT the monitors of clients k >= 2 (all of
# a host at once), then sar's file to JSON there.
csb_clients_monitors_stop() {
  local k e host pid name script
  # shellcheck disable=SC2054 # DEV,TCP,... is one argument of sadf -n
  local sadf=("${CSB_SYSSTAT_ENV[@]}" sadf -j sar.bin -- -n DEV,TCP,ETCP,SOCK -u -r -q)
  for ((k = 2; k <= CSB_CLIENTS_N; k++)); do
    script=""
    for e in "${CSB_MONITORS[@]}"; do
      read -r host pid name <<<"${e}"
      [[ "${host}" == "${CSB_CL_LABEL[k]}" ]] || continue
      local group=0
      [[ "${name}" == sar ]] && group=1
      script+="( $(csb_kill_script "${pid}" "${name}" 5 INT "${group}")
) & "
    done
    local convert=""
    [[ -z "${CSB_CL_WORK[k]:-}" ]] ||
      convert="cd $(csb_quote "${CSB_CL_WORK[k]}/monitors/${CSB_CL_LABEL[k]}") && { [ ! -f sar.bin ] || $(csb_quote "${sadf[@]}") >sar.json; }"
    [[ -z "${script}${convert}" ]] || on_client_sh "${k}" "${script} wait
${convert:-true}" >/dev/null 2>&1 || log_warn "stopping the monitors or sadf on ${CSB_CL_LABEL[k]} failed"
  done
}

# csb_clients_snapshot CELL WHEN: nstat and sockstat on every client k >= 2.
csb_clients_snapshot() {
  local k d
  for ((k = 2; k <= CSB_CLIENTS_N; k++)); do
    [[ -n "${CSB_CL_WORK[k]:-}" ]] || continue
    d="${CSB_CL_WORK[k]}/monitors/${CSB_CL_LABEL[k]}/counters"
    on_client_sh "${k}" "mkdir -p $(csb_quote "${d}") && nstat -a -s -z -j >$(csb_quote "${d}/$1.$2.nstat.json") && cat /proc/net/sockstat >$(csb_quote "${d}/$1.$2.sockstat")" ||
      log_warn "counter snapshot failed on ${CSB_CL_LABEL[k]}"
  done
}

# csb_clients_stop_all: stop every process recorded on clients k >= 2.
csb_clients_stop_all() {
  local e k pid name
  for e in "${CSB_CL_PIDS[@]}"; do
    read -r k pid name <<<"${e}"
    log_info "stopping ${CSB_CL_LABEL[k]} process ${pid} ${name}"
    on_client_sh "${k}" "$(csb_kill_script "${pid}" "${name}" 5)" >/dev/null 2>&1 ||
      log_warn "could not stop ${name} (PID ${pid}) on ${CSB_CL_LABEL[k]}; stop it by hand"
  done
  CSB_CL_PIDS=()
}

# csb_clients_fetch K [SUBPATH...]: copy client K's files (default: raw,
# logs and its monitors and env) into the run directory.
csb_clients_fetch() {
  local k=$1
  shift
  local label=${CSB_CL_LABEL[k]}
  local -a what=("$@")
  ((${#what[@]})) || what=(raw logs "monitors/${label}" "env/${label}")
  on_client_sh "${k}" "cd $(csb_quote "${CSB_CL_WORK[k]}") && tar -cf - $(csb_quote "${what[@]}")" | tar -C "${CSB_RUN_DIR}" -xf -
}

# csb_clients_finish: on exit, each client k >= 2's files into the run
# directory and its work directory removed (kept there when the copy fails).
csb_clients_finish() {
  local k
  for ((k = 2; k <= CSB_CLIENTS_N; k++)); do
    [[ -n "${CSB_CL_WORK[k]:-}" ]] || continue
    if csb_clients_fetch "${k}"; then
      on_client_sh "${k}" "rm -rf $(csb_quote "${CSB_CL_WORK[k]}")" >/dev/null 2>&1 || true
    else
      log_warn "could not fetch ${CSB_CL_WORK[k]} from ${CSB_CL_LABEL[k]}; it stays there"
    fi
    CSB_CL_WORK[k]=""
  done
}

# ---- one cell on every client --------------------------------------------------

# csb_clients_split TOTAL K: client K's share of TOTAL connections (the
# first TOTAL % N clients get one more).
csb_clients_split() {
  local total=$1 k=$2 n=${CSB_CLIENTS_N}
  echo $((total / n + (k <= total % n ? 1 : 0)))
}

# csb_clients_cell NAME SUBDIR EXT ERR MON BUILDER [ARGS...]: run one
# cell's tool on every client at one due time (csb start-at), pidstat on
# each one's process (monitors/<label>/pidstat-MON.txt), and wait for all.
# BUILDER K ARRAY ARGS... fills client K's command. Output:
# raw/SUBDIR<label>/NAME.EXT, the timing beside it (NAME.timing.json);
# stderr into the same file (ERR=same) or logs/<label>/NAME.stderr
# (ERR=apart). Sets CSB_CLIENTS_RC[k] (the tool's
# exit status, 255 when no timing was written) and returns 0 when every
# client's tool exited 0.
declare -ga CSB_CLIENTS_RC=()
csb_clients_cell() {
  local name=$1 sub=$2 ext=$3 errmode=$4 monname=$5 builder=$6
  shift 6
  local k n=${CSB_CLIENTS_N} due lead_ms label dir bin out err tim mon script
  local -a cmd launched=() waiters=()
  # Time to launch every client before the due time: a second, and per
  # client twice the slowest ssh round trip of the clock check (at least
  # 250 ms): a loaded controller's ssh is slow.
  local per=$((CSB_CLIENTS_MAX_RTT_US / 500))
  ((per >= 250)) || per=250
  lead_ms=$((1000 + per * n))
  due=$(($(csb_epoch_ms) + lead_ms))
  CSB_CLIENTS_RC=()
  for ((k = 1; k <= n; k++)); do
    label=${CSB_CL_LABEL[k]} dir=$(csb_client_dir "${k}") bin=$(csb_client_bin "${k}")
    "${builder}" "${k}" cmd "$@"
    out="${dir}/raw/${sub}${label}/${name}.${ext}" tim="${dir}/raw/${sub}${label}/${name}.timing.json"
    err=${out}
    [[ "${errmode}" == same ]] || err="${dir}/logs/${label}/${name}.stderr"
    mon="${dir}/monitors/${label}/pidstat-${monname}.txt"
    local -a full=("${bin}/csb" start-at -due "${due}" -out "${tim}" -- "${cmd[@]}")
    log_cmd "${full[@]}"
    local record_p="" record_m=""
    if [[ "${CSB_CL_SSH[k]}" != local ]]; then
      # shellcheck disable=SC2016 # expanded by the client's shell
      record_p='printf "%s %s %s\n" "$p" "$(sed "s/.*) //" /proc/$p/stat 2>/dev/null | cut -d" " -f20)" start-at >>'"$(csb_quote "${CSB_CL_WORK[k]}/pids")"'; '
      # shellcheck disable=SC2016 # likewise
      record_m='printf "%s %s %s\n" "$m" "$(sed "s/.*) //" /proc/$m/stat 2>/dev/null | cut -d" " -f20)" pidstat >>'"$(csb_quote "${CSB_CL_WORK[k]}/pids")"'; '
    fi
    # The tool's pidstat waits for start-at's child (the tool, started at
    # the due time) and follows it until it exits.
    # shellcheck disable=SC2016 # expanded by the inner bash
    local waitp='for i in $(seq 1 200); do c=$(pgrep -P "$0" | head -n 1); if [ -n "$c" ]; then exec "$@" -p "$c" 1; fi; sleep 0.05; done'
    script="mkdir -p $(csb_quote "${dir}/raw/${sub}${label}" "${dir}/logs/${label}" "${dir}/monitors/${label}")
setsid $(csb_quote "${full[@]}") </dev/null >$(csb_quote "${out}") 2>>$(csb_quote "${err}") & p=\$!
${record_p}echo \$p
setsid bash -c $(csb_quote "${waitp}") \"\$p\" $(csb_quote "${CSB_SYSSTAT_ENV[@]}" pidstat -H -h -u -r) </dev/null >$(csb_quote "${mon}") 2>&1 & m=\$!
${record_m}echo \$m"
    [[ "${CSB_CL_SSH[k]}" == local ]] || script="$(csb_remote_guard "${CSB_CL_WORK[k]}")
${script}"
    local pids p m
    if [[ "${CSB_CL_SSH[k]}" == local ]]; then
      pids=$(bash -c "${script}") || pids=""
    else
      pids=$(on_client_sh "${k}" "${script}") || pids=""
    fi
    read -r p m <<<"$(tr '\n' ' ' <<<"${pids}")"
    if [[ ! "${p}" =~ ^[0-9]+$ ]]; then
      log_error "could not start the tool on ${label}: ${pids}"
      CSB_CLIENTS_RC[k]=255
      continue
    fi
    if [[ "${CSB_CL_SSH[k]}" == local ]]; then
      csb_track_client "${p}" start-at
      [[ "${m}" =~ ^[0-9]+$ ]] && csb_monitor_add client "${m}" pidstat
    else
      csb_client_record "${k}" "${p}" start-at
      [[ "${m}" =~ ^[0-9]+$ ]] && csb_monitor_add "${label}" "${m}" pidstat
    fi
    launched[k]=${p}
  done
  # Wait for every client's tool: one poller per host, all at once.
  for ((k = 1; k <= n; k++)); do
    [[ -n "${launched[k]:-}" ]] || continue
    local poll="while kill -0 ${launched[k]} 2>/dev/null; do sleep 0.2; done"
    if [[ "${CSB_CL_SSH[k]}" == local ]]; then
      bash -c "${poll}" &
    else
      # The same call then sends the cell's raw files and logs back.
      on_client_sh "${k}" "${poll}
cd $(csb_quote "${CSB_CL_WORK[k]}") && tar -cf - $(csb_quote "raw/${sub}${CSB_CL_LABEL[k]}" "logs/${CSB_CL_LABEL[k]}")" |
        tar -C "${CSB_RUN_DIR}" -xf - &
    fi
    waiters+=($!)
  done
  local w
  for w in "${waiters[@]}"; do wait "${w}" || true; done
  local all=0 rc
  for ((k = 1; k <= n; k++)); do
    [[ -n "${launched[k]:-}" ]] || { all=1; continue; }
    label=${CSB_CL_LABEL[k]}
    if [[ "${CSB_CL_SSH[k]}" == local ]]; then
      csb_untrack_client "${launched[k]}"
    else
      csb_untrack_cl "${k}" "${launched[k]}"
      [[ -e "${CSB_RUN_DIR}/raw/${sub}${label}/${name}.timing.json" ]] ||
        log_warn "${name}'s timing from ${label} is not here yet (its files are copied again at the end)"
    fi
    rc=$(sed -n 's/.*"exit":\([0-9]*\).*/\1/p' "${CSB_RUN_DIR}/raw/${sub}${label}/${name}.timing.json" 2>/dev/null)
    CSB_CLIENTS_RC[k]=${rc:-255}
    ((CSB_CLIENTS_RC[k] == 0)) || all=1
  done
  return "${all}"
}

# csb_untrack_cl K PID: forget a process of client K that has exited.
csb_untrack_cl() {
  local e keep=()
  for e in "${CSB_CL_PIDS[@]}"; do
    [[ "${e}" == "$1 $2 "* ]] || keep+=("${e}")
  done
  CSB_CL_PIDS=("${keep[@]}")
}

# csb_clients_failures: "label exited N; ..." for the clients whose tool
# failed in the last csb_clients_cell.
csb_clients_failures() {
  local k out=""
  for ((k = 1; k <= CSB_CLIENTS_N; k++)); do
    [[ "${CSB_CLIENTS_RC[k]:-255}" == 0 ]] || out+="${CSB_CL_LABEL[k]} exited ${CSB_CLIENTS_RC[k]:-255}; "
  done
  printf '%s' "${out%; }"
}
