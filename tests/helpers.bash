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

# rm_kept_workdirs ROOT: remove the hosts' work directories that a run
# under ROOT left because its results disk was full (their run.state names
# a run directory under ROOT; the runner keeps them for the user to copy).
# Only directories of this user, named as the runner names them.
rm_kept_workdirs() {
  local root=$1 d
  [[ -n "${root}" ]] || return 0
  for d in "${TMPDIR:-/tmp}"/csb-run.*; do
    [[ -d "${d}" && ! -L "${d}" && -O "${d}" && -f "${d}/run.state" ]] || continue
    grep -qF "run_dir=${root}/" "${d}/run.state" && rm -rf -- "${d}"
  done
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
# at most SECONDS (default 120: a bound on a loaded machine, not a pace). Fails when it never does.
wait_for() {
  local file=$1 pattern=$2 limit=${3:-120} i
  for ((i = 0; i < limit * 10; i++)); do
    grep -qE -- "${pattern}" "${file}" 2>/dev/null && return 0
    sleep 0.1
  done
  echo "timed out after ${limit} s waiting for '${pattern}' in ${file}" >&2
  return 1
}

# wait_procs N PATTERN [LIMIT]: wait until at least N processes' command
# lines match PATTERN (pgrep -f; the netns lab's hosts are namespaces of
# this machine, so it sees every host's), at most LIMIT s (default 120).
wait_procs() {
  local n=$1 pattern=$2 limit=${3:-120} i
  for ((i = 0; i < limit * 10; i++)); do
    (($(pgrep -fc -- "${pattern}") >= n)) && return 0
    sleep 0.1
  done
  echo "timed out after ${limit} s waiting for ${n} processes matching '${pattern}'" >&2
  return 1
}

# alive PID: is PID running? A process that has exited but that init has
# not reaped yet (a zombie: what setsid started is init's child) is not
# (lib/remote.sh csb_alive).
alive() {
  local st
  { read -r st <"/proc/$1/stat"; } 2>/dev/null || return 1
  st=${st##*) }
  [[ "${st}" != Z* && "${st}" != X* ]]
}

# pids_gone DIR: every process the run recorded as started (run.env's
# started.server / started.client, both hosts share this PID space in the
# local and netns labs) has exited. A PID alive again in a process that
# started after the run's end (finished_at) is another's: pid_max is 32768
# here, and three lanes of tests wrap it in minutes.
pids_gone() {
  local pid_name pid end btime hz st
  end=$(sed -n 's/^finished_at=//p' "$1/run.env" | tail -n 1)
  end=$(date -d "${end:-now}" +%s) || return 1
  btime=$(awk '/^btime / {print $2}' /proc/stat)
  hz=$(getconf CLK_TCK)
  while read -r pid_name; do
    pid=${pid_name%% *}
    alive "${pid}" || continue
    { read -r st <"/proc/${pid}/stat"; } 2>/dev/null || continue
    # starttime, field 22 of stat: the 20th after "pid (comm) ".
    st=$(awk '{print $20}' <<<"${st##*) }")
    ((btime + st / hz <= end)) || continue
    echo "still running: ${pid_name}" >&2
    return 1
  done < <(sed -n 's/^started\.[a-z0-9]*=//p' "$1/run.env")
}

# p99 of the buckets of every process's histogram summed, by connclient's
# rule (nearest rank, the bucket's midpoint clamped to the exact min and max),
# computed here in jq from raw/<cell>.client-N.json only.
merged_p99() {
  jq -s --arg h "$1" '
    def bucket(i): if i < 256 then [i, 1] else (((i / 128) | floor) - 1) as $s
      | [(i - $s * 128) * pow(2; $s), pow(2; $s)] end;
    [.[] | .[$h]] as $d
    | ($d | map(.count) | add) as $n
    | ($d | map(.min_us) | min) as $lo | ($d | map(.max_us) | max) as $hi
    | ([$d[].buckets[]] | group_by(.[0]) | map([.[0][0], (map(.[1]) | add)])) as $b
    | (0.99 * $n | ceil) as $rank
    | (reduce $b[] as $x ({seen: 0, v: null};
        if .v == null then .seen += $x[1] | if .seen >= $rank then .v = $x[0] else . end else . end)) as $r
    | bucket($r.v) as $k | ($k[0] + ($k[1] - 1) / 2) as $mid
    | ([[$mid, $lo] | max, $hi] | min) / 1000 | . * 1000 | round / 1000' "${@:2}"
}

# merged_wrk_check DIR CELL [RPS_KEY] [P99_KEY]: the cell's merged figures
# are the sum of the clients' raw wrk figures and the percentile of their
# merged distributions, recomputed here from raw/client<k>/CELL.txt (wrk's
# rule: the first value whose cumulative count reaches round(p/100 x count)).
merged_wrk_check() {
  local dir=$1 cell=$2 s="$1/summary.json" k rps_sum=0 r rk=${3:-rps} pk=${4:-latency_p99_ms}
  for k in 1 2; do
    r=$(sed -n 's/^CSB_WRK_JSON //p' "${dir}/raw/client${k}/${cell}.txt" | jq '.requests / .duration_us * 1e6')
    rps_sum=$(jq -n "${rps_sum} + ${r}")
  done
  jq -e --arg c "${cell}" --argjson sum "${rps_sum}" --arg rk "${rk}" \
    '.cells[] | select(.name == $c) | (.metrics[$rk] - $sum | fabs) < 0.2' "$s"
  local p99_us
  p99_us=$(sed -n 's/^CSB_WRK_DIST //p' "${dir}/raw/client1/${cell}.txt" "${dir}/raw/client2/${cell}.txt" |
    jq -s '[.[].values[]] | group_by(.[0]) | map([.[0][0], (map(.[1]) | add)]) as $v
      | ($v | map(.[1]) | add) as $n | (($n * 0.99) + 0.5 | floor) as $r
      | [($r - 1, $r, $r + 1) as $rank
        | reduce $v[] as $p ({c: 0, x: null}; if .x == null then (.c += $p[1] | if .c >= $rank then .x = $p[0] else . end) else . end) | .x]')
  # (A rank either side: jq's doubles may round p/100 x count other than
  # wrk's long doubles.)
  jq -e --arg c "${cell}" --argjson us "${p99_us}" --arg pk "${pk}" \
    '.cells[] | select(.name == $c) | (.metrics[$pk] * 1000) as $m | any($us[]; ($m - . | fabs) < 0.5)' "$s" ||
    { echo "p99 at ranks r-1, r, r+1 of the merged distribution: ${p99_us}"; return 1; }
}

# capacity_near_truth SUMMARY LOW HIGH: Phase 5's capacity in SUMMARY is
# within LOW..HIGH times the ground-truth server's. Found below it while
# the run's own trust marks say the failing step at the bound was
# disturbed (others' CPU or steal: bound_disturbed_steps), the test is
# skipped, naming them: the run said its figure is a lower bound, and this
# machine, not the search, missed the known answer. Above it, or below it
# undisturbed, fails with every step's figures.
capacity_near_truth() {
  local s=$1 lo=$2 hi=$3
  jq -e --argjson lo "${lo}" --argjson hi "${hi}" \
    '.capacity[0] | .capacity_rps >= .truth_capacity_rps * $lo and .capacity_rps <= .truth_capacity_rps * $hi' "${s}" && return 0
  jq -c '.capacity[0], [.cells[] | {name, offered: .params.offered_rps, p99: .metrics.latency_p99_ms, code: .verdict.code,
    disturbed: .marks.disturbed, others: [.marks.other_load[]? | .others_cpu_pct]}]' "${s}"
  if jq -e --argjson hi "${hi}" '.capacity[0] | .capacity_rps <= .truth_capacity_rps * $hi and (.bound_disturbed_steps | length > 0)' \
    "${s}" >/dev/null; then
    skip "the machine was disturbed at the bound ($(jq -r '.capacity[0].bound_disturbed_steps | join(", ")' "${s}")): a lower bound, as the run says"
  fi
  return 1
}

# interrupted RC OUT WANT: a runner stopped by a signal exited WANT (130 for
# SIGINT). bash 5.2 can fail to parse a trap's command when the signal
# lands while it parses a $(...) (it keeps the parser's command-substitution
# state; bash 5.3's _run_trap_internal resets the parser first): it prints
# "FILE: interrupt trap: line N: unexpected EOF while looking for matching
# `)'" and exits 2 through the EXIT trap, which still stops everything and
# marks the run partial, without the signal's name. Then TRAP_BUG=1: the
# test checks the rest (signal_word gives nothing to look for) and skips
# at its end (trap_bug_skip). Seen once in a CI run of ~150 tests.
TRAP_BUG=0
interrupted() {
  local rc=$1 out=$2 want=$3
  [[ "${rc}" -eq "${want}" ]] && return 0
  if [[ "${rc}" -eq 2 ]] && grep -qE ' trap: line [0-9]+: unexpected EOF while looking for matching' "${out}"; then
    TRAP_BUG=1
    return 0
  fi
  echo "exit ${rc}, expected ${want}"
  return 1
}
# signal_word SIG: what the run's error must name: SIG, or nothing after bash's trap bug.
signal_word() { ((TRAP_BUG)) || printf '%s' "$1"; }
trap_bug_skip() {
  ((TRAP_BUG == 0)) || skip "bash $(bash -c 'echo "${BASH_VERSION}"') did not parse the INT trap (a signal during \$(...)); the run still stopped everything, partial, exit 2"
}
