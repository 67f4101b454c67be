#!/usr/bin/env bats
# shellcheck disable=SC2016 # expected report lines are single-quoted on purpose
# SCHEME=https end to end on the real netns lab (smoke profile, tiny
# counts): Phase 1 with the reference server and the lab's certificate,
# Phase 1 with nginx and a user's own RSA certificate (tickets off), Phase 3
# idle, Phase 4 (a cleartext burst, accept steps with full and resumed
# handshakes, one churn cell toward a narrowed port range); one run of each
# in setup_file, asserted below. The refusals before
# anything starts: a wrong certificate path, an unreadable key, a key type
# that is not supported. After every run no key is left on either host.

load helpers

setup_file() {
  cd "${BATS_TEST_DIRNAME}/.." || return 1
  export PATH="${PATH}:/usr/local/go/bin" CSB_CONFIG=/dev/null
  export TLS_ROOT
  TLS_ROOT="$(mktemp -d "${BATS_TMPDIR:-/tmp}/csb-tls.XXXXXX")"
  make -s build >/dev/null
  [[ ${EUID} -eq 0 ]] && ip netns add "csb-probe-$$" 2>/dev/null || return 0
  ip netns del "csb-probe-$$"
  local was_up=0
  lab_is_up && was_up=1
  echo "${was_up}" >"${TLS_ROOT}/was_up"
  # A user's own material: an RSA CA and certificate for the lab's server
  # address, made outside the checkout.
  mkdir -m 0700 "${TLS_ROOT}/own"
  bin/csb cert -ip 198.18.0.1 -key-type rsa-2048 -dir "${TLS_ROOT}/own" >/dev/null
  local -a common=(-l netns -p smoke -r "${TLS_ROOT}/results" -s SCHEME=https -s LAB_KEEP=1)
  bash 01-http-baseline/run_http_baseline.sh "${common[@]}" -s PAYLOADS=1k,100k -s DURATION=1 -s WARMUP=0 \
    >"${TLS_ROOT}/p1.log" 2>&1 || true
  bash 01-http-baseline/run_http_baseline.sh "${common[@]}" -n nginx-https -s SERVER=nginx -s PAYLOADS=10k \
    -s DURATION=1 -s WARMUP=0 -s TLS_TICKETS=0 -s TLS_CERT="${TLS_ROOT}/own/cert.pem" \
    -s TLS_KEY="${TLS_ROOT}/own/key.pem" -s TLS_CA="${TLS_ROOT}/own/ca.pem" >"${TLS_ROOT}/nginx.log" 2>&1 || true
  bash 03-c10k/run_c10k.sh "${common[@]}" -s SCENARIOS=idle -s CONNS=200 >"${TLS_ROOT}/p3.log" 2>&1 || true
  bash 04-connections/run_connections.sh "${common[@]}" -s BACKLOGS=128 -s BURST=200 -s BURST_TIMEOUT=2 \
    -s ACCEPT_RATES=400 -s CHURN_RATES=200 -s CHURN_CLOSE=client -s CLIENT_PORT_RANGE=40000-40099 -s DURATION=2 \
    >"${TLS_ROOT}/p4.log" 2>&1 || true
  if ((was_up == 0)); then
    lab/netns.sh down >/dev/null 2>&1 || true
  fi
}

teardown_file() {
  [[ -n "${TLS_ROOT:-}" ]] && rm -rf "${TLS_ROOT}"
  return 0
}

setup() {
  cd "${REPO}" || return 1
  export CSB_CONFIG=/dev/null
  unset SCHEME TLS_KEY_TYPE TLS_TICKETS TLS_CERT TLS_KEY TLS_CA SERVER
}

# run_of LOG: the run directory a setup_file run printed last.
run_of() { results_line "$(cat "${TLS_ROOT}/$1")"; }

# no_key_left DIR: no private key in the run directory, and the run's
# server-side work directory (where the key was) is gone. In the netns lab
# both hosts share this filesystem, so this covers both.
no_key_left() {
  local dir=$1 work
  if grep -rl 'PRIVATE KEY' "${dir}"; then return 1; fi
  work=$(sed -n 's/^server_workdir=//p' "${dir}/run.env" | tail -n 1)
  [ -n "${work}" ]
  [ ! -e "${work}" ]
}

