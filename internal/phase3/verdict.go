package phase3

import (
	"fmt"
	"math"
	"strings"

	"csbench/internal/c10kplan"
	"csbench/internal/decimal"
	"csbench/internal/kv"
	"csbench/internal/summary"
)

// RateTolerance is how far below its target a low-rate scenario's achieved
// rate may be and still count as delivered (the 2 %).
const RateTolerance = 0.02

// QueueingFactor: a p99 this many times the service-time p99 is queueing.
const QueueingFactor = 10

// Wall names.
const (
	WallNone        = "none: every connection held"
	WallPorts       = "client ephemeral ports / TIME_WAIT"
	WallFD          = "fd limit"
	WallBacklog     = "listen backlog"
	WallMemory      = "memory"
	WallTCPMem      = "tcp_mem: the kernel's TCP memory"
	WallQueueing    = "queueing: p99 ≫ service time"
	WallShortRamp   = "short ramp"
	WallSlowConnect = "slow connects"
	// WallIdleClose: the server under test closed idle connections before
	// the hold ended (its keep-alive timeout), which is not a drop of the lab.
	WallIdleClose = "the server under test closes idle connections"
)

// ShortRampShare is how far below its target a connect ramp may fall
// before it is a wall; SlowConnectMs the connect p99 that is one.
const (
	ShortRampShare = 0.10
	SlowConnectMs  = 1000.0
)

// Ramp cause codes (summary.json details.ramp.cause), in the order they
// are named: the first that holds is the one it was.
const (
	RampBacklog = "listen_overflows"
	RampSynRetr = "syn_retransmits"
	// RampSynAckRetr: the client sent no SYN again, the server its SYN-ACK:
	// the handshake's answers were late (a slow or queued path), not lost
	// SYNs.
	RampSynAckRetr = "synack_retransmits"
	RampClientCPU  = "client_cpu"
	RampUnknown    = "unknown"
)

// ClientCPUBusy is the client CPU (% of its host, or % of one core per
// client process) from which a short ramp counts as the client's doing.
const ClientCPUBusy = 90.0

// rampShortfall says whether a connect ramp fell short of its target
// (code short_ramp) or its connects were slow (slow_connects), as walls
// for the bound, and what explains it: the cause code and its sentence.
// code is "" when neither.
func rampShortfall(f *Figures) (walls []string, code, cause, why string) {
	target, got := summary.Val(f.ConnectRateTargetPerS), summary.Val(f.ConnectRateAchievedPerS)
	p99 := summary.Val(f.ConnectLatencyP99Ms)
	if !math.IsNaN(target) && !math.IsNaN(got) && target > 0 && got < target*(1-ShortRampShare) {
		walls = append(walls, fmt.Sprintf("%s: %.0f of %.0f connects/s (%.0f%%)", WallShortRamp, got, target, got/target*100))
		code = "short_ramp"
	}
	if !math.IsNaN(p99) && p99 > SlowConnectMs {
		walls = append(walls, fmt.Sprintf("%s: connect p99 %.0f ms", WallSlowConnect, p99))
		if code == "" {
			code = "slow_connects"
		}
	}
	if code == "" {
		return nil, "", "", ""
	}
	srv, cli := f.host("server"), f.host("client")
	lo, syn := summary.Val(srv.Counters.ListenOverflows), summary.Val(cli.Counters.SynRetrans)
	cpuHost, cpuProc, procs := summary.Val(cli.PeakCPU.Pct), summary.Val(cli.PeakProcs.CPUPeakPct), math.Max(summary.Val(f.ClientProcs), 1)
	cause = RampUnknown
	switch {
	case lo > 0:
		cause = RampBacklog
	case syn > 0:
		cause = RampSynRetr
	case summary.Val(srv.Counters.SynRetrans) > 0:
		cause = RampSynAckRetr
	case cpuHost >= ClientCPUBusy || cpuProc >= ClientCPUBusy*procs:
		cause = RampClientCPU
	}
	why = map[string]string{
		RampBacklog:    "the server's listen queue overflowed",
		RampSynRetr:    "SYNs were retransmitted",
		RampSynAckRetr: "the server retransmitted SYN-ACKs: the handshakes' last ACK came late or was lost",
		RampClientCPU:  "the client's CPU was busy",
		RampUnknown:    "neither the client's CPU, SYN retransmits nor listen overflows explain it",
	}[cause]
	return walls, code, cause, why
}

