# shellcheck shell=bash
# lib/sources.sh: the client hosts' source addresses toward the server, and
# their sockets in TIME_WAIT.
#
# Phase 3 runs one connclient process per source address (a process's fd
# limit and a source address's ephemeral ports bound what one carries); the
# plan (lib/c10kplan.sh) says which addresses to add. In the netns lab they
# are added to the client host's NIC (the lab's own addresses; removed at
# exit, on their host). Before each scenario every client host's sockets
# toward the server and the addresses on its NIC are read there
# (raw/<cell>.<label>.ports.txt, .addrs.json) for the plan; TIME_WAIT is
# counted on every client host and summed.

declare -ga CSB_ADDED=()

# csb_addr_add K IP: add IP to client K's NIC, with the lab's prefix (one
# client: the veth's /CSB_NETNS_PREFIX; several: the switch's
# /CSB_NETNS_LAN_PREFIX), and remember it for csb_addrs_remove.
csb_addr_add() {
  local k=$1 ip=$2 prefix=${CSB_NETNS_PREFIX}
  ((CSB_CLIENTS_N == 1)) || prefix=${CSB_NETNS_LAN_PREFIX}
  local -a cmd=(ip addr add "${ip}/${prefix}" dev "${CSB_H_NIC[k]}")
  log_cmd "${CSB_H_LABEL[k]}:" "${cmd[@]}"
  on_host "${k}" "${cmd[@]}" || die "could not add ${ip} to ${CSB_H_NIC[k]} on $(csb_host_name "${k}")" 1
  ((${#CSB_ADDED[@]})) || csb_on_exit_hook csb_addrs_remove
  CSB_ADDED+=("${k} ${ip}/${prefix}")
  csb_run_set client_addrs_added "$(csb_added_ips "${CSB_ADDED[@]}")"
}

# csb_added_ips ENTRY...: the addresses of CSB_ADDED entries ("K IP/PREFIX"),
# comma-separated.
csb_added_ips() {
  local e k a ips=()
  for e in "$@"; do
    read -r k a <<<"${e}"
    ips+=("${a%/*}")
  done
  (IFS=, && echo "${ips[*]}")
}

# csb_addrs_remove: remove every address this run added, on its host (an
# exit hook).
csb_addrs_remove() {
  local e k a removed=()
  for e in "${CSB_ADDED[@]}"; do
    read -r k a <<<"${e}"
    if on_host "${k}" ip addr del "${a}" dev "${CSB_H_NIC[k]}"; then
      removed+=("${e}")
    else
      log_warn "could not remove ${a%/*} from ${CSB_H_NIC[k]} on $(csb_host_name "${k}"); remove it by hand: ip addr del ${a} dev ${CSB_H_NIC[k]}"
    fi
  done
  ((${#removed[@]})) || return 0
  log_info "removed the client addresses this run added: $(csb_added_ips "${removed[@]}" | tr , ' ')"
  csb_run_set client_addrs_removed "$(csb_added_ips "${removed[@]}")"
  CSB_ADDED=()
}

# csb_sockets_scan CELL: every client host's sockets toward
# SERVER_IP:SERVER_PORT (ss) and the addresses on its NIC (ip -j; LAB=local
# uses 127.0.0.x, always there: none listed), read there, into
# raw/CELL.<label>.ports.txt and raw/CELL.<label>.addrs.json.
csb_sockets_scan() {
  local raw="${CSB_RUN_DIR}/raw/$1" k label
  for k in $(csb_clients); do
    label=${CSB_H_LABEL[k]}
    on_host_sh "${k}" "ss -Htan dst $(csb_quote "$(csb_url_host "${SERVER_IP}"):${SERVER_PORT}") 2>&1" >"${raw}.${label}.ports.txt" || true
    if [[ "${LAB}" == local ]]; then
      echo '[]' >"${raw}.${label}.addrs.json"
    else
      on_host_sh "${k}" "ip -j -4 addr show dev $(csb_quote "${CSB_H_NIC[k]}")" >"${raw}.${label}.addrs.json" ||
        die "cannot list the addresses of ${CSB_H_NIC[k]} on $(csb_host_name "${k}")" 1
    fi
  done
}

# csb_tw_count [ADDR]: TIME_WAIT sockets toward the server (from ADDR),
# summed over the client hosts, each counted there. A host that cannot be
# asked fails the count (never taken for "drained").
csb_tw_count() {
  local -a filter=(dst "$(csb_url_host "${SERVER_IP}"):${SERVER_PORT}")
  [[ -z "${1:-}" ]] || filter+=(src "$1")
  local k n total=0
  for k in $(csb_clients); do
    n=$(on_host_sh "${k}" "set -o pipefail; ss -Htn state time-wait $(csb_quote "${filter[@]}") | wc -l") || return 1
    [[ "${n}" =~ ^[0-9]+$ ]] || return 1
    total=$((total + n))
  done
  echo "${total}"
}

# csb_tw_wait FILE [ADDR]: wait until fewer than TW_THRESHOLD sockets toward
# the server are in TIME_WAIT (from ADDR, or from anywhere on the client
# hosts), at most TW_WAIT_MAX seconds, saying where it stands and how fast
# it drains every 5 s. Each poll is a line "epoch_ms<TAB>count" of FILE.
# Returns 1 on timeout, or when the count cannot be read.
csb_tw_wait() {
  local out=$1 addr=${2:-}
  local start=${SECONDS} n first="" next_log=0 where="toward ${SERVER_IP}:${SERVER_PORT}${2:+ from $2}"
  printf 'epoch_ms\ttime_wait\n' >"${out}"
  while :; do
    n=$(csb_tw_count "${addr}") || { log_warn "TIME_WAIT ${where}: could not be counted on every client host"; return 1; }
    printf '%s\t%s\n' "$(csb_epoch_ms)" "${n}" >>"${out}"
    [[ -n "${first}" ]] || first=${n}
    if ((n < TW_THRESHOLD)); then
      log_info "TIME_WAIT ${where}: ${first} -> ${n} (< ${TW_THRESHOLD}) after $((SECONDS - start)) s"
      return 0
    fi
    if ((SECONDS - start >= TW_WAIT_MAX)); then
      log_warn "TIME_WAIT ${where} still ${n} (>= ${TW_THRESHOLD}) after ${TW_WAIT_MAX} s (TW_WAIT_MAX)"
      return 1
    fi
    if ((SECONDS >= next_log)); then
      local rate=""
      ((SECONDS - start == 0)) || rate=", draining $(((first - n) / (SECONDS - start)))/s"
      log_info "waiting for TIME_WAIT to drain: ${n} sockets ${where}, waiting for < ${TW_THRESHOLD}${rate} ($((SECONDS - start)) s of at most ${TW_WAIT_MAX} s)"
      next_log=$((SECONDS + 5))
    fi
    sleep 1
  done
}
