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
#   quick  5 s, 5000 connects/s
#   full   30 s, 2000 connects/s (the seed's experiment)
#
# Requires: curl, sysstat, iproute2 and Go on the client; sysstat and
# iproute2 on the server. LAB=netns needs root.
#
# Examples:
#   sudo LAB=netns bash 03-c10k/run_c10k_beyond.sh && sudo LAB=netns bash 03-c10k/run_c10k_beyond_lowrate_retry.sh
#   sudo bash 03-c10k/run_c10k_beyond_lowrate_retry.sh -l netns -p smoke -s TW_THRESHOLD=100

# shellcheck source=lib/init.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/init.sh"

usage() { csb_usage c10k-beyond-lowrate-retry CONNS RPS TW_THRESHOLD \
  TW_WAIT_MAX DURATION CONNECT_RATE CLIENT_EXTRA_IPS SERVER SCHEME; }

csb_config_declare CONNS 20000 posints "connections, a list (default 20000)"
csb_config_declare RPS 2000 posints "request rates (default 2000)"
csb_c10k_settings

# cooldown: wait for the client's TIME_WAIT toward the server to drain
# (csb_tw_wait logs how far it is); recorded whether it did, and how long.
cooldown() {
  local start=${SECONDS} ok=1
  csb_tw_wait "${CSB_RUN_DIR}/raw/tw-cooldown.tsv" ||
    { ok=0 && log_warn "TIME_WAIT cool-down: gave up (TW_WAIT_MAX); the scenario runs only if the ports allow"; }
  csb_run_set tw_cooldown_ok "${ok}"
  csb_run_set tw_cooldown_s $((SECONDS - start))
  log_info "TIME_WAIT cool-down: waited $((SECONDS - start)) s"
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
