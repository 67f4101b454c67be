# shellcheck shell=bash
# lib/config.sh: one configuration for every runner.
#
# Precedence, lowest first: built-in defaults < config file (-c FILE, else
# $CSB_CONFIG, else ./lab.env at the repo root when it exists) < environment
# < command-line flags (-l/-p/-n/-r and -s KEY=VALUE). Every value is validated
# before anything is started or sent; a bad value exits 2 with a message that
# names the key, the value and what is expected. The config file is parsed as
# KEY=VALUE lines, never sourced, so it cannot run code.

declare -ga CSB_KEYS=()
declare -gA CSB_DEFAULT=() CSB_CHECK=() CSB_ORIGIN=()
# Checks across settings, run after every key passed its own: a module adds
# a function that prints the error and returns 1 (lib/server.sh).
declare -ga CSB_CONFIG_CHECKS=()

# csb_config_declare KEY DEFAULT CHECK DOC: declare a setting. CHECK is one of
# the csb_check_* names below without the prefix (enum takes "enum:a|b|c").
# DOC documents the key where it is declared (and lab.env.example repeats
# it); nothing reads it at run time.
csb_config_declare() {
  local key=$1 def=$2 check=$3
  if [[ -z "${CSB_CHECK[${key}]+x}" ]]; then
    CSB_KEYS+=("${key}")
  fi
  CSB_DEFAULT[${key}]=${def}
  CSB_CHECK[${key}]=${check}
}

# The settings every runner shares. Runners declare their own before loading.
csb_config_declare LAB local "enum:local|netns|ssh" \
  "which lab: local (loopback, no root), netns (two namespaces + sshd, root), ssh (two real hosts)"
csb_config_declare PROFILE full "enum:smoke|quick|full" \
  "smoke: seconds (tests); quick: minutes (demo); full: the seed's experiment"
csb_config_declare SERVER_SSH "" ssh_dest_or_empty \
  "ssh destination of the server host, [user@]host (management network); LAB=ssh only"
csb_config_declare SSH_KEY "" path_or_empty "private key for SERVER_SSH (default: your ssh config)"
csb_config_declare SSH_KNOWN_HOSTS "" path_or_empty "known_hosts file for SERVER_SSH (default: your ssh config)"
csb_config_declare SERVER_IP "" ip_or_empty \
  "benchmark address of the server (IP literal on SERVER_NIC); the server binds only to it"
csb_config_declare CLIENT_IP "" ip_or_empty "benchmark address of the client (IP literal on CLIENT_NIC)"
csb_config_declare SERVER_NIC "" nic_or_empty "server interface that must carry SERVER_IP (route guard)"
csb_config_declare CLIENT_NIC "" nic_or_empty "client interface that traffic to SERVER_IP must leave through"
csb_config_declare SERVER_PORT 8080 port "port of the fixed-payload HTTP server"
csb_config_declare IPERF_PORT 5201 port "port of the iperf3 server"
csb_config_declare LINK_RATE 1gbit rate \
  "line rate: netns lab shapes its veth to it (none = unshaped); reports compare against it"
csb_config_declare RESULTS_ROOT "" path_or_empty \
  "when set, runs go to RESULTS_ROOT/<phase>/<run>/ instead of <phase>/results/<run>/"
csb_config_declare REMOTE_DIR /tmp path \
  "base directory on the server host in which each run makes its private work directory (csb-run.XXXXXXXXXX, 0700)"
csb_config_declare DURATION "" uint_or_empty "seconds per measured cell (empty: the profile's)"
csb_config_declare RUN_NAME "" name_or_empty "run directory suffix (empty: the runner's name)"
csb_config_declare LAB_KEEP 0 bool "netns: 1 keeps a lab this run brought up"
csb_config_declare BASELINE_RUN "" path_or_empty \
  "a run directory of the same phase that this run's report is compared with (csb compare)"

# ---- checks: each returns 0 when the value is acceptable -------------------

