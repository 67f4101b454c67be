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
declare -gA CSB_DEFAULT=() CSB_CHECK=() CSB_ORIGIN=() CSB_DOC=()

# csb_config_declare KEY DEFAULT CHECK DOC: declare a setting. CHECK is its
# kind, a name internal/settings knows (port, sizes, "enum:a|b|c", ...).
# DOC documents the key (a runner's -h lists its settings with it:
# csb_usage; lab.env.example repeats it).
csb_config_declare() {
  local key=$1 def=$2 check=$3
  CSB_DOC[${key}]=$4
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
  "runs go to RESULTS_ROOT/<phase>/<run>/ (empty: runs/<phase>/<run>/ in the repo, which git ignores)"
csb_config_declare REMOTE_DIR /tmp path \
  "base directory on the server host in which each run makes its private work directory (csb-run.XXXXXXXXXX, 0700)"
csb_config_declare DURATION "" uint_or_empty "seconds per measured cell (empty: the profile's)"
csb_config_declare RUN_NAME "" name_or_empty "run directory suffix (empty: the runner's name)"
csb_config_declare LAB_KEEP 0 bool "netns: 1 keeps a lab this run brought up"
csb_config_declare BASELINE_RUN "" path_or_empty \
  "a run directory of the same phase that this run's report is compared with (csb compare)"

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
        if [[ -z "${CSB_CHECK[${BASH_REMATCH[1]}]+x}" ]]; then
          ! csb_key_declared_anywhere "${BASH_REMATCH[1]}" ||
            usage_error "${BASH_REMATCH[1]} is a setting of other runners, not of this one (its settings are listed below)"
          usage_error "unknown setting ${BASH_REMATCH[1]} (see lab.env.example)"
        fi
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
  csb_hosts_resolve || exit 2
  csb_lab_validate || exit 2
  for key in "${CSB_KEYS[@]}"; do
    export "${key?}"
  done
}

# csb_config_validate [KEY...]: check the settings (default: every one
# declared) with `csb check-settings` (internal/settings: each value against
# its kind, then the rules across settings); with SCHEME=https and your own
# TLS files, whether they make a certificate for SERVER_IP.
csb_config_validate() {
  local key
  local -a args=()
  (($#)) || set -- "${CSB_KEYS[@]}"
  for key in "$@"; do
    args+=("${key}" "${CSB_CHECK[${key}]}" "${CSB_ORIGIN[${key}]:-default}" "${!key-}")
  done
  csb_csb check-settings "${args[@]}" || return 1
  ! csb_tls_on || [[ -z "${TLS_CERT:-}" ]] || csb_tls_material_check
}

# csb_usage NAME [KEY...]: a runner's -h: its header comment, the settings
# KEY... of its phase (each with its doc and default), then the options and
# exit statuses every runner shares; NAME is its default run name.
csb_usage() {
  local src=${BASH_SOURCE[1]} name=$1 key def doc
  shift
  sed -n '2,/^$/{s/^# \{0,1\}//;p}' "${src}"
  if (($#)); then
    echo "Settings of this phase (lab.env, environment or -s KEY=VALUE):"
    for key in "$@"; do
      def=${CSB_DEFAULT[${key}]:-} doc=${CSB_DOC[${key}]}
      [[ "${doc}" != *default* ]] || def=""
      printf '%s%s\n' "${doc}" "${def:+ (default ${def})}" | fold -s -w 58 |
        sed "s/ *\$//; 1s/^/  $(printf '%-17s ' "${key}")/; 2,\$s/^/                    /"
    done
    echo
  fi
  cat <<EOF
Options:
  -c FILE         config file (default: lab.env at the repo root, if any)
  -l LAB          local | netns | ssh
  -p PROFILE      smoke | quick | full (default full)
  -n NAME         run directory suffix (default ${name})
  -r DIR          results root (runs go to DIR/$(basename "$(dirname "${src}")")/<run>/)
  -s KEY=VALUE    any setting of lab.env.example; flags win over the
                  environment, which wins over the config file
  -h              this help

Exit status: 0 every cell ran; 1 a cell failed or was refused (the run is
partial); 2 bad usage; 3 a tool is missing; 4 a host cannot be reached, or
was lost mid-run; 5 the route guard or the clock check refused; 6 a plan
or a host setting cannot work (the message names the setting or gives the
commands); 7 the lab is in use by another run; 130/143 interrupted.
The last line printed is "results: <run directory>".
EOF
}

# csb_list_max LIST: the largest of a comma-separated list of integers.
csb_list_max() { echo $((10#$(tr , '\n' <<<"$1" | sort -n | tail -n 1))); }

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
