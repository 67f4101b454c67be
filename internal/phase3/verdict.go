package phase3

import (
	"fmt"
	"math"
	"strings"

	"csbench/internal/c10kplan"
	"csbench/internal/kv"
	"csbench/internal/report"
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
	RampBacklog   = "listen_overflows"
	RampSynRetr   = "syn_retransmits"
	RampClientCPU = "client_cpu"
	RampUnknown   = "unknown"
)

// ClientCPUBusy is the client CPU (% of its host, or % of one core per
// client process) from which a short ramp counts as the client's doing.
const ClientCPUBusy = 90.0

// rampWall names a connect ramp that fell short of its target or connects
// that were slow, with its evidence and cause, or returns nil. It also
// records details.ramp {wall, cause} for decisions.
func rampWall(c *summary.Cell, split, rest string) *summary.Verdict {
	m := c.Metrics
	target, got := val(m, "connect_rate_target_per_s"), val(m, "connect_rate_achieved_per_s")
	p99 := val(m, "connect_latency_p99_ms")
	var walls []string
	code := ""
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
		return nil
	}
	lo, syn := val(m, "server_listen_overflows"), val(m, "client_syn_retrans")
	cpuHost, cpuProc, procs := val(m, "client_cpu_peak_pct"), val(m, "client_proc_cpu_peak_pct"), math.Max(val(m, "client_procs"), 1)
	cause := RampUnknown
	switch {
	case lo > 0:
		cause = RampBacklog
	case syn > 0:
		cause = RampSynRetr
	case cpuHost >= ClientCPUBusy || cpuProc >= ClientCPUBusy*procs:
		cause = RampClientCPU
	}
	why := map[string]string{
		RampBacklog:   "the server's listen queue overflowed",
		RampSynRetr:   "SYNs were retransmitted",
		RampClientCPU: "the client's CPU was busy",
		RampUnknown:   "neither the client's CPU, SYN retransmits nor listen overflows explain it",
	}[cause]
	c.Details["ramp"] = map[string]string{"wall": code, "cause": cause}
	ev := fmt.Sprintf("%s: client CPU at its busiest second %s%% of the host, connection clients %s%% of one core (%.0f process(es)); client SYN retransmits %s; server ListenOverflows %s; connect p50 / p99 %s / %s ms",
		why, report.N(m["client_cpu_peak_pct"], 0), report.N(m["client_proc_cpu_peak_pct"], 0), procs,
		report.N(m["client_syn_retrans"], 0), report.N(m["server_listen_overflows"], 0),
		report.N(m["connect_latency_p50_ms"], 1), report.N(m["connect_latency_p99_ms"], 1))
	if setup := val(m, "setup_s"); !math.IsNaN(setup) && setup < 2 {
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

func val(m map[string]*float64, k string) float64 { return summary.Val(m[k]) }

// verdict names the wall a scenario met (or the nearest limit when it met
// none), with the evidence.
func verdict(s *summary.Summary, c *summary.Cell) *summary.Verdict {
	m := c.Metrics
	plan, _ := c.Details["plan"].(map[string]string)
	errText := ""
	if c.Error != nil {
		errText = *c.Error
	}
	switch c.Status {
	case "refused":
		return &summary.Verdict{Bound: refusalWall(plan[RefusalCode]) + " (refused before it started)", Evidence: errText}
	case "failed":
		if m["connections_established"] == nil && m["rps_achieved"] == nil {
			return &summary.Verdict{Bound: "none (failed)", Evidence: errText}
		}
	}
	errs, _ := c.Details["errors"].(map[string]float64)
	target, est := val(m, "connections_target"), val(m, "connections_established")
	if n := errs["eaddrnotavail"] + errs["eaddrinuse"]; n > 0 {
		return &summary.Verdict{Bound: WallPorts, Evidence: fmt.Sprintf("%.0f connects failed with EADDRNOTAVAIL/EADDRINUSE (no free local port toward the server); %s", n, portsEvidence(plan))}
	}
	if n := errs["emfile"] + errs["enfile"]; n > 0 {
		return &summary.Verdict{Bound: WallFD, Evidence: fmt.Sprintf("%.0f connects failed with EMFILE/ENFILE; %s", n, fdEvidence(plan, m))}
	}
	if !math.IsNaN(target) && !math.IsNaN(est) && est < target {
		ev := fmt.Sprintf("%.0f of %.0f connections established; errors: %s", est, target, causes(errs))
		if lo := val(m, "server_listen_overflows"); lo > 0 {
			return &summary.Verdict{Bound: WallBacklog, Evidence: ev + fmt.Sprintf("; the server's listen queue overflowed %.0f times (somaxconn %s)", lo, plan["server_somaxconn"])}
		}
		v := &summary.Verdict{Bound: "connections lost: " + topCause(errs), Evidence: ev}
		if k := kind(c); k == "idle" || k == "lowrate" {
			// A connect that timed out is often a ramp that could not keep
			// up: its evidence (CPU, SYN retransmits, connect times) too.
			if r := rampWall(c, "", ""); r != nil {
				v.Evidence += "; the ramp: " + r.Bound + ": " + r.Evidence
			}
		}
		return v
	}
	split := splitText(plan, m)
	cost := costText(m)
	if k := kind(c); k == "idle" || k == "lowrate" {
		if v := rampWall(c, split, cost); v != nil {
			return v
		}
	}
	switch kind(c) {
	case "idle":
		alive := ""
		if a := m["connections_alive_end"]; a != nil {
			alive = fmt.Sprintf(", %.0f alive at the end of the %s s hold", *a, c.Params["hold_s"])
		}
		ev := fmt.Sprintf("%.0f of %.0f established (server ESTABLISHED %s)%s; %s", est, target, report.N(m["server_established"], 0), alive, cost)
		if a := m["connections_alive_end"]; a != nil && *a < est {
			drops, _ := c.Details["drops"].(map[string]float64)
			if n := drops["eof"] + drops["unexpected_data"]; n > 0 {
				first := ""
				if f := m["first_drop_s"]; f != nil {
					first = fmt.Sprintf(", the first %.1f s into the hold", *f)
				}
				return &summary.Verdict{Bound: WallIdleClose, Evidence: fmt.Sprintf("%.0f of %.0f held connections were closed by the server under test before the %s s hold ended%s (a FIN, or data unasked such as a 408, then a close): its keep-alive timeout is shorter than the hold; not a drop of the lab; %s", n, est, c.Params["hold_s"], first, ev)}
			}
		}
		if split != "" {
			return &summary.Verdict{Bound: split, Evidence: ev + "; " + headroom(plan, m)}
		}
		return &summary.Verdict{Bound: WallNone, Evidence: ev + "; nearest limit: " + headroom(plan, m)}
	case "lowrate":
		ratio := val(m, "rps_achieved_ratio")
		ev := fmt.Sprintf("%s of %s req/s (%s); p99 %s ms from the due time, %s ms service time; %s",
			report.N(m["rps_achieved"], 1), report.N(m["rps_target"], 0), report.Pct(m["rps_achieved_ratio"]),
			report.N(m["latency_p99_ms"], 2), report.N(m["service_latency_p99_ms"], 2), cost)
		switch {
		case math.IsNaN(ratio):
			return &summary.Verdict{Bound: "none (no rate measured)", Evidence: ev}
		case ratio < 1-RateTolerance:
			return &summary.Verdict{Bound: "offered rate not delivered" + cpuBound(s, m), Evidence: ev}
		case val(m, "latency_p99_ms") > QueueingFactor*val(m, "service_latency_p99_ms"):
			return &summary.Verdict{Bound: "client schedule lag", Evidence: ev + fmt.Sprintf("; requests were sent late (sender lag p99 %s ms): the client, not the server, fell behind", report.N(m["sender_lag_p99_ms"], 2))}
		}
		b := "none: rate delivered, p99 ≈ service time"
		if split != "" {
			b = split + "; then " + b
		}
		return &summary.Verdict{Bound: b, Evidence: ev}
	case "active":
		svc := serviceP99(s)
		ev := fmt.Sprintf("a closed loop of %s connections at %s req/s: each request waits %s ms on average by Little's law (connections / rate), wrk measured p50 %s ms and p99 %s ms",
			report.N(m["connections_established"], 0), report.N(m["rps_achieved"], 0), report.N(m["littles_law_latency_ms"], 0),
			report.N(m["latency_p50_ms"], 1), report.N(m["latency_p99_ms"], 1))
		if !math.IsNaN(svc) {
			ev += fmt.Sprintf(" against a service time of %.2f ms (p99 of the low-rate scenarios)", svc)
		}
		ev += "; " + cost
		return &summary.Verdict{Bound: WallQueueing + cpuBound(s, m), Evidence: ev}
	}
	return &summary.Verdict{Bound: "unknown scenario", Evidence: c.Params["scenario"]}
}

// cpuBound says what saturated when the throughput plateaued.
func cpuBound(s *summary.Summary, m map[string]*float64) string {
	host := val(m, "server_cpu_pct")
	if host >= 90 {
		if s.SharedCPUs() {
			return " behind CPU (both ends share this machine's cores)"
		}
		return " behind the server's CPU"
	}
	if val(m, "client_cpu_pct") >= 90 {
		return " behind the client's CPU"
	}
	return ""
}

// serviceP99 is the largest service-time p99 of the run's low-rate cells.
func serviceP99(s *summary.Summary) float64 {
	best := math.NaN()
	for _, c := range s.Cells {
		if kind(&c) == "lowrate" {
			if v := val(c.Metrics, "service_latency_p99_ms"); !math.IsNaN(v) && (math.IsNaN(best) || v > best) {
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
	}
	return "refused"
}

// splitText names the limit that split the scenario across processes, or
// "" when one server and one client process held it.
func splitText(plan map[string]string, m map[string]*float64) string {
	conns, sp, cp := val(m, "connections_target"), val(m, "server_procs"), val(m, "client_procs")
	cliFD := num(plan["client_procs_by_fd"])
	if math.IsNaN(cliFD) { // a plan.env of an older run
		cliFD = math.Ceil(conns / (num(plan["client_fd_hard"]) - c10kplan.FDMargin))
	}
	var fd []string
	if sp > 1 {
		fd = append(fd, fmt.Sprintf("%.0f server processes (SO_REUSEPORT)", sp))
	}
	byPorts := ""
	if cp > 1 {
		if cliFD > 1 {
			fd = append(fd, fmt.Sprintf("%.0f client processes, one per source address", cp))
		} else {
			byPorts = fmt.Sprintf("ports per source address (%s) → %.0f client processes, one per source address", plan["client_ports_per_source"], cp)
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

func fdLimits(plan map[string]string) string {
	if plan["server_fd_hard"] == plan["client_fd_hard"] {
		return plan["server_fd_hard"]
	}
	return "server " + plan["server_fd_hard"] + ", client " + plan["client_fd_hard"]
}

func fdEvidence(plan map[string]string, m map[string]*float64) string {
	return fmt.Sprintf("hard fd limit %s; %s server and %s client processes", fdLimits(plan), report.N(m["server_procs"], 0), report.N(m["client_procs"], 0))
}

// costText is what holding the connections cost the server.
func costText(m map[string]*float64) string {
	return fmt.Sprintf("server RSS %s → %s MB = %s KiB per connection, server processes' CPU %s%% of one core",
		report.N(m["server_rss_baseline_mb"], 1), report.N(m["server_rss_held_mb"], 1), report.N(m["server_rss_per_conn_kb"], 1),
		report.N(m["server_proc_cpu_pct"], 1))
}

// headroom compares the connections with the limits that were not met.
func headroom(plan map[string]string, m map[string]*float64) string {
	conns := val(m, "connections_target")
	per := num(plan["server_conns_per_proc_max"])
	sp := math.Max(val(m, "server_procs"), 1)
	cp := math.Max(val(m, "client_procs"), 1)
	ports := num(plan["client_ports_per_source"])
	var parts []string
	if !math.IsNaN(per) && !math.IsNaN(conns) {
		parts = append(parts, fmt.Sprintf("fds: about %.0f connections per server process of at most %.0f (hard limit %s less %d, %d%% for SO_REUSEPORT's uneven hash)", math.Ceil(conns/sp), per, plan["server_fd_hard"], c10kplan.FDMargin, c10kplan.ReusePortSlackPct))
	}
	if !math.IsNaN(ports) && !math.IsNaN(conns) {
		parts = append(parts, fmt.Sprintf("ports: %.0f connections per source address of %.0f (ip_local_port_range %s)", math.Ceil(conns/cp), ports, plan["client_port_range"]))
	}
	if len(parts) == 0 {
		return "no plan recorded"
	}
	return strings.Join(parts, "; ")
}

// portsEvidence is the state of the source addresses when the scenario began.
func portsEvidence(plan map[string]string) string {
	tw := sources(plan, "time_wait")
	var parts []string
	for _, ip := range kv.SortedKeys(tw) {
		parts = append(parts, fmt.Sprintf("%s had %.0f in TIME_WAIT", ip, tw[ip]))
	}
	ev := fmt.Sprintf("%s ports per source address (ip_local_port_range %s), tcp_tw_reuse=%s", plan["client_ports_per_source"], plan["client_port_range"], plan["client_tcp_tw_reuse"])
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
