package phase5

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"csbench/internal/capacity"
	"csbench/internal/chart"
	"csbench/internal/report"
	"csbench/internal/rundir"
	"csbench/internal/summary"
	"csbench/internal/trust"
)

// Report writes Report_05-capacity.md and one latency chart per payload.
func (Phase) Report(r *rundir.Run, s *summary.Summary) error {
	var d report.Doc
	report.Header(&d, s, "Phase 5 — capacity: the highest rate the server keeps within its latency budget")
	d.H(2, "Findings")
	for _, c := range s.Capacity {
		d.P("%s", Headline(c, s.Cells))
	}
	if len(s.Capacity) == 0 {
		d.P("No step could be read: no capacity was found (see the cells' errors below).")
	}
	d.P("Each step offers a rate on an open-model schedule (connclient lowrate: request i is due at start + i/rate whatever the answers before it, so a slow server meets a queue, not fewer requests) and measures the latency from each request's due time, merged bucket by bucket across client processes and hosts. %s The search doubles the rate while steps pass, halves it while they fail, then bisects; the capacity is the highest passing rate, the bracket the rates around it. A step that broke the SLO while its client was the limit, on the client's own evidence (its event loops busy ≥ 90 %% of their time, its process using ≥ 90 %% of its CPUs' time, or its sender lag p99, over 1,000 or more requests that found an idle connection, above %g ms while no other work kept its CPUs busy), is client-bound: it ends the search and is never the server's capacity. A step whose client's CPUs others kept busy (≥ 90 %% busy while the client used less, or a late sender while others took ≥ 10 %% of them) is disturbed, never the client's: the search runs it again, and the second counts.",
		passRule(s), capacity.LagBoundMs(LagMaxMs, slo(s).SLOLatencyMs))
	if s.SharedCPUs() {
		d.P("Here the client's CPUs were the server's too (%s): the work of others on them is the server's first, so no step was disturbed by it, and a sender late on them was the client's limit, whoever else used them.",
			map[bool]string{true: "LAB=local", false: "the netns lab, unpinned"}[s.Lab == "local"])
	}

	for _, size := range payloads(s) {
		d.H(2, "Steps at "+size)
		var rows [][]string
		for i := range s.Cells {
			c := &s.Cells[i]
			if c.Params["payload"] != size {
				continue
			}
			m := figuresOf(c)
			outcome := c.Status
			if c.Verdict != nil {
				outcome = c.Verdict.Bound
			}
			rows = append(rows, trust.MarkRow([]string{"`" + c.Name + "`", c.Params["reason"], report.N(m.OfferedRPS, 0), report.N(m.AchievedRPS, 1),
				report.N(m.LatencyP50Ms, 2) + " / " + report.N(m.LatencyP99Ms, 2) + " / " + report.N(m.LatencyP999Ms, 2),
				report.N(m.LatencyGrowthMsPerS, 1), report.N(m.ServiceLatencyP99Ms, 2), report.N(m.SenderLagP99Ms, 2), report.N(m.ErrorsPct, 3),
				report.N(m.RequestsLatePoolBusy, 0), report.N(m.ClientLoopsBusyPct, 0) + " / " + report.N(m.ClientCPUsBusyPct, 0),
				report.N(m.CPU["server"].Pct, 0), outcome}, c, 2))
		}
		d.Table([]string{"step", "why this rate", "offered /s", "achieved /s", "latency p50 / p99 / p99.9 ms (from due)",
			"latency growth ms/s", "service p99 ms", "sender lag p99 ms", "errors %", "late: pool busy", "client loops / its CPUs busy %", "server host CPU %", "outcome"}, rows)
		ch := latencyChart(s, size)
		svg, skipped := ch.Render(r.Dir, s.GeneratedBy)
		report.Chart(&d, ch.Title, svg, skipped)
	}
	d.P("Late: pool busy counts the requests that, when due, found every connection busy and waited (their wait is in the latency from the due time: the pool was too small or the server too slow). Service time is from the send; sender lag is send − due.")
	report.Environment(&d, s)
	report.Notes(&d, r.Dir)
	report.Files(&d)
	return report.Write(r.Dir, "Report_05-capacity.md", &d)
}

