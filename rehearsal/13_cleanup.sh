#!/usr/bin/env bash
# Step 13: leave both hosts as they were.
#
# Usage: rehearsal/13_cleanup.sh [-h] [-c FILE] [-l LAB] [-s KEY=VALUE]...
#
# Stops the server if step 12 has not (by its recorded PID, as step 12
# does), then removes REHEARSAL_DIR on the server host and on the client
# (only a directory holding the rehearsal's .csb-rehearsal marker). Copy
# anything you want to keep out of REHEARSAL_DIR/client first. Steps start
# nothing else that outlives them. The netns lab stays up: take it down with
# `lab/netns.sh down` (the same CSB_LAB_ID) when you are done.
#
# Exit status: 0 ok, 2 bad usage, 4 the server host is unreachable.
#
# Requires: nothing beyond the ssh hop. Loads: rehearsal/lib.sh (lib/init.sh).
#
# Example:
#   rehearsal/13_cleanup.sh

# shellcheck source=rehearsal/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

main() {
  rh_init "$@"
  rh_args_max 0
  rh_enter
  if [[ -n "$(rh_state_get server_pid)" ]]; then
    "${CSB_ROOT}/rehearsal/12_stop_server.sh" "${RH_ALL_ARGS[@]}"
  fi
  rh_connect

  rh_say "remove ${REHEARSAL_DIR} on both hosts"
  local marker="${REHEARSAL_DIR}/.csb-rehearsal"
  rh_on_server_sh "[ -f $(csb_quote "${marker}") ] && rm -rf $(csb_quote "${REHEARSAL_DIR}") || true"
  if [[ -f "${marker}" ]]; then
    rh_run rm -rf "${REHEARSAL_DIR}"
  fi
  if [[ "${LAB}" == netns ]]; then
    echo "the netns lab stays up; take it down with: sudo CSB_LAB_ID=${CSB_LAB_ID} lab/netns.sh down"
  fi
  echo "clean"
}

main "$@"
