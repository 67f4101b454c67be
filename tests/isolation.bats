#!/usr/bin/env bats
# Shared hosts (issue "safe and honest on real, shared hosts"): one run per
# lab (the lab lock), two labs at once, the server's work directory private
# and checked, an ordinary user on the server host, and a server host lost
# over ssh mid-run. Real runners on the real netns lab; an ordinary user the
# file creates and removes plays the other person on the machine.

load helpers

OTHER_LAB=iso2
TUSER=${TUSER:-csbtest$$}

setup_file() {
  export TUSER
  useradd -m -s /bin/bash -p '*' "${TUSER}"
}

teardown_file() {
  userdel -r "${TUSER}" 2>/dev/null || true
  CSB_LAB_ID=${OTHER_LAB} "${BATS_TEST_DIRNAME}/../lab/netns.sh" down >/dev/null 2>&1 || true
}

setup() {
  common_setup
  unset PAYLOADS THREADS CONNECTIONS WARMUP CONCURRENCY LOADGEN REPEAT CONNS RPS SCENARIOS \
    LAB_LOCK LAB_LOCK_WAIT SSH_RETRY
}

teardown() {
  # What a test made outside RESULTS_ROOT, also when it failed half-way.
  rm -rf "${BASE_DIR:-}" "${EVIL_DIR:-}"
  common_teardown
}

# phase1_quick ARGS...: the shortest real Phase 1 run.
phase1_quick() {
  bash 01-http-baseline/run_http_baseline.sh -l netns -p smoke -s PAYLOADS=1k -s WARMUP=0 -s DURATION=1 "$@"
}

# wait_log FILE PATTERN: wait_for with room for a loaded machine.
wait_log() { wait_for "$1" "$2" 180; }

@test "lab lock: a second run on a busy lab is refused, naming the holder; the first is unharmed" {
  need_root
  lab/netns.sh up >/dev/null
  local log="${RESULTS_ROOT}/first.log"
  bash 01-http-baseline/run_http_baseline.sh -l netns -p smoke -s PAYLOADS=1k,10k -s DURATION=3 >"${log}" 2>&1 &
  local first=$!
  wait_log "${log}" 'INFO run .* in '
  run bash 00-iperf3/run_iperf3_baseline.sh -l netns -p smoke
  [ "$status" -eq 7 ]
  [[ "$output" == *"lab netns-${LAB_ID} is in use by run PID ${first} (01-http-baseline/run_http_baseline.sh, started "* ]]
  [[ "$output" == *"set LAB_LOCK=wait"* ]]
  [ ! -e "${RESULTS_ROOT}/00-iperf3" ]
  wait "${first}"
  grep -qx 'status=ok' "$(results_line "$(cat "${log}")")/run.env"
}

@test "lab lock: LAB_LOCK=wait queues behind the holder; a holder file left by a killed run is taken over" {
  need_root
  lab/netns.sh up >/dev/null
  local log="${RESULTS_ROOT}/first.log"
  bash 01-http-baseline/run_http_baseline.sh -l netns -p smoke -s PAYLOADS=1k -s WARMUP=0 -s DURATION=4 >"${log}" 2>&1 &
  local first=$!
  wait_log "${log}" 'INFO run .* in '
  run phase1_quick -s LAB_LOCK=wait -s LAB_LOCK_WAIT=900
  [ "$status" -eq 0 ]
  [[ "$output" == *"waiting for lab netns-${LAB_ID}, in use by run PID ${first}"* ]]
  [[ "$output" == *"is free after"* ]]
  wait "${first}"
  # A run killed with SIGKILL leaves its holder file (not its lock).
  sleep 0 &
  local dead=$!
  wait "${dead}"
  local holder
  holder="$(bin/csb lock -dir)/csb-netns-${LAB_ID}.$(id -u).holder"
  printf 'pid=%s\nstarted=2026-01-01T00:00:00Z\nrunner=killed.sh\n' "${dead}" >"${holder}"
  run phase1_quick
  [ "$status" -eq 0 ]
  [[ "$output" == *"the lock was left by run PID ${dead} (killed.sh, started 2026-01-01T00:00:00Z), which is gone; taking it over"* ]]
  [ ! -e "${holder}" ]
}

