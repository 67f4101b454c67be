# tests/helpers.bash: shared by every bats file (load helpers).
# Tests run the real tools on the real labs; they write only under a
# temporary RESULTS_ROOT and send traffic only to 127.0.0.1 or the netns
# lab's 198.18.0.0/24.

REPO="$(cd "${BATS_TEST_DIRNAME}/.." && pwd -P)"
export PATH="${PATH}:/usr/local/go/bin"

# common_setup: a fresh results root, no config file, no inherited settings.
common_setup() {
  RESULTS_ROOT="$(mktemp -d "${BATS_TMPDIR:-/tmp}/csb-results.XXXXXX")"
  export RESULTS_ROOT
  export CSB_CONFIG=/dev/null
  unset LAB PROFILE SERVER_SSH SSH_KEY SERVER_IP CLIENT_IP SERVER_NIC CLIENT_NIC \
    SSH_KNOWN_HOSTS SERVER_PORT IPERF_PORT LINK_RATE REMOTE_DIR DURATION RUN_NAME LAB_KEEP
  cd "${REPO}" || return 1
}

common_teardown() {
  [[ -n "${RESULTS_ROOT:-}" && -d "${RESULTS_ROOT}" ]] && rm -rf "${RESULTS_ROOT}"
  return 0
}

# need_root: skip a test that needs the netns lab when not root.
need_root() {
  if [[ ${EUID} -ne 0 ]]; then
    skip "needs root for the netns lab (run: sudo make test)"
  fi
  if ! ip netns add csb-probe-$$ 2>/dev/null; then
    skip "network namespaces cannot be created here"
  fi
  ip netns del csb-probe-$$
}

LAB_ID="${CSB_LAB_ID:-csb}"
# lab_is_up: this lab's server namespace exists (ip -j netns list, read by
# bin/csb ipj, which make test-bats builds).
lab_is_up() {
  local names
  names=$(ip -j netns list 2>/dev/null | "${REPO}/bin/csb" ipj netns) || return 1
  grep -qxF "${LAB_ID}-srv" <<<"${names}"
}

# results_line OUTPUT: the directory named by the runner's last line.
results_line() { printf '%s\n' "$1" | tail -n 1 | sed -n 's/^results: //p'; }

# procs_matching PATTERN: the processes whose command line matches PATTERN
# (pgrep -af), for a test asserting that none is left.
procs_matching() { pgrep -af -- "$1" | grep -v pgrep || true; }

# wait_for FILE PATTERN [SECONDS]: poll until FILE holds PATTERN (grep -E),
# at most SECONDS (default 30). Fails when it never does.
wait_for() {
  local file=$1 pattern=$2 limit=${3:-30} i
  for ((i = 0; i < limit * 10; i++)); do
    grep -qE -- "${pattern}" "${file}" 2>/dev/null && return 0
    sleep 0.1
  done
  echo "timed out after ${limit} s waiting for '${pattern}' in ${file}" >&2
  return 1
}

# pids_gone DIR: every process the run recorded as started (run.env's
# started.server / started.client, both hosts share this PID space in the
# local and netns labs) has exited.
pids_gone() {
  local pid_name
  while read -r pid_name; do
    if kill -0 "${pid_name%% *}" 2>/dev/null; then
      echo "still running: ${pid_name}" >&2
      return 1
    fi
  done < <(sed -n 's/^started\.\(server\|client\)=//p' "$1/run.env")
}
