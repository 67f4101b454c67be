package phase1

import (
	"strings"
	"testing"

	"csbench/internal/golden"
	"csbench/internal/httpphase"
	"csbench/internal/report"
	"csbench/internal/summary"
)

// Repetitions: the spread section and the headline give medians, ranges
// and spread; a CPU-bound payload run once is called a single sample.
func TestSpreadSection(t *testing.T) {
	cell := func(name, payload, bytes, rep string, rps float64, bound string) summary.Cell {
		return summary.Cell{Name: name, Status: "ok", Params: map[string]string{"payload": payload, "payload_bytes": bytes, "rep": rep},
			Metrics: map[string]*float64{"rps": summary.F(rps), "throughput_mbps": summary.F(rps * 8.6 / 1000), "latency_p99_ms": summary.F(rps / 10000)},
			Verdict: &summary.Verdict{Code: bound, Bound: bound}}
	}
	s := &summary.Summary{Cells: []summary.Cell{
		cell("100k-r2", "100k", "102400", "2", 1163, httpphase.BoundNetwork),
		cell("1k-r1", "1k", "1024", "1", 58230, httpphase.BoundShared),
		cell("1k-r3", "1k", "1024", "3", 63291, httpphase.BoundShared),
		cell("100k-r1", "100k", "102400", "1", 1165, httpphase.BoundNetwork),
		cell("1k-r2", "1k", "1024", "2", 60500, httpphase.BoundShared),
		cell("100k-r3", "100k", "102400", "3", 1149, httpphase.BoundNetwork),
	}}
	var d report.Doc
	spreadSection(&d, s)
	d.P("%s", headline(s, httpphase.Basis{What: "the basis"}))
	golden.Check(t, "spread.md", d.String())
	one := &summary.Summary{Cells: []summary.Cell{cell("1k", "1k", "1024", "1", 82019, httpphase.BoundShared)}}
	var d1 report.Doc
	spreadSection(&d1, one)
	if !strings.Contains(d1.String(), "`1k` is a single sample of a CPU-bound cell") {
		t.Errorf("no single-sample sentence:\n%s", d1.String())
	}
}
