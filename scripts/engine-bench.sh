#!/usr/bin/env bash
# scripts/engine-bench.sh: measure connclient lowrate's epoll engine on this
# machine against wrk, and its ceiling against a trivial responder, keeping
# every raw output; the figures and the verdicts are computed from them by
# `connclient benchreport` (internal/enginebench).
#
# Usage: bash scripts/engine-bench.sh -o DIR [-c CONNS] [-l CONNS] [-d SECONDS] [-n REPS] [-r RPS] [-h]
#
#   -o DIR      directory for the raw outputs; must not exist yet (created)
#   -c CONNS    connections, the same for wrk and connclient (default 64)
#   -l CONNS    connections of the ceiling, sustain and lag runs (default
#               1024): a pool that does not run out when the responses wait
#               a few milliseconds to be read. A request that finds every
#               connection busy is counted apart (requests_late_pool_busy);
#               its wait is in sender_lag, on which the lag verdict is, and
#               not in engine_lag
#   -d SECONDS  length of each run (default 10)
#   -n REPS     repetitions (default 3)
#   -r RPS      connclient's rate at the server's knee (default: the rate
#               wrk achieved in the same repetition, connclient benchrate)
#
# Builds bin/ (make build), then for each repetition DIR/rep-N, servers
# pinned to CPU 0 and clients to CPU 1 (taskset), each client under
# /usr/bin/time -f 'user_s=%U sys_s=%S wall_s=%e':
#   wrk.out, wrk.time           wrk -t1 -cCONNS -dSECONDS -s lib/wrk/report.lua
#                               against bin/csb-server, /payload/1k
#   engine.json, engine.time    connclient lowrate -conns CONNS at twice
#                               wrk's rate (-drain 0s), same server and path:
#                               every connection busy, the server saturated,
#                               as with wrk: the requests per CPU-second
#                               compared with wrk's
#   knee.json, knee.time        connclient lowrate -conns CONNS -rps RPS
#                               (-drain 1s): the open loop at the knee
#   ceiling.json, ceiling.time  connclient lowrate -conns LAG_CONNS
#                               -rps 10000000 -drain 0s
#                               against connclient responder -spin (1 KiB
#                               bodies; it polls CPU 0 without sleeping, so
#                               it is never the side waiting to be woken):
#                               as fast as it goes, every connection busy:
#                               the engine's closed-loop ceiling
#   sustain-N.json, .time       connclient lowrate -conns LAG_CONNS -drain 0s
#                               at 0.95, 0.9, 0.85, ... of that ceiling
#                               (connclient.BenchSustainFractions), half as
#                               long as -d, until one keeps its schedule
#                               (achieved >= 99 % of its rate, sender lag
#                               p99 <= 10 ms: benchrate -next): the open-loop
#                               ceiling, the highest rate it sends on time
#   lag.json, lag.time          connclient lowrate -conns LAG_CONNS at 0.8 of
#                               the open-loop ceiling (connclient benchrate),
#                               same connections and responder: the sender
#                               lag there
#   *.stat0, *.stat1            /proc/stat before and after each client: how
#                               busy each CPU was, so the load of other work
#                               on the client's CPU is measured, not guessed
#   *.log                       each client's stderr; server.json and
#                               responder.json the servers' event lines
# Then DIR/report.json (connclient benchreport -dir DIR: per repetition,
# min/median/max, verdicts) is written and its summary printed.
#
# Requires: go, make, wrk, jq, taskset, /usr/bin/time, CPUs 0 and 1. All
# traffic stays on 127.0.0.1. Every process it starts is stopped by its PID
# at exit (also on error or SIGINT), by lib/exit.sh's one registry.
#
# Example: bash scripts/engine-bench.sh -o /tmp/engine-bench -c 64 -d 10 -n 3

# shellcheck source=lib/init.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/init.sh"

