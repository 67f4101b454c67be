# shellcheck shell=bash
# lib/loadgen.sh: HTTP load generators (wrk, oha) on the client host.
#
# The payload list and concurrency checks every HTTP runner does before
# anything starts; which load generator runs (LOADGEN) and how its command
# line is spelled; the client's fd limit against the largest concurrency; and
# running one load generator to completion with pidstat on it, its stdout kept
# verbatim. Each command is built once, as an array, logged with log_cmd and
# run as logged.

# The constants shared with Go, generated from it (`bin/csb constants -sh`):
# CSB_FD_MARGIN, the fds a load generator needs beyond one per connection
# (epoll, pipes, stdio, wrk's per-thread loops, oha's runtime); CSB_SIZE_K
# and CSB_SIZE_M, the payload size units; CSB_WRK_JSON_PREFIX, the line
# lib/wrk/report.lua prints after wrk's own text.
# shellcheck source=lib/constants.sh
source "${CSB_LIB}/constants.sh"

# csb_size_bytes SIZE: the bytes of a payload size as the server reads it
# (k = 1024, m = 1048576). SIZE must already pass csb_check_size.
csb_size_bytes() {
  local s=${1,,} mult=1
  case "${s}" in
    *k) s=${s%k} mult=${CSB_SIZE_K} ;;
    *m) s=${s%m} mult=${CSB_SIZE_M} ;;
  esac
  echo $((10#${s} * mult))
}

# csb_size_name BYTES: the server's canonical name of a size (its URL path).
csb_size_name() {
  local n=$1
  if ((n % CSB_SIZE_M == 0)); then
    echo "$((n / CSB_SIZE_M))m"
  elif ((n % CSB_SIZE_K == 0)); then
    echo "$((n / CSB_SIZE_K))k"
  else
    echo "${n}"
  fi
}

# The server refuses a payload above this (internal/server MaxSizeBytes).
CSB_SIZE_MAX_BYTES=$((64 * CSB_SIZE_M))

# csb_payloads_check KEY LIST: every size must be one the server serves under
# that very name (/payload/<size>), at most once. Prints the error and returns
# 1 otherwise. (csb_config_load has already checked the list's syntax.)
csb_payloads_check() {
  local key=$1 list=$2 item bytes name
  local -A seen=()
  local -a items
  IFS=, read -r -a items <<<"${list}"
  for item in "${items[@]}"; do
    bytes=$(csb_size_bytes "${item}")
    if ((bytes > CSB_SIZE_MAX_BYTES)); then
      printf 'error: %s=%s: %s is larger than the server serves (at most 64m)\n' "${key}" "${list}" "${item}" >&2
      return 1
    fi
    name=$(csb_size_name "${bytes}")
    if [[ "${item}" != "${name}" ]]; then
      printf 'error: %s=%s: the server serves %s bytes as /payload/%s, not /payload/%s: write %s\n' \
        "${key}" "${list}" "${bytes}" "${name}" "${item}" "${name}" >&2
      return 1
    fi
    if [[ -n "${seen[${bytes}]+x}" ]]; then
      printf 'error: %s=%s: %s is listed twice\n' "${key}" "${list}" "${item}" >&2
      return 1
    fi
    seen[${bytes}]=1
  done
}

# csb_list_max LIST: the largest of a comma-separated list of integers.
csb_list_max() {
  local -a items
  local item max=0
  IFS=, read -r -a items <<<"$1"
  for item in "${items[@]}"; do
    ((10#${item} > max)) && max=$((10#${item}))
  done
  echo "${max}"
}

# csb_loadgen_resolve: turn LOADGEN (auto|oha|wrk) into CSB_LOADGEN, the
# tool that will run, and CSB_LOADGEN_STANDIN=1 when wrk stands in for oha
# because oha is not installed. LOADGEN=oha without oha exits 2: the user
# asked for a tool that is not there, and nothing has started yet.
CSB_LOADGEN=""
CSB_LOADGEN_STANDIN=0
csb_loadgen_resolve() {
  CSB_LOADGEN_STANDIN=0
  case "${LOADGEN}" in
    oha)
      command -v oha >/dev/null 2>&1 ||
        usage_error "LOADGEN=oha but oha is not installed on this (client) host. Install it: $(csb_pkg_of oha); or use LOADGEN=wrk (or auto: oha when installed, else wrk)"
      CSB_LOADGEN=oha
      ;;
    wrk) CSB_LOADGEN=wrk ;;
    auto)
      if command -v oha >/dev/null 2>&1; then
        CSB_LOADGEN=oha
      else
        # shellcheck disable=SC2034 # both read by 02-http-matrix/run_http_matrix.sh
        CSB_LOADGEN=wrk CSB_LOADGEN_STANDIN=1
      fi
      ;;
    *) usage_error "LOADGEN=${LOADGEN}: expected auto, oha or wrk" ;;
  esac
}

