// Package cli is the csb command: every subcommand as a function of its
// arguments and output streams, so the whole command is testable.
package cli

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"csbench/internal/atomicfile"
	"csbench/internal/httpphase"
	"csbench/internal/rundir"
	"csbench/internal/summary"
)

// usage is csb -h (commands.go: the commands table).
var usage = usageText()

// errUsage marks an error that is the caller's: exit 2 with the usage.
var errUsage = errors.New("usage")

// errBadInput marks input the caller must fix that is not a usage mistake
// (a certificate that does not verify): exit 2, one line, no usage text.
var errBadInput = errors.New("bad input")

// Phase turns one run into its summary cells and writes its report.
type Phase interface {
	// Summarize fills s.Cells (and notes) from the run's raw files.
	Summarize(r *rundir.Run, s *summary.Summary) error
	// Report writes the phase's Report_*.md (and charts) into r.Dir.
	Report(r *rundir.Run, s *summary.Summary) error
}

// Checks maps a tool name to a function that fails when the tool's raw
// output reports an error.
var Checks = map[string]func(io.Reader) error{}

// LoadReaders maps a load generator (csb check wrk|oha FILE) to the reader
// of its raw output, whose Load httpphase.Check judges.
var LoadReaders = map[string]func(path string) (*httpphase.Load, error){}

// Phases maps run.env's phase to its implementation.
var Phases = map[string]Phase{}

// Main runs csb with args and returns the exit status.
func Main(args []string, stdout, stderr io.Writer) int {
	err := run(args, stdout, stderr)
	var code exitCodeError
	switch {
	case errors.As(err, &code):
		return int(code)
	case err == nil:
		return 0
	case errors.Is(err, errUsage):
		fmt.Fprintf(stderr, "error: %v\n%s", err, usage)
		return 2
	case errors.Is(err, errBadInput):
		fmt.Fprintf(stderr, "error: %s\n", strings.TrimPrefix(err.Error(), errBadInput.Error()+": "))
		return 2
	default:
		fmt.Fprintf(stderr, "error: %v\n", err)
		return 1
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return fmt.Errorf("%w: missing command", errUsage)
	}
	switch args[0] {
	case "-h", "--help", "help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	c := lookup(args[0])
	if c == nil {
		return fmt.Errorf("%w: unknown command %q", errUsage, args[0])
	}
	if len(args) == 2 && (args[1] == "-h" || args[1] == "--help") && !ownHelp[c.name] {
		fmt.Fprint(stdout, c.help())
		return nil
	}
	return c.run(args[1:], stdout, stderr)
}

// Summarize regenerates one run directory's summary and report.
func Summarize(dir, generatedBy string) error {
	dir = filepath.Clean(dir)
	r, err := rundir.Read(dir)
	if err != nil {
		return err
	}
	p, ok := Phases[r.Get("phase")]
	if !ok {
		return fmt.Errorf("unknown phase %q in run.env", r.Get("phase"))
	}
	s := summary.New(r, generatedBy)
	if err := p.Summarize(r, s); err != nil {
		return err
	}
	keepCutShort(r, s)
	found := unparsedFinding(r, s)
	// The run's status, decided once: run.env (appended: the last value
	// wins), summary.json, the report and the runner's last line and exit
	// status read it.
	d := summary.Decide(r, s.Cells, s.Faults, found)
	d.Apply(s)
	if add := summary.StatusLines(r, d); add != "" {
		if err := atomicfile.Append(filepath.Join(r.Dir, "run.env"), []byte(add)); err != nil {
			return err
		}
	}
	if err := s.Write(dir); err != nil {
		return err
	}
	if err := p.Report(r, s); err != nil {
		return err
	}
	if base := r.Settings["BASELINE_RUN"]; base != "" {
		if err := appendBaseline(dir, base, s); err != nil {
			return err
		}
	}
	if found != "" {
		return fmt.Errorf("run marked %s: %s", s.Status, found)
	}
	return nil
}

// keepCutShort: a cell whose cells.tsv row the runner could not write
// whole (rundir.Cell.CutShort) stays failed with that reason first,
// whatever its phase made of its raw files (a missing raw file names
// itself after it). Its run is not ok (summary.Decide).
func keepCutShort(r *rundir.Run, s *summary.Summary) {
	for _, rc := range r.Cells {
		c := s.Cell(rc.Name)
		if !rc.CutShort || c == nil {
			continue
		}
		c.Status = "failed"
		msg := rc.Error
		if c.Error != nil && *c.Error != "" && *c.Error != rc.Error {
			msg += "; " + *c.Error
		}
		c.Error = &msg
	}
}

// unparsedFinding names the cells the runner recorded as ok whose raw
// output could not be parsed, on one line: the first cell, its file and
// what was wrong; "" when none. Such a run is not ok (summary.Decide says
// it beside the runner's own error), and csb summarize fails with it.
func unparsedFinding(r *rundir.Run, s *summary.Summary) string {
	var bad []string
	for _, rc := range r.Cells {
		c := s.Cell(rc.Name)
		if rc.Status == "ok" && c != nil && c.Unparsed != "" && c.Error != nil {
			bad = append(bad, "cell "+rc.Name+": "+*c.Error)
		}
	}
	if len(bad) == 0 {
		return ""
	}
	msg := fmt.Sprintf("%d cell(s) with raw output that could not be parsed; %s", len(bad), bad[0])
	if len(bad) > 1 {
		msg += fmt.Sprintf(" (and %d more: see summary.json)", len(bad)-1)
	}
	return msg
}

// GeneratedBy is how a generated file names the command that made it.
const GeneratedBy = "bin/csb summarize <run directory>"
