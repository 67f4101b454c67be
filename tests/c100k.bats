#!/usr/bin/env bats
# shellcheck disable=SC2016 # jq programs are single-quoted on purpose
# Phase 3 towards C1M, smoke on the real netns lab: the C1M plan scaled
# down. run_c10k_beyond.sh with SERVER=nginx and a CONNS list of small
# steps (2k,4k; the low-rate scenario, which holds its connections as idle
# does and carries requests; phase3.bats runs idle) under a hard fd limit
# of 1500, so that every step is split across nginx workers (one listen
# socket each, reuseport) and client processes (one per source address),
# as 1m is under the lab's 20000; the 4k step's memory is planned from what
# the 2k step measured.
# One run (setup_file); the tests read it: the steps, memory per connection
# three ways, the p99 of the merged histograms recomputed here from the
# processes' raw files, the one start time of the low-rate processes.
# Then a 4k low-rate step with two client hosts (CLIENTS=2, the lab up again
# with a switch): the plan puts processes on both, each started there, and
# the merged figures come from both hosts' raw files; and Ctrl-C on it.

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
  bash -c 'ulimit -n "$1" && exec bash 03-c10k/run_c10k_beyond.sh -l netns -p smoke -s SERVER=nginx \
    -s CONNS=2k,4k -s SCENARIOS=lowrate -s DURATION=2' _ "${C100K_FD}" >"${C100K_OUT}" 2>&1 || echo "exit $?" >>"${C100K_OUT}"
  # Two client hosts, under the same fd limit (client 2's sshd has it).
  lab/netns.sh down >/dev/null
  (ulimit -n "${C100K_FD}" && CLIENTS=2 lab/netns.sh up >/dev/null)
  export C100K_OUT2="${BATS_FILE_TMPDIR}/run2.out"
  # One step: 4k over two hosts is two processes on each, one address
  # added on each (the steps themselves are tested above).
  bash -c 'ulimit -n "$1" && exec bash 03-c10k/run_c10k_beyond.sh -l netns -p smoke -s CLIENTS=2 \
    -s CONNS=4k -s SCENARIOS=lowrate -s DURATION=2' _ "${C100K_FD}" >"${C100K_OUT2}" 2>&1 || echo "exit $?" >>"${C100K_OUT2}"
}

teardown_file() {
  [[ ${EUID} -eq 0 ]] || return 0
  CLIENTS=2 lab/netns.sh down >/dev/null || true
  if ((C100K_WAS_UP)); then lab/netns.sh up >/dev/null || true; fi
  [[ -z "${C100K_ROOT:-}" ]] || rm -rf "${C100K_ROOT}"
}

setup() {
  cd "${REPO}" || return 1
  need_root
  DIR=$(results_line "$(cat "${C100K_OUT}")")
  SUM="${DIR}/summary.json"
}

@test "c100k smoke: every step of CONNS=2k,4k ran with nginx, split across processes as C1M is, and nothing is left" {
  tail -n 5 "${C100K_OUT}"
  run grep -q '^exit ' "${C100K_OUT}"
  [ "$status" -ne 0 ]
  jq -e '.status == "ok" and ([.cells[].name] == ["lowrate-2k-2000rps","lowrate-4k-2000rps"])
    and all(.cells[]; .status == "ok")' "${SUM}"
  jq -e 'all(.cells[]; .metrics.connections_established == .metrics.connections_target
    and .metrics.server_established == .metrics.connections_target
    and .metrics.server_procs >= 2 and .metrics.client_procs >= 2)' "${SUM}"
  grep -q '^CONNS=2k,4k$' "${DIR}/run.env" || grep -q 'CONNS=2k,4k' "${DIR}/run.env"
  # nginx got the plan's processes as workers, each with its own socket;
  # the 4k step's memory came from the 2k step's measured cost.
  jq -e '.cells[1].metrics.server_procs == 4' "${SUM}"
  grep -q '^server.nginx=worker_processes=4 worker_connections=1436 worker_rlimit_nofile=1500 .* reuseport=on$' "${DIR}/run.env"
  jq -e '.mem_basis | startswith("cost measured at lowrate-2k-2000rps (MemAvailable fell ")' "${DIR}/raw/lowrate-4k-2000rps.plan.json"
  jq -e '.mem_basis | startswith("estimate (server nginx 4 ")' "${DIR}/raw/lowrate-2k-2000rps.plan.json"
  # The OOM killer's count before and after, unchanged.
  for w in before after; do grep -q "^oom_kill\.${w}\.server=[0-9][0-9]*$" "${DIR}/run.env"; done
  [ "$(sed -n 's/^oom_kill\.before\.server=//p' "${DIR}/run.env")" = "$(sed -n 's/^oom_kill\.after\.server=//p' "${DIR}/run.env")" ]
  # The addresses the run added are gone again.
  run bash -c 'ip -n "$1" -o -4 addr show dev csbc0 | grep -v " inet 198\.18\.0\.2/"' _ "${LAB_ID}-cli"
  [ -z "$output" ]
  pids_gone "${DIR}"
}

