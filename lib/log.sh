# shellcheck shell=bash
# lib/log.sh: timestamped logging. Every line goes to stderr and, once a run
# directory exists (CSB_CONSOLE_LOG set), is appended to its logs/console.log.
# Writing the file directly (not through a tee pipe) keeps logging alive while
# a Ctrl-C tears the run down.

CSB_CONSOLE_LOG="${CSB_CONSOLE_LOG:-}"

csb_log_line() {
  local level=$1; shift
  local line
  line="$(date -u +%Y-%m-%dT%H:%M:%SZ) ${level} $*"
  printf '%s\n' "${line}" >&2
  if [[ -n "${CSB_CONSOLE_LOG}" ]]; then
    printf '%s\n' "${line}" >>"${CSB_CONSOLE_LOG}" 2>/dev/null || true
  fi
}

log_info() { csb_log_line INFO "$@"; }
log_warn() { csb_log_line WARN "$@"; }
log_error() { csb_log_line ERROR "$@"; }

# log_cmd logs a command exactly as it will run: log_cmd "${cmd[@]}".
log_cmd() {
  local q
  q="$(printf '%q ' "$@")"
  csb_log_line CMD "${q% }"
}

# die MESSAGE [STATUS]: print "error: MESSAGE" once on stderr (and the
# timestamped line in the run's console.log) and exit (default status 1).
die() {
  local msg=$1 rc=${2:-1}
  printf 'error: %s\n' "${msg}" >&2
  if [[ -n "${CSB_CONSOLE_LOG}" ]]; then
    printf '%s ERROR %s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "${msg}" >>"${CSB_CONSOLE_LOG}" 2>/dev/null || true
  fi
  exit "${rc}"
}

# usage_error MESSAGE: a bad flag or setting. Prints the error and the usage
# to stderr and exits 2 before anything is started.
usage_error() {
  printf 'error: %s\n' "$1" >&2
  if declare -F usage >/dev/null; then
    usage >&2
  fi
  exit 2
}

# need_tool NAME PACKAGE: refuse to go on without a tool, naming its package.
need_tool() {
  local tool=$1 pkg=$2
  command -v "${tool}" >/dev/null 2>&1 ||
    die "${tool} not found on this host; install it: apt-get install ${pkg} (or: make setup)" 3
}
