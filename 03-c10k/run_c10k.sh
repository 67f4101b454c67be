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
#                         connects from CLIENT_IP only, so it runs first,
#                         while that address has no TIME_WAIT)
#   idle-10k              connclient idle: open CONNS connections at
#                         CONNECT_RATE/s, one GET /healthz each, hold HOLD s
#   lowrate-10k-<R>rps    connclient lowrate, for each R in RPS (default
#                         1000,2000): CONNS connections, R requests/s on
#                         /healthz for DURATION s, open model (latency from
#                         each request's due time, so coordinated omission
#                         is corrected; the service time is kept beside it)
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
#   quick  hold 15 s, 15 s per cell, 5000 connects/s
#   full   hold 60 s, 30 s per cell, 2000 connects/s (the seed's experiment)
#
# Settings of this phase (lab.env, environment or -s KEY=VALUE):
#   CONNS             connections per scenario, a list (default 10000)
#   RPS               request rates of the low-rate scenarios (default 1000,2000)
#   SCENARIOS         which of active,idle,lowrate to run (default all three)
#   ACTIVE_PAYLOAD    payload of the active scenario (default 1k)
#   HOLD              seconds an idle scenario holds (empty: the profile's)
#   DURATION          seconds per low-rate/active cell (empty: the profile's)
#   CONNECT_RATE      connects/s over all client processes (empty: the profile's)
#   TW_THRESHOLD      TIME_WAIT sockets from which a client address is busy (500)
#   TW_WAIT_MAX       longest wait for TIME_WAIT to drain, seconds (120)
#   CLIENT_EXTRA_IPS  LAB=ssh: more source addresses already on CLIENT_NIC
#   CLIENTS           client hosts: idle and low-rate split across them; the
#                     active scenario (one wrk) needs CLIENTS=1
#   SERVER            the server under test: csb (default), nginx, cmd
#                     (SERVER_CMD) or url; HEALTH_PATH its idle/low-rate path
#                     (default /healthz); see README
#   SCHEME            http (default) or https: a CA and a certificate made for
#                     the run (TLS_KEY_TYPE, TLS_TICKETS); connclient trusts
#                     only that CA and times each handshake; see README
#
# Options:
#   -c FILE         config file (default: lab.env at the repo root, if any)
#   -l LAB          local | netns | ssh
#   -p PROFILE      smoke | quick | full (default full)
#   -n NAME         run directory suffix (default c10k)
#   -r DIR          results root (runs go to DIR/03-c10k/<run>/)
#   -s KEY=VALUE    any setting; flags win over the environment, which wins
#                   over the config file
#   -h              this help
#
# Exit status: 0 every cell ran; 1 a cell failed or was refused (the run is
# partial); 2 bad usage; 3 a tool is missing; 4 the server host cannot be
# reached; 5 the route guard refused; 6 a scenario cannot work on these
# hosts (the message names the setting to change); 130/143 interrupted.
#
# Requires: wrk, curl, sysstat, iproute2 and Go on the client; sysstat and
# iproute2 on the server; a hard fd limit (ulimit -Hn) above CONNS + 64 on
# the client for wrk. LAB=netns needs root.
# Loads: lib/init.sh (lib/c10k.sh). Ends with "results: <run directory>".
#
# Examples:
#   sudo LAB=netns PROFILE=quick bash 03-c10k/run_c10k.sh
#   sudo bash 03-c10k/run_c10k.sh -l netns -p smoke -s SCENARIOS=idle,lowrate -s RPS=1000
#   bash 03-c10k/run_c10k.sh -l local -p smoke -s CONNS=2000

# shellcheck source=lib/init.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/init.sh"

usage() { sed -n '2,/^$/{s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"; }

csb_config_declare CONNS 10000 conncounts "Phase 3: connections per scenario (run_c10k.sh: 10000; beyond: 20000)"
csb_config_declare RPS 1000,2000 posints "Phase 3: request rates of the low-rate scenarios (run_c10k.sh: 1000,2000; beyond and retry: 2000)"
csb_config_declare SCENARIOS active,idle,lowrate scenarios "Phase 3: which scenarios to run (run_c10k.sh: active,idle,lowrate; beyond: idle,lowrate)"
csb_config_declare ACTIVE_PAYLOAD 1k size "Phase 3: payload of the active scenario (wrk on /payload/<size>)"
csb_c10k_settings

main() {
  csb_config_load "$@"
  c10k_check_scenarios active idle lowrate
  csb_payloads_check ACTIVE_PAYLOAD "${ACTIVE_PAYLOAD}" || exit 2
  c10k_profile
  C10K_PAYLOAD=${ACTIVE_PAYLOAD}
  csb_lab_enter "${BASH_SOURCE[0]}" "$@"
  mapfile -t C10K_CELLS < <(c10k_scenarios active idle lowrate)
  c10k_begin c10k "wrk" "$@"
  c10k_run_cells
}

main "$@"