csb_check_ip() {
  local v=$1 o
  if [[ "${v}" =~ ^([0-9]{1,3})\.([0-9]{1,3})\.([0-9]{1,3})\.([0-9]{1,3})$ ]]; then
    for o in "${BASH_REMATCH[@]:1}"; do
      ((10#${o} <= 255)) || return 1
    done
    return 0
  fi
  [[ "${v}" =~ ^[0-9A-Fa-f:]+$ && "${v}" == *:*:* ]]
}
csb_check_ip_or_empty() { [[ -z "$1" ]] || csb_check_ip "$1"; }
csb_check_ssh_dest() { [[ "$1" =~ ^([a-z_][a-z0-9_-]{0,31}@)?[A-Za-z0-9]([A-Za-z0-9.-]{0,252}|[0-9A-Fa-f:]*)$ ]]; }
csb_check_ssh_dest_or_empty() { [[ -z "$1" ]] || csb_check_ssh_dest "$1"; }
csb_check_nic() { [[ "$1" =~ ^[A-Za-z0-9][A-Za-z0-9_.-]{0,14}$ ]]; }
csb_check_nic_or_empty() { [[ -z "$1" ]] || csb_check_nic "$1"; }
csb_check_uint() { [[ "$1" =~ ^[0-9]{1,9}$ ]]; }
csb_check_uint_or_empty() { [[ -z "$1" ]] || csb_check_uint "$1"; }
csb_check_posint() { [[ "$1" =~ ^[0-9]{1,9}$ ]] && ((10#$1 > 0)); }
csb_check_posint_or_empty() { [[ -z "$1" ]] || csb_check_posint "$1"; }
csb_check_port() { csb_check_posint "$1" && ((10#$1 <= 65535)); }
csb_check_bool() { [[ "$1" == 0 || "$1" == 1 ]]; }
csb_check_name() { [[ "$1" =~ ^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$ ]]; }
csb_check_name_or_empty() { [[ -z "$1" ]] || csb_check_name "$1"; }
csb_check_rate() { [[ "$1" == none || "$1" =~ ^[1-9][0-9]{0,5}(k|m|g)?bit$ ]]; }
# Paths are always quoted, but one with shell syntax is still refused: it is
# far more likely a mistake than a directory someone meant.
csb_check_path() { [[ "$1" =~ ^[A-Za-z0-9_./~+-][A-Za-z0-9_./+@=,-]*$ ]]; }
csb_check_path_or_empty() { [[ -z "$1" ]] || csb_check_path "$1"; }
# A payload size as the server names it: 1k, 100k, 1m, 512.
csb_check_size() { [[ "$1" =~ ^[1-9][0-9]{0,8}[km]?$ ]]; }
csb_check_sizes() { csb_check_list size "$1"; }
csb_check_posints() { csb_check_list posint "$1"; }
csb_check_list() {
  local check=$1 v=$2 item
  [[ -n "${v}" && "${v}" != *,, && "${v}" != ,* && "${v}" != *, ]] || return 1
  local -a items
  IFS=, read -r -a items <<<"${v}"
  for item in "${items[@]}"; do
    "csb_check_${check}" "${item}" || return 1
  done
}

csb_check_expect() {
  case "$1" in
    ip | ip_or_empty) echo "an IPv4 or IPv6 literal such as 198.18.0.1 (no hostnames)" ;;
    ssh_dest | ssh_dest_or_empty) echo "an ssh destination [user@]host such as root@gtinfra02" ;;
    nic | nic_or_empty) echo "an interface name such as enp1s0" ;;
    uint | uint_or_empty) echo "a whole number of seconds" ;;
    posint) echo "a positive integer" ;;
    posint_or_empty) echo "a positive integer, or empty for the profile's" ;;
    posints) echo "a comma-separated list of positive integers such as 16,64,128" ;;
    port) echo "a port number 1-65535" ;;
    bool) echo "0 or 1" ;;
    name | name_or_empty) echo "a name of letters, digits, '.', '_' and '-' (at most 64)" ;;
    rate) echo "a tc rate such as 1gbit or 100mbit, or none" ;;
    path | path_or_empty) echo "a path without spaces or shell syntax" ;;
    size) echo "a payload size such as 1k, 10k, 100k, 1m or a byte count" ;;
    sizes) echo "a comma-separated list of payload sizes such as 1k,10k,100k" ;;
    enum:*) echo "one of: ${1#enum:}" | tr '|' ' ' ;;
    *) if declare -F "csb_expect_$1" >/dev/null; then "csb_expect_$1"; else echo "a valid value"; fi ;;
  esac
}

