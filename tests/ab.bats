#!/usr/bin/env bats
# shellcheck disable=SC2016 # the patterns match Markdown code spans, unexpanded
# scripts/ab.sh, an interleaved A/B, on loopback (no root): both sides
# checked before anything runs; the rounds in ABBA order, each side's runs
# in a results root of its own; the comparison pooling them and naming the
# setting that differs. Its own SERVER_PORT, so that its loopback runs
# take a lab lock of their own (local-18097) beside other lanes' tests.

load helpers

setup() { common_setup; }
teardown() { common_teardown; }

@test "ab: a side with a bad setting, a runner or a count that is not one: exit 2, nothing written or sent" {
  local out="${BATS_TEST_TMPDIR}/ab"
  # SLOTS goes with SERVICE_TIME: the runner's own check refuses side A.
  run env LAB=local SERVER_PORT=18097 bash scripts/ab.sh -o "${out}" -a SLOTS=40 -b SLOTS=44 05-capacity/run_capacity.sh
  [ "$status" -eq 2 ]
  [[ "$output" == *"side A (-s SLOTS=40) is refused by 05-capacity/run_capacity.sh"* ]]
  [[ "$output" != *"ab: run 1/"* ]]
  [ ! -e "${out}" ]
  run env LAB=local SERVER_PORT=18097 bash scripts/ab.sh -o "${out}" -a SLOTS=40 -a SERVICE_TIME=10ms -b NOSUCH=1 05-capacity/run_capacity.sh
  [ "$status" -eq 2 ]
  [[ "$output" == *"unknown setting NOSUCH"* && "$output" == *"side B (-s NOSUCH=1) is refused"* ]]
  [ ! -e "${out}" ]
  run env LAB=local bash scripts/ab.sh -o "${out}" -a X=1 -b X=2 ../tmp/run_x.sh
  [ "$status" -eq 2 ]
  [[ "$output" == *"not a phase runner of this repository"* ]]
  run env LAB=local bash scripts/ab.sh -n 0 -o "${out}" -a UNSTEADY_CV=10 -b UNSTEADY_CV=20 01-http-baseline/run_http_baseline.sh
  [ "$status" -eq 2 ]
  [[ "$output" == *"-n 0: expected a number of rounds"* ]]
  [ ! -e "${out}" ]
}

@test "ab: two rounds on loopback run A B B A, each side pooled, the differing setting named" {
  local out="${BATS_TEST_TMPDIR}/ab"
  run env LAB=local bash scripts/ab.sh -n 2 -o "${out}" -s PROFILE=smoke -s PAYLOADS=1k -s SERVER_PORT=18097 \
    -a UNSTEADY_CV=10 -b UNSTEADY_CV=20 01-http-baseline/run_http_baseline.sh
  echo "$output" | grep -E 'ab: |error|failed' || true
  [ "$status" -eq 0 ]
  [ "$(grep '^run[0-9]=' "${out}/ab.env" | cut -d= -f2 | tr '\n' ,)" = "round 1 side a,round 1 side b,round 2 side b,round 2 side a," ]
  [[ "$output" == *"ab: run 3/4 round 2/2, side B (-s UNSTEADY_CV=20);"* ]]
  [ "$(find "${out}/a/01-http-baseline" "${out}/b/01-http-baseline" -mindepth 1 -maxdepth 1 -type d | wc -l)" -eq 4 ]
  local md="${out}/README.md"
  grep -q '^# Two configurations of one server under test, side by side$' "${md}"
  grep -q '^Baseline A: 2 runs (`.*`, `.*`) (local, ok ×2, profile smoke' "${md}"
  grep -q '^- `setting:UNSTEADY_CV`: 10 → 20$' "${md}"
  # Two runs a side: values pooled, too few for a verdict at α = 0.05.
  grep -qE '^\| `1k` \| rps \| .* \| — \(n=2\+2\) \|$' "${md}"
}
