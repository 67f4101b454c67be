#!/usr/bin/env bats
# shellcheck disable=SC2016 # jq programs are single-quoted on purpose
# Phase 3 towards C100K, smoke on the real netns lab: run_c10k_beyond.sh with
# a CONNS list of small steps (2k,4k; the low-rate scenario, which holds
# its connections as idle does and carries requests; phase3.bats runs idle)
# under a hard fd limit of 1500, so that
# every step is split across server processes (SO_REUSEPORT) and client
# processes (one per source address), as 100k is under the lab's 20000.
# One run (setup_file); the tests read it: the steps, memory per connection
# three ways, the p99 of the merged histograms recomputed here from the
# processes' raw files, the one start time of the low-rate processes.

load helpers

C100K_FD=1500

setup_file() {
  [[ ${EUID} -eq 0 ]] || return 0
  common_setup
  export C100K_ROOT=${RESULTS_ROOT} C100K_WAS_UP=0
  if lab_is_up; then
    # The lab's server processes inherit its sshd's fd limit: it must be
    # brought up under the lowered one.
    C100K_WAS_UP=1
    lab/netns.sh down >/dev/null
  fi
  (ulimit -n "${C100K_FD}" && lab/netns.sh up >/dev/null)
  export C100K_OUT="${BATS_FILE_TMPDIR}/run.out"
  bash -c 'ulimit -n "$1" && exec bash 03-c10k/run_c10k_beyond.sh -l netns -p smoke \
    -s CONNS=2k,4k -s SCENARIOS=lowrate -s DURATION=2' _ "${C100K_FD}" >"${C100K_OUT}" 2>&1 || echo "exit $?" >>"${C100K_OUT}"
}

teardown_file() {
  [[ ${EUID} -eq 0 ]] || return 0
  lab/netns.sh down >/dev/null || true
  if ((C100K_WAS_UP)); then lab/netns.sh up >/dev/null || true; fi
  [[ -z "${C100K_ROOT:-}" ]] || rm -rf "${C100K_ROOT}"
}

setup() {
  cd "${REPO}" || return 1
  need_root
  DIR=$(results_line "$(cat "${C100K_OUT}")")
  SUM="${DIR}/summary.json"
}

@test "c100k smoke: every step of CONNS=2k,4k ran, split across processes, and nothing is left" {
  tail -n 5 "${C100K_OUT}"
  run grep -q '^exit ' "${C100K_OUT}"
  [ "$status" -ne 0 ]
  jq -e '.status == "ok" and ([.cells[].name] == ["lowrate-2k-2000rps","lowrate-4k-2000rps"])
    and all(.cells[]; .status == "ok")' "${SUM}"
  jq -e 'all(.cells[]; .metrics.connections_established == .metrics.connections_target
    and .metrics.server_established == .metrics.connections_target
    and .metrics.server_procs >= 2 and .metrics.client_procs >= 2)' "${SUM}"
  grep -q '^CONNS=2k,4k$' "${DIR}/run.env" || grep -q 'CONNS=2k,4k' "${DIR}/run.env"
  # The addresses the run added are gone again.
  run bash -c 'ip -n "$1" -o -4 addr show dev csbc0 | grep -v " inet 198\.18\.0\.2/"' _ "${LAB_ID}-cli"
  [ -z "$output" ]
  pids_gone "${DIR}"
}

@test "c100k smoke: memory per connection three ways at every step (server, client, kernel) and their chart" {
  jq -c '.cells[] | [.name, (.metrics | .server_rss_per_conn_kb, .client_rss_per_conn_kb, .kernel_tcp_slab_kb_per_conn,
    .kernel_tcp_mem_kb_per_conn, .tcp_slab_objs_before, .tcp_slab_objs_held)]' "${SUM}"
  jq -e 'all(.cells[]; .metrics as $m
    | $m.server_rss_per_conn_kb > 5 and $m.server_rss_per_conn_kb < 100
    and $m.client_rss_per_conn_kb > 0 and $m.client_rss_per_conn_kb < 200
    and $m.tcp_slab_objs_held > $m.tcp_slab_objs_before and $m.tcp_slab_obj_bytes > 0
    and $m.kernel_tcp_slab_kb_per_conn > 1 and $m.kernel_kb_per_conn != null
    and $m.tcp_mem_pages_held != null and .details.kernel_basis == "both_ends_one_kernel")' "${SUM}"
  grep -q '^## Memory per connection' "${DIR}/Report_03-c10k.md"
  grep -q '| 4k low-rate at 2000 req/s | 4000 |' "${DIR}/Report_03-c10k.md"
  for kind in 'server user space' 'client user space' 'kernel (TCP slab'; do
    grep -qF "${kind}" "${DIR}/server-rss.gp"
  done
  [ -s "${DIR}/monitors/server/c10k/lowrate-4k-2000rps.held.slabinfo" ]
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

@test "c100k smoke: the p99 of a split scenario is that of the merged histograms, recomputed from the raw files" {
  local cell files want got
  for cell in lowrate-2k-2000rps lowrate-4k-2000rps; do
    files=("${DIR}/raw/${cell}".client-*.json)
    [ "${#files[@]}" -ge 2 ]
    want=$(merged_p99 latency_histogram "${files[@]}")
    got=$(jq --arg c "${cell}" '.cells[] | select(.name == $c) | .metrics.latency_p99_ms' "${SUM}")
    echo "${cell}: summary p99 ${got} ms, recomputed ${want} ms"
    [ "${got}" = "${want}" ]
    want=$(merged_p99 service_latency_histogram "${files[@]}")
    got=$(jq --arg c "${cell}" '.cells[] | select(.name == $c) | .metrics.service_latency_p99_ms' "${SUM}")
    [ "${got}" = "${want}" ]
    # Every request is in the merged histogram exactly once.
    jq -s -e '(map(.latency_histogram.count) | add) == (map(.requests_completed) | add)' "${files[@]}"
    jq -e --arg c "${cell}" '.cells[] | select(.name == $c) | .details.percentile_basis == "merged_histogram"
      and .metrics.rps_achieved_ratio >= 0.98' "${SUM}"
  done
  grep -q 'histograms merged bucket by bucket' "${DIR}/Report_03-c10k.md"
}

@test "c100k smoke: the low-rate processes start one schedule at the one start time handed to them" {
  local cell at
  for cell in lowrate-2k-2000rps lowrate-4k-2000rps; do
    at=$(cat "${DIR}/raw/${cell}.start")
    [[ "${at}" =~ ^[0-9]{13}$ ]]
    jq -s -e --argjson at "${at}" 'length >= 2 and all(.[]; .schedule_started_at
      | (sub("\\.[0-9]+Z$"; "Z") | fromdate) * 1000 + ((capture("\\.(?<f>[0-9]{3})").f // "000") | tonumber) == $at)' \
      "${DIR}/raw/${cell}".client-*.json
    grep -q '"event":"ready"' "${DIR}/raw/${cell}.client-1.log"
  done
}

@test "c100k: a CONNS step that is not a count is refused before anything starts (exit 2)" {
  run bash 03-c10k/run_c10k_beyond.sh -l local -p smoke -s CONNS=20k,50x
  [ "$status" -eq 2 ]
  [[ "$output" == *"CONNS"*"20k,50k,100k"* ]]
}