@test "c100k smoke: memory per connection three ways at every step (server, client, kernel) and their chart" {
  jq -c '.cells[] | [.name, (.metrics | .server_rss_per_conn_kb, .client_rss_per_conn_kb, .kernel_tcp_slab_kb_per_conn,
    .kernel_tcp_mem_kb_per_conn, .tcp_slab_objs_before, .tcp_slab_objs_held)]' "${SUM}"
  jq -e 'all(.cells[]; .metrics as $m
    | $m.server_rss_per_conn_kb > 0 and $m.server_rss_per_conn_kb < 100 and $m.host_mem_kb_per_conn != null
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
  # (Go's RFC 3339 stamps drop trailing zeros: ".12Z" is 120 ms.)
  local cell at
  for cell in lowrate-2k-2000rps lowrate-4k-2000rps; do
    at=$(cat "${DIR}/raw/${cell}.start")
    [[ "${at}" =~ ^[0-9]{13}$ ]]
    jq -s -e --argjson at "${at}" 'length >= 2 and all(.[]; .schedule_started_at
      | (sub("\\.[0-9]+Z$"; "Z") | fromdate) * 1000 + ((capture("\\.(?<f>[0-9]+)Z$").f // "" | . + "000" | .[0:3]) | tonumber) == $at)' \
      "${DIR}/raw/${cell}".client-*.json
    grep -q '"event":"ready"' "${DIR}/raw/${cell}.client-1.log"
  done
}

@test "c100k: a CONNS step that is not a count is refused before anything starts (exit 2)" {
  run bash 03-c10k/run_c10k_beyond.sh -l local -p smoke -s CONNS=20k,50x
  [ "$status" -eq 2 ]
  [[ "$output" == *"CONNS"*"20k,50k,100k,1m"* ]]
}

# two_hosts_clean DIR: nothing of a CLIENTS=2 run is left: no process it
# recorded on any host, no address it added on either client, client 2's
# work directory removed.
two_hosts_clean() {
  local pid_name wd
  while read -r pid_name; do
    if alive "${pid_name%% *}"; then
      echo "still running: ${pid_name}" >&2
      return 1
    fi
  done < <(sed -n 's/^started\.\(server\|client[0-9]*\)=//p' "$1/run.env")
  local added
  added=$(ip -n "${LAB_ID}-cli" -o -4 addr show dev csbc0 | grep -v ' inet 198\.18\.0\.2/'
    ip -n "${LAB_ID}-cli2" -o -4 addr show dev csbc1 | grep -v ' inet 198\.18\.2\.2/') || true
  [ -z "${added}" ]
  wd=$(sed -n 's/^client\.2\.workdir=//p' "$1/run.env")
  [[ -n "${wd}" && ! -e "${wd}" ]]
}

@test "c100k, two client hosts: processes on both, connections held, merged p99 of both hosts' files, nothing left" {
  local d cell files want got at
  tail -n 5 "${C100K_OUT2}"
  run grep -q '^exit ' "${C100K_OUT2}"
  [ "$status" -ne 0 ]
  d=$(results_line "$(cat "${C100K_OUT2}")")
  jq -e '.status == "ok" and ([.cells[].name] == ["lowrate-4k-2000rps"]) and all(.cells[]; .status == "ok"
    and .metrics.connections_established == .metrics.connections_target
    and .metrics.server_established == .metrics.connections_target
    and .metrics.client_established == .metrics.connections_target
    and .metrics.rps_achieved_ratio >= 0.98 and .details.percentile_basis == "merged_histogram"
    and (.details.client_hosts | map(.host) == ["client1","client2"])
    and (.details.client_hosts | all(.[]; .connections_established > 0 and .client_rss_per_conn_kb > 0)))' "${d}/summary.json"
  cell=lowrate-4k-2000rps
  # The plan put processes on both hosts, from each host's own range.
  jq -e '([.sources[].host] | unique) == ["client1","client2"] and ([.sources[] | select(.add)] | length) >= 2
    and all(.sources[]; (.host == "client1" and (.ip | startswith("198.18.0.")))
      or (.host == "client2" and (.ip | startswith("198.18.2."))))' "${d}/raw/${cell}.plan.json"
  files=("${d}/raw/${cell}".client-*.json)
  [ "${#files[@]}" -eq "$(jq '.sources | length' "${d}/raw/${cell}.plan.json")" ]
  want=$(merged_p99 latency_histogram "${files[@]}")
  got=$(jq --arg c "${cell}" '.cells[] | select(.name == $c) | .metrics.latency_p99_ms' "${d}/summary.json")
  echo "${cell}: summary p99 ${got} ms, recomputed ${want} ms"
  [ "${got}" = "${want}" ]
  jq -s -e '(map(.latency_histogram.count) | add) == (map(.requests_completed) | add)' "${files[@]}"
  # One start time, handed to both hosts, each process's schedule from it
  # (RFC 3339 drops a fraction's trailing zeros: .870 is written .87).
  at=$(cat "${d}/raw/${cell}.start")
  jq -s -e --argjson at "${at}" 'all(.[]; .schedule_started_at
    | (sub("\\.[0-9]+Z$"; "Z") | fromdate) * 1000 + ((((capture("\\.(?<f>[0-9]+)Z$").f // "") + "000")[0:3]) | tonumber) == $at)' "${files[@]}"
  # Each host's connclient followed by pidstat there; its sockstat kept.
  [ -s "${d}/monitors/client1/pidstat-connclient-${cell}.txt" ]
  [ -s "${d}/monitors/client2/pidstat-connclient-${cell}.txt" ]
  [ -s "${d}/monitors/client2/c10k/${cell}.held.sockstat" ]
  grep -q '^client_addrs_removed=.*198\.18\.2\.' "${d}/run.env"
  # The report gives each host's share.
  grep -q '^| 4k low-rate at 2000 req/s | client2 | 2 | 2000 | ' "${d}/Report_03-c10k.md"
  two_hosts_clean "${d}"
}

@test "c100k, two client hosts: Ctrl-C during a hold stops every process on all three hosts, addresses removed" {
  local out="${BATS_TEST_TMPDIR}/out" d rc=0
  # env --default-signal: the SIGINT a terminal would give (a background
  # job of a non-interactive shell starts with it ignored).
  env --default-signal=INT bash -c 'ulimit -n "$1" && exec bash 03-c10k/run_c10k_beyond.sh -l netns -p smoke -s CLIENTS=2 \
    -s CONNS=2k -s SCENARIOS=idle -s HOLD=60' _ "${C100K_FD}" >"${out}" 2>&1 &
  local pid=$!
  wait_for "${out}" 'cell [0-9]+/[0-9]+ idle-2k \(' 180
  # Both hosts' connclient running before the signal (the runner has their
  # PIDs by then); on a loaded machine client2's launch over ssh ends
  # seconds after client1's. The hosts are namespaces here: pgrep sees both.
  wait_procs 1 'connclient idle .*-source 198\.18\.0\.' || true
  wait_procs 1 'connclient idle .*-source 198\.18\.2\.' || true
  sleep 2
  kill -INT "${pid}"
  wait "${pid}" || rc=$?
  tail -n 8 "${out}"
  interrupted "${rc}" "${out}" 130
  d=$(results_line "$(cat "${out}")")
  jq -e --arg sig "$(signal_word SIGINT)" '.status == "partial" and (.error | test($sig)) and .cells[0].status == "failed"' "${d}/summary.json"
  grep -q 'stopping client2 .*process [0-9]* start-at' "${out}"
  # What client 2's process wrote until then came back with the run.
  [ -s "${d}/raw/idle-2k.client-2.log" ]
  two_hosts_clean "${d}"
  trap_bug_skip
}