// rampWall names a connect ramp that fell short of its target or connects
// that were slow, with its evidence and cause, or returns nil. It also
// records details.ramp {wall, cause} for decisions.
func rampWall(c *summary.Cell, f *Figures, split, rest string) *summary.Verdict {
	walls, code, cause, why := rampShortfall(f)
	if code == "" {
		return nil
	}
	srv, cli := f.host("server"), f.host("client")
	procs := math.Max(summary.Val(f.ClientProcs), 1)
	c.Details["ramp"] = map[string]string{"wall": code, "cause": cause}
	ev := fmt.Sprintf("%s: client CPU at its busiest second %s%% of the host, connection clients %s%% of one core (%.0f process(es)); client SYN retransmits %s; server ListenOverflows %s; connect p50 / p99 %s / %s ms",
		why, decimal.Format(cli.PeakCPU.Pct, 0), decimal.Format(cli.PeakProcs.CPUPeakPct, 0), procs,
		decimal.Format(cli.Counters.SynRetrans, 0), decimal.Format(srv.Counters.ListenOverflows, 0),
		decimal.Format(f.ConnectLatencyP50Ms, 1), decimal.Format(f.ConnectLatencyP99Ms, 1))
	if cause == RampSynAckRetr {
		ev += fmt.Sprintf("; server SYN-ACK retransmits %s", decimal.Format(srv.Counters.SynRetrans, 0))
	}
	if setup := summary.Val(f.SetupS); !math.IsNaN(setup) && setup < 2 {
		ev += fmt.Sprintf(" (the ramp took %.2f s: one-second monitors see only part of a burst that short)", setup)
	}
	if rest != "" {
		ev += "; " + rest
	}
	bound := strings.Join(walls, "; ") + " (" + why + ")"
	if split != "" {
		// The limit that split the scenario is a wall it met too.
		bound += "; " + split
	}
	return &summary.Verdict{Bound: bound, Evidence: ev}
}

