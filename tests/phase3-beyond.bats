#!/usr/bin/env bats
# shellcheck disable=SC2016 # jq programs are single-quoted on purpose
# Phase 3 beyond C10K on the real netns lab (smoke profile): 20k idle split
# across processes because one process may hold only 20000 descriptors
# here, then the retry runner, which must find the first run's TIME_WAIT
# and wait it out. Most of its time is that wait (up to 60 s), so it runs in
# a lane beside others (scripts/test.sh) rather than alone.

load helpers
load phase3

@test "beyond and retry smoke: 20k idle split across processes and addresses; the retry waits out TIME_WAIT and says how long" {
  need_root
  local was_up=0
  lab_is_up && was_up=1
  # One lab for both runs: the retry must find the first run's TIME_WAIT.
  lab/netns.sh up
  local hard
  hard=$(ulimit -Hn)
  run bash 03-c10k/run_c10k_beyond.sh -l netns -p smoke
  echo "$output" | tail -n 12
  [ "$status" -eq 0 ]
  local dir
  dir=$(results_line "$output")
  jq -e '.status == "ok" and ([.cells[].name] == ["idle-20k","lowrate-20k-2000rps"])' "${dir}/summary.json"
  if ((hard < 20064)); then
    # One process cannot hold 20k sockets here: two of each, on two addresses.
    jq -e '.cells[0] | .metrics.server_procs == 2 and .metrics.client_procs == 2 and (.params.sources | split(",") | length == 2)
      and (.verdict.bound | test("(^|; )fd limit per process"))' "${dir}/summary.json"
    # A fresh address of the lab's own (which one depends on the TIME_WAIT
    # that earlier runs left on the others in the last 60 s).
    grep -qE 'added 198\.18\.0\.[0-9]+ to csbc0' "${dir}/logs/console.log"
    [ "$(wc -l <"${dir}/monitors/server/limits-csb-server-idle-20k.txt")" -gt 20 ]
  fi
  jq -e '.cells[0].metrics | .connections_established == 20000 and .server_established == 20000 and .connections_alive_end == 20000' "${dir}/summary.json"
  jq -e '.cells[1].metrics | .connections_established == 20000 and .rps_achieved_ratio >= 0.98' "${dir}/summary.json"
  grep -q '^client_addrs_removed=' "${dir}/run.env"
  [ -z "$(added_addrs)" ]

  run bash 03-c10k/run_c10k_beyond_lowrate_retry.sh -l netns -p smoke
  echo "$output" | grep -E 'TIME_WAIT|results:'
  [ "$status" -eq 0 ]
  local retry
  retry=$(results_line "$output")
  # It waited for real: the first poll saw the first run's TIME_WAIT.
  [[ "$output" == *"TIME_WAIT cool-down: waited "* ]]
  awk -F'\t' 'NR == 2 && $2 >= 500 { ok = 1 } END { exit !ok }' "${retry}/raw/tw-cooldown.tsv"
  jq -e '.status == "ok" and (.notes | any(test("waited [0-9]+ s for the client.s TIME_WAIT")))' "${retry}/summary.json"
  jq -e '.cells[0] | .name == "lowrate-20k-2000rps" and .metrics.client_tw_cooldown_s > 1
    and .metrics.client_time_wait_cooldown_start >= 500 and .metrics.client_time_wait_cooldown_end < 500
    and .metrics.connections_established == 20000 and .metrics.rps_achieved_ratio >= 0.98' "${retry}/summary.json"
  grep -q 'TIME_WAIT cool-down' "${retry}/logs/console.log"

  ((was_up)) || lab/netns.sh down
  lab_checks "${was_up}" "${dir}"
  lab_checks "${was_up}" "${retry}"
}