usage() { sed -n '2,/^$/{s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"; }

ROOT=${CSB_ROOT}
BIN="${ROOT}/bin"
TIME_FORMAT='user_s=%U sys_s=%S wall_s=%e' # connclient.TimeFormat
OUT="" CONNS=64 LAG_CONNS=1024 SECS=10 REPS=3 RPS=""
declare -a PIDS=()

# cleanup stops every process still running that this script started.
cleanup() {
  local pid
  for pid in "${PIDS[@]}"; do
    if kill -0 "${pid}" 2>/dev/null; then
      kill -TERM "${pid}" 2>/dev/null || true
      wait "${pid}" 2>/dev/null || true
    fi
  done
}

# start_bg OUT ERR CMD...: CMD in the background, stdout to OUT, stderr to
# ERR; its PID goes to PIDS and to LAST_PID.
start_bg() {
  local out=$1 err=$2
  shift 2
  "$@" >"${out}" 2>"${err}" &
  LAST_PID=$!
  PIDS+=("${LAST_PID}")
}

# stop_pid PID: stop a process this script started (its child: the PID
# cannot have been reused before it is waited for).
stop_pid() {
  kill -TERM "$1" 2>/dev/null || true
  wait "$1" 2>/dev/null || true
}

# listening_addr FILE PID: the addr of the {"event":"listening"} line that
# the server PID writes to FILE, waiting up to 10 s.
listening_addr() {
  local file=$1 pid=$2 i
  for ((i = 0; i < 100; i++)); do
    if grep -q '"event":"listening"' "${file}" 2>/dev/null; then
      jq -r 'select(.event == "listening") | .addr' "${file}"
      return 0
    fi
    kill -0 "${pid}" 2>/dev/null || break
    sleep 0.1
  done
  printf 'error: %s: no listening line (server exited or took over 10 s)\n' "${file}" >&2
  return 1
}

# timed CPU NAME DIR CMD...: CMD pinned to CPU under /usr/bin/time, stdout
# to DIR/NAME.out|json, stderr to DIR/NAME.log, times to DIR/NAME.time,
# /proc/stat around it to DIR/NAME.stat0 and .stat1.
timed() {
  local cpu=$1 name=$2 dir=$3 out
  shift 3
  out="${dir}/${name}.json"
  [[ "${name}" != wrk ]] || out="${dir}/${name}.out"
  printf '  %s: ' "${name}" >&2
  printf '%q ' "$@" >&2
  printf '\n' >&2
  cp /proc/stat "${dir}/${name}.stat0"
  taskset -c "${cpu}" /usr/bin/time -f "${TIME_FORMAT}" -o "${dir}/${name}.time" "$@" >"${out}" 2>"${dir}/${name}.log"
  cp /proc/stat "${dir}/${name}.stat1"
}

# sustain DIR ADDR: the sustain runs of DIR against ADDR, at the falling
# fractions of the ceiling that `connclient benchrate -next` gives, until
# one keeps its schedule or none is left; prints the lag run's rate.
sustain() {
  local dir=$1 addr=$2 k=0 what rate half=$(((SECS + 1) / 2))
  while read -r what rate < <("${BIN}/connclient" benchrate -next "${dir}") && [[ "${what}" == sustain ]]; do
    k=$((k + 1))
    timed 1 "sustain-${k}" "${dir}" "${BIN}/connclient" lowrate -target "${addr}" -conns "${LAG_CONNS}" -rps "${rate}" \
      -duration "${half}s" -drain 0s -path /payload/1k
  done
  [[ "${what:-}" == lag ]] || die "connclient benchrate -next ${dir} failed" 1
  printf '%s\n' "${rate}"
}

# repetition DIR: one repetition's runs into DIR.
repetition() {
  local dir=$1 addr pid rate
  mkdir -p "${dir}"
  start_bg "${dir}/server.json" "${dir}/server.log" taskset -c 0 "${BIN}/csb-server" -addr 127.0.0.1 -port 0 -sizes 1k
  pid=${LAST_PID}
  addr=$(listening_addr "${dir}/server.json" "${pid}")
  timed 1 wrk "${dir}" wrk -t1 -c"${CONNS}" -d"${SECS}s" --latency -s "${ROOT}/lib/wrk/report.lua" "http://${addr}/payload/1k"
  rate=$("${BIN}/connclient" benchrate -wrk "${dir}/wrk.out" -scale 2)
  timed 1 engine "${dir}" "${BIN}/connclient" lowrate -target "${addr}" -conns "${CONNS}" -rps "${rate}" \
    -duration "${SECS}s" -drain 0s -path /payload/1k
  rate=${RPS:-$("${BIN}/connclient" benchrate -wrk "${dir}/wrk.out")}
  timed 1 knee "${dir}" "${BIN}/connclient" lowrate -target "${addr}" -conns "${CONNS}" -rps "${rate}" \
    -duration "${SECS}s" -drain 1s -path /payload/1k
  stop_pid "${pid}"

  start_bg "${dir}/responder.json" "${dir}/responder.log" taskset -c 0 "${BIN}/connclient" responder -listen 127.0.0.1:0 -size 1024 -spin
  pid=${LAST_PID}
  addr=$(listening_addr "${dir}/responder.json" "${pid}")
  timed 1 ceiling "${dir}" "${BIN}/connclient" lowrate -target "${addr}" -conns "${LAG_CONNS}" -rps 10000000 \
    -duration "${SECS}s" -drain 0s -path /payload/1k
  rate=$(sustain "${dir}" "${addr}")
  timed 1 lag "${dir}" "${BIN}/connclient" lowrate -target "${addr}" -conns "${LAG_CONNS}" -rps "${rate}" \
    -duration "${SECS}s" -drain 1s -path /payload/1k
  stop_pid "${pid}"
}

main() {
  local opt i
  while getopts ':o:c:l:d:n:r:h' opt; do
    case "${opt}" in
      o) OUT=${OPTARG} ;;
      c) CONNS=${OPTARG} ;;
      l) LAG_CONNS=${OPTARG} ;;
      d) SECS=${OPTARG} ;;
      n) REPS=${OPTARG} ;;
      r) RPS=${OPTARG} ;;
      h) usage; exit 0 ;;
      :) usage_error "-${OPTARG} needs a value" ;;
      *) usage_error "unknown option -${OPTARG}" ;;
    esac
  done
  shift $((OPTIND - 1))
  (($# == 0)) || usage_error "unexpected argument $1"
  [[ -n "${OUT}" ]] || usage_error "-o DIR is required (where the raw outputs go)"
  [[ ! -e "${OUT}" ]] || usage_error "-o ${OUT} exists: a run directory is never reused; give a new one"
  [[ "${CONNS}" =~ ^[1-9][0-9]{0,5}$ ]] || usage_error "-c ${CONNS}: want connections, 1 to 999999"
  [[ "${LAG_CONNS}" =~ ^[1-9][0-9]{0,5}$ ]] || usage_error "-l ${LAG_CONNS}: want connections, 1 to 999999"
  [[ "${SECS}" =~ ^[1-9][0-9]{0,3}$ ]] || usage_error "-d ${SECS}: want seconds, 1 to 9999"
  [[ "${REPS}" =~ ^[1-9][0-9]?$ ]] || usage_error "-n ${REPS}: want repetitions, 1 to 99"
  [[ -z "${RPS}" || "${RPS}" =~ ^[1-9][0-9]{0,7}$ ]] || usage_error "-r ${RPS}: want requests per second, 1 to 99999999"
  for i in go make wrk jq taskset /usr/bin/time; do
    command -v "${i}" >/dev/null || usage_error "${i} is not installed (bash scripts/setup.sh)"
  done
  taskset -c 0,1 true 2>/dev/null || usage_error "CPUs 0 and 1 are not both available to this shell (taskset -c 0,1)"

  csb_exit_add cleanup

  make -C "${ROOT}" --no-print-directory build >&2
  mkdir -p "${OUT}"
  {
    printf 'argv:'
    printf ' %q' "$0" "$@"
    printf '\nstarted_at: %s\ngit: %s%s\nkernel: %s\ncpus: %s\nwrk: %s\n' "$(date -u +%FT%TZ)" \
      "$(git -C "${ROOT}" rev-parse HEAD 2>/dev/null || echo unknown)" \
      "$(git -C "${ROOT}" diff --quiet HEAD 2>/dev/null || echo ' (dirty)')" \
      "$(uname -r)" "$(nproc)" "$(wrk -v 2>&1 | head -n1 || true)"
    printf 'settings: conns=%s lag_conns=%s seconds=%s reps=%s rps=%s\n' "${CONNS}" "${LAG_CONNS}" "${SECS}" "${REPS}" "${RPS:-wrk}"
  } >"${OUT}/meta.txt"
  for ((i = 1; i <= REPS; i++)); do
    printf 'repetition %d of %d\n' "${i}" "${REPS}" >&2
    repetition "${OUT}/rep-${i}"
  done
  "${BIN}/connclient" benchreport -dir "${OUT}" >"${OUT}/report.json"
  jq '{ratio, wrk_requests_per_cpu_s, engine_requests_per_cpu_s, knee_ratio, knee_sender_lag_p99_ms, ceiling_requests_per_s,
      ceiling_requests_per_cpu_s, ceiling_cpu_utilization, ceiling_loop_cpu_utilization, sustained_requests_per_s,
      lag_run_requests_per_s, lag_run_fraction_of_closed_ceiling,
      lag_run_sender_lag_p99_ms, lag_run_engine_lag_p99_ms, lag_run_client_cpu_other_s, ratio_ok, lag_ok, notes}' "${OUT}/report.json"
  printf 'raw outputs and report.json in %s\n' "${OUT}" >&2
}

main "$@"
