#!/usr/bin/env bash
# scripts/check-manual.sh: shellcheck every ```bash block of the manuals.
#
# Usage: bash scripts/check-manual.sh [-h] [FILE.md...]
#
# Default files: rehearsal/README.md, and Plan.md when it exists. The
# ```bash ... ``` blocks of a file are handed to shellcheck together, as one
# script in which every other line is blank: the blocks are read as one bash
# session (a variable set in one block is known in the next, as when a person
# follows the manual), and shellcheck's line numbers are the Markdown file's.
# Other fences (```text, ```console, plain ```) are prose and not checked.
# It runs `shellcheck --norc -s bash` (every default check on).
#
# Exit status: 0 clean; 1 shellcheck found something (printed as
# FILE.md:LINE:COL: level: message [SCxxxx]); 2 bad usage, a file that
# cannot be read, or a fence left open; 3 no shellcheck.
#
# Examples:
#   bash scripts/check-manual.sh
#   bash scripts/check-manual.sh 03-c10k/PLAN.md
set -Eeuo pipefail

usage() { sed -n '2,/^$/{s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"; }

usage_error() {
  printf 'error: %s\n' "$1" >&2
  usage >&2
  exit 2
}

# blocks_of FILE: FILE with every line outside a ```bash block blanked.
# Prints "BLOCKS n" as its last line; fails on a fence left open.
blocks_of() {
  local file=$1 line inside=0 opened=0 n=0 blocks=0
  local fence_bash='^[[:space:]]*```bash[[:space:]]*$' fence_end='^[[:space:]]*```[[:space:]]*$'
  while IFS= read -r line || [[ -n "${line}" ]]; do
    n=$((n + 1))
    if ((inside)); then
      if [[ "${line}" =~ ${fence_end} ]]; then
        inside=0
        echo
      else
        printf '%s\n' "${line}"
      fi
    else
      if [[ "${line}" =~ ${fence_bash} ]]; then
        inside=1 opened=${n} blocks=$((blocks + 1))
      fi
      echo
    fi
  done <"${file}"
  if ((inside)); then
    printf 'error: %s:%d: ```bash block is never closed\n' "${file}" "${opened}" >&2
    return 1
  fi
  echo "BLOCKS ${blocks}"
}

check_file() {
  local file=$1 script count out rc=0
  [[ -r "${file}" ]] || { printf 'error: cannot read %s\n' "${file}" >&2; return 2; }
  script=$(blocks_of "${file}") || return 2
  count=${script##*BLOCKS }
  script=${script%BLOCKS *}
  if ((count == 0)); then
    echo "${file}: no bash blocks"
    return 0
  fi
  out=$(printf '%s' "${script}" | shellcheck --norc -s bash -f gcc -) || rc=$?
  if ((rc != 0)); then
    # stdin is named "-" in the findings: name the Markdown file instead.
    printf '%s\n' "${out}" | sed "s|^-:|${file}:|"
    return 1
  fi
  echo "${file}: ${count} bash blocks, shellcheck clean"
}

main() {
  case "${1:-}" in
    -h | --help) usage; exit 0 ;;
    -?*) usage_error "unknown option $1" ;;
  esac
  command -v shellcheck >/dev/null 2>&1 || { echo "error: shellcheck not found; install: apt-get install shellcheck (or: make setup)" >&2; exit 3; }
  local -a files=("$@")
  if ((${#files[@]} == 0)); then
    cd "$(dirname "${BASH_SOURCE[0]}")/.."
    files=(rehearsal/README.md)
    [[ -f Plan.md ]] && files+=(Plan.md)
  fi
  local f worst=0 rc
  for f in "${files[@]}"; do
    rc=0
    check_file "${f}" || rc=$?
    ((rc > worst)) && worst=${rc}
  done
  exit "${worst}"
}

main "$@"
