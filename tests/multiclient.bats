#!/usr/bin/env bats
# N client hosts (CLIENTS=2) on the netns lab, smoke profile: Phases 0, 1
# and 2 end to end with both clients' raw files, timings and run.env; Ctrl-C
# mid-run leaves no process on any of the three hosts; a skewed clock and a
# client whose route leaves through the wrong NIC are refused, named.
# One lab with two clients serves every test (brought up once, taken down
# at the end when this file brought it up); each run finishes in seconds.
# The merged figures are recomputed from the per-client raw files.

load helpers

setup_file() {
  [[ ${EUID} -eq 0 ]] || return 0
  export CSB_MC_WAS_UP=0
  if CLIENTS=2 "${BATS_TEST_DIRNAME}/../lab/netns.sh" status >/dev/null 2>&1; then CSB_MC_WAS_UP=1; fi
  CLIENTS=2 "${BATS_TEST_DIRNAME}/../lab/netns.sh" up >/dev/null
}

teardown_file() {
  [[ ${EUID} -eq 0 ]] || return 0
  ((CSB_MC_WAS_UP)) || "${BATS_TEST_DIRNAME}/../lab/netns.sh" down >/dev/null 2>&1 || true
}

setup() {
  common_setup
  unset PAYLOADS THREADS CONNECTIONS WARMUP CONCURRENCY LOADGEN REPEAT CLIENT_HOSTS CPU_PIN CLOCK_BOUND_MS
  unset CSB_TEST_CLOCK_OFFSET_MS
  export CLIENTS=2 LAB_KEEP=1 DURATION=1 WARMUP=0
}

teardown() { common_teardown; }

# check_clients_run DIR CELL...: the run's cells are ok, each with both
# clients' raw file and a timing of one due time, and run.env describes
# both clients.
check_clients_run() {
  local dir=$1 cell k due ext
  shift
  grep -qx 'status=ok' "${dir}/run.env"
  grep -qx 'clients=2' "${dir}/run.env"
  grep -qx 'client.1.label=client1' "${dir}/run.env"
  grep -qx 'client.1.ssh=local' "${dir}/run.env"
  grep -qx 'client.2.label=client2' "${dir}/run.env"
  grep -qx 'client.2.ssh=root@198.18.2.2' "${dir}/run.env"
  grep -qx 'client.2.addrs=198.18.2.2' "${dir}/run.env"
  grep -qx 'client.2.nic=csbc1' "${dir}/run.env"
  grep -qE '^client\.2\.clock_offset_ms=-?[0-9]+\.[0-9]{3}$' "${dir}/run.env"
  grep -qx 'clock_bound_ms=100' "${dir}/run.env"
  if (($(nproc) >= 2)); then
    grep -qx 'server.cpus=0' "${dir}/run.env"
    grep -qE '^client\.2\.cpus=1' "${dir}/run.env"
  fi
  for cell in "$@"; do
    grep -qP "^${cell}\tok\t.*clients=2;.*client1\." "${dir}/cells.tsv" || { cat "${dir}/cells.tsv"; return 1; }
    due=""
    for k in 1 2; do
      ext=json
      [[ -f "${dir}/raw/client${k}/${cell}.txt" ]] && ext=txt
      [ -s "${dir}/raw/client${k}/${cell}.${ext}" ]
      [ ! -e "${dir}/raw/${cell}.${ext}" ]
      local t="${dir}/raw/client${k}/${cell}.timing.json"
      grep -qE '^\{"schema":"csb.timing/v1","due_ms":[0-9]+,"start_ms":[0-9]+,"end_ms":[0-9]+,"exit":0\}$' "${t}"
      local d
      d=$(sed 's/.*"due_ms":\([0-9]*\).*/\1/' "${t}")
      [[ -z "${due}" || "${due}" == "${d}" ]] || { echo "due times differ: ${due} ${d}"; return 1; }
      due=${d}
    done
  done
  for k in 1 2; do
    [ -s "${dir}/monitors/client${k}/mpstat.json" ]
    [ -s "${dir}/monitors/client${k}/sar.json" ]
    [ -s "${dir}/monitors/client${k}/procs-pidstat.txt" ]
    [ -s "${dir}/env/client${k}/facts.env" ]
    ls "${dir}/monitors/client${k}/counters/"*.after.nstat.json >/dev/null
  done
  [ ! -e "${dir}/monitors/client" ]
  [ ! -e "${dir}/env/client" ]
  # Client 2's work directory was copied back and removed.
  local wd
  wd=$(sed -n 's/^client\.2\.workdir=//p' "${dir}/run.env")
  [[ "${wd}" == /tmp/csb-run.* && ! -e "${wd}" ]]
  pids_gone "${dir}"
}

