#!/usr/bin/env bash
# scripts/check-links.sh: every relative link of the docs points at a file.
#
# Usage: bash scripts/check-links.sh [-h] [FILE.md...]
#
# Default files: README.md, docs/*.md, Plan.md, rehearsal/README.md and each
# phase's PLAN.md (0[0-4]-*/PLAN.md). Every Markdown link [text](path),
# [text](path#anchor), ![alt](path) and reference definition [name]: path
# must name a file or directory that exists, resolved from the directory of
# the file that holds the link. Links with a scheme (http:, https:, mailto:,
# ...) and pure #anchors are skipped; anchors are not checked. Links inside
# fenced code blocks (``` or ~~~) and inline code spans are not links.
#
# Exit status: 0 every link resolves (one line says how many); 1 a link is
# broken (printed as FILE:LINE: broken link PATH); 2 bad usage or a file that
# cannot be read.
#
# Examples:
#   bash scripts/check-links.sh
#   bash scripts/check-links.sh docs/labs.md

set -Eeuo pipefail

usage() { sed -n '2,/^$/{s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"; }

usage_error() {
  printf 'error: %s\n' "$1" >&2
  usage >&2
  exit 2
}

LINKS=0
BROKEN=0

# check_target FILE LINE TARGET: count TARGET, report it when it is broken.
check_target() {
  local file=$1 n=$2 target=$3 path
  target=${target#<}
  target=${target%>}
  case "${target}" in
    '' | '#'*) return 0 ;;
  esac
  # A scheme (http:, https:, mailto:, ...) is not a relative link.
  if [[ "${target}" =~ ^[A-Za-z][A-Za-z0-9+.-]*: ]]; then
    return 0
  fi
  path=${target%%#*}
  path=${path%%\?*}
  path=${path//%20/ }
  LINKS=$((LINKS + 1))
  [[ "${path}" == /* ]] || path="$(dirname "${file}")/${path}"
  if [[ -e "${path}" ]]; then
    return 0
  fi
  printf '%s:%d: broken link %s\n' "${file}" "${n}" "${target}"
  BROKEN=$((BROKEN + 1))
}

# check_file FILE: every link of FILE outside code.
check_file() {
  local file=$1 line rest match n=0 fence=''
  local -a lines
  local fence_re='^[[:space:]]{0,3}(```|~~~)'
  # shellcheck disable=SC2016 # backticks are the pattern, nothing to expand
  local code_re='`[^`]*`'
  local link_re='\]\([[:space:]]*(<[^>]*>|[^)[:space:]]+)([[:space:]]+("[^"]*"|'\''[^'\'']*'\''))?[[:space:]]*\)'
  local def_re='^[[:space:]]{0,3}\[[^]]+\]:[[:space:]]+(<[^>]*>|[^[:space:]]+)'
  [[ -r "${file}" ]] || { printf 'error: cannot read %s\n' "${file}" >&2; return 2; }
  mapfile -t lines <"${file}"
  for line in "${lines[@]}"; do
    n=$((n + 1))
    if [[ "${line}" =~ ${fence_re} ]]; then
      if [[ -z "${fence}" ]]; then
        fence=${BASH_REMATCH[1]}
      elif [[ "${BASH_REMATCH[1]}" == "${fence}" ]]; then
        fence=''
      fi
      continue
    fi
    if [[ -n "${fence}" ]]; then
      continue
    fi
    # Inline code spans are text, not links.
    while [[ "${line}" =~ ${code_re} ]]; do
      line=${line/"${BASH_REMATCH[0]}"/}
    done
    if [[ "${line}" =~ ${def_re} ]]; then
      check_target "${file}" "${n}" "${BASH_REMATCH[1]}"
      continue
    fi
    rest=${line}
    while [[ "${rest}" =~ ${link_re} ]]; do
      match=${BASH_REMATCH[0]}
      check_target "${file}" "${n}" "${BASH_REMATCH[1]}"
      rest=${rest#*"${match}"}
    done
  done
}

main() {
  case "${1:-}" in
    -h | --help) usage; exit 0 ;;
    -?*) usage_error "unknown option $1" ;;
  esac
  local -a files=("$@")
  if ((${#files[@]} == 0)); then
    cd "$(dirname "${BASH_SOURCE[0]}")/.."
    local f
    for f in README.md docs/*.md Plan.md rehearsal/README.md 0[0-4]-*/PLAN.md; do
      if [[ -f "${f}" ]]; then
        files+=("${f}")
      fi
    done
  fi
  local file worst=0
  for file in "${files[@]}"; do
    check_file "${file}" || worst=2
  done
  ((worst == 0)) || exit "${worst}"
  if ((BROKEN > 0)); then
    printf 'check-links: %d of %d relative links broken\n' "${BROKEN}" "${LINKS}" >&2
    exit 1
  fi
  printf 'check-links: %d files, %d relative links, all resolve\n' "${#files[@]}" "${LINKS}"
}

main "$@"
