# shellcheck shell=bash
# lib/preflight.sh: refuse what cannot work before anything is started.
#
# Tools on every host (naming the package), and the route guard: on every
# client host, traffic to SERVER_IP must leave through its NIC from one of
# its addresses, and SERVER_IP must sit on SERVER_NIC on the server (the
# seed's rule: benchmark on the Ethernet address, never over Wi-Fi or the
# management network); a refusal names the host and the interface the
# traffic would really take (exit 5). Then the clocks: each host reached
# over ssh has its offset against the controller (the runner's host)
# measured through ssh, the best of three by round trip (`csb clock`);
# beyond CLOCK_BOUND_MS the run is refused (exit 5) naming the host. A
# network namespace cannot have a wall clock of its own, so the tests skew
# one with CSB_TEST_CLOCK_OFFSET_MS (LABEL=MS[,LABEL=MS]: added to that
# host's measured offset; test-only). `csb clock` also gives the lead with
# which a cell's tools are started together (CSB_START_LEAD_MS).

CSB_START_LEAD_MS=""

# csb_pkg_of TOOL: the Debian/Ubuntu package that provides TOOL.
csb_pkg_of() {
  case "$1" in
    sar | mpstat | pidstat | sadf) echo sysstat ;;
    ip | tc | ss | nstat) echo iproute2 ;;
    ssh) echo openssh-client ;;
    go) echo golang-go ;;
    h2load) echo nghttp2-client ;;
    taskset) echo util-linux ;;
    oha) echo "oha (not in Debian: cargo install oha, or a release binary from github.com/hatoo/oha)" ;;
    *) echo "$1" ;;
  esac
}

# csb_preflight_tools "CLIENT TOOLS" "SERVER TOOLS": the tools on every
# host; and each host's CPUs (those its processes may use) and hard fd
# limit, CSB_H_NCPU[h] and CSB_H_FDHARD[h] (0: unknown), which plans read.
declare -ga CSB_H_NCPU=() CSB_H_FDHARD=()
csb_preflight_tools() {
  local h want out t facts
  local -a missing
  for h in $(csb_clients) 0; do
    want="$2"
    ((h == 0)) || want="$1${CSB_CPUS_CLIENT:+ taskset}"
    out=$(on_host_sh "${h}" "for t in ${want}; do command -v \"\$t\" >/dev/null 2>&1 || echo \"\$t\"; done; echo \"csb-facts \$(nproc) \$(ulimit -Hn)\"") ||
      die "cannot run commands on $(csb_host_name "${h}")" 4
    facts=$(grep '^csb-facts ' <<<"${out}" || true)
    local ncpu="" fdhard=""
    read -r _ ncpu fdhard <<<"${facts}"
    [[ "${ncpu}" =~ ^[0-9]+$ ]] || ncpu=0
    [[ "${fdhard}" =~ ^[0-9]+$ ]] || fdhard=0
    # shellcheck disable=SC2034 # read by lib/loadgen.sh (csb_load_plan)
    CSB_H_NCPU[h]=${ncpu} CSB_H_FDHARD[h]=${fdhard}
    out=$(grep -v '^csb-facts ' <<<"${out}" || true)
    [[ -n "${out}" ]] || continue
    mapfile -t missing <<<"${out}"
    local pkgs hn
    hn=$(csb_host_name "${h}")
    pkgs=$(for t in "${missing[@]}"; do printf '%s; ' "$(csb_pkg_of "${t}")"; done)
    die "missing on ${hn}: ${missing[*]}; install there: ${pkgs}(or: make setup)" 3
  done
  # Every runner calls this once its settings are checked and before it
  # writes or sends anything: with CSB_CHECK_ONLY=1 (scripts/ab.sh checks
  # both sides of an A/B so before its first run) it ends here, status 0.
  [[ "${CSB_CHECK_ONLY:-0}" != 1 ]] || exit 0
}

# csb_ipj KIND [ARG]: `bin/csb ipj`, which reads ip's JSON (ip -j) on stdin
# and prints the fields a check compares (route: "DEV<TAB>SRC"; holders IP:
# the interfaces carrying IP; netns: the namespace names). lab/netns.sh and
# rehearsal/00 call it before any runner has built bin/csb (csb_csb).
csb_ipj() { csb_csb ipj "$@"; }

# csb_route_check K ROUTE_JSON: whether traffic from client K leaves through
# its NIC from one of its addresses, decided by `csb ipj route-guard` from
# `ip -j route get SERVER_IP` there (anything but a route is "no route").
csb_route_check() {
  local k=$1 nic_is="its NIC ${CSB_H_NIC[$1]}" addr_is="its address(es) ${CSB_H_ADDRS[$1]}"
  # Client 1 is named by the settings that make it, the others by CLIENT_HOSTS.
  ((k != 1)) || nic_is="CLIENT_NIC=${CSB_H_NIC[1]}" addr_is="CLIENT_IP=${CSB_H_ADDRS[1]}"
  # shellcheck disable=SC2153 # SERVER_IP is a setting (lib/config.sh)
  csb_ipj route-guard -who "$(csb_host_name "${k}")" -server-ip "${SERVER_IP}" -nic "${CSB_H_NIC[k]}" \
    -nic-is "${nic_is}" -addrs "${CSB_H_ADDRS[k]}" -addr-is "${addr_is}" <<<"$2"
}

