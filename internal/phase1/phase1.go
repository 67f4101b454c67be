// Package phase1 summarizes and reports Phase 1: wrk against the
// fixed-payload server, one cell per payload size — can HTTP fill the link?
package phase1

import (
	"fmt"
	"strings"

	"csbench/internal/chart"
	"csbench/internal/hostdata"
	"csbench/internal/httpphase"
	"csbench/internal/report"
	"csbench/internal/rundir"
	"csbench/internal/summary"
	"csbench/internal/trust"
)

// ReportName is the report's file name in the run directory.
const ReportName = "Report_01-http-baseline.md"

// Phase implements cli.Phase for 01-http-baseline.
type Phase struct{}

// Summarize reads raw/<cell>.txt (wrk with the CSB_WRK_JSON hook) and the
// monitors for every cell.
func (Phase) Summarize(r *rundir.Run, s *summary.Summary) error {
	hosts := hostdata.Load(r.Dir)
	for _, p := range hosts.Problems {
		s.Notes = append(s.Notes, "monitor data: "+p)
	}
	basis := httpphase.FindBaseline(r, s)
	for _, rc := range r.Cells {
		c := summary.NewCell(rc)
		s.Notes = append(s.Notes, httpphase.Measure(r, s, hosts, rc, &c, basis)...)
		c.Verdict = httpphase.Verdict(s, &c, basis)
		s.Cells = append(s.Cells, c)
	}
	return nil
}

// Report writes Report_01-http-baseline.md and its chart.
func (Phase) Report(r *rundir.Run, s *summary.Summary) error {
	basis := httpphase.BasisFromLink(s)
	var d report.Doc
	report.Header(&d, s, "Phase 1 — HTTP baseline: can an HTTP server fill the link? (wrk)")

	d.H(2, "What HTTP delivers")
	d.P("%s", headline(s, basis))

	d.H(2, "Cells")
	var rows [][]string
	for i := range s.Cells {
		c := &s.Cells[i]
		m := c.Metrics
		rows = append(rows, trust.MarkRow([]string{
			"`" + c.Name + "`", "-t " + c.Params["threads"] + " -c " + c.Params["connections"], c.Params["duration_s"] + " s",
			report.N(m["rps"], 0), report.N(m["throughput_mbps"], 1), report.N(m["goodput_mbps"], 1), report.Pct(m["link_utilization"]),
			report.N(m["latency_p50_ms"], 2), report.N(m["latency_p90_ms"], 2), report.N(m["latency_p99_ms"], 2),
			report.N(m["latency_p99_9_ms"], 2), report.N(m["latency_max_ms"], 2), report.N(m["errors_total"], 0), c.Status,
		}, c, 3))
	}
	d.Table([]string{"payload", "wrk", "time", "RPS", "throughput Mbit/s", "goodput Mbit/s", "of basis",
		"p50 ms", "p90 ms", "p99 ms", "p99.9 ms", "max ms", "errors", "status"}, rows)
	d.P("Throughput counts every HTTP byte wrk read (status lines, headers, bodies), as iperf3 counts TCP payload, so the two compare directly; goodput counts the bodies of 2xx/3xx responses only. Throughput is compared with %s. Latencies are wrk's (from the `done()` hook, `lib/wrk/report.lua`; wrk's own text is kept beside it in `raw/<payload>.txt` and cross-checked); %s %s",
		basis.What, httpphase.WrkLatencyNote, warmupNote(s))
	trust.Section(&d, s.Cells)
	trust.TimelineChart(&d, r.Dir, s.GeneratedBy, s.Cells)

	d.H(2, "Verdict per cell")
	var vrows [][]string
	for i := range s.Cells {
		c := &s.Cells[i]
		if c.Verdict != nil {
			vrows = append(vrows, trust.MarkRow([]string{"`" + c.Name + "`", "**" + c.Verdict.Bound + "**", c.Verdict.Evidence}, c, 1))
		}
	}
	d.Table([]string{"payload", "bound by", "evidence"}, vrows)
	d.P("%s", httpphase.Rules(s))

	d.H(2, "CPU")
	var crows [][]string
	for i := range s.Cells {
		c := &s.Cells[i]
		m := c.Metrics
		crows = append(crows, trust.MarkRow([]string{"`" + c.Name + "`",
			report.N(m["server_cpu_pct"], 0), report.N(m["client_cpu_pct"], 0),
			report.N(m["server_cpu_max_core_pct"], 0), report.N(m["client_cpu_max_core_pct"], 0),
			report.N(m["server_proc_cpu_pct"], 0), report.N(m["client_proc_cpu_pct"], 0),
			report.N(m["server_rss_mb"], 1)}, c, 1))
	}
	d.Table([]string{"payload", "server host %", "client host %", "server busiest core %", "client busiest core %",
		"csb-server % of one CPU", "wrk % of one CPU", "csb-server RSS MB"}, crows)
	d.P("Host columns: mpstat's mean busy share of all CPUs over the cell (from its second second on). Process columns: pidstat, summed over the process's threads, in %% of one CPU (so up to 100 x CPUs).")

	d.H(2, "Errors")
	var erows [][]string
	for i := range s.Cells {
		c := &s.Cells[i]
		m := c.Metrics
		erows = append(erows, trust.MarkRow([]string{"`" + c.Name + "`", report.N(m["requests"], 0), report.N(m["errors_connect"], 0),
			report.N(m["errors_read"], 0), report.N(m["errors_write"], 0), report.N(m["errors_timeout"], 0), report.N(m["errors_status"], 0)}, c, 1))
	}
	d.Table([]string{"payload", "responses", "connect", "read", "write", "timeout", "non-2xx/3xx"}, erows)

	d.H(2, "The hosts' own counters (sar, nstat, sockstat over each cell)")
	var hrows [][]string
	for i := range s.Cells {
		c := &s.Cells[i]
		m := c.Metrics
		hrows = append(hrows, trust.MarkRow([]string{"`" + c.Name + "`", report.N(m["server_nic_tx_mbps"], 0), report.N(m["server_nic_tx_pps"], 0),
			report.N(m["server_retrans_segs"], 0), report.N(m["client_retrans_segs"], 0),
			report.N(m["server_listen_overflows"], 0), report.N(m["server_listen_drops"], 0), report.N(m["server_estab_resets"], 0),
			report.N(m["server_time_wait"], 0), report.N(m["client_time_wait"], 0)}, c, 1))
	}
	d.Table([]string{"payload", "server NIC tx Mbit/s (sar)", "server NIC tx packets/s", "server TcpRetransSegs", "client TcpRetransSegs",
		"server ListenOverflows", "server ListenDrops", "server EstabResets", "server TIME_WAIT after", "client TIME_WAIT after"}, hrows)
	d.P("The NIC columns are the kernel's own counters of the server's benchmark interface (sar: frames with their Ethernet header, mean over the cell): an independent check of wrk's figure, and the packet rate that small payloads are bound by.")

	d.H(2, "Chart")
	ch := &chart.Chart{Name: "throughput", Title: "HTTP throughput per payload (wrk, bytes incl. headers)", XLabel: "payload", YLabel: "Mbit/s",
		Bars: true, HLine: summary.Val(basis.Mbps), HLineLbl: basis.What}
	tp := chart.Series{Title: "throughput"}
	gp := chart.Series{Title: "goodput (bodies)"}
	for _, c := range s.Cells {
		tp.Points = append(tp.Points, chart.Point{Label: c.Name, Y: summary.Val(c.Metrics["throughput_mbps"])})
		gp.Points = append(gp.Points, chart.Point{Label: c.Name, Y: summary.Val(c.Metrics["goodput_mbps"])})
	}
	ch.Series = []chart.Series{tp, gp}
	svg, skipped := ch.Render(r.Dir, s.GeneratedBy)
	report.Chart(&d, ch.Title, svg, skipped)

	report.Notes(&d, r.Dir)
	report.Environment(&d, s)
	report.Files(&d)
	d.P("`raw/<payload>.txt` is wrk's stdout and stderr with the hook's `CSB_WRK_JSON` line; `raw/warmup/` the unrecorded warm-up runs; `raw/headers/` one response's status line and headers per payload (curl); `monitors/client/pidstat-loadgen-<payload>.txt` pidstat on wrk during the cell.")
	return report.Write(r.Dir, ReportName, &d)
}

