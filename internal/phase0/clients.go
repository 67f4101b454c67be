package phase0

import (
	"fmt"
	"math"
	"strconv"

	"csbench/internal/clienthosts"
	"csbench/internal/decimal"
	"csbench/internal/parse"
	"csbench/internal/report"
	"csbench/internal/rundir"
	"csbench/internal/summary"
)

// span is one client's measured intervals on the controller's clock.
type span struct {
	ivs     []parse.Iperf3Interval
	t0Ms    float64 // its measured time 0 (after -O)
	firstMs float64 // when its first measured interval began
	lastMs  float64 // when its last one ended
}

// measureIperf3 fills a cell's figures f (whose CPU it reads) and its
// per-client table from its client hosts (one iperf3 per client, all at
// once): every client's own figures, and the cell's: with one client, its
// own (so it returns its result, whose streams and intervals the cell
// shows); with several, the sum over the clients of the bytes each
// received (its iperf3 intervals) within the window in which every client
// was measuring, over that window. An interval cut by the window counts in
// proportion (iperf3 reports per second, nothing finer).
func measureIperf3(r *rundir.Run, s *summary.Summary, rc rundir.Cell, c *summary.Cell, f *Figures, set *clienthosts.Set) (*parse.Iperf3Result, []string) {
	var notes []string
	omitS, _ := strconv.ParseFloat(rc.Params["omit_s"], 64)
	spans := make([]span, set.N())
	var timings []clienthosts.Timing
	var results []*parse.Iperf3Result
	var sumOwn, sumSender, sumRetr float64
	ok := true
	// cfs[i] is c.Clients[i]'s figures, put into its table however the
	// cell ends.
	cfs := make([]ClientFigures, 0, set.N())
	defer func() {
		for i := range cfs {
			summary.PutFigures(c.Clients[i].Metrics, &cfs[i])
		}
	}()
	for i, cl := range set.Clients {
		cpu := f.CPU[cl.Label]
		cfs = append(cfs, ClientFigures{HostCPUPct: cpu.Pct, HostCPUMaxCorePct: cpu.MaxCorePct})
		c.Clients = append(c.Clients, summary.ClientCell{Label: cl.Label, Metrics: map[string]*float64{}})
		raw := set.RawPath(r.Dir, "", cl.Label, rc.Name+".json")
		t, more := summary.ClientTiming(set, rc, raw, "iperf3", &c.Clients[len(c.Clients)-1])
		notes = append(notes, more...)
		if t == nil {
			ok = false
		} else {
			timings = append(timings, *t)
		}
		res, err := readIperf3(raw)
		if err != nil {
			c.SetRawError(r.Dir, raw, err)
			return nil, notes
		}
		results = append(results, res)
		cfs[i].Iperf3Figures = Iperf3Figures{
			ThroughputMbps: mbps(res.ReceiverBitsPerSecond), SenderMbps: mbps(res.SenderBitsPerSecond),
			Retransmits: i64(res.Retransmits), ClientCPUPct: round1(res.HostCPUTotalPercent), ServerCPUPct: round1(res.RemoteCPUTotalPercent),
		}
		sumOwn += summary.Val(res.ReceiverBitsPerSecond)
		sumSender += summary.Val(res.SenderBitsPerSecond)
		sumRetr += summary.Val(i64(res.Retransmits))
		omitted := 0.0
		for _, iv := range res.Intervals {
			if iv.Omitted {
				omitted += iv.EndS - iv.StartS
			} else {
				spans[i].ivs = append(spans[i].ivs, iv)
			}
		}
		if len(spans[i].ivs) == 0 {
			ok = false
			notes = append(notes, fmt.Sprintf("cell %s: %s: iperf3 printed no measured interval", rc.Name, cl.Label))
			continue
		}
		// iperf3 restarts its clock when the -O period ends, so the
		// measured intervals start at 0, omit_s after the client started.
		// Each measured interval holds the bytes since the previous one
		// ended: iperf3 sometimes stamps the first one with a start just
		// before its end (a 0.1 ms "interval" holding a second's bytes),
		// so its start is taken as 0, never as printed.
		for j := range spans[i].ivs {
			if j == 0 {
				spans[i].ivs[j].StartS = 0
			} else {
				spans[i].ivs[j].StartS = spans[i].ivs[j-1].EndS
			}
		}
		if omitS <= 0 {
			omitS = omitted
		}
		if t != nil && t.StartMs != nil {
			off := 0.0
			if cl.ClockOffsetMs != nil {
				off = *cl.ClockOffsetMs
			}
			spans[i].t0Ms = float64(*t.StartMs) - off + omitS*1000
			spans[i].firstMs = spans[i].t0Ms
			spans[i].lastMs = spans[i].t0Ms + spans[i].ivs[len(spans[i].ivs)-1].EndS*1000
		}
	}
	if set.N() == 1 && len(results) == 1 {
		// One client's figures are the cell's: its own run, as iperf3 gave it.
		f.Iperf3Figures = cfs[0].Iperf3Figures
		f.LinkUtilization = utilization(s, f.ThroughputMbps)
		return results[0], notes
	}
	if len(timings) == set.N() {
		if w, err := clienthosts.Overlap(set.Clients, timings, omitS*1000); err != nil {
			notes = append(notes, "cell "+rc.Name+": "+err.Error())
			ok = false
		} else {
			c.Overlap = &summary.Overlap{FromMs: w.FromMs, ToMs: w.ToMs, S: decimal.Round(w.S(), 3),
				StartSpreadMs: decimal.Round(w.StartSpreadMs, 1), EndSpreadMs: decimal.Round(w.EndSpreadMs, 1), WarmupS: omitS}
			for i, sp := range w.Spans {
				c.Clients[i].StartMs, c.Clients[i].EndMs = summary.F(sp.StartMs), summary.F(sp.EndMs)
			}
		}
	}
	if !ok || c.Overlap == nil || rc.Status != "ok" {
		return nil, notes
	}
	// The window in which every client was measuring: from the latest
	// first interval to the earliest last one.
	from, to := math.Inf(-1), math.Inf(1)
	for _, sp := range spans {
		from, to = math.Max(from, sp.firstMs), math.Min(to, sp.lastMs)
	}
	if to <= from {
		notes = append(notes, fmt.Sprintf("cell %s: the clients' measured intervals do not overlap", rc.Name))
		return nil, notes
	}
	total := 0.0
	for i, sp := range spans {
		bits := 0.0
		for _, iv := range sp.ivs {
			a, b := sp.t0Ms+iv.StartS*1000, sp.t0Ms+iv.EndS*1000
			if cut := math.Min(b, to) - math.Max(a, from); cut > 0 && b > a {
				bits += float64(iv.Bytes) * 8 * cut / (b - a)
			}
		}
		rate := bits / ((to - from) / 1000)
		cfs[i].OverlapMbps = mbps(&rate)
		total += rate
	}
	c.Overlap.FromMs, c.Overlap.ToMs, c.Overlap.S = from, to, math.Round(to-from)/1000
	f.ThroughputMbps = mbps(&total)
	f.OwnRuns = &OwnRuns{ThroughputOwnRunsMbps: mbps(&sumOwn)}
	f.SenderMbps = mbps(&sumSender)
	f.Retransmits = summary.F(sumRetr)
	f.LinkUtilization = utilization(s, f.ThroughputMbps)
	return nil, notes
}

