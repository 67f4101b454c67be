# shellcheck shell=bash
# lib/loadgen.sh: HTTP load generators (wrk, oha) and the paths they load.
#
# The payload list check every HTTP runner does before anything starts; which
# load generator runs (LOADGEN) and how its command line is spelled on a
# client host; the paths of the server under test and their check before the
# first cell. Each command is built once, as an array; lib/cell.sh starts it
# on the client hosts and logs it as it runs.

# csb_payloads_check KEY LIST: every size must be one the server serves under
# that very name (/payload/<size>), at most once, no larger than it serves:
# `csb sizes` (internal/sizes, the server's own parser) says so, or prints
# the error (and this returns 1). Fills CSB_SIZE_BYTES[size].
declare -gA CSB_SIZE_BYTES=()
csb_payloads_check() {
  local out name bytes
  out=$(csb_csb sizes -key "$1" "$2" 2>&1) || { printf '%s\n' "${out}" >&2; return 1; }
  while read -r name bytes; do
    [[ -z "${name}" ]] || CSB_SIZE_BYTES[${name}]=${bytes}
  done <<<"${out}"
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

# csb_oha_probe [h2]: csb_oha_flags on the installed oha; dies when it has
# no JSON, or with h2 (HTTP=2) when its --help has no --http2.
csb_oha_probe() {
  local help
  help=$(oha --help 2>&1) || true
  csb_oha_flags "${help}" ||
    die "this oha ($(oha --version 2>&1 | head -n1)) prints no JSON (neither --output-format nor -j in oha --help): install oha >= 1.0 or use LOADGEN=wrk" 3
  [[ "${1:-}" != h2 || "${help}" == *--http2* ]] ||
    die "this oha ($(oha --version 2>&1 | head -n1)) has no --http2 in oha --help: install a newer oha, or leave LOADGEN at auto (h2load over HTTP/2)" 3
  [[ -n "${CSB_OHA_WAIT}" ]] ||
    log_warn "this oha has no --wait-ongoing-requests-after-deadline: requests in flight at the deadline are aborted and reported apart"
}

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
  local base
  base=$(csb_base_url)
  printf '%s%s\n' "${base}" "$(csb_payload_path "$1")"
}

# csb_payloads_verify SIZES: before the first cell, `csb check-paths`
# fetches every payload path of SIZES twice (and HEALTH_PATH once) through
# the benchmark address and refuses the run (exit 2, nothing measured) when
# a response is not 200, is chunked or its body is not the declared size;
# the responses' headers are kept in raw/verify/. A server that answers
# "Connection: close" is recorded (server.connection_close=1) and named
# (every request of a keep-alive load then opens a connection); Phase 3,
# which holds keep-alive connections, refuses it.
csb_payloads_verify() {
  local size out
  local -a items cmd=("${CSB_ROOT}/bin/csb" check-paths -base "$(csb_base_url)" -dir "${CSB_RUN_DIR}/raw/verify" -health "${HEALTH_PATH}")
  csb_payloads_check SIZES "$1" || die "internal: the sizes $1 passed no check" 1
  IFS=, read -r -a items <<<"$1"
  for size in "${items[@]}"; do cmd+=(-path "${size}=$(csb_payload_path "${size}"):${CSB_SIZE_BYTES[${size}]}"); done
  ! csb_tls_on || cmd+=(-ca "${CSB_TLS_CA_LOCAL}")
  [[ -z "${C10K_HOLD:-}" ]] || cmd+=(-keepalive)
  cmd+=(-http "$(csb_http_list)")
  out=$("${cmd[@]}" 2>&1) || die "${out#error: }" 2
  local -A got=()
  csb_kv_into got "${out}"
  csb_run_set server.connection_close "${got[connection_close]}"
  [[ "${got[connection_close]}" != 1 ]] ||
    log_warn "the server under test answers 'Connection: close': no connection is kept alive, every request opens one (see raw/verify/)"
  if [[ -n "${got[http2]:-}" ]]; then
    csb_run_set server.http2 "${got[http2]}"
    log_info "server under test speaks HTTP/2: ${got[http2]} ($([[ "${got[http2]}" == h2 ]] && echo "ALPN over TLS" || echo "prior knowledge, cleartext"))"
  fi
  log_info "server under test checked: $1 and ${HEALTH_PATH} answer 200 with the declared sizes, not chunked, over HTTP $(csb_http_list)"
}

# The HTTP versions a run loads with: HTTP, declared by the runners that
# speak HTTP/2 (1.1 where it is not: wrk and oha speak HTTP/1.1). HTTP/2 is
# h2 over TLS (ALPN) with SCHEME=https, h2c with prior knowledge with http.

# csb_http_list: "1.1", "2" or "1.1,2".
csb_http_list() { printf '%s\n' "${HTTP:-1.1}"; }

# csb_http2_on: the run loads over HTTP/2 too.
csb_http2_on() { [[ ",${HTTP:-1.1}," == *,2,* ]]; }