@test "multiclient: CLIENTS and CLIENT_HOSTS refused when they cannot work" {
  run env CLIENTS=9 bash 00-iperf3/run_iperf3_baseline.sh -l netns -p smoke
  [ "$status" -eq 2 ]
  [[ "$output" == *"error: CLIENTS=9 is not valid"*"from 1 to 8"* ]]
  run env CLIENTS=2 bash 00-iperf3/run_iperf3_baseline.sh -l local -p smoke
  [ "$status" -eq 2 ]
  [[ "$output" == *"LAB=local has one client host"* ]]
  run env CLIENT_HOSTS="local/198.18.0.2/csbc0" bash 00-iperf3/run_iperf3_baseline.sh -l netns -p smoke
  [ "$status" -eq 2 ]
  [[ "$output" == *"leave CLIENT_HOSTS empty"* ]]
  run env CLIENTS=2 bash 00-iperf3/run_iperf3_baseline.sh -l ssh -p smoke -s SERVER_SSH=root@198.19.0.1 -s SERVER_IP=198.19.0.1 -s CLIENT_IP=198.19.0.2
  [ "$status" -eq 2 ]
  [[ "$output" == *"CLIENTS=2 with LAB=ssh needs CLIENT_HOSTS"* ]]
  run env -u CLIENTS CLIENT_HOSTS="me@c1/198.19.0.2/eth0 local/198.19.0.3/eth0" bash 00-iperf3/run_iperf3_baseline.sh -l ssh -p smoke -s SERVER_SSH=root@198.19.0.1 -s SERVER_IP=198.19.0.1
  [ "$status" -eq 2 ]
  [[ "$output" == *"the first entry must be local"* ]]
  run env -u CLIENTS CLIENT_HOSTS="local/198.19.0.2/eth0 me@c2/198.19.0.x/eth0" bash 00-iperf3/run_iperf3_baseline.sh -l ssh -p smoke -s SERVER_SSH=root@198.19.0.1 -s SERVER_IP=198.19.0.1
  [ "$status" -eq 2 ]
  [[ "$output" == *"error: CLIENT_HOSTS="*"DEST/ADDR[+ADDR...]/NIC"* ]]
  run env -u CLIENTS CPU_PIN=1 bash 00-iperf3/run_iperf3_baseline.sh -l ssh -p smoke -s SERVER_SSH=root@198.19.0.1 -s SERVER_IP=198.19.0.1 -s CLIENT_IP=198.19.0.2
  [ "$status" -eq 2 ]
  [[ "$output" == *"CPU_PIN=1 with LAB=ssh"* ]]
  [ -z "$(ls -A "${RESULTS_ROOT}")" ]
  # Accepted: CLIENTS follows CLIENT_HOSTS, client 1 gives CLIENT_IP and CLIENT_NIC.
  # shellcheck disable=SC2016 # expanded by the inner bash
  run env -u CLIENTS CLIENT_HOSTS="local/198.19.0.2/eth0 me@c2/198.19.0.3+198.19.0.4/eth1" bash -c 'source lib/init.sh
csb_config_load -l ssh -s SERVER_SSH=root@198.19.0.1 -s SERVER_IP=198.19.0.1
echo "$CLIENTS $CLIENT_IP $CLIENT_NIC ${CSB_H_LABEL[1]} ${CSB_H_DEST[2]} ${CSB_H_ADDRS[2]} ${CSB_H_NIC[2]} ${CSB_H_LABEL[2]} ${CSB_CPUS_SERVER:-unpinned}"'
  [ "$status" -eq 0 ]
  [ "$output" = "2 198.19.0.2 eth0 client1 me@c2 198.19.0.3,198.19.0.4 eth1 client2 unpinned" ]
}

