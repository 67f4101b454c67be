#!/usr/bin/env bats
# shellcheck disable=SC2016 # scripts for `bash -c` and expected outputs are single-quoted on purpose
# The runner library: configuration precedence and validation, quoting for
# the remote shell, run-directory uniqueness, the route guard, and the
# refusals a user can hit. Most of these need no root (LAB=local); the ones
# that cross the netns lab skip without root.

load helpers

setup() {
  common_setup
  PRINTCONF="${BATS_TEST_TMPDIR}/printconf.sh"
  cat >"${PRINTCONF}" <<SCRIPT
#!/usr/bin/env bash
source "${REPO}/lib/init.sh"
usage() { echo "usage: printconf [flags]"; }
csb_config_load "\$@"
echo "LAB=\${LAB} PROFILE=\${PROFILE} SERVER_PORT=\${SERVER_PORT} SERVER_IP=\${SERVER_IP} origin=\${CSB_ORIGIN[SERVER_PORT]}"
SCRIPT
}

teardown() {
  # A lab a test brought up for itself alone (OWN_LAB), also when it failed.
  [[ -z "${OWN_LAB:-}" ]] || CSB_LAB_ID=${OWN_LAB} lab/netns.sh down >/dev/null 2>&1 || true
  common_teardown
}

@test "config: defaults < config file < environment < flags" {
  run bash "${PRINTCONF}"
  [ "$status" -eq 0 ]
  [[ "$output" == *"LAB=local PROFILE=full SERVER_PORT=8080 SERVER_IP=127.0.0.1 origin=default"* ]]

  printf 'SERVER_PORT=9001\nPROFILE="quick"\n# a comment\n' >"${BATS_TEST_TMPDIR}/lab.env"
  run bash "${PRINTCONF}" -c "${BATS_TEST_TMPDIR}/lab.env"
  [[ "$output" == *"PROFILE=quick SERVER_PORT=9001"*"origin=${BATS_TEST_TMPDIR}/lab.env:1"* ]]

  SERVER_PORT=9002 run bash "${PRINTCONF}" -c "${BATS_TEST_TMPDIR}/lab.env"
  [[ "$output" == *"SERVER_PORT=9002"*"origin=environment"* ]]

  SERVER_PORT=9002 run bash "${PRINTCONF}" -c "${BATS_TEST_TMPDIR}/lab.env" -s SERVER_PORT=9003 -p smoke
  [[ "$output" == *"PROFILE=smoke SERVER_PORT=9003"*"origin=flag"* ]]
}

@test "config: the config file is parsed, never executed" {
  printf 'SERVER_PORT=$(touch %s/pwned)\n' "${BATS_TEST_TMPDIR}" >"${BATS_TEST_TMPDIR}/evil.env"
  run bash "${PRINTCONF}" -c "${BATS_TEST_TMPDIR}/evil.env"
  [ "$status" -eq 2 ]
  [[ "$output" == *"SERVER_PORT="*"is not valid"*"expected a port number"* ]]
  [ ! -e "${BATS_TEST_TMPDIR}/pwned" ]
  printf 'NOT_A_SETTING=1\n' >"${BATS_TEST_TMPDIR}/unknown.env"
  run bash "${PRINTCONF}" -c "${BATS_TEST_TMPDIR}/unknown.env"
  [ "$status" -eq 2 ]
  [[ "$output" == *"unknown setting NOT_A_SETTING"* ]]
}

