# shellcheck shell=bash
# lib/exit.sh: the one registry of exit steps, and the ERR trap.
#
# Sourced first by lib/init.sh. No other file sets a trap on EXIT, INT, TERM,
# HUP or ERR: a file that has something to undo adds a step (the model is
# kubernetes' kube::util::trap_add, which adds to a trap instead of replacing
# it).
#
#   csb_exit_add FUNC   run FUNC once when the shell exits. Steps run in the
#                       reverse order of their first registration (like Go's
#                       defer): what was set up last is undone first, while
#                       what it needs (the ssh connection, the lab) is still
#                       there. Adding a step again does nothing; adding
#                       another never replaces one.
#   CSB_EXIT_STATUS     the status the shell exits with; a step may set it
#                       (csb_on_exit does, for a run cut short). Each step
#                       starts with $? set to it.
#
# INT, TERM and HUP are handled once, here: the signal is recorded in
# CSB_SIGNAL, logged, and the shell exits 130, 143 or 129, which runs the
# exit steps. From the first signal on, signals are ignored (a second one
# never cuts the steps short), and a subshell forked as it came (it has the
# traps for a moment) exits undoing nothing: steps run in the owner only.

declare -ga CSB_EXIT_STEPS=()
CSB_EXIT_STATUS=0
CSB_SIGNAL=""
CSB_EXIT_OWNER=${BASHPID}

csb_exit_add() {
  local step
  declare -F "$1" >/dev/null || {
    printf 'error: internal: csb_exit_add %s: no such function\n' "$1" >&2
    return 1
  }
  for step in "${CSB_EXIT_STEPS[@]}"; do
    [[ "${step}" != "$1" ]] || return 0
  done
  CSB_EXIT_STEPS+=("$1")
}

# csb_exit_status N: set $? to N for the step that follows.
csb_exit_status() { return "$1"; }

csb_exit_run() {
  CSB_EXIT_STATUS=$?
  trap '' INT TERM HUP && trap - ERR
  ((BASHPID == CSB_EXIT_OWNER)) || exit "${CSB_EXIT_STATUS}"
  set +e
  local i steps=("${CSB_EXIT_STEPS[@]}") # off the list first: each runs once
  CSB_EXIT_STEPS=()
  for ((i = ${#steps[@]} - 1; i >= 0; i--)); do
    csb_exit_status "${CSB_EXIT_STATUS}"
    "${steps[i]}"
  done
  [[ -z "${CSB_ERR_DIR}" ]] || rm -rf "${CSB_ERR_DIR}" 2>/dev/null
  exit "${CSB_EXIT_STATUS}"
}

csb_exit_signal() {
  trap '' INT TERM HUP
  local rc=129
  [[ "$1" != INT ]] || rc=130
  [[ "$1" != TERM ]] || rc=143
  ((BASHPID == CSB_EXIT_OWNER)) || exit "${rc}"
  # shellcheck disable=SC2034 # read by lib/rundir.sh (csb_on_exit: "interrupted by SIG...")
  CSB_SIGNAL=$1
  log_warn "caught SIG$1: stopping everything this run started"
  exit "${rc}"
}

# The ERR trap prints the failing command and the call chain (file:line of
# each frame) once per process tree: with errtrace (set -E) a failure inside
# a command substitution fires the trap in the subshell and again in the
# shell whose assignment then fails. The first one, the deepest, creates
# CSB_ERR_MARK (mkdir is atomic, and every subshell has the same path) and
# the others stay quiet. (So a background job that dies of an error shows
# its chain, and the shell's own fatal error after it shows only its
# message.) The mark is made in a directory of this shell's own, private
# and of an unpredictable name: another account cannot make it first.
CSB_ERR_DIR=$(mktemp -d "${TMPDIR:-/tmp}/csb-err.XXXXXXXXXX" 2>/dev/null) || CSB_ERR_DIR=""
CSB_ERR_MARK=${CSB_ERR_DIR:+${CSB_ERR_DIR}/mark}

csb_err_trap() {
  local rc=$? cmd=${BASH_COMMAND} i
  # No private directory (TMPDIR full): every frame prints its chain.
  [[ -z "${CSB_ERR_MARK}" ]] || mkdir "${CSB_ERR_MARK}" 2>/dev/null || return 0
  # shellcheck disable=SC2016 # the backquotes are literal, around the command
  printf '%s error: %s:%s: `%s` exited %d\n' "$(date -u +%H:%M:%S)" \
    "${BASH_SOURCE[1]:-?}" "${BASH_LINENO[0]:-?}" "${cmd}" "${rc}" >&2
  for ((i = 1; i < ${#FUNCNAME[@]}; i++)); do
    printf '  in %s at %s:%s\n' "${FUNCNAME[i]}" "${BASH_SOURCE[i]:-?}" "${BASH_LINENO[i - 1]:-?}" >&2
  done
}

trap csb_err_trap ERR
trap csb_exit_run EXIT
trap 'csb_exit_signal INT' INT
trap 'csb_exit_signal TERM' TERM
trap 'csb_exit_signal HUP' HUP
