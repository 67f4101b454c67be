package capacity

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"csbench/internal/connresult"
)

// Whose limit a step was, each rule alone: the client's only on its own
// evidence; CPUs that others kept busy make the step disturbed, never the
// client's; a lag p99 over too few requests decides nothing.
func TestWhoseOnTheClientsOwnEvidence(t *testing.T) {
	nan := math.NaN()
	base := clientEvidence{LoopsBusyPct: 10, OwnPct: 12, CPUsBusyPct: 20, OthersPct: 8, CPUs: "1", LagP99Ms: 0.3, LagRequests: 5000, LagBoundMs: 5}
	for _, c := range []struct {
		name                   string
		edit                   func(e *clientEvidence)
		clientBound, disturbed bool
		why                    string
	}{
		{"an idle client on quiet CPUs", func(e *clientEvidence) {}, false, false, ""},
		{"its loops busy", func(e *clientEvidence) { e.LoopsBusyPct, e.OwnPct, e.CPUsBusyPct = 95, 97, 99 }, true, false, "event loops were busy 95%"},
		{"its process busy, loops not", func(e *clientEvidence) { e.OwnPct, e.CPUsBusyPct = 92, 96 }, true, false, "it used 92% of its CPUs (1) itself"},
		// The case: a host others kept 93 % busy, the client's loops 11 %.
		{"others busy, client idle", func(e *clientEvidence) { e.LoopsBusyPct, e.OwnPct, e.CPUsBusyPct, e.OthersPct = 11, 13, 93, 80 }, false, true, "were 93% busy while it used 13% of them itself"},
		{"others busy, own unmeasured (old result)", func(e *clientEvidence) { e.OwnPct, e.CPUsBusyPct, e.OthersPct = nan, 94, nan }, true, false, "its own share not measured"},
		{"late sender on its own CPUs", func(e *clientEvidence) { e.LagP99Ms = 7 }, true, false, "sender lag p99 (idle connection found) was 7.00 ms > 5 ms"},
		{"late sender while others took its CPUs", func(e *clientEvidence) { e.LagP99Ms, e.CPUsBusyPct, e.OthersPct = 7, 60, 45 }, false, true, "while others kept its CPUs (1) 45% busy"},
		{"late sender, one request in a hundred", func(e *clientEvidence) { e.LagP99Ms, e.LagRequests = 40, 100 }, false, false, ""},
		// On CPUs shared with the server, its work is no disturbance.
		{"shared CPUs busy, client idle", func(e *clientEvidence) {
			e.SharedCPUs, e.LoopsBusyPct, e.OwnPct, e.CPUsBusyPct, e.OthersPct = true, 11, 13, 93, 80
		}, false, false, ""},
		{"shared CPUs, late sender", func(e *clientEvidence) { e.SharedCPUs, e.LagP99Ms, e.CPUsBusyPct, e.OthersPct = true, 7, 60, 45 }, true, false, "on CPUs (1) it shares with the server under test"},
		{"shared CPUs, its loops busy", func(e *clientEvidence) { e.SharedCPUs, e.LoopsBusyPct, e.OwnPct, e.CPUsBusyPct = true, 95, 97, 99 }, true, false, "event loops were busy 95%"},
		{"nothing measured", func(e *clientEvidence) {
			*e = clientEvidence{LoopsBusyPct: nan, OwnPct: nan, CPUsBusyPct: nan, OthersPct: nan, LagP99Ms: nan, LagBoundMs: 5}
		}, false, false, ""},
	} {
		e := base
		c.edit(&e)
		cb, d, why := whose(e)
		if cb != c.clientBound || d != c.disturbed || !strings.Contains(why, c.why) {
			t.Errorf("%s: client-bound %v, disturbed %v, %q; want %v, %v, %q", c.name, cb, d, why, c.clientBound, c.disturbed, c.why)
		}
	}
}

