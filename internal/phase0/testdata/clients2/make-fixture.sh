#!/usr/bin/env bash
# make-fixture.sh: lays two real one-client Phase 0 smoke runs out as one
# N-client run with CLIENTS=2, per the N-client run contract, until the
# runner writes such runs itself. Real iperf3 output throughout; what is
# made up is said in README.md beside this script.
#
# Usage: bash make-fixture.sh RUN_A RUN_B OUT_DIR
set -Eeuo pipefail

main() {
  local a=$1 b=$2 dst=$3 k label
  mkdir -p "${dst}/logs" "${dst}/env/server" "${dst}/monitors/server"
  cp "${a}/run.env" "${dst}/"
  cp "${a}/logs/console.log" "${dst}/logs/"
  cp "${a}/env/server/"{facts.env,sysctl.txt,tools.txt} "${dst}/env/server/"
  cp -r "${a}/monitors/server/counters" "${dst}/monitors/server/"
  cp "${a}/monitors/server/"{mpstat.json,sar.json} "${dst}/monitors/server/"
  for k in 1 2; do
    label="client${k}"
    mkdir -p "${dst}/env/${label}" "${dst}/monitors/${label}" "${dst}/raw/${label}"
    cp "${a}/env/client/"{facts.env,sysctl.txt,tools.txt} "${dst}/env/${label}/"
    cp -r "${a}/monitors/client/counters" "${dst}/monitors/${label}/"
    cp "${a}/monitors/client/"{mpstat.json,sar.json,procs-pidstat.txt} "${dst}/monitors/${label}/"
  done
  local line name start rest rows=()
  while IFS= read -r line; do
    IFS=$'\t' read -r name _ start _ <<<"${line}"
    if [[ "${name}" == name ]]; then
      rows+=("${line}")
      continue
    fi
    cp "${a}/raw/${name}.json" "${dst}/raw/client1/${name}.json"
    cp "${b}/raw/${name}.json" "${dst}/raw/client2/${name}.json"
    # Timing files as `csb start-at` writes them: client1 starts 3 ms
    # after the cell's start, client2 25 ms after it on a clock 250 ms
    # behind; each runs the 3 s iperf3 test plus 20 ms of setup and exit.
    printf '{"schema":"csb.timing/v1","due_ms":%d,"start_ms":%d,"end_ms":%d,"exit":0}\n' \
      "${start}" $((start + 3)) $((start + 3 + 3020)) > "${dst}/raw/client1/${name}.timing.json"
    printf '{"schema":"csb.timing/v1","due_ms":%d,"start_ms":%d,"end_ms":%d,"exit":0}\n' \
      $((start - 250)) $((start + 25 - 250)) $((start + 25 - 250 + 3020)) > "${dst}/raw/client2/${name}.timing.json"
    rest=${line#*streams=}
    rows+=("${line%%streams=*}streams=${rest%%;*};clients=2;client1.port=5201;client2.port=5202;${rest#*;}")
  done < "${a}/cells.tsv"
  printf '%s\n' "${rows[@]}" > "${dst}/cells.tsv"
  cat >> "${dst}/run.env" <<'ENV'
clients=2
client.1.label=client1
client.1.ssh=local
client.1.addrs=198.18.0.2
client.1.nic=csbc0
client.1.cpus=1
client.1.clock_offset_ms=0
client.2.label=client2
client.2.ssh=root@198.18.0.3
client.2.addrs=198.18.0.3
client.2.nic=csbc0
client.2.cpus=1
client.2.clock_offset_ms=-250
server.cpus=0
clock_bound_ms=50
ENV
}

main "$@"
