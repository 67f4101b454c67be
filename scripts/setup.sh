#!/usr/bin/env bash
# scripts/setup.sh: install what CS Benchmark needs and is missing, with apt
# (Debian/Ubuntu package names). Run as root (or via sudo). Idempotent.
#
# Usage: bash scripts/setup.sh [-h]
#
# Installs: iperf3 wrk sysstat iproute2 openssh-client openssh-server curl
# ethtool gnuplot-nox bats shellcheck jq nginx-light (nginx where the
# distribution has no nginx-light; for SERVER=nginx, run by the runner as a
# foreground process, so the system service a fresh install starts is
# disabled again) and golang-go when no Go >= 1.22 is on PATH. oha is not in
# Debian: install it with `cargo install oha` or a
# release binary from github.com/hatoo/oha; without it Phase 2 uses wrk and
# says so in its report.
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
command -v oha >/dev/null 2>&1 ||
  echo "setup: oha is not installed (not in Debian): cargo install oha, or a release binary from github.com/hatoo/oha; Phase 2 uses wrk without it"
