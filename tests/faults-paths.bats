#!/usr/bin/env bats
# shellcheck disable=SC2016 # '$(id)' in a path is the input under test, unexpanded
# Issue 21, cases 5 to 8, as a user meets them: a results root or config
# path with spaces and glob or shell characters, values no tool can
# produce in a summary or a raw file, a run stopped by a full disk, and
# `lab/netns.sh up` cut short. Real runners (LAB=local: no root needed for
# the paths), real tools' output, a real tmpfs and a netns lab of this
# file's own (CSB_LAB_ID=fltp), taken down at the end.

load helpers

# A path holding what a path may hold: spaces, a tab, quotes, '$(...)',
# glob characters, '%', a backslash and shell operators.
ODD=$'My Runs [x]* $(id) \'q\' "d" %s \\ \t;&|'
FLT_LAB=fltp

setup() {
  common_setup
  unset CLIENTS CSB_LAB_ID
  MNT=""
}

teardown() {
  if [[ -n "${MNT}" ]]; then
    rm_kept_workdirs "${MNT}"
    umount "${MNT}" 2>/dev/null || umount -l "${MNT}" 2>/dev/null || true
    rmdir "${MNT}" 2>/dev/null || true
  fi
  common_teardown
}

teardown_file() {
  if [[ ${EUID} -eq 0 ]]; then
    CSB_LAB_ID=${FLT_LAB} "${BATS_TEST_DIRNAME}/../lab/netns.sh" down >/dev/null 2>&1 || true
  fi
}

# ---- case 5: paths --------------------------------------------------------

@test "paths: a results root and a config file with spaces, quotes and glob characters work end to end" {
  local root="${RESULTS_ROOT}/${ODD}" cfg="${RESULTS_ROOT}/my lab [1].env"
  mkdir -p "${root}"
  # The root comes from a config file (quoted) whose own path has a space
  # and brackets; the environment's RESULTS_ROOT would win over it.
  printf 'RESULTS_ROOT="%s"\n' "${root}" >"${cfg}"
  run env -u RESULTS_ROOT bash 01-http-baseline/run_http_baseline.sh -c "${cfg}" -l local -p smoke \
    -s PAYLOADS=1k -s WARMUP=0 -s DURATION=2
  echo "$output"
  [ "$status" -eq 0 ]
  local dir
  dir=$(results_line "$output")
  [[ "${dir}" == "${root}/01-http-baseline/"* ]]
  [ -d "${dir}" ]
  # The server's own pidstat file was read (a glob on the run directory
  # missed it: its RSS was null and the run's server "other load").
  jq -e '.status == "ok" and .cells[0].status == "ok" and .cells[0].metrics.server_rss_mb != null' "${dir}/summary.json"
  local pid
  pid=$(sed -n 's/^started\.server=\([0-9]*\) csb-server$/\1/p' "${dir}/run.env" | head -n 1)
  [ -n "${pid}" ]
  jq -e --argjson p "${pid}" '[.cells[].trust.other_load[]?.top[]?.pid] | index($p) == null' "${dir}/summary.json"
  # csb report reads the root as the directory it names.
  run bin/csb report -root "${root}" -out "${root}/report"
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$output" = "report: ${root}/report/README.md" ]
  grep -q '01-http-baseline' "${root}/report/README.md"
}

@test "paths over ssh: the netns lab with REMOTE_DIR, SSH_KEY and the results root holding spaces and shell characters" {
  need_root
  local root="${RESULTS_ROOT}/${ODD}" keys="${RESULTS_ROOT}/My Keys [x] \$(id)" remote="${RESULTS_ROOT}/remote ${ODD}"
  mkdir -p "${root}" "${remote}"
  chmod 0700 "${remote}"
  CSB_LAB_ID=${FLT_LAB} lab/netns.sh up >/dev/null
  mkdir -m 0700 "${keys}"
  cp "/tmp/${FLT_LAB}-netns/id_ed25519" "${keys}/id key"
  run env CSB_LAB_ID=${FLT_LAB} bash 01-http-baseline/run_http_baseline.sh -l netns -p smoke -r "${root}" \
    -s PAYLOADS=1k -s WARMUP=0 -s DURATION=1 -s "REMOTE_DIR=${remote}" -s "SSH_KEY=${keys}/id key"
  echo "$output"
  [ "$status" -eq 0 ]
  local dir
  dir=$(results_line "$output")
  [[ "${dir}" == "${root}/01-http-baseline/"* ]]
  jq -e '.status == "ok" and .cells[0].status == "ok" and .cells[0].metrics.server_rss_mb != null' "${dir}/summary.json"
  # The server's private work directory was made under REMOTE_DIR, and removed.
  grep -qF "server_workdir=${remote}/csb-run." "${dir}/run.env"
  [ -z "$(ls -A "${remote}")" ]
  CSB_LAB_ID=${FLT_LAB} lab/netns.sh down >/dev/null
}

