#!/usr/bin/env bash
# scripts/ab.sh: an interleaved A/B: one runner with two configurations, run
# alternately, then compared with significance.
#
# Usage: bash scripts/ab.sh [-h] [-n ROUNDS] [-o DIR] [-s KEY=VALUE]...
#                           -a KEY=VALUE [-a ...] -b KEY=VALUE [-b ...] RUNNER
#
# RUNNER is a phase runner (e.g. 05-capacity/run_capacity.sh). -a and -b
# give the settings of each side (as the runner's -s: SERVER=csb against
# SERVER=nginx, NGINX_WORKERS=1 against 2, SCHEME=http against https,
# SLOTS=40 against 44, or a user's SERVER_CMD against another); -s gives
# settings both sides share (LAB, PROFILE and the rest also come from the
# environment and lab.env, as for any runner). Each of ROUNDS rounds
# (default 4, the fewest a side needs for a verdict at α = 0.05) runs both
# sides, in the order A B in odd rounds and B A in even ones (ABBA), so
# that a drift of the machine falls on both sides alike. Each side's runs
# land in a results root of its own, DIR/a and DIR/b (default
# runs/ab/<time>_<runner>), and at the end `bin/csb compare -roots -all`
# pools each side's runs into DIR/README.md: each figure's median with its
# interval, the change, and the Mann-Whitney U test's p-value (`~` where
# the change may be noise). DIR/ab.env records the sides, the rounds and
# the order the runs were made in.
#
# Before the first run, both sides are checked as the runner checks its
# settings (CSB_CHECK_ONLY=1): a bad setting on either side stops it with
# exit 2 before anything is sent or written. With LAB=netns the lab is
# brought up once when it is not (root) and taken down at the end. Before
# each run it logs `round k/n` with the time left. A run that fails is
# named and the A/B goes on; the comparison is still written from the runs
# that made a summary, and the exit status is 1.
#
# Exit status: 0 every run ok and the comparison written; 1 a run failed
# or the comparison could not be made; 2 bad usage or settings.
#
# Examples:
#   sudo bash scripts/ab.sh -s PROFILE=quick -s PAYLOADS=1k -a SLOTS=40 -b SLOTS=44 05-capacity/run_capacity.sh
#   sudo bash scripts/ab.sh -n 6 -a SERVER=csb -b SERVER=nginx 01-http-baseline/run_http_baseline.sh

# shellcheck source=lib/init.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/init.sh"

