# shellcheck shell=bash
# lib/preflight.sh: refuse what cannot work before anything is started.
#
# Tools on each host (naming the package), the ssh hop, and the route guard:
# traffic to SERVER_IP must leave this host through CLIENT_NIC from CLIENT_IP,
# and SERVER_IP must sit on SERVER_NIC on the server (the seed's rule:
# benchmark on the Ethernet address, never over Wi-Fi or the management
# network). A refusal names the interface the traffic would really take.

# csb_pkg_of TOOL: the Debian/Ubuntu package that provides TOOL.
csb_pkg_of() {
  case "$1" in
    sar | mpstat | pidstat | sadf) echo sysstat ;;
    ip | tc | ss | nstat) echo iproute2 ;;
    ssh) echo openssh-client ;;
    go) echo golang-go ;;
    oha) echo "oha (not in Debian: cargo install oha, or a release binary from github.com/hatoo/oha)" ;;
    *) echo "$1" ;;
  esac
}

# csb_preflight_tools "CLIENT TOOLS" "SERVER TOOLS"
csb_preflight_tools() {
  local t missing=()
  for t in $1; do
    command -v "${t}" >/dev/null 2>&1 || missing+=("${t}")
  done
  if ((${#missing[@]})); then
    die "missing on the client host: ${missing[*]}; install: $(for t in "${missing[@]}"; do printf '%s; ' "$(csb_pkg_of "${t}")"; done)(or: make setup)" 3
  fi
  local out
  out=$(on_server_sh "for t in $2; do command -v \"\$t\" >/dev/null 2>&1 || echo \"\$t\"; done") ||
    die "cannot run commands on the server host" 4
  if [[ -n "${out}" ]]; then
    mapfile -t missing <<<"${out}"
    die "missing on the server host: ${missing[*]}; install there: $(for t in "${missing[@]}"; do printf '%s; ' "$(csb_pkg_of "${t}")"; done)" 3
  fi
  csb_clients_preflight_tools "$1"
}

# csb_ipj KIND [ARG]: `bin/csb ipj`, which reads ip's JSON (ip -j) on stdin
# and prints the fields a check compares (route: "DEV<TAB>SRC"; holders IP:
# the interfaces carrying IP; netns: the namespace names). lab/netns.sh and
# rehearsal/00 call it before any runner has built bin/csb, so it is built
# here when missing or older than `csb ipj`.
csb_ipj() {
  if ! "${CSB_ROOT}/bin/csb" ipj netns </dev/null >/dev/null 2>&1; then
    csb_build csb cmd/csb >&2
  fi
  "${CSB_ROOT}/bin/csb" ipj "$@"
}

# csb_route_check ROUTE_JSON: decide from `ip -j route get SERVER_IP` on the
# client whether traffic leaves through CLIENT_NIC from CLIENT_IP. Anything
# but a route (ip's error text) is "no route".
csb_route_check() {
  local json=$1 fields dev="" src=""
  if fields=$(csb_ipj route <<<"${json}" 2>/dev/null); then
    IFS=$'\t' read -r dev src <<<"${fields}"
  fi
  if [[ -z "${dev}" ]]; then
    printf 'error: no route to SERVER_IP=%s from this host (ip route get: %s)\n' "${SERVER_IP}" "${json}" >&2
    return 1
  fi
  local route="${SERVER_IP} dev ${dev}${src:+ src ${src}}"
  if [[ -n "${CLIENT_NIC}" && "${dev}" != "${CLIENT_NIC}" ]]; then
    printf 'error: traffic to SERVER_IP=%s would leave through %s, not CLIENT_NIC=%s: fix the route or set CLIENT_NIC/SERVER_IP to the benchmark network (ip route get %s: %s)\n' \
      "${SERVER_IP}" "${dev}" "${CLIENT_NIC}" "${SERVER_IP}" "${route}" >&2
    return 1
  fi
  if [[ -n "${src}" && "${src}" != "${CLIENT_IP}" ]]; then
    printf 'error: traffic to SERVER_IP=%s would come from %s on %s, not CLIENT_IP=%s: set CLIENT_IP to the address on %s\n' \
      "${SERVER_IP}" "${src}" "${dev}" "${CLIENT_IP}" "${dev}" >&2
    return 1
  fi
}

# csb_preflight_route: the route guard on both hosts.
csb_preflight_route() {
  local route
  route=$(ip -j route get "${SERVER_IP}" 2>&1) || route="(none: ${route})"
  csb_route_check "${route}" || exit 5
  if [[ -z "${SERVER_NIC}" ]]; then
    csb_clients_preflight_route
    csb_clients_clock
    return 0
  fi
  local addrs holders
  addrs=$(on_server_sh "ip -j addr show") || die "cannot inspect the server's interfaces" 4
  holders=$(csb_ipj holders "${SERVER_IP}" <<<"${addrs}") ||
    die "cannot read the server's interfaces (ip -j addr show printed: ${addrs:0:200})" 4
  if ! grep -qxF -- "${SERVER_NIC}" <<<"${holders}"; then
    local where="no interface"
    [[ -n "${holders}" ]] && where="interface ${holders%%$'\n'*}"
    die "SERVER_IP=${SERVER_IP} is not on SERVER_NIC=${SERVER_NIC} on the server (it is on ${where}): set SERVER_NIC or SERVER_IP to the benchmark network" 5
  fi
  log_info "route guard: ${SERVER_IP} via ${CLIENT_NIC:-?} from ${CLIENT_IP}; ${SERVER_IP} on ${SERVER_NIC} at the server"
  csb_clients_preflight_route
  csb_clients_clock
}