@test "paths: a newline is refused before anything starts" {
  run bash 00-iperf3/run_iperf3_baseline.sh -l local -p smoke -r $'/tmp/a\nb'
  [ "$status" -eq 2 ]
  [[ "$output" == *"error: RESULTS_ROOT=\$'/tmp/a\\nb' is not valid (from flag): expected a path on one line (any byte but a newline)"* ]]
  [ ! -e $'/tmp/a\nb' ]
  run bash 00-iperf3/run_iperf3_baseline.sh -l local -p smoke -s $'REMOTE_DIR=/tmp/x\ny'
  [ "$status" -eq 2 ]
  [[ "$output" == *"REMOTE_DIR="*"is not valid (from flag): expected a path on one line"* ]]
  [ -z "$(ls -A "${RESULTS_ROOT}")" ]
}

# ---- case 6: values no tool can produce ---------------------------------

# odd_summary METRIC VALUE: a copy of real summaries (netns smoke runs) as a
# results root under ROOT, with METRIC of the Phase 1 run's first cell set
# to VALUE; sets RUN_A (untouched) and RUN_B (edited).
odd_summary() {
  ROOT="${RESULTS_ROOT}/root"
  cp -r internal/crossreport/testdata/root "${ROOT}"
  RUN_B=$(compgen -G "${ROOT}/01-http-baseline/*/")
  RUN_B=${RUN_B%/}
  RUN_A="${RESULTS_ROOT}/a"
  cp -r "${RUN_B}" "${RUN_A}"
  jq --arg m "$1" --argjson v "$2" '.cells[0].metrics[$m] = $v' "${RUN_B}/summary.json" >"${RUN_B}/s.tmp"
  mv "${RUN_B}/s.tmp" "${RUN_B}/summary.json"
}

@test "values: csb compare refuses a negative rate, latency or throughput, naming file and field; csb report -root skips that run" {
  local m v want
  while IFS='|' read -r m v want; do
    odd_summary "${m}" "${v}"
    run bin/csb compare "${RUN_A}" "${RUN_B}"
    echo "$output"
    [ "$status" -eq 1 ]
    [[ "$output" == "error: ${RUN_B}/summary.json: cells[\"1k\"].metrics.${m} is ${want}"* ]]
    [[ "$output" != *"×"* ]]
    # A results root's report skips the run, naming it and why, and
    # reports the others.
    run bin/csb report -root "${ROOT}" -out "${RESULTS_ROOT}/report"
    [ "$status" -eq 0 ]
    [[ "$output" == *"report: skipped ${RUN_B}: summary.json: cells[\"1k\"].metrics.${m} is ${want}"* ]]
    grep -q 'Skipped runs' "${RESULTS_ROOT}/report/README.md"
    rm -rf "${ROOT}" "${RUN_A}" "${RESULTS_ROOT}/report"
  done <<'CASES'
rps|-1000|-1000: a request rate below zero
latency_p99_ms|-5|-5: a time in ms (latency, lag or bound) below zero
throughput_mbps|-1e308|-1e+308: a throughput below zero
throughput_mbps|1e308|1e+308: a throughput above 1.5 x the line rate of 1000 Mbit/s (link.rate_mbps)
CASES
}

@test "values: a negative throughput in a real iperf3 file is refused naming the file; the run is partial" {
  local dir="${RESULTS_ROOT}/run"
  cp -r internal/phase0/testdata/run "${dir}"
  # (A run of run.env schema 1: one client's raw files in raw/.)
  local raw="${dir}/raw/c2s-1.json"
  jq '.end.sum_received.bits_per_second = -1000' "${raw}" >"${raw}.tmp"
  mv "${raw}.tmp" "${raw}"
  run bin/csb summarize "${dir}"
  echo "$output"
  [ "$status" -eq 1 ]
  [[ "$output" == *"cell c2s-1: raw/c2s-1.json: iperf3: end.sum_received.bits_per_second is -1000: below zero, which iperf3 never prints"* ]]
  jq -e '.status == "partial" and (.cells[] | select(.name == "c2s-1") | .status == "failed" and .metrics.throughput_mbps == null)' "${dir}/summary.json"
}