# own_pidstat FILE RUN_DIR: every process in a pidstat file is one the run
# recorded as started (its server, its load generator).
own_pidstat() {
  local file=$1 dir=$2 pid
  while read -r pid; do
    grep -qE "^(started\.(server|client)=${pid} |server_pids\.[a-z0-9-]+=(.*,)?${pid}(,|$))" "${dir}/run.env" ||
      { echo "${file}: PID ${pid} is not this run's" >&2; return 1; }
  done < <(awk '!/^#/ && NF > 3 && $3 ~ /^[0-9]+$/ {print $3}' "${file}" | sort -u)
}

# every_phase LOGFILE ARGS...: Phases 0-3 (smoke, small), one after another.
every_phase() {
  local log=$1
  shift
  {
    bash 00-iperf3/run_iperf3_baseline.sh -l netns -p smoke -s DURATION=1 "$@" &&
      bash 01-http-baseline/run_http_baseline.sh -l netns -p smoke -s PAYLOADS=1k,100k -s WARMUP=0 -s DURATION=1 "$@" &&
      bash 02-http-matrix/run_http_matrix.sh -l netns -p smoke -s PAYLOADS=1k -s CONCURRENCY=16,64 -s LOADGEN=wrk \
        -s WARMUP=0 -s DURATION=1 "$@" &&
      bash 03-c10k/run_c10k.sh -l netns -p smoke -s CONNS=2000 -s RPS=500 -s SCENARIOS=idle,lowrate -s DURATION=1 -s HOLD=1 "$@"
  } >"${log}" 2>&1
}

@test "locks: a Phase 0 on a taken iperf3 port is refused whatever its SERVER_PORT; another account sees the same locks" {
  local log="${RESULTS_ROOT}/first.log" first
  bash 00-iperf3/run_iperf3_baseline.sh -l local -p smoke -s DURATION=3 -s SERVER_PORT=18771 -s IPERF_PORT=15771 >"${log}" 2>&1 &
  first=$!
  wait_log "${log}" 'INFO run .* in '
  # Another SERVER_PORT, the same iperf3 port: refused before anything starts.
  run bash 00-iperf3/run_iperf3_baseline.sh -l local -p smoke -s SERVER_PORT=18772 -s IPERF_PORT=15771 -r "${RESULTS_ROOT}/second"
  [ "$status" -eq 7 ] || { echo "$output"; return 1; }
  [[ "$output" == *"lab local-15771 is in use by run PID ${first} (00-iperf3/run_iperf3_baseline.sh, started "* ]]
  [ ! -e "${RESULTS_ROOT}/second" ]
  # An ordinary account asking for the same port, or the same server port, is told who holds it.
  local bin
  bin=$(mktemp -d /tmp/csb-lockbin.XXXXXX)
  BASE_DIR=${bin}
  cp bin/csb "${bin}/" && chmod 0755 "${bin}" "${bin}/csb"
  local key
  for key in local-15771 local-18771; do
    run su -s /bin/bash "${TUSER}" -c "${bin}/csb lock -pid \$\$ -runner other.sh -user ${TUSER} -wait 0 ${key}" </dev/null
    [ "$status" -eq 7 ] || { echo "${key}: $status $output"; return 1; }
    [[ "$output" == "busy ${key} run PID ${first} (00-iperf3/run_iperf3_baseline.sh, started "* ]]
  done
  wait "${first}"
  grep -qx 'status=ok' "$(results_line "$(cat "${log}")")/run.env"
}