// passRule is the report's sentence on when a step passes: in steady state
// (steps with the schedule's tenths), or as judged before they existed.
func passRule(s *summary.Summary) string {
	c := slo(s)
	head := fmt.Sprintf("A step passes when p%g of that latency ≤ %g ms, failed requests ≤ %g %%", c.SLOPercentile, c.SLOLatencyMs, c.SLOErrorsPct)
	for i := range s.Cells {
		if figuresOf(&s.Cells[i]).LatencyGrowthMsPerS == nil {
			continue
		}
		return head + fmt.Sprintf(" and the server kept up while the schedule ran: the rate it delivered (the answers received from the first tenth of the schedule that begins after the step's median latency to the schedule's end, over that window; answers in the 1 s drain do not count) is ≥ 99 %% of the offered, one answer per client process allowed for the schedule's ends, and the latency from the due time grew at most %s ms per s over the schedule (latency growth: the median of the slopes between the tenths' mean latencies; an overload of half the search's resolution grows it that fast). A rate the server cannot sustain fails one of the two, whatever the SLO, the step's length or its drain.",
			report.N(c.QueueGrowthMaxMsPerS, 3))
	}
	return head + " and the achieved rate (requests answered, within the step's 1 s drain, over the schedule's duration) ≥ 99 % of the offered. These steps were recorded before connclient cut its schedule into tenths: they are judged as then, with no test of a queue that grows (latency growth —)."
}

// Headline is one payload's finding in one sentence or two (cells: the
// run's, for the marks of a disturbed step at the bound).
func Headline(c summary.Capacity, cells []summary.Cell) string {
	var b strings.Builder
	switch {
	case c.CapacityRPS != nil && c.HighRPS == nil:
		fmt.Fprintf(&b, "**%s: capacity at p%g ≤ %g ms: at least %s req/s** (no step above it was the server's, %d steps)", c.Payload, c.SLOPercentile, c.SLOLatencyMs,
			report.N(c.CapacityRPS, 0), c.Steps)
	case c.CapacityRPS != nil:
		fmt.Fprintf(&b, "**%s: capacity at p%g ≤ %g ms: %s req/s** (bracket %s–%s req/s, %d steps)", c.Payload, c.SLOPercentile, c.SLOLatencyMs,
			report.N(c.CapacityRPS, 0), report.N(c.LowRPS, 0), report.N(c.HighRPS, 0), c.Steps)
	default:
		fmt.Fprintf(&b, "**%s: no capacity found at p%g ≤ %g ms** (%d steps)", c.Payload, c.SLOPercentile, c.SLOLatencyMs, c.Steps)
	}
	switch c.Bound {
	case "latency", "errors", "achieved", "queue", "unreadable":
		fmt.Fprintf(&b, ", bound by %s: the step at %s req/s broke the SLO on it", boundName(c.Bound), report.N(c.HighRPS, 0))
		if n, ok := map[string]string{"server_cpu": "the server's CPU", "link": "the link", "slots": "the server's slots (ground truth)", "errors": "the server's errors", "unexplained": "not the server's CPU nor the link", "nginx_cork": "not load but nginx's tcp_nopush"}[c.Cause]; ok {
			fmt.Fprintf(&b, " — %s: %s", n, c.CauseEvidence)
		}
		b.WriteString(".")
	default:
		fmt.Fprintf(&b, ", bound by %s: %s.", boundName(c.Bound), strings.TrimSuffix(c.Says, "."))
	}
	if c.Phase2MaxRPS != nil {
		fmt.Fprintf(&b, " Phase 2's closed-loop maximum on this lab was %s RPS (`%s`; the search started at half of it): the SLO holds up to %s %% of it.",
			report.N(c.Phase2MaxRPS, 0), c.Phase2Run, pctOf(c.CapacityRPS, c.Phase2MaxRPS))
	}
	if c.ProbeRPS != nil {
		fmt.Fprintf(&b, " A probe at full speed achieved %s req/s (the search started at half of it): the SLO holds up to %s %% of it.",
			report.N(c.ProbeRPS, 0), pctOf(c.CapacityRPS, c.ProbeRPS))
	}
	if c.LittleInFlight != nil {
		fmt.Fprintf(&b, " At the capacity about %s requests were in flight (Little's law, with the median latency from the due time for the mean).", report.N(c.LittleInFlight, 0))
	}
	if c.TruthRPS != nil {
		over := "the run"
		if c.TruthBasis == "capacity_steps" {
			over = "the steps at the capacity's rate"
		}
		fmt.Fprintf(&b, " The ground-truth server's capacity was %s req/s (its slots / the mean hold it measured over %s, %s ms): the search found %s %% of it.",
			report.N(c.TruthRPS, 0), over, report.N(c.TruthHoldMeanMs, 3), pctOf(c.CapacityRPS, c.TruthRPS))
	}
	if len(c.BoundDisturbed) > 0 {
		var lines []string
		for _, name := range c.BoundDisturbed {
			for i := range cells {
				if cells[i].Name == name {
					lines = append(lines, "`"+name+"` "+trust.DisturbLine(cells[i].Trust))
				}
			}
		}
		fmt.Fprintf(&b, " ⚑ The failing step above it was disturbed (%s): the failure may be the other work's, so the capacity is a lower bound; run it again on a quiet machine.", strings.Join(lines, "; "))
	}
	return b.String()
}