@test "multiclient phase 0 (netns, smoke, CLIENTS=2): an iperf3 per client, all at once" {
  need_root
  run bash 00-iperf3/run_iperf3_baseline.sh -l netns -p smoke -s IPERF_PORT=15381
  echo "$output" | grep -v ' CMD ' | tail -n 15
  [ "$status" -eq 0 ]
  local dir
  dir=$(results_line "$output")
  check_clients_run "${dir}" c2s-1 c2s-4 s2c-1 s2c-4
  grep -q 'client2.port=15382' "${dir}/cells.tsv"
  [ -s "${dir}/monitors/client2/pidstat-iperf3-s2c-4.txt" ]
  grep -q '"end"' "${dir}/raw/client2/s2c-4.json"
  # The aggregate: the plain sum of the clients' own runs is the sum of their
  # raw figures; the figure over the shared window sums the clients' shares.
  # The two agree within 2 %, and by as much more as the clients ran apart:
  # the link is shared, and a client alone for the start or end spread (a
  # loaded machine delays an iperf3's setup) had all of it then, which its
  # own run counts and the window does not.
  local c own
  for c in s2c-1 c2s-4; do
    own=$(jq -s 'map(.end.sum_received.bits_per_second / 1e6) | add' "${dir}/raw/client1/${c}.json" "${dir}/raw/client2/${c}.json")
    jq -c --arg c "${c}" '.cells[] | select(.name == $c) | {overlap, throughput_mbps: .metrics.throughput_mbps}' "${dir}/summary.json"
    jq -e --arg c "${c}" --argjson own "${own}" '.cells[] | select(.name == $c)
      | (.metrics.throughput_own_runs_mbps - $own | fabs) < 0.02
      and (.metrics.throughput_mbps - ([.clients[].metrics.overlap_mbps] | add) | fabs) < 0.02
      and (.metrics.throughput_mbps / $own - 1 | fabs)
        < 0.02 + (.overlap.start_spread_ms + .overlap.end_spread_ms) / (1000 * .overlap.s)' "${dir}/summary.json"
  done
}

@test "multiclient phase 1 (netns, smoke, CLIENTS=2): connections split, one due time" {
  need_root
  run bash 01-http-baseline/run_http_baseline.sh -l netns -p smoke -s SERVER_PORT=18381 -s PAYLOADS=100k -s CONNECTIONS=5
  echo "$output" | grep -v ' CMD ' | tail -n 15
  [ "$status" -eq 0 ]
  local dir
  dir=$(results_line "$output")
  check_clients_run "${dir}" 100k
  grep -qP ';connections=5;.*client1\.connections=3;.*client2\.connections=2' "${dir}/cells.tsv"
  grep -q -- '-c 2 ' "${dir}/logs/console.log"
  grep -q '^CSB_WRK_JSON ' "${dir}/raw/client2/100k.txt"
  [ -s "${dir}/monitors/client2/pidstat-loadgen-100k.txt" ]
  merged_wrk_check "${dir}" 100k
  jq -e '.cells[] | select(.name == "100k") | .latency_merge == "exact"' "${dir}/summary.json"
}

@test "multiclient phase 2 (netns, smoke, CLIENTS=2): each cell's concurrency split" {
  need_root
  run bash 02-http-matrix/run_http_matrix.sh -l netns -p smoke -s SERVER_PORT=18382 -s PAYLOADS=1k -s CONCURRENCY=16 -s LOADGEN=wrk
  echo "$output" | grep -v ' CMD ' | tail -n 15
  [ "$status" -eq 0 ]
  local dir
  dir=$(results_line "$output")
  check_clients_run "${dir}" 1k-c16
  grep -qP 'client1\.connections=8;client1\.threads=[0-9]+;client2\.connections=8' "${dir}/cells.tsv"
  merged_wrk_check "${dir}" 1k-c16
  jq -e '.cells[] | select(.name == "1k-c16") | .latency_merge == "exact"' "${dir}/summary.json"
}

