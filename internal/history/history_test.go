package history

import (
	"math"
	"strings"
	"testing"

	"csbench/internal/summary"
)

// run is a Phase 1 run at start (RFC 3339) on commit, with one cell "1k"
// of the given rps repetitions.
func run(start, commit string, settings map[string]string, rps ...float64) Run {
	s := &summary.Summary{Phase: "01-http-baseline", StartedAt: start, Git: summary.Git{Commit: commit}, Settings: settings}
	for i, v := range rps {
		v := v
		c := summary.Cell{Name: "1k", Status: "ok", Params: map[string]string{"payload": "1k", "rep": string(rune('1' + i))},
			Metrics: map[string]*float64{"rps": &v}}
		s.Cells = append(s.Cells, c)
	}
	return Run{Dir: "/r/" + start, S: s}
}

// Runs in time order, whatever order they come in; a new commit or a
// changed setting starts a group; a group 10 % faster over 5+5 values is a
// change (p = 2/252), one alike is ~, one run a side is no verdict.
func TestBuildGroupsAndTests(t *testing.T) {
	set := map[string]string{"PAYLOADS": "1k", "RESULTS_ROOT": "/a"}
	moved := map[string]string{"PAYLOADS": "1k", "RESULTS_ROOT": "/b"} // not a setting of the configuration
	other := map[string]string{"PAYLOADS": "1k", "THREADS": "4"}
	runs := []Run{
		run("2026-12-01T02:00:00Z", "bbbbbbbbbbbb", moved, 110, 111, 112, 113, 114),
		run("2026-12-01T01:00:00Z", "aaaaaaaaaaaa", set, 100, 101, 102, 103, 104),
		run("2026-12-01T03:00:00Z", "bbbbbbbbbbbb", set, 112, 110, 114, 111, 113),
		run("2026-12-01T04:00:00Z", "bbbbbbbbbbbb", other, 111),
	}
	all := Build(map[string][]Run{"01-http-baseline http-baseline": runs}, []string{"rps"}, 0.05)
	if len(all) != 1 {
		t.Fatalf("%d series, want 1", len(all))
	}
	s := all[0]
	if s.Runner != "http-baseline" || s.Cell != "1k" || len(s.Points) != 4 || s.Points[0].Run.S.Git.Commit != "aaaaaaaaaaaa" {
		t.Fatalf("series %s with %d points, first %+v", s, len(s.Points), s.Points[0].Run.S.Git)
	}
	var keys []string
	for _, g := range s.Groups {
		keys = append(keys, g.Key)
	}
	if got := strings.Join(keys, " | "); got != "aaaaaaaa | bbbbbbbb | bbbbbbbb THREADS=4" {
		t.Fatalf("groups %q", got)
	}
	if len(s.Changes) != 2 {
		t.Fatalf("%d changes, want 2", len(s.Changes))
	}
	c := s.Changes[0]
	// Group 2 pools its two runs: 10 values against 5, all above.
	if !c.Significant || c.NA != 5 || c.NB != 10 || c.MedianA != 102 || c.MedianB != 112 || !(c.P < 0.01) {
		t.Fatalf("first change %+v", c)
	}
	if c := s.Changes[1]; c.Significant || !math.IsNaN(c.P) || c.NB != 1 {
		t.Fatalf("a group of one value: %+v", c)
	}
	same := []Run{run("2026-12-01T01:00:00Z", "a", nil, 100, 102, 104, 101, 103), run("2026-12-01T02:00:00Z", "b", nil, 103, 100, 104, 102, 101)}
	if c := Build(map[string][]Run{"01-http-baseline x": same}, []string{"rps"}, 0.05)[0].Changes[0]; c.Significant || math.IsNaN(c.P) || c.P < 0.5 {
		t.Fatalf("alike groups: %+v", c)
	}
}
