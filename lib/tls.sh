# shellcheck shell=bash
# lib/tls.sh: HTTPS in every HTTP phase (SCHEME=https).
#
# With SCHEME=https the run makes its own TLS material on the server host,
# inside the run's private work directory (bin/tls/, mode 0700):
# `csb cert` (crypto/x509, no openssl) makes a CA and a certificate for
# SERVER_IP (an IP SAN) with a TLS_KEY_TYPE key; the CA's key is never
# written, the server key is key.pem, mode 0600. bin/ is never fetched
# into the run directory, and the work directory is removed at the end of
# the run, key included; the key is copied nowhere else. The CA and the
# certificate (not the key) are kept in env/server/tls-ca.pem and
# env/server/tls-cert.pem; every client host gets the CA in its work
# directory's bin/ and trusts it (curl --cacert, connclient -tls-ca, csb
# tls-probe). wrk and oha verify nothing.
# TLS_CERT, TLS_KEY and TLS_CA bring your own material instead (all three):
# checked with `csb cert -check` before anything starts, the key copied into
# the same private directory (0600) and removed with it.
#
# The reference server gets -tls-cert/-tls-key (and -tls-tickets=false with
# TLS_TICKETS=0); nginx gets `listen ... ssl` with the same files.

csb_config_declare SCHEME http "enum:http|https" \
  "http or https: the scheme of every HTTP phase (https: a lab CA and a certificate for SERVER_IP made for the run)"
csb_config_declare TLS_KEY_TYPE ecdsa-p256 "enum:ecdsa-p256|rsa-2048" \
  "SCHEME=https: the key type of the run's CA and server certificate"
csb_config_declare TLS_TICKETS 1 bool \
  "SCHEME=https: 1 the server issues session tickets (clients may resume), 0 every handshake is full"
csb_config_declare TLS_CERT "" path_or_empty \
  "SCHEME=https: your own server certificate (PEM) instead of the lab's; with TLS_KEY and TLS_CA"
csb_config_declare TLS_KEY "" path_or_empty \
  "SCHEME=https: the private key (PEM) of TLS_CERT; copied into the run's private server directory (0600), removed with it"
csb_config_declare TLS_CA "" path_or_empty \
  "SCHEME=https: the CA certificate (PEM) that signed TLS_CERT, which the clients trust"

# What the other modules pass on, set by csb_tls_deploy (empty with http);
# a client host's connclient flags are csb_tls_client_flags K.
# shellcheck disable=SC2034 # read by lib/server.sh, lib/loadgen.sh
declare -ga CSB_TLS_SERVER_FLAGS=() CSB_CURL_TLS=()
CSB_TLS_DIR=""
CSB_TLS_CA_LOCAL=""
CSB_TLS_SOURCE=""

# (SCHEME may be unset where a test sources the library without a config.)
csb_tls_on() { [[ "${SCHEME:-http}" == https ]]; }

# csb_tls_material_check: your own material checked by Go (key readable and
# of a supported type, the pair, the chain for SERVER_IP), with bin/csb
# built first: part of the settings' validation, so before anything starts.
# Prints csb's one line and returns 1.
csb_tls_material_check() {
  local out ip
  # SERVER_IP as the lab will fill it (csb_lab_defaults runs after the
  # checks; here in a subshell, changing nothing).
  ip=$(csb_lab_defaults && printf '%s' "${SERVER_IP}")
  [[ -n "${ip}" ]] || { printf 'error: SCHEME=https with TLS_CERT needs SERVER_IP (the address the certificate must name)\n' >&2; return 1; }
  out=$(csb_csb cert -check -ip "${ip}" -cert "${TLS_CERT}" -key "${TLS_KEY}" -ca "${TLS_CA}" 2>&1) && return 0
  printf 'error: %s\n' "${out#error: }" >&2
  return 1
}