@test "Phase 1 over https: the reference server, the lab's CA, the report names what was negotiated" {
  need_root
  local dir
  dir=$(run_of p1.log)
  [ -n "${dir}" ] || { cat "${TLS_ROOT}/p1.log"; return 1; }
  grep -qx 'status=ok' "${dir}/run.env" || { tail -n 20 "${TLS_ROOT}/p1.log"; return 1; }
  grep -q 'https://198.18.0.1:8080/payload/1k' "${dir}/logs/console.log"
  grep -qx 'tls.key_type=ecdsa-p256' "${dir}/run.env"
  # The CA and the certificate (not the key) are kept; the probe verified
  # the chain for the server's IP against that CA alone.
  grep -q 'BEGIN CERTIFICATE' "${dir}/env/server/tls-cert.pem"
  grep -q 'BEGIN CERTIFICATE' "${dir}/env/server/tls-ca.pem"
  grep -q '"version": "TLS 1.3"' "${dir}/raw/tls-probe.json"
  grep -q '^| scheme | https — TLS 1.3, TLS_AES_128_GCM_SHA256, ecdsa-p256 key' "${dir}/Report_01-http-baseline.md"
  grep -q 'session tickets on (a second connection resumed)' "${dir}/Report_01-http-baseline.md"
  run jq -r '.cells[] | select(.status == "ok") | .metrics.rps' "${dir}/summary.json"
  [ "${#lines[@]}" -eq 2 ]
  no_key_left "${dir}"
}

@test "Phase 1 over https with nginx and one's own RSA certificate, tickets off" {
  need_root
  local dir
  dir=$(run_of nginx.log)
  [ -n "${dir}" ] || { cat "${TLS_ROOT}/nginx.log"; return 1; }
  grep -qx 'status=ok' "${dir}/run.env" || { tail -n 20 "${TLS_ROOT}/nginx.log"; return 1; }
  grep -q 'listen 198.18.0.1:8080 ssl' "${dir}/nginx/nginx.conf"
  grep -q 'ssl_session_tickets off;' "${dir}/nginx/nginx.conf"
  grep -qx 'tls.source=user' "${dir}/run.env"
  grep -q '^| scheme | https — TLS 1.3, .*, rsa-2048 key' "${dir}/Report_01-http-baseline.md"
  grep -q 'session tickets off (a second connection did not resume)' "${dir}/Report_01-http-baseline.md"
  no_key_left "${dir}"
  # The user's own key is where it was, untouched.
  [ -s "${TLS_ROOT}/own/key.pem" ]
}

@test "Phase 3 idle over https: held with connclient's TLS, handshakes timed apart" {
  need_root
  local dir
  dir=$(run_of p3.log)
  [ -n "${dir}" ] || { cat "${TLS_ROOT}/p3.log"; return 1; }
  grep -qx 'status=ok' "${dir}/run.env" || { tail -n 20 "${TLS_ROOT}/p3.log"; return 1; }
  grep -q -- '-tls-ca /tmp/csb-run\.[^ ]*/bin/tls-ca.pem' "${dir}/logs/console.log"
  run jq -r '[.connections_established, .tls.handshakes_full, .tls.first.version] | @tsv' "${dir}/raw/idle-200.client-1.json"
  [ "$output" = $'200\t200\tTLS 1.3' ]
  run jq -r '.tls.handshake_full_p50_ms > 0' "${dir}/raw/idle-200.client-1.json"
  [ "$output" = true ]
  grep -q '^| scheme | https — TLS 1.3' "${dir}/Report_03-c10k.md"
  run jq -r '.cells[0].metrics.server_rss_per_conn_kb > 0' "${dir}/summary.json"
  [ "$output" = true ]
  no_key_left "${dir}"
}

@test "Phase 4 over https: full and resumed handshakes per second, CPU per handshake, the churn wall" {
  need_root
  local dir
  dir=$(run_of p4.log)
  [ -n "${dir}" ] || { cat "${TLS_ROOT}/p4.log"; return 1; }
  grep -qx 'status=ok' "${dir}/run.env" || { tail -n 20 "${TLS_ROOT}/p4.log"; return 1; }
  run jq -r '[.cells[] | .name + ":" + .status] | join(" ")' "${dir}/summary.json"
  [ "$output" = "backlog-128:ok accept-full-400:ok accept-resumed-400:ok churn-client-200:ok" ]
  # The burst stayed cleartext; every rate cell did its handshakes, full
  # and resumed counted apart.
  run jq -r '.tls == null' "${dir}/raw/client/backlog-128.json"
  [ "$output" = true ]
  run jq -r '[.connections_completed, .tls.handshakes_full, .tls.handshakes_resumed, .tls.first.key_type] | @tsv' "${dir}/raw/client/accept-full-400.json"
  [ "$output" = $'800\t800\t0\tecdsa-p256' ]
  run jq -r '[.tls.resume, .tls.handshakes_resumed > 700, .histograms.tls_resumed != null] | @tsv' "${dir}/raw/client/accept-resumed-400.json"
  [ "$output" = $'true\ttrue\ttrue' ]
  run jq -r '.tls.handshakes_full' "${dir}/raw/client/churn-client-200.json"
  [ "$output" = 400 ]
  run jq -r '.cells[] | select(.name | startswith("accept-")) | .metrics | [.tls_handshake_full_p50_ms > 0, .server_cpu_us_per_handshake > 0] | @tsv' "${dir}/summary.json"
  [ "${lines[0]}" = $'true\ttrue' ]
  [ "${lines[1]}" = $'true\ttrue' ]
  run jq -r '.cells[] | select(.name == "accept-resumed-400") | .metrics.tls_handshake_resumed_p50_ms > 0' "${dir}/summary.json"
  [ "$output" = true ]
  local r="${dir}/Report_04-connections.md"
  grep -q '^## TLS: handshakes per second, CPU per handshake, the churn wall' "${r}"
  grep -Eq '^\*\*Sustained with the ecdsa-p256 server key: full handshakes[ :].*; resumed handshakes[ :]' "${r}"
  grep -Eq '^\*\*The churn wall over TLS: the port prediction (held|did not hold)' "${r}"
  grep -q 'The backlog bursts stay cleartext with SCHEME=https' "${r}"
  no_key_left "${dir}"
  # A handshake kind that does not exist: one line, exit 2, no run.
  run bash 04-connections/run_connections.sh -l netns -p smoke -r "${BATS_TEST_TMPDIR}/r" -s SCHEME=https -s ACCEPT_HANDSHAKES=half
  [ "$status" -eq 2 ]
  [[ "$output" == *"error: ACCEPT_HANDSHAKES=half is not valid (from flag): expected a comma-separated list of full, resumed"* ]]
  [ ! -e "${BATS_TEST_TMPDIR}/r" ]
}

