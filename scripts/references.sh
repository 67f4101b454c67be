#!/usr/bin/env bash
# scripts/references.sh: re-make the committed reference runs and comparisons.
#
# Usage: sudo bash scripts/references.sh [-h] [GROUP...]
#
# On the netns lab, in the groups named (default: all, in this order):
#   phases         the quick profile: Phase 0; Phase 1 with REPEAT=5 and
#                  Phase 2 with REPEAT=3 (so their CPU-bound figures are
#                  medians); the three Phase 3 runners; Phase 4 (with
#                  CLIENT_PORT_RANGE=40000-40999, so the client-closed churn
#                  meets its port wall within the quick cells); bin/csb report
#   c1m            03-c10k/run_c10k_beyond.sh with the full profile (steps
#                  20k, 50k, 100k, 1m) with SERVER=nginx, named c1m, and
#                  with the reference server, named c1m-csb, idle at 100k,
#                  500k and 1m (its 1m step does not fit in memory: refused
#                  before it starts, from what 500k measured);
#                  hosts unpinned (CPU_PIN=0)
#   csb-vs-nginx   Phases 0-3 (run_c10k.sh) with SERVER=csb and SERVER=nginx,
#                  the server process pinned to CPU 1 (SERVER_CPUS=1) and
#                  the hosts not (CPU_PIN=0), as the committed comparison was;
#                  Phase 0 once a side, Phases 1-3 each an interleaved A/B
#                  of 4 rounds (scripts/ab.sh, ABBA; compare/csb-vs-nginx/
#                  ab.env), pooled by bin/csb compare -roots -all (p-values)
#   http-vs-https  Phase 1 (REPEAT=3) and Phase 3 idle with SCHEME=http and
#                  SCHEME=https
#   clients1-vs-clients2
#                  Phases 0 and 1 with one client host and with two
#                  (CLIENTS=2: the lab's switch, both clients at once)
#   http1-vs-http2 for SERVER=csb and SERVER=nginx, in cleartext, one right
#                  after the other: Phase 1 (REPEAT=3), Phase 2 (HTTP/2:
#                  CONCURRENCY=16,64 x STREAMS=1,4,16, so that 16, 64
#                  and 256 requests in flight meet HTTP/1.1's 16, 64 and
#                  256 connections), Phase 3 active and idle at 10k (HTTP/2:
#                  10k streams over 100 connections) over HTTP/1.1 and over
#                  HTTP/2 (h2c), into compare/http1-vs-http2/<server>/
#                  {http1,http2}/, each server's README.md by bin/csb
#                  compare -roots
#   capacity       Phase 5 (quick) with SERVER=csb and with SERVER=nginx,
#                  each named by its server, and nginx again with
#                  NGINX_TCP_NOPUSH=off (capacity-nginx-nopush-off); the connclient engine
#                  benchmark (scripts/engine-bench.sh -c 64 -l 1024 -n 5)
#                  into 05-capacity/results/<date>_engine-bench
# The phases, c1m and capacity groups run into a private results root
# (runs/references.XXXXXX) and their runs are then moved into each
# phase's results/, which holds the references alone; a comparison's runs
# go into compare/<a>-vs-<b>/{<a>,<b>}/ and bin/csb compare -roots writes
# its README.md. Every reference run is pruned of what summarize does not
# read and the repository need not carry: the ss port dumps
# (raw/*.ports.txt, read by the planner during the run) are removed, and
# h2load's per-request logs are replaced by their tallies (bin/csb
# h2load-tally: the requests by status and the exact latency distribution,
# which is all summarize reads of them, with the log's SHA-256), and
# Phase 3's ss listings of the held connections by their counts (bin/csb
# lines-tally: NAME.lines.json, with the listing's SHA-256); every
# other file of raw/, monitors/ and an engine benchmark's rep-N/ of 64 KiB
# or more is gzipped (NAME.gz, byte for byte the same once unzipped;
# bin/csb reads either form, zcat reads it by hand); then the moved runs
# are summarized again where they lie.
# All groups take about 50 minutes; run them on a quiet machine (the
# reports mark disturbed cells). The new runs go beside the old ones:
# remove the old directories (git rm) and update README.md's "Results at
# a glance" and docs/results.md before committing (git add -f: results/
# is ignored, so that nothing else lands there by mistake).
#
# Requires root (the netns lab), nginx (make setup). Loads lib/init.sh.
#
# Examples:
#   sudo bash scripts/references.sh
#   sudo bash scripts/references.sh clients1-vs-clients2 c1m

