#!/usr/bin/env bash
# scripts/build.sh: build the Go commands into bin/ (csb, csb-server,
# connclient), each by temp-and-rename and only when it changed, so that a
# run copying or running one of them (tests' lanes, two labs) never reads a
# half-written or rewritten file.
#
# Usage: bash scripts/build.sh [-h]     (make build)

# shellcheck source=lib/init.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/init.sh"
if [[ "${1:-}" == -h || "${1:-}" == --help ]]; then
  sed -n '2,/^$/{s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"
  exit 0
fi
[[ $# -eq 0 ]] || die "scripts/build.sh takes no arguments (got: $*); run: make build" 2
csb_go_build csb cmd/csb
csb_go_build csb-server server
csb_go_build connclient cmd/connclient