// verdict names the wall a scenario met (or the nearest limit when it met
// none), with the evidence; plan is the cell's plan (nil: none).
func verdict(s *summary.Summary, c *summary.Cell, plan *c10kplan.Plan) *summary.Verdict {
	f := figuresOf(c)
	errText := ""
	if c.Error != nil {
		errText = *c.Error
	}
	switch c.Status {
	case "refused":
		code := ""
		if plan != nil {
			code = plan.Code()
		}
		return &summary.Verdict{Bound: refusalWall(code) + " (refused before it started)", Evidence: errText}
	case "failed":
		if f.ConnectionsEstablished == nil && f.RPSAchieved == nil {
			return &summary.Verdict{Bound: "none (failed)", Evidence: errText}
		}
	}
	errs, _ := c.Details["errors"].(map[string]float64)
	target, est := summary.Val(f.ConnectionsTarget), summary.Val(f.ConnectionsEstablished)
	if n := errs["eaddrnotavail"] + errs["eaddrinuse"]; n > 0 {
		return &summary.Verdict{Bound: WallPorts, Evidence: fmt.Sprintf("%.0f connects failed with EADDRNOTAVAIL/EADDRINUSE (no free local port toward the server); %s", n, portsEvidence(plan))}
	}
	if n := errs["emfile"] + errs["enfile"]; n > 0 {
		return &summary.Verdict{Bound: WallFD, Evidence: fmt.Sprintf("%.0f connects failed with EMFILE/ENFILE; %s", n, fdEvidence(plan, f))}
	}
	if !math.IsNaN(target) && !math.IsNaN(est) && est < target {
		ev := fmt.Sprintf("%.0f of %.0f connections established; errors: %s", est, target, causes(errs))
		if lo := summary.Val(f.host("server").Counters.ListenOverflows); lo > 0 {
			ev += fmt.Sprintf("; the server's listen queue overflowed %.0f times (somaxconn %s)", lo, numText(plan, func(p *c10kplan.Plan) c10kplan.Num { return p.Facts.Server.Somaxconn }))
			if r := rampOf(c); r != nil {
				ev += "; the ramp: " + retryText(f, r)
			}
			return &summary.Verdict{Bound: WallBacklog, Evidence: ev}
		}
		// The kernel under TCP memory pressure trims buffers and refuses
		// allocations past tcp_mem's max: nstat and sockstat say so.
		mp := 0.0
		for _, h := range []string{"server", "client"} {
			if v := summary.Val(f.host(h).Counters.TCPMemoryPressures); !math.IsNaN(v) {
				mp += v
			}
		}
		if mp > 0 {
			return &summary.Verdict{Bound: WallTCPMem, Evidence: fmt.Sprintf("%s; TCPMemoryPressures %.0f; sockstat TCP mem %s → %s pages (tcp_mem max %s)", ev, mp,
				decimal.Format(f.TCPMemPagesBefore, 0), decimal.Format(f.TCPMemPagesHeld, 0),
				numText(plan, func(p *c10kplan.Plan) c10kplan.Num { return p.Facts.Server.TCPMemMax }))}
		}
		if r := rampOf(c); r != nil {
			return lostAfterRetries(c, f, r, ev)
		}
		v := &summary.Verdict{Bound: "connections lost: " + topCause(errs), Evidence: ev}
		if k := kind(c); k == "idle" || k == "lowrate" {
			// A connect that timed out is often a ramp that could not keep
			// up: its evidence (CPU, SYN retransmits, connect times) too.
			if r := rampWall(c, f, "", ""); r != nil {
				v.Evidence += "; the ramp: " + r.Bound + ": " + r.Evidence
			}
		}
		return v
	}
	split := splitText(plan, f)
	cost := costText(f)
	// The ramp's retries and first attempts, when connclient recorded them
	// (none in runs made before it paced its ramp).
	retries, backoff := "", ""
	if r := rampOf(c); r != nil {
		retries = "; the ramp: " + retryText(f, r)
		if backoff = backoffText(f, r); backoff != "" {
			retries += backoffWhy(c, f)
		}
	}
	if v := idleClosed(c, f, est, target, cost+holdText(c, f)+retries); v != nil {
		// Every connection was established and the server then closed
		// them: that bounds the scenario whatever its ramp was (a ramp that
		// fell short is said in the evidence).
		if r := rampWall(c, f, "", ""); r != nil && backoff == "" {
			v.Evidence += "; the ramp: " + r.Bound + ": " + r.Evidence
		}
		return v
	}
	if k := kind(c); (k == "idle" || k == "lowrate") && backoff == "" {
		// A ramp that backed off or retried and reached its count is not
		// a wall: the server accepted every connection, more slowly than
		// asked (said in the bound and the evidence below).
		if v := rampWall(c, f, split, cost+holdText(c, f)+retries); v != nil {
			return v
		}
	}
	switch kind(c) {
	case "idle":
		ev := idleEvidence(c, f, est, target, cost+holdText(c, f)+retries)
		if split != "" {
			return &summary.Verdict{Bound: split + backoff, Evidence: ev + "; " + headroom(plan, f)}
		}
		return &summary.Verdict{Bound: WallNone + backoff, Evidence: ev + "; nearest limit: " + headroom(plan, f)}
	case "lowrate":
		ratio := summary.Val(f.RPSAchievedRatio)
		ev := fmt.Sprintf("%s of %s req/s (%s); p99 %s ms from the due time, %s ms service time; %s",
			decimal.Format(f.RPSAchieved, 1), decimal.Format(f.RPSTarget, 0), decimal.Pct(f.RPSAchievedRatio),
			decimal.Format(f.LatencyP99Ms, 2), decimal.Format(f.ServiceLatencyP99Ms, 2), cost) + retries
		switch {
		case math.IsNaN(ratio):
			return &summary.Verdict{Bound: "none (no rate measured)", Evidence: ev}
		case ratio < 1-RateTolerance:
			return &summary.Verdict{Bound: "offered rate not delivered" + cpuBound(s, f), Evidence: ev}
		case summary.Val(f.LatencyP99Ms) > QueueingFactor*summary.Val(f.ServiceLatencyP99Ms):
			return &summary.Verdict{Bound: "client schedule lag", Evidence: ev + fmt.Sprintf("; requests were sent late (sender lag p99 %s ms): the client, not the server, fell behind", decimal.Format(f.SenderLagP99Ms, 2))}
		}
		b := "none: rate delivered, p99 ≈ service time"
		if split != "" {
			b = split + "; then " + b
		}
		return &summary.Verdict{Bound: b + backoff, Evidence: ev}
	case "active":
		svc := serviceP99(s)
		loop, law, tool := decimal.Format(f.ConnectionsEstablished, 0)+" connections", "connections / rate", "wrk"
		if st := c.Params["streams"]; st != "" {
			loop, law, tool = loop+" × "+st+" streams", "connections × streams / rate", "h2load"
		}
		ev := fmt.Sprintf("a closed loop of %s at %s req/s: each request waits %s ms on average by Little's law (%s), %s measured p50 %s ms and p99 %s ms",
			loop, decimal.Format(f.RPSAchieved, 0), decimal.Format(f.LittlesLawLatencyMs, 0), law, tool,
			decimal.Format(f.LatencyP50Ms, 1), decimal.Format(f.LatencyP99Ms, 1))
		if v := f.ServerRSSPerStreamKB; v != nil {
			ev += fmt.Sprintf("; server RSS %s KiB per stream in flight", decimal.Format(v, 2))
		}
		if !math.IsNaN(svc) {
			ev += fmt.Sprintf(" against a service time of %.2f ms (p99 of the low-rate scenarios)", svc)
		}
		ev += "; " + cost
		return &summary.Verdict{Bound: WallQueueing + cpuBound(s, f), Evidence: ev}
	}
	return &summary.Verdict{Bound: "unknown scenario", Evidence: c.Params["scenario"]}
}

