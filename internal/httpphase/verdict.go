package httpphase

import (
	"fmt"
	"math"
	"strings"

	"csbench/internal/clienthosts"
	"csbench/internal/decimal"
	"csbench/internal/summary"
)

// AtLink is the share of the baseline at which a cell counts as bound by
// the network.
const AtLink = 0.95

// CPUSaturated is the busy share (in % of what is available) at which a
// CPU counts as the bound.
const CPUSaturated = 90.0

// The verdicts a cell can get.
const (
	BoundNetwork = "network-bound"
	BoundServer  = "server-CPU-bound"
	BoundClient  = "client-CPU-bound"
	BoundBoth    = "server- and client-CPU-bound"
	BoundShared  = "CPU-bound (server and client share the CPUs)"
	BoundUnclear = "unclear"
	BoundNone    = "not measured"
)

// WrkLatencyNote says what wrk's latency figures are.
const WrkLatencyNote = "wrk's latencies (its text and the hook's alike) include wrk's own coordinated-omission correction (`stats_correct`, applied before `done()`): every response slower than runtime / (requests / connections) adds synthetic samples, so wrk's mean and tail overstate what the requests themselves took."

// H2loadNote says what h2load's latency figures are.
const H2loadNote = "HTTP/2 cells are h2load's (`raw/<client>/<cell>.h2load.txt`, its text): its latencies come from its `--log-file` (`.h2load.log` beside it; in the committed references its tally, `.h2load.tally.json`: `csb h2load-tally`), one line per request with its status and time from sending to the end of the response, so percentiles are of every request and several clients' merge exactly; h2load is a closed loop too (a slow response delays the next request of its stream), without wrk's correction. Its text is cross-checked against the log."

// Rules states the verdict rules, for the reports.
func Rules(s *summary.Summary) string {
	shared := ""
	if s.SharedCPUs() {
		shared = fmt.Sprintf(" In this lab (%s) server and client are one machine: when its CPUs are ≥ %.0f%% busy (mpstat) and neither process alone is saturated, the verdict is **%s**, as it is: the two compete for the same cores.", s.Lab, CPUSaturated, BoundShared)
	}
	if s.Clients != nil {
		shared += fmt.Sprintf(" With %d client hosts each client is judged on its own (a sum over clients bounds nothing): **%s** when one client's load generator uses ≥ %.0f%% of what it can (wrk: its threads, at most the CPUs that client had) or, on a host of its own, that host is ≥ %.0f%% busy; the evidence names the client (\"client2 is CPU-bound\").",
			s.Clients.N, BoundClient, CPUSaturated, CPUSaturated)
	}
	return fmt.Sprintf("Verdict rules, in order: **%s** when throughput (HTTP bytes incl. headers) is ≥ %.0f%% of the basis (the Phase 0 baseline, else the TCP ceiling of LINK_RATE); **%s** when the server under test (its processes, pidstat) uses ≥ %.0f%% of the server's CPUs, or — on separate hosts — the server host is ≥ %.0f%% busy (mpstat); **%s** likewise for the load generator (wrk can use at most one CPU per thread) or the client host; otherwise **%s**.%s",
		BoundNetwork, AtLink*100, BoundServer, CPUSaturated, CPUSaturated, BoundClient, BoundUnclear, shared)
}

// ge is a >= b, false when a is NaN (not measured).
func ge(a, b float64) bool { return !math.IsNaN(a) && a >= b }