# ---- case 7: a full disk --------------------------------------------------

@test "full disk: a run stopped before its first cell's start stays summarizable once space is free" {
  need_root
  MNT="$(mktemp -d "${BATS_TMPDIR:-/tmp}/csb-disk.XXXXXX")"
  mount -t tmpfs -o size=8m csb-faults "${MNT}" || skip "cannot mount a tmpfs here"
  # Room for the run directory and its environment capture, not for the
  # first cell's disk reserve (lib/rundir.sh, 512 KiB): the run stops as
  # that cell begins.
  local avail
  avail=$(df -k --output=avail "${MNT}" | tail -n 1 | tr -d ' ')
  head -c "$(((avail - 300) * 1024))" /dev/zero >"${MNT}/filler"
  run bash 00-iperf3/run_iperf3_baseline.sh -l local -p smoke -s DURATION=1 -r "${MNT}"
  echo "$output"
  [ "$status" -eq 1 ]
  [[ "$output" == *"error: disk full: no space left on ${MNT}"* ]]
  local dir
  dir=$(results_line "$output")
  [ -d "${dir}" ]
  rm -f "${MNT}/filler" "${dir}/summary.json"
  run bin/csb summarize "${dir}"
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$output" = "summarized ${dir}" ]
  jq -e '(.error | startswith("disk full: no space left on ")) and
    (.cells[0] | .name == "c2s-1" and .status == "failed" and
      (.error | startswith("the row of cell c2s-1 has no start: the run was cut short (disk full?); disk full: ")))' "${dir}/summary.json"
}

# ---- case 8: lab/netns.sh up cut short --------------------------------------

# up_cut SIGNAL WHEN: start `lab/netns.sh up` of lab fltp in a process group
# of its own (as a terminal runs it) and send SIGNAL to the group as soon
# as WHEN exists (a path, polled); UP_RC and UP_LOG are what it left. An
# up that finished first (a fast machine) is taken down and tried again.
up_cut() {
  local sig=$1 when=$2 try pid
  UP_LOG="${BATS_TEST_TMPDIR}/up.log"
  for try in 1 2 3; do
    # env --default-signal: a background job of a script starts with INT
    # ignored; a terminal's foreground job does not. (TMPDIR: the ERR
    # trap's private directory, which an up killed outright cannot remove,
    # goes with the test's.)
    setsid env --default-signal=INT,TERM TMPDIR="${BATS_TEST_TMPDIR}" CSB_LAB_ID=${FLT_LAB} lab/netns.sh up >"${UP_LOG}" 2>&1 &
    pid=$!
    while [[ ! -e "${when}" ]] && kill -0 "${pid}" 2>/dev/null; do :; done
    kill "-${sig}" -- "-${pid}" 2>/dev/null || true
    UP_RC=0
    wait "${pid}" || UP_RC=$?
    ((UP_RC == 0)) || return 0
    CSB_LAB_ID=${FLT_LAB} lab/netns.sh down >/dev/null
  done
  echo "up finished before ${when} appeared, ${try} times" >&2
  return 1
}

# lab_left: what of lab fltp exists (namespaces, state, sshd); empty: none.
lab_left() {
  ip netns list | grep "^${FLT_LAB}-" || true
  [[ ! -e "/tmp/${FLT_LAB}-netns" ]] || echo "/tmp/${FLT_LAB}-netns"
  procs_matching "/tmp/${FLT_LAB}-netns/sshd_config"
}

@test "netns up: Ctrl-C or TERM at any point exits 130 or 143 and leaves nothing; the next up builds the lab" {
  need_root
  CSB_LAB_ID=${FLT_LAB} lab/netns.sh down >/dev/null
  local sig rc when
  for when in "/tmp/${FLT_LAB}-netns/building" "/tmp/${FLT_LAB}-netns/sshd.log"; do
    for sig in INT TERM; do
      up_cut "${sig}" "${when}"
      cat "${UP_LOG}"
      rc=130
      [[ "${sig}" == INT ]] || rc=143
      [ "${UP_RC}" -eq "${rc}" ]
      grep -q "WARN caught SIG${sig}: stopping everything this run started" "${UP_LOG}"
      grep -q "WARN lab/netns.sh up did not finish (exit ${rc}): removing the half-built lab ${FLT_LAB}" "${UP_LOG}"
      [ -z "$(lab_left)" ]
    done
  done
  run env CSB_LAB_ID=${FLT_LAB} lab/netns.sh status
  [ "$status" -eq 1 ]
  [ "$output" = "down: namespace ${FLT_LAB}-srv does not exist" ]
  run env CSB_LAB_ID=${FLT_LAB} lab/netns.sh up
  [ "$status" -eq 0 ]
  [[ "$output" == *"netns lab up: server 198.18.0.1"* ]]
  CSB_LAB_ID=${FLT_LAB} lab/netns.sh down
  [ -z "$(lab_left)" ]
}