# csb_http1_on: the run loads over HTTP/1.1 too.
csb_http1_on() { [[ ",${HTTP:-1.1}," == *,1.1,* ]]; }

# csb_curl_http: curl's flag for a run over HTTP/2 only, which may face a
# server that speaks nothing else (nginx's cleartext http2 listen):
# --http2 over TLS, --http2-prior-knowledge in cleartext; else none.
csb_curl_http() {
  csb_http1_on && return 0
  if csb_tls_on; then echo --http2; else echo --http2-prior-knowledge; fi
}

# csb_wrk_cmd ARRAY K THREADS CONNECTIONS SECONDS URL: client K's wrk with
# the repo's done() hook (report.lua in its bin/: one CSB_WRK_JSON line after
# wrk's text) and the latency distribution; THREADS as the load plan gives
# them (csb load-plan: never more than the connections). wrk's timeout stays
# at its default (2 s): a slower response is counted as a timeout error.
csb_wrk_cmd() {
  local -n _wrk=$1
  _wrk=(wrk -t "$3" -c "$4" -d "$5s" --latency -s "$(csb_client_bin "$2")/report.lua" "$6")
}

# csb_h2load_cmd ARRAY THREADS CONNECTIONS STREAMS SECONDS URL LOG
# [WARMUP_S [HTTP]]: h2load for SECONDS (-D) with CONNECTIONS connections
# of at most STREAMS concurrent streams each (-m), every request's status
# and latency in LOG (--log-file, which h2load appends to: the cell's
# process table removes it before the start). Over TLS it offers only h2
# (--npn-list=h2), so a server that would fall back to HTTP/1.1 is not
# loaded over it; like wrk it verifies no certificate. In cleartext: h2c
# with prior knowledge. WARMUP_S > 0: measured after that warm-up
# (--warm-up-time: the connections open and requests run, none counted or
# logged). HTTP 1.1: HTTP/1.1 (--h1), one request at a time a connection.
csb_h2load_cmd() {
  local -n _h2=$1
  _h2=(h2load -t "$2" -c "$3" -m "$4" -D "$5" --log-file="$7")
  ((${8:-0} == 0)) || _h2+=(--warm-up-time="$8")
  if [[ "${9:-2}" == 1.1 ]]; then
    _h2+=(--h1)
  elif csb_tls_on; then
    _h2+=(--npn-list=h2)
  fi
  _h2+=("$6")
}

# csb_oha_cmd ARRAY CONNECTIONS SECONDS URL [STREAMS]: oha in duration
# mode, no TUI, JSON on stdout, waiting for in-flight requests at the
# deadline (see csb_oha_flags; call csb_oha_probe or csb_oha_flags first).
# With STREAMS: over HTTP/2 only (--http2; h2 by ALPN over TLS, h2c with
# prior knowledge in cleartext), STREAMS requests at once on each of the
# CONNECTIONS (-p: oha runs CONNECTIONS x STREAMS workers).
csb_oha_cmd() {
  local -n _oha=$1
  local conns=$2 secs=$3 url=$4 streams=${5:-}
  _oha=(oha --no-tui "${CSB_OHA_JSON[@]}" -z "${secs}s" -c "${conns}")
  [[ -z "${streams}" ]] || _oha+=(--http2 -p "${streams}")
  [[ -z "${CSB_OHA_WAIT}" ]] || _oha+=("${CSB_OHA_WAIT}")
  # SCHEME=https: oha would refuse the run's CA; like wrk it then verifies
  # nothing (lib/tls.sh; curl and connclient do verify).
  ! csb_tls_on || _oha+=(--insecure)
  _oha+=("${url}")
}

# csb_capture_response SIZE OUT: fetch one response of /payload/SIZE through
# the benchmark address and keep its status line and headers verbatim in OUT,
# so a summary can count a response's bytes on the wire (oha reports bodies
# only).
csb_capture_response() {
  local -a cmd
  local url
  url=$(csb_payload_url "$1")
  # shellcheck disable=SC2207 # one flag or none
  cmd=(curl -sS --noproxy '*' --max-time 5 "${CSB_CURL_TLS[@]}" $(csb_curl_http) -D "$2" -o /dev/null "${url}")
  log_cmd "${cmd[@]}"
  "${cmd[@]}"
}

# csb_load_plan COUNT THREADS [rate]: `csb load-plan` for the run's client
# hosts (their CPUs and fd limits, read in preflight) into CSB_LOAD: ok,
# code, refusal, <label>.connections (each host's share of COUNT),
# <label>.threads. THREADS 0: one per CPU of each host. With "rate" COUNT is
# a rate, split the same way, and no fd limit is checked against it.
declare -gA CSB_LOAD=()
csb_load_plan() {
  local k out fd
  local -a cmd=("${CSB_ROOT}/bin/csb" load-plan -conns "$1" -threads "$2")
  for k in $(csb_clients); do
    fd=${CSB_H_FDHARD[k]:-0}
    [[ "${3:-}" != rate ]] || fd=0
    cmd+=(-host "${CSB_H_LABEL[k]}:${CSB_H_NCPU[k]:-0}:${fd}")
  done
  out=$("${cmd[@]}") || die "csb load-plan failed: $(csb_quote "${cmd[@]}")" 1
  csb_kv_into CSB_LOAD "${out}"
}

