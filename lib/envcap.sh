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
  csb_oom_record before
  log_info "environment captured on every host"
}

# csb_oom_record WHEN: every reachable host's OOM killer count, before the
# first cell (WHEN=before) and at the end (after), into run.env:
# oom_kill.WHEN.<label> (the kernel's oom_kill counter, /proc/vmstat) and
# oom_dmesg.WHEN.<label> (dmesg's "Out of memory: Killed process" lines;
# "unreadable" where dmesg is restricted). csb summarize reads them: a run
# during which either grew is not ok.
CSB_OOM_RECORDED=0
csb_oom_record() {
  local when=$1 h out kill dm
  # shellcheck disable=SC2034 # read by lib/rundir.sh (csb_on_exit)
  CSB_OOM_RECORDED=1
  for h in $(csb_hosts); do
    csb_ssh_lost "${h}" && continue
    # shellcheck disable=SC2016 # expanded by the host's shell
    out=$(on_host_sh "${h}" 'awk '\''$1 == "oom_kill" { print $2; f = 1 } END { if (!f) print "unreadable" }'\'' /proc/vmstat 2>/dev/null || echo unreadable
if d=$(dmesg 2>/dev/null); then printf "%s\n" "$d" | { grep -c "Out of memory: Killed process" || true; }; else echo unreadable; fi') || out=""
    local -a got=()
    mapfile -t got <<<"${out}"
    kill=${got[0]:-} dm=${got[1]:-}
    [[ "${kill}" =~ ^[0-9]+$ ]] || kill=unreadable
    [[ "${dm}" =~ ^[0-9]+$ ]] || dm=unreadable
    csb_run_set "oom_kill.${when}.${CSB_H_LABEL[h]}" "${kill}"
    csb_run_set "oom_dmesg.${when}.${CSB_H_LABEL[h]}" "${dm}"
  done
}
