// Package history follows one cell's figure across runs: the same runner's
// runs, from one or more results roots, in time order, grouped into runs
// alike (one commit, the same settings), with each change from one group
// to the next tested as csb compare tests two sides (Mann-Whitney U, exact
// for small n). It computes; cli prints.
package history

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"csbench/internal/compare"
	"csbench/internal/stats"
	"csbench/internal/summary"
)

// Run is one run of a history: its summary and its directory.
type Run struct {
	Dir string
	S   *summary.Summary
}

// Point is one run's values of a figure of one cell (its repetitions).
type Point struct {
	Run    Run
	Values []float64
	Group  int // the index of its group in Series.Groups
}

// Group is a stretch of consecutive runs alike: Key says what they share
// (the commit, and the settings that differ from the group before).
type Group struct {
	Key   string
	First int // index of its first point
}

// Change is a group's figure against the group before it.
type Change struct {
	Group            int // the later group
	MedianA, MedianB float64
	NA, NB           int
	P                float64 // two-sided; NaN when too few values to ever reach Alpha
	Significant      bool    // P < Alpha
}

// Series is one runner's cell and figure across runs.
type Series struct {
	Phase, Runner, Cell, Metric string
	Points                      []Point
	Groups                      []Group
	Changes                     []Change
}

// Build makes every series of runs (one runner's runs per key of byRunner,
// any order: sorted here by start time) for the figures metrics, testing
// each group against the one before at alpha.
func Build(byRunner map[string][]Run, metrics []string, alpha float64) []Series {
	var keys []string
	for k := range byRunner {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []Series
	for _, k := range keys {
		runs := append([]Run(nil), byRunner[k]...)
		sort.SliceStable(runs, func(i, j int) bool { return runs[i].S.StartedAt < runs[j].S.StartedAt })
		keysOf := groupKeys(runs)
		var cells []string
		vals := map[string]map[string][][]float64{} // cell -> metric -> values per run
		for i, r := range runs {
			for _, c := range r.S.Cells {
				// Phase 5's steps are the search's own rates, with no like
				// in another run: its figure is the capacity (as compare).
				if c.Status != "ok" || len(r.S.Capacity) > 0 {
					continue
				}
				base := compare.BaseName(c)
				if vals[base] == nil {
					vals[base] = map[string][][]float64{}
					cells = append(cells, base)
				}
				for _, m := range metrics {
					if vals[base][m] == nil {
						vals[base][m] = make([][]float64, len(runs))
					}
					if p := compare.Figure(c, m); p != nil && !math.IsNaN(*p) {
						vals[base][m][i] = append(vals[base][m][i], *p)
					}
				}
			}
			for _, c := range r.S.Capacity {
				base := "capacity " + c.Payload
				if vals[base] == nil {
					vals[base] = map[string][][]float64{compare.CapacityMetric: make([][]float64, len(runs))}
					cells = append(cells, base)
				}
				if c.CapacityRPS != nil {
					vals[base][compare.CapacityMetric][i] = append(vals[base][compare.CapacityMetric][i], *c.CapacityRPS)
				}
			}
		}
		for _, cell := range cells {
			ms := metrics
			if strings.HasPrefix(cell, "capacity ") {
				ms = []string{compare.CapacityMetric}
			}
			for _, m := range ms {
				s := Series{Phase: runs[0].S.Phase, Runner: strings.TrimPrefix(k, runs[0].S.Phase+" "), Cell: cell, Metric: m}
				for i, r := range runs {
					v := vals[cell][m]
					if v == nil || len(v[i]) == 0 {
						continue
					}
					if n := len(s.Groups); n == 0 || s.Groups[n-1].Key != keysOf[i] {
						s.Groups = append(s.Groups, Group{Key: keysOf[i], First: len(s.Points)})
					}
					s.Points = append(s.Points, Point{Run: r, Values: v[i], Group: len(s.Groups) - 1})
				}
				if len(s.Points) == 0 {
					continue
				}
				s.Changes = changes(s, alpha)
				out = append(out, s)
			}
		}
	}
	return out
}

// changes tests each group of s against the one before it.
func changes(s Series, alpha float64) []Change {
	pooled := make([][]float64, len(s.Groups))
	for _, p := range s.Points {
		pooled[p.Group] = append(pooled[p.Group], p.Values...)
	}
	var out []Change
	for g := 1; g < len(pooled); g++ {
		a, b := pooled[g-1], pooled[g]
		c := Change{Group: g, MedianA: compare.Values(a).Median(), MedianB: compare.Values(b).Median(), NA: len(a), NB: len(b), P: math.NaN()}
		if stats.MinP(len(a), len(b)) < alpha {
			_, c.P = stats.MannWhitney(a, b)
			c.Significant = c.P < alpha
		}
		out = append(out, c)
	}
	return out
}

// groupKeys is each run's group key: its commit (with "+dirty") and the
// settings in which it differs from the run before it, carried on until
// they change again.
func groupKeys(runs []Run) []string {
	out := make([]string, len(runs))
	var prev map[string]string
	var since []string
	for i, r := range runs {
		set := compare.Settings(r.S)
		if prev != nil {
			var diff []string
			for k, v := range set {
				if prev[k] != v {
					diff = append(diff, k+"="+v)
				}
			}
			for k := range prev {
				if _, ok := set[k]; !ok {
					diff = append(diff, k+" unset")
				}
			}
			if len(diff) > 0 {
				sort.Strings(diff)
				since = diff
			}
		}
		prev = set
		commit := r.S.Git.Commit
		if len(commit) > 8 {
			commit = commit[:8]
		}
		if r.S.Git.Dirty {
			commit += "+dirty"
		}
		out[i] = strings.TrimSpace(commit + " " + strings.Join(since, " "))
	}
	return out
}

// String is a series' name: phase, runner, cell and figure.
func (s Series) String() string {
	return fmt.Sprintf("%s %s %s %s", s.Phase, s.Runner, s.Cell, s.Metric)
}
