package phase3

import (
	"fmt"

	"csbench/internal/connresult"
)

// Percentile bases: how a cell's percentiles were obtained (details
// "percentile_basis"; decisions read the code).
const (
	// BasisMerged: the histograms of every client process merged bucket by
	// bucket: exactly the percentiles of all the samples.
	BasisMerged = "merged_histogram"
	// BasisOneProcess: one client process: its own percentiles, exact.
	BasisOneProcess = "one_process"
	// BasisLargest: several processes without histograms (results written
	// before connclient dumped them): the largest of their percentiles, an
	// upper bound, not the run's percentile.
	BasisLargest = "largest_of_processes"
)

// quantiles are the percentiles a merged histogram gives, by metric suffix.
var quantiles = []struct {
	suffix string
	q      float64
}{{"p50_ms", 0.50}, {"p90_ms", 0.90}, {"p99_ms", 0.99}, {"p99_9_ms", 0.999}, {"max_ms", 1}}

// mergedPercentiles sets prefix+suffix for each percentile of the merged
// histogram name (connresult.MergedQuantilesMs); it returns false when a
// client carries no histogram.
func mergedPercentiles(clients []*Client, name, prefix string, m map[string]*float64, suffixes ...string) (bool, error) {
	dumps := make([]*connresult.HistDump, len(clients))
	for i, cl := range clients {
		dumps[i] = cl.Hists[name]
	}
	want := map[string]bool{}
	for _, s := range suffixes {
		want[s] = true
	}
	var keys []string
	var qs []float64
	for _, q := range quantiles {
		if want[q.suffix] {
			keys, qs = append(keys, prefix+q.suffix), append(qs, q.q)
		}
	}
	vals, ok, err := connresult.MergedQuantilesMs(dumps, qs...)
	if err != nil {
		return false, fmt.Errorf("histogram %s: %w", name, err)
	}
	if !ok {
		return false, nil
	}
	for i, k := range keys {
		m[k] = vals[i]
	}
	return true, nil
}
