package phase3

import (
	"math/rand"
	"testing"

	"csbench/internal/connresult"
)

// A scenario's percentiles over several processes are those of all their
// samples (their histograms merged), not the largest of theirs; without
// histograms (older results) the basis says the figure is not exact.
func TestMergedPercentilesOfProcesses(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	var all connresult.Histogram
	var clients []*Client
	for p := 0; p < 6; p++ {
		var h connresult.Histogram
		for i := 0; i < 1000+p*500; i++ {
			v := int64(200 + rng.Intn(800*(p+1)))
			h.Record(v)
			all.Record(v)
		}
		clients = append(clients, &Client{Hists: map[string]*connresult.HistDump{"latency": h.Dump()}})
	}
	var f LoadFigures
	ok, err := mergedPercentiles(clients, "latency", percentile{0.5, &f.LatencyP50Ms}, percentile{0.99, &f.LatencyP99Ms}, percentile{1, &f.LatencyMaxMs})
	if !ok || err != nil {
		t.Fatalf("merged: %v %v", ok, err)
	}
	for k, x := range map[string]struct {
		q float64
		v *float64
	}{"latency_p50_ms": {0.5, f.LatencyP50Ms}, "latency_p99_ms": {0.99, f.LatencyP99Ms}, "latency_max_ms": {1, f.LatencyMaxMs}} {
		if want := connresult.QuantileMs(&all, x.q); x.v == nil || *x.v != *want {
			t.Errorf("%s = %v, want %v (all samples)", k, x.v, *want)
		}
	}
	if f.LatencyP90Ms != nil {
		t.Error("a percentile that was not asked for was set")
	}
	clients[2].Hists = map[string]*connresult.HistDump{}
	if ok, _ := mergedPercentiles(clients, "latency", percentile{0.99, &f.LatencyP99Ms}); ok {
		t.Error("merged although one process has no histogram")
	}
}
