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
  pids_gone_all "${dir}"
}

# merged_wrk_check DIR CELL: the cell's merged figures are the sum of the
# clients' raw wrk figures and the percentile of their merged distributions,
# recomputed here from raw/client<k>/CELL.txt (wrk's rule: the first value
# whose cumulative count reaches round(p/100 x count)).
merged_wrk_check() {
  local dir=$1 cell=$2 s="$1/summary.json" k rps_sum=0 r
  for k in 1 2; do
    r=$(sed -n 's/^CSB_WRK_JSON //p' "${dir}/raw/client${k}/${cell}.txt" | jq '.requests / .duration_us * 1e6')
    rps_sum=$(jq -n "${rps_sum} + ${r}")
  done
  jq -e --arg c "${cell}" --argjson sum "${rps_sum}" \
    '.cells[] | select(.name == $c) | (.metrics.rps - $sum | fabs) < 0.2 and .latency_merge == "exact"' "$s"
  local p99_us
  p99_us=$(sed -n 's/^CSB_WRK_DIST //p' "${dir}/raw/client1/${cell}.txt" "${dir}/raw/client2/${cell}.txt" |
    jq -s '[.[].values[]] | group_by(.[0]) | map([.[0][0], (map(.[1]) | add)]) as $v
      | ($v | map(.[1]) | add) as $n | (($n * 0.99) + 0.5 | floor) as $r
      | [($r - 1, $r, $r + 1) as $rank
        | reduce $v[] as $p ({c: 0, x: null}; if .x == null then (.c += $p[1] | if .c >= $rank then .x = $p[0] else . end) else . end) | .x]')
  # (A rank either side: jq's doubles may round p/100 x count other than
  # wrk's long doubles.)
  jq -e --arg c "${cell}" --argjson us "${p99_us}" \
    '.cells[] | select(.name == $c) | (.metrics.latency_p99_ms * 1000) as $m | any($us[]; ($m - . | fabs) < 0.5)' "$s" ||
    { echo "p99 at ranks r-1, r, r+1 of the merged distribution: ${p99_us}"; return 1; }
}

# pids_gone_all DIR: every process recorded on any host has exited (the
# netns lab's hosts share this PID space).
pids_gone_all() {
  local pid_name
  while read -r pid_name; do
    if kill -0 "${pid_name%% *}" 2>/dev/null; then
      echo "still running: ${pid_name}" >&2
      return 1
    fi
  done < <(sed -n 's/^started\.\(server\|client[0-9]*\)=//p' "$1/run.env")
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
echo "$CLIENTS $CLIENT_IP $CLIENT_NIC ${CSB_CL_LABEL[1]} ${CSB_CL_SSH[2]} ${CSB_CL_ADDRS[2]} ${CSB_CL_NIC[2]} ${CSB_CL_LABEL[2]} ${CSB_CPUS_SERVER:-unpinned}"'
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
  local c own
  for c in s2c-1 c2s-4; do
    own=$(jq -s 'map(.end.sum_received.bits_per_second / 1e6) | add' "${dir}/raw/client1/${c}.json" "${dir}/raw/client2/${c}.json")
    jq -e --arg c "${c}" --argjson own "${own}" '.cells[] | select(.name == $c)
      | (.metrics.throughput_own_runs_mbps - $own | fabs) < 0.02
      and (.metrics.throughput_mbps - ([.clients[].metrics.overlap_mbps] | add) | fabs) < 0.02
      and (.metrics.throughput_mbps / $own - 1 | fabs) < 0.02' "${dir}/summary.json"
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
}

@test "multiclient phase 2 (netns, smoke, CLIENTS=2): each cell's concurrency split" {
  need_root
  run bash 02-http-matrix/run_http_matrix.sh -l netns -p smoke -s SERVER_PORT=18382 -s PAYLOADS=1k -s CONCURRENCY=16 -s LOADGEN=wrk
  echo "$output" | grep -v ' CMD ' | tail -n 15
  [ "$status" -eq 0 ]
  local dir
  dir=$(results_line "$output")
  check_clients_run "${dir}" 1k-c16
  grep -qP 'client1\.connections=8;client2\.connections=8' "${dir}/cells.tsv"
  merged_wrk_check "${dir}" 1k-c16
}

@test "multiclient: Ctrl-C mid-cell stops everything on the server and both clients" {
  need_root
  local log="${BATS_TEST_TMPDIR}/run.log"
  # A background job of a non-interactive shell starts with SIGINT ignored;
  # env --default-signal gives the runner the SIGINT a terminal would.
  DURATION=20 env --default-signal=INT bash 01-http-baseline/run_http_baseline.sh -l netns -p smoke -s SERVER_PORT=18383 -s PAYLOADS=1k >"${log}" 2>&1 &
  local pid=$!
  wait_for "${log}" 'CMD .*/csb-run\.[^ ]*/bin/csb start-at' 60
  sleep 2
  kill -INT "${pid}"
  local rc=0
  wait "${pid}" || rc=$?
  tail -n 15 "${log}"
  [ "${rc}" -ne 0 ]
  local dir
  dir=$(results_line "$(cat "${log}")")
  grep -qx 'status=partial' "${dir}/run.env"
  grep -q '^started\.client2=[0-9]* start-at$' "${dir}/run.env"
  grep -q 'stopping client2 process [0-9]* start-at' "${log}"
  pids_gone_all "${dir}"
  local wd
  wd=$(sed -n 's/^client\.2\.workdir=//p' "${dir}/run.env")
  [[ -n "${wd}" && ! -e "${wd}" ]]
  # What client 2 measured until then was copied back with its timing.
  [ -e "${dir}/raw/client2/1k.timing.json" ]
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