@test "netns up: killed outright mid-build, the lab is not taken as up; the next up rebuilds it" {
  need_root
  CSB_LAB_ID=${FLT_LAB} lab/netns.sh down >/dev/null
  up_cut KILL "/tmp/${FLT_LAB}-netns/sshd.log"
  [ "${UP_RC}" -eq 137 ]
  run env CSB_LAB_ID=${FLT_LAB} lab/netns.sh status
  echo "$output"
  [ "$status" -eq 1 ]
  [ "$output" = "down: an earlier lab/netns.sh up was cut short while building it (/tmp/${FLT_LAB}-netns/building is left); lab/netns.sh up rebuilds it" ]
  run env CSB_LAB_ID=${FLT_LAB} lab/netns.sh up
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *"netns lab: an earlier lab/netns.sh up was cut short while building it (/tmp/${FLT_LAB}-netns/building is left): removing what stands and building it again"* ]]
  [[ "$output" == *"netns lab up: server 198.18.0.1"* ]]
  [[ "$output" != *"already up"* ]]
  run env CSB_LAB_ID=${FLT_LAB} lab/netns.sh status
  [ "$status" -eq 0 ]
  CSB_LAB_ID=${FLT_LAB} lab/netns.sh down
  [ -z "$(lab_left)" ]
}

@test "netns up: already up only after the health check; a lost qdisc or sshd is repaired, a lost address rebuilt" {
  need_root
  CSB_LAB_ID=${FLT_LAB} lab/netns.sh up >/dev/null
  local st="/tmp/${FLT_LAB}-netns"
  run env CSB_LAB_ID=${FLT_LAB} lab/netns.sh up
  [ "$status" -eq 0 ]
  [[ "$output" == *"netns lab already up"* ]]
  # A qdisc gone: status says so; up puts it back in place.
  tc -n "${FLT_LAB}-srv" qdisc del dev csbs0 root
  run env CSB_LAB_ID=${FLT_LAB} lab/netns.sh status
  [ "$status" -eq 1 ]
  [ "$output" = "down: csbs0 in ${FLT_LAB}-srv has no tbf qdisc (the lab is shaped at 1gbit)" ]
  run env CSB_LAB_ID=${FLT_LAB} lab/netns.sh up
  [ "$status" -eq 0 ]
  [[ "$output" == *"csbs0 in ${FLT_LAB}-srv has no tbf qdisc (the lab is shaped at 1gbit): repairing it"* ]]
  tc -n "${FLT_LAB}-srv" qdisc show dev csbs0 root | grep -q '^qdisc tbf '
  # The sshd gone: restarted, the namespaces kept.
  kill "$(cat "${st}/sshd.pid")"
  run env CSB_LAB_ID=${FLT_LAB} lab/netns.sh status
  [ "$status" -eq 1 ]
  [[ "$output" == "down: the lab's sshd is not running"* ]]
  run env CSB_LAB_ID=${FLT_LAB} lab/netns.sh up
  [ "$status" -eq 0 ]
  [[ "$output" == *"repairing it"*"netns lab up again"* ]]
  # An address gone: the lab is rebuilt, never taken as up.
  ip -n "${FLT_LAB}-cli" addr flush dev csbc0
  run env CSB_LAB_ID=${FLT_LAB} lab/netns.sh status
  [ "$status" -eq 1 ]
  [ "$output" = "down: csbc0 in ${FLT_LAB}-cli does not carry 198.18.0.2" ]
  run env CSB_LAB_ID=${FLT_LAB} lab/netns.sh up
  [ "$status" -eq 0 ]
  [[ "$output" == *"removing what stands and building it again"*"netns lab up: server"* ]]
  run env CSB_LAB_ID=${FLT_LAB} lab/netns.sh status
  [ "$status" -eq 0 ]
  CSB_LAB_ID=${FLT_LAB} lab/netns.sh down
  [ -z "$(lab_left)" ]
}