@test "multiclient: Phase 3, every scenario from both hosts: active split, one hold instant, merged from each host's raw files" {
  need_root
  # The active cell's connections are counted by a snapshot each host takes
  # half way through wrk's run (DURATION=6: 3 s in).
  run bash 03-c10k/run_c10k.sh -l netns -p smoke -s SERVER_PORT=18384 -s CONNS=2000 -s RPS=500 -s HOLD=2 -s DURATION=6
  echo "$output" | grep -v ' CMD ' | tail -n 15
  [ "$status" -eq 0 ]
  local dir s f
  dir=$(results_line "$output")
  s="${dir}/summary.json"
  jq -e '.status == "ok" and ([.cells[].name] == ["active-2k-1k", "idle-2k", "lowrate-2k-500rps"]) and all(.cells[]; .status == "ok")' "$s"
  # The active scenario: one wrk per host with its share, merged.
  grep -qP '^active-2k-1k\tok\t.*clients=2' "${dir}/cells.tsv"
  merged_wrk_check "${dir}" active-2k-1k rps_achieved latency_p99_ms
  jq -e '.cells[0] | .details.latency_merge == "exact" and .metrics.connections_established == 2000' "$s" ||
    { jq -c '.cells[0] | {merge: .details.latency_merge, established: .metrics.connections_established, clients}' "$s" &&
      grep -h '' "${dir}"/raw/client*/active-2k-1k.timing.json; return 1; }
  # Idle: every process of both hosts held its connections over one instant.
  local files=("${dir}/raw/idle-2k".client-*.json)
  jq -s -e 'map(.hold_end_agreed_at_ms) | unique | length == 1' "${files[@]}"
  jq -s -e '(map(.hold_began_at_ms) | max) <= .[0].hold_end_agreed_at_ms and .[0].hold_end_agreed_at_ms <= (map(.hold_ended_at_ms) | min)' "${files[@]}"
  jq -e '.cells[1].metrics | .connections_established == 2000 and .server_established == 2000 and .client_established == 2000' "$s"
  jq -e '[.sources[].host] | unique == ["client1", "client2"]' "${dir}/raw/idle-2k.plan.json"
  # Low rate: the p99 of both hosts' merged histograms, recomputed here.
  files=("${dir}/raw/lowrate-2k-500rps".client-*.json)
  f=$(merged_p99 latency_histogram "${files[@]}")
  [ "$(jq '.cells[2].metrics.latency_p99_ms' "$s")" = "${f}" ]
  pids_gone "${dir}"
}

@test "multiclient: Phase 3 over https from both hosts: each trusts the run's CA, handshakes timed; active measured after its warm-up" {
  need_root
  run bash 03-c10k/run_c10k.sh -l netns -p smoke -s SERVER_PORT=18385 -s SCHEME=https \
    -s CONNS=600 -s RPS=200 -s HOLD=2 -s DURATION=3
  echo "$output" | grep -v ' CMD ' | tail -n 15
  [ "$status" -eq 0 ]
  local dir
  dir=$(results_line "$output")
  jq -e '.status == "ok" and all(.cells[]; .status == "ok") and .cells[1].metrics.connections_established == 600' "${dir}/summary.json"
  # Active over TLS: h2load --h1 on both hosts after a warm-up sized from
  # the probe of the server's handshakes; every connection up half way
  # through the measured seconds.
  jq -e '.cells[0] | .name == "active-600-1k" and .params.loadgen == "h2load" and .params.http == "1.1"
    and (.params.warmup_s | tonumber) >= 2 and (.params.handshakes_per_s | tonumber) > 0
    and .metrics.connections_established == 600 and .metrics.requests_completed > 0 and .details.latency_merge == "exact"' "${dir}/summary.json" ||
    { jq -c '.cells[0] | {params, established: .metrics.connections_established, done: .metrics.requests_completed, merge: .details.latency_merge}' "${dir}/summary.json"; return 1; }
  grep -q '^finished in ' "${dir}/raw/client1/active-600-1k.tls-probe.txt"
  grep -q 'client2: .* h2load .*--warm-up-time=[0-9]* --h1 https://' "${dir}/logs/console.log"
  jq -s -e 'all(.[]; .tls.handshakes_full > 0 and .tls.first.version == "TLS 1.3")' "${dir}/raw/idle-600".client-*.json
  grep -q 'client2: .*/bin/connclient idle .* -tls-ca /tmp/csb-run\.[^ ]*/bin/tls-ca.pem' "${dir}/logs/console.log"
  pids_gone "${dir}"
}

@test "multiclient: Phase 4 from both hosts at one due time: bursts and churn split, merged" {
  need_root
  run bash 04-connections/run_connections.sh -l netns -p smoke -s SERVER_PORT=18386 -s SCENARIOS=backlog,churn \
    -s BACKLOGS=4096 -s BURST=1000 -s CHURN_CLOSE=server -s CHURN_RATES=500
  echo "$output" | grep -v ' CMD ' | tail -n 15
  [ "$status" -eq 0 ]
  local dir s
  dir=$(results_line "$output")
  s="${dir}/summary.json"
  check_clients_run "${dir}" backlog-4096 churn-server-500
  grep -qP 'client1\.connections=500;client1\.threads=1;client2\.connections=500' "${dir}/cells.tsv"
  # The cell's counts are the sums of the hosts' raw results.
  local c
  for c in backlog-4096 churn-server-500; do
    jq -s -e --slurpfile sum "$s" --arg c "$c" '(map(.connections_completed) | add) as $n
      | $sum[0].cells[] | select(.name == $c) | .metrics.connections_completed == $n' "${dir}/raw/client1/$c.json" "${dir}/raw/client2/$c.json"
  done
  grep -q 'prediction churn-server-500 on client2: ' "${dir}/logs/console.log"
}

