#!/usr/bin/env bats
# The rehearsal (rehearsal/): the manual's bash blocks pass shellcheck, every
# step answers -h and refuses bad usage, and the steps walk every phase by
# hand on the netns lab, leaving nothing running behind them.

load helpers

setup() {
  common_setup
  unset DURATION
  REHEARSAL_DIR="$(mktemp -d /tmp/csb-rh-test.XXXXXX)"
  export REHEARSAL_DIR
}

teardown() {
  # A walk that failed half-way: stop its server by the recorded PID, and
  # take down a lab the walk brought up.
  if [[ -s "${REHEARSAL_DIR}/state" ]] && lab_is_up; then
    LAB=netns rehearsal/13_cleanup.sh >/dev/null 2>&1 || true
  fi
  if [[ "${WALK_OWNS_LAB:-0}" == 1 ]] && lab_is_up; then
    lab/netns.sh down >/dev/null 2>&1 || true
  fi
  rm -rf "${REHEARSAL_DIR}"
  common_teardown
}

STEPS=(rehearsal/[0-9][0-9]_*.sh)

# ns_pids: the PIDs in this lab's two namespaces, one per line, sorted.
ns_pids() {
  { ip netns pids "${LAB_ID}-srv" 2>/dev/null; ip netns pids "${LAB_ID}-cli" 2>/dev/null; } | sort -n
}

# step NAME ARGS...: run one step, show its output, require exit 0.
step() {
  run "rehearsal/$1" "${@:2}"
  printf '%s\n' "${output}" | tail -n 40
  [ "${status}" -eq 0 ]
}

@test "the manual's bash blocks pass shellcheck (scripts/check-manual.sh)" {
  run bash scripts/check-manual.sh
  echo "${output}"
  [ "${status}" -eq 0 ]
  [[ "${output}" =~ rehearsal/README.md:\ ([0-9]+)\ bash\ blocks,\ shellcheck\ clean ]]
  ((BASH_REMATCH[1] >= 20))
}

@test "check-manual names the Markdown line of a finding, and refuses an open fence or a bad flag" {
  local md="${REHEARSAL_DIR}/manual.md"
  # shellcheck disable=SC2016 # the $ signs belong to the Markdown being written
  printf '# Title\n\nProse.\n\n```bash\nA=1\ncp $SRC "$A"\n```\n\n```text\n$not bash\n```\n' >"${md}"
  run bash scripts/check-manual.sh "${md}"
  echo "${output}"
  [ "${status}" -eq 1 ]
  [[ "${output}" == *"${md}:7:4: note: Double quote to prevent globbing"*"[SC2086]"* ]]
  [ "$(wc -l <<<"${output}")" -eq 1 ]

  printf '```bash\necho ok\n' >"${md}"
  run bash scripts/check-manual.sh "${md}"
  [ "${status}" -eq 2 ]
  [[ "${output}" == *"${md}:1: \`\`\`bash block is never closed"* ]]

  run bash scripts/check-manual.sh "${REHEARSAL_DIR}/missing.md"
  [ "${status}" -eq 2 ]
  [[ "${output}" == *"cannot read"* ]]

  run bash scripts/check-manual.sh -x
  [ "${status}" -eq 2 ]
  [[ "${output}" == *"error: unknown option -x"* ]]
  run bash scripts/check-manual.sh -h
  [ "${status}" -eq 0 ]
  [[ "${output}" == *"Usage: bash scripts/check-manual.sh"* ]]
}

@test "every step answers -h, and refuses an unknown flag or an extra word with exit 2" {
  [ "${#STEPS[@]}" -ge 12 ]
  local s
  for s in "${STEPS[@]}"; do
    [ -x "${s}" ]
    run "${s}" -h
    [ "${status}" -eq 0 ]
    [[ "${output}" == "Step ${s:10:2}: "* ]]
    [[ "${output}" == *"Usage: ${s}"* ]]
    run "${s}" -Q
    [ "${status}" -eq 2 ]
    [[ "${output}" == *"error: unknown option -Q"* ]]
    run "${s}" w1 w2 w3 w4
    [ "${status}" -eq 2 ]
    [[ "${output}" == *"error: unexpected argument: w"* ]]
  done
  [ -z "$(ls -A "${REHEARSAL_DIR}")" ]
}