// Verdict names what bound a cell, with the evidence beside it.
func Verdict(s *summary.Summary, c *summary.Cell, basis Basis) *summary.Verdict {
	f := FiguresOf(c)
	if c.Status != "ok" || f.ThroughputMbps == nil {
		ev := c.Status
		if c.Error != nil {
			ev += ": " + *c.Error
		}
		return &summary.Verdict{Code: BoundNone, Bound: BoundNone, Evidence: ev}
	}
	srvCPUs := summary.Val(s.Hosts["server"].CPUs)
	if s.Clients != nil {
		if n := clienthosts.CPUCount(s.Clients.ServerCPUs); n > 0 {
			srvCPUs = float64(n) // pinned: its cpuset is what it had
		}
	}
	if s.Pin != nil {
		// Pinned hosts (CPU_PIN): each had its CPU set, not the machine.
		if n := clienthosts.CPUCount(s.Pin.Server); n > 0 {
			srvCPUs = float64(n)
		}
	}
	tool := c.Params["loadgen"]
	shared := s.SharedCPUs()

	var ev []string
	srvCPU, cliCPU := f.CPU["server"].Pct, f.CPU["client"].Pct
	srvProc, cliProc := f.Procs["server"].CPUPct, f.Procs["client"].CPUPct
	tp := decimal.Format(f.ThroughputMbps, 1) + " Mbit/s"
	if u := f.LinkUtilization; u != nil {
		ev = append(ev, fmt.Sprintf("%s = %.1f%% of %s", tp, *u*100, basis.What))
	} else {
		ev = append(ev, tp+" (no link to compare with)")
	}
	noCPU := srvCPU == nil && cliCPU == nil && srvProc == nil && cliProc == nil
	switch {
	case noCPU:
		ev = append(ev, "CPU not measured (no mpstat or pidstat data for the cell)")
	case shared:
		ev = append(ev, fmt.Sprintf("CPUs %s%% busy (%s shared by server and client)", decimal.Format(srvCPU, 0), decimal.Format(s.Hosts["server"].CPUs, 0)))
	case len(c.Clients) > 1:
		ev = append(ev, fmt.Sprintf("server host %s%% busy of %s CPUs (each client's host: per client)", decimal.Format(srvCPU, 0), decimal.Format(summary.F(srvCPUs), 0)))
	case s.Pin != nil:
		ev = append(ev, fmt.Sprintf("server host %s%% busy of its CPU(s) %s, client host %s%% of its CPU(s) %s (pinned)",
			decimal.Format(srvCPU, 0), s.Pin.Server, decimal.Format(cliCPU, 0), s.Pin.Client))
	default:
		ev = append(ev, fmt.Sprintf("server host %s%% busy of %s CPUs, client host %s%% of %s",
			decimal.Format(srvCPU, 0), decimal.Format(s.Hosts["server"].CPUs, 0), decimal.Format(cliCPU, 0), decimal.Format(s.Hosts["client"].CPUs, 0)))
	}
	limit := ""
	if threadBound(tool) {
		limit = fmt.Sprintf(", %s thread(s)", c.Params["threads"])
	}
	// Each client host is judged on its own (a sum over hosts bounds
	// nothing); with one, its verdict is the cell's.
	boundClients := ClientVerdicts(s, c)
	if len(c.Clients) > 1 {
		limit = fmt.Sprintf(" summed over %d clients", len(c.Clients))
	}
	if !noCPU {
		ev = append(ev, fmt.Sprintf("the server under test %s%%, %s %s%% of one CPU%s", decimal.Format(srvProc, 0), tool, decimal.Format(cliProc, 0), limit))
	}
	for _, cc := range c.Clients {
		if cc.CPUBound && len(c.Clients) > 1 {
			ev = append(ev, fmt.Sprintf("%s is CPU-bound (%s)", cc.Label, cc.CPUBoundEvidence))
		}
	}
	if shared {
		// What the host was busy with beyond the two processes: the
		// kernel's network work outside their context, or other load.
		other := summary.Val(srvCPU)*srvCPUs - summary.Val(srvProc) - summary.Val(cliProc)
		if ge(other, 20) {
			ev = append(ev, fmt.Sprintf("%.0f%% of one CPU busy outside both (softirq, other load)", other))
		}
	}
	if rt := f.Counters["server"].RetransSegs; rt != nil {
		ev = append(ev, fmt.Sprintf("%s retransmits (server)", decimal.Format(rt, 0)))
	}
	if e := f.ErrorsTotal; e != nil && *e > 0 {
		ev = append(ev, fmt.Sprintf("%s errors", decimal.Format(e, 0)))
	}
	evidence := strings.Join(ev, "; ")

	if ge(summary.Val(f.LinkUtilization), AtLink) {
		return &summary.Verdict{Code: BoundNetwork, Bound: BoundNetwork, Evidence: evidence}
	}
	srvSat := ge(summary.Val(srvProc), CPUSaturated*srvCPUs)
	if !shared {
		srvSat = srvSat || ge(summary.Val(srvCPU), CPUSaturated)
	}
	cliSat := len(boundClients) > 0
	bound := BoundUnclear
	switch {
	case srvSat && cliSat:
		bound = BoundBoth
	case srvSat:
		bound = BoundServer
	case cliSat:
		bound = BoundClient
	case shared && ge(summary.Val(srvCPU), CPUSaturated):
		bound = BoundShared
	case noCPU:
		evidence += "; below the basis, and without CPU figures nothing more can be said"
	default:
		evidence += "; below the basis with no CPU saturated: look at the errors, the latency, the retransmits and whether enough connections were open to fill the path"
	}
	return &summary.Verdict{Code: bound, Bound: bound, Evidence: evidence}
}
