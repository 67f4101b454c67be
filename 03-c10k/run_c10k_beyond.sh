#!/usr/bin/env bash
# Phase 3, beyond C10K: 20k to 1m connections (C100K, C1M), past what one
# process may hold here, what each costs in memory, and what stops them first.
#
# Usage: bash 03-c10k/run_c10k_beyond.sh [-h] [-c FILE] [-l LAB] [-p PROFILE]
#                                        [-n NAME] [-r RESULTS_ROOT] [-s KEY=VALUE]...
#
# For each count in CONNS (a list of steps, e.g. 20k,50k,100k; default the
# profile's), one cell per scenario, in this order:
#   idle-20k              connclient idle: open CONNS connections at
#                         CONNECT_RATE/s, one GET /healthz each, hold HOLD s
#   lowrate-20k-<R>rps    connclient lowrate, for each R in RPS (default the
#                         profile's): R requests/s on /healthz for DURATION
#                         s, open model (coordinated omission corrected)
# HTTP=2 holds the idle connections over HTTP/2 (idle-20k-h2: h2 by ALPN
# with SCHEME=https, h2c with prior knowledge in cleartext); lowrate is
# HTTP/1.1 only for now: HTTP=2 needs SCENARIOS=idle.
# At every step memory per connection is measured three ways: the server
# processes' RSS growth, the client processes' RSS, and the kernel's (TCP
# slab objects and /proc/net/sockstat TCP mem, before and with the
# connections held); a step that cannot be reached names its wall.
# Past one process's hard fd limit (20000 on the lab machine) the runner
# starts several server processes sharing the port with SO_REUSEPORT and
# reports their sum, and one connclient process per client source address;
# in the netns lab it adds client addresses (CLIENT_IP + 1, + 2, ...) as
# needed and removes them at exit. Each scenario is planned against both
# hosts' limits first (fd limit per process, ports per source address and
# their TIME_WAIT, listen backlog, memory, files): what cannot work is
# refused before any connection is opened, naming the setting to change.
# The server is started for each scenario, so its RSS starts fresh.
# With CLIENTS=N client hosts the scenario is split evenly across them,
# each host's share planned on its own limits and sockets, its processes
# started there (the netns lab adds 198.18.<k>.3 and up on client k >= 2);
# the results are merged as from one host (histograms bucket by bucket).
#
# Profiles (each setting below overrides its part):
#   smoke  CONNS 20000, RPS 2000, hold 3 s, 5 s per low-rate cell,
#          5000 connects/s
#   quick  CONNS 20k,50k, RPS 5000, hold 5 s, 5 s per cell, 5000 connects/s
#   full   CONNS 20k,50k,100k,1m, RPS 10000, hold 60 s, 30 s per cell,
#          8000 connects/s at most (the ramp backs off to what the hosts
#          accept: 4,200-5,500/s at 1m here). C1M: about 17 minutes with
#          SERVER=nginx; the reference server's 1m step does not fit in
#          24 GiB and is refused before it starts, from what its 100k
#          step measured
#
# Requires: curl, sysstat, iproute2 and Go on the client; sysstat and
# iproute2 on the server. LAB=netns needs root; LAB=ssh needs as many
# client addresses (CLIENT_IP, CLIENT_EXTRA_IPS) as the ports require.
#
# Examples:
#   sudo LAB=netns PROFILE=quick bash 03-c10k/run_c10k_beyond.sh
#   sudo bash 03-c10k/run_c10k_beyond.sh -l netns -p smoke -s SCENARIOS=idle
#   sudo bash 03-c10k/run_c10k_beyond.sh -l netns -p quick -s SCENARIOS=idle -s HTTP=2 -s SCHEME=https
#   sudo bash 03-c10k/run_c10k_beyond.sh -l netns -s CONNS=20k,50k,100k
#   sudo bash 03-c10k/run_c10k_beyond.sh -l netns -p quick -s CLIENTS=2

# shellcheck source=lib/init.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/init.sh"

usage() { csb_usage c10k-beyond CONNS RPS SCENARIOS HOLD DURATION CONNECT_RATE \
  TW_THRESHOLD TW_WAIT_MAX CLIENT_EXTRA_IPS CLIENTS HTTP H2_MAX_STREAMS SERVER SCHEME; }

csb_config_declare CONNS "" conncounts_or_empty "connections per scenario, a list of steps: 20000 or 20k (empty: the profile's)"
csb_config_declare RPS "" posints_or_empty "request rates of the low-rate scenarios (empty: the profile's)"
csb_config_declare SCENARIOS idle,lowrate scenarios "which of idle,lowrate to run (default both)"
csb_c10k_settings
c10k_http_declare

main() {
  csb_config_load "$@"
  csb_scenarios_check "Phase 3" idle lowrate
  c10k_http_check idle lowrate
  c10k_profile
  # The steps: smoke one past a process's fd limit, quick to 50k (the demo
  # stays short), full to C1M with 10000 req/s over them.
  CONNS=${CONNS:-$(csb_profile 20000 20k,50k 20k,50k,100k,1m)}
  RPS=${RPS:-$(csb_profile 2000 5000 10000)}
  csb_lab_enter "${BASH_SOURCE[0]}" "$@"
  mapfile -t C10K_CELLS < <(c10k_scenarios idle lowrate)
  c10k_begin c10k-beyond "" "$@"
  c10k_run_cells
}

main "$@"
