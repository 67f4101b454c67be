# shellcheck shell=bash
# lib/envcap.sh: capture both hosts' environment into env/server and
# env/client. The capture itself is lib/host/capture-env.sh, sent to each
# host's bash (over ssh for the server), so the server needs no repo.

csb_capture_env() {
  local script
  script="$(<"${CSB_LIB}/host/capture-env.sh")"
  on_server_sh "set -- $(csb_quote "${CSB_REMOTE_RUN}/env/server" "${SERVER_NIC}")
${script}" || log_warn "environment capture on the server failed"
  bash -c "${script}" capture-env "${CSB_RUN_DIR}/env/${CSB_CLIENT_LABEL}" "${CLIENT_NIC}" ||
    log_warn "environment capture on the client failed"
  csb_clients_capture_env
  log_info "environment captured on both hosts"
}
