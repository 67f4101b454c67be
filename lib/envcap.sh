# shellcheck shell=bash
# lib/envcap.sh: capture every host's environment into env/<label>/. The
# capture itself is lib/host/capture-env.sh, sent to each host's bash (over
# ssh where the host is remote), so a host needs no repo.

csb_capture_env() {
  local script h jobs=()
  script="$(<"${CSB_LIB}/host/capture-env.sh")"
  for h in $(csb_hosts); do
    on_host_sh "${h}" "set -- $(csb_quote "${CSB_H_WORK[h]}/env/${CSB_H_LABEL[h]}" "${CSB_H_NIC[h]}")
${script}" || log_warn "environment capture on $(csb_host_name "${h}") failed" &
    jobs+=($!)
  done
  csb_wait_jobs "${jobs[@]}" || true
  log_info "environment captured on every host"
}
