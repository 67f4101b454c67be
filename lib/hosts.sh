# shellcheck shell=bash
# lib/hosts.sh: the run's hosts, one table: the server host and its client
# hosts, and the CPUs each may use.
#
# Host 0 is the server host; hosts 1..N are the client hosts (CLIENTS=N,
# default 1): CSB_H_LABEL[h] (server, and for the clients "client" when
# there is one, else client1..clientN: their directories in the run are
# raw/<label>/, monitors/<label>/, env/<label>/, logs/<label>/),
# CSB_H_DEST[h] (the ssh destination, or "local": this host), CSB_H_ADDRS[h]
# (a client's benchmark address(es), comma-separated), CSB_H_NIC[h] and
# CSB_H_WORK[h] (its private work directory, lib/workdir.sh). Client 1 is the
# host the runner runs on. One client is the list of one: every phase runs
# the same code for one client host or eight.
#
# CLIENT_HOSTS (LAB=ssh) lists the clients, separated by spaces, one entry
#   DEST/ADDR[+ADDR...]/NIC
# DEST the ssh destination ([user@]host) or `local` (the first entry must be
# local), ADDR its benchmark address(es), NIC the interface its traffic to
# SERVER_IP must leave through. LAB=netns fills the table from CLIENTS
# (lab/netns.sh's addresses); LAB=local has one client, this host.
#
# CPU_PIN (auto: on for LAB=netns on a machine with >= 2 CPUs) pins every
# process the runner starts on the server host to its first allowed CPU and
# every process on the client hosts (the runner included) to the others: a
# `taskset` line at the top of every script a host runs (children inherit).

csb_config_declare CLIENTS 1 clients \
  "number of client hosts (netns: 1 to 8 namespaces; ssh: the entries of CLIENT_HOSTS)"
csb_config_declare CLIENT_HOSTS "" client_hosts \
  "LAB=ssh with several clients: space-separated DEST/ADDR[+ADDR...]/NIC entries, the first local (the runner's host)"
csb_config_declare CPU_PIN auto "enum:auto|0|1" \
  "pin the server host's processes to one CPU and the clients' to the rest (auto: on for netns with >= 2 CPUs)"
csb_config_declare CLOCK_BOUND_MS 100 posint \
  "largest clock offset, in ms, of any host against the controller that a run accepts"

CSB_CLIENTS_N=1
declare -ga CSB_H_LABEL=() CSB_H_DEST=() CSB_H_ADDRS=() CSB_H_NIC=() CSB_H_WORK=() CSB_H_OFFSET=() CSB_H_CLOCK_ERR=()
CSB_CPUS_SERVER=""
CSB_CPUS_CLIENT=""


# csb_clients: the client hosts' indexes, 1..N, one a word.
csb_clients() { seq 1 "${CSB_CLIENTS_N}"; }

# csb_hosts: every host's index, the server's (0) first.
csb_hosts() { seq 0 "${CSB_CLIENTS_N}"; }

# csb_host_of LABEL: the index of the host labelled LABEL.
csb_host_of() {
  local h
  for h in "${!CSB_H_LABEL[@]}"; do
    [[ "${CSB_H_LABEL[h]}" != "$1" ]] || { echo "${h}"; return 0; }
  done
  return 1
}

# csb_host_name H: how a message names host H: "client2 (me@c2)",
# "client (this host)", "the server host (root@198.18.0.1)".
csb_host_name() {
  local what=${CSB_H_LABEL[$1]}
  if (($1 == 0)); then
    what="the server host"
    [[ "${CSB_H_DEST[0]}" == local ]] || what+=" (${CSB_H_DEST[0]})"
  elif [[ "${CSB_H_DEST[$1]}" == local ]]; then
    what+=" (this host)"
  else
    what+=" (${CSB_H_DEST[$1]})"
  fi
  printf '%s' "${what}"
}

