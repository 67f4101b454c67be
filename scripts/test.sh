#!/usr/bin/env bash
# scripts/test.sh: everything `make test` checks, within its budget on two
# cores: lint, the Go tests, the generated files and every bats file.
#
# Usage: bash scripts/test.sh [-h]
#
# Most of a bats run waits (on cells, ramps, TIME_WAIT, ssh retries), so two
# lanes run at once, each on a netns lab of its own (CSB_LAB_ID<id>1 and
# <id>2: namespaces, sshd, lock and results apart):
#   lane 1: lint, go test, check-generated, then the files that check what
#           happened but time nothing (several clients, Phase 1, TLS)
#   lane 2: faults, isolation, the library, reports, configuration, Phases 2, 4
# Then, alone on the machine, the files whose assertions depend on the
# CPUs being quiet (known rates, "within noise", trust marks), on the lab of
# CSB_LAB_ID itself. Each lane's output is printed when it ends; the exit
# status is 1 when any part failed. Labs the lanes brought up are taken down.
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
LANE1=(tests/multiclient.bats tests/phase1.bats tests/tls.bats)
LANE2=(tests/isolation.bats tests/demo.bats tests/faults.bats tests/faults-paths.bats tests/lib.bats tests/report.bats tests/phase2.bats tests/phase4.bats
  tests/config.bats tests/contracts.bats tests/merge.bats)
QUIET=(tests/phase0.bats tests/phase3.bats tests/server.bats tests/rehearsal.bats
  tests/c100k.bats tests/trust.bats tests/capacity.bats)
# Every bats file is in exactly one group.
listed=$(printf '%s\n' "${LANE1[@]}" "${LANE2[@]}" "${QUIET[@]}" | sort)
all=$(printf '%s\n' tests/*.bats | sort)
if [[ "${listed}" != "${all}" ]]; then
  echo "error: scripts/test.sh: the bats files and its groups differ: $(diff <(echo "${listed}") <(echo "${all}") | grep '^[<>]' | tr '\n' ' ')" >&2
  exit 2
fi

bats_run() { bats --timing --print-output-on-failure "$@"; }
was_up() { CSB_LAB_ID=$1 lab/netns.sh status >/dev/null 2>&1 || CLIENTS=2 CSB_LAB_ID=$1 lab/netns.sh status >/dev/null 2>&1; }

make build >/dev/null || exit 1
out=$(mktemp -d "${TMPDIR:-/tmp}/csb-test.XXXXXX") || exit 1
up0=0 up1=0 up2=0
was_up "${base}" && up0=1
was_up "${base}1" && up1=1
was_up "${base}2" && up2=1
start=${SECONDS}
# ended NAME RC: a lane's last line, with how long it took.
ended() { echo "== $1 ended after $((SECONDS - start)) s ($( (($2)) && echo FAILED || echo ok))"; return "$2"; }
(make lint && make test-go && make check-generated && CSB_LAB_ID=${base}1 bats_run "${LANE1[@]}"; ended "lane 1" $?) >"${out}/lane1" 2>&1 &
l1=$!
(CSB_LAB_ID=${base}2 bats_run "${LANE2[@]}"; ended "lane 2" $?) >"${out}/lane2" 2>&1 &
l2=$!
rc=0
wait "${l1}" || rc=1
echo "== lane 1: lint, go test, check-generated; ${LANE1[*]}"
cat "${out}/lane1"
wait "${l2}" || rc=1
echo "== lane 2: ${LANE2[*]}"
cat "${out}/lane2"
for id in 1 2; do
  ((id == 1 ? up1 : up2)) && continue
  CLIENTS=2 CSB_LAB_ID=${base}${id} lab/netns.sh down >/dev/null 2>&1 || true
  CSB_LAB_ID=${base}${id} lab/netns.sh down >/dev/null 2>&1 || true
done
rm -rf "${out}"
echo "== alone: ${QUIET[*]}"
bats_run "${QUIET[@]}" || rc=1
if ((!up0)); then
  CLIENTS=2 lab/netns.sh down >/dev/null 2>&1 || true
  lab/netns.sh down >/dev/null 2>&1 || true
fi
echo "== make test: $((SECONDS - start)) s, $( ((rc)) && echo FAILED || echo ok)"
exit "${rc}"