@test "multiclient: Ctrl-C mid-cell stops everything on the server and both clients" {
  need_root
  local log="${BATS_TEST_TMPDIR}/run.log"
  # A background job of a non-interactive shell starts with SIGINT ignored;
  # env --default-signal gives the runner the SIGINT a terminal would.
  DURATION=20 env --default-signal=INT bash 01-http-baseline/run_http_baseline.sh -l netns -p smoke -s SERVER_PORT=18383 -s PAYLOADS=1k >"${log}" 2>&1 &
  local pid=$!
  # Both client hosts' wrk running before the signal (the runner has their
  # PIDs by then: they start at the due time, after their launch returned);
  # on a loaded machine client2's launch over ssh ends seconds after
  # client1's. The hosts are namespaces of this machine: pgrep sees both.
  # The signal comes once the runner has recorded client2's start-at (its
  # launch over ssh returned): a signal during the launch is the other
  # case, "never tracked, stopped now", that the lost-host test covers.
  wait_for "${log}" 'CMD client2: .*/csb-run\.[^ ]*/bin/csb start-at' 180
  local dir
  dir=$(sed -n 's/.* INFO run [^ ]* (.*) in //p' "${log}" | head -n 1)
  [ -n "${dir}" ]
  wait_for "${dir}/run.env" '^started\.client2=[0-9]+ start-at$' 180
  wait_procs 2 'wrk -t [0-9]+ -c 8 -d 20s .*:18383/payload/1k' || true
  sleep 1
  kill -INT "${pid}"
  local rc=0
  wait "${pid}" || rc=$?
  tail -n 15 "${log}"
  [ "${rc}" -ne 0 ]
  [ "${dir}" == "$(results_line "$(cat "${log}")")" ]
  grep -qx 'status=partial' "${dir}/run.env"
  grep -q '^started\.client2=[0-9]* start-at$' "${dir}/run.env"
  grep -q 'stopping client2 .*process [0-9]* start-at' "${log}"
  pids_gone "${dir}"
  local wd
  wd=$(sed -n 's/^client\.2\.workdir=//p' "${dir}/run.env")
  [[ -n "${wd}" && ! -e "${wd}" ]]
  # What client 2 measured until then was copied back with its timing.
  [ -e "${dir}/raw/client2/1k.timing.json" ]
}

