#!/usr/bin/env bash
# scripts/setup.sh: install what CS Benchmark needs and is missing, with apt
# (Debian/Ubuntu package names). Run as root (or via sudo). Idempotent.
#
# Usage: bash scripts/setup.sh [-h]
#
# Installs: iperf3 wrk sysstat iproute2 openssh-client openssh-server curl
# ethtool gnuplot-nox bats shellcheck jq nghttp2-client (h2load, the HTTP/2
# load generator) nginx-light (nginx where the distribution has no
# nginx-light; for SERVER=nginx, run by the runner as a foreground process,
# so the system service a fresh install starts is disabled again) and
# golang-go when no Go is on PATH. The build needs go.mod's Go (1.24) or
# newer: a Go >= 1.21 fetches it itself from the Go module proxy when it
# builds (GOTOOLCHAIN), and setup fetches it now; an older one (Debian 12's
# golang-go is 1.19) cannot, so setup downloads go.mod's toolchain from the
# Go module proxy into /usr/local/go (where none is), which the Makefile puts
# first on PATH. oha is not in Debian: install it
# with `cargo install oha` or a release binary from github.com/hatoo/oha;
# without it Phase 2 uses wrk and says so in its report.
set -Eeuo pipefail

usage() { sed -n '2,/^set /{/^set /d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"; }
case "${1:-}" in
  -h | --help) usage; exit 0 ;;
  "") ;;
  *) printf 'error: unknown argument %s\n' "$1" >&2; usage >&2; exit 2 ;;
esac

declare -A tool_pkg=(
  [iperf3]=iperf3 [wrk]=wrk [sar]=sysstat [mpstat]=sysstat [pidstat]=sysstat
  [ip]=iproute2 [tc]=iproute2 [ss]=iproute2 [nstat]=iproute2 [ssh]=openssh-client
  [sshd]=openssh-server [curl]=curl [jq]=jq [ethtool]=ethtool [gnuplot]=gnuplot-nox
  [bats]=bats [shellcheck]=shellcheck [unshare]=util-linux [setsid]=util-linux
  [h2load]=nghttp2-client
)
missing=()
for tool in "${!tool_pkg[@]}"; do
  command -v "${tool}" >/dev/null 2>&1 || [[ -x "/usr/sbin/${tool}" ]] || missing+=("${tool_pkg[${tool}]}")
done
new_nginx=0
if ! command -v nginx >/dev/null 2>&1 && [[ ! -x /usr/sbin/nginx ]]; then
  new_nginx=1
  if apt-cache show nginx-light >/dev/null 2>&1; then missing+=(nginx-light); else missing+=(nginx); fi
fi
if ! command -v go >/dev/null 2>&1; then
  if [[ -x /usr/local/go/bin/go ]]; then
    echo "Go is in /usr/local/go/bin: add it to PATH" >&2
  else
    missing+=(golang-go)
  fi
fi
if ((${#missing[@]} == 0)); then
  echo "setup: everything is installed"
else
  mapfile -t missing < <(printf '%s\n' "${missing[@]}" | sort -u)
  echo "setup: installing ${missing[*]}"
  if [[ ${EUID} -ne 0 ]]; then
    echo "error: installing packages needs root: sudo bash scripts/setup.sh" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  if ((new_nginx)) && command -v systemctl >/dev/null 2>&1 && systemctl is-enabled nginx >/dev/null 2>&1; then
    echo "setup: nginx installed; its system service is not needed (the runner starts its own): systemctl disable --now nginx"
    systemctl disable --now nginx >/dev/null 2>&1 || true
  fi
fi
# Go: go.mod's version, or a newer one.
go_dir=${GO_INSTALL_DIR:-/usr/local/go} # (GO_INSTALL_DIR: for a test only)
go_need=$(sed -n 's/^go \([0-9.]*\)$/\1/p' "$(dirname "${BASH_SOURCE[0]}")/../go.mod")
[[ "${go_need}" == *.*.* ]] || go_need+=.0
ver_ge() { [[ "$(printf '%s\n' "$1" "$2" | sort -V | head -n 1)" == "$2" ]]; }
go_bin=$(PATH="${go_dir}/bin:${PATH}" command -v go || true)
go_have=$([[ -z "${go_bin}" ]] || GOTOOLCHAIN=local "${go_bin}" env GOVERSION 2>/dev/null | sed 's/^go//')
if [[ -z "${go_have}" ]]; then
  echo "error: no Go found after installing golang-go: install Go ${go_need} or newer (https://go.dev/doc/install) and run make setup again" >&2
  exit 1
elif ver_ge "${go_have}" "${go_need}"; then
  echo "setup: Go ${go_have} (${go_bin}) builds this project (go.mod: ${go_need})"
elif ver_ge "${go_have}" 1.21; then
  echo "setup: Go ${go_have} is older than go.mod's ${go_need}: it fetches go${go_need} from the Go module proxy now"
  (cd "$(dirname "${BASH_SOURCE[0]}")/.." && GOTOOLCHAIN=auto "${go_bin}" version)
elif [[ -e "${go_dir}" ]]; then
  echo "error: Go ${go_have} (${go_bin}) is older than go.mod's ${go_need} and ${go_dir} is taken: move it away and run make setup again, or install Go ${go_need} or newer yourself" >&2
  exit 1
else
  [[ ${EUID} -eq 0 ]] || { echo "error: Go ${go_have} is older than go.mod's ${go_need}; installing Go ${go_need} into ${go_dir} needs root: sudo bash scripts/setup.sh" >&2; exit 1; }
  tc="golang.org/toolchain@v0.0.1-go${go_need}.linux-$(dpkg --print-architecture)"
  echo "setup: Go ${go_have} is older than go.mod's ${go_need}: downloading ${tc} from the Go module proxy into ${go_dir}"
  dir=$(cd / && GOFLAGS=-modcacherw "${go_bin}" mod download -json "${tc}" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  [[ -x "${dir}/bin/go" || -f "${dir}/bin/go" ]] || { echo "error: could not download ${tc} (GOPROXY=$("${go_bin}" env GOPROXY)): install Go ${go_need} or newer yourself" >&2; exit 1; }
  cp -a "${dir}" "${go_dir}"
  chmod a+rx "${go_dir}"/bin/* "${go_dir}"/pkg/tool/*/*
  echo "setup: $("${go_dir}/bin/go" version) in ${go_dir}/bin; the Makefile puts it first on PATH (in your shell: export PATH=${go_dir}/bin:\$PATH)"
fi
command -v oha >/dev/null 2>&1 ||
  echo "setup: oha is not installed (not in Debian): cargo install oha, or a release binary from github.com/hatoo/oha; Phase 2 uses wrk without it"
