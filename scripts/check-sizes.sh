#!/usr/bin/env bash
# scripts/check-sizes.sh: the committed results stay a size a newcomer can clone.
#
# Usage: bash scripts/check-sizes.sh [-h] [-C DIR]
#
# Committed results are evidence, not an archive: a reference run keeps its
# summary, report, notes, env and the raw files summarize reads (those of
# 64 KiB or more gzipped), not port dumps (scripts/references.sh prunes
# them). This
# check, part of `make lint`, adds up the bytes git tracks (git ls-files, as
# they are in the work tree) and fails when
#   - all tracked files together pass TOTAL_MAX (150,000,000 bytes), or
#   - a committed run directory (one holding a run.env, under <phase>/results/
#     or compare/) or a side of a comparison (compare/<a>-vs-<b>/<side>/)
#     passes DIR_MAX (10,000,000 bytes).
# Each finding is one line: the directory, its bytes, the bound. -C DIR
# checks the git checkout DIR instead of this one.
#
# Exit status: 0 within the bounds (one line says so); 1 a bound passed;
# 2 bad usage.
#
# Examples:
#   bash scripts/check-sizes.sh
#   make lint

set -Eeuo pipefail

usage() { sed -n '2,/^$/{s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"; }

TOTAL_MAX=150000000
DIR_MAX=10000000

main() {
  local dir
  dir="$(dirname "${BASH_SOURCE[0]}")/.."
  while (($#)); do
    case "$1" in
      -h | --help) usage; exit 0 ;;
      -C) (($# > 1)) || { echo "error: option -C needs a directory" >&2; exit 2; }; dir=$2; shift 2 ;;
      *) printf 'error: unexpected argument: %s\n' "$1" >&2; usage >&2; exit 2 ;;
    esac
  done
  git -C "${dir}" rev-parse --git-dir >/dev/null 2>&1 || { echo "error: -C ${dir}: not a git checkout" >&2; exit 2; }
  cd "${dir}"
  # Bytes per directory that matters, and in all: one pass over the sizes.
  local sizes
  sizes=$(git ls-files -z | du -b --files0-from=- | awk -F'\t' '
    { total += $1; f = $2; n = split(f, p, "/") }
    # A file under a run directory counts towards it; the run directories
    # are the parents of the tracked run.env files (read first, below).
    f ~ /(^0[0-9]-[^\/]+\/results\/|^compare\/)/ {
      d = f; while (sub(/\/[^\/]+$/, "", d)) size[d] += $1
    }
    f ~ /\/run\.env$/ { d = f; sub(/\/run\.env$/, "", d); run[d] = 1 }
    f ~ /^compare\/[^\/]+-vs-[^\/]+\/[^\/]+\// { side[p[1] "/" p[2] "/" p[3]] = 1 }
    END {
      printf "total\t%d\n", total
      for (d in run) if (d ~ /(^0[0-9]-[^\/]+\/results\/|^compare\/)/) printf "dir\t%d\t%s\n", size[d], d
      for (d in side) if (!(d in run)) printf "dir\t%d\t%s\n", size[d], d
    }')
  local kind bytes total=0 bad=0
  while IFS=$'\t' read -r kind bytes dir; do
    if [[ "${kind}" == total ]]; then
      total=${bytes}
      continue
    fi
    if ((bytes > DIR_MAX)); then
      printf 'check-sizes: %s: %d bytes committed, over the bound of %d: prune it as scripts/references.sh does (no port dumps, h2load logs and ss listings as their tallies, raw files of 64 KiB or more gzipped)\n' "${dir}" "${bytes}" "${DIR_MAX}" >&2
      bad=$((bad + 1))
    fi
  done <<<"${sizes}"
  if ((total > TOTAL_MAX)); then
    printf 'check-sizes: the tracked files add up to %d bytes, over the bound of %d\n' "${total}" "${TOTAL_MAX}" >&2
    bad=$((bad + 1))
  fi
  ((bad == 0)) || exit 1
  echo "check-sizes: ${total} bytes tracked (bound ${TOTAL_MAX}); no run or comparison over ${DIR_MAX} bytes"
}

main "$@"
