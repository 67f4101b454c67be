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

// percentile is a quantile of a merged histogram (0.5, ..., 1: the
// largest) and the figure it sets, ms.
type percentile struct {
	q   float64
	dst **float64
}

// merge is a histogram connclient dumped (connect, first_connect,
// request, latency, service, sender_lag) and the percentiles taken of it.
type merge struct {
	name        string
	percentiles []percentile
}

// mergedPercentiles sets each percentile of the merged histogram name
// (connresult.MergedQuantilesMs); it returns false, and sets none, when a
// client carries no histogram.
func mergedPercentiles(clients []*Client, name string, pcts ...percentile) (bool, error) {
	dumps := make([]*connresult.HistDump, len(clients))
	for i, cl := range clients {
		dumps[i] = cl.Hists[name]
	}
	qs := make([]float64, len(pcts))
	for i, p := range pcts {
		qs[i] = p.q
	}
	vals, ok, err := connresult.MergedQuantilesMs(dumps, qs...)
	if err != nil {
		return false, fmt.Errorf("histogram %s: %w", name, err)
	}
	if !ok {
		return false, nil
	}
	for i, p := range pcts {
		*p.dst = vals[i]
	}
	return true, nil
}
