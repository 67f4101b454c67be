# shellcheck shell=bash
# lib/scenario.sh: what the phases made of scenarios share (Phase 3's idle,
# low-rate and active; Phase 4's backlog, accept and churn): the SCENARIOS
# setting a runner checks against its own list, and the lists of counts
# their other settings take.

# csb_scenarios_check PHASE ALLOWED...: SCENARIOS must list only ALLOWED,
# once each; exits 2 naming the phase otherwise.
csb_scenarios_check() {
  local phase=$1 item a ok
  shift
  local -a items
  local -A seen=()
  IFS=, read -r -a items <<<"${SCENARIOS}"
  for item in "${items[@]}"; do
    ok=0
    for a in "$@"; do [[ "${item}" != "${a}" ]] || ok=1; done
    ((ok)) || usage_error "SCENARIOS=${SCENARIOS}: ${item} is not a scenario of this runner (${phase}): expected a comma-separated list of $*"
    [[ -z "${seen[${item}]+x}" ]] || usage_error "SCENARIOS=${SCENARIOS}: ${item} is listed twice"
    seen[${item}]=1
  done
}

# csb_facts_read PREFIX SUFFIX: every host's facts, read there (through
# its ssh: the limits its processes get), as KEY=VALUE lines into
# PREFIX<label>SUFFIX: fd limits, CPUs, the sysctls the plans and the
# predictions read, MemAvailable (CSB_TEST_MEM_AVAILABLE_KB in its place:
# tests only), the page size, net.ipv4.tcp_mem, files open and the sockstat
# TCP line. A
# value that cannot be read (an empty sysctl as a non-root user) stays
# empty: a plan calls it unreadable and skips the check that needs it.
csb_facts_read() {
  local h
  mkdir -p "$(dirname "$1x")"
  for h in $(csb_hosts); do
    # shellcheck disable=SC2016 # expanded by the host's shell
    on_host_sh "${h}" 'echo "fd_hard=$(ulimit -Hn)"; echo "fd_soft=$(ulimit -Sn)"; echo "cpus=$(nproc)"
for k in net.core.somaxconn net.ipv4.tcp_max_syn_backlog net.ipv4.tcp_syncookies net.ipv4.ip_local_port_range \
  net.ipv4.ip_local_reserved_ports net.ipv4.tcp_tw_reuse net.ipv4.tcp_timestamps net.ipv4.tcp_max_tw_buckets \
  net.ipv4.tcp_fin_timeout net.ipv4.tcp_abort_on_overflow net.ipv4.tcp_synack_retries net.ipv4.tcp_syn_retries \
  fs.file-max fs.nr_open fs.file-nr; do
  printf "%s=%s\n" "$k" "$(sysctl -n "$k" 2>/dev/null | tr -s "\t " "  ")"
done
printf "mem_available_kb=%s\n" "$(sed -n "s/^MemAvailable: *\([0-9]*\) kB$/\1/p" /proc/meminfo)"
printf "pagesize=%s\n" "$(getconf PAGESIZE)"
printf "net.ipv4.tcp_mem=%s\n" "$(tr -s "\t " "  " 2>/dev/null </proc/sys/net/ipv4/tcp_mem)"
printf "sockstat=%s\n" "$(grep "^TCP:" /proc/net/sockstat)"' >"$1${CSB_H_LABEL[h]}$2" ||
      die "cannot read the settings and limits of $(csb_host_name "${h}")" 4
    # tcp_mem is the kernel's, not a namespace's: the netns lab's hosts
    # (and this runner, inside one) cannot see it; csb_lab_enter read it
    # before entering the lab (CSB_NETNS_TCP_MEM).
    if [[ "${LAB}" == netns && "${CSB_NETNS_TCP_MEM:-}" =~ ^[0-9[:space:]]+$ ]] && grep -qx 'net.ipv4.tcp_mem=' "$1${CSB_H_LABEL[h]}$2"; then
      sed -i "s/^net\.ipv4\.tcp_mem=\$/net.ipv4.tcp_mem=$(tr -s '\t ' '  ' <<<"${CSB_NETNS_TCP_MEM}")/" "$1${CSB_H_LABEL[h]}$2"
    fi
    # A test's memory figure (the refusal of a step that would not fit).
    if [[ -n "${CSB_TEST_MEM_AVAILABLE_KB:-}" ]]; then
      sed -i "s/^mem_available_kb=.*/mem_available_kb=$((10#${CSB_TEST_MEM_AVAILABLE_KB}))/" "$1${CSB_H_LABEL[h]}$2"
    fi
  done
}

# csb_wants KIND: is KIND in SCENARIOS?
csb_wants() { [[ ",${SCENARIOS}," == *",$1,"* ]]; }

# csb_count COUNT: a connection count (checked: internal/settings) as a
# number: 20k -> 20000, 1m -> 1000000, 20000 -> 20000.
csb_count() {
  case "$1" in
    *k) echo $((10#${1%k} * 1000)) ;;
    *m) echo $((10#${1%m} * 1000000)) ;;
    *) echo $((10#$1)) ;;
  esac
}

# csb_count_name COUNT: 10000 -> 10k, 1000000 -> 1m, 12345 -> 12345.
csb_count_name() {
  if (($1 % 1000000 == 0)); then
    echo "$(($1 / 1000000))m"
  elif (($1 % 1000 == 0)); then
    echo "$(($1 / 1000))k"
  else
    echo "$1"
  fi
}
