# shellcheck shell=bash
# lib/host/capture-env.sh DIR [NIC]: capture this host's environment into DIR.
# Runs on either host through `bash -s` (see envcap.sh), so it relies on
# nothing but coreutils, procps and iproute2; every other tool is optional
# and its absence is recorded. Each file is a tool's own output, untouched.
dir=$1
nic=${2:-}
mkdir -p "${dir}"
cd "${dir}" || exit 1

has() { command -v "$1" >/dev/null 2>&1; }
{
  echo "hostname=$(hostname)"
  echo "kernel=$(uname -r)"
  echo "arch=$(uname -m)"
  . /etc/os-release 2>/dev/null && echo "os=${PRETTY_NAME:-unknown}"
  echo "cpu_model=$(grep -m1 '^model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
  echo "cpus=$(nproc)"
  echo "mem_total_kb=$(grep '^MemTotal:' /proc/meminfo | tr -s ' ' | cut -d' ' -f2)"
  echo "ulimit_n_soft=$(ulimit -Sn)"
  echo "ulimit_n_hard=$(ulimit -Hn)"
  echo "nic=${nic}"
  if [ -n "${nic}" ] && [ -r "/sys/class/net/${nic}/mtu" ]; then
    echo "nic_mtu=$(cat "/sys/class/net/${nic}/mtu")"
    echo "nic_speed_mbps=$(cat "/sys/class/net/${nic}/speed" 2>/dev/null || echo)"
    echo "nic_driver=$(basename "$(readlink "/sys/class/net/${nic}/device/driver" 2>/dev/null)" 2>/dev/null)"
  fi
  echo "captured_at=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
} >facts.env 2>/dev/null

for key in net.core.somaxconn net.ipv4.tcp_max_syn_backlog net.ipv4.ip_local_port_range \
  net.ipv4.tcp_tw_reuse net.ipv4.tcp_fin_timeout net.ipv4.tcp_congestion_control \
  net.ipv4.tcp_available_congestion_control net.ipv4.tcp_rmem net.ipv4.tcp_wmem \
  net.core.rmem_max net.core.wmem_max net.core.netdev_max_backlog net.ipv4.tcp_syncookies \
  net.ipv4.tcp_max_tw_buckets net.ipv4.tcp_mtu_probing net.ipv4.tcp_slow_start_after_idle \
  net.core.default_qdisc fs.file-max fs.nr_open; do
  # A value that cannot be read (no such key, no permission) says so and
  # why: never an empty value that could pass for 0.
  if v=$(sysctl -n "${key}" 2>&1); then
    printf '%s = %s\n' "${key}" "$(printf '%s' "${v}" | tr '\t' ' ')"
  else
    printf '%s = unreadable (%s)\n' "${key}" "$(printf '%s' "${v}" | tr '\n\t' '  ' | cut -c1-120)"
  fi
done >sysctl.txt

uname -a >uname.txt
cat /proc/cpuinfo >cpuinfo.txt
cat /proc/meminfo >meminfo.txt
has lscpu && lscpu >lscpu.txt 2>&1
ip -d addr show >ip-addr.txt 2>&1
ip route show table all >ip-route.txt 2>&1
tc -s qdisc show >qdisc.txt 2>&1
if [ -n "${nic}" ]; then
  if has ethtool; then
    { ethtool "${nic}"; echo; ethtool -i "${nic}"; echo; ethtool -k "${nic}"; } >"ethtool.txt" 2>&1
  else
    echo "ethtool not installed (apt-get install ethtool)" >ethtool.txt
  fi
fi
{
  for t in iperf3 wrk oha sar curl go ssh; do
    if has "$t"; then
      case "$t" in
        iperf3) printf 'iperf3: %s\n' "$(iperf3 -v 2>&1 | head -n1)" ;;
        wrk) printf 'wrk: %s\n' "$(wrk -v 2>&1 | head -n1)" ;;
        oha) printf 'oha: %s\n' "$(oha --version 2>&1 | head -n1)" ;;
        sar) printf 'sysstat: %s\n' "$(sar -V 2>&1 | head -n1)" ;;
        curl) printf 'curl: %s\n' "$(curl --version 2>&1 | head -n1)" ;;
        go) printf 'go: %s\n' "$(go version 2>&1)" ;;
        ssh) printf 'ssh: %s\n' "$(ssh -V 2>&1)" ;;
      esac
    else
      printf '%s: not installed\n' "$t"
    fi
  done
  printf 'iproute2: %s\n' "$(ip -V 2>&1)"
} >tools.txt
exit 0