# csb_oha_flags HELP_TEXT: from `oha --help`, how this oha spells JSON output
# and "wait for in-flight requests at the deadline". Sets CSB_OHA_JSON (an
# array: --output-format json on oha >= 1.5, -j before) and CSB_OHA_WAIT
# (--wait-ongoing-requests-after-deadline, or empty on an oha too old to have
# it: requests in flight at the deadline are then aborted and counted apart).
# Returns 1 when the help shows no JSON output at all.
declare -ga CSB_OHA_JSON=()
CSB_OHA_WAIT=""
csb_oha_flags() {
  local help=$1
  CSB_OHA_JSON=()
  CSB_OHA_WAIT=""
  if [[ "${help}" == *--output-format* ]]; then
    CSB_OHA_JSON=(--output-format json)
  elif [[ "${help}" =~ (^|[^-[:alnum:]])-j,[[:space:]]+--json ]]; then
    CSB_OHA_JSON=(-j)
  else
    return 1
  fi
  if [[ "${help}" == *--wait-ongoing-requests-after-deadline* ]]; then
    CSB_OHA_WAIT=--wait-ongoing-requests-after-deadline
  fi
}

# csb_oha_probe: csb_oha_flags on the installed oha; dies when it has no JSON.
csb_oha_probe() {
  local help
  help=$(oha --help 2>&1) || true
  csb_oha_flags "${help}" ||
    die "this oha ($(oha --version 2>&1 | head -n1)) prints no JSON (neither --output-format nor -j in oha --help): install oha >= 1.0 or use LOADGEN=wrk" 3
  [[ -n "${CSB_OHA_WAIT}" ]] ||
    log_warn "this oha has no --wait-ongoing-requests-after-deadline: requests in flight at the deadline are aborted and reported apart"
}

# The reference server's payload bytes: this 63-byte line and its newline,
# repeated and cut at the size (internal/server Pattern); nginx serves files
# made from it, so both send the same bytes.
# shellcheck disable=SC2034 # read by lib/server.sh (nginx's payload files)
CSB_PAYLOAD_LINE=0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.

# csb_payload_path SIZE: the path of a payload on the server under test
# (PAYLOAD_PATHS, else /payload/SIZE).
csb_payload_path() {
  local item
  local -a items
  IFS=, read -r -a items <<<"${PAYLOAD_PATHS:-}"
  for item in "${items[@]}"; do
    if [[ "${item%%=*}" == "$1" ]]; then
      printf '%s\n' "${item#*=}"
      return 0
    fi
  done
  printf '/payload/%s\n' "$1"
}

# csb_payload_url SIZE: the URL of a payload on the benchmark address.
csb_payload_url() {
  printf '%s%s\n' "$(csb_base_url)" "$(csb_payload_path "$1")"
}