# csb_preflight_route: the route guard on every host, then the clocks.
csb_preflight_route() {
  local k route
  for k in $(csb_clients); do
    route=$(on_host_sh "${k}" "ip -j route get $(csb_quote "${SERVER_IP}") 2>&1") || route="(none: ${route})"
    csb_route_check "${k}" "${route}" || exit 5
  done
  if [[ -n "${SERVER_NIC}" ]]; then
    local addrs holders
    addrs=$(on_server_sh "ip -j addr show") || die "cannot inspect the server's interfaces" 4
    holders=$(csb_ipj holders "${SERVER_IP}" <<<"${addrs}") ||
      die "cannot read the server's interfaces (ip -j addr show printed: ${addrs:0:200})" 4
    if ! grep -qxF -- "${SERVER_NIC}" <<<"${holders}"; then
      local where="no interface"
      [[ -n "${holders}" ]] && where="interface ${holders%%$'\n'*}"
      die "SERVER_IP=${SERVER_IP} is not on SERVER_NIC=${SERVER_NIC} on the server (it is on ${where}): set SERVER_NIC or SERVER_IP to the benchmark network" 5
    fi
  fi
  log_info "route guard: every client host reaches ${SERVER_IP} through its own NIC (${CSB_H_NIC[*]:1}); ${SERVER_IP} on ${SERVER_NIC:-?} at the server"
  csb_clocks_check
}

# csb_clock_samples H: three timed readings of host H's clock, as the lines
# `csb clock` reads: "LABEL T0_US REMOTE_US T1_US" (this host's clock before
# asking and after the answer, the other's in between).
csb_clock_samples() {
  local h=$1 t0 t1 remote
  for _ in 1 2 3; do
    t0=${EPOCHREALTIME/./}
    remote=$(on_host_sh "${h}" 'date +%s%6N') || return 1
    t1=${EPOCHREALTIME/./}
    [[ "${remote}" =~ ^[0-9]+$ ]] || return 1
    printf '%s %s %s %s\n' "${CSB_H_LABEL[h]}" "${t0}" "${remote}" "${t1}"
  done
}

# csb_clocks_check: every host's clock offset against this one, estimated
# and judged by `csb clock` (internal/clock); a host on this host's clock
# (destination local) is 0. Refuses (exit 5) a host beyond CLOCK_BOUND_MS.
csb_clocks_check() {
  local h samples="" out
  local -a names=()
  local -A clock=()
  for h in $(csb_hosts); do
    CSB_H_OFFSET[h]=0.000 CSB_H_CLOCK_ERR[h]=0.000
    [[ "${CSB_H_DEST[h]}" != local ]] || continue
    samples+=$(csb_clock_samples "${h}")$'\n' || die "cannot read the clock of $(csb_host_name "${h}") (date +%s%6N)" 4
    names+=(-name "${CSB_H_LABEL[h]}=$(csb_host_name "${h}")")
  done
  # The netns lab's hosts are namespaces of one kernel: one clock.
  [[ "${LAB}" != netns ]] || names+=(-same-clock)
  out=$("${CSB_ROOT}/bin/csb" clock -bound-ms "${CLOCK_BOUND_MS}" "${names[@]}" \
    -test-offset "${CSB_TEST_CLOCK_OFFSET_MS:-}" <<<"${samples}") || die "csb clock failed on: ${samples}" 1
  csb_kv_into clock "${out}"
  ((clock[ok])) || die "${clock[refusal]}" 5
  CSB_START_LEAD_MS=${clock[lead_ms]}
  for h in $(csb_hosts); do
    [[ -z "${clock[${CSB_H_LABEL[h]}.offset_ms]:-}" ]] && continue
    # shellcheck disable=SC2034 # read by lib/hosts.sh (csb_hosts_record)
    CSB_H_OFFSET[h]=${clock[${CSB_H_LABEL[h]}.offset_ms]} CSB_H_CLOCK_ERR[h]=${clock[${CSB_H_LABEL[h]}.error_ms]}
  done
  log_info "clocks against this host (bound ${CLOCK_BOUND_MS} ms): $(for h in $(csb_hosts); do printf '%s %s ms; ' "${CSB_H_LABEL[h]}" "${CSB_H_OFFSET[h]}"; done)start lead ${CSB_START_LEAD_MS} ms"
}
