#!/usr/bin/env bash
# Step 03: copy the server binary to the server host.
#
# Usage: rehearsal/03_copy_server.sh [-h] [-c FILE] [-l LAB] [-s KEY=VALUE]...
#
# Copies bin/csb-server (step 02) to REHEARSAL_DIR/server/bin/csb-server on
# the server host over the ssh hop (LAB=local: a plain copy), then compares
# the two files' sha256. Refuses while the rehearsal's server runs (stop it
# with step 12 first). Exit status: 0 ok, 1 copy failed, differs or the
# server runs, 2 bad usage, 4 the server is unreachable.
#
# Requires: bin/csb-server (step 02); ssh to the server. Loads:
# rehearsal/lib.sh (lib/init.sh).
#
# Example:
#   rehearsal/03_copy_server.sh

# shellcheck source=rehearsal/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

main() {
  rh_init "$@"
  rh_args_max 0
  local src="${CSB_ROOT}/bin/csb-server" dst="${RH_SRV_DIR}/bin/csb-server"
  [[ -x "${src}" ]] || die "${src} is not built yet: run rehearsal/02_build.sh" 1
  rh_enter
  rh_connect
  local pid
  if pid=$(rh_server_pid); then
    die "the server is running from ${dst} (PID ${pid}): stop it first with rehearsal/12_stop_server.sh" 1
  fi

  rh_say "copy ${src} to ${dst} on the server host"
  rh_on_server mkdir -p "${RH_SRV_DIR}/bin"
  if csb_lab_is_remote; then
    # One ssh hop, the file on stdin: the same options every runner uses.
    local -a cmd
    mapfile -t cmd < <(csb_ssh_base 0)
    local tmp dst_q
    tmp=$(csb_quote "${dst}.tmp") dst_q=$(csb_quote "${dst}")
    cmd+=("${SERVER_SSH}" "cat >${tmp} && chmod 0755 ${tmp} && mv -f ${tmp} ${dst_q}")
    printf 'client$ %s <%s\n' "$(csb_quote "${cmd[@]}")" "$(csb_quote "${src}")"
    "${cmd[@]}" <"${src}"
  else
    rh_run install -m 0755 "${src}" "${dst}"
  fi

  rh_say "the same file on both hosts?"
  local mine theirs
  mine=$(rh_run sha256sum "${src}")
  echo "${mine}"
  theirs=$(rh_on_server sha256sum "${dst}")
  echo "${theirs}"
  mine=${mine##*$'\n'} theirs=${theirs##*$'\n'}
  [[ "${mine%% *}" == "${theirs%% *}" ]] || die "the copy on the server differs from ${src}" 1
  echo "ok: identical"
}

main "$@"