// cpuBound says what saturated when the throughput plateaued.
func cpuBound(s *summary.Summary, f *Figures) string {
	host := summary.Val(f.host("server").CPU.Pct)
	if host >= 90 {
		if s.SharedCPUs() {
			return " behind CPU (both ends share this machine's cores)"
		}
		return " behind the server's CPU"
	}
	if summary.Val(f.host("client").CPU.Pct) >= 90 {
		return " behind the client's CPU"
	}
	return ""
}

// serviceP99 is the largest service-time p99 of the run's low-rate cells.
func serviceP99(s *summary.Summary) float64 {
	best := math.NaN()
	for _, c := range s.Cells {
		if kind(&c) == "lowrate" {
			if v := summary.Val(figuresOf(&c).ServiceLatencyP99Ms); !math.IsNaN(v) && (math.IsNaN(best) || v > best) {
				best = v
			}
		}
	}
	return best
}

// refusalWall names the wall of a plan's refusal code ("" when the plan
// has none: a run made before the plan document carried codes).
func refusalWall(code string) string {
	switch code {
	case c10kplan.CodeEphemeralPorts, c10kplan.CodeTimeWait:
		return WallPorts
	case c10kplan.CodeFDLimit:
		return WallFD
	case c10kplan.CodeListenBacklog:
		return WallBacklog
	case c10kplan.CodeMemory, c10kplan.CodeFileMax:
		return WallMemory
	case c10kplan.CodeTCPMem:
		return WallTCPMem
	}
	return "refused"
}

// splitText names the limit that split the scenario across processes, or
// "" when one server and one client process held it.
//
// With several client hosts each runs at least one process of its own
// share: only processes beyond one per host are a split, and the fd
// limit split them when it did on one host (the plan's per-host count).
func splitText(plan *c10kplan.Plan, f *Figures) string {
	sp, cp := summary.Val(f.ServerProcs), summary.Val(f.ClientProcs)
	cliFD, hosts := int64(0), 1
	if plan != nil {
		cliFD = plan.ClientProcsByFD
	}
	if multiHost(plan) {
		hosts, cliFD = len(plan.Hosts), 0
		for _, h := range plan.Hosts {
			cliFD = max(cliFD, h.ProcsByFD)
		}
	}
	var fd []string
	if sp > 1 {
		fd = append(fd, fmt.Sprintf("%.0f server processes (SO_REUSEPORT)", sp))
	}
	byPorts := ""
	if cp > float64(hosts) {
		if cliFD > 1 {
			fd = append(fd, fmt.Sprintf("%.0f client processes, one per source address", cp))
		} else {
			byPorts = fmt.Sprintf("ports per source address (%s) → %.0f client processes, one per source address", portsPerSource(plan), cp)
		}
	}
	var walls []string
	if len(fd) > 0 {
		walls = append(walls, fmt.Sprintf("%s per process (%s) → split across %s", WallFD, fdLimits(plan), strings.Join(fd, " and ")))
	}
	if byPorts != "" {
		walls = append(walls, byPorts)
	}
	return strings.Join(walls, "; ")
}

func fdLimits(plan *c10kplan.Plan) string {
	srv := numText(plan, func(p *c10kplan.Plan) c10kplan.Num { return p.ServerFDHard })
	cli := numText(plan, func(p *c10kplan.Plan) c10kplan.Num { return p.ClientFDHard })
	if srv == cli {
		return srv
	}
	return "server " + srv + ", client " + cli
}

func portsPerSource(plan *c10kplan.Plan) string {
	return numText(plan, func(p *c10kplan.Plan) c10kplan.Num { return p.PortsPerSource })
}

func fdEvidence(plan *c10kplan.Plan, f *Figures) string {
	return fmt.Sprintf("hard fd limit %s; %s server and %s client processes", fdLimits(plan), decimal.Format(f.ServerProcs, 0), decimal.Format(f.ClientProcs, 0))
}

