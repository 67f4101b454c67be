package summary

import (
	"strings"
	"testing"

	"csbench/internal/rundir"
)

// Each rule of the run's status, alone and in order, on the runner's facts
// and the summary's cells.
func TestDecide(t *testing.T) {
	ok := Cell{Name: "a", Status: "ok"}
	errs := Cell{Name: "b", Status: rundir.StatusErrors, Error: strp("10 requests failed (status 10)")}
	refused := Cell{Name: "c", Status: "refused"}
	unparsed := Cell{Name: "d", Status: "failed", Unparsed: "raw/d.json"}
	ran := []rundir.Cell{{Name: "a", Status: "ok"}, {Name: "b", Status: "ok"}, {Name: "c", Status: "refused"}, {Name: "d", Status: "ok"}}
	end := map[string]string{"finished_at": "2026-12-06T00:00:00Z", "runner_exit": "0", "error": ""}
	with := func(kv ...string) map[string]string {
		m := map[string]string{}
		for k, v := range end {
			m[k] = v
		}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	oom := with("oom_kill.before.server", "1", "oom_kill.after.server", "2")
	for _, tc := range []struct {
		name     string
		env      map[string]string
		cells    []rundir.Cell
		sum      []Cell
		unparsed string
		want     Decision
	}{
		{"all ok", end, ran[:1], []Cell{ok}, "", Decision{Status: "ok"}},
		{"a cell with errors (the runner's check or the summary's)", end, ran[:2], []Cell{ok, errs}, "",
			Decision{Status: "partial", Found: "1 cell(s) failed or refused"}},
		{"a refused cell", end, ran[:3], []Cell{ok, refused}, "", Decision{Status: "partial", Found: "1 cell(s) failed or refused"}},
		{"the runner's reason first, the cells then say nothing", with("runner_exit", "130", "error", "interrupted by SIGINT", "signal", "INT"),
			ran[:2], []Cell{ok, errs}, "", Decision{Status: "partial", Runner: "interrupted by SIGINT"}},
		{"a non-zero exit without a reason", with("runner_exit", "4"), ran[:1], []Cell{ok}, "",
			Decision{Status: "partial", Runner: "runner exited with status 4"}},
		{"no cell began: failed", with("runner_exit", "1", "error", "the server died"), nil, nil, "",
			Decision{Status: "failed", Runner: "the server died"}},
		{"a cell began, its row not written (full disk): partial", with("runner_exit", "1", "error", "disk full", "cells_begun", "1"), nil, nil, "",
			Decision{Status: "partial", Runner: "disk full"}},
		{"no cell began, a signal: partial", with("runner_exit", "130", "error", "interrupted by SIGINT", "signal", "INT"), nil, nil, "",
			Decision{Status: "partial", Runner: "interrupted by SIGINT"}},
		{"no end recorded", map[string]string{"status": "ok"}, ran[:1], []Cell{ok}, "",
			Decision{Status: "partial", Runner: "the runner did not record an end (killed?)"}},
		{"OOM before cells", oom, ran[:2], []Cell{ok, errs}, "",
			Decision{Status: "partial", Found: "the kernel's OOM killer ran on server during the run: oom_kill 1 before, 2 after"}},
		{"unparsed: said beside, not counted as a failed cell", end, ran, []Cell{ok, unparsed}, "1 cell(s) with raw output that could not be parsed; cell d: x",
			Decision{Status: "partial", Found: "1 cell(s) with raw output that could not be parsed; cell d: x"}},
		{"unparsed beside a failed cell", end, ran, []Cell{ok, errs, unparsed}, "U",
			Decision{Status: "partial", Found: "1 cell(s) failed or refused; U"}},
		{"unparsed beside the runner's reason", with("runner_exit", "1", "error", "disk full"), ran, []Cell{unparsed}, "U",
			Decision{Status: "partial", Runner: "disk full", Found: "U"}},
		// A run directory from before runner_exit: its runner's status stands.
		{"before runner_exit: ok stands, cells judged", map[string]string{"finished_at": "x", "status": "ok"}, ran[:2], []Cell{ok, errs}, "",
			Decision{Status: "partial", Found: "1 cell(s) failed or refused"}},
		{"before runner_exit: partial stands with its words", map[string]string{"finished_at": "x", "status": "partial", "error": "1 cell(s) failed or refused"},
			ran[:3], []Cell{ok, refused}, "", Decision{Status: "partial", Runner: "1 cell(s) failed or refused"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Decide(&rundir.Run{Env: tc.env, Cells: tc.cells}, tc.sum, nil, tc.unparsed)
			if got != tc.want {
				t.Errorf("Decide = %+v, want %+v", got, tc.want)
			}
		})
	}
}

// Deciding again from what run.env then holds gives the same decision and
// appends nothing; the error joins the runner's reason and the finding.
func TestDecideAgain(t *testing.T) {
	r := &rundir.Run{Env: map[string]string{"finished_at": "x", "runner_exit": "0", "error": ""},
		Cells: []rundir.Cell{{Name: "b", Status: "errors"}}}
	cells := []Cell{{Name: "b", Status: rundir.StatusErrors}}
	d := Decide(r, cells, nil, "")
	add := StatusLines(r, d)
	if add != "status=partial\nsummarize_error=1 cell(s) failed or refused\n" {
		t.Fatalf("StatusLines = %q", add)
	}
	for _, l := range strings.Split(strings.TrimSpace(add), "\n") {
		k, v, _ := strings.Cut(l, "=")
		r.Env[k] = v
	}
	if d2 := Decide(r, cells, nil, ""); d2 != d || StatusLines(r, d2) != "" {
		t.Errorf("again: %+v, lines %q", d2, StatusLines(r, d2))
	}
	if e := (Decision{Runner: "a", Found: "b"}).Error(); e != "a; b" {
		t.Errorf("Error = %q", e)
	}
}

// A fault makes an ok run partial, named by its code and evidence before
// the cells' count; the runner's own reason still comes first.
func TestDecideFaults(t *testing.T) {
	end := map[string]string{"finished_at": "x", "runner_exit": "0", "error": ""}
	ran := []rundir.Cell{{Name: "a", Status: "ok"}}
	faults := []Fault{{Code: FaultServerFailed, Evidence: "no request was answered at 200 req/s"}, {Code: FaultAboveTruth, Evidence: "y"}}
	d := Decide(&rundir.Run{Env: end, Cells: ran}, []Cell{{Name: "a", Status: "failed"}}, faults, "")
	if want := (Decision{Status: "partial", Found: "server_failed: no request was answered at 200 req/s"}); d != want {
		t.Errorf("Decide = %+v, want %+v", d, want)
	}
	end["runner_exit"], end["error"] = "130", "interrupted by SIGINT"
	if d := Decide(&rundir.Run{Env: end, Cells: ran}, []Cell{{Name: "a", Status: "ok"}}, faults, ""); d.Runner != "interrupted by SIGINT" || d.Found != "" {
		t.Errorf("with the runner's reason: %+v", d)
	}
}