@test "bad values are refused before anything starts, naming what is expected" {
  run rehearsal/07_wrk.sh 3k
  [ "${status}" -eq 2 ]
  [[ "${output}" == *"payload size 3k: the rehearsal's server serves 1k,4k,10k,100k"* ]]
  run rehearsal/08_matrix_cell.sh 10k 0
  [ "${status}" -eq 2 ]
  [[ "${output}" == *"CONCURRENCY=0: expected a positive integer"* ]]
  run rehearsal/04_iperf3.sh sideways
  [ "${status}" -eq 2 ]
  [[ "${output}" == *"direction sideways: expected s2c or c2s"* ]]
  run rehearsal/06_watch.sh top
  [ "${status}" -eq 2 ]
  [[ "${output}" == *"tool top: expected sar, mpstat, pidstat, nstat or ss"* ]]
  run rehearsal/10_c10k_lowrate.sh 100 100 /etc/passwd
  [ "${status}" -eq 2 ]
  [[ "${output}" == *"path /etc/passwd: expected /healthz or /payload/SIZE"* ]]
  run rehearsal/11_time_wait.sh -s DURATION=x
  [ "${status}" -eq 2 ]
  [[ "${output}" == *"DURATION=x is not valid"* ]]
  REHEARSAL_DIR=relative/dir run rehearsal/13_cleanup.sh
  [ "${status}" -eq 2 ]
  [[ "${output}" == *"REHEARSAL_DIR=relative/dir: expected an absolute path"* ]]
  run rehearsal/09_c10k_idle.sh -l nowhere
  [ "${status}" -eq 2 ]
  [[ "${output}" == *"LAB=nowhere is not valid"* ]]
  [ -z "$(ls -A "${REHEARSAL_DIR}")" ]
}

@test "a load step without a running server names the step that starts it" {
  # A port of its own: LAB=local's lock is the port, and make test's other
  # lanes run LAB=local on 8080 at the same time.
  export SERVER_PORT=18497
  run rehearsal/07_wrk.sh -l local
  echo "${output}"
  [ "${status}" -eq 1 ]
  [[ "${output}" == *"no server is running for this rehearsal"*"rehearsal/05_start_server.sh"* ]]
  run rehearsal/12_stop_server.sh -l local
  [ "${status}" -eq 0 ]
  [[ "${output}" == *"nothing to stop"* ]]
}

