package summary

import (
	"fmt"
	"strings"

	"csbench/internal/rundir"
)

// A run's statuses.
const (
	StatusOK      = "ok"
	StatusPartial = "partial" // cut short, or some cells not ok: what was measured is kept
	StatusFailed  = "failed"  // ended before any cell began
)

// Decision is a run's status and why: decided once, by Decide, from the
// runner's facts in run.env and the summary's cells. run.env's status
// (csb summarize appends it), summary.json, the report's header, the
// runner's last log line ("run partial: ...") and its exit status all
// read it.
type Decision struct {
	Status string
	// Runner is the runner's own reason (run.env error: a signal, a lost
	// host, a dead server, a full disk, a non-zero exit); "" when it ended
	// well.
	Runner string
	// Found is what the summary found besides (run.env summarize_error):
	// the first of the rules below that made an ok run partial, then raw
	// output that could not be parsed; "" when nothing.
	Found string
}

// Error is the run's error: the runner's reason, then what the summary
// found; "" for none.
func (d Decision) Error() string {
	if d.Runner != "" && d.Found != "" {
		return d.Runner + "; " + d.Found
	}
	return d.Runner + d.Found
}

// Apply sets s's status and error to d.
func (d Decision) Apply(s *Summary) {
	s.Status, s.Error = d.Status, strp(d.Error())
}

// runRule is one rule of the run's status: given the status so far, it
// returns a reason the run is not ok, or "".
type runRule struct {
	name string
	why  func(r *rundir.Run, cells []Cell, faults []Fault) string
}

// runRules make an ok run partial, in this order; the first that matches
// gives the reason. (The runner's own end comes first: runnerStatus.)
var runRules = []runRule{
	{"oom", func(r *rundir.Run, _ []Cell, _ []Fault) string { return oomFinding(r) }},
	{"faults", func(_ *rundir.Run, _ []Cell, faults []Fault) string { return faultsFound(faults) }},
	{"cells", func(r *rundir.Run, cells []Cell, _ []Fault) string { return cellsNotOK(r, cells) }},
}

// The codes of Fault.
const (
	// FaultServerFailed: Phase 5, a step in which the server under test
	// took no connection, or was sent or answered no request.
	FaultServerFailed = "server_failed"
	// FaultServerErrors: Phase 5, a step whose errors passed the SLO's
	// share while its latency, queue and rate of 2xx answers kept the
	// SLO: the server failed requests it had the capacity for.
	FaultServerErrors = "server_errors"
	// FaultAboveTruth: Phase 5, a capacity above the ground-truth
	// server's by more than the search's resolution: the search passed a
	// rate no server can sustain.
	FaultAboveTruth = "above_truth"
)

// Fault is something a phase found that makes an ok run partial whatever
// its cells' own verdicts say: a code (the constants above) and the
// figures that are its evidence, in words.
type Fault struct {
	Code     string `json:"code"`
	Evidence string `json:"evidence"`
}

// faultsFound is the first fault's code and evidence, "" for none.
func faultsFound(faults []Fault) string {
	if len(faults) == 0 {
		return ""
	}
	return faults[0].Code + ": " + faults[0].Evidence
}

// Decide is the run's status. unparsed is the summary's finding of raw
// output it could not parse in cells the runner recorded ok ("" when
// none): it makes the run partial and is always said, beside any other
// reason.
//
// The runner's end first (runnerStatus): not ok when it recorded an error
// or a non-zero exit (failed when no cell began and no signal stopped it,
// else partial), or when it recorded no end at all. Then the run rules, in
// order, on an ok run: a host's OOM killer ran during it; the phase found
// a fault (faults, the first named); some cell is not
// ok (failed, refused, or its output read with errors), by the summary's
// cells, which hold every cell's own verdict (the one the runner's `cell
// NAME ok|failed` line read: csb check).
func Decide(r *rundir.Run, cells []Cell, faults []Fault, unparsed string) Decision {
	d := runnerStatus(r)
	if d.Status == StatusOK {
		for _, rule := range runRules {
			if why := rule.why(r, cells, faults); why != "" {
				d.Status, d.Found = StatusPartial, why
				break
			}
		}
	}
	if unparsed != "" {
		if d.Status == StatusOK {
			d.Status = StatusPartial
		}
		if d.Found != "" {
			d.Found += "; "
		}
		d.Found += unparsed
	}
	return d
}

// runnerStatus is what the runner's own end says. A runner records
// finished_at, error (its reason, "" when none), cells_begun, signal and
// runner_exit (its exit status before the summary) at its end, and leaves
// the status to csb summarize. A run directory from before runner_exit holds the
// status its runner decided, which stands.
func runnerStatus(r *rundir.Run) Decision {
	if r.Get("finished_at") == "" {
		return Decision{Status: StatusPartial, Runner: "the runner did not record an end (killed?)"}
	}
	exit, ok := r.Env["runner_exit"]
	if !ok {
		st := r.Get("status")
		if st == "" {
			return Decision{Status: StatusPartial, Runner: "the runner did not record an end (killed?)"}
		}
		return Decision{Status: st, Runner: r.Get("error")}
	}
	why := r.Get("error")
	if why == "" && exit != "0" {
		why = "runner exited with status " + exit
	}
	if why == "" {
		return Decision{Status: StatusOK}
	}
	// A run cut short once measuring began (a signal, a dead server, a
	// dropped ssh, a full disk) is partial: what was measured is kept. One
	// that never began measuring failed. The runner counts the cells it
	// began (cells_begun): a full disk may have kept their rows out of
	// cells.tsv.
	if len(r.Cells) > 0 || (r.Get("cells_begun") != "" && r.Get("cells_begun") != "0") || r.Get("signal") != "" {
		return Decision{Status: StatusPartial, Runner: why}
	}
	return Decision{Status: StatusFailed, Runner: why}
}

// cellsNotOK: "N cell(s) failed or refused" when some cell is not ok. A
// cell the runner recorded ok whose raw output could not be parsed is
// counted apart (Decide's unparsed).
func cellsNotOK(r *rundir.Run, cells []Cell) string {
	ran := map[string]string{}
	for _, rc := range r.Cells {
		ran[rc.Name] = rc.Status
	}
	n := 0
	for _, c := range cells {
		if c.Status == StatusOK || (c.Unparsed != "" && ran[c.Name] == StatusOK) {
			continue
		}
		n++
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("%d cell(s) failed or refused", n)
}

// StatusLines is what csb summarize appends to run.env for d ("" when
// run.env already says it): status and summarize_error, so that the last
// value of each is the decision, and deciding again appends nothing.
func StatusLines(r *rundir.Run, d Decision) string {
	found := strings.NewReplacer("\n", " ", "\r", " ").Replace(d.Found)
	if r.Get("status") == d.Status && r.Get("summarize_error") == found {
		return ""
	}
	return "status=" + d.Status + "\nsummarize_error=" + found + "\n"
}