// costText is what holding the connections cost the server.
func costText(f *Figures) string {
	return fmt.Sprintf("server RSS %s → %s MB = %s KiB per connection, server processes' CPU %s%% of one core",
		decimal.Format(f.ServerRSSBaselineMB, 1), decimal.Format(f.ServerRSSHeldMB, 1), decimal.Format(f.ServerRSSPerConnKB, 1),
		decimal.Format(f.host("server").Procs.CPUPct, 1))
}

// headroom compares the connections with the limits that were not met.
func headroom(plan *c10kplan.Plan, f *Figures) string {
	conns := summary.Val(f.ConnectionsTarget)
	sp := math.Max(summary.Val(f.ServerProcs), 1)
	cp := math.Max(summary.Val(f.ClientProcs), 1)
	var parts []string
	if plan != nil && !math.IsNaN(conns) {
		parts = append(parts, fmt.Sprintf("fds: about %.0f connections per server process of at most %d (hard limit %s less %d, %d%% for SO_REUSEPORT's uneven hash)", math.Ceil(conns/sp), plan.ServerConnsPerProc, plan.ServerFDHard, c10kplan.FDMargin, c10kplan.ReusePortSlackPct))
	}
	if plan != nil && plan.PortsPerSource.Known && !math.IsNaN(conns) {
		parts = append(parts, fmt.Sprintf("ports: %.0f connections per source address of %d (ip_local_port_range %s)", math.Ceil(conns/cp), plan.PortsPerSource.V, portRange(plan)))
	}
	if len(parts) == 0 {
		return "no plan recorded"
	}
	return strings.Join(parts, "; ")
}

// portsEvidence is the state of the source addresses when the scenario began.
func portsEvidence(plan *c10kplan.Plan) string {
	ips, tw := sourceTimeWait(plan)
	var parts []string
	for _, ip := range ips {
		parts = append(parts, fmt.Sprintf("%s had %d in TIME_WAIT", ip, tw[ip]))
	}
	ev := fmt.Sprintf("%s ports per source address (ip_local_port_range %s), tcp_tw_reuse=%s", portsPerSource(plan), portRange(plan),
		numText(plan, func(p *c10kplan.Plan) c10kplan.Num { return p.Facts.Client.TWReuse }))
	if len(parts) > 0 {
		ev += "; at the start " + strings.Join(parts, ", ")
	}
	return ev
}

func causes(errs map[string]float64) string {
	if len(errs) == 0 {
		return "none"
	}
	var parts []string
	for _, k := range kv.SortedKeys(errs) {
		parts = append(parts, fmt.Sprintf("%s %.0f", k, errs[k]))
	}
	return strings.Join(parts, ", ")
}

func topCause(errs map[string]float64) string {
	best, n := "unknown", 0.0
	for _, k := range kv.SortedKeys(errs) {
		if errs[k] > n {
			best, n = k, errs[k]
		}
	}
	return best
}

// idleEvidence is an idle scenario's counts: established, the server's
// ESTABLISHED, alive at the end of the hold, then rest.
func idleEvidence(c *summary.Cell, f *Figures, est, target float64, rest string) string {
	alive := ""
	if a := f.ConnectionsAliveEnd; a != nil {
		alive = fmt.Sprintf(", %.0f alive at the end of the %s s hold", *a, c.Params["hold_s"])
	}
	return fmt.Sprintf("%.0f of %.0f established (server ESTABLISHED %s)%s; %s", est, target, decimal.Format(f.ServerEstablished, 0), alive, rest)
}

// idleClosed is the verdict of an idle scenario whose held connections the
// server under test closed (a FIN, or data unasked then a close) before the
// hold ended, or nil.
func idleClosed(c *summary.Cell, f *Figures, est, target float64, rest string) *summary.Verdict {
	a := f.ConnectionsAliveEnd
	if kind(c) != "idle" || a == nil || *a >= est {
		return nil
	}
	drops, _ := c.Details["drops"].(map[string]float64)
	n := drops["eof"] + drops["unexpected_data"]
	if n == 0 {
		return nil
	}
	return &summary.Verdict{Bound: WallIdleClose, Evidence: fmt.Sprintf("%.0f of %.0f held connections were closed by the server under test before the %s s hold ended (a FIN, or data unasked such as a 408, then a close): its keep-alive timeout is shorter than the hold; not a drop of the lab; %s",
		n, est, c.Params["hold_s"], idleEvidence(c, f, est, target, rest))}
}