@test "config: every bad value exits 2 naming the key and what is expected" {
  local key value expect
  while IFS='|' read -r key value expect; do
    run env "${key}=${value}" bash "${PRINTCONF}"
    [ "$status" -eq 2 ] || { echo "${key}=${value}: status $status"; return 1; }
    [[ "$output" == *"${key}="*"is not valid"*"${expect}"* ]] || { echo "${key}=${value}: $output"; return 1; }
  done <<'CASES'
SERVER_IP|198.18.0.1;touch /tmp/csb-x|an IPv4 or IPv6 literal
SERVER_IP|gtinfra02|an IPv4 or IPv6 literal
SERVER_IP|300.1.1.1|an IPv4 or IPv6 literal
CLIENT_IP|$(id)|an IPv4 or IPv6 literal
SERVER_SSH|root@host;reboot|an ssh destination
SERVER_SSH|-oProxyCommand=x|an ssh destination
SERVER_NIC|eth0 up|an interface name
SERVER_PORT|80a|a port number
SERVER_PORT|70000|a port number
PROFILE|huge|one of: smoke quick full
LAB|docker|one of: local netns ssh
LINK_RATE|1gbit;ls|a tc rate
RUN_NAME|x/../../etc|a name of letters
DURATION|ten|a whole number
CASES
  [ ! -e /tmp/csb-x ]
}

@test "config: bad flags exit 2 with the usage on stderr; -h exits 0" {
  run bash "${PRINTCONF}" -x
  [ "$status" -eq 2 ]
  [[ "$output" == *"error: unknown option -x"*"usage: printconf"* ]]
  run bash "${PRINTCONF}" -s NOPE=1
  [ "$status" -eq 2 ]
  [[ "$output" == *"unknown setting NOPE"* ]]
  run bash "${PRINTCONF}" stray
  [ "$status" -eq 2 ]
  run bash "${PRINTCONF}" -h
  [ "$status" -eq 0 ]
  [[ "$output" == "usage: printconf [flags]" ]]
}

@test "config: each lab checks what it needs" {
  run env LAB=ssh bash "${PRINTCONF}"
  [ "$status" -eq 2 ]
  [[ "$output" == *"LAB=ssh needs SERVER_SSH SERVER_IP CLIENT_IP"* ]]
  run env LAB=local SERVER_IP=198.18.0.1 bash "${PRINTCONF}"
  [ "$status" -eq 2 ]
  [[ "$output" == *"SERVER_IP must be a loopback address"* ]]
  run env LAB=netns SERVER_IP=198.18.0.7 bash "${PRINTCONF}"
  [ "$status" -eq 2 ]
  [[ "$output" == *"LAB=netns has fixed addresses"* ]]
}

@test "runner: a value smuggling shell syntax is refused before anything runs" {
  run bash 00-iperf3/run_iperf3_baseline.sh -l local -p smoke -s "SERVER_IP=127.0.0.1;touch ${BATS_TEST_TMPDIR}/x"
  [ "$status" -eq 2 ]
  [[ "$output" == *"SERVER_IP="*"is not valid"* ]]
  [ ! -e "${BATS_TEST_TMPDIR}/x" ]
  [ ! -e "${RESULTS_ROOT}/00-iperf3" ]
  run bash 00-iperf3/run_iperf3_baseline.sh -n 'a;b'
  [ "$status" -eq 2 ]
  [[ "$output" == *"RUN_NAME="*"is not valid"* ]]
  run bash 00-iperf3/run_iperf3_baseline.sh --bogus
  [ "$status" -eq 2 ]
  [[ "$output" == *"error: unknown option"*"Usage: bash 00-iperf3/run_iperf3_baseline.sh"* ]]
  run bash 00-iperf3/run_iperf3_baseline.sh -h
  [ "$status" -eq 0 ]
  [[ "$output" == *"Phase 0: the raw TCP ceiling"* ]]
}

@test "runner: a missing tool is named with its package, before any traffic" {
  local bin="${BATS_TEST_TMPDIR}/bin" t
  mkdir -p "${bin}"
  # Every tool the runner needs except iperf3: a PATH on which iperf3 is
  # really missing (the real failure, no stub).
  for t in bash env go git sar mpstat pidstat sadf nstat ip curl setsid mkdir date cat tr grep sed \
    dirname basename tar mktemp rm mv chmod ss seq sleep kill hostname uname nproc cut head sort tee \
    flock stat od id tail; do
    [ -x "$(command -v "$t")" ] && ln -sf "$(command -v "$t")" "${bin}/$t"
  done
  run env PATH="${bin}" bash 00-iperf3/run_iperf3_baseline.sh -l local -p smoke
  [ "$status" -eq 3 ]
  [[ "$output" == *"missing on client (this host): iperf3; install there: iperf3;"* ]]
  # Refused before the run began: no run directory, nothing recorded.
  [ ! -e "${RESULTS_ROOT}/00-iperf3" ]
}

