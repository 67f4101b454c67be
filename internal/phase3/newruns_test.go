package phase3_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"csbench/internal/golden"
	"csbench/internal/phase3"
	"csbench/internal/summary"
)

// editJSON rewrites a connclient result through f on its decoded object;
// it returns a function that puts the file back as it was.
func editJSON(t *testing.T, path string, f func(map[string]any)) (restore func()) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	f(doc)
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return func() {
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func ramp(doc map[string]any) map[string]any { return doc["ramp"].(map[string]any) }
func first(doc map[string]any) map[string]any {
	return ramp(doc)["first_attempt"].(map[string]any)
}

// The runs of run.env schema 2 (testdata/README.md): real smoke runs on
// the netns lab, 2000 connections, from one client host and from two.
// Their connclient results record the ramp (paced, retried, first
// attempts) and the idle hold's instants; the summary keeps them beside
// the final figures, and the report shows them.
func TestSummarizeNewRuns(t *testing.T) {
	t.Setenv("PATH", "")
	for _, tc := range []struct {
		name  string
		procs float64
	}{{"smoke-clients1", 1}, {"smoke-clients2", 2}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := golden.CopyTree(t, filepath.Join("testdata", tc.name), "")
			s := summarize(t, dir)
			if s.Status != "ok" || len(s.Cells) != 3 {
				t.Fatalf("status %q, %d cells", s.Status, len(s.Cells))
			}
			idle := s.Cell("idle-2k")
			for k, want := range map[string]float64{"connections_established": 2000, "connections_first_attempt_established": 2000,
				"connections_first_attempt_failed": 0, "connections_retried": 0, "hold_missed_procs": 0, "client_procs": tc.procs,
				"connect_rate_paced_max_per_s": 5000} {
				if got := metric(t, idle, k); got != want {
					t.Errorf("idle %s = %v, want %v", k, got, want)
				}
			}
			// HOLD=3 (smoke): every process held about that long at once.
			if h := metric(t, idle, "hold_shared_s"); h < 2.9 || h > 3.5 {
				t.Errorf("hold_shared_s %v, want about 3", h)
			}
			if !strings.Contains(idle.Verdict.Evidence, "no connection needed a retry") {
				t.Errorf("idle evidence %q", idle.Verdict.Evidence)
			}
			// Not measured is null, never 0: wrk has no ramp, a low-rate
			// scenario no hold.
			for cell, keys := range map[string][]string{"active-2k-1k": phase3.RampKeys, "lowrate-2k-500rps": phase3.HoldKeys} {
				c := s.Cell(cell)
				for _, k := range keys {
					if v, ok := c.Metrics[k]; !ok || v != nil {
						t.Errorf("%s %s = %v (present %v), want null", cell, k, v, ok)
					}
				}
			}
			b, _ := json.MarshalIndent(s, "", "  ")
			golden.Check(t, tc.name+".summary.json", string(b)+"\n")
			report, _ := os.ReadFile(filepath.Join(dir, "Report_03-c10k.md"))
			golden.Check(t, tc.name+".Report_03-c10k.md", string(report))
			for _, want := range []string{"first attempts established / failed", "processes held over the agreed end", "`raw/<cell>.hold`"} {
				if !strings.Contains(string(report), want) {
					t.Errorf("the report lacks %q", want)
				}
			}
		})
	}
}

func idleCell(t *testing.T, dir string) *summary.Cell {
	t.Helper()
	return summarize(t, dir).Cell("idle-2k")
}