# csb_payloads_verify SIZES: before the first cell, fetch every payload path
# of SIZES twice (and HEALTH_PATH once) through the benchmark address and
# refuse the run (exit 2, nothing measured) when a response is not 200, its
# body is not the declared size, it is chunked, or its size varies between
# the two requests. The responses' headers are kept in raw/verify/. A server
# that answers "Connection: close" is recorded (server.connection_close=1)
# and named: every request of a keep-alive load then opens a connection.
csb_payloads_verify() {
  local sizes=$1 size path want dir="${CSB_RUN_DIR}/raw/verify" i got code te close=0
  local -a items
  mkdir -p "${dir}"
  IFS=, read -r -a items <<<"${sizes}"
  for size in "${items[@]}" health; do
    if [[ "${size}" == health ]]; then
      path=${HEALTH_PATH} want=""
    else
      path=$(csb_payload_path "${size}") want=$(csb_size_bytes "${size}")
    fi
    local first=""
    for i in 1 2; do
      [[ "${size}" != health || "${i}" == 1 ]] || continue
      local h="${dir}/${size}-${i}.headers" out
      local -a cmd=(curl -sS --noproxy '*' --max-time 10 "${CSB_CURL_TLS[@]}" -D "${h}" -o /dev/null -w '%{http_code} %{size_download}'
        "$(csb_base_url)${path}")
      out=$("${cmd[@]}" 2>&1) ||
        die "the server under test did not answer GET ${path} on ${SERVER_IP}:${SERVER_PORT}: ${out}" 2
      read -r code got <<<"${out}"
      [[ "${code}" == 200 ]] ||
        die "the server under test answered GET ${path} with status ${code}: expected 200$([[ "${size}" == health ]] && echo " (HEALTH_PATH)" || echo " (the ${size} payload; PAYLOAD_PATHS maps a size to its path)")" 2
      te=$(tr -d '\r' <"${h}" | grep -i '^transfer-encoding:' | head -n 1 || true)
      [[ "${te,,}" != *chunked* ]] ||
        die "the server under test answered GET ${path} chunked (${te}): expected a Content-Length body of ${want:-a fixed} bytes" 2
      if tr -d '\r' <"${h}" | grep -qi '^connection:[[:space:]]*close'; then close=1; fi
      [[ "${size}" == health ]] && continue
      [[ "${got}" == "${want}" ]] ||
        die "the server under test answered GET ${path} with a ${got}-byte body: expected ${want} bytes (${size}); serve that size there or fix PAYLOAD_PATHS" 2
      if [[ -n "${first}" && "${got}" != "${first}" ]]; then
        die "the server under test answered GET ${path} with ${first} bytes, then ${got} bytes: expected ${want} bytes every time" 2
      fi
      first=${got}
    done
  done
  csb_run_set server.connection_close "${close}"
  if ((close)) && [[ -n "${C10K_HOLD:-}" ]]; then
    die "the server under test answers 'Connection: close' (see raw/verify/): Phase 3 holds keep-alive connections, which this server closes after one response; configure it to keep connections alive" 2
  elif ((close)); then
    log_warn "the server under test answers 'Connection: close': no connection is kept alive, every request opens one (see raw/verify/)"
  fi
  log_info "server under test checked: ${sizes} and ${HEALTH_PATH} answer 200 with the declared sizes, not chunked"
}

# csb_wrk_cmd ARRAY THREADS CONNECTIONS SECONDS URL: wrk with the repo's
# done() hook (lib/wrk/report.lua: one CSB_WRK_JSON line after wrk's text)
# and the latency distribution. wrk's timeout stays at its default (2 s): a
# response slower than that is counted as a timeout error.
csb_wrk_cmd() {
  local -n _wrk=$1
  local threads=$2 conns=$3 secs=$4 url=$5
  ((threads <= conns)) || threads=${conns}
  _wrk=(wrk -t "${threads}" -c "${conns}" -d "${secs}s" --latency
    -s "${CSB_LIB}/wrk/report.lua" "${url}")
}

# csb_oha_cmd ARRAY CONNECTIONS SECONDS URL: oha in duration mode, no TUI,
# JSON on stdout, waiting for in-flight requests at the deadline (see
# csb_oha_flags; call csb_oha_probe or csb_oha_flags first).
csb_oha_cmd() {
  local -n _oha=$1
  local conns=$2 secs=$3 url=$4
  _oha=(oha --no-tui "${CSB_OHA_JSON[@]}" -z "${secs}s" -c "${conns}")
  [[ -z "${CSB_OHA_WAIT}" ]] || _oha+=("${CSB_OHA_WAIT}")
  # SCHEME=https: oha would refuse the run's CA; like wrk it then verifies
  # nothing (lib/tls.sh; curl and connclient do verify).
  ! csb_tls_on || _oha+=(--insecure)
  _oha+=("${url}")
}