func pctOf(a, b *float64) string {
	if a == nil || b == nil || *b == 0 {
		return "—"
	}
	v := 100 * *a / *b
	return report.N(&v, 1)
}

// boundName is a bound code in words.
func boundName(code string) string {
	if n, ok := map[string]string{"latency": "latency (the SLO's percentile)", "errors": "errors", "achieved": "the rate not delivered",
		"queue":      "a growing queue (the latency from the due time rose over the schedule)",
		"unreadable": "a step that could not be read", "client_bound": "the client", "max_steps": "SEARCH_MAX_STEPS", "max_time": "SEARCH_MAX_S",
		"never_met": "the SLO, never met", "cut_short": "a search cut short", "server_failed": "the server under test failing",
		"server_errors": "the server's errors (it failed requests it had the capacity for)"}[code]; ok {
		return n
	}
	return code
}

// slo is the first payload's SLO (every payload has the run's), or NaNs.
func slo(s *summary.Summary) summary.Capacity {
	if len(s.Capacity) > 0 {
		return s.Capacity[0]
	}
	return summary.Capacity{SLOPercentile: math.NaN(), SLOLatencyMs: math.NaN(), SLOErrorsPct: math.NaN()}
}

// payloads in the order of their first step.
func payloads(s *summary.Summary) []string {
	var out []string
	seen := map[string]bool{}
	for _, c := range s.Cells {
		if p := c.Params["payload"]; !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}

// latencyChart: p50, p99 and p99.9 from the due time against the offered
// rate, the SLO as a line, the capacity a point on the p99.
func latencyChart(s *summary.Summary, size string) *chart.Chart {
	ch := &chart.Chart{Name: "latency-" + size, Title: "Latency from the due time against the offered rate, " + size, XLabel: "offered req/s",
		YLabel: "ms (log)", LogY: true, HLine: slo(s).SLOLatencyMs, HLineLbl: fmt.Sprintf("SLO p%g ≤ %g ms", slo(s).SLOPercentile, slo(s).SLOLatencyMs)}
	type pt struct{ x, p50, p99, p999 float64 }
	var pts []pt
	for i := range s.Cells {
		c := &s.Cells[i]
		if f := figuresOf(c); c.Params["payload"] == size && f.OfferedRPS != nil {
			pts = append(pts, pt{summary.Val(f.OfferedRPS), summary.Val(f.LatencyP50Ms), summary.Val(f.LatencyP99Ms), summary.Val(f.LatencyP999Ms)})
		}
	}
	sort.SliceStable(pts, func(i, j int) bool { return pts[i].x < pts[j].x })
	series := []chart.Series{{Title: "p50"}, {Title: "p99"}, {Title: "p99.9"}}
	for _, p := range pts {
		series[0].Points = append(series[0].Points, chart.Point{X: p.x, Y: p.p50})
		series[1].Points = append(series[1].Points, chart.Point{X: p.x, Y: p.p99})
		series[2].Points = append(series[2].Points, chart.Point{X: p.x, Y: p.p999})
	}
	// The capacity marked: one point, at its rate and the p99 of a step
	// there.
	for _, c := range s.Capacity {
		if c.Payload != size || c.CapacityRPS == nil {
			continue
		}
		for _, p := range pts {
			if p.x == *c.CapacityRPS {
				series = append(series, chart.Series{Title: "capacity " + report.N(c.CapacityRPS, 0) + " req/s", Points: []chart.Point{{X: p.x, Y: p.p99}}})
				break
			}
		}
	}
	ch.Series = series
	return ch
}