// With two client hosts, one process whose hold ended before the agreed
// end, or began after it, is named in a note; the hold is not shared.
func TestHoldNotShared(t *testing.T) {
	t.Setenv("PATH", "")
	two := golden.CopyTree(t, "testdata/smoke-clients2", "")
	for _, tc := range []struct {
		name  string
		edit  func(doc map[string]any, end float64)
		proc  string
		words string
	}{
		{"ended early", func(doc map[string]any, end float64) { doc["hold_ended_at_ms"] = end - 500 }, "raw/idle-2k.client-2.json",
			"process 2 (client2, 198.18.2.2) ended its hold 0.500 s before it"},
		{"began late", func(doc map[string]any, end float64) {
			doc["hold_began_at_ms"] = end + 1200
			doc["hold_ended_at_ms"] = end + 1200
		},
			"raw/idle-2k.client-1.json", "process 1 (client1, 198.18.0.2) began holding 1.200 s after it"},
	} {
		restore := editJSON(t, filepath.Join(two, tc.proc), func(doc map[string]any) { tc.edit(doc, doc["hold_end_agreed_at_ms"].(float64)) })
		s := summarize(t, two)
		restore()
		idle := s.Cell("idle-2k")
		if got := metric(t, idle, "hold_missed_procs"); got != 1 {
			t.Errorf("%s: hold_missed_procs %v, want 1", tc.name, got)
		}
		notes := strings.Join(s.Notes, "\n")
		if !strings.Contains(notes, "not every idle process held its connections over one shared instant (the end agreed for all, 2026-12-01T23:40:56.399Z)") ||
			!strings.Contains(notes, tc.words) {
			t.Errorf("%s: notes %q", tc.name, notes)
		}
		if !strings.Contains(idle.Verdict.Evidence, "1 of 2 client processes did not hold over one shared instant") {
			t.Errorf("%s: evidence %q", tc.name, idle.Verdict.Evidence)
		}
	}
	// A run made before the processes recorded their hold: the runner's
	// c10k.<cell>.hold_ended names the hosts.
	dir := golden.CopyTree(t, "testdata/run", "")
	f, err := os.OpenFile(filepath.Join(dir, "run.env"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("c10k.idle-800.hold_ended=client2\n")
	f.Close()
	s := summarize(t, dir)
	if !strings.Contains(strings.Join(s.Notes, "\n"), "the idle processes on client2 ended their hold before every client host held its connections") {
		t.Errorf("notes %q", s.Notes)
	}
}

// The walls of a ramp that connclient paced and retried: a count reached
// after backing off is not a wall; connections missing after their
// retries are the server refusing; never attempted, the ramp's bound.
func TestRampWalls(t *testing.T) {
	t.Setenv("PATH", "")
	dir := golden.CopyTree(t, "testdata/smoke-clients2", "")
	one := "raw/idle-2k.client-1.json"
	for _, tc := range []struct {
		name     string
		edit     func(doc map[string]any)
		bound    string
		evidence []string
	}{
		{"reached after retries", func(doc map[string]any) {
			r, fa := ramp(doc), first(doc)
			r["connections_retried"], r["established_after_retry"], r["retries"], r["pace_cuts"], r["rate_paced_min_per_s"] = 300, 300, 420, 2, 625
			fa["established"], fa["failed"], fa["connect_timeouts"] = 700, 300, 300
		}, "none: every connection held (the count was reached after the ramp backed off: 3360 of 5000 connects/s, 300 connections retried)",
			[]string{"300 of 2000 connections needed a retry (420 retries, at most 3 per connection), 300 of them established after it",
				"first attempts: 1700 established, 300 failed (300 connect timeouts, 0 response timeouts)", "paced at 3125–5000 connects/s (2 cuts)",
				"slower than asked, not a wall: short ramp: 3360 of 5000 connects/s (67%) (the client's CPU was busy)"}},
		{"failed after retries", func(doc map[string]any) {
			doc["connections_established"], doc["connections_failed"], doc["connections_alive_end"] = 800, 200, 800
			doc["errors"] = map[string]any{"etimedout": 200}
			r, fa := ramp(doc), first(doc)
			r["connections_retried"], r["established_after_retry"], r["retries"], r["pace_cuts"] = 200, 0, 600, 3
			fa["established"], fa["failed"], fa["connect_timeouts"] = 800, 200, 200
		}, phase3.WallRefusedAfterRetry + ": 200 connects failed after up to 3 retries each (etimedout)",
			[]string{"1800 of 2000 connections established", "200 of 2000 connections needed a retry"}},
		{"bound reached", func(doc map[string]any) {
			doc["connections_attempted"], doc["connections_established"], doc["connections_alive_end"] = 900, 900, 900
			r := ramp(doc)
			r["bound_reached"], r["pace_cuts"], r["rate_paced_min_per_s"] = true, 5, 80
			first(doc)["established"] = 900
		}, phase3.WallRampBound + ": 100 connections not attempted within 31.2 s",
			[]string{"the ramp's bound (31.2 s) was reached by 1 process(es)"}},
	} {
		restore := editJSON(t, filepath.Join(dir, one), tc.edit)
		idle := idleCell(t, dir)
		restore()
		if idle.Verdict.Bound != tc.bound {
			t.Errorf("%s: bound %q, want %q", tc.name, idle.Verdict.Bound, tc.bound)
		}
		for _, w := range tc.evidence {
			if !strings.Contains(idle.Verdict.Evidence, w) {
				t.Errorf("%s: evidence lacks %q:\n%s", tc.name, w, idle.Verdict.Evidence)
			}
		}
	}
}

// A ramp that met a slow link (testdata/README.md: LINK_RATE=512kbit, a
// real run): connclient paced it down from 5000 to 50 connects/s and
// reached its count; the verdict names no wall and says why it was slow.
func TestSlowLinkBacksOff(t *testing.T) {
	t.Setenv("PATH", "")
	dir := golden.CopyTree(t, "testdata/slowlink-512kbit", "")
	s := summarize(t, dir)
	idle := s.Cell("idle-2k")
	for k, want := range map[string]float64{"connections_established": 2000, "connections_failed": 0, "connections_retried": 0,
		"connections_first_attempt_established": 2000, "connections_first_attempt_slow": 45,
		"connect_rate_paced_min_per_s": 50, "connect_rate_paced_max_per_s": 5000, "hold_missed_procs": 0} {
		if got := metric(t, idle, k); got != want {
			t.Errorf("%s = %v, want %v", k, got, want)
		}
	}
	if !strings.HasPrefix(idle.Verdict.Bound, "none: every connection held (the count was reached after the ramp backed off: 230 of 5000 connects/s") {
		t.Errorf("bound %q", idle.Verdict.Bound)
	}
	if !strings.Contains(idle.Verdict.Evidence, "paced at 50–5000 connects/s (7 cuts)") ||
		!strings.Contains(idle.Verdict.Evidence, "slower than asked, not a wall") {
		t.Errorf("evidence %q", idle.Verdict.Evidence)
	}
	if r, _ := idle.Details["ramp"].(map[string]any); r["wall"] != "none" || r["cause"] != "synack_retransmits" {
		t.Errorf("details.ramp %v", idle.Details["ramp"])
	}
	b, _ := json.MarshalIndent(s, "", "  ")
	golden.Check(t, "slowlink-512kbit.summary.json", string(b)+"\n")
	report, _ := os.ReadFile(filepath.Join(dir, "Report_03-c10k.md"))
	golden.Check(t, "slowlink-512kbit.Report_03-c10k.md", string(report))
}
