package phase3

import (
	"fmt"

	"csbench/internal/connclient"
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

// mergeHists merges the histogram name of every client; ok is false when
// one of them has none (then nothing can be merged exactly).
func mergeHists(clients []*Client, name string) (*connclient.Histogram, bool, error) {
	var dumps []*connclient.HistDump
	for _, cl := range clients {
		d := cl.Hists[name]
		if d == nil {
			return nil, false, nil
		}
		dumps = append(dumps, d)
	}
	h, err := connclient.MergeDumps(dumps)
	if err != nil {
		return nil, false, fmt.Errorf("histogram %s: %w", name, err)
	}
	return h, true, nil
}

// mergedPercentiles sets prefix+suffix for each percentile of the merged
// histogram name; it returns false when the clients carry no histogram.
func mergedPercentiles(clients []*Client, name, prefix string, m map[string]*float64, suffixes ...string) (bool, error) {
	h, ok, err := mergeHists(clients, name)
	if !ok {
		return false, err
	}
	want := map[string]bool{}
	for _, s := range suffixes {
		want[s] = true
	}
	for _, q := range quantiles {
		if want[q.suffix] {
			m[prefix+q.suffix] = connclient.QuantileMs(h, q.q)
		}
	}
	return true, nil
}