# shellcheck source=lib/init.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/init.sh"

usage() { sed -n '2,/^$/{s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"; }

# refs_run RUNNER ARGS...: one runner; a failure is counted, the rest goes on.
REFS_FAILED=()
refs_run() {
  log_info "references: $*"
  bash "${CSB_ROOT}/$1" "${@:2}" || REFS_FAILED+=("$1")
}

REFS_GROUPS=(phases c1m csb-vs-nginx http-vs-https clients1-vs-clients2 http1-vs-http2 capacity)

# refs_prune DIR...: leave out of the reference runs under each DIR what
# summarize does not read (the port dumps), keep h2load's logs as their
# tallies and ss listings as their counts, and gzip their raw files of 64 KiB or more (REFS_GZIP_MIN
# bytes): sar.bin, sar.json, pidstat's text, ss listings, connclient's
# results.
REFS_GZIP_MIN=65536
refs_prune() {
  find "$@" -name '*.ports.txt' -type f -delete || REFS_FAILED+=("prune $*")
  refs_tally h2load-tally '*.h2load.log' "$@"
  refs_tally lines-tally '*.established' "$@"
  find "$@" -type f \( -path '*/raw/*' -o -path '*/monitors/*' -o -path '*/rep-[0-9]*/*' \) \
    ! -name '*.gz' -size +$((REFS_GZIP_MIN - 1))c -exec gzip -n -9 {} + || REFS_FAILED+=("gzip $*")
}

# refs_tally COMMAND NAME DIR...: the files named NAME (or NAME.gz) under
# each DIR replaced by what bin/csb COMMAND keeps of them, the files removed
# only when it kept all.
refs_tally() {
  local cmd=$1 name=$2
  shift 2
  local -a files
  mapfile -d '' files < <(find "$@" -type f \( -name "${name}" -o -name "${name}.gz" \) -print0)
  ((${#files[@]})) || return 0
  if "${CSB_ROOT}/bin/csb" "${cmd}" "${files[@]}" >/dev/null; then
    rm -f -- "${files[@]}"
  else
    REFS_FAILED+=("${cmd} $*")
  fi
}

# refs_adopt: move the runs made in the private root (RESULTS_ROOT/<phase>/
# <run>) into <phase>/results/, pruned, and summarize them where they lie
# (a Phase 1 run finds its Phase 0 baseline beside it there too).
refs_adopt() {
  local run phase
  local -a moved=()
  for run in "${RESULTS_ROOT}"/0*/*/; do
    [[ -d "${run}" ]] || continue
    run=${run%/}
    phase=$(basename "$(dirname "${run}")")
    mkdir -p "${CSB_ROOT}/${phase}/results"
    mv -- "${run}" "${CSB_ROOT}/${phase}/results/" || { REFS_FAILED+=("move ${run}"); continue; }
    moved+=("${CSB_ROOT}/${phase}/results/$(basename "${run}")")
  done
  ((${#moved[@]})) || return 0
  refs_prune "${moved[@]}"
  bin/csb summarize "${moved[@]}" >/dev/null || REFS_FAILED+=("csb summarize the moved runs")
}

# refs_compare NAME A B: bin/csb compare -roots over compare/NAME/{A,B}, with
# the same relative paths scripts/check-generated.sh regenerates it with;
# with -all (every run of a root pooled) where compare/NAME/ab.env says
# its runs are an A/B's rounds (refs_ab).
refs_compare() {
  local -a all=()
  [[ ! -f "compare/$1/ab.env" ]] || all=(-all)
  bin/csb compare -roots "${all[@]}" -out "compare/$1/README.md" "compare/$1/$2" "compare/$1/$3" ||
    REFS_FAILED+=("csb compare -roots $1")
}

# refs_ab NAME A B RUNNER -a KEY=VALUE... -b KEY=VALUE... [-s ...]: an
# interleaved A/B of RUNNER (scripts/ab.sh, REFS_AB_ROUNDS rounds, ABBA)
# whose side A's runs go into compare/NAME/A/ and side B's into
# compare/NAME/B/; its ab.env (the sides and the order of the runs) is
# added to compare/NAME/ab.env, which makes refs_compare pool the rounds.
REFS_AB_ROUNDS=4
REFS_AB_GZIP_MIN=16384
refs_ab() {
  local name=$1 a=$2 b=$3 runner=$4 out side dest run
  local -a moved=()
  shift 4
  out="${RESULTS_ROOT}/ab-${name}-$(basename "${runner}" .sh)"
  log_info "references: A/B ${name}: ${runner} $*"
  bash "${CSB_ROOT}/scripts/ab.sh" -n "${REFS_AB_ROUNDS}" -o "${out}" "$@" "${runner}" ||
    REFS_FAILED+=("ab ${name} ${runner}")
  for side in a b; do
    dest="${CSB_ROOT}/compare/${name}/${a}"
    [[ "${side}" == a ]] || dest="${CSB_ROOT}/compare/${name}/${b}"
    for run in "${out}/${side}"/0*/*/; do
      [[ -d "${run}" ]] || continue
      run=${run%/}
      mkdir -p "${dest}/$(basename "$(dirname "${run}")")"
      mv -- "${run}" "${dest}/$(basename "$(dirname "${run}")")/" || { REFS_FAILED+=("move ${run}"); continue; }
      moved+=("${dest}/$(basename "$(dirname "${run}")")/$(basename "${run}")")
    done
  done
  # Summarized again where they lie: a Phase 1 run finds the side's Phase 0 there.
  ((${#moved[@]} == 0)) || bin/csb summarize "${moved[@]}" >/dev/null || REFS_FAILED+=("csb summarize ${name}")
  [[ ! -f "${out}/ab.env" ]] || { echo "# ${runner}" && cat "${out}/ab.env"; } >>"${CSB_ROOT}/compare/${name}/ab.env"
}

refs_group() {
  local s
  case "$1" in
    phases)
      refs_run 00-iperf3/run_iperf3_baseline.sh
      refs_run 01-http-baseline/run_http_baseline.sh -s REPEAT=5
      refs_run 02-http-matrix/run_http_matrix.sh -s REPEAT=3
      refs_run 03-c10k/run_c10k.sh
      refs_run 03-c10k/run_c10k_beyond.sh
      refs_run 03-c10k/run_c10k_beyond_lowrate_retry.sh
      refs_run 04-connections/run_connections.sh -s CLIENT_PORT_RANGE=40000-40999
      refs_adopt
      bin/csb report || REFS_FAILED+=("csb report")
      ;;
    c1m)
      # Unpinned, the hosts share both cores (pinned, the 51 connclient
      # processes of the 1m step saturate the client's one core).
      refs_run 03-c10k/run_c10k_beyond.sh -p full -n c1m -s SERVER=nginx -s CPU_PIN=0
      refs_run 03-c10k/run_c10k_beyond.sh -p full -n c1m-csb -s SERVER=csb -s CPU_PIN=0 -s CONNS=100k,500k,1m -s SCENARIOS=idle
      refs_adopt
      ;;
    capacity)
      for s in csb nginx; do
        refs_run 05-capacity/run_capacity.sh -n "capacity-${s}" -s SERVER="${s}"
      done
      # nginx as shipped corks its answers (tcp_nopush): the same search without.
      refs_run 05-capacity/run_capacity.sh -n capacity-nginx-nopush-off -s SERVER=nginx -s NGINX_TCP_NOPUSH=off
      bash "${CSB_ROOT}/scripts/engine-bench.sh" -o "${CSB_ROOT}/05-capacity/results/$(date -u +%Y-%m-%d_%H%M%S)_engine-bench" \
        -c 64 -l 1024 -d 10 -n 5 || REFS_FAILED+=("scripts/engine-bench.sh")
      refs_adopt
      ;;
    csb-vs-nginx)
      # The link once a side (it is not the server's); each server phase
      # an interleaved A/B, so every figure has its rounds and p-value.
      for s in csb nginx; do
        refs_run 00-iperf3/run_iperf3_baseline.sh -r "${CSB_ROOT}/compare/csb-vs-nginx/${s}" -s CPU_PIN=0
      done
      for s in 01-http-baseline/run_http_baseline.sh 02-http-matrix/run_http_matrix.sh 03-c10k/run_c10k.sh; do
        refs_ab csb-vs-nginx csb nginx "${s}" -s SERVER_CPUS=1 -s CPU_PIN=0 -a SERVER=csb -b SERVER=nginx
      done
      # Four rounds a side: raw files from 16 KiB on gzipped, so each side
      # stays under scripts/check-sizes.sh's 10 MB (12.9 MB at 64 KiB).
      REFS_GZIP_MIN=${REFS_AB_GZIP_MIN} refs_prune compare/csb-vs-nginx
      refs_compare csb-vs-nginx csb nginx
      ;;
    http-vs-https)
      for s in http https; do
        refs_run 01-http-baseline/run_http_baseline.sh -r "${CSB_ROOT}/compare/http-vs-https/${s}" -s SCHEME="${s}" -s REPEAT=3
        refs_run 03-c10k/run_c10k.sh -r "${CSB_ROOT}/compare/http-vs-https/${s}" -s SCHEME="${s}" -s SCENARIOS=idle
      done
      refs_prune compare/http-vs-https
      refs_compare http-vs-https http https
      ;;
    http1-vs-http2)
      local d v
      for s in csb nginx; do
        for v in 1.1 2; do
          d="${CSB_ROOT}/compare/http1-vs-http2/${s}/http${v%.1}"
          local -a h2=(-s HTTP="${v}") m=()
          [[ "${v}" == 1.1 ]] || m=(-s "CONCURRENCY=16,64" -s "STREAMS=1,4,16")
          refs_run 01-http-baseline/run_http_baseline.sh -r "${d}" -s SERVER="${s}" -s REPEAT=3 "${h2[@]}"
          refs_run 02-http-matrix/run_http_matrix.sh -r "${d}" -s SERVER="${s}" "${h2[@]}" "${m[@]}"
          refs_run 03-c10k/run_c10k.sh -r "${d}" -s SERVER="${s}" -s SCENARIOS=active,idle "${h2[@]}"
        done
        refs_prune "compare/http1-vs-http2/${s}"
        refs_compare "http1-vs-http2/${s}" http1 http2
      done
      ;;
    clients1-vs-clients2)
      for s in 1 2; do
        CLIENTS=${s} refs_run 00-iperf3/run_iperf3_baseline.sh -r "${CSB_ROOT}/compare/clients1-vs-clients2/clients${s}"
        CLIENTS=${s} refs_run 01-http-baseline/run_http_baseline.sh -r "${CSB_ROOT}/compare/clients1-vs-clients2/clients${s}"
      done
      refs_prune compare/clients1-vs-clients2
      refs_compare clients1-vs-clients2 clients1 clients2
      ;;
  esac
}

