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
	m := map[string]*float64{}
	ok, err := mergedPercentiles(clients, "latency", "latency_", m, "p50_ms", "p99_ms", "max_ms")
	if !ok || err != nil {
		t.Fatalf("merged: %v %v", ok, err)
	}
	for k, q := range map[string]float64{"latency_p50_ms": 0.5, "latency_p99_ms": 0.99, "latency_max_ms": 1} {
		if want := connresult.QuantileMs(&all, q); m[k] == nil || *m[k] != *want {
			t.Errorf("%s = %v, want %v (all samples)", k, m[k], *want)
		}
	}
	if _, ok := m["latency_p90_ms"]; ok {
		t.Error("a percentile that was not asked for was set")
	}
	clients[2].Hists = map[string]*connresult.HistDump{}
	if ok, _ := mergedPercentiles(clients, "latency", "latency_", map[string]*float64{}, "p99_ms"); ok {
		t.Error("merged although one process has no histogram")
	}
}
