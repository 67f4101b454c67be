#!/usr/bin/env bash
# Step 12: stop the server that step 05 started, by its recorded PID.
#
# Usage: rehearsal/12_stop_server.sh [-h] [-c FILE] [-l LAB] [-s KEY=VALUE]...
#
# Reads server_pid from REHEARSAL_DIR/state and runs on the server host a
# script that sends SIGTERM to that PID only while /proc/PID/cmdline still
# names csb-server (a PID the kernel has reused is never hit), waits up to
# 10 s for the graceful shutdown, then SIGKILL. Shows the end of the server's
# log (its "shutdown" line). Never pkill, never "every csb-server".
#
# Exit status: 0 stopped or nothing to stop, 2 bad usage, 4 the server host
# is unreachable.
#
# Requires: nothing beyond the ssh hop. Loads: rehearsal/lib.sh (lib/init.sh).
#
# Example:
#   rehearsal/12_stop_server.sh

# shellcheck source=rehearsal/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

main() {
  rh_init "$@"
  rh_args_max 0
  rh_enter
  local pid
  pid=$(rh_state_get server_pid)
  if [[ -z "${pid}" ]]; then
    echo "no server recorded in ${RH_STATE}: nothing to stop"
    return 0
  fi
  rh_connect

  rh_say "stop PID ${pid} on the server host"
  local script
  script=$(csb_kill_script "${pid}" csb-server 10)
  printf '%s\n' "${script}" | sed 's/^/server$ /'
  on_server_sh "${script}"
  rh_state_del server_pid
  rh_on_server tail -n 2 "${RH_SRV_DIR}/server.log"
  if csb_server_alive "${pid}" csb-server 2>/dev/null; then
    die "PID ${pid} is still there" 1
  fi
  echo "stopped: PID ${pid}"
}

main "$@"