# csb_tls_deploy: the run's TLS material in the server's private work
# directory (bin/tls, 0700; key 0600), the CA and certificate copied into
# env/server/, and the flags the server, curl and connclient get. Records
# tls.* in run.env.
csb_tls_deploy() {
  CSB_TLS_SERVER_FLAGS=() CSB_CURL_TLS=()
  csb_run_set tls.scheme "${SCHEME}"
  csb_tls_on || return 0
  local dir="${CSB_H_WORK[0]}/bin/tls" out
  # shellcheck disable=SC2034 # read by lib/server.sh (nginx's ssl_certificate)
  CSB_TLS_DIR=${dir}
  local guard qdir
  guard=$(csb_remote_guard "${CSB_H_WORK[0]}")
  csb_quote_to qdir "${dir}"
  on_server_sh "${guard}
mkdir -p -m 0700 ${qdir} && chmod 0700 ${qdir}" ||
    die "could not make ${dir} on the server host" 1
  if [[ -n "${TLS_CERT}" ]]; then
    if ! { csb_host_put 0 "${TLS_KEY}" "${dir}/key.pem" 0600 && csb_host_put 0 "${TLS_CERT}" "${dir}/cert.pem" 0644 &&
      csb_host_put 0 "${TLS_CA}" "${dir}/ca.pem" 0644; }; then
      die "could not copy TLS_CERT, TLS_KEY, TLS_CA into ${dir} on the server host" 1
    fi
    CSB_TLS_SOURCE=user
  else
    csb_host_put 0 "${CSB_ROOT}/bin/csb" "${CSB_H_WORK[0]}/bin/csb" 0755 ||
      die "could not copy bin/csb to ${CSB_H_WORK[0]}/bin on the server host" 1
    local -a cmd=("${CSB_H_WORK[0]}/bin/csb" cert -ip "${SERVER_IP}" -key-type "${TLS_KEY_TYPE}" -dir "${dir}")
    log_cmd "${cmd[@]}"
    out=$(on_server_sh "$(csb_quote "${cmd[@]}") 2>&1") ||
      die "csb cert failed on the server host: ${out}" 1
    CSB_TLS_SOURCE=lab
  fi
  csb_run_set tls.source "${CSB_TLS_SOURCE}"
  mkdir -p "${CSB_RUN_DIR}/env/server"
  local f
  for f in ca cert; do
    if ! { on_server_sh "cat $(csb_quote "${dir}/${f}.pem")" >"${CSB_RUN_DIR}/env/server/tls-${f}.pem.tmp" &&
      mv -f "${CSB_RUN_DIR}/env/server/tls-${f}.pem.tmp" "${CSB_RUN_DIR}/env/server/tls-${f}.pem"; }; then
      die "could not fetch ${dir}/${f}.pem from the server host" 1
    fi
  done
  CSB_TLS_CA_LOCAL="${CSB_RUN_DIR}/env/server/tls-ca.pem"
  local k
  for k in $(csb_clients); do
    csb_host_put "${k}" "${CSB_TLS_CA_LOCAL}" "$(csb_client_bin "${k}")/tls-ca.pem" 0644 ||
      die "could not copy the run's CA to $(csb_host_name "${k}")" 1
  done
  csb_run_set tls.key_type "${TLS_KEY_TYPE}"
  csb_run_set tls.tickets "${TLS_TICKETS}"
  CSB_TLS_SERVER_FLAGS=(-tls-cert "${dir}/cert.pem" -tls-key "${dir}/key.pem")
  ((TLS_TICKETS)) || CSB_TLS_SERVER_FLAGS+=(-tls-tickets=false)
  # shellcheck disable=SC2034 # read by lib/server.sh and lib/loadgen.sh (curl)
  CSB_CURL_TLS=(--cacert "${CSB_TLS_CA_LOCAL}")
  log_info "TLS: ${TLS_KEY_TYPE} certificate for ${SERVER_IP} (${CSB_TLS_SOURCE} material), key in the server's private ${dir} (0600, removed with it); CA kept in env/server/tls-ca.pem; tickets $( ((TLS_TICKETS)) && echo on || echo off)"
  log_info "TLS: wrk and oha do not verify the certificate (they have no option to); curl, connclient and csb tls-probe trust only the run's CA"
}

# csb_tls_client_flags K: connclient's TLS flags on client K (nothing with
# http): trust the run's CA, in the host's bin/.
csb_tls_client_flags() {
  ! csb_tls_on || printf '%s\n' -tls-ca "$(csb_client_bin "$1")/tls-ca.pem"
}

# csb_tls_probe: what a client's first connection negotiates (version,
# cipher, key type) and whether a second resumes, in raw/tls-probe.json.
csb_tls_probe() {
  csb_tls_on || return 0
  local -a cmd=("${CSB_ROOT}/bin/csb" tls-probe -target "$(csb_url_host "${SERVER_IP}"):${SERVER_PORT}"
    -ca "${CSB_TLS_CA_LOCAL}" -out "${CSB_RUN_DIR}/raw/tls-probe.json")
  log_cmd "${cmd[@]}"
  local out
  out=$("${cmd[@]}" 2>&1) || die "the server under test's TLS did not pass the probe: ${out#error: }" 2
}

# csb_base_url: SCHEME://SERVER_IP:SERVER_PORT
csb_base_url() { printf '%s://%s:%s' "${SCHEME:-http}" "$(csb_url_host "${SERVER_IP}")" "${SERVER_PORT}"; }
