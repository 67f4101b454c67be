# shellcheck shell=bash
# lib/init.sh: the one library every runner and lab script sources.
#
#   source "$(dirname "${BASH_SOURCE[0]}")/../lib/init.sh"
#
# It turns on strict mode and loads the modules below, exit.sh first.
# Nothing here starts a process or sends a packet; runners decide that.
#
#   exit.sh      the one registry of exit steps (csb_exit_add), INT/TERM/HUP,
#                the ERR trap (the failing command and its call chain, once)
#   log.sh       timestamped logging (stderr + the run's logs/console.log), die
#   config.sh    defaults < lab.env < environment < flags, and validation
#   remote.sh    run a command on the server or client host, quoted once
#   lock.sh      one run per lab at a time; private directories
#   lab.sh       the three labs (local, netns, ssh) and entering the netns lab
#   clients.sh   N client hosts: settings, ssh, preflight, clocks, CPU pinning,
#                one cell started on every client at one due time
#   rundir.sh    run directories, cells.tsv, run.env, the run's exit step
#   server.sh    build, deploy, start, wait for, stop the fixed-payload server
#   tls.sh       SCHEME=https: the run's certificate and key, the TLS flags
#   monitor.sh   sar, mpstat, pidstat, nstat and sockstat on both hosts
#   preflight.sh tools, reachability and the route guard
#   envcap.sh    capture both hosts' environment into the run directory
#   loadgen.sh   HTTP load generators (wrk, oha), payload checks, the fd limit
#   c10k.sh      Phase 3: scenarios split across processes and source addresses
#   sysctl.sh    Phase 4: sysctls a scenario changes, recorded and put back

set -Eeuo pipefail
shopt -s inherit_errexit 2>/dev/null || true

if [[ -n "${CSB_LIB_LOADED:-}" ]]; then
  return 0
fi
CSB_LIB_LOADED=1

CSB_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
CSB_LIB="${CSB_ROOT}/lib"

# shellcheck source=lib/exit.sh
source "${CSB_LIB}/exit.sh"
# shellcheck source=lib/log.sh
source "${CSB_LIB}/log.sh"
# shellcheck source=lib/config.sh
source "${CSB_LIB}/config.sh"
# shellcheck source=lib/remote.sh
source "${CSB_LIB}/remote.sh"
# shellcheck source=lib/lock.sh
source "${CSB_LIB}/lock.sh"
# shellcheck source=lib/lab.sh
source "${CSB_LIB}/lab.sh"
# shellcheck source=lib/clients.sh
source "${CSB_LIB}/clients.sh"
# shellcheck source=lib/rundir.sh
source "${CSB_LIB}/rundir.sh"
# shellcheck source=lib/server.sh
source "${CSB_LIB}/server.sh"
# shellcheck source=lib/tls.sh
source "${CSB_LIB}/tls.sh"
# shellcheck source=lib/monitor.sh
source "${CSB_LIB}/monitor.sh"
# shellcheck source=lib/preflight.sh
source "${CSB_LIB}/preflight.sh"
# shellcheck source=lib/envcap.sh
source "${CSB_LIB}/envcap.sh"
# shellcheck source=lib/loadgen.sh
source "${CSB_LIB}/loadgen.sh"
# shellcheck source=lib/c10k.sh
source "${CSB_LIB}/c10k.sh"
# shellcheck source=lib/sysctl.sh
source "${CSB_LIB}/sysctl.sh"
