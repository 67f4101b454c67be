#!/usr/bin/env bash
# Phase 3, beyond C10K: 20k connections and more, past what one process may
# hold here, and what stops them first.
#
# Usage: bash 03-c10k/run_c10k_beyond.sh [-h] [-c FILE] [-l LAB] [-p PROFILE]
#                                        [-n NAME] [-r RESULTS_ROOT] [-s KEY=VALUE]...
#
# For each count in CONNS (default 20000; larger counts welcome, e.g.
# CONNS=20000,30000), one cell per scenario, in this order:
#   idle-20k              connclient idle: open CONNS connections at
#                         CONNECT_RATE/s, one GET /healthz each, hold HOLD s
#   lowrate-20k-<R>rps    connclient lowrate, for each R in RPS (default
#                         2000): R requests/s on /healthz for DURATION s,
#                         open model (coordinated omission corrected)
# Past one process's hard fd limit (20000 on the lab machine) the runner
# starts several server processes sharing the port with SO_REUSEPORT and
# reports their sum, and one connclient process per client source address;
# in the netns lab it adds client addresses (CLIENT_IP + 1, + 2, ...) as
# needed and removes them at exit. Each scenario is planned against both
# hosts' limits first (fd limit per process, ports per source address and
# their TIME_WAIT, listen backlog, memory, files): what cannot work is
# refused before any connection is opened, naming the setting to change.
# The server is started for each scenario, so its RSS starts fresh.
#
# Profiles (each setting below overrides its part):
#   smoke  hold 3 s, 5 s per low-rate cell, 5000 connects/s
#   quick  hold 15 s, 15 s per cell, 5000 connects/s
#   full   hold 60 s, 30 s per cell, 2000 connects/s (the seed's experiment)
#
# Settings of this phase (lab.env, environment or -s KEY=VALUE):
#   CONNS             connections per scenario, a list (default 20000)
#   RPS               request rates of the low-rate scenarios (default 2000)
#   SCENARIOS         which of idle,lowrate to run (default both)
#   HOLD              seconds an idle scenario holds (empty: the profile's)
#   DURATION          seconds per low-rate cell (empty: the profile's)
#   CONNECT_RATE      connects/s over all client processes (empty: the profile's)
#   TW_THRESHOLD      TIME_WAIT sockets from which a client address is busy (500)
#   TW_WAIT_MAX       longest wait for TIME_WAIT to drain, seconds (120)
#   CLIENT_EXTRA_IPS  LAB=ssh: more source addresses already on CLIENT_NIC
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
#   -n NAME         run directory suffix (default c10k-beyond)
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
# Requires: curl, sysstat, iproute2 and Go on the client; sysstat and
# iproute2 on the server. LAB=netns needs root; LAB=ssh needs as many
# client addresses (CLIENT_IP, CLIENT_EXTRA_IPS) as the ports require.
# Loads: lib/init.sh (lib/c10k.sh). Ends with "results: <run directory>".
#
# Examples:
#   sudo LAB=netns PROFILE=quick bash 03-c10k/run_c10k_beyond.sh
#   sudo bash 03-c10k/run_c10k_beyond.sh -l netns -p smoke -s SCENARIOS=idle
#   sudo bash 03-c10k/run_c10k_beyond.sh -l netns -s CONNS=20000,30000,40000

# shellcheck source=lib/init.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/init.sh"

usage() { sed -n '2,/^$/{s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"; }

csb_config_declare CONNS 20000 posints "Phase 3: connections per scenario (run_c10k.sh: 10000; beyond: 20000)"
csb_config_declare RPS 2000 posints "Phase 3: request rates of the low-rate scenarios (run_c10k.sh: 1000,2000; beyond and retry: 2000)"
csb_config_declare SCENARIOS idle,lowrate scenarios "Phase 3: which scenarios to run (run_c10k.sh: active,idle,lowrate; beyond: idle,lowrate)"
csb_c10k_settings

main() {
  csb_config_load "$@"
  c10k_check_scenarios idle lowrate
  c10k_profile
  csb_lab_enter "${BASH_SOURCE[0]}" "$@"
  mapfile -t C10K_CELLS < <(c10k_scenarios idle lowrate)
  c10k_begin c10k-beyond "" "$@"
  c10k_run_cells
}

main "$@"
