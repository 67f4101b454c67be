#!/usr/bin/env bash
# Phase 3: can the server hold 10k keep-alive connections, what do they cost
# in memory and CPU, and what does load on them do to latency?
#
# Usage: bash 03-c10k/run_c10k.sh [-h] [-c FILE] [-l LAB] [-p PROFILE]
#                                 [-n NAME] [-r RESULTS_ROOT] [-s KEY=VALUE]...
#
# For each count in CONNS (default 10000), one cell per scenario, in this
# order:
#   active-10k-1k         wrk, CONNS connections in a closed loop on
#                         /payload/ACTIVE_PAYLOAD for DURATION s (wrk
#                         connects from each client host's first address
#                         only, so it runs first, while those have no
#                         TIME_WAIT); with SCHEME=https h2load --h1
#                         instead, measured after a warm-up that opens
#                         the connections, sized from a probe of the
#                         server's TLS handshakes made just before
#                         (raw/<label>/<cell>.tls-probe.txt; refused
#                         when it would be over 300 s)
#   idle-10k              connclient idle: open CONNS connections at
#                         CONNECT_RATE/s, one GET /healthz each, hold HOLD s
#   lowrate-10k-<R>rps    connclient lowrate, for each R in RPS (default
#                         1000,2000): CONNS connections, R requests/s on
#                         /healthz for DURATION s, open model (latency from
#                         each request's due time, so coordinated omission
#                         is corrected; the service time is kept beside it)
# HTTP=2 holds the idle connections over HTTP/2 (idle-10k-h2: connclient
# idle -http 2, h2 by ALPN with SCHEME=https, h2c with prior knowledge in
# cleartext; the server's SETTINGS and PINGs answered through the hold),
# and loads the active scenario with h2load, for each S in STREAMS
# (default 100): active-10k-1k-h2-m<S>, the same CONNS requests in flight
# as CONNS / S connections of S streams each (h2load's log of every
# request kept beside its text; the report gives the server's RSS per
# stream). The low-rate scenario is HTTP/1.1 only for now: HTTP=2 needs
# SCENARIOS=active,idle or idle.
# The server (bin/csb-server) is started for each scenario and stopped after
# it, so each starts from a fresh process: its RSS before the connections
# and once they are all held gives the RSS per connection. Before each
# scenario lib/c10k.sh plans it against both hosts' limits (fd limit per
# process, ports per source address and TIME_WAIT, listen backlog, memory,
# files): more server processes (SO_REUSEPORT) and client processes, one
# per source address, when one cannot hold them; in the netns lab it adds
# client addresses and removes them at exit. What cannot work is refused
# before any connection is opened (exit 6 before the run; a refused cell
# when only the moment's TIME_WAIT stands in the way).
#
# Profiles (each setting below overrides its part):
#   smoke  hold 3 s, 5 s per low-rate/active cell, 5000 connects/s
#   quick  hold 5 s, 5 s per cell, 5000 connects/s
#   full   hold 60 s, 30 s per cell, 2000 connects/s (the seed's experiment)
#
# Requires: wrk, curl, sysstat, iproute2 and Go on the client; sysstat and
# iproute2 on the server; a hard fd limit (ulimit -Hn) above CONNS + 64 on
# the client for wrk. LAB=netns needs root.
#
# Examples:
#   sudo LAB=netns PROFILE=quick bash 03-c10k/run_c10k.sh
#   sudo bash 03-c10k/run_c10k.sh -l netns -p smoke -s SCENARIOS=idle,lowrate -s RPS=1000
#   bash 03-c10k/run_c10k.sh -l local -p smoke -s CONNS=2000
#   sudo bash 03-c10k/run_c10k.sh -l netns -p quick -s SCENARIOS=active,idle -s HTTP=2 -s STREAMS=10,100

# shellcheck source=lib/init.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/init.sh"

usage() { csb_usage c10k CONNS RPS SCENARIOS ACTIVE_PAYLOAD HOLD DURATION \
  CONNECT_RATE TW_THRESHOLD TW_WAIT_MAX CLIENT_EXTRA_IPS CLIENTS HTTP STREAMS H2_MAX_STREAMS SERVER SCHEME \
  NON2XX_MAX; }

csb_config_declare CONNS 10000 conncounts "connections per scenario, a list (default 10000)"
csb_config_declare RPS 1000,2000 posints "request rates of the low-rate scenarios (default 1000,2000)"
csb_config_declare SCENARIOS active,idle,lowrate scenarios "which of active,idle,lowrate to run (default all three)"
csb_config_declare ACTIVE_PAYLOAD 1k size "payload of the active scenario (default 1k)"
csb_c10k_settings
c10k_http_declare
csb_config_declare STREAMS 100 posints "HTTP=2: streams per connection of the active scenario (h2load -m), a list (default 100): CONNS requests in flight as CONNS / STREAMS connections, a cell each"

main() {
  csb_config_load "$@"
  csb_scenarios_check "Phase 3" active idle lowrate
  c10k_http_check active idle lowrate
  c10k_profile
  csb_lab_enter "${BASH_SOURCE[0]}" "$@"
  mapfile -t C10K_CELLS < <(c10k_scenarios active idle lowrate)
  # h2load loads the active scenario over HTTP/2, and over TLS (its warm-up).
  local tools=wrk
  ! { csb_http2_on || csb_tls_on; } || tools+=" h2load"
  c10k_begin c10k "${tools}" "$@"
  c10k_run_cells
}

main "$@"
