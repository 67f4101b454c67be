#!/usr/bin/env bash
# Step 01: read and record both hosts' fd limits and the sysctls that shape
# a connection-heavy benchmark.
#
# Usage: rehearsal/01_limits.sh [-h] [-c FILE] [-l LAB] [-s KEY=VALUE]...
#
# On each host: `ulimit -Sn` and `ulimit -Hn` (every connection is one file
# descriptor), and net.core.somaxconn, net.ipv4.tcp_max_syn_backlog,
# net.ipv4.ip_local_port_range, net.ipv4.tcp_tw_reuse,
# net.ipv4.tcp_fin_timeout and net.ipv4.tcp_congestion_control. The output
# is kept in REHEARSAL_DIR/client/limits-{client,server}.txt. Then says what
# the numbers allow: how many connections the fd limits let through, how many
# ports one client address has towards SERVER_IP:SERVER_PORT. Changes nothing.
#
# Exit status: 0 ok, 2 bad usage, 4 the server is unreachable.
#
# Requires: sysctl (procps) on both hosts. Loads: rehearsal/lib.sh
# (lib/init.sh).
#
# Examples:
#   rehearsal/01_limits.sh
#   sudo rehearsal/01_limits.sh -l netns

# shellcheck source=rehearsal/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

SYSCTLS=(net.core.somaxconn net.ipv4.tcp_max_syn_backlog net.ipv4.ip_local_port_range
  net.ipv4.tcp_tw_reuse net.ipv4.tcp_fin_timeout net.ipv4.tcp_congestion_control)

main() {
  rh_init "$@"
  rh_args_max 0
  rh_enter
  rh_connect
  local out="${REHEARSAL_DIR}/client"

  rh_say "client: fd limits (soft, hard) and sysctls"
  {
    rh_run ulimit -Sn
    rh_run ulimit -Hn
    rh_run sysctl "${SYSCTLS[@]}"
  } | tee "${out}/limits-client.txt"

  rh_say "server: fd limits (soft, hard) and sysctls"
  {
    rh_on_server_sh "ulimit -Sn; ulimit -Hn"
    rh_on_server sysctl "${SYSCTLS[@]}"
  } | tee "${out}/limits-server.txt"

  rh_say "what they allow"
  local chard shard lo hi
  chard=$(ulimit -Hn)
  shard=$(on_server_sh "ulimit -Hn")
  read -r lo hi < <(sysctl -n net.ipv4.ip_local_port_range)
  echo "client hard fd limit ${chard}, server ${shard}: 10k connections need 10064 on each, 20k need 20064"
  echo "ports ${lo}-${hi}: $((hi - lo + 1)) connections at once from ${CLIENT_IP} to ${SERVER_IP}:${SERVER_PORT}, TIME_WAIT included"
  local h
  for h in "${chard}" "${shard}"; do
    if [[ "${h}" != unlimited ]] && ((h < 10064)); then
      echo "note: a hard fd limit of ${h} is too low for C10K: raise it in /etc/security/limits.conf (see rehearsal/README.md)"
    fi
  done
}

main "$@"
