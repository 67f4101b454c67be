# shellcheck shell=bash
# lib/c10ksnap.sh: Phase 3's snapshots of a scenario on every host, the
# raw files its memory per connection and its connection counts come from
# (lib/c10k.sh takes them around each scenario; csb summarize counts them),
# and the copy of a cell's memory snapshots that plans the next step.

# c10k_snapshot CELL WHEN [SS [AT]]: the server processes' /proc/PID/status,
# every host's /proc/net/sockstat and /proc/meminfo, and the server host's /proc/slabinfo
# ("unreadable" when not root) and page size: the ways of memory per
# connection; with SS=1 also the ESTABLISHED sockets of the server port on
# every host (ss, gzipped: at 1m it is 70 MB a host), all hosts at once
# (AT, Unix ms: each host at that moment; 0 or none: now). Raw files;
# counted by csb summarize.
# ss walks the kernel's socket hash, shared by every namespace of a machine:
# with 10k connections it stalled a low-rate client's sender by 20 ms, so it
# is taken only while no request is in flight (idle holds).
c10k_snapshot() {
  local -a hosts
  mapfile -t hosts < <(csb_hosts)
  c10k_snapshot_on "$1" "$2" "${3:-0}" "${4:-0}" "${hosts[@]}"
}

# c10k_snapshot_on CELL WHEN SS AT H...: c10k_snapshot on hosts H, each
# over its ssh, all at once.
c10k_snapshot_on() {
  local cell=$1 when=$2 ss=$3 at=$4 h
  shift 4
  local -a jobs=()
  for h in "$@"; do
    on_host_sh "${h}" "$(c10k_snapshot_sh "${cell}" "${when}" "${ss}" "${at}" "${h}")" ||
      log_warn "snapshot ${cell}.${when} failed on $(csb_host_name "${h}")" &
    jobs+=($!)
  done
  csb_wait_jobs "${jobs[@]}" || true
}

# c10k_snapshot_sh CELL WHEN SS AT H [FLOOR_MS]: host H's script of
# c10k_snapshot. FLOOR_MS: the least it waits from the moment the host runs
# it, for a snapshot that goes with a tool's launch: a host whose launch
# came after the due time starts its tool late, and its snapshot is still
# half way through the tool's run, never at its first connects.
c10k_snapshot_sh() {
  local with_ss=$3 at=$4 h=$5 floor=$((${6:-0})) d script base="$1.$2"
  d="$(csb_monitor_dir "${h}")/c10k"
  script=""
  # AT: each host waits for that moment on its own clock (checked against
  # this one's), so a slow ssh round trip does not move the snapshot.
  # shellcheck disable=SC2016 # expanded by the host's shell
  ((at == 0)) || script='left=$(('"${at}"' - $(date +%s%3N))); if [ "${left}" -lt '"${floor}"' ]; then left='"${floor}"'; fi; if [ "${left}" -gt 0 ]; then sleep "$((left / 1000)).$(printf %03d $((left % 1000)))"; fi; '
  local qd qb qpids qf
  csb_quote_to qd "${d}"
  csb_quote_to qb "${base}"
  script+="mkdir -p ${qd} && cd ${qd} && cat /proc/net/sockstat >${qb}.sockstat && cat /proc/meminfo >${qb}.meminfo"
  if ((h == 0)); then
    csb_quote_to qpids "${CSB_HTTP_PIDS[@]}"
    script+="; for p in ${qpids}; do echo \"== \$p\"; cat /proc/\$p/status; done >${qb}.status 2>&1; { cat /proc/slabinfo 2>/dev/null || echo unreadable; } >${qb}.slabinfo; getconf PAGESIZE >${qb}.pagesize"
    csb_quote_to qf "( sport = :${SERVER_PORT} )"
  else
    csb_quote_to qf "( dport = :${SERVER_PORT} )"
  fi
  ((!with_ss)) || script+="; ss -Htn state established ${qf} | gzip -1 >${qb}.established.gz"
  printf '%s\n' "${script}"
}

# c10k_snapshot_with_launch CELL AT: the held snapshot at AT of a cell whose
# tools print nothing until they end (wrk, h2load): each client host's goes
# with its launch (CSB_P_ALSO), there before the due time however slow its
# ssh, and at least AT - due after the launch (a late launch starts its
# tool late); the other hosts' (the server's) are sent now, in the
# background (C10K_SNAP_JOB, waited for with csb_wait_jobs).
# shellcheck disable=SC2034 # waited for by lib/c10k.sh (c10k_scenario)
C10K_SNAP_JOB=""
c10k_snapshot_with_launch() {
  local h
  local -a others=()
  for h in $(csb_hosts); do
    if csb_procs_hosts | grep -qx "${h}"; then
      # shellcheck disable=SC2034 # read by csb_procs_start (lib/cell.sh)
      CSB_P_ALSO["${h}"]=$(c10k_snapshot_sh "$1" held 0 "$2" "${h}" "$(($2 - CSB_P_DUE_MS))")
    else
      others+=("${h}")
    fi
  done
  c10k_snapshot_on "$1" held 0 "$2" "${others[@]}" &
  # shellcheck disable=SC2034 # waited for by lib/c10k.sh (c10k_scenario)
  C10K_SNAP_JOB=$!
}

# c10k_cost_files CELL: the cell's memory snapshots (meminfo, sockstat,
# page size) copied from every host into the run directory now, not only
# at the end: the next step's plan predicts its memory from them
# (`csb c10k-plan -cost-run`).
c10k_cost_files() {
  local cell=$1 h d
  for h in $(csb_hosts); do
    d="${CSB_RUN_DIR}/monitors/${CSB_H_LABEL[h]}/c10k"
    mkdir -p "${d}"
    local qdir qcell
    qdir=$(csb_monitor_dir "${h}")
    csb_quote_to qdir "${qdir}/c10k"
    csb_quote_to qcell "${cell}"
    # shellcheck disable=SC2016 # expanded by the host's shell
    on_host_sh "${h}" "cd ${qdir} && set -- ${qcell}"'
for f in "$1".before.meminfo "$1".held.meminfo "$1".before.sockstat "$1".held.sockstat "$1".before.pagesize; do [ -f "$f" ] && set -- "$@" "$f"; done
shift; [ $# -gt 0 ] && tar -cf - "$@"' | tar -xf - -C "${d}" 2>/dev/null ||
      log_warn "${cell}: its memory snapshots could not be copied from $(csb_host_name "${h}"): the next step is planned from the estimates"
  done
}