# csb_load_params: the cell parameters of the last plan: clients=N and each
# host's <label>.connections and <label>.threads.
csb_load_params() {
  local k label
  printf '%s\n' "clients=${CSB_CLIENTS_N}"
  for k in $(csb_clients); do
    label=${CSB_H_LABEL[k]}
    printf '%s\n' "${label}.connections=${CSB_LOAD[${label}.connections]}" "${label}.threads=${CSB_LOAD[${label}.threads]}"
  done
}

# csb_load_procs NAME SUB SECONDS URL TOOL [STREAMS [HTTP]]: the cell table
# (lib/cell.sh): one load generator TOOL (wrk, oha, h2load) per client host
# with its share of the last plan, writing raw/SUB<label>/NAME.txt (wrk:
# its errors among its text), .json (oha: stderr in
# logs/<label>/NAME.stderr; with HTTP 2 over HTTP/2, STREAMS at once on
# each connection) or .h2load.txt (h2load's text and errors; its
# --log-file NAME.h2load.log beside it, STREAMS streams per connection).
csb_load_procs() {
  local name=$1 sub=$2 secs=$3 url=$4 tool=$5 streams=${6:-1} http=${7:-1.1} k label out err
  local -a cmd
  csb_procs_reset
  for k in $(csb_clients); do
    label=${CSB_H_LABEL[k]}
    case "${tool}" in
      oha)
        csb_oha_cmd cmd "${CSB_LOAD[${label}.connections]}" "${secs}" "${url}" "$([[ "${http}" != 2 ]] || echo "${streams}")"
        out="raw/${sub}${label}/${name}.json" err="logs/${label}/${name}.stderr"
        ;;
      h2load)
        out="raw/${sub}${label}/${name}.h2load.txt" err="raw/${sub}${label}/${name}.h2load.txt"
        csb_h2load_cmd cmd "${CSB_LOAD[${label}.threads]}" "${CSB_LOAD[${label}.connections]}" "${streams}" "${secs}" "${url}" "${out%.txt}.log"
        ;;
      *)
        csb_wrk_cmd cmd "${k}" "${CSB_LOAD[${label}.threads]}" "${CSB_LOAD[${label}.connections]}" "${secs}" "${url}"
        out="raw/${sub}${label}/${name}.txt" err=${out}
        ;;
    esac
    csb_proc_add "${k}" "${out}" "${err}" "${cmd[@]}"
    [[ "${tool}" != h2load ]] || csb_proc_also "${out%.txt}.log"
  done
}

# csb_has_loadgen_output FILE: a load generator's output (wrk's text, .txt;
# oha's JSON) read by `csb check`, the summary's own verdict: exit 1 (why on
# stderr) when unreadable, 3 when error statuses are above NON2XX_MAX.
csb_config_declare NON2XX_MAX 0 fraction "share of a cell's responses that may have an error status (not 2xx or 3xx) for the cell to stay ok: 0 none, 0.001 one in a thousand"
csb_has_loadgen_output() {
  local kind=oha
  case "$1" in
    *.h2load.txt) kind=h2load ;;
    *.txt) kind=wrk ;;
  esac
  "${CSB_ROOT}/bin/csb" check -non2xx-max "${NON2XX_MAX}" "${kind}" "$1"
}

# csb_load_cell NAME URL SECONDS WARMUP PARAM...: an HTTP cell of the last
# plan on every client host: WARMUP seconds of the same load, unrecorded
# (raw/warmup/<label>/), then the measured cell, which is ok only when every
# host's load generator exited 0 and left an output a summary can read.
# The tool is the PARAMs' loadgen= (default wrk), the streams per
# connection their streams= (default 1), the HTTP version their http=
# (default 1.1; h2load speaks HTTP/2 only, oha with http=2).
csb_load_cell() {
  local name=$1 url=$2 secs=$3 warmup=$4 p tool=wrk streams=1 http=1.1
  shift 4
  for p in "$@"; do
    case "${p}" in
      loadgen=*) tool=${p#loadgen=} ;;
      streams=*) streams=${p#streams=} ;;
      http=*) http=${p#http=} ;;
    esac
  done
  if ((warmup > 0)); then
    log_info "warm-up for ${name}: ${warmup} s on every client host, not recorded (raw/warmup/<client>/)"
    csb_load_procs "${name}" warmup/ "${warmup}" "${url}" "${tool}" "${streams}" "${http}"
    csb_procs_start "warmup-${name}"
    csb_procs_wait "$((warmup + 30))" || log_warn "warm-up ${tool} failed: $(csb_procs_failures)"
  fi
  csb_load_procs "${name}" "" "${secs}" "${url}" "${tool}" "${streams}" "${http}"
  csb_procs_cell "${name}" "loadgen-${name}" "$((secs + 30))" csb_has_loadgen_output "$@"
}
