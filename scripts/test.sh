#!/usr/bin/env bash
# scripts/test.sh: everything `make test` checks, within its budget on two
# cores: lint, the Go tests, the generated files and every bats file.
#
# Usage: bash scripts/test.sh [-h]
#
# First the Go tests, alone on the machine: some measure against a known
# answer (h2load against a server of known capacity, the engine's round
# robin) and miss it beside the lanes' load. Most of a bats run waits (on
# cells, ramps, TIME_WAIT, ssh retries), so then three lanes run at once, each on a netns lab of its own (CSB_LAB_ID<id>1,
# <id>2 and <id>3: namespaces, sshd, lock and results apart), with the
# files that check what happened but time nothing:
#   lane 1: lint, check-generated (most of the CPU), then Phase 1,
#           TLS, the rehearsal and HTTP/2
#   lane 2: isolation, the demo, fault paths, the library, reports,
#           Phases 2 and 4, configuration, contracts, merges
#   lane 3: several clients, servers under test (their "within noise" is a
#           factor of two), faults, the interleaved A/B
# (balanced on a fresh clone's timings: a file takes up to 1.6 times as
# long beside two other lanes as beside one). Then, alone on the machine,
# the files whose assertions depend on the CPUs being quiet (known rates,
# trust marks, machine-wide kernel counts), on the lab of CSB_LAB_ID
# itself. Each lane's output is printed when it ends; the exit status is 1
# when any part failed. Labs the lanes brought up are taken down. The last
# two lines count the bats tests (tests/tap.bash), those skipped for want
# of root apart, so that a green run without root is not read as a full
# one:
#   tests: 402 passed, 0 failed, 37 skipped
#   == make test: 1050 s, ok; 439 tests, 37 skipped for want of root

set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
if [[ "${1:-}" == -h || "${1:-}" == --help ]]; then
  sed -n '2,/^$/{s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"
  exit 0
fi
base=${CSB_LAB_ID:-csb}
if [[ ! "${base}" =~ ^[a-z][a-z0-9]{0,6}$ ]]; then
  echo "error: CSB_LAB_ID=${base}: expected a lower-case name of at most 7 characters here (each lane adds a digit)" >&2
  exit 2
fi
LANE1=(tests/phase1.bats tests/tls.bats tests/rehearsal.bats tests/http2.bats)
LANE2=(tests/isolation.bats tests/demo.bats tests/faults-paths.bats tests/lib.bats tests/report.bats tests/phase2.bats
  tests/phase4.bats tests/config.bats tests/contracts.bats tests/merge.bats)
LANE3=(tests/multiclient.bats tests/server.bats tests/faults.bats tests/ab.bats)
QUIET=(tests/phase0.bats tests/phase3.bats tests/c100k.bats tests/trust.bats tests/capacity.bats)
# Every bats file is in exactly one group.
listed=$(printf '%s\n' "${LANE1[@]}" "${LANE2[@]}" "${LANE3[@]}" "${QUIET[@]}" | sort)
all=$(printf '%s\n' tests/*.bats | sort)
if [[ "${listed}" != "${all}" ]]; then
  echo "error: scripts/test.sh: the bats files and its groups differ: $(diff <(echo "${listed}") <(echo "${all}") | grep '^[<>]' | tr '\n' ' ')" >&2
  exit 2
fi

# shellcheck source=tests/tap.bash
source tests/tap.bash

bats_run() { bats --timing --print-output-on-failure "$@"; }
was_up() { CSB_LAB_ID=$1 lab/netns.sh status >/dev/null 2>&1 || CLIENTS=2 CSB_LAB_ID=$1 lab/netns.sh status >/dev/null 2>&1; }

make build >/dev/null || exit 1
out=$(mktemp -d "${TMPDIR:-/tmp}/csb-test.XXXXXX") || exit 1
declare -A up=()
for id in "" 1 2 3; do
  up[x${id}]=0
  was_up "${base}${id}" && up[x${id}]=1
done
start=${SECONDS}
# ended NAME RC: a lane's last line, with how long it took.
ended() { echo "== $1 ended after $((SECONDS - start)) s ($( (($2)) && echo FAILED || echo ok))"; return "$2"; }
# lane ID FILE...: lane ID's files on lab CSB_LAB_ID<id>ID (lane 1 after
# lint and the generated files), its output in out/laneID.
lane() {
  local id=$1
  shift
  ( ((id != 1)) || { make lint && make check-generated; } &&
    CSB_LAB_ID=${base}${id} bats_run "$@"
    ended "lane ${id}" $?) >"${out}/lane${id}" 2>&1
}
echo "== go test, alone"
go_rc=0
make test-go || go_rc=1
ended "go test" "${go_rc}"
lane 1 "${LANE1[@]}" &
pids=($!)
lane 2 "${LANE2[@]}" &
pids+=($!)
lane 3 "${LANE3[@]}" &
pids+=($!)
heads=("lint, check-generated; ${LANE1[*]}" "${LANE2[*]}" "${LANE3[*]}")
rc=${go_rc}
for id in 1 2 3; do
  wait "${pids[id - 1]}" || rc=1
  echo "== lane ${id}: ${heads[id - 1]}"
  cat "${out}/lane${id}"
done
for id in 1 2 3; do
  [[ "${up[x${id}]}" == 0 ]] || continue
  CLIENTS=2 CSB_LAB_ID=${base}${id} lab/netns.sh down >/dev/null 2>&1 || true
  CSB_LAB_ID=${base}${id} lab/netns.sh down >/dev/null 2>&1 || true
done
echo "== alone: ${QUIET[*]}"
# (Through tee, bats prints TAP here too, as in the lanes: the text counted
# is the text shown.)
bats_run "${QUIET[@]}" | tee "${out}/alone"
((PIPESTATUS[0] == 0)) || rc=1
if [[ "${up[x]}" == 0 ]]; then
  CLIENTS=2 lab/netns.sh down >/dev/null 2>&1 || true
  lab/netns.sh down >/dev/null 2>&1 || true
fi
cat "${out}"/lane{1,2,3} "${out}/alone" | tap_lines $((SECONDS - start)) "$( ((rc)) && echo FAILED || echo ok)"
rm -rf "${out}"
exit "${rc}"
