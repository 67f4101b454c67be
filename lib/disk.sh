# shellcheck shell=bash
# lib/disk.sh: a full disk stops a run cleanly and keeps it readable.
#
# A run whose results directory or server-side work directory fills stops
# with "disk full: no space left on MOUNT (writing PATH)", status partial
# (failed before the first cell), exit 1. So that the status and the summary
# can still be written, each run keeps CSB_DISK_RESERVE_KB of zeros in
# <run>/.disk-reserve from its first cell on and removes it at exit. A
# filesystem with less than CSB_DISK_MIN_KB free counts as full: a tool's
# write to it (a raw output, a monitor) may have failed already.

CSB_DISK_RESERVE_KB=512
CSB_DISK_MIN_KB=64

# csb_disk_full_where DIR [H]: print "MOUNT" and succeed when DIR's
# filesystem (on host H; default this one) has less than CSB_DISK_MIN_KB
# free; fail otherwise, or when df cannot tell.
csb_disk_full_where() {
  local dir=$1 out avail mount
  if [[ -n "${2:-}" ]]; then
    out=$(on_host "$2" df -k --output=avail,target "${dir}" 2>/dev/null) || return 1
  else
    out=$(df -k --output=avail,target "${dir}" 2>/dev/null) || return 1
  fi
  read -r avail mount <<<"${out##*$'\n'}"
  [[ "${avail}" =~ ^[0-9]+$ ]] && ((avail < CSB_DISK_MIN_KB)) || return 1
  printf '%s\n' "${mount}"
}

# csb_disk_note PATH [H]: a write to PATH (on host H) failed or its disk
# filled: record why as the run's error (the first such reason wins) and
# free the reserve, so the cell's line, the status and the summary still fit.
csb_disk_note() {
  local path=$1 where=${2:-} mount
  mount=$(csb_disk_full_where "$(dirname "${path}")" "${where}") || mount="$(dirname "${path}")"
  [[ "${CSB_RUN_ERROR}" == "disk full:"* ]] ||
    CSB_RUN_ERROR="disk full: no space left on ${mount}${where:+ on $(csb_host_name "${where}")} (writing ${path})"
  [[ -z "${CSB_RUN_DIR}" ]] || rm -f "${CSB_RUN_DIR}/.disk-reserve"
}

# csb_disk_stop PATH [H]: csb_disk_note, then stop the run (outside the
# exit path, which records the status next).
csb_disk_stop() {
  csb_disk_note "$@"
  [[ -n "${CSB_EXITING:-}" ]] && return 1
  die "${CSB_RUN_ERROR}; free space there and run again (what was measured so far is kept)" 1
}

# csb_disk_reserve: the reserve, before the first cell.
csb_disk_reserve() {
  [[ -n "${CSB_RUN_DIR}" ]] || return 0
  head -c "$((CSB_DISK_RESERVE_KB * 1024))" /dev/zero 2>/dev/null >"${CSB_RUN_DIR}/.disk-reserve" ||
    { rm -f "${CSB_RUN_DIR}/.disk-reserve"; csb_disk_stop "${CSB_RUN_DIR}/.disk-reserve"; }
}

# csb_disk_check: fail (after csb_disk_note) when the results directory or
# the server's work directory is full.
csb_disk_check() {
  [[ -n "${CSB_RUN_DIR}" ]] || return 0
  if csb_disk_full_where "${CSB_RUN_DIR}" >/dev/null; then
    csb_disk_note "${CSB_RUN_DIR}/raw/"
    return 1
  fi
  if [[ -n "${CSB_H_WORK[0]:-}" ]] && ! csb_ssh_lost 0 && csb_disk_full_where "${CSB_H_WORK[0]}" 0 >/dev/null; then
    csb_disk_note "${CSB_H_WORK[0]}/" 0
    return 1
  fi
}