// The lag bound is half the SLO within [lagMax, LagCapMs]: a long SLO
// does not make a very late client keep its schedule.
func TestLagBound(t *testing.T) {
	for _, c := range []struct{ lagMax, slo, want float64 }{{1, 10, 5}, {1, 4, 2}, {1, 1, 1}, {1, 200, 5}, {1, 1e6, 5}, {8, 200, 8}} {
		if got := LagBoundMs(c.lagMax, c.slo); got != c.want {
			t.Errorf("LagBoundMs(%g, %g) = %g, want %g", c.lagMax, c.slo, got, c.want)
		}
	}
}

// A step that failed while others kept the client's CPUs busy is run
// again, not the end of the search; the second one counts.
func TestHostDisturbedStepRepeated(t *testing.T) {
	s := Search{SLO: SLO{Percentile: 99, LatencyMs: 10, ErrorsPct: 0.1, AchievedMin: 0.99}, StartRPS: 1000, Growth: 2, ResolutionPct: 2, MaxSteps: 12, Repeat: 1}
	ok := Step{OfferedRPS: 1000, AchievedRPS: 1000, Requests: 2000, LatencyMs: 2, GrowthMsPerS: math.NaN()}
	busy := Step{OfferedRPS: 2000, AchievedRPS: 1990, Requests: 4000, LatencyMs: 30, GrowthMsPerS: math.NaN(),
		Disturbed: true, DisturbedWhy: "its CPUs (1) were 93% busy while it used 13% of them itself: others' work"}
	code, why := s.Judge(busy)
	if code != FailLatency || !strings.Contains(why, "the client was disturbed, not the limit: its CPUs (1) were 93% busy") {
		t.Fatalf("Judge = %s, %q", code, why)
	}
	if d := s.Next([]Step{ok, busy}); d.Done || d.Reason != "repeat_disturbed" || d.RPS != 2000 {
		t.Fatalf("after a disturbed step: %+v", d)
	}
	again := busy
	again.Disturbed, again.DisturbedWhy, again.LatencyMs = false, "", 2
	if d := s.Next([]Step{ok, busy, again}); d.Done || d.Reason != "up" || d.RPS != 4000 {
		t.Fatalf("after its repeat passed: %+v", d)
	}
}

// writeLowrate writes a minimal lowrate result of one client process that
// used own % of its CPUs (list cpus), which were busy % busy.
func writeLowrate(t *testing.T, path, cpus string, own, busy float64) {
	t.Helper()
	r := connresult.LowrateResult{RPSTarget: 1000, DurationS: 2, RequestsScheduled: 2000, RequestsCompleted: 2000,
		ClientCPUs: cpus, ClientCPUsBusyPct: &busy, ClientProcessCPUPct: &own}
	r.SchemaVersion, r.Tool, r.Mode, r.Errors = connresult.SchemaVersion, "connclient", "lowrate", map[string]uint64{}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// Client processes pinned to the same CPUs (the netns lab's client hosts)
// are one client there: two using 47 % each of a CPU 94 % busy are the
// client's limit, not others'; on CPUs of their own, each is judged alone.
func TestReadStepAddsUpClientsOnOneCPUList(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")
	writeLowrate(t, a, "1", 47, 94)
	writeLowrate(t, b, "1", 47, 94)
	st, _, err := ReadStep([]string{a, b}, Judging{Percentile: 99, LagBoundMs: 5})
	if err != nil || !st.ClientBound || st.Disturbed || !strings.Contains(st.ClientWhy, "it used 94% of its CPUs (1) itself") {
		t.Fatalf("one CPU list: %v, client-bound %v (%s), disturbed %v (%s)", err, st.ClientBound, st.ClientWhy, st.Disturbed, st.DisturbedWhy)
	}
	writeLowrate(t, b, "0", 10, 94)
	writeLowrate(t, a, "1", 10, 20)
	st, _, err = ReadStep([]string{a, b}, Judging{Percentile: 99, LagBoundMs: 5})
	if err != nil || st.ClientBound || !st.Disturbed || !strings.Contains(st.DisturbedWhy, "its CPUs (0) were 94% busy while it used 10% of them itself") {
		t.Fatalf("CPU lists apart: %v, client-bound %v (%s), disturbed %v (%s)", err, st.ClientBound, st.ClientWhy, st.Disturbed, st.DisturbedWhy)
	}
}