# csb_fd_prepare MAX_CONCURRENCY: make the fd limit of this shell (and so of
# every load generator it starts) cover MAX_CONCURRENCY + CSB_FD_MARGIN,
# raising the soft limit when the hard limit allows. Records the limits in
# run.env. Whatever cannot be covered is refused cell by cell (csb_fd_refusal).
CSB_FD_SOFT=""
CSB_FD_HARD=""
csb_fd_prepare() {
  local need=$(($1 + CSB_FD_MARGIN)) soft hard
  soft=$(ulimit -Sn)
  hard=$(ulimit -Hn)
  csb_run_set fd_soft_initial "${soft}"
  csb_run_set fd_hard "${hard}"
  csb_run_set fd_needed_max "${need}"
  if [[ "${soft}" != unlimited ]] && ((soft < need)); then
    local want=${need}
    if [[ "${hard}" != unlimited ]] && ((hard < need)); then
      want=${hard}
    fi
    if ((want > soft)) && ulimit -Sn "${want}"; then
      log_info "fd limit: soft ${soft} -> ${want} (hard ${hard}) for concurrency up to $1 (+${CSB_FD_MARGIN} spare)"
      soft=${want}
    fi
  fi
  CSB_FD_SOFT=${soft}
  CSB_FD_HARD=${hard}
  csb_run_set fd_soft "${soft}"
  if [[ "${soft}" == unlimited ]] || ((soft >= need)); then
    log_info "fd limit: soft ${soft}, hard ${hard}: enough for concurrency up to $1 (+${CSB_FD_MARGIN} spare)"
  else
    log_warn "fd limit: soft ${soft}, hard ${hard}: cells above concurrency $((soft - CSB_FD_MARGIN)) will be refused (raise the hard limit: ulimit -Hn, limits.conf or LimitNOFILE)"
  fi
}

# csb_fd_refusal CONCURRENCY: print why a cell cannot get its fds (and
# return 0), or return 1 when it can.
csb_fd_refusal() {
  local need=$(($1 + CSB_FD_MARGIN))
  [[ "${CSB_FD_SOFT}" == unlimited ]] && return 1
  ((need > CSB_FD_SOFT)) || return 1
  printf 'fd limit: concurrency %s needs %s fds (+%s spare), the client allows %s (hard %s); raise the hard limit (ulimit -Hn, limits.conf, LimitNOFILE) to run it\n' \
    "$1" "${need}" "${CSB_FD_MARGIN}" "${CSB_FD_SOFT}" "${CSB_FD_HARD}"
}

# csb_capture_response SIZE OUT: fetch one response of /payload/SIZE through
# the benchmark address and keep its status line and headers verbatim in OUT,
# so a summary can count a response's bytes on the wire (oha reports bodies
# only).
csb_capture_response() {
  local -a cmd=(curl -sS --noproxy '*' --max-time 5 "${CSB_CURL_TLS[@]}" -D "$2" -o /dev/null "$(csb_payload_url "$1")")
  log_cmd "${cmd[@]}"
  "${cmd[@]}"
}

# csb_loadgen_exec OUT ERR NAME CMD ARGS...: run a load generator to
# completion in the background (so a signal is handled at once), tracked by
# PID, stdout to OUT and stderr to ERR (the same file is fine), with pidstat
# on its PID in monitors/client/pidstat-NAME.txt (pidstat ends by itself when
# the PID does). Returns the load generator's exit status.
csb_loadgen_exec() {
  local out=$1 err=$2 name=$3
  shift 3
  log_cmd "$@"
  if [[ "${out}" == "${err}" ]]; then
    "$@" </dev/null >"${out}" 2>&1 &
  else
    "$@" </dev/null >"${out}" 2>"${err}" &
  fi
  local pid=$! mon
  csb_track_client "${pid}" "$1"
  mon=$(on_client_bg "${CSB_RUN_DIR}/monitors/${CSB_CLIENT_LABEL}/pidstat-${name}.txt" \
    "${CSB_SYSSTAT_ENV[@]}" pidstat -H -h -u -r -p "${pid}" 1) &&
    csb_monitor_add client "${mon}" pidstat
  local rc=0
  wait "${pid}" || rc=$?
  csb_untrack_client "${pid}"
  return "${rc}"
}
