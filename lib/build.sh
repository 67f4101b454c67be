# shellcheck shell=bash
# lib/build.sh: the Go commands a run needs, built into bin/ on this host
# (CGO_ENABLED=0: static, so no host the run copies them to needs Go).

# csb_build OUT PKG: build one Go command into bin/OUT, unless bin/OUT is
# newer than every Go source: runs at once (tests' lanes, two labs) share
# bin/, and one must never rewrite a binary another is copying or running.
csb_build() {
  local out=$1 pkg=$2 want
  [[ "${out}" != csb ]] || CSB_CSB_FRESH=1
  csb_bin_stale "${out}" || return 0
  csb_go_build "${out}" "${pkg}"
}

# csb_bin_stale OUT: is bin/OUT missing or older than a Go source?
csb_bin_stale() {
  [[ ! -x "${CSB_ROOT}/bin/$1" || -n "$(find "${CSB_ROOT}/go.mod" "${CSB_ROOT}/cmd" "${CSB_ROOT}/internal" \
    "${CSB_ROOT}/server" -newer "${CSB_ROOT}/bin/$1" -print -quit 2>/dev/null)" ]]
}

# csb_go_build OUT PKG: go build ./PKG into bin/OUT by temp-and-rename, and
# only when the binary differs: a run copying or running bin/OUT keeps the
# file it opened (go build -o rewrites its output in place, even unchanged).
csb_go_build() {
  local out=$1 pkg=$2 want tmp
  need_tool go golang-go
  mkdir -p "${CSB_ROOT}/bin"
  want=$(sed -n 's/^go //p' "${CSB_ROOT}/go.mod")
  tmp=$(mktemp "${CSB_ROOT}/bin/.${out}.XXXXXX") || die "could not make a temporary file in ${CSB_ROOT}/bin" 1
  if ! (cd "${CSB_ROOT}" && CGO_ENABLED=0 go build -trimpath -o "${tmp}" "./${pkg}"); then
    rm -f "${tmp}"
    die "go build ./${pkg} failed; is Go >= ${want} installed? (make setup)" 1
  fi
  if cmp -s "${tmp}" "${CSB_ROOT}/bin/${out}"; then
    # The same binary, from sources touched since (a checkout, a rebase):
    # its time moves on, or every run would build it again.
    rm -f "${tmp}"
    ! csb_bin_stale "${out}" || touch "${CSB_ROOT}/bin/${out}"
  else
    chmod 0755 "${tmp}" && mv -f "${tmp}" "${CSB_ROOT}/bin/${out}"
  fi
}

# csb_csb ARGS...: bin/csb ARGS, built first when it is missing or older
# than a Go source (checked once per process): settings are checked and
# labs set up before a runner builds everything.
CSB_CSB_FRESH=0
csb_csb() {
  ((CSB_CSB_FRESH)) || csb_build csb cmd/csb >&2
  "${CSB_ROOT}/bin/csb" "$@"
}

# csb_kv_into ARRAY TEXT: TEXT's KEY=VALUE lines (what csb prints for
# bash) into the associative ARRAY, emptied first.
csb_kv_into() {
  local -n _kv=$1
  local k v
  _kv=()
  while IFS='=' read -r k v; do [[ -z "${k}" ]] || _kv["${k}"]=${v}; done <<<"$2"
}

# csb_build_all [connclient]: the commands every runner needs (csb, the
# reference server), and connclient for the phases that open connections
# with it (it then goes to every client host too).
csb_build_all() {
  csb_build csb cmd/csb
  csb_build csb-server server
  if [[ "${1:-}" == connclient ]]; then
    csb_build connclient cmd/connclient
    CSB_CLIENT_BINS+=(connclient)
  fi
}
