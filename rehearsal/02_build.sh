#!/usr/bin/env bash
# Step 02: build the fixed-payload server and the C10K client on this host.
#
# Usage: rehearsal/02_build.sh [-h]
#
# Runs, from the repo root:
#   CGO_ENABLED=0 go build -trimpath -o bin/csb-server ./server
#   CGO_ENABLED=0 go build -trimpath -o bin/connclient ./cmd/connclient
# CGO_ENABLED=0 makes static binaries: the server host needs no Go, step 03
# copies bin/csb-server there. Needs Go >= 1.24 on PATH. Exit status: 0 ok,
# 1 the build failed, 2 bad usage, 3 no Go.
#
# Requires: Go >= 1.24. Loads: rehearsal/lib.sh (lib/init.sh).
#
# Example:
#   PATH=$PATH:/usr/local/go/bin rehearsal/02_build.sh

# shellcheck source=rehearsal/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

main() {
  rh_init "$@"
  rh_args_max 0
  need_tool go golang-go
  cd "${CSB_ROOT}"
  rh_say "build static binaries into ${CSB_ROOT}/bin"
  rh_run env CGO_ENABLED=0 go build -trimpath -o bin/csb-server ./server
  rh_run env CGO_ENABLED=0 go build -trimpath -o bin/connclient ./cmd/connclient
  rh_run ls -l bin/csb-server bin/connclient
}

main "$@"
