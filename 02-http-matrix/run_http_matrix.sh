#!/usr/bin/env bash
# Phase 2: what payload and concurrency do to RPS, CPU and tail latency (oha).
#
# Usage: bash 02-http-matrix/run_http_matrix.sh [-h] [-c FILE] [-l LAB] [-p PROFILE]
#                                               [-n NAME] [-r RESULTS_ROOT] [-s KEY=VALUE]...
#
# The server (bin/csb-server, one process, bound to SERVER_IP) serves the
# PAYLOADS sizes. One cell per payload x concurrency, named <size>-c<N>
# (<size>-c<N>-r<k> with REPEAT > 1), each a closed loop of N connections
# for DURATION seconds against /payload/<size>:
#   oha  oha --no-tui --output-format json (-j on older oha) -z <D>s -c N
#            --wait-ongoing-requests-after-deadline URL    -> raw/<cell>.json
#   wrk  wrk -t min(THREADS,N) -c N -d <D>s --latency -s lib/wrk/report.lua URL
#                                                            -> raw/<cell>.txt
# LOADGEN=auto (default) runs oha when it is installed, else wrk, and then the
# summary and the report say in their first lines that wrk stood in for oha.
# Before each cell WARMUP seconds of the same load run unrecorded (output in
# raw/warmup/). REPEAT=N runs every cell N times, all in one shuffled order;
# the report shows the median and the min-max.
#
# Before the matrix the client's fd limit is checked against the largest
# concurrency (+64 spare) and the soft limit raised when the hard one allows;
# a cell that still cannot get its fds is refused (cells.tsv: refused, with
# the reason), never run half-broken. The server's net.core.somaxconn is
# recorded against the largest concurrency.
#
# Profiles (each setting below overrides its part):
#   smoke  1k,4k x 16,64 (the matrix's top-left corner), 2 s per cell, 1 s warm-up
#   quick  1k,10k,100k x 16,64,256, 5 s per cell, 1 s warm-up
#   full   1k,4k,10k,100k x 16,64,128,256,512,1024, 30 s per cell, 5 s warm-up
#          (the seed's experiment)
#
# Settings of this phase (lab.env, environment or -s KEY=VALUE):
#   PAYLOADS      sizes as the server names them (default: the profile's)
#   CONCURRENCY   connections per cell, positive integers (default: the profile's)
#   LOADGEN       auto | oha | wrk (default auto)
#   THREADS       wrk threads when wrk runs (empty: this host's CPUs)
#   REPEAT        runs of every cell, shuffled (default 1)
#   WARMUP        seconds of unrecorded load per cell, 0 for none (empty: the profile's)
#   DURATION      seconds per cell (empty: the profile's)
#   SERVER        the server under test: csb (default, the reference server),
#                 nginx, cmd (SERVER_CMD) or url (already running); see README
#   PAYLOAD_PATHS SIZE=PATH,... on that server (default /payload/<size>)
#   SCHEME        http (default) or https: a CA and a certificate made for the
#                 run (TLS_KEY_TYPE, TLS_TICKETS); wrk and oha verify nothing
#
# With CLIENTS=N >= 2 (netns: N client namespaces behind a switch; ssh:
# CLIENT_HOSTS), each cell's concurrency is split across the clients (the
# first CONCURRENCY % N get one more) and every client's load generator is
# started at one due time by `csb start-at`: raw/<label>/<cell>.<ext> and
# <cell>.timing.json per client; rates are summed over the overlap, latency
# percentiles come from the merged distribution (csb summarize).
#
# Options:
#   -c FILE         config file (default: lab.env at the repo root, if any)
#   -l LAB          local | netns | ssh
#   -p PROFILE      smoke | quick | full (default full)
#   -n NAME         run directory suffix (default http-matrix)
#   -r DIR          results root (runs go to DIR/02-http-matrix/<run>/)
#   -s KEY=VALUE    any setting; flags win over the environment, which wins
#                   over the config file
#   -h              this help
#
# Requires: oha (or wrk), curl, sysstat, iproute2 and Go on the client;
# sysstat and iproute2 on the server. LAB=netns needs root. Run Phase 0 first
# in the same lab (and results root) to compare against the path's ceiling.
# Loads: lib/init.sh. Ends with "results: <run directory>".
#
# Examples:
#   bash 02-http-matrix/run_http_matrix.sh -l local -p smoke
#   sudo LAB=netns PROFILE=quick bash 02-http-matrix/run_http_matrix.sh
#   bash 02-http-matrix/run_http_matrix.sh -s PAYLOADS=1k,100k -s CONCURRENCY=64,1024 -s REPEAT=3

