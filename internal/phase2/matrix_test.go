package phase2

import (
	"math"
	"testing"

	"csbench/internal/summary"
)

func cell(payload, conc string, rps, mean float64) summary.Cell {
	return summary.Cell{Name: payload + "-c" + conc, Status: "ok",
		Params:  map[string]string{"payload": payload, "concurrency": conc},
		Metrics: map[string]*float64{"rps": summary.F(rps), "latency_mean_ms": summary.F(mean)}}
}

// The seed's shape: 1k plateaus at c64, 100k is flat from c16; past the
// knee the added connections queue.
func TestPlateauAndLittle(t *testing.T) {
	s := &summary.Summary{Cells: []summary.Cell{
		cell("100k", "16", 1150, 13.9), cell("100k", "64", 1160, 55.2), cell("100k", "256", 1140, 224.5),
		cell("1k", "16", 60000, 0.27), cell("1k", "64", 99000, 0.65), cell("1k", "256", 101000, 2.5),
		cell("1k", "1024", 97000, 15),
	}}
	s.Cells[len(s.Cells)-1].Status = "refused"
	groups := Groups(s)
	if groups[0].Payload != "1k" || groups[len(groups)-1].Payload != "100k" {
		t.Fatalf("groups not ordered by payload size: %s ... %s", groups[0].Payload, groups[len(groups)-1].Payload)
	}
	ps := Plateaus(groups)
	if len(ps) != 2 || ps[0].Knee.Conc != 64 || ps[0].Best.Conc != 256 || ps[1].Knee.Conc != 16 {
		t.Fatalf("plateaus: 1k knee c%d best c%d, 100k knee c%d", ps[0].Knee.Conc, ps[0].Best.Conc, ps[1].Knee.Conc)
	}
	want := map[string]string{"1k-c16": "service", "1k-c64": "service", "1k-c256": "queueing", "1k-c1024": "",
		"100k-c16": "service", "100k-c64": "queueing", "100k-c256": "queueing"}
	for _, g := range groups {
		lt := LittleOf(g, ps[map[string]int{"1k": 0, "100k": 1}[g.Payload]])
		if lt.Reading != want[g.Rep.Name] {
			t.Errorf("%s: reading %q, want %q", g.Rep.Name, lt.Reading, want[g.Rep.Name])
		}
	}
	// 100k at c256: W = 256 / 1140 s; at the knee W = 16 / 1150 s.
	lt := LittleOf(groups[len(groups)-1], ps[1])
	if w := 256.0 / 1140 * 1000; math.Abs(*lt.WMs-w) > 1e-9 {
		t.Errorf("W %v, want %v", *lt.WMs, w)
	}
	if q := 1 - (16.0/1150)/(256.0/1140); math.Abs(*lt.QueueShare-q) > 1e-9 {
		t.Errorf("queue share %v, want %v", *lt.QueueShare, q)
	}
	// 1k at c16: 60000 x 0.27 ms = 16.2 in flight: consistent.
	if lt := LittleOf(groups[0], ps[0]); lt.Consistency != "" || math.Abs(*lt.Ratio-60000*0.27/1000/16) > 1e-9 {
		t.Errorf("1k-c16: %+v", lt)
	}
}

func TestLittleShortMeansTheClientHeldBack(t *testing.T) {
	s := &summary.Summary{Cells: []summary.Cell{cell("1k", "256", 50000, 2.0)}}
	g := Groups(s)
	lt := LittleOf(g[0], Plateaus(g)[0])
	if lt.Consistency != "short" { // 50000 x 2 ms = 100 in flight of 256
		t.Errorf("consistency %q, want short", lt.Consistency)
	}
}

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		xs   []float64
		want float64
	}{{[]float64{3}, 3}, {[]float64{1, 3}, 2}, {[]float64{1, 2, 10}, 2}, {[]float64{1, 2, 3, 10}, 2.5}} {
		if got := median(tc.xs); got != tc.want {
			t.Errorf("median(%v) = %v, want %v", tc.xs, got, tc.want)
		}
	}
}