# Longest value a setting may have, in bytes: PATH_MAX (4096) for a path,
# 256 for any other setting (the longest legitimate one, an ssh destination
# with a 253-byte host name, fits). A longer one is a mistake (a file pasted
# into a value, a runaway variable), refused before it reaches a command line.
CSB_MAX_PATH_LEN=4096
CSB_MAX_VALUE_LEN=256

# csb_check KEY VALUE: validate one value against the key's check.
csb_check() {
  local key=$1 value=$2 check=${CSB_CHECK[$1]}
  local ok=1 max=${CSB_MAX_VALUE_LEN} what="setting"
  [[ "${check}" != path* ]] || { max=${CSB_MAX_PATH_LEN}; what="path"; }
  # A list of up to 8 client hosts, each with its addresses, is longer.
  [[ "${check}" != client_hosts ]] || max=${CSB_MAX_PATH_LEN}
  local LC_ALL=C
  if ((${#value} > max)); then
    printf 'error: %s is %d bytes long (from %s): the limit is %d bytes for a %s\n' "${key}" "${#value}" \
      "${CSB_ORIGIN[${key}]:-default}" "${max}" "${what}" >&2
    return 1
  fi
  case "${check}" in
    enum:*)
      local alt
      local -a alts
      ok=0
      IFS='|' read -r -a alts <<<"${check#enum:}"
      for alt in "${alts[@]}"; do
        [[ "${value}" == "${alt}" ]] && ok=1
      done
      ;;
    *) "csb_check_${check}" "${value}" || ok=0 ;;
  esac
  if ((ok == 0)); then
    printf 'error: %s=%q is not valid (from %s): expected %s\n' "${key}" "${value}" \
      "${CSB_ORIGIN[${key}]:-default}" "$(csb_check_expect "${check}")" >&2
    return 1
  fi
}

# csb_key_declared_anywhere KEY: does any runner or library module declare it?
csb_key_declared_anywhere() {
  grep -qsE "^[[:space:]]*csb_config_declare $1 " "${CSB_ROOT}"/0*/*.sh "${CSB_LIB}"/*.sh
}

# csb_config_read_file FILE: apply KEY=VALUE lines. Unknown keys, lines that
# are not assignments and a key set twice are errors; quotes around a value
# are stripped. A file that starts with a UTF-8 byte-order mark is refused
# (an editor's invisible addition; stripping it silently would hide which
# editor wrote the file in some other encoding too).
csb_config_read_file() {
  local file=$1 line key value n=0
  local -A seen=()
  if [[ -d "${file}" ]]; then
    printf 'error: config file %s is a directory; give a KEY=VALUE file (see lab.env.example)\n' "${file}" >&2
    return 1
  fi
  [[ -r "${file}" ]] || { printf 'error: config file %s is not readable\n' "${file}" >&2; return 1; }
  while IFS= read -r line || [[ -n "${line}" ]]; do
    n=$((n + 1))
    if ((n == 1)) && [[ "${line}" == $'\xef\xbb\xbf'* ]]; then
      printf 'error: %s starts with a UTF-8 byte-order mark; save it as plain UTF-8 without one (sed -i %q %q)\n' \
        "${file}" '1s/^\xEF\xBB\xBF//' "${file}" >&2
      return 1
    fi
    line="${line#"${line%%[![:space:]]*}"}"
    [[ -z "${line}" || "${line}" == '#'* ]] && continue
    line="${line#export }"
    if [[ ! "${line}" =~ ^([A-Z][A-Z0-9_]*)=(.*)$ ]]; then
      printf 'error: %s:%d: not a KEY=VALUE line: %s\n' "${file}" "${n}" "${line}" >&2
      return 1
    fi
    key=${BASH_REMATCH[1]}
    value=${BASH_REMATCH[2]}
    if [[ -n "${seen[${key}]+x}" ]]; then
      printf 'error: %s:%d: %s is set twice, at lines %d and %d; keep one\n' "${file}" "${n}" "${key}" \
        "${seen[${key}]}" "${n}" >&2
      return 1
    fi
    seen[${key}]=${n}
    value="${value%"${value##*[![:space:]]}"}"
    if [[ "${value}" =~ ^\"(.*)\"$ || "${value}" =~ ^\'(.*)\'$ ]]; then
      value=${BASH_REMATCH[1]}
    fi
    if [[ -z "${CSB_CHECK[${key}]+x}" ]]; then
      # One lab.env serves every phase: a setting of another runner is
      # skipped here; a name no runner declares is a typo.
      csb_key_declared_anywhere "${key}" && continue
      printf 'error: %s:%d: unknown setting %s (see lab.env.example)\n' "${file}" "${n}" "${key}" >&2
      return 1
    fi
    printf -v "${key}" '%s' "${value}"
    CSB_ORIGIN[${key}]="${file}:${n}"
  done <"${file}"
}

# csb_config_load [ARGS...]: resolve every declared setting. Common flags:
#   -c FILE  config file     -l LAB      lab          -p PROFILE   profile
#   -n NAME  run name        -r DIR      results root -s KEY=VALUE any setting
#   -h       usage
# Runners call it with their own flags already removed; anything left is an
# error. Exits 2 on the first bad flag or value; changes nothing on the way.
csb_config_load() {
  local -A from_env=() from_flag=()
  local key config_file="${CSB_CONFIG:-}"
  for key in "${CSB_KEYS[@]}"; do
    if [[ -n "${!key+x}" ]]; then
      from_env[${key}]=${!key}
    fi
  done
  local OPTIND=1 opt
  while getopts ':hc:l:p:n:r:s:' opt; do
    case "${opt}" in
      h) usage; exit 0 ;;
      c) config_file=${OPTARG} ;;
      l) from_flag[LAB]=${OPTARG} ;;
      p) from_flag[PROFILE]=${OPTARG} ;;
      n) from_flag[RUN_NAME]=${OPTARG} ;;
      r) from_flag[RESULTS_ROOT]=${OPTARG} ;;
      s)
        [[ "${OPTARG}" =~ ^([A-Z][A-Z0-9_]*)=(.*)$ ]] || usage_error "-s takes KEY=VALUE, got: ${OPTARG}"
        [[ -n "${CSB_CHECK[${BASH_REMATCH[1]}]+x}" ]] || usage_error "unknown setting ${BASH_REMATCH[1]} (see lab.env.example)"
        from_flag[${BASH_REMATCH[1]}]=${BASH_REMATCH[2]}
        ;;
      :) usage_error "option -${OPTARG} needs a value" ;;
      *) usage_error "unknown option -${OPTARG}" ;;
    esac
  done
  shift $((OPTIND - 1))
  (($# == 0)) || usage_error "unexpected argument: $1"

  for key in "${CSB_KEYS[@]}"; do
    printf -v "${key}" '%s' "${CSB_DEFAULT[${key}]}"
    CSB_ORIGIN[${key}]=default
  done
  if [[ -z "${config_file}" && -f "${CSB_ROOT}/lab.env" ]]; then
    config_file="${CSB_ROOT}/lab.env"
  fi
  if [[ -n "${config_file}" ]]; then
    csb_config_read_file "${config_file}" || exit 2
  fi
  # shellcheck disable=SC2034 # read by lib/rundir.sh (run.env's config_file)
  CSB_CONFIG_FILE=${config_file}
  for key in "${!from_env[@]}"; do
    printf -v "${key}" '%s' "${from_env[${key}]}"
    CSB_ORIGIN[${key}]=environment
  done
  for key in "${!from_flag[@]}"; do
    printf -v "${key}" '%s' "${from_flag[${key}]}"
    CSB_ORIGIN[${key}]=flag
  done
  csb_config_validate || exit 2
  csb_lab_defaults
  csb_clients_resolve || exit 2
  csb_lab_validate || exit 2
  for key in "${CSB_KEYS[@]}"; do
    export "${key?}"
  done
}

csb_config_validate() {
  local key bad=0
  for key in "${CSB_KEYS[@]}"; do
    csb_check "${key}" "${!key}" || bad=1
  done
  ((bad)) && return 1
  local fn
  for fn in "${CSB_CONFIG_CHECKS[@]}"; do
    "${fn}" || return 1
  done
}

# csb_profile SMOKE QUICK FULL: print the value for the current PROFILE.
csb_profile() {
  case "${PROFILE}" in
    smoke) echo "$1" ;;
    quick) echo "$2" ;;
    full) echo "$3" ;;
  esac
}

# csb_settings_dump: every resolved setting as KEY=VALUE (for run.env).
csb_settings_dump() {
  local key
  for key in "${CSB_KEYS[@]}"; do
    printf 'setting.%s=%s\n' "${key}" "${!key}"
  done
}
