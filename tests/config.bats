#!/usr/bin/env bats
# Settings edge cases: a config path that is a directory, a value over its
# length limit, a byte-order mark, a key set twice. Each is one clear line
# on stderr and exit 2, before anything is started (no run directory).

load helpers

setup() {
  common_setup
  CONF="${BATS_TEST_TMPDIR}/lab.env"
}

teardown() { common_teardown; }

# runner ARGS...: Phase 0's runner, which would start a LAB=local run were
# the settings accepted.
runner() { run bash 00-iperf3/run_iperf3_baseline.sh -l local -p smoke "$@"; }

# refused PATTERN: exit 2, one line on stderr matching PATTERN, nothing run.
refused() {
  echo "$output"
  [ "$status" -eq 2 ]
  [ "${#lines[@]}" -eq 1 ]
  [[ "${lines[0]}" == "error: "$1 ]]
  [ -z "$(ls -A "${RESULTS_ROOT}")" ]
}

@test "config: a config path that is a directory is refused" {
  mkdir "${BATS_TEST_TMPDIR}/conf.d"
  runner -c "${BATS_TEST_TMPDIR}/conf.d"
  refused "config file ${BATS_TEST_TMPDIR}/conf.d is a directory; give a KEY=VALUE file (see lab.env.example)"
  CSB_CONFIG="${BATS_TEST_TMPDIR}/conf.d" runner
  refused "config file ${BATS_TEST_TMPDIR}/conf.d is a directory;"*
}

@test "config: a value over its limit names the key, its length and the limit" {
  local long
  long=$(printf 'a%.0s' $(seq 300))
  printf 'RUN_NAME=%s\n' "${long}" >"${CONF}"
  runner -c "${CONF}"
  refused "RUN_NAME is 300 bytes long (from ${CONF}:1): the limit is 256 bytes for a setting"
  runner -s "RUN_NAME=${long}"
  refused "RUN_NAME is 300 bytes long (from flag): the limit is 256 bytes for a setting"
  # Paths may be as long as PATH_MAX, not longer.
  long=$(printf '/a%.0s' $(seq 2100))
  runner -s "SSH_KEY=${long}"
  refused "SSH_KEY is 4200 bytes long (from flag): the limit is 4096 bytes for a path"
  # The limit counts bytes, not characters.
  long=$(printf 'é%.0s' $(seq 200))
  SERVER_SSH="${long}" runner
  refused "SERVER_SSH is 400 bytes long (from environment): the limit is 256 bytes for a setting"
}

@test "config: a file starting with a UTF-8 byte-order mark is refused, naming it" {
  printf '\xef\xbb\xbfPROFILE=smoke\nSERVER_PORT=9001\n' >"${CONF}"
  runner -c "${CONF}"
  refused "${CONF} starts with a UTF-8 byte-order mark; save it as plain UTF-8 without one"*
  # The fix the message gives works.
  sed -i '1s/^\xEF\xBB\xBF//' "${CONF}"
  run bash -c 'source lib/init.sh; usage() { :; }; csb_config_load -c "$1"; echo "PROFILE=${PROFILE}"' _ "${CONF}"
  [ "$status" -eq 0 ]
  [[ "$output" == *"PROFILE=smoke"* ]]
}

@test "config: a key set twice in one file names both lines" {
  printf 'PROFILE=smoke\n# the port\nSERVER_PORT=9001\n\nSERVER_PORT=9002\n' >"${CONF}"
  runner -c "${CONF}"
  refused "${CONF}:5: SERVER_PORT is set twice, at lines 3 and 5; keep one"
  # A setting of another phase set twice is the same mistake.
  printf 'CONCURRENCY=16\nCONCURRENCY=32\n' >"${CONF}"
  runner -c "${CONF}"
  refused "${CONF}:2: CONCURRENCY is set twice, at lines 1 and 2; keep one"
}
