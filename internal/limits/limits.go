// Package limits holds the constants bash and Go share about processes and
// sizes. Bash reads them from lib/constants.sh, which `csb constants -sh`
// generates (a test checks it is current).
package limits

// FDMargin is the descriptors a process needs beyond one per connection
// (epoll, pipes, stdio, a load generator's per-thread loops): generous on
// purpose. connclient, the Phase 3 plan and lib/loadgen.sh use it.
const FDMargin = 64