# csb_hosts_resolve: the table and the CPU sets from LAB, CLIENTS,
# CLIENT_HOSTS and the server's settings (`csb hosts`, internal/hostplan).
# Prints the error and returns 1 on a combination that cannot work.
csb_hosts_resolve() {
  local out k v h f given=false
  [[ "${CSB_ORIGIN[CLIENTS]:-default}" == default ]] || given=true
  out=$(csb_csb hosts -lab "${LAB}" -clients "$((10#${CLIENTS}))" -client-hosts "${CLIENT_HOSTS}" \
    -client-ip "${CLIENT_IP}" -client-nic "${CLIENT_NIC}" -server-ip "${SERVER_IP}" -server-nic "${SERVER_NIC}" \
    -server-ssh "${SERVER_SSH}" -cpu-pin "${CPU_PIN}" -clients-given="${given}") ||
    return 1
  # shellcheck disable=SC2034 # CSB_H_WORK is set by lib/workdir.sh, CSB_H_OFFSET and _CLOCK_ERR by lib/preflight.sh
  CSB_H_LABEL=() CSB_H_DEST=() CSB_H_ADDRS=() CSB_H_NIC=() CSB_H_WORK=() CSB_H_OFFSET=() CSB_H_CLOCK_ERR=()
  while IFS='=' read -r k v; do
    case "${k}" in
      clients) CLIENTS=${v} CSB_CLIENTS_N=${v} ;;
      client_ip) CLIENT_IP=${v} ;;
      client_nic) CLIENT_NIC=${v} ;;
      cpus.server) CSB_CPUS_SERVER=${v} ;;
      cpus.client) CSB_CPUS_CLIENT=${v} ;;
      host.*)
        IFS=. read -r _ h f <<<"${k}"
        case "${f}" in
          label) CSB_H_LABEL[h]=${v} ;;
          dest) CSB_H_DEST[h]=${v} ;;
          addrs) CSB_H_ADDRS[h]=${v} ;;
          nic) CSB_H_NIC[h]=${v} ;;
        esac
        ;;
    esac
  done <<<"${out}"
}

# csb_host_cpus H: the CPUs host H's processes are pinned to ("" = all).
csb_host_cpus() { if (($1 == 0)); then echo "${CSB_CPUS_SERVER}"; else echo "${CSB_CPUS_CLIENT}"; fi; }

# csb_cpu_pin_self: pin the runner (client 1's processes are its children).
csb_cpu_pin_self() {
  [[ -n "${CSB_CPUS_CLIENT}" ]] || return 0
  taskset -pc "${CSB_CPUS_CLIENT}" "$$" >/dev/null ||
    die "could not pin the runner to CPUs ${CSB_CPUS_CLIENT} (CPU_PIN=${CPU_PIN}): set CPU_PIN=0" 1
  log_info "CPU pinning: server host on CPU ${CSB_CPUS_SERVER}, client host(s) on CPU ${CSB_CPUS_CLIENT} (CPU_PIN=${CPU_PIN})"
}

# csb_hosts_record: the table in run.env (clients=N, client.<k>.*, the
# server's CPUs and clock): what `csb summarize` reads of the hosts.
csb_hosts_record() {
  local k
  csb_run_set clients "${CSB_CLIENTS_N}"
  csb_run_set server.cpus "${SERVER_CPUS:-${CSB_CPUS_SERVER}}"
  csb_run_set server.clock_offset_ms "${CSB_H_OFFSET[0]:-}"
  csb_run_set server.clock_error_ms "${CSB_H_CLOCK_ERR[0]:-}"
  csb_run_set clock_bound_ms "${CLOCK_BOUND_MS}"
  for k in $(csb_clients); do
    csb_run_set "client.${k}.label" "${CSB_H_LABEL[k]}"
    csb_run_set "client.${k}.ssh" "${CSB_H_DEST[k]}"
    csb_run_set "client.${k}.addrs" "${CSB_H_ADDRS[k]}"
    csb_run_set "client.${k}.nic" "${CSB_H_NIC[k]}"
    csb_run_set "client.${k}.cpus" "${CSB_CPUS_CLIENT}"
    csb_run_set "client.${k}.clock_offset_ms" "${CSB_H_OFFSET[k]:-}"
    csb_run_set "client.${k}.clock_error_ms" "${CSB_H_CLOCK_ERR[k]:-}"
    csb_run_set "client.${k}.nproc" "${CSB_H_NCPU[k]:-}"
    csb_run_set "client.${k}.fd_hard" "${CSB_H_FDHARD[k]:-}"
  done
  csb_run_set server.fd_hard "${CSB_H_FDHARD[0]:-}"
  log_info "hosts: $(for k in $(csb_hosts); do printf '%s=%s ' "${CSB_H_LABEL[k]}" "${CSB_H_DEST[k]}"; done)"
}