func warmupNote(s *summary.Summary) string {
	if len(s.Cells) == 0 {
		return ""
	}
	w := s.Cells[0].Params["warmup_s"]
	if w == "" || w == "0" {
		return "No warm-up preceded the cells."
	}
	return fmt.Sprintf("Each cell was preceded by %s s of the same wrk load, not recorded (its output is in `raw/warmup/`).", w)
}

// headline is the phase's one-paragraph finding.
func headline(s *summary.Summary, basis httpphase.Basis) string {
	var parts []string
	for _, c := range s.Cells {
		m := c.Metrics
		if m["rps"] == nil {
			parts = append(parts, fmt.Sprintf("%s: not measured (%s)", c.Name, c.Status))
			continue
		}
		of := ""
		if m["link_utilization"] != nil {
			of = " = " + report.Pct(m["link_utilization"]) + " of the basis"
		}
		bound := ""
		if c.Verdict != nil {
			bound = ", " + c.Verdict.Bound
		}
		mk := ""
		if x := trust.Marks(&c); x != "" {
			mk = " " + x
		}
		parts = append(parts, fmt.Sprintf("**%s**%s: %s RPS, %s Mbit/s%s (p99 %s ms%s)", c.Name, mk, report.N(m["rps"], 0),
			report.N(m["throughput_mbps"], 1), of, report.N(m["latency_p99_ms"], 2), bound))
	}
	if len(parts) == 0 {
		return "No cell was measured: see the status above and `logs/console.log`."
	}
	line := strings.Join(parts, "; ") + ". Throughput is compared with " + basis.What + "."
	atLink := 0
	for _, c := range s.Cells {
		if c.Verdict != nil && c.Verdict.Bound == httpphase.BoundNetwork {
			atLink++
		}
	}
	switch {
	case basis.Mbps == nil:
		line += " With no link, every figure here measures CPU and memory."
	case atLink > 0:
		line += fmt.Sprintf(" %d of %d payloads fill the path (≥ %.0f%% of the basis): HTTP with a minimal server can reach what raw TCP does.", atLink, len(s.Cells), httpphase.AtLink*100)
	default:
		line += " No payload fills the path: see the verdicts for what held each one back."
	}
	return line + " For comparison, the seed's 1 GbE lab: 1 KB ~101k RPS, 10 KB ~11.3k RPS, 100 KB ~1.15k RPS, all at ~110-112 MB/s."
}
