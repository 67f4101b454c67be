#!/usr/bin/env bash
# make-fixture.sh: lays two real one-client Phase 1 smoke runs (and the
# Phase 0 run before them) out as one N-client run with CLIENTS=2, per the
# N-client run contract (/work/wt/briefs/multi-contract.md), until the
# runner writes such runs itself. Real tool output throughout; what is made
# up is said in README.md beside this script.
#
# Usage: bash make-fixture.sh P0_RUN RUN_A RUN_B OUT_ROOT [PHASE [KEY]]
#   PHASE  01-http-baseline (default) or 02-http-matrix
#   KEY    the cell's connection count: connections (default) or concurrency
# P0_RUN is a summarized Phase 0 run directory (only its summary.json is kept).
set -Eeuo pipefail

main() {
  local p0=$1 a=$2 b=$3 out=$4 phase=${5:-01-http-baseline} key=${6:-connections}
  local dst
  dst="${out}/${phase}/$(basename "${a}")"
  mkdir -p "${out}/00-iperf3/$(basename "${p0}")" "${dst}"
  cp "${p0}/summary.json" "${out}/00-iperf3/$(basename "${p0}")/"
  cp "${a}/run.env" "${a}/cells.tsv" "${dst}/"
  mkdir -p "${dst}/logs" "${dst}/server" "${dst}/raw/headers"
  cp "${a}/logs/console.log" "${dst}/logs/"
  cp "${a}/server/"*.log "${dst}/server/"
  cp "${a}/raw/headers/"*.txt "${dst}/raw/headers/"
  mkdir -p "${dst}/env/server" "${dst}/monitors/server"
  cp "${a}/env/server/"{facts.env,sysctl.txt,tools.txt} "${dst}/env/server/"
  cp -r "${a}/monitors/server/counters" "${dst}/monitors/server/"
  cp "${a}/monitors/server/"{mpstat.json,sar.json,pidstat-csb-server.txt} "${dst}/monitors/server/"
  local k label
  for k in 1 2; do
    label="client${k}"
    mkdir -p "${dst}/env/${label}" "${dst}/monitors/${label}" "${dst}/raw/${label}"
    cp "${a}/env/client/"{facts.env,sysctl.txt,tools.txt} "${dst}/env/${label}/"
    cp -r "${a}/monitors/client/counters" "${dst}/monitors/${label}/"
    cp "${a}/monitors/client/"{mpstat.json,sar.json,procs-pidstat.txt} "${a}/monitors/client/pidstat-loadgen-"*.txt "${dst}/monitors/${label}/"
  done
  # The cells' wrk output: client1 is run A's, client2 run B's.
  local name start end dur_us
  while IFS=$'\t' read -r name _ start end _; do
    [[ "${name}" == name ]] && continue
    cp "${a}/raw/${name}.txt" "${dst}/raw/client1/${name}.txt"
    cp "${b}/raw/${name}.txt" "${dst}/raw/client2/${name}.txt"
    # Timing files as `csb start-at` writes them: client1 started at the
    # cell's start; client2 40 ms later, on a clock 250 ms ahead.
    for k in 1 2; do
      dur_us=$(sed -n 's/^CSB_WRK_JSON .*"duration_us":\([0-9]*\).*/\1/p' "${dst}/raw/client${k}/${name}.txt")
      local s=$((start + (k - 1) * 290))
      printf '{"schema":"csb.timing/v1","due_ms":%d,"start_ms":%d,"end_ms":%d,"exit":0}\n' \
        $((s - 2)) "${s}" $((s + dur_us / 1000)) > "${dst}/raw/client${k}/${name}.timing.json"
    done
    : "${end}"
  done < "${a}/cells.tsv"
  # The cell rows: each client ran wrk -c N, so the cell's total is 2N;
  # clients and per-client connections added.
  local line params c out_rows=()
  while IFS= read -r line; do
    if [[ "${line}" =~ ^(.*)${key}=([0-9]+)\;(.*)$ ]]; then
      c=${BASH_REMATCH[2]}
      params="${key}=$((c * 2));clients=2;client1.connections=${c};client2.connections=${c};"
      line="${BASH_REMATCH[1]}${params}${BASH_REMATCH[3]}"
    fi
    out_rows+=("${line}")
  done < "${a}/cells.tsv"
  printf '%s\n' "${out_rows[@]}" > "${dst}/cells.tsv"
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
client.2.clock_offset_ms=250
server.cpus=0
clock_bound_ms=50
ENV
}

main "$@"
