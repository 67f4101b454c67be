// Package phase0 summarizes and reports Phase 0: iperf3's raw TCP ceiling of
// the path, one and four streams, both directions.
package phase0

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"csbench/internal/chart"
	"csbench/internal/decimal"
	"csbench/internal/hostdata"
	"csbench/internal/parse"
	"csbench/internal/report"
	"csbench/internal/rundir"
	"csbench/internal/summary"
	"csbench/internal/trust"
)

// ReportName is the report's file name in the run directory.
const ReportName = "Report_00-iperf3.md"

// AtCeiling is the share of the TCP ceiling at which a cell counts as
// bound by the link.
const AtCeiling = 0.95

// Phase implements cli.Phase for 00-iperf3.
type Phase struct{}

func mbps(bps *float64) *float64 {
	if bps == nil {
		return nil
	}
	return summary.F(math.Round(*bps/1e4) / 100)
}

func i64(p *int64) *float64 {
	if p == nil {
		return nil
	}
	return summary.F(float64(*p))
}

// Summarize reads every client host's raw/<label>/<cell>.json for every
// cell (raw/<cell>.json in a run made before each client had its own
// directory) and the monitors.
func (Phase) Summarize(r *rundir.Run, s *summary.Summary) error {
	hosts := hostdata.Load(r.Dir)
	for _, p := range hosts.Problems {
		s.Notes = append(s.Notes, "monitor data: "+p)
	}
	set := s.ClientSet()
	for _, rc := range r.Cells {
		c := summary.NewCell(rc)
		f := Figures{CPU: hosts.CPU(rc)}
		res, notes := measureIperf3(r, s, rc, &c, &f, set)
		s.Notes = append(s.Notes, notes...)
		if res != nil && len(res.Streams) > 1 {
			var streams []Stream
			for i, st := range res.Streams {
				streams = append(streams, Stream{Stream: i + 1, ThroughputMbps: mbps(st.ReceiverBitsPerSecond),
					SenderMbps: mbps(st.SenderBitsPerSecond), Retransmits: i64(st.Retransmits)})
			}
			c.Details = map[string]any{"streams": streams}
		}
		f.NIC = hosts.NIC(rc, nics(s))
		var problems []string
		f.Counters, problems = hosts.Counters(rc)
		for _, p := range problems {
			s.Notes = append(s.Notes, "cell "+rc.Name+": "+p)
		}
		summary.PutFigures(c.Metrics, &f)
		c.Verdict = verdict(s, c.Status, &f)
		c.Trust = trust.Disturb(hosts, rc, s.Lab, trust.Threshold(r))
		// Steadiness is judged on the one sender's NIC: the server's with
		// -R; without, the client's when one client sends (with several
		// there is no one sender to judge).
		omit, _ := strconv.Atoi(rc.Params["omit_s"])
		snd := trust.Sender{Host: "server", NIC: s.Hosts["server"].NIC}
		if rc.Params["reverse"] != "1" {
			l := set.Clients[0].Label
			snd = trust.Sender{Host: l, NIC: s.Hosts[l].NIC}
		}
		if rc.Params["reverse"] == "1" || set.N() == 1 {
			c.Trust = trust.Steady(c.Trust, hosts, rc, snd, omit, trust.CVThreshold(r))
		}
		if res != nil && c.Trust != nil && c.Trust.Steadiness != nil {
			for _, iv := range res.Intervals {
				if !iv.Omitted {
					c.Trust.Steadiness.ToolMbps = append(c.Trust.Steadiness.ToolMbps, math.Round(iv.BitsPerSecond/1e4)/100)
				}
			}
			if len(c.Trust.Steadiness.ToolMbps) > 0 {
				c.Trust.Steadiness.ToolSource = "iperf3 intervals (client side: sender, or receiver with -R)"
			}
		}
		s.Cells = append(s.Cells, c)
	}
	return nil
}

func round1(p *float64) *float64 {
	if p == nil {
		return nil
	}
	return summary.F(decimal.Round(*p, 1))
}

func readIperf3(path string) (*parse.Iperf3Result, error) {
	f, err := rundir.Open(path)
	if err != nil {
		return nil, fmt.Errorf("no iperf3 output: %w", err)
	}
	defer f.Close()
	return parse.ParseIperf3(f)
}

// nics maps each monitored host to its benchmark interface.
func nics(s *summary.Summary) map[string]string {
	n := map[string]string{"server": s.Hosts["server"].NIC, "client": s.Hosts["client"].NIC}
	if s.Clients != nil {
		for _, h := range s.Clients.Hosts {
			n[h.Label] = h.NIC
		}
	}
	return n
}

func direction(c *summary.Cell) string {
	if c.Params["reverse"] == "1" {
		return "server → client"
	}
	return "client → server"
}