// utilization is a throughput as a share of the link's TCP ceiling; nil
// without either.
func utilization(s *summary.Summary, mbps *float64) *float64 {
	if ceiling := s.Link.TCPCeilingMbps; ceiling != nil && mbps != nil {
		return summary.F(decimal.Round(*mbps / *ceiling, 3))
	}
	return nil
}

// clientsSection is the per-client table of an N-client run.
func clientsSection(d *report.Doc, s *summary.Summary) {
	if s.Clients == nil {
		return
	}
	d.H(2, fmt.Sprintf("Per client (%d client hosts, one iperf3 each, all at once)", s.Clients.N))
	var rows [][]string
	for i := range s.Cells {
		c := &s.Cells[i]
		spread := "—"
		if o := c.Overlap; o != nil {
			spread = fmt.Sprintf("start %s ms, end %s ms apart; window %s s", report.N(&o.StartSpreadMs, 0), report.N(&o.EndSpreadMs, 0), report.N(&o.S, 3))
		}
		for _, cc := range c.Clients {
			var f ClientFigures
			summary.Figures(cc.Metrics, &f)
			rows = append(rows, []string{"`" + c.Name + "`", cc.Label, report.N(f.OverlapMbps, 1), report.N(f.ThroughputMbps, 1),
				report.N(f.SenderMbps, 1), report.N(f.Retransmits, 0), report.N(f.ClientCPUPct, 1),
				report.N(f.HostCPUMaxCorePct, 0), report.N(cc.StartLagMs, 0), spread})
		}
	}
	d.Table([]string{"cell", "client", "in the window Mbit/s", "own run Mbit/s (receiver)", "own run sender Mbit/s", "retransmits",
		"iperf3 CPU client %", "host busiest core %", "started after the agreed moment, ms", "clients apart"}, rows)
	d.P("A cell's receiver throughput is the **sum over the clients of what each moved within the window in which every client was measuring** (from the latest first measured interval, after `-O`, to the earliest last one; each client's times on the controller's clock: its own less its clock offset), over that window: never over the union of the clients' runs. The bytes are iperf3's per-second intervals as each client measured them (the receiver with `-R`, the sender without); an interval cut by the window counts in proportion. Each interval is placed from the moment `csb start-at` started iperf3, so iperf3's connection setup (milliseconds) shifts it by that much. `throughput_own_runs_mbps` in `summary.json` is the plain sum of the clients' own whole-run figures, for comparison.")
}
