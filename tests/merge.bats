#!/usr/bin/env bats
# lib/wrk/report.lua's distribution line on the real wrk: every latency value
# with its count (read through LuaJIT's FFI, so it costs milliseconds even
# at thousands of connections), consistent with the hook's JSON line, and
# its prefix shared through `csb constants`. Loopback only, ~5 s.

load helpers

PORT=18977

setup_file() {
  cd "${BATS_TEST_DIRNAME}/.." || return 1
  make -s build >/dev/null
  OUT="$(mktemp -d "${BATS_TMPDIR:-/tmp}/csb-merge.XXXXXX")"
  export OUT
  bin/csb-server -addr 127.0.0.1 -port "${PORT}" >"${OUT}/server.log" 2>&1 &
  echo $! >"${OUT}/server.pid"
  wait_for "${OUT}/server.log" '"event":"listening"' 60
  local c start
  for c in 4 1000; do
    start=${EPOCHREALTIME/./}
    ( ulimit -n 4096 2>/dev/null; wrk -t2 -c"${c}" -d1s --latency -s lib/wrk/report.lua \
      "http://127.0.0.1:${PORT}/payload/1k" >"${OUT}/wrk-c${c}.txt" 2>&1 )
    echo $(( (${EPOCHREALTIME/./} - start) / 1000 )) >"${OUT}/wrk-c${c}.ms"
  done
}

teardown_file() {
  [[ -f "${OUT}/server.pid" ]] && kill "$(cat "${OUT}/server.pid")" 2>/dev/null
  rm -rf "${OUT}"
}

setup() { cd "${BATS_TEST_DIRNAME}/.." || return 1; }

# dist C: the JSON after the distribution line's prefix in wrk-cC.txt.
dist() { sed -n 's/^CSB_WRK_DIST //p' "${OUT}/wrk-c$1.txt"; }
json() { sed -n 's/^CSB_WRK_JSON //p' "${OUT}/wrk-c$1.txt"; }

@test "wrk's hook prints one complete distribution line after its JSON line" {
  local c
  for c in 4 1000; do
    [ "$(grep -c '^CSB_WRK_JSON ' "${OUT}/wrk-c${c}.txt")" -eq 1 ]
    [ "$(grep -c '^CSB_WRK_DIST ' "${OUT}/wrk-c${c}.txt")" -eq 1 ]
    [ "$(tail -n 1 "${OUT}/wrk-c${c}.txt" | cut -c1-13)" = "CSB_WRK_DIST " ]
    [ "$(dist "${c}" | jq -r '.schema + " " + .unit + " " + (.complete // true | tostring)')" = "csb.wrkdist/v1 us true" ]
  done
}

@test "the distribution agrees with the hook's JSON: min, max, increasing values" {
  local c
  for c in 4 1000; do
    [ "$(dist "${c}" | jq '.values[0][0]')" = "$(json "${c}" | jq '.latency_min_us')" ]
    [ "$(dist "${c}" | jq '.values[-1][0]')" = "$(json "${c}" | jq '.latency_max_us')" ]
    dist "${c}" | jq -e '[.values[] | .[0]] as $v | ($v | sort | unique) == $v and all(.values[]; .[1] > 0)' >/dev/null
    # At least every recorded request (wrk adds coordinated-omission samples).
    dist "${c}" | jq -e --argjson j "$(json "${c}")" '([.values[][1]] | add) >= ($j.requests - $j.errors.timeout)' >/dev/null
  done
}

@test "handing the distribution over is cheap: a 1 s wrk at 1000 connections exits within 3 s" {
  [ "$(cat "${OUT}/wrk-c1000.ms")" -lt 3000 ]
}

@test "csb constants shares the line's prefix with bash" {
  run bin/csb constants
  [ "$status" -eq 0 ]
  [[ "$output" == *"CSB_WRK_DIST_PREFIX=CSB_WRK_DIST "* ]]
  # shellcheck source=lib/constants.sh
  source lib/constants.sh
  [ "${CSB_WRK_DIST_PREFIX}" = "CSB_WRK_DIST " ]
}
