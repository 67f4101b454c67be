# shellcheck shell=bash
# lib/procs.sh: every process the run starts, on every host, remembered and
# stopped by PID.
#
# CSB_PIDS holds "H PID NAME" per process (H the host, lib/hosts.sh; NAME a
# word of its command line, checked before it is signalled, so a reused PID
# is never hit); each is recorded in run.env as started.<host label> too,
# and in the host's work directory's pids file by the script that started
# it (lib/remote.sh on_host_bg). Monitors are kept apart (lib/monitor.sh):
# they are stopped first, gently.

declare -ga CSB_PIDS=()

# csb_track H PID NAME: remember a process of host H.
csb_track() {
  CSB_PIDS+=("$1 $2 $3")
  csb_run_set "started.${CSB_H_LABEL[$1]}" "$2 $3"
}

# csb_untrack H PID: forget a process of host H that has ended.
csb_untrack() {
  local e keep=()
  for e in "${CSB_PIDS[@]}"; do
    [[ "${e}" == "$1 $2 "* ]] || keep+=("${e}")
  done
  CSB_PIDS=("${keep[@]}")
}

# csb_stop_all: stop every remembered process, one script per host (client
# hosts first: the load goes before the server does).
csb_stop_all() {
  local h e eh pid name script list
  local fn
  fn=$(csb_kill_fn)
  for h in $(csb_clients) 0; do
    script="" list=""
    for e in "${CSB_PIDS[@]}"; do
      read -r eh pid name <<<"${e}"
      ((eh == h)) || continue
      list+="${list:+, }process ${pid} ${name}"
      script+="csb_stop_one ${pid} $(printf '%q' "${name}") 10 TERM 0 &
"
    done
    [[ -n "${script}" ]] || continue
    # One line a host: at C1M a host has a hundred processes.
    log_info "stopping ${CSB_H_LABEL[h]} ${list}"
    if ! on_host_sh "${h}" "${fn}
${script}wait" >/dev/null 2>&1; then
      local hn
      hn=$(csb_host_name "${h}")
      log_warn "could not stop every process of ${hn}: $(csb_pids_of "${h}"); stop them by hand"
    fi
  done
  CSB_PIDS=()
}

# csb_pids_of H: "PID (NAME), ..." of host H's remembered processes and
# monitors.
csb_pids_of() {
  local e eh pid name out=()
  for e in "${CSB_PIDS[@]}" "${CSB_MONITORS[@]}"; do
    read -r eh pid name <<<"${e}"
    ((eh == $1)) && out+=("PID ${pid} (${name})")
  done
  local IFS=,
  printf '%s' "${out[*]}"
}

# csb_hosts_unreachable_report: on the way out with ssh to a host lost (and
# one more try failed), name everything the run leaves running there and
# forget it here: the next run against that host stops it (lib/workdir.sh).
csb_hosts_unreachable_report() {
  local h list e keep
  for h in $(csb_ssh_lost_hosts); do
    csb_ssh_lost_check "${h}" && continue
    list=$(csb_pids_of "${h}")
    log_error "$(csb_host_name "${h}") is unreachable: left running there, to be stopped by the next run against it (recorded in ${CSB_H_WORK[h]}/pids): ${list:-nothing known}"
    csb_run_set "${CSB_H_LABEL[h]}_leftovers" "${list}"
    keep=()
    for e in "${CSB_PIDS[@]}"; do [[ "${e}" == "${h} "* ]] || keep+=("${e}"); done
    CSB_PIDS=("${keep[@]}")
    keep=()
    for e in "${CSB_MONITORS[@]}"; do [[ "${e}" == "${h} "* ]] || keep+=("${e}"); done
    CSB_MONITORS=("${keep[@]}")
  done
}

# csb_stop_recorded_script FILE: the script, for a host's shell, that stops
# every process listed in FILE (a work directory's pids file: "PID START
# CMD" lines) still running with the start time recorded, its process group
# first (TERM, then KILL after 5 s), and prints "PID p (cmd); " for each.
csb_stop_recorded_script() {
  local q
  csb_quote_to q "$1"
  # shellcheck disable=SC2016 # expanded by the host's shell
  printf '%s\n' 'f='"${q}"'; [ -f "$f" ] || exit 0
while read -r p st cmd; do
  now=$(sed "s/.*) //" /proc/$p/stat 2>/dev/null | cut -d" " -f20)
  [ -n "$now" ] && [ "$now" = "$st" ] && csb_alive "$p" || continue
  kill -TERM -- "-$p" 2>/dev/null; kill -TERM "$p" 2>/dev/null
  i=0; while csb_alive "$p" && [ $i -lt 100 ]; do sleep 0.05; i=$((i+1)); done
  csb_alive "$p" && { kill -KILL -- "-$p" 2>/dev/null; kill -KILL "$p" 2>/dev/null; }
  printf "PID %s (%s); " "$p" "$cmd"
done <"$f"'
}

# csb_stop_recorded: the net under csb_stop_all, at the end of a run. The
# script that starts a process writes it in its host's pids file before the
# runner reads its PID back; a signal in between (Ctrl-C while a launch's
# answer is on its way) leaves it untracked. Whatever of the run's own is
# still running on a host then is stopped here and named.
csb_stop_recorded() {
  local h stopped
  for h in $(csb_hosts); do
    [[ -n "${CSB_H_WORK[h]:-}" ]] || continue
    ! csb_ssh_lost "${h}" || continue
    stopped=$(on_host_sh "${h}" "$(csb_stop_recorded_script "${CSB_H_WORK[h]}/pids")") || continue
    [[ -z "${stopped}" ]] || log_warn "${CSB_H_LABEL[h]}: still running at the end, never tracked (its launch was cut short); stopped now: ${stopped% }"
  done
}