@test "quoting: arguments reach the server host exactly once, in every lab" {
  run bash -c '
    source lib/init.sh
    usage() { :; }
    csb_config_load -l local
    on_server printf "<%s>\n" "a b" "it'"'"'s" "\$(id)" ";ls" "*" "\"q\"" ""
  '
  [ "$status" -eq 0 ]
  [ "$output" = '<a b>
<it'"'"'s>
<$(id)>
<;ls>
<*>
<"q">
<>' ]
}

@test "quoting: the same over ssh to the netns lab's sshd" {
  need_root
  local was_up=0
  lab_is_up && was_up=1
  lab/netns.sh up
  run ip netns exec "${LAB_ID}-cli" bash -c '
    source lib/init.sh
    usage() { :; }
    csb_config_load -l ssh -s SERVER_SSH=root@198.18.0.1 -s SERVER_IP=198.18.0.1 -s CLIENT_IP=198.18.0.2 \
      -s SSH_KEY="${CSB_NETNS_STATE}/id_ed25519" -s SSH_KNOWN_HOSTS="${CSB_NETNS_STATE}/known_hosts"
    on_server printf "<%s>\n" "a b" "\$(id)" ";ls" "*" ""
    on_server hostname
  '
  ((was_up)) || lab/netns.sh down
  [ "$status" -eq 0 ]
  [ "$output" = '<a b>
<$(id)>
<;ls>
<*>
<>
csb-server' ]
}

@test "run directories are never reused: a second run in the same second gets a new one" {
  run bash -c '
    source lib/init.sh
    usage() { :; }
    csb_config_load -l local
    mkdir -p "${RESULTS_ROOT}/test-phase"
    stamp=$(date -u +%Y-%m-%d_%H%M%S)
    mkdir "${RESULTS_ROOT}/test-phase/${stamp}_same"
    echo keep >"${RESULTS_ROOT}/test-phase/${stamp}_same/mine"
    csb_run_begin test-phase same
  '
  # Either the second run landed in the same second (-2) or in the next one.
  [[ "$output" == *"results: ${RESULTS_ROOT}/test-phase/"*"_same"* ]]
  local dirs=("${RESULTS_ROOT}"/test-phase/*)
  [ "${#dirs[@]}" -eq 2 ]
  grep -q keep "${dirs[0]}/mine"
  [ ! -e "${dirs[0]}/run.env" ]
}

@test "route guard: refuses traffic that would leave through another interface" {
  run bash -c '
    source lib/init.sh
    usage() { :; }
    csb_config_load -l ssh -s SERVER_SSH=h -s SERVER_IP=198.18.0.1 -s CLIENT_IP=198.18.0.2 -s CLIENT_NIC=enp86s0
    csb_route_check 1 "[{\"dst\":\"198.18.0.1\",\"gateway\":\"192.168.51.1\",\"dev\":\"wlp2s0\",\"prefsrc\":\"192.168.51.199\",\"flags\":[],\"uid\":0,\"cache\":[]}]"
  '
  [ "$status" -eq 1 ]
  [[ "$output" == *"would leave through wlp2s0, not CLIENT_NIC=enp86s0"* ]]
  run bash -c '
    source lib/init.sh
    usage() { :; }
    csb_config_load -l ssh -s SERVER_SSH=h -s SERVER_IP=198.18.0.1 -s CLIENT_IP=198.18.0.2 -s CLIENT_NIC=enp86s0
    csb_route_check 1 "[{\"dst\":\"198.18.0.1\",\"dev\":\"enp86s0\",\"prefsrc\":\"198.18.0.9\",\"flags\":[],\"uid\":0,\"cache\":[]}]"
  '
  [ "$status" -eq 1 ]
  [[ "$output" == *"would come from 198.18.0.9 on enp86s0, not CLIENT_IP=198.18.0.2"* ]]
  run bash -c '
    source lib/init.sh
    usage() { :; }
    csb_config_load -l ssh -s SERVER_SSH=h -s SERVER_IP=198.18.0.1 -s CLIENT_IP=198.18.0.2 -s CLIENT_NIC=enp86s0
    csb_route_check 1 "[{\"dst\":\"198.18.0.1\",\"dev\":\"enp86s0\",\"prefsrc\":\"198.18.0.2\",\"flags\":[],\"uid\":0,\"cache\":[]}]"
  '
  [ "$status" -eq 0 ]  # ip -j route get prints nothing on stdout when there is no route; its
  # error text is passed on and named.
  run bash -c '
    source lib/init.sh
    usage() { :; }
    csb_config_load -l ssh -s SERVER_SSH=h -s SERVER_IP=198.18.0.1 -s CLIENT_IP=198.18.0.2 -s CLIENT_NIC=enp86s0
    csb_route_check 1 "(none: RTNETLINK answers: Network is unreachable)"
  '
  [ "$status" -eq 1 ]
  [[ "$output" == *"on client (this host), no route to SERVER_IP=198.18.0.1 (ip route get: (none: RTNETLINK answers: Network is unreachable))"* ]]
}

@test "route guard on the netns lab: wrong client or server NIC is refused, nothing measured" {
  need_root
  run bash 00-iperf3/run_iperf3_baseline.sh -l netns -p smoke -s CLIENT_NIC=lo
  [ "$status" -eq 5 ]
  [[ "$output" == *"would leave through csbc0, not CLIENT_NIC=lo"* ]]
  run bash 00-iperf3/run_iperf3_baseline.sh -l netns -p smoke -s SERVER_NIC=lo
  [ "$status" -eq 5 ]
  [[ "$output" == *"SERVER_IP=198.18.0.1 is not on SERVER_NIC=lo on the server (it is on interface csbs0)"* ]]
  # Refused in preflight: no run directory at all.
  [ ! -e "${RESULTS_ROOT}/00-iperf3" ]
}

@test "an unreachable server host gets a clear error and no traffic to the benchmark address" {
  need_root
  local was_up=0
  lab_is_up && was_up=1
  lab/netns.sh up
  # 198.18.0.9 is inside the lab's own subnet, where nothing answers.
  run ip netns exec "${LAB_ID}-cli" env LAB=ssh SERVER_SSH=root@198.18.0.9 SERVER_IP=198.18.0.9 CLIENT_IP=198.18.0.2 \
    SSH_KEY="/tmp/${LAB_ID}-netns/id_ed25519" SSH_KNOWN_HOSTS="/tmp/${LAB_ID}-netns/known_hosts" PROFILE=smoke bash 00-iperf3/run_iperf3_baseline.sh
  ((was_up)) || lab/netns.sh down
  [ "$status" -eq 4 ]
  [[ "$output" == *"cannot reach the server host (root@198.18.0.9) over ssh"* ]]
}

@test "netns lab: up is idempotent, down removes everything it made" {
  need_root
  # A lab of its own: the lane's lab is up, shared by its other files.
  export CSB_LAB_ID=${LAB_ID:0:7}u
  LAB_ID=${CSB_LAB_ID}
  lab_is_up && skip "lab ${LAB_ID} is in use by someone else"
  OWN_LAB=${LAB_ID}
  lab/netns.sh up
  lab/netns.sh up
  run lab/netns.sh status
  [ "$status" -eq 0 ]
  local sshd_pid
  sshd_pid=$(cat "/tmp/${LAB_ID}-netns/sshd.pid")
  lab/netns.sh down
  run lab/netns.sh status
  [ "$status" -eq 1 ]
  run lab_is_up
  [ "$status" -ne 0 ]
  [ ! -e "/tmp/${LAB_ID}-netns" ]
  run alive "${sshd_pid}"
  [ "$status" -ne 0 ]
}

@test "config: one lab.env serves every phase; a typo is still an error" {
  printf 'PAYLOADS=1k\nSERVER_PORT=9001\n' >"${BATS_TEST_TMPDIR}/lab.env"
  run bash "${PRINTCONF}" -c "${BATS_TEST_TMPDIR}/lab.env"
  [ "$status" -eq 0 ]
  [[ "$output" == *"SERVER_PORT=9001"* ]]
  printf 'SERVR_PORT=9001\n' >"${BATS_TEST_TMPDIR}/lab.env"
  run bash "${PRINTCONF}" -c "${BATS_TEST_TMPDIR}/lab.env"
  [ "$status" -eq 2 ]
  [[ "$output" == *"unknown setting SERVR_PORT"* ]]
}

@test "server lifecycle: a port already taken is found out, not measured" {
  bin/csb-server -addr 127.0.0.1 -port 18181 >/dev/null 2>&1 &
  local other=$!
  run bash 01-http-baseline/run_http_baseline.sh -l local -p smoke -s SERVER_PORT=18181 -s PAYLOADS=1k
  kill "${other}"
  wait "${other}" || true
  [ "$status" -eq 1 ]
  [[ "$output" == *"the server process"*"exited before it listened (is 127.0.0.1:18181 taken by another process?"* ]]
  local dir
  dir=$(results_line "$output")
  grep -q '^status=failed' "${dir}/run.env"
  [ ! -s "${dir}/raw/1k.txt" ]
}

@test "lab.env.example documents every setting any runner declares" {
  local key missing=()
  while read -r key; do
    grep -qE "^#?${key}=" lab.env.example || missing+=("${key}")
  done < <(grep -hoE '^[[:space:]]*csb_config_declare [A-Z0-9_]+' 0*/*.sh lib/*.sh | awk '{print $2}' | sort -u)
  [ "${#missing[@]}" -eq 0 ] || { echo "not in lab.env.example: ${missing[*]}"; return 1; }
  # Real hosts' addresses stay commented out.
  run grep -E '^(SERVER_SSH|SERVER_IP|CLIENT_IP)=.+' lab.env.example
  [ "$status" -ne 0 ]
}

@test "a server that dies mid-run: the cell fails, the run stops, partial, nothing left running" {
  local out="${BATS_TEST_TMPDIR}/out"
  bash 01-http-baseline/run_http_baseline.sh -l local -p smoke -s SERVER_PORT=18182 -s PAYLOADS=1k,10k \
    -s DURATION=4 -s WARMUP=0 >"${out}" 2>&1 &
  local runner=$! pid=""
  wait_for "${out}" 'cell [0-9]+/[0-9]+ 1k \(' 180
  # The server's PID, as the run recorded it.
  local env_file
  env_file=$(sed -n 's/^.*INFO run .* in \(.*\)$/\1/p' "${out}" | head -n 1)/run.env
  pid=$(sed -n 's/^started\.server=\([0-9]*\) csb-server$/\1/p' "${env_file}" | head -n 1)
  [ -n "${pid}" ]
  kill -KILL "${pid}"
  local rc=0
  wait "${runner}" || rc=$?
  tail -n 8 "${out}"
  [ "${rc}" -eq 1 ]
  grep -q "the server process(es) ${pid} died" "${out}"
  local dir
  dir=$(results_line "$(cat "${out}")")
  jq -e '.status == "partial" and (.error | test("server died")) and .cells[0].status == "failed" and (.cells | length == 1)' "${dir}/summary.json"
  [ -s "${dir}/raw/client/1k.txt" ]
  pids_gone "${dir}"
}

@test "exit steps: each added step runs once, last added first; a second one never replaces the first" {
  run bash -c '
    source lib/init.sh
    first() { echo "first ran"; }
    second() { echo "second ran"; }
    csb_exit_add first
    csb_exit_add second
    csb_exit_add first
    exit 3
  '
  [ "$status" -eq 3 ]
  [ "$output" = $'second ran\nfirst ran' ]
  # A signal runs the same steps, once, and exits 128+N.
  run bash -c '
    source lib/init.sh
    step() { echo "step ran"; }
    csb_exit_add step
    kill -TERM $$
    sleep 5
  '
  [ "$status" -eq 143 ]
  [ "$(grep -c "step ran" <<<"$output")" -eq 1 ]
  [[ "$output" == *"caught SIGTERM"* ]]
  # Signals that come while the steps run (a second Ctrl-C, the TERM the
  # process group gets with it) neither cut them short nor run them again.
  # (A signal that comes while a command with two $( ) expands the first is
  # lost by bash 5.2: see the next test.)
  run bash -c '
    source lib/init.sh
    step() { echo "step began in ${BASHPID}"; kill -INT $$; kill -TERM $$; kill -HUP $$; sleep 0.5; echo "step ended"; }
    csb_exit_add step
    kill -TERM $$
    sleep 5
  '
  [ "$status" -eq 143 ]
  [ "$(grep -c "step began" <<<"$output")" -eq 1 ]
  [ "$(grep -c "step ended" <<<"$output")" -eq 1 ]
  [ "$(grep -c "caught SIG" <<<"$output")" -eq 1 ]
  # A step may set the exit status (csb_on_exit does).
  run bash -c '
    source lib/init.sh
    set_status() { CSB_EXIT_STATUS=7; }
    csb_exit_add set_status
  '
  [ "$status" -eq 7 ]
  # No file but lib/exit.sh sets a trap.
  run grep -rnE '^[^#]*\btrap +[^-]' --include='*.sh' --include='*.bash' lib rehearsal scripts lab 0*-*
  [ "$output" = "$(grep -nE '^[^#]*\btrap +[^-]' lib/exit.sh | sed 's|^|lib/exit.sh:|')" ]
}

@test "signals: one that comes during a command's substitution is caught; csb_quote_to quotes as csb_quote does" {
  # The known answer, on this bash: a signal pending when a command expands
  # a second $( ) runs its trap inside bash 5.2's parse of that text, fails
  # ("unexpected EOF while looking for matching `)'") and is lost. So no
  # command of lib/ or a runner has two (internal/shcheck's TestRepository);
  # a command with one is interrupted once it ends, with its exit steps.
  run bash -c '
    source lib/init.sh
    step() { echo "step ran"; }
    csb_exit_add step
    v=$(kill -TERM $$; echo a)
    csb_quote_to q "${v}" "b c"
    echo "not caught: ${q}"
  '
  [ "$status" -eq 143 ]
  [[ "$output" == *"caught SIGTERM"* ]]
  [ "$(grep -c "step ran" <<<"$output")" -eq 1 ]
  [[ "$output" != *"not caught"* ]]
  run bash -c '
    source lib/init.sh
    check() {
      local q
      csb_quote_to q "$@"
      [[ "${q}" == "$(csb_quote "$@")" ]] || { echo "differs: ${q}"; exit 1; }
      eval "set -- ${q}"
      printf "<%s>" "$@"
      echo
    }
    check a "b c|d" "it'"'"'s" "\$(id) *" "x;y z" ""
    csb_quote_to q
    [[ -z "${q}" ]] && echo same
  '
  [ "$status" -eq 0 ]
  [ "$output" = "<a><b c|d><it's><\$(id) *><x;y z><>
same" ]
}

@test "exit: a process the run started but never tracked (a launch cut short) is stopped at the end, named" {
  run bash -c '
    source lib/init.sh
    usage() { :; }
    csb_config_load -l local
    CSB_H_WORK[0]=$(mktemp -d)
    tracked=$(on_host_bg 0 "${CSB_H_WORK[0]}/a.log" sleep 301)
    csb_track 0 "${tracked}" sleep
    untracked=$(on_host_bg 0 "${CSB_H_WORK[0]}/b.log" sleep 302)
    csb_stop_all
    csb_stop_recorded
    csb_alive "${untracked}" && echo "left running"
    csb_stop_recorded
    rm -rf "${CSB_H_WORK[0]}"
  '
  echo "$output"
  [ "$status" -eq 0 ]
  # Only the untracked one, once; the tracked one csb_stop_all had stopped.
  [ "$(grep -c "never tracked" <<<"$output")" -eq 1 ]
  [[ "$output" == *"stopped now: PID "*" (sleep 302)"* ]]
  [[ "$output" != *"sleep 301)"* && "$output" != *"left running"* ]]
}

@test "ERR trap: the failing command and its call chain (file:line per frame), printed once" {
  cat >"${BATS_TEST_TMPDIR}/chain.sh" <<SCRIPT
source "${REPO}/lib/init.sh"
outer() { middle; }
middle() { local v; v=\$(inner); echo "\$v"; }
inner() { false; echo not reached; }
outer
SCRIPT
  run bash "${BATS_TEST_TMPDIR}/chain.sh"
  [ "$status" -eq 1 ]
  [ "$(grep -c ' error: ' <<<"$output")" -eq 1 ]
  [[ "$output" == *'chain.sh:4: `false` exited 1'* ]]
  [[ "$output" == *"in inner at ${BATS_TEST_TMPDIR}/chain.sh:4"* ]]
  [[ "$output" == *"in middle at ${BATS_TEST_TMPDIR}/chain.sh:3"* ]]
  [[ "$output" == *"in outer at ${BATS_TEST_TMPDIR}/chain.sh:2"* ]]
  [[ "$output" == *"in main at ${BATS_TEST_TMPDIR}/chain.sh:5"* ]]
  [[ "$output" != *"not reached"* ]]
}

@test "die prints its message once and exits with its status" {
  run bash -c 'source lib/init.sh; die "the sky fell" 6'
  [ "$status" -eq 6 ]
  [ "$output" = "error: the sky fell" ]
}

@test "ssh reaper: a gone runner's control socket whose master is gone too is removed, the run goes on" {
  d=$(mktemp -d /tmp/csb-ssh.XXXXXX)
  bash -c 'exit 0' &
  gone=$!
  wait "${gone}"
  python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.close()' "${d}/ctl-0"
  [ -S "${d}/ctl-0" ]
  # The runner file last: a run in another lane reaps the directory (as
  # this one would) as soon as it names a runner that is gone.
  echo "${gone} 1" >"${d}/runner"
  run bash -c 'source lib/init.sh; csb_ssh_reap; echo reaped'
  [ "$status" -eq 0 ] || { echo "$output"; return 1; }
  [[ "$output" == *reaped ]]
  [ ! -e "${d}" ]
}

@test "rundir: a user's runs land in runs/<phase> or RESULTS_ROOT/<phase>, never beside the references" {
  run env -u RESULTS_ROOT bash -c 'source "$1/lib/init.sh"; csb_results_root 01-http-baseline; csb_runs_root' _ "${REPO}"
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = "${REPO}/runs/01-http-baseline" ]
  [ "${lines[1]}" = "${REPO}/runs" ]
  run bash -c 'source "$1/lib/init.sh"; csb_results_root 01-http-baseline' _ "${REPO}"
  [ "$output" = "${RESULTS_ROOT}/01-http-baseline" ]
  # git ignores runs/: nothing a user runs shows up as a change to commit.
  git -C "${REPO}" check-ignore -q runs/01-http-baseline/2026-01-01_000000_http-baseline/run.env
}

# user_path: PATH without bats's own libexec directory, whose bats is not
# the command a user runs.
user_path() { tr ':' '\n' <<<"${PATH}" | grep -vxF "${BATS_LIBEXEC:-/nonexistent}" | paste -sd: -; }

# tap_of FILE...: bats' TAP output of FILE..., run as make test runs them,
# by a bats of its own (env -i: none of this bats's filters or state).
tap_of() { env -i PATH="$(user_path)" HOME="${HOME}" bats --timing --print-output-on-failure "$@" || true; }

@test "make test's counts: passed, failed, skipped, and skipped for want of root, from bats' own TAP" {
  source tests/tap.bash
  local dir="${BATS_TEST_TMPDIR}/tap"
  mkdir -p "${dir}"
  # need_root as the netns tests call it, a skip for another reason, a
  # pass, a failure, and a file whose setup_file fails.
  # (${t}: a line of this file that began with the word would be read by
  # bats as one of its own tests.)
  local t=@test
  cat >"${dir}/mixed.bats" <<BATS
load ${REPO}/tests/helpers
${t} "lab" { need_root; true; }
${t} "other skip" { skip "nginx is not installed"; }
${t} "bare skip" { skip; }
${t} "passes" { true; }
${t} "fails" { echo 'ok 99 printed by a test # skip needs root'; false; }
BATS
  printf 'setup_file() { false; }\n%s "never" { true; }\n%s "runs" { true; }\n' "${t}" "${t}" >"${dir}/broken.bats"
  local tap root_lab=1 want
  tap=$(tap_of "${dir}/mixed.bats" "${dir}/broken.bats")
  echo "${tap}"
  # As root the lab test passes (or skips when netns cannot be made here:
  # another reason); as an ordinary user it is skipped for want of root.
  if ((EUID == 0)); then root_lab=0; fi
  want="$((2 - root_lab)) 2 $((2 + root_lab)) ${root_lab}"
  if ((EUID == 0)) && [[ "${tap}" == *"# skip network namespaces cannot be created here"* ]]; then want="1 2 3 0"; fi
  [ "$(tap_count <<<"${tap}")" == "${want}" ]
  run tap_lines 12 FAILED <<<"${tap}"
  [ "${lines[0]}" == "tests: ${want%% *} passed, 2 failed, $(cut -d' ' -f3 <<<"${want}") skipped" ]
  # Real TAP of an ordinary user: the lab test skipped for want of root.
  if ((EUID == 0)) && id nobody >/dev/null 2>&1 && command -v runuser >/dev/null; then
    # (bats's own temporary directory is its user's alone.)
    local pub
    pub=$(mktemp -d "${TMPDIR:-/tmp}/csb-tap.XXXXXX")
    chmod 755 "${pub}"
    cp "${dir}/mixed.bats" "${pub}/"
    tap=$(cd "${pub}" && runuser -u nobody -- env -i PATH="$(user_path)" HOME="${pub}" bats --timing mixed.bats 2>&1 || true)
    rm -rf "${pub}"
    echo "${tap}"
    [[ "${tap}" == *"# skip needs root for the netns lab"* ]]
    [ "$(tap_count <<<"${tap}")" == "1 1 3 1" ]
    run tap_lines 600 ok <<<"${tap}"
    [ "${lines[1]}" == "== make test: 600 s, ok; 5 tests, 1 skipped for want of root, 2 for other reasons" ]
  fi
  # Older and newer bats write a skip's reason with or without brackets.
  [ "$(printf 'ok 1 a # skip (needs root for the netns lab)\nok 2 b in 5ms # skip (no tmpfs)\nok 3 c\n' | tap_count)" == "1 0 2 1" ]
  run tap_lines 1 ok < <(printf 'ok 1 a\nok  \tcsbench/internal/cli\t2.1s\n')
  [ "${lines[0]}" == "tests: 1 passed, 0 failed, 0 skipped" ]
  [ "${lines[1]}" == "== make test: 1 s, ok; 1 tests, 0 skipped for want of root" ]
}
