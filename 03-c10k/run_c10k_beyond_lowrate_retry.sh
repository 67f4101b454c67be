#!/usr/bin/env bash
# Phase 3, beyond C10K: the 20k low-rate scenario again, once the client's
# TIME_WAIT toward the server has drained.
#
# Usage: bash 03-c10k/run_c10k_beyond_lowrate_retry.sh [-h] [-c FILE] [-l LAB] [-p PROFILE]
#                                                      [-n NAME] [-r RESULTS_ROOT] [-s KEY=VALUE]...
#
# The seed's 20k low-rate run worked only after TIME_WAIT had cooled down:
# every connection a client closes keeps its local port for 60 s, so right
# after a 20k scenario a source address has some 20k of its 28k ephemeral
# ports tied up toward the server (and every connect() searches past them).
# This runner first waits until fewer than TW_THRESHOLD of the client's
# sockets toward SERVER_IP:SERVER_PORT are in TIME_WAIT (from any source
# address), at most TW_WAIT_MAX seconds, saying where it stands every 10 s
# and, at the end, how long it waited (raw/tw-cooldown.tsv has every
# poll). Then, for each count in CONNS (default 20000) and rate in RPS
# (default 2000), the low-rate scenario of run_c10k_beyond.sh:
#   lowrate-20k-<R>rps    connclient lowrate: CONNS connections, R requests/s
#                         on /healthz for DURATION s, open model
# split across server processes (SO_REUSEPORT) and client processes, one per
# source address, as the hosts' limits require (see run_c10k_beyond.sh). If
# TIME_WAIT does not drain in time the scenario still runs when the ports
# allow it, and is refused (naming the setting to change) when they do not.
#
# Profiles (each setting below overrides its part):
#   smoke  5 s of schedule, 5000 connects/s
#   quick  15 s, 5000 connects/s
#   full   30 s, 2000 connects/s (the seed's experiment)
#
# Settings of this phase (lab.env, environment or -s KEY=VALUE):
#   CONNS             connections, a list (default 20000)
#   RPS               request rates (default 2000)
#   TW_THRESHOLD      wait until fewer sockets than this are in TIME_WAIT (500)
#   TW_WAIT_MAX       longest wait, seconds (120; TIME_WAIT lasts 60 s in Linux)
#   DURATION          seconds of schedule (empty: the profile's)
#   CONNECT_RATE      connects/s over all client processes (empty: the profile's)
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
#   -n NAME         run directory suffix (default c10k-beyond-lowrate-retry)
#   -r DIR          results root (runs go to DIR/03-c10k/<run>/)
#   -s KEY=VALUE    any setting; flags win over the environment, which wins
#                   over the config file
#   -h              this help
#
# Exit status: 0 every cell ran; 1 a cell failed or was refused (the run is
# partial); 2 bad usage; 3 a tool is missing; 4 the server host cannot be
# reached; 5 the route guard refused; 6 a scenario cannot work on these
# hosts; 130/143 interrupted.
#
# Requires: curl, sysstat, iproute2 and Go on the client; sysstat and
# iproute2 on the server. LAB=netns needs root.
# Loads: lib/init.sh (lib/c10k.sh). Ends with "results: <run directory>".
#
# Examples:
#   sudo LAB=netns bash 03-c10k/run_c10k_beyond.sh && sudo LAB=netns bash 03-c10k/run_c10k_beyond_lowrate_retry.sh
#   sudo bash 03-c10k/run_c10k_beyond_lowrate_retry.sh -l netns -p smoke -s TW_THRESHOLD=100

# shellcheck source=lib/init.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/init.sh"

usage() { sed -n '2,/^$/{s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"; }

csb_config_declare CONNS 20000 posints "Phase 3: connections per scenario (run_c10k.sh: 10000; beyond: 20000)"
csb_config_declare RPS 2000 posints "Phase 3: request rates of the low-rate scenarios (run_c10k.sh: 1000,2000; beyond and retry: 2000)"
csb_c10k_settings

# cooldown: wait for the client's TIME_WAIT toward the server to drain.
cooldown() {
  local start=${SECONDS} whose="this host's"
  ((CSB_CLIENTS_N == 1)) || whose="the ${CSB_CLIENTS_N} client hosts' (summed)"
  log_info "TIME_WAIT cool-down: waiting until fewer than ${TW_THRESHOLD} of ${whose} sockets toward ${SERVER_IP}:${SERVER_PORT} are in TIME_WAIT (at most ${TW_WAIT_MAX} s)"
  if c10k_tw_wait "${CSB_RUN_DIR}/raw/tw-cooldown.tsv"; then
    csb_run_set tw_cooldown_ok 1
    log_info "TIME_WAIT cool-down: waited $((SECONDS - start)) s"
  else
    csb_run_set tw_cooldown_ok 0
    log_warn "TIME_WAIT cool-down: gave up after $((SECONDS - start)) s (TW_WAIT_MAX); the scenario runs only if the ports allow"
  fi
  csb_run_set tw_cooldown_s $((SECONDS - start))
}

main() {
  csb_config_load "$@"
  c10k_profile
  csb_lab_enter "${BASH_SOURCE[0]}" "$@"
  mapfile -t C10K_CELLS < <(c10k_scenarios lowrate)
  c10k_begin c10k-beyond-lowrate-retry "" "$@"
  cooldown
  c10k_run_cells
}

main "$@"