# refused ARGS...: Phase 1 exits 2 with one error line before anything starts
# (no run directory, no lab brought up); its output in REFUSAL.
refused() {
  local was_up=0 rc=0
  lab_is_up && was_up=1
  REFUSAL=$(bash 01-http-baseline/run_http_baseline.sh -l netns -p smoke -r "${BATS_TEST_TMPDIR}/r" -s SCHEME=https "$@" 2>&1) || rc=$?
  [ "${rc}" -eq 2 ] || { echo "exit ${rc}: ${REFUSAL}"; return 1; }
  [ ! -e "${BATS_TEST_TMPDIR}/r" ]
  if ((was_up == 0)); then
    if lab_is_up; then return 1; fi
  fi
}

@test "https refusals before anything starts: certificate path, unreadable key, key type" {
  local own="${BATS_TEST_TMPDIR}/own"
  mkdir -m 0700 "${own}"
  bin/csb cert -ip 198.18.0.1 -dir "${own}" >/dev/null
  printf 'not a key\n' >"${own}/garbage.pem"

  refused -s TLS_CERT="${own}/nope.pem" -s TLS_KEY="${own}/key.pem" -s TLS_CA="${own}/ca.pem"
  [[ "${REFUSAL}" == *"error: TLS_CERT=${own}/nope.pem: no such file on this host; give the path of the PEM file"* ]]

  refused -s TLS_CERT="${own}/cert.pem" -s TLS_KEY="${own}" -s TLS_CA="${own}/ca.pem"
  [[ "${REFUSAL}" == *"error: TLS_KEY=${own} is not a readable file; give a PEM file you can read"* ]]

  refused -s TLS_CERT="${own}/cert.pem" -s TLS_KEY="${own}/garbage.pem" -s TLS_CA="${own}/ca.pem"
  [[ "${REFUSAL}" == *"error: TLS key ${own}/garbage.pem holds no PEM private key"* ]]

  refused -s TLS_KEY_TYPE=dsa
  [[ "${REFUSAL}" == *"error: TLS_KEY_TYPE=dsa is not valid (from flag): expected one of: ecdsa-p256 rsa-2048"* ]]

  refused -s TLS_CERT="${own}/cert.pem" -s TLS_KEY="${own}/key.pem"
  [[ "${REFUSAL}" == *"TLS_CERT, TLS_KEY and TLS_CA go together"* ]]

  # A certificate for another address than SERVER_IP.
  refused -s SERVER_IP=198.18.0.9 -s TLS_CERT="${own}/cert.pem" -s TLS_KEY="${own}/key.pem" -s TLS_CA="${own}/ca.pem"
  [[ "${REFUSAL}" == *"does not verify for 198.18.0.9"* ]]

  # The certificate command itself: a key type, and a directory inside the checkout.
  run bin/csb cert -ip 198.18.0.1 -key-type rsa-1024 -dir "${own}"
  [ "$status" -eq 2 ]
  [ "$output" = 'error: key type "rsa-1024" is not supported: use one of ecdsa-p256, rsa-2048' ]
  run bin/csb cert -ip 198.18.0.1 -dir "${REPO}/tests"
  [ "$status" -eq 2 ]
  [[ "$output" == *"is inside the git checkout ${REPO}"* ]]
  [ ! -e "${REPO}/tests/key.pem" ]
}