# shellcheck source=lib/init.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/init.sh"

usage() { sed -n '2,/^$/{s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"; }

PHASE=02-http-matrix

# PAYLOADS and CONCURRENCY default to the full matrix; smoke and quick take
# their part of it unless the setting was given (check_settings).
csb_config_declare PAYLOADS 1k,4k,10k,100k sizes "Phase 2: payload sizes of the matrix (default: the profile's)"
csb_config_declare CONCURRENCY 16,64,128,256,512,1024 posints "Phase 2: connections per cell (default: the profile's)"
csb_config_declare LOADGEN auto "enum:auto|oha|wrk" "Phase 2: load generator; auto = oha when installed, else wrk"
csb_config_declare THREADS "" posint_or_empty "wrk threads when wrk runs the matrix (empty: this host's CPUs)"
csb_config_declare REPEAT 1 posint "Phase 2: runs of every cell, in one shuffled order"
csb_config_declare WARMUP "" uint_or_empty "seconds of unrecorded load before each cell, 0 for none (empty: the profile's)"

# check_settings: what csb_config_load cannot check alone. Exits 2.
check_settings() {
  if [[ "${CSB_ORIGIN[PAYLOADS]}" == default ]]; then
    PAYLOADS=$(csb_profile 1k,4k 1k,10k,100k "${PAYLOADS}")
  fi
  if [[ "${CSB_ORIGIN[CONCURRENCY]}" == default ]]; then
    CONCURRENCY=$(csb_profile 16,64 16,64,256 "${CONCURRENCY}")
  fi
  csb_payloads_check PAYLOADS "${PAYLOADS}" || exit 2
  local -A seen=()
  local -a concs
  local n
  IFS=, read -r -a concs <<<"${CONCURRENCY}"
  for n in "${concs[@]}"; do
    [[ -z "${seen[$((10#${n}))]+x}" ]] || usage_error "CONCURRENCY=${CONCURRENCY}: ${n} is listed twice"
    seen[$((10#${n}))]=1
  done
  if [[ -n "${DURATION}" ]] && ((10#${DURATION} == 0)); then
    usage_error "DURATION=0: a cell needs at least 1 second (empty: the profile's)"
  fi
  REPEAT=$((10#${REPEAT}))
  csb_loadgen_resolve
}

# matrix_cell SIZE CONCURRENCY REP SECONDS WARMUP: one cell of the matrix.
matrix_cell() {
  local size=$1 conc=$((10#$2)) rep=$3 secs=$4 warmup=$5
  local name="${size}-c${conc}" url threads=""
  ((REPEAT > 1)) && name+="-r${rep}"
  url=$(csb_payload_url "${size}")
  local -a cmd params=("payload=${size}" "payload_bytes=$(csb_size_bytes "${size}")" "concurrency=${conc}" "rep=${rep}"
    "loadgen=${CSB_LOADGEN}")
  if [[ "${CSB_LOADGEN}" == wrk ]]; then
    threads=${THREADS:-$(nproc)}
    ((threads <= conc)) || threads=${conc}
    params+=("threads=${threads}")
  fi
  params+=("duration_s=${secs}" "warmup_s=${warmup}")

  local refusal
  if refusal=$(csb_fd_refusal "${conc}"); then
    csb_cell_begin "${name}" "${params[@]}"
    csb_cell_end refused "${refusal}"
    return 0
  fi
  local ext=txt
  [[ "${CSB_LOADGEN}" == oha ]] && ext=json
  if ((warmup > 0)); then
    loadgen_cmd cmd "${threads}" "${conc}" "${warmup}" "${url}"
    local w="${CSB_RUN_DIR}/raw/warmup/${name}.${ext}" werr="${CSB_RUN_DIR}/raw/warmup/${name}.stderr"
    [[ "${CSB_LOADGEN}" == wrk ]] && werr=${w}
    csb_loadgen_exec "${w}" "${werr}" "warmup-${name}" "${cmd[@]}" ||
      log_warn "warm-up ${CSB_LOADGEN} exited non-zero; see raw/warmup/${name}.*"
  fi
  loadgen_cmd cmd "${threads}" "${conc}" "${secs}" "${url}"
  local raw="${CSB_RUN_DIR}/raw/${name}.${ext}" err="${CSB_RUN_DIR}/logs/${name}.stderr" rc=0
  [[ "${CSB_LOADGEN}" == wrk ]] && err=${raw}
  csb_cell_begin "${name}" "${params[@]}"
  csb_loadgen_exec "${raw}" "${err}" "loadgen-${name}" "${cmd[@]}" || rc=$?
  if ((rc != 0)); then
    csb_cell_end failed "${CSB_LOADGEN} exited ${rc}; see ${raw#"${CSB_RUN_DIR}/"} and ${err#"${CSB_RUN_DIR}/"}"
  elif [[ "${CSB_LOADGEN}" == wrk ]] && ! grep -q "^${CSB_WRK_JSON_PREFIX}" "${raw}"; then
    csb_cell_end failed "wrk printed no ${CSB_WRK_JSON_PREFIX% } line; see raw/${name}.txt"
  elif [[ ! -s "${raw}" ]]; then
    csb_cell_end failed "${CSB_LOADGEN} printed nothing; see ${err#"${CSB_RUN_DIR}/"}"
  else
    csb_cell_end ok
  fi
}

# loadgen_cmd ARRAY THREADS CONNECTIONS SECONDS URL: the resolved tool's command.
# matrix_build K ARRAY THREADS CONCURRENCY SECONDS URL: client K's load
# generator with its share of the connections (csb_clients_cell's builder).
matrix_build() {
  local k=$1 threads=$3 conc secs=$5 url=$6 i script
  conc=$(csb_clients_split "$4" "${k}")
  # shellcheck disable=SC2178 # a nameref to the caller's array
  local -n _m=$2
  loadgen_cmd "$2" "${threads:-1}" "${conc}" "${secs}" "${url}"
  script=$(csb_client_wrk_script "${k}")
  for i in "${!_m[@]}"; do
    [[ "${_m[i]}" != "${CSB_LIB}/wrk/report.lua" ]] || _m[i]=${script}
  done
}

# matrix_cell_multi SIZE CONCURRENCY REP SECONDS WARMUP: one cell on every client.
matrix_cell_multi() {
  local size=$1 conc=$((10#$2)) rep=$3 secs=$4 warmup=$5
  local name="${size}-c${conc}" url threads="" k label ck
  ((REPEAT > 1)) && name+="-r${rep}"
  url=$(csb_payload_url "${size}")
  local -a params=("payload=${size}" "payload_bytes=$(csb_size_bytes "${size}")" "concurrency=${conc}" "rep=${rep}"
    "loadgen=${CSB_LOADGEN}")
  if [[ "${CSB_LOADGEN}" == wrk ]]; then
    threads=${THREADS:-$(nproc)}
    params+=("threads=${threads}")
  fi
  params+=("duration_s=${secs}" "warmup_s=${warmup}" "clients=${CSB_CLIENTS_N}" "connections=${conc}")
  for ((k = 1; k <= CSB_CLIENTS_N; k++)); do
    label=${CSB_CL_LABEL[k]} ck=$(csb_clients_split "${conc}" "${k}")
    params+=("${label}.connections=${ck}")
  done
  local refusal
  if refusal=$(csb_fd_refusal "$(csb_clients_split "${conc}" 1)"); then
    csb_cell_begin "${name}" "${params[@]}"
    csb_cell_end refused "${refusal}"
    return 0
  fi
  if ((conc < CSB_CLIENTS_N)); then
    csb_cell_begin "${name}" "${params[@]}"
    csb_cell_end refused "concurrency ${conc} cannot be split across ${CSB_CLIENTS_N} clients (at least one connection each)"
    return 0
  fi
  local ext=txt errmode=same
  [[ "${CSB_LOADGEN}" == oha ]] && ext=json errmode=apart
  if ((warmup > 0)); then
    csb_clients_cell "${name}" warmup/ "${ext}" "${errmode}" "warmup-${name}" matrix_build "${threads}" "${conc}" "${warmup}" "${url}" ||
      log_warn "warm-up ${CSB_LOADGEN} failed: $(csb_clients_failures); see raw/warmup/<client>/${name}.*"
  fi
  csb_cell_begin "${name}" "${params[@]}"
  if ! csb_clients_cell "${name}" "" "${ext}" "${errmode}" "loadgen-${name}" matrix_build "${threads}" "${conc}" "${secs}" "${url}"; then
    csb_cell_end failed "${CSB_LOADGEN} failed: $(csb_clients_failures); see raw/<client>/${name}.${ext}"
    return 0
  fi
  local bad="" raw
  for ((k = 1; k <= CSB_CLIENTS_N; k++)); do
    raw="raw/${CSB_CL_LABEL[k]}/${name}.${ext}"
    if [[ ! -s "${CSB_RUN_DIR}/${raw}" ]]; then
      bad+="${raw} is empty; "
    elif [[ "${CSB_LOADGEN}" == wrk ]] && ! grep -q "^${CSB_WRK_JSON_PREFIX}" "${CSB_RUN_DIR}/${raw}"; then
      bad+="${raw} has no ${CSB_WRK_JSON_PREFIX% } line; "
    fi
  done
  if [[ -n "${bad}" ]]; then
    csb_cell_end failed "${bad%; }"
  else
    csb_cell_end ok
  fi
}

loadgen_cmd() {
  if [[ "${CSB_LOADGEN}" == oha ]]; then
    csb_oha_cmd "$1" "$3" "$4" "$5"
  else
    csb_wrk_cmd "$1" "$2" "$3" "$4" "$5"
  fi
}

# record_somaxconn MAX: the server's listen backlog limit against MAX.
record_somaxconn() {
  local max=$1 somaxconn
  somaxconn=$(on_server sysctl -n net.core.somaxconn 2>/dev/null) || somaxconn=""
  csb_run_set server_somaxconn "${somaxconn}"
  if [[ "${somaxconn}" =~ ^[0-9]+$ ]] && ((somaxconn < max)); then
    log_warn "server net.core.somaxconn=${somaxconn} < ${max} connections: a burst of connects can overflow the listen backlog (see ListenOverflows per cell)"
  else
    log_info "server net.core.somaxconn=${somaxconn:-unknown} for up to ${max} connections"
  fi
}

main() {
  csb_config_load "$@"
  check_settings
  csb_lab_enter "${BASH_SOURCE[0]}" "$@"
  local duration warmup max size conc rep
  duration=${DURATION:-$(csb_profile 2 5 30)}
  warmup=${WARMUP:-$(csb_profile 1 1 5)}
  max=$(csb_list_max "${CONCURRENCY}")

  csb_build_all
  csb_ssh_open
  csb_preflight_tools "${CSB_LOADGEN} curl sar mpstat pidstat sadf nstat ip ss" "sar mpstat pidstat sadf nstat ip ss"
  csb_preflight_route
  [[ "${CSB_LOADGEN}" == oha ]] && csb_oha_probe
  csb_run_begin "${PHASE}" http-matrix "$@"
  csb_run_set phase0_results "$(csb_results_root 00-iperf3)"
  csb_run_set payloads "${PAYLOADS}"
  csb_run_set concurrency "${CONCURRENCY}"
  csb_run_set loadgen "${CSB_LOADGEN}"
  csb_run_set loadgen_standin "${CSB_LOADGEN_STANDIN}"
  if ((CSB_LOADGEN_STANDIN)); then
    log_warn "oha is not installed on this host: wrk (with lib/wrk/report.lua) stands in for oha (LOADGEN=auto)"
  fi
  [[ "${CSB_LOADGEN}" == oha ]] && csb_run_set oha_flags "${CSB_OHA_JSON[*]} ${CSB_OHA_WAIT}"
  mkdir -p "${CSB_RUN_DIR}/raw/warmup" "${CSB_RUN_DIR}/raw/headers"
  csb_fd_prepare "${max}"
  csb_capture_env
  csb_monitors_start
  csb_server_deploy
  csb_http_start csb-server "${PAYLOADS}" 1
  record_somaxconn "${max}"

  local -a sizes concs cells=()
  IFS=, read -r -a sizes <<<"${PAYLOADS}"
  IFS=, read -r -a concs <<<"${CONCURRENCY}"
  for size in "${sizes[@]}"; do
    csb_capture_response "${size}" "${CSB_RUN_DIR}/raw/headers/${size}.txt" ||
      log_warn "could not fetch one /payload/${size} response with curl"
    for conc in "${concs[@]}"; do
      for ((rep = 1; rep <= REPEAT; rep++)); do
        cells+=("${size} ${conc} ${rep}")
      done
    done
  done
  if ((REPEAT > 1)); then
    mapfile -t cells < <(printf '%s\n' "${cells[@]}" | shuf)
    log_info "REPEAT=${REPEAT}: ${#cells[@]} cells in shuffled order (cells.tsv keeps it)"
  fi
  local cell
  for cell in "${cells[@]}"; do
    if ((CSB_CLIENTS_N > 1)); then
      # shellcheck disable=SC2086 # a cell is "size concurrency rep"
      matrix_cell_multi ${cell} "${duration}" "${warmup}"
    else
      # shellcheck disable=SC2086 # a cell is "size concurrency rep"
      matrix_cell ${cell} "${duration}" "${warmup}"
    fi
  done
  csb_http_stop
}

main "$@"