@test "netns: the steps walk every phase by hand, in order, and leave nothing running" {
  need_root
  WALK_OWNS_LAB=1
  lab_is_up && WALK_OWNS_LAB=0
  lab/netns.sh up
  local before
  before=$(ns_pids)
  export LAB=netns DURATION=2

  step 00_check_hosts.sh
  [[ "${output}" == *'client$ ip route get 198.18.0.1'* ]]
  [[ "${output}" == *"ok: benchmark traffic takes csbc0 -> csbs0"* ]]
  # The same check as two real hosts see it: LAB=ssh from the client side.
  run ip netns exec "${LAB_ID}-cli" rehearsal/00_check_hosts.sh -l ssh -s SERVER_SSH=root@198.18.0.1 \
    -s SERVER_IP=198.18.0.1 -s CLIENT_IP=198.18.0.2 -s SERVER_NIC=csbs0 -s CLIENT_NIC=csbc0 \
    -s SSH_KEY="/tmp/${LAB_ID}-netns/id_ed25519" -s SSH_KNOWN_HOSTS="/tmp/${LAB_ID}-netns/known_hosts"
  [ "${status}" -eq 0 ]
  [[ "${output}" == *"ok: benchmark traffic takes csbc0 -> csbs0"* ]]

  step 01_limits.sh
  [ "$(grep -c '^net.core.somaxconn = ' <<<"${output}")" -eq 2 ]
  [[ "${output}" == *"connections at once from 198.18.0.2 to 198.18.0.1:8080"* ]]
  [ -s "${REHEARSAL_DIR}/client/limits-server.txt" ]

  step 02_build.sh
  [[ "${output}" == *'client$ env CGO_ENABLED=0 go build -trimpath -o bin/csb-server ./server'* ]]
  step 03_copy_server.sh
  [[ "${output}" == *"ok: identical"* ]]

  step 04_iperf3.sh
  [[ "${output}" == *'client$ iperf3 --client 198.18.0.1 --port 5201 --bind 198.18.0.2 --time 2 --omit 1 --parallel 1 --reverse'* ]]
  [[ "${output}" == *"receiver"*"iperf Done."* ]]

  step 05_start_server.sh
  [[ "${output}" == *"HTTP/1.1 200 OK"*"server up: PID"* ]]
  local spid
  spid=$(sed -n 's/^server_pid=//p' "${REHEARSAL_DIR}/state")
  [[ "${spid}" =~ ^[0-9]+$ ]]
  run rehearsal/05_start_server.sh
  [ "${status}" -eq 1 ]
  [[ "${output}" == *"the server already runs (PID ${spid})"* ]]

  DURATION=1 step 06_watch.sh
  [[ "${output}" == *'server$ sar -n DEV\,TCP\,ETCP 1 1'*"active/s"* ]]
  DURATION=1 step 06_watch.sh pidstat
  [[ "${output}" == *"pidstat -u -r -p ${spid} 1 1"*"csb-server"* ]]
  step 06_watch.sh nstat client
  [[ "${output}" == *"TcpExtListenOverflows"* ]]

  step 07_wrk.sh 1k 16
  [[ "${output}" == *"Requests/sec:"*"CSB_WRK_JSON {"* ]]
  step 08_matrix_cell.sh 10k 64
  if command -v oha >/dev/null; then
    [[ "${output}" == *'client$ oha --no-tui -z 2s -c 64'* ]]
  else
    [[ "${output}" == *"wrk stands in"*"Requests/sec:"* ]]
  fi
  [ -s "${REHEARSAL_DIR}/client/matrix-10k-c64.txt" ]

  step 09_c10k_idle.sh 500
  [[ "${output}" == *"established on the server's port 8080: 500"* ]]
  [[ "${output}" == *'"connections_alive_end": 500'* ]]
  step 10_c10k_lowrate.sh 500 500
  [[ "${output}" == *'"status": "complete"'* ]]
  [[ "${output}" == *'"requests_completed": 1000'* ]]

  step 11_time_wait.sh
  [[ "${output}" =~ ([0-9]+)\ held\ by\ TIME_WAIT ]]
  # Step 10's 500 connections closed just before; step 09's 500 may be
  # past their 60 s of TIME_WAIT on a loaded machine (984 of 1000 seen).
  ((BASH_REMATCH[1] >= 500))
  step 11_time_wait.sh 1000000
  [[ "${output}" == *"ok: "*" in TIME_WAIT, at most 1000000"* ]]

  step 12_stop_server.sh
  [[ "${output}" == *'"event":"shutdown"'*"stopped: PID ${spid}"* ]]
  run alive "${spid}"
  [ "$status" -ne 0 ]
  step 13_cleanup.sh
  [[ "${output}" == *"clean"* ]]
  [ ! -e "${REHEARSAL_DIR}" ]

  # Nothing a step started remains in either namespace (the lab's sshd was
  # there before the walk and stays).
  # An sshd session may take a moment to end after its client has gone.
  local after new i
  for ((i = 0; i < 30; i++)); do
    after=$(ns_pids)
    new=$(comm -13 <(echo "${before}") <(echo "${after}"))
    [ -z "${new}" ] && break
    sleep 0.1
  done
  echo "before: ${before//$'\n'/ }; after: ${after//$'\n'/ }"
  [ -z "${new}" ] || ps -o pid,args -p "${new//$'\n'/,}"
  [ -z "${new}" ]
}

@test "a REHEARSAL_DIR another user could change is refused before anything is copied or run" {
  local dir
  dir="$(mktemp -d /tmp/csb-rh-open.XXXXXX)"
  chmod 0777 "${dir}"
  run env REHEARSAL_DIR="${dir}" LAB=local rehearsal/03_copy_server.sh
  rm -rf "${dir}"
  echo "${output}"
  [ "${status}" -eq 2 ]
  [[ "${output}" == *"${dir} is owned by root with mode 0777: refusing to use it"* ]]
}
