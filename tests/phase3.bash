# Setup and helpers of the Phase 3 bats files (phase3.bats,
# phase3-beyond.bats): no Phase 3 setting from the caller's environment,
# and what a run on the lab may leave behind. Loaded after helpers.bash.
# shellcheck shell=bash

setup() {
  common_setup
  unset CONNS RPS SCENARIOS ACTIVE_PAYLOAD HOLD CONNECT_RATE TW_THRESHOLD TW_WAIT_MAX CLIENT_EXTRA_IPS
}
teardown() { common_teardown; }

# leftovers DIR: processes that still mention the run (its id is in every
# server-side path and every monitor's command line), and any process left
# in the lab's namespaces but its sshd (other labs on this machine run their
# own wrk and servers; only this lab's namespaces are looked at).
leftovers() {
  pgrep -af -- "$(basename "$1")" | grep -v pgrep || true
  local ns p
  for ns in "${LAB_ID}-cli" "${LAB_ID}-srv"; do
    for p in $(ip netns pids "${ns}" 2>/dev/null); do
      ps -o pid=,args= -p "${p}" 2>/dev/null | grep -v sshd || true
    done
  done
}

# added_addrs: IPv4 addresses on the lab's client NIC besides its own.
added_addrs() {
  ip -n "${LAB_ID}-cli" -o -4 addr show dev csbc0 2>/dev/null | grep -v ' inet 198\.18\.0\.2/' || true
}

# lab_checks WAS_UP DIR: nothing of the run remains; the lab is down again
# if the test did not find it up.
lab_checks() {
  local was_up=$1 dir=$2
  [ -z "$(leftovers "${dir}")" ]
  [ -z "$(added_addrs)" ]
  if ((was_up == 0)); then
    if lab_is_up; then echo "the lab is still up"; return 1; fi
  fi
}
