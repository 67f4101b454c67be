#!/usr/bin/env bash
# Step 00: check both hosts: tools, the ssh hop, and which NIC carries the
# benchmark address.
#
# Usage: rehearsal/00_check_hosts.sh [-h] [-c FILE] [-l LAB] [-s KEY=VALUE]...
#
# Lists the tools missing on either host, reaches the server over ssh
# (SERVER_SSH, key auth only), shows both hosts' addresses (ip -br addr) and
# the client's route to SERVER_IP (ip route get), then runs the route guard
# every runner runs: traffic to SERVER_IP must leave through CLIENT_NIC from
# CLIENT_IP, and SERVER_IP must sit on SERVER_NIC. Changes nothing.
#
# Settings come from lab.env (or -c FILE), the environment and -s KEY=VALUE
# (see lab.env.example); REHEARSAL_DIR from the environment. With LAB=netns
# the step runs itself inside the client namespace. Exit status: 0 ok,
# 2 bad usage, 3 a tool is missing, 4 the server is unreachable, 5 the route
# guard refused.
#
# Requires: ssh to the server (key auth) for LAB=ssh; the rest it checks.
# Loads: rehearsal/lib.sh (lib/init.sh).
#
# Examples:
#   rehearsal/00_check_hosts.sh                  # LAB=ssh, from lab.env
#   sudo rehearsal/00_check_hosts.sh -l netns

# shellcheck source=rehearsal/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

main() {
  rh_init "$@"
  rh_args_max 0
  rh_enter

  rh_say "the ssh hop and the tools on both hosts (LAB=${LAB}, server ${SERVER_SSH:-this host})"
  rh_connect
  csb_preflight_tools "ip ss nstat sar mpstat pidstat curl iperf3 wrk go" "ip ss nstat sar mpstat pidstat iperf3"
  command -v oha >/dev/null 2>&1 || echo "note: oha is not installed here; step 08 uses wrk in its place"
  echo "ok: every tool is there"

  rh_say "which NIC carries the benchmark address"
  rh_run ip -br addr
  rh_run ip route get "${SERVER_IP}"
  rh_on_server ip -br addr

  rh_say "the route guard: ${SERVER_IP} via ${CLIENT_NIC:-?} from ${CLIENT_IP}, and on ${SERVER_NIC:-?} at the server"
  csb_preflight_route
  echo "ok: benchmark traffic takes ${CLIENT_NIC} -> ${SERVER_NIC}"
}

main "$@"
