package phase3

import (
	"fmt"
	"math"
	"strconv"
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
		code = CodeShortRamp
	}
	if !math.IsNaN(p99) && p99 > SlowConnectMs {
		walls = append(walls, fmt.Sprintf("%s: connect p99 %.0f ms", WallSlowConnect, p99))
		if code == "" {
			code = CodeSlowConnects
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
// that were slow, with its evidence and cause, or returns nil; split is
// the limit that split the scenario, a wall it met too. It also records
// details.ramp {wall, cause} for decisions.
func rampWall(c *summary.Cell, f *Figures, split splitWalls, rest string) *summary.Verdict {
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
	var quals []string
	if len(walls) > 1 {
		quals = append(quals, QualSlowConnects)
	}
	if split.text != "" {
		// The limit that split the scenario is a wall it met too.
		bound += "; " + split.text
		quals = append(quals, split.quals...)
	}
	return &summary.Verdict{Code: code, Cause: cause, Qualifiers: quals, Bound: bound, Evidence: ev}
}

// Phase 3's verdict codes (summary.json verdict.code; docs/verdicts.md).
// The Wall* constants are their words in the reports.
const (
	// CodeNone: no wall met: every connection held, or the low rate
	// delivered with p99 near the service time.
	CodeNone = "none"
	// CodeFailed: the cell failed with nothing measured.
	CodeFailed = "failed"
	// CodeRefused: refused before it started, by a plan that carried no
	// refusal code (a run made before the plan document carried codes);
	// a refusal with a code has its wall's code and the qualifier
	// QualRefused.
	CodeRefused = "refused"
	CodePorts   = "ports"    // no free local port (EADDRNOTAVAIL, EADDRINUSE)
	CodeFDLimit = "fd_limit" // no descriptor (EMFILE, ENFILE)
	CodeBacklog = "backlog"  // connections missing, the listen queue overflowing
	CodeMemory  = "memory"   // refused: not enough memory, or file-max
	CodeTCPMem  = "tcp_mem"  // connections missing under TCP memory pressure
	// CodeRampTimeBound: the ramp's time bound left connections not
	// attempted (WallRampBound).
	CodeRampTimeBound = "ramp_time_bound"
	// CodeRefusedAfterRetry: connects failed although each was retried
	// (WallRefusedAfterRetry); Cause is the errno most failed with.
	CodeRefusedAfterRetry = "refused_after_retry"
	// CodeConnectionsLost: connections missing, none of the above; Cause
	// is the errno most failed with.
	CodeConnectionsLost = "connections_lost"
	// CodeServerClosed: the server under test closed held connections
	// before the hold ended (WallIdleClose).
	CodeServerClosed = "server_closed"
	// CodeShortRamp, CodeSlowConnects: the connect ramp fell short of its
	// rate, or its connects were slow (details.ramp.wall's codes); Cause
	// is the ramp's cause (Ramp* codes).
	CodeShortRamp    = "short_ramp"
	CodeSlowConnects = "slow_connects"
	// CodeNotMeasured: a low-rate scenario without a rate measured.
	CodeNotMeasured = "not_measured"
	// CodeRateNotDelivered: the low rate fell more than RateTolerance short.
	CodeRateNotDelivered = "rate_not_delivered"
	// CodeScheduleLag: p99 beyond QueueingFactor × the service time: the
	// client sent late.
	CodeScheduleLag = "schedule_lag"
	// CodeQueueing: a closed loop, every request queued behind the others.
	CodeQueueing = "queueing"
	// CodeUnknownScenario: a scenario this csb does not know.
	CodeUnknownScenario = "unknown_scenario"
)

// Codes is the closed list of Phase 3's verdict codes.
var Codes = []string{CodeNone, CodeFailed, CodeRefused, CodePorts, CodeFDLimit, CodeBacklog, CodeMemory, CodeTCPMem,
	CodeRampTimeBound, CodeRefusedAfterRetry, CodeConnectionsLost, CodeServerClosed, CodeShortRamp, CodeSlowConnects,
	CodeNotMeasured, CodeRateNotDelivered, CodeScheduleLag, CodeQueueing, CodeUnknownScenario}

// Phase 3's verdict qualifiers (summary.json verdict.qualifiers): what the
// code alone does not say.
const (
	// QualRefused: the wall was foreseen and the cell refused before it
	// started.
	QualRefused = "refused"
	// QualSplitFD, QualSplitPorts: the scenario was split across
	// processes by the fd limit per process, or by the ports per source
	// address.
	QualSplitFD    = "split_fd_limit"
	QualSplitPorts = "split_ports"
	// QualRampBackedOff: the count was reached only after the ramp paced
	// down or retried.
	QualRampBackedOff = "ramp_backed_off"
	// QualServerCPU, QualSharedCPU, QualClientCPU: the CPU that was
	// saturated (QualSharedCPU: both ends share the machine's cores).
	QualServerCPU = "server_cpu"
	QualSharedCPU = "shared_cpu"
	QualClientCPU = "client_cpu"
	// QualSlowConnects: a short ramp whose connects were slow too.
	QualSlowConnects = "slow_connects"
)

// Qualifiers is the closed list of Phase 3's verdict qualifiers.
var Qualifiers = []string{QualRefused, QualSplitFD, QualSplitPorts, QualRampBackedOff, QualServerCPU, QualSharedCPU, QualClientCPU, QualSlowConnects}

// judged is a cell as the rules read it.
type judged struct {
	s       *summary.Summary
	c       *summary.Cell
	plan    *c10kplan.Plan // nil: none recorded
	f       *Figures
	errText string
	errs    map[string]float64
	// target and est are the connections asked for and established.
	target, est float64

	// Once every connection was established (more): the split, the
	// cost of holding them, the ramp's retries and whether it backed off.
	held             bool
	split            splitWalls
	cost, retries    string
	backoff, holding string
}

// rule is one verdict: it returns the verdict when it holds, else nil.
type rule func(j *judged) *summary.Verdict

// rules decide a cell's verdict in this order; the first that holds is
// it. The refusal and failure first; then connects that failed for want
// of a port or a descriptor; then connections missing (lost rules, which
// see est < target); then, every connection established, the server
// closing them, the ramp, and the scenario's own rules.
var rules = []rule{
	refusedRule, failedRule, portsRule, fdRule,
	backlogRule, tcpMemRule, rampLostRule, lostRule,
	serverClosedRule, rampRule, idleRule,
	noRateRule, rateNotDeliveredRule, scheduleLagRule, lowrateRule,
	queueingRule, unknownRule,
}

// verdict names the wall a scenario met (or the nearest limit when it met
// none), with the evidence; plan is the cell's plan (nil: none).
func verdict(s *summary.Summary, c *summary.Cell, plan *c10kplan.Plan) *summary.Verdict {
	j := &judged{s: s, c: c, plan: plan, f: figuresOf(c)}
	if c.Error != nil {
		j.errText = *c.Error
	}
	j.errs, _ = c.Details["errors"].(map[string]float64)
	j.target, j.est = summary.Val(j.f.ConnectionsTarget), summary.Val(j.f.ConnectionsEstablished)
	for _, r := range rules {
		if v := r(j); v != nil {
			return v
		}
	}
	return nil // unreachable: unknownRule always holds
}

// refusedRule: the plan refused the scenario before it started.
func refusedRule(j *judged) *summary.Verdict {
	if j.c.Status != "refused" {
		return nil
	}
	code := ""
	if j.plan != nil {
		code = j.plan.Code()
	}
	wall, wcode := refusalWall(code)
	v := &summary.Verdict{Code: wcode, Cause: code, Bound: wall + " (refused before it started)", Evidence: j.errText}
	if wcode != CodeRefused {
		v.Qualifiers = []string{QualRefused}
	}
	return v
}

// failedRule: the cell failed with no connection nor rate measured.
func failedRule(j *judged) *summary.Verdict {
	if j.c.Status != "failed" || j.f.ConnectionsEstablished != nil || j.f.RPSAchieved != nil {
		return nil
	}
	return &summary.Verdict{Code: CodeFailed, Bound: "none (failed)", Evidence: j.errText}
}

// portsRule: connects failed with EADDRNOTAVAIL or EADDRINUSE.
func portsRule(j *judged) *summary.Verdict {
	n := j.errs["eaddrnotavail"] + j.errs["eaddrinuse"]
	if n <= 0 {
		return nil
	}
	return &summary.Verdict{Code: CodePorts, Bound: WallPorts, Evidence: fmt.Sprintf("%.0f connects failed with EADDRNOTAVAIL/EADDRINUSE (no free local port toward the server); %s", n, portsEvidence(j.plan))}
}

// fdRule: connects failed with EMFILE or ENFILE.
func fdRule(j *judged) *summary.Verdict {
	n := j.errs["emfile"] + j.errs["enfile"]
	if n <= 0 {
		return nil
	}
	return &summary.Verdict{Code: CodeFDLimit, Bound: WallFD, Evidence: fmt.Sprintf("%.0f connects failed with EMFILE/ENFILE; %s", n, fdEvidence(j.plan, j.f))}
}

// missing reports whether fewer connections were established than asked.
func (j *judged) missing() bool {
	return !math.IsNaN(j.target) && !math.IsNaN(j.est) && j.est < j.target
}

// lostText is the evidence of missing connections.
func (j *judged) lostText() string {
	return fmt.Sprintf("%.0f of %.0f connections established; errors: %s", j.est, j.target, causes(j.errs))
}

// backlogRule: connections missing, the server's listen queue overflowing.
func backlogRule(j *judged) *summary.Verdict {
	lo := summary.Val(j.f.host("server").Counters.ListenOverflows)
	if !j.missing() || !(lo > 0) {
		return nil
	}
	ev := j.lostText() + fmt.Sprintf("; the server's listen queue overflowed %.0f times (somaxconn %s)", lo, numText(j.plan, func(p *c10kplan.Plan) c10kplan.Num { return p.Facts.Server.Somaxconn }))
	if r := rampOf(j.c); r != nil {
		ev += "; the ramp: " + retryText(j.f, r)
	}
	return &summary.Verdict{Code: CodeBacklog, Bound: WallBacklog, Evidence: ev}
}

// tcpMemRule: connections missing, the kernel under TCP memory pressure
// (it trims buffers and refuses allocations past tcp_mem's max: nstat
// and sockstat say so).
func tcpMemRule(j *judged) *summary.Verdict {
	if !j.missing() {
		return nil
	}
	mp := 0.0
	for _, h := range []string{"server", "client"} {
		if v := summary.Val(j.f.host(h).Counters.TCPMemoryPressures); !math.IsNaN(v) {
			mp += v
		}
	}
	if mp <= 0 {
		return nil
	}
	return &summary.Verdict{Code: CodeTCPMem, Bound: WallTCPMem, Evidence: fmt.Sprintf("%s; TCPMemoryPressures %.0f; sockstat TCP mem %s → %s pages (tcp_mem max %s)", j.lostText(), mp,
		decimal.Format(j.f.TCPMemPagesBefore, 0), decimal.Format(j.f.TCPMemPagesHeld, 0),
		numText(j.plan, func(p *c10kplan.Plan) c10kplan.Num { return p.Facts.Server.TCPMemMax }))}
}

// rampLostRule: connections missing where connclient recorded its ramp:
// its time bound, or connects refused after their retries.
func rampLostRule(j *judged) *summary.Verdict {
	r := rampOf(j.c)
	if !j.missing() || r == nil {
		return nil
	}
	return lostAfterRetries(j.c, j.f, r, j.lostText())
}

// lostRule: connections missing, none of the above.
func lostRule(j *judged) *summary.Verdict {
	if !j.missing() {
		return nil
	}
	top := topCause(j.errs)
	v := &summary.Verdict{Code: CodeConnectionsLost, Cause: top, Bound: "connections lost: " + top, Evidence: j.lostText()}
	if k := kind(j.c); k == "idle" || k == "lowrate" {
		// A connect that timed out is often a ramp that could not keep
		// up: its evidence (CPU, SYN retransmits, connect times) too.
		if r := rampWall(j.c, j.f, splitWalls{}, ""); r != nil {
			v.Evidence += "; the ramp: " + r.Bound + ": " + r.Evidence
		}
	}
	return v
}

// more fills, once, what the rules read once every connection was
// established. The ramp's retries and first attempts come from
// connclient's record (none in runs made before it paced its ramp).
func (j *judged) more() {
	if j.held {
		return
	}
	j.held = true
	j.split = splitOf(j.plan, j.f)
	j.cost = costText(j.f)
	if r := rampOf(j.c); r != nil {
		j.retries = "; the ramp: " + retryText(j.f, r)
		if j.backoff = backoffText(j.f, r); j.backoff != "" {
			j.retries += backoffWhy(j.c, j.f)
		}
	}
	j.holding = j.cost + holdText(j.c, j.f) + j.retries
}

// qualifiers are the split's and the ramp's backoff's qualifiers.
func (j *judged) qualifiers(more ...string) []string {
	q := append(append([]string{}, more...), j.split.quals...)
	if j.backoff != "" {
		q = append(q, QualRampBackedOff)
	}
	if len(q) == 0 {
		return nil
	}
	return q
}

// serverClosedRule: every connection was established and the server
// then closed them: that bounds the scenario whatever its ramp was (a
// ramp that fell short is said in the evidence).
func serverClosedRule(j *judged) *summary.Verdict {
	j.more()
	v := idleClosed(j.c, j.f, j.est, j.target, j.holding)
	if v == nil {
		return nil
	}
	if r := rampWall(j.c, j.f, splitWalls{}, ""); r != nil && j.backoff == "" {
		v.Evidence += "; the ramp: " + r.Bound + ": " + r.Evidence
	}
	return v
}

// rampRule: an idle or low-rate scenario's ramp fell short or was slow.
// A ramp that backed off or retried and reached its count is not a wall:
// the server accepted every connection, more slowly than asked (said in
// the bound and the evidence of the scenario's rule).
func rampRule(j *judged) *summary.Verdict {
	j.more()
	if k := kind(j.c); (k != "idle" && k != "lowrate") || j.backoff != "" {
		return nil
	}
	return rampWall(j.c, j.f, j.split, j.holding)
}

// idleRule: an idle scenario held every connection; the bound names the
// limit that split it, else the evidence the nearest limit.
func idleRule(j *judged) *summary.Verdict {
	if kind(j.c) != "idle" {
		return nil
	}
	j.more()
	ev := idleEvidence(j.c, j.f, j.est, j.target, j.holding)
	if j.split.text != "" {
		return &summary.Verdict{Code: CodeNone, Qualifiers: j.qualifiers(), Bound: j.split.text + j.backoff, Evidence: ev + "; " + headroom(j.plan, j.f)}
	}
	return &summary.Verdict{Code: CodeNone, Qualifiers: j.qualifiers(), Bound: WallNone + j.backoff, Evidence: ev + "; nearest limit: " + headroom(j.plan, j.f)}
}

// lowrateEvidence is a low-rate scenario's rate, latency and cost.
func (j *judged) lowrateEvidence() string {
	f := j.f
	return fmt.Sprintf("%s of %s req/s (%s); p99 %s ms from the due time, %s ms service time; %s",
		decimal.Format(f.RPSAchieved, 1), decimal.Format(f.RPSTarget, 0), decimal.Pct(f.RPSAchievedRatio),
		decimal.Format(f.LatencyP99Ms, 2), decimal.Format(f.ServiceLatencyP99Ms, 2), j.cost) + j.retries
}

// noRateRule: a low-rate scenario without a rate measured.
func noRateRule(j *judged) *summary.Verdict {
	if kind(j.c) != "lowrate" || !math.IsNaN(summary.Val(j.f.RPSAchievedRatio)) {
		return nil
	}
	j.more()
	return &summary.Verdict{Code: CodeNotMeasured, Bound: "none (no rate measured)", Evidence: j.lowrateEvidence()}
}

// rateNotDeliveredRule: the low rate fell more than RateTolerance short.
func rateNotDeliveredRule(j *judged) *summary.Verdict {
	if kind(j.c) != "lowrate" || !(summary.Val(j.f.RPSAchievedRatio) < 1-RateTolerance) {
		return nil
	}
	j.more()
	cpu, q := cpuBound(j.s, j.f)
	return &summary.Verdict{Code: CodeRateNotDelivered, Qualifiers: qual(q), Bound: "offered rate not delivered" + cpu, Evidence: j.lowrateEvidence()}
}

// scheduleLagRule: p99 from the due time beyond QueueingFactor × the
// service time: the client sent late.
func scheduleLagRule(j *judged) *summary.Verdict {
	f := j.f
	if kind(j.c) != "lowrate" || !(summary.Val(f.LatencyP99Ms) > QueueingFactor*summary.Val(f.ServiceLatencyP99Ms)) {
		return nil
	}
	j.more()
	return &summary.Verdict{Code: CodeScheduleLag, Bound: "client schedule lag", Evidence: j.lowrateEvidence() + fmt.Sprintf("; requests were sent late (sender lag p99 %s ms): the client, not the server, fell behind", decimal.Format(f.SenderLagP99Ms, 2))}
}

// lowrateRule: the low rate was delivered with p99 near the service time.
func lowrateRule(j *judged) *summary.Verdict {
	if kind(j.c) != "lowrate" {
		return nil
	}
	j.more()
	b := "none: rate delivered, p99 ≈ service time"
	if j.split.text != "" {
		b = j.split.text + "; then " + b
	}
	return &summary.Verdict{Code: CodeNone, Qualifiers: j.qualifiers(), Bound: b + j.backoff, Evidence: j.lowrateEvidence()}
}

// queueingRule: an active scenario, a closed loop where every request
// queues behind the others.
func queueingRule(j *judged) *summary.Verdict {
	if kind(j.c) != "active" {
		return nil
	}
	j.more()
	f, c := j.f, j.c
	svc := serviceP99(j.s)
	loop, law, tool := decimal.Format(f.ConnectionsEstablished, 0)+" connections", "connections / rate", "wrk"
	if c.Params["loadgen"] == "h2load" {
		tool = "h2load"
	}
	if st := c.Params["streams"]; st != "" {
		loop, law = loop+" × "+st+" streams", "connections × streams / rate"
	}
	if w := c.Params["warmup_s"]; w != "" {
		// Over TLS: the handshakes before the measured window (lib/c10k.sh).
		hs, _ := strconv.ParseFloat(c.Params["handshakes_per_s"], 64)
		loop += fmt.Sprintf(" opened in a %s s warm-up (TLS: %s handshakes/s in a probe of %s connections before the cell), then measured",
			w, decimal.Format(&hs, 0), c.Params["tls_probe_conns"])
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
	ev += "; " + j.cost
	cpu, q := cpuBound(j.s, f)
	return &summary.Verdict{Code: CodeQueueing, Qualifiers: qual(q), Bound: WallQueueing + cpu, Evidence: ev}
}

// unknownRule: a scenario this csb does not know.
func unknownRule(j *judged) *summary.Verdict {
	return &summary.Verdict{Code: CodeUnknownScenario, Bound: "unknown scenario", Evidence: j.c.Params["scenario"]}
}

// qual is q as qualifiers: none when "".
func qual(q string) []string {
	if q == "" {
		return nil
	}
	return []string{q}
}

// cpuBound says what saturated when the throughput plateaued: words for
// the bound and the qualifier ("" when no CPU did).
func cpuBound(s *summary.Summary, f *Figures) (string, string) {
	host := summary.Val(f.host("server").CPU.Pct)
	if host >= 90 {
		if s.SharedCPUs() {
			return " behind CPU (both ends share this machine's cores)", QualSharedCPU
		}
		return " behind the server's CPU", QualServerCPU
	}
	if summary.Val(f.host("client").CPU.Pct) >= 90 {
		return " behind the client's CPU", QualClientCPU
	}
	return "", ""
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

// refusalWall names the wall of a plan's refusal code, and its verdict
// code (CodeRefused when the plan has none: a run made before the plan
// document carried codes).
func refusalWall(code string) (string, string) {
	switch code {
	case c10kplan.CodeEphemeralPorts, c10kplan.CodeTimeWait:
		return WallPorts, CodePorts
	case c10kplan.CodeFDLimit:
		return WallFD, CodeFDLimit
	case c10kplan.CodeListenBacklog:
		return WallBacklog, CodeBacklog
	case c10kplan.CodeMemory, c10kplan.CodeFileMax:
		return WallMemory, CodeMemory
	case c10kplan.CodeTCPMem:
		return WallTCPMem, CodeTCPMem
	}
	return "refused", CodeRefused
}

// splitWalls is the limit that split a scenario across processes: its
// words for the bound ("" when one server and one client process held
// it) and its qualifiers.
type splitWalls struct {
	text  string
	quals []string
}

// splitOf names the limit that split the scenario across processes.
//
// With several client hosts each runs at least one process of its own
// share: only processes beyond one per host are a split, and the fd
// limit split them when it did on one host (the plan's per-host count).
func splitOf(plan *c10kplan.Plan, f *Figures) splitWalls {
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
	var walls, quals []string
	if len(fd) > 0 {
		walls = append(walls, fmt.Sprintf("%s per process (%s) → split across %s", WallFD, fdLimits(plan), strings.Join(fd, " and ")))
		quals = append(quals, QualSplitFD)
	}
	if byPorts != "" {
		walls = append(walls, byPorts)
		quals = append(quals, QualSplitPorts)
	}
	return splitWalls{text: strings.Join(walls, "; "), quals: quals}
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
	return &summary.Verdict{Code: CodeServerClosed, Bound: WallIdleClose, Evidence: fmt.Sprintf("%.0f of %.0f held connections were closed by the server under test before the %s s hold ended (a FIN, or data unasked such as a 408, then a close): its keep-alive timeout is shorter than the hold; not a drop of the lab; %s",
		n, est, c.Params["hold_s"], idleEvidence(c, f, est, target, rest))}
}
