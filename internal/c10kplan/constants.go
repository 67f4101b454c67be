// Package c10kplan plans a Phase 3 scenario: from both hosts' facts (fd
// limits, sysctls, memory), the scenario and the client's sockets toward the
// server, how many server processes share the port, which client source
// addresses carry how many connections, and what to add; or why it cannot
// work, as a machine code, a sentence for people and the setting to change.
// lib/c10k.sh carries the plan out and never recomputes it (`csb c10k-plan`);
// internal/phase3 reads the plan document it leaves in the run directory.
package c10kplan

import "csbench/internal/loadplan"

// The constants of Phase 3, defined here only; bash reads them from
// `csb constants`.
const (
	// RampFactor and RampSlackS bound a scenario's ramp (Plan.RampBoundS,
	// connclient's -ramp-max and the runner's wait): RampFactor times
	// conns/connect rate, plus RampSlackS. The ramp paces itself down to
	// what the server accepts, so it may take far longer than planned: a
	// tenth of the rate asked still reaches its count.
	RampFactor = 10
	RampSlackS = 30
	// ConnectTimeoutS bounds each attempt's connect, TLS handshake and
	// first response (connclient's -connect-timeout): at C1M the server's
	// workers, sharing both CPUs with the client processes, take
	// connections in seconds late with nothing dropped, and an attempt
	// given up after 5 s was made again for nothing (2,527 at 1m).
	ConnectTimeoutS = 10
	// FDMargin is loadplan.FDMargin: the descriptors a process needs beyond one per
	// connection (connclient checks the same itself).
	FDMargin = loadplan.FDMargin
	// FDFloor: a hard fd limit at or below FDMargin + FDFloor cannot run
	// any scenario.
	FDFloor = 100
	// PortMargin is the ports of a source address left unused, so a stray
	// connection never fails.
	PortMargin = 256
	// ReusePortSlackPct: a server process is planned for this percentage of
	// its fd budget, because SO_REUSEPORT spreads connections by a hash of
	// the 4-tuple, not evenly.
	ReusePortSlackPct = 90
	// MemHeadroomPct: the share of MemAvailable a scenario may plan to use.
	MemHeadroomPct = 90
	// BacklogWindowMs: the listen queues must hold this many milliseconds of
	// connects at the paced rate.
	BacklogWindowMs = 100
	// MaxAddedSources: LAB=netns and local try up to this many addresses
	// after CLIENT_IP: C1M needs 51 client processes by the fd limit
	// (20000) and 73 by the ports (half of 28,232 each), one per address.
	MaxAddedSources = 100
	// FastPortsPct: a source carrying more than this percentage of the
	// even half of its port range makes the plan ask for the wide range
	// (WidePortLo-WidePortHi) where the runner may set it.
	FastPortsPct = 75
	WidePortLo   = 1024
	WidePortHi   = 65535
	// SchemaVersion of the plan document (major).
	SchemaVersion = 1
)

// KBPerConn estimates the memory one connection costs, in KiB, before a
// step of the run has been measured (its first step): the server's user
// space by the kind of server (the reference server measured 19.3 at 100k,
// nginx about 1-3), the client's by tool (connclient 2.0, wrk), and the
// kernel's for both ends (TCP slab 4.6 measured, and the socket, file and
// epoll objects beside it). From the second step on the plan reads the
// cost the step before it measured (Cost) instead.
var KBPerConn = map[string]int64{"server_csb": 24, "server_nginx": 4, "server_other": 24,
	"client_idle": 4, "client_lowrate": 4, "client_active": 8, "kernel": 8}

// Exit codes of a refused run before anything starts: a step the host's
// memory or files cannot hold is a setting to lower (CONNS: 2, as bad
// input); the others name a limit or sysctl to raise (6).
const (
	ExitTooLarge = 2
	ExitRefused  = 6
)