@test "multiclient: a runner killed outright, then a client host lost: each next run stops what was left, on every host, by name" {
  need_root
  local log1="${BATS_TEST_TMPDIR}/killed.log" log2="${BATS_TEST_TMPDIR}/lost.log" runner dir1 dir2 h p rc=0
  # 1. SIGKILL mid-cell: no trap runs; monitors keep running on all three hosts.
  # (Its TMPDIR is the test's: the ERR trap's private directory that a
  # killed runner cannot remove goes with the test's.)
  TMPDIR=${BATS_TEST_TMPDIR} bash 01-http-baseline/run_http_baseline.sh -l netns -p smoke -s PAYLOADS=1k -s DURATION=3 >"${log1}" 2>&1 &
  runner=$!
  wait_for "${log1}" 'cell [0-9]+/[0-9]+ 1k .* starts' 180
  kill -KILL "${runner}"
  wait "${runner}" || true
  dir1=$(sed -n 's/^.* INFO run .* in \(.*\)$/\1/p' "${log1}" | head -n 1)
  for h in server client1 client2; do
    grep -q "^started\.${h}=[0-9]* sar$" "${dir1}/run.env" || { echo "no sar on ${h}"; return 1; }
  done
  # The killed runner's ssh masters (the next run on any lab may stop them:
  # the tests of the other lane run at the same time).
  local f ctl="" masters
  for f in /tmp/csb-ssh.*/runner; do
    [[ -f "${f}" ]] && read -r p _ <"${f}" && [ "${p}" = "${runner}" ] && ctl=${f%/runner}
  done
  # 2. The next run stops them on every host, filed by host; then client2's sshd dies mid-cell.
  bash 01-http-baseline/run_http_baseline.sh -l netns -p smoke -s PAYLOADS=1k -s DURATION=4 -s SSH_RETRY=2 \
    -s LAB_LOCK=wait -s LAB_LOCK_WAIT=60 >"${log2}" 2>&1 &
  runner=$!
  wait_for "${log2}" 'cell [0-9]+/[0-9]+ 1k .* starts' 180 || { grep -v ' CMD ' "${log2}"; return 1; }
  for p in $(ip netns pids "${LAB_ID}-cli2"); do
    [ "$(cat "/proc/${p}/comm" 2>/dev/null)" = sshd ] && kill -KILL "${p}"
  done
  wait "${runner}" || rc=$?
  grep -v ' CMD ' "${log2}" | tail -n 12
  for h in "the server host" client1 client2; do
    grep -q "a run that lost or never cleaned up ${h} .*(runner PID [0-9]*, ${dir1}) left these running there; stopped now: .* sar -o " "${log2}" ||
      { echo "${h}: not reaped"; grep -v ' CMD ' "${log2}" | head -n 30; return 1; }
  done
  for h in server client1 client2; do [ -d "${dir1}/${h}-leftovers" ]; done
  if [[ -n "${ctl}" ]]; then
    [ ! -e "${ctl}" ]
    masters=$(pgrep -f -- "ssh: ${ctl}/" || true)
    [ -z "${masters}" ]
  fi
  # Stopped by this run, or by one in the other lane before it.
  grep -q "ssh master connections left by runner PID ${runner}, which is gone .*: PID [0-9]* PID [0-9]* stopped" "${log2}" || [[ -n "${ctl}" ]]
  pids_gone "${dir1}"
  [ "${rc}" -eq 4 ]
  grep -q 'lost ssh to client2.* for 2 s; stopping the run' "${log2}"
  run grep -q 'could not start' "${log2}"
  [ "$status" -ne 0 ]
  grep -q 'client2.* is unreachable: left running there, to be stopped by the next run against it .*: PID [0-9]* (sar)' "${log2}"
  dir2=$(results_line "$(cat "${log2}")")
  grep -qx 'status=partial' "${dir2}/run.env"
  # 3. Its sshd back, the next run stops what client2 kept running and files it under client2.
  lab/netns.sh up >/dev/null
  run bash 01-http-baseline/run_http_baseline.sh -l netns -p smoke -s PAYLOADS=1k -s DURATION=1
  [ "$status" -eq 0 ] || { echo "$output" | tail -n 20; return 1; }
  [[ "$output" == *"a run that lost or never cleaned up client2"*"${dir2}) left these running there; stopped now: "*" sar -o "* ]]
  [ -d "${dir2}/client2-leftovers" ]
  pids_gone "${dir2}"
}

@test "multiclient: a client whose clock is off is refused, named" {
  need_root
  # A namespace shares the machine's clock: the test-only offset stands in.
  run env CSB_TEST_CLOCK_OFFSET_MS=client2=5000 bash 00-iperf3/run_iperf3_baseline.sh -l netns -p smoke
  [ "$status" -eq 5 ]
  [[ "$output" == *"error: the clock of client2 (root@198.18.2.2) is off by 5"*" ms (+- "*"more than CLOCK_BOUND_MS=100"* ]]
  [ -z "$(ls -A "${RESULTS_ROOT}")" ]
}

@test "multiclient: a client whose route leaves through the wrong NIC is refused, named" {
  need_root
  local ns=${LAB_ID}-cli2
  # (A veth pair inside the namespace: the dummy module may be missing.)
  ip -n "${ns}" link add csbwrong type veth peer name csbwrong1
  ip -n "${ns}" link set csbwrong1 up
  ip -n "${ns}" link set csbwrong up
  ip -n "${ns}" route add 198.18.0.1/32 dev csbwrong
  run bash 00-iperf3/run_iperf3_baseline.sh -l netns -p smoke
  ip -n "${ns}" link del csbwrong
  [ "$status" -eq 5 ]
  [[ "$output" == *"error: on client2 (root@198.18.2.2), traffic to SERVER_IP=198.18.0.1 would leave through csbwrong, not its NIC csbc1"* ]]
  [ -z "$(ls -A "${RESULTS_ROOT}")" ]
}