@test "two labs at once: every phase in both (one as an ordinary user on its server), both ok, monitors clean; down of one spares the other" {
  need_root
  lab/netns.sh up >/dev/null
  local la="${RESULTS_ROOT}/a.log" lb="${RESULTS_ROOT}/b.log"
  every_phase "${la}" -r "${RESULTS_ROOT}/a" &
  local a=$!
  CSB_LAB_ID=${OTHER_LAB} every_phase "${lb}" -r "${RESULTS_ROOT}/b" -s SERVER_SSH="${TUSER}@198.18.0.1" -s LAB_KEEP=1 &
  local b=$!
  local rc_a=0 rc_b=0
  wait "${a}" || rc_a=$?
  wait "${b}" || rc_b=$?
  [ "${rc_a}" -eq 0 ] || { tail -n 30 "${la}"; return 1; }
  [ "${rc_b}" -eq 0 ] || { tail -n 30 "${lb}"; return 1; }
  local dir f n=0
  while read -r dir; do
    n=$((n + 1))
    grep -qx 'status=ok' "${dir}/run.env"
    for f in "${dir}"/monitors/*/pidstat-*.txt; do
      [ -e "${f}" ] || continue
      own_pidstat "${f}" "${dir}"
    done
    while read -r f; do
      bin/csb check json "${f}" || { echo "${f} is not valid JSON" >&2; return 1; }
    done < <(find "${dir}/monitors" -name '*.json')
  done < <(sed -n 's/^results: //p' "${la}" "${lb}")
  [ "${n}" -eq 8 ]
  # The ordinary user's runs ran their server as that user.
  grep -q "setting.SERVER_SSH=${TUSER}@198.18.0.1" "$(sed -n 's/^results: //p' "${lb}" | tail -n 1)/run.env"
  # Taking the other lab down leaves this one up and working.
  CSB_LAB_ID=${OTHER_LAB} lab/netns.sh down
  run lab/netns.sh status
  [ "$status" -eq 0 ]
  run phase1_quick
  [ "$status" -eq 0 ]
}

@test "server work directory: private and unpredictable, removed after the run; an unsafe REMOTE_DIR is refused (exit 2)" {
  run bash 01-http-baseline/run_http_baseline.sh -l local -p smoke -s PAYLOADS=1k -s WARMUP=0 -s DURATION=1 -s SERVER_PORT=18191
  [ "$status" -eq 0 ]
  local dir wd
  dir=$(results_line "$output")
  wd=$(sed -n 's/^server_workdir=//p' "${dir}/run.env")
  [[ "${wd}" =~ ^/tmp/csb-run\.[A-Za-z0-9]{10}$ ]]
  [ ! -e "${wd}" ]
  # A base another user owns, one anyone may write (not sticky), a symlink of
  # another user's: each refused before anything is recorded.
  local base
  base=$(mktemp -d /tmp/csb-base.XXXXXX)
  BASE_DIR=${base}
  mkdir "${base}/theirs" "${base}/open"
  chown "${TUSER}" "${base}/theirs"
  chmod 0777 "${base}/open"
  ln -s /tmp "${base}/link"
  chown -h "${TUSER}" "${base}/link"
  local rd expect
  while IFS='|' read -r rd expect; do
    run bash 01-http-baseline/run_http_baseline.sh -l local -p smoke -s PAYLOADS=1k -s SERVER_PORT=18191 -s REMOTE_DIR="${rd}"
    [ "$status" -eq 2 ] || { echo "${rd}: $status $output"; return 1; }
    [[ "$output" == *"${expect}"* ]] || { echo "${rd}: $output"; return 1; }
  done <<CASES
${base}/theirs/sub|REMOTE_DIR: ${base}/theirs on the server host is owned by ${TUSER} with mode 0755
${base}/open|REMOTE_DIR: ${base}/open on the server host is owned by root with mode 0777: writable by others and not sticky
${base}/link|REMOTE_DIR: ${base}/link on the server host is a symlink owned by ${TUSER}
CASES
  [ "$(find "${RESULTS_ROOT}/01-http-baseline" -mindepth 1 -maxdepth 1 | wc -l)" -eq 1 ]
  [ -z "$(ls -A "${base}/open")" ]
}

@test "another user cannot get anything run: a watcher swapping binaries and directories in /tmp gets nowhere" {
  need_root
  lab/netns.sh up >/dev/null
  local evil
  evil=$(mktemp -d /tmp/csb-evil.XXXXXX)
  EVIL_DIR=${evil}
  chmod 0755 "${evil}"
  printf '#!/bin/sh\ntouch %s/pwned\nexec sleep 30\n' "${evil}" >"${evil}/csb-server"
  chmod 0755 "${evil}/csb-server"
  chown "${TUSER}" "${evil}"
  # The watcher: as the other user, for as long as the run lasts, try to
  # replace the server binary and the work directories of any run.
  su -s /bin/bash "${TUSER}" -c "
    end=\$((SECONDS + 40))
    while [ \$SECONDS -lt \$end ]; do
      for d in /tmp/csb-run.*; do
        [ -e \"\$d\" ] || continue
        cp ${evil}/csb-server \"\$d/bin/csb-server\" 2>/dev/null && echo \"replaced \$d\" >>${evil}/log
        mv \"\$d\" \"\$d.old\" 2>/dev/null && ln -s ${evil} \"\$d\" 2>/dev/null && echo \"swapped \$d\" >>${evil}/log
      done
      sleep 0.01
    done" </dev/null >/dev/null 2>&1 &
  local watcher=$!
  run phase1_quick
  kill "${watcher}" 2>/dev/null || true
  wait "${watcher}" 2>/dev/null || true
  echo "$output" | tail -n 5
  [ "$status" -eq 0 ]
  [ ! -e "${evil}/pwned" ]
  [ ! -s "${evil}/log" ]
}

@test "netns lab state: a state directory another user made is refused, not used" {
  need_root
  local id=iso3
  rm -rf "/tmp/${id}-netns"
  mkdir -m 0755 "/tmp/${id}-netns"
  chown "${TUSER}" "/tmp/${id}-netns"
  run env CSB_LAB_ID=${id} lab/netns.sh up
  [ "$status" -eq 2 ]
  [[ "$output" == *"/tmp/${id}-netns is owned by ${TUSER} with mode 0755: refusing to use it"* ]]
  [ ! -e "/tmp/${id}-netns/sshd_config" ]
  run ip netns exec "${id}-srv" true
  [ "$status" -ne 0 ]
  # Nor is it removed by down: refused the same way, and left in place.
  run env CSB_LAB_ID=${id} lab/netns.sh down
  [ "$status" -eq 2 ]
  [ -d "/tmp/${id}-netns" ]
  rm -rf "/tmp/${id}-netns"
}

@test "ssh lost mid-run: retried, then the run stops (4, partial) naming what it left; the next run stops those" {
  need_root
  lab/netns.sh up >/dev/null
  local log="${RESULTS_ROOT}/lost.log"
  bash 01-http-baseline/run_http_baseline.sh -l netns -p smoke -s PAYLOADS=1k,10k -s WARMUP=0 -s DURATION=5 \
    -s SSH_RETRY=3 >"${log}" 2>&1 &
  local runner=$!
  wait_log "${log}" 'cell [0-9]+/[0-9]+ 1k .* starts'
  # Every sshd of this lab: the listener and the run's session.
  local p
  for p in $(ip netns pids "${LAB_ID}-srv"); do
    [ "$(cat "/proc/${p}/comm" 2>/dev/null)" = sshd ] && kill -KILL "${p}"
  done
  local rc=0
  wait "${runner}" || rc=$?
  grep -v ' CMD ' "${log}" | tail -n 12
  [ "${rc}" -eq 4 ]
  grep -q 'retrying for up to 3 s' "${log}"
  local dir server
  dir=$(results_line "$(cat "${log}")")
  grep -qx 'status=partial' "${dir}/run.env"
  server=$(sed -n 's/^server_pids\.csb-server=//p' "${dir}/run.env")
  grep -q "left running there, to be stopped by the next run against it .*PID ${server} (csb-server)" "${log}"
  alive "${server}"
  # The lab's sshd back (restarted alone: the leftovers stay), the next run
  # stops them by PID and says so.
  run lab/netns.sh status
  [[ "$output" == "down: the lab's sshd is not running"* ]]
  lab/netns.sh up
  run phase1_quick
  [ "$status" -eq 0 ]
  [[ "$output" == *"left these running there; stopped now: "*"PID ${server} ("*"csb-server"* ]]
  run alive "${server}"
  [ "$status" -ne 0 ]
  [ -d "${dir}/server-leftovers" ]
}
