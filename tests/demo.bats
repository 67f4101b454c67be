#!/usr/bin/env bats
# make demo (scripts/demo.sh) on the netns lab, smoke profile, two phases:
# the progress it logs before each phase and before every cell, the plan it
# takes from an earlier run with the same lab and profile, and its report.

load helpers

setup() { common_setup; }
teardown() { common_teardown; }

@test "demo: bad PHASES exits 2 before anything runs" {
  run env PHASES=0,6 LAB=local bash scripts/demo.sh
  [ "$status" -eq 2 ]
  [[ "$output" == "error: PHASES=0,6: expected phase numbers 0 to 5"* ]]
  [ -z "$(ls -A "${RESULTS_ROOT}")" ]
}

@test "demo: phase k/n and the time left before each phase, cell k/n before every cell, planned from a like run" {
  need_root
  # An earlier Phase 0 run with this lab and profile that took 20 s: the plan.
  local d="${RESULTS_ROOT}/00-iperf3/2026-01-01_000000_iperf3-baseline"
  mkdir -p "${d}"
  printf '%s\n' runner=00-iperf3/run_iperf3_baseline.sh lab=netns setting.PROFILE=smoke \
    started_at=2026-01-01T00:00:00Z finished_at=2026-01-01T00:00:20Z status=ok >"${d}/run.env"
  run env PHASES=0,1 LAB=netns PROFILE=smoke DURATION=1 bash scripts/demo.sh
  [ "$status" -eq 0 ] || { echo "$output" | grep -v ' CMD ' | tail -n 30; return 1; }
  local log
  log=$(grep -v ' CMD ' <<<"$output")
  grep -q "demo: plan 00-iperf3/run_iperf3_baseline.sh: 20 s, as ${d} took" <<<"${log}"
  grep -q "demo: plan 01-http-baseline/run_http_baseline.sh: no earlier netns/smoke run to go by" <<<"${log}"
  grep -Eq 'demo: phase 1/2 00-iperf3/run_iperf3_baseline.sh \(LAB=netns PROFILE=smoke\); [0-9hms]+ in, at least 20s left \(1 with no plan\)$' <<<"${log}"
  grep -Eq 'demo: phase 2/2 01-http-baseline/run_http_baseline.sh \(LAB=netns PROFILE=smoke\); [0-9hms]+ in, at least 0s left \(1 with no plan\)$' <<<"${log}"
  # Every cell's start says where its phase is, in order, with the time left.
  local starts
  starts=$(grep -E ' INFO cell .* starts' <<<"${log}")
  [ "$(wc -l <<<"${starts}")" -eq 7 ] || { echo "${starts}"; return 1; }
  run grep -Evc ' INFO cell [0-9]+/[0-9]+ [a-z0-9-]+ \(.*\) starts; [0-9hms]+ in, about [0-9hms]+ left$' <<<"${starts}"
  [ "$output" -eq 0 ] || { echo "${starts}"; return 1; }
  [ "$(grep -Eo 'cell [0-9]+/[0-9]+' <<<"${starts}" | tr '\n' ' ')" = "cell 1/4 cell 2/4 cell 3/4 cell 4/4 cell 1/3 cell 2/3 cell 3/3 " ]
  grep -Eq 'demo: 2 phases in [0-9]+ s$' <<<"${log}"
  grep -qx "Cross-phase report of these runs: ${RESULTS_ROOT}/report/README.md" <<<"${log}"
  [ -s "${RESULTS_ROOT}/report/README.md" ]
  # The demo's report is made of the demo's runs alone: no committed
  # reference run (<phase>/results/) stands in it.
  run grep -c '/results/20' "${RESULTS_ROOT}/report/README.md"
  [ "$output" = 0 ]
}