// Report writes Report_00-iperf3.md and the chart.
func (Phase) Report(r *rundir.Run, s *summary.Summary) error {
	var d report.Doc
	report.Header(&d, s, "Phase 0 — iperf3 baseline: raw TCP between the hosts")
	figs := figuresOf(s)
	d.H(2, "What the link delivers")
	d.P("%s", headline(s, figs))

	d.H(2, "Cells")
	var rows [][]string
	for i := range s.Cells {
		c, f := &s.Cells[i], &figs[i]
		rows = append(rows, trust.MarkRow([]string{
			"`" + c.Name + "`", c.Params["streams"], direction(c), c.Params["duration_s"] + " s",
			report.N(f.ThroughputMbps, 1), report.N(f.SenderMbps, 1), report.N(f.Retransmits, 0),
			report.Pct(f.LinkUtilization), report.N(f.ClientCPUPct, 1), report.N(f.ServerCPUPct, 1),
			report.N(f.CPU["client"].Pct, 0), report.N(f.CPU["server"].Pct, 0), c.Status,
		}, c, 4))
	}
	d.Table([]string{"cell", "streams", "direction", "time", "receiver Mbit/s", "sender Mbit/s", "retransmits",
		"of TCP ceiling", "iperf3 CPU client %", "iperf3 CPU server %", "client host CPU %", "server host CPU %", "status"}, rows)
	clientsSection(&d, s)
	trust.Section(&d, s.Cells)
	trust.TimelineChart(&d, r.Dir, s.GeneratedBy, s.Cells)
	d.P("Receiver throughput is the figure quoted (iperf3's `sum_received`), after the first %s s were omitted (`-O`). iperf3's CPU columns are its own measure of each end (`cpu_utilization_percent`, %% of one CPU summed over user and system); the host CPU columns are mpstat's mean busy %% of all CPUs over the cell.", omit(s))

	var streamRows [][]string
	for _, c := range s.Cells {
		streams, _ := c.Details["streams"].([]Stream)
		for _, st := range streams {
			streamRows = append(streamRows, []string{"`" + c.Name + "`", fmt.Sprint(st.Stream),
				report.N(st.ThroughputMbps, 1), report.N(st.SenderMbps, 1), report.N(st.Retransmits, 0)})
		}
	}
	if len(streamRows) > 0 {
		d.H(3, "Streams of the multi-stream cells")
		d.Table([]string{"cell", "stream", "receiver Mbit/s", "sender Mbit/s", "retransmits"}, streamRows)
	}

	trust.VerdictSection(&d, s, "cell")

	d.H(2, "The hosts' own counters (sar, nstat over each cell)")
	var hrows [][]string
	for i := range s.Cells {
		c, f := &s.Cells[i], &figs[i]
		srvNIC, cliNIC := f.NIC["server"], f.NIC["client"]
		srv, cli := f.Counters["server"], f.Counters["client"]
		hrows = append(hrows, trust.MarkRow([]string{"`" + c.Name + "`",
			report.N(srvNIC.TxMbps, 0) + " / " + report.N(srvNIC.RxMbps, 0),
			report.N(cliNIC.TxMbps, 0) + " / " + report.N(cliNIC.RxMbps, 0),
			report.N(srv.RetransSegs, 0), report.N(cli.RetransSegs, 0),
			report.N(srv.ListenOverflows, 0), report.N(srv.EstabResets, 0), report.N(cli.EstabResets, 0)}, c, 1))
	}
	d.Table([]string{"cell", "server NIC tx / rx Mbit/s (sar)", "client NIC tx / rx Mbit/s (sar)", "server TcpRetransSegs", "client TcpRetransSegs", "server ListenOverflows", "server EstabResets", "client EstabResets"}, hrows)
	d.P("The NIC columns are the kernel's own interface counters (sar, frames including their Ethernet header, mean over the cell): an independent check of iperf3's figure.")

	d.H(2, "Chart")
	ch := &chart.Chart{Name: "throughput", Title: "iperf3 receiver throughput per cell", XLabel: "cell", YLabel: "Mbit/s",
		Bars: true, HLine: summary.Val(s.Link.TCPCeilingMbps), HLineLbl: "TCP ceiling " + report.N(s.Link.TCPCeilingMbps, 1) + " Mbit/s"}
	ser := chart.Series{Title: "receiver throughput"}
	for i, c := range s.Cells {
		ser.Points = append(ser.Points, chart.Point{Label: c.Name, Y: summary.Val(figs[i].ThroughputMbps)})
	}
	ch.Series = []chart.Series{ser}
	svg, skipped := ch.Render(r.Dir, s.GeneratedBy)
	report.Chart(&d, ch.Title, svg, skipped)

	report.Notes(&d, r.Dir)
	report.Environment(&d, s)
	report.Files(&d)
	return report.Write(r.Dir, ReportName, &d)
}

func omit(s *summary.Summary) string {
	if len(s.Cells) > 0 {
		return s.Cells[0].Params["omit_s"]
	}
	return "?"
}

// headline is the phase's one-paragraph finding; figs are the cells'
// figures.
func headline(s *summary.Summary, figs []Figures) string {
	measured := false
	for _, f := range figs {
		measured = measured || f.ThroughputMbps != nil
	}
	if !measured {
		return "No cell measured a throughput: see the status above and `logs/console.log`."
	}
	var parts []string
	for i, c := range s.Cells {
		parts = append(parts, fmt.Sprintf("%s %s Mbit/s", c.Name, report.N(figs[i].ThroughputMbps, 0)))
	}
	line := "Receiver throughput: " + strings.Join(parts, ", ") + "."
	if s.Link.TCPCeilingMbps == nil {
		return line + " There is no link to compare with (" + s.Link.CeilingBasis + ")."
	}
	atLink := 0
	for _, c := range s.Cells {
		if c.Verdict != nil && c.Verdict.Code == CodeLink {
			atLink++
		}
	}
	if atLink == len(s.Cells) {
		return line + fmt.Sprintf(" Every cell is within %.0f%% of the %s Mbit/s TCP ceiling: the path itself can be filled, so when HTTP falls short, look at the application, the client, the server and the OS first.", (1-AtCeiling)*100, report.N(s.Link.TCPCeilingMbps, 1))
	}
	return line + fmt.Sprintf(" %d of %d cells reach %.0f%% of the %s Mbit/s TCP ceiling: see the verdicts below before trusting any HTTP figure on this path.", atLink, len(s.Cells), AtCeiling*100, report.N(s.Link.TCPCeilingMbps, 1))
}