usage() { sed -n '2,/^$/{s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"; }

# ab_setting VALUE: a -a/-b/-s value is KEY=VALUE with an upper-case key.
ab_setting() {
  [[ "$1" =~ ^[A-Z][A-Z0-9_]*=.*$ ]] || usage_error "expected KEY=VALUE (an upper-case setting), got: $1"
}

main() {
  local rounds=4 out="" runner
  local -a common=() sa=() sb=()
  local OPTIND=1 opt
  while getopts ':hn:o:s:a:b:' opt; do
    case "${opt}" in
      h) usage; exit 0 ;;
      n) rounds=${OPTARG} ;;
      o) out=${OPTARG} ;;
      s) ab_setting "${OPTARG}"; common+=(-s "${OPTARG}") ;;
      a) ab_setting "${OPTARG}"; sa+=(-s "${OPTARG}") ;;
      b) ab_setting "${OPTARG}"; sb+=(-s "${OPTARG}") ;;
      :) usage_error "option -${OPTARG} needs a value" ;;
      *) usage_error "unknown option -${OPTARG}" ;;
    esac
  done
  shift $((OPTIND - 1))
  (($# == 1)) || usage_error "expected one RUNNER (e.g. 05-capacity/run_capacity.sh), got $# arguments"
  runner=$1
  [[ "${runner}" =~ ^0[0-5]-[a-z0-9-]+/run_[a-z0-9_]+\.sh$ && -f "${CSB_ROOT}/${runner}" ]] ||
    usage_error "RUNNER ${runner}: not a phase runner of this repository (e.g. 05-capacity/run_capacity.sh)"
  [[ "${rounds}" =~ ^[1-9][0-9]{0,2}$ ]] || usage_error "-n ${rounds}: expected a number of rounds, 1 to 999"
  ((${#sa[@]} && ${#sb[@]})) || usage_error "each side needs at least one setting: -a KEY=VALUE and -b KEY=VALUE"
  [[ "${sa[*]}" != "${sb[*]}" ]] || log_info "ab: A and B have the same settings: an A/A run (its verdicts should be ~)"
  local name
  name=$(basename "${runner}" .sh)
  name=${name#run_}
  [[ -n "${out}" ]] || out="$(csb_runs_root)/ab/$(date -u +%Y-%m-%d_%H%M%S)_${name//_/-}"
  [[ ! -e "${out}" ]] || usage_error "-o ${out}: already there; an A/B writes a new directory"

  export LAB="${LAB:-netns}"
  csb_netns_hold "LAB=netns needs root: sudo bash scripts/ab.sh ... (or LAB=local)"

  # Both sides checked as the runner checks them, before anything is sent.
  local side
  for side in a b; do
    local -n settings="s${side}"
    CSB_CHECK_ONLY=1 bash "${CSB_ROOT}/${runner}" -r "${out}/${side}" "${common[@]}" "${settings[@]}" >/dev/null ||
      die "side ${side^^} (${settings[*]}) is refused by ${runner}: fix its settings (the runner's message is above)" 2
  done

  mkdir -p -- "${out}/a" "${out}/b"
  local env="${out}/ab.env"
  {
    printf 'runner=%s\nrounds=%s\n' "${runner}" "${rounds}"
    printf 'common=%s\na=%s\nb=%s\n' "$(csb_quote "${common[@]}")" "$(csb_quote "${sa[@]}")" "$(csb_quote "${sb[@]}")"
  } >"${env}"
  local took k=0 first=${SECONDS} r profile=${PROFILE:-quick} x
  for x in "${common[@]}"; do [[ "${x}" != PROFILE=* ]] || profile=${x#PROFILE=}; done
  local -a plans=() failed=()
  for ((r = 1; r <= rounds; r++)); do
    local -a order=(a b)
    ((r % 2)) || order=(b a)
    for side in "${order[@]}"; do
      k=$((k + 1))
      local -n settings="s${side}"
      # Each run planned as the newest like run took: this A/B's own once
      # it has one, else a reference's or one of yours.
      read -r took _ < <("${CSB_ROOT}/bin/csb" progress -took -lab "${LAB}" -profile "${profile}" \
        -dir "${out}/a/${runner%%/*}" -dir "${out}/b/${runner%%/*}" \
        -dir "${CSB_ROOT}/${runner%%/*}/results" -dir "$(csb_results_root "${runner%%/*}")" "${runner}")
      plans=()
      for ((x = 0; x < 2 * rounds; x++)); do plans+=("${took}"); done
      log_info "ab: $("${CSB_ROOT}/bin/csb" progress -what run -k "${k}" -in "${SECONDS}" -first "${first}" \
        -name "round ${r}/${rounds}, side ${side^^} (${settings[*]})" -- "${plans[@]}")"
      printf 'run%d=round %d side %s\n' "${k}" "${r}" "${side}" >>"${env}"
      bash "${CSB_ROOT}/${runner}" -r "${out}/${side}" "${common[@]}" "${settings[@]}" || failed+=("round ${r} ${side^^}")
    done
  done
  local -a cmp=("${CSB_ROOT}/bin/csb" compare -roots -all -out "${out}/README.md" "${out}/a" "${out}/b")
  "${cmp[@]}" || failed+=("csb compare")
  log_info "ab: ${k} runs in $((SECONDS - first)) s; the comparison: ${out}/README.md"
  if ((${#failed[@]})); then
    echo "failed: ${failed[*]}" >&2
    exit 1
  fi
}

main "$@"
