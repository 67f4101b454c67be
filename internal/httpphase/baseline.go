package httpphase

import (
	"fmt"
	"math"
	"os"
	"path/filepath"

	"csbench/internal/decimal"
	"csbench/internal/phase0"
	"csbench/internal/rundir"
	"csbench/internal/summary"
)

// BaselineCell is the Phase 0 cell HTTP is compared with: one stream,
// server to client, the direction HTTP responses travel.
const BaselineCell = "s2c-1"

// Basis is what a cell's throughput is compared with.
type Basis struct {
	Mbps *float64 // nil: nothing to compare with (no link)
	What string   // e.g. "Phase 0 s2c-1 (run X): 941.2 Mbit/s"
}

var nan = math.NaN()

// phase0Roots are the directories that may hold this lab's Phase 0 runs:
// the two layouts a run directory can sit in, RESULTS_ROOT/<phase>/<run>
// and <repo>/<phase>/results/<run>, then what the runner recorded
// (phase0_results). The run's own tree comes first: a run copied elsewhere
// (a clone, check-generated's temporary copy) keeps comparing with the
// Phase 0 run beside it, not with one in the checkout it was made in.
func phase0Roots(r *rundir.Run) []string {
	var roots []string
	abs, err := filepath.Abs(r.Dir)
	if err != nil {
		abs = r.Dir
	}
	parent := filepath.Dir(abs)
	roots = append(roots, filepath.Join(filepath.Dir(parent), "00-iperf3"))
	if filepath.Base(parent) == "results" {
		roots = append(roots, filepath.Join(filepath.Dir(filepath.Dir(parent)), "00-iperf3", "results"))
	}
	if p := r.Get("phase0_results"); p != "" {
		roots = append(roots, p)
	}
	return roots
}

// FindBaseline picks the Phase 0 run this run is compared with: the latest
// one that started before this run, in the same lab, with the same
// LINK_RATE and SERVER_IP and as many client hosts, whose status is ok or
// partial and whose s2c-1 cell measured a throughput. It records the choice in s.Link and returns
// the basis: that throughput, or, without such a run, the TCP ceiling of
// LINK_RATE. A lab without a link (loopback, LINK_RATE=none) has no basis.
func FindBaseline(r *rundir.Run, s *summary.Summary) Basis {
	var best *summary.Summary
	var bestDir string
	seen := map[string]bool{}
	for _, root := range phase0Roots(r) {
		entries, err := os.ReadDir(root)
		if err != nil {
			continue
		}
		for _, e := range entries {
			dir := filepath.Join(root, e.Name())
			real, err := filepath.EvalSymlinks(dir)
			if err != nil || seen[real] || !e.IsDir() {
				continue
			}
			seen[real] = true
			p, err := summary.Load(filepath.Join(dir, "summary.json"))
			if err != nil || !comparable(s, p) {
				continue
			}
			if best == nil || p.StartedAt > best.StartedAt {
				best, bestDir = p, dir
			}
		}
	}
	if best != nil {
		v := *baselineMbps(best.Cell(BaselineCell))
		s.Link.BaselineMbps = summary.F(v)
		s.Link.BaselineRun = relPath(r.Dir, bestDir)
		s.Link.BaselineComment = fmt.Sprintf("Phase 0 cell %s (one stream, server → client: the direction HTTP responses travel) of run %s, the latest of this lab (LINK_RATE=%s) before this run",
			BaselineCell, best.RunID, s.Settings["LINK_RATE"])
	} else {
		s.Link.BaselineComment = fmt.Sprintf("no Phase 0 run of this lab (LAB=%s, LINK_RATE=%s, SERVER_IP=%s) with an ok %s cell started before this run: compared with the TCP ceiling of LINK_RATE instead; run 00-iperf3 first (same results root) for a measured baseline",
			s.Lab, s.Settings["LINK_RATE"], s.Settings["SERVER_IP"], BaselineCell)
	}
	return BasisFromLink(s)
}

// BasisFromLink is the basis FindBaseline recorded in s.Link.
func BasisFromLink(s *summary.Summary) Basis {
	switch {
	case s.Link.TCPCeilingMbps == nil:
		return Basis{What: "nothing: there is no link (" + s.Link.CeilingBasis + ")"}
	case s.Link.BaselineMbps != nil:
		return Basis{Mbps: s.Link.BaselineMbps, What: fmt.Sprintf("Phase 0 %s %s Mbit/s", BaselineCell, decimal.Format(s.Link.BaselineMbps, 1))}
	default:
		return Basis{Mbps: s.Link.TCPCeilingMbps, What: fmt.Sprintf("the %s Mbit/s TCP ceiling of LINK_RATE=%s (no Phase 0 run)", decimal.Format(s.Link.TCPCeilingMbps, 1), s.Link.Rate)}
	}
}

// comparable: p is a Phase 0 run of the same path as s, finished well
// enough, before s started.
func comparable(s, p *summary.Summary) bool {
	if p.Phase != "00-iperf3" || p.Lab != s.Lab || (p.Status != "ok" && p.Status != "partial") {
		return false
	}
	for _, k := range []string{"LINK_RATE", "SERVER_IP"} {
		if p.Settings[k] != s.Settings[k] {
			return false
		}
	}
	if s.StartedAt != "" && p.StartedAt > s.StartedAt {
		return false
	}
	// An N-client run is compared with the aggregate of as many clients,
	// a one-client run with one client.
	if clientCount(s) != clientCount(p) {
		return false
	}
	c := p.Cell(BaselineCell)
	return c != nil && c.Status == "ok" && baselineMbps(c) != nil
}

// baselineMbps is a Phase 0 cell's throughput, Mbit/s; nil when not
// measured.
func baselineMbps(c *summary.Cell) *float64 {
	var f phase0.Figures
	summary.Figures(c.Metrics, &f)
	return f.ThroughputMbps
}

func clientCount(s *summary.Summary) int {
	if s.Clients != nil && s.Clients.N > 1 {
		return s.Clients.N
	}
	return 1
}

func relPath(from, to string) string {
	a, err1 := filepath.Abs(from)
	b, err2 := filepath.Abs(to)
	if err1 == nil && err2 == nil {
		if r, err := filepath.Rel(a, b); err == nil {
			return r
		}
	}
	return to
}