main() {
  local g
  local -a groups=()
  while (($#)); do
    case "$1" in
      -h | --help) usage; exit 0 ;;
      -*) usage_error "unexpected flag: $1" ;;
      *)
        [[ " ${REFS_GROUPS[*]} " == *" $1 "* ]] || usage_error "unknown group $1: one of ${REFS_GROUPS[*]}"
        groups+=("$1")
        ;;
    esac
    shift
  done
  ((${#groups[@]})) || groups=("${REFS_GROUPS[@]}")
  [[ ${EUID} -eq 0 ]] || die "the reference runs use the netns lab, which needs root: sudo bash scripts/references.sh" 2
  export LAB=netns PROFILE=quick
  unset SERVER SERVER_CPUS REPEAT SCHEME CLIENTS CLIENT_HOSTS
  cd "${CSB_ROOT}"
  make build >/dev/null
  # Runs go to a private root first (mktemp: 0700), then refs_adopt moves
  # them into <phase>/results/; what is left there (a failed move) is kept.
  mkdir -p runs
  RESULTS_ROOT="$(mktemp -d "${CSB_ROOT}/runs/references.XXXXXX")"
  export RESULTS_ROOT
  for g in "${groups[@]}"; do
    log_info "references: group ${g}"
    refs_group "${g}"
  done
  find "${RESULTS_ROOT}" -depth -type d -empty -delete
  if ((${#REFS_FAILED[@]})); then
    die "failed: ${REFS_FAILED[*]}" 1
  fi
  log_info "references made; now git rm the old runs, update README.md, git add -f the new ones"
}

main "$@"
