package capacity

import (
	"math"
	"os"
	"path/filepath"
	"sort"

	"csbench/internal/httpphase"
	"csbench/internal/rundir"
	"csbench/internal/summary"
)

// Phase2 is where a search starts from: the closed-loop maximum of a
// payload in the newest Phase 2 run like this one (the same lab, server
// kind and scheme): the most RPS of any of its cells at that payload.
type Phase2 struct {
	MaxRPS float64
	Run    string // the run directory
}

// StartFraction of Phase 2's closed-loop maximum is the first step: the
// capacity within a latency budget is at most the saturated rate, so a
// step up from half of it reaches the plateau and the bisection starts
// from a bracket of one factor 2.
const StartFraction = 0.5

// ProbeStart is the first step after a probe that achieved rps: a probe
// keeps every connection busy, as a closed loop does, so its rate stands
// for Phase 2's maximum.
func ProbeStart(rps float64) float64 { return math.Max(1, math.Round(StartFraction*rps)) }

// Phase2Max is, for each of sizes, Phase 2's closed-loop maximum from the
// newest summarized run under dir (a phase's results directory, listed,
// never globbed) with the lab, server kind and scheme given; sizes without
// one are absent.
func Phase2Max(dir, lab, server, scheme string, sizes []string) map[string]Phase2 {
	out := map[string]Phase2{}
	runs, err := rundir.Files(dir, "", "")
	if err != nil {
		return out
	}
	// Newest first: a run directory's name begins with its start time.
	sort.Slice(runs, func(i, j int) bool { return filepath.Base(runs[i]) > filepath.Base(runs[j]) })
	for _, d := range runs {
		if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
			continue
		}
		s, err := summary.LoadDir(d)
		if err != nil || s.Phase != "02-http-matrix" || s.Lab != lab || s.Server == nil || s.Server.Kind != server || schemeOf(s) != scheme {
			continue
		}
		for _, size := range sizes {
			if _, done := out[size]; done {
				continue
			}
			best := math.NaN()
			for i := range s.Cells {
				c := &s.Cells[i]
				if v := summary.Val(httpphase.FiguresOf(c).RPS); c.Params["payload"] == size && c.Status == "ok" && !(v <= best) && v > 0 {
					best = v
				}
			}
			if !math.IsNaN(best) {
				out[size] = Phase2{MaxRPS: best, Run: d}
			}
		}
	}
	return out
}

// schemeOf is a run's SCHEME, http when it recorded none.
func schemeOf(s *summary.Summary) string {
	if v := s.Settings["SCHEME"]; v != "" {
		return v
	}
	return "http"
}
