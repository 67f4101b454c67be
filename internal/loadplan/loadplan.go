// Package loadplan splits one HTTP load cell across the run's client hosts:
// each host's share of the connections and its load generator's threads,
// and whether each host's fd limit holds its share. The runners read the
// answer (`csb load-plan`); none of this arithmetic is done in bash.
package loadplan

import (
	"fmt"
	"strconv"
)

// FDMargin is the descriptors a process needs beyond one per connection
// (epoll, pipes, stdio, a load generator's per-thread loops): generous on
// purpose. connclient, the Phase 3 plan and the load plan use it.
const FDMargin = 64

// Refusal codes: why a cell cannot run as asked. Decisions read these.
const (
	CodeSplit   = "split"    // fewer connections than client hosts
	CodeFDLimit = "fd_limit" // a host's hard fd limit is below its share
)

// Host is one client host as the plan sees it.
type Host struct {
	Label  string
	CPUs   int   // CPUs its processes may use (0: unknown, taken as 1)
	FDHard int64 // its hard fd limit (0: unknown, not checked)
}

// Share is one host's part of the cell.
type Share struct {
	Label       string
	Connections int64
	Threads     int
}

// Plan is the answer for one cell.
type Plan struct {
	OK      bool
	Code    string
	Refusal string
	Shares  []Share
}

// Split is total in n near-equal integer shares, the first total % n one
// larger: how every phase divides a count across hosts or processes.
func Split(total int64, n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = total / int64(n)
		if int64(i) < total%int64(n) {
			out[i]++
		}
	}
	return out
}

// Threads is the threads a load generator gets: want (0: one per CPU), never
// more than its connections (wrk refuses more threads than connections),
// at least 1.
func Threads(want, cpus int, conns int64) int {
	if want <= 0 {
		want = max(cpus, 1)
	}
	if int64(want) > conns {
		want = int(conns)
	}
	return max(want, 1)
}

// Compute splits conns connections across hosts, threads each (0: one per
// CPU of the host), and checks every host's fd limit against its share.
func Compute(conns int64, threads int, hosts []Host) Plan {
	p := Plan{OK: true}
	if conns < int64(len(hosts)) {
		p.OK, p.Code = false, CodeSplit
		p.Refusal = fmt.Sprintf("concurrency %d cannot be split across %d client hosts (at least one connection each)", conns, len(hosts))
		return p
	}
	for i, c := range Split(conns, len(hosts)) {
		h := hosts[i]
		p.Shares = append(p.Shares, Share{Label: h.Label, Connections: c, Threads: Threads(threads, h.CPUs, c)})
		if need := c + FDMargin; p.OK && h.FDHard > 0 && need > h.FDHard {
			p.OK, p.Code = false, CodeFDLimit
			p.Refusal = fmt.Sprintf("fd limit: concurrency %d needs %d fds (+%d spare) on %s, whose hard limit is %d; raise it (ulimit -Hn, limits.conf, LimitNOFILE) to run it",
				c, need, FDMargin, h.Label, h.FDHard)
		}
	}
	return p
}

// KV is the plan as the runner reads it: ok, code, refusal, then each
// host's <label>.connections and <label>.threads.
func (p Plan) KV() [][2]string {
	ok := "0"
	if p.OK {
		ok = "1"
	}
	out := [][2]string{{"ok", ok}, {"code", p.Code}, {"refusal", p.Refusal}}
	for _, s := range p.Shares {
		out = append(out, [2]string{s.Label + ".connections", strconv.FormatInt(s.Connections, 10)},
			[2]string{s.Label + ".threads", strconv.Itoa(s.Threads)})
	}
	return out
}
