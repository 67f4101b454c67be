// Package cli is the csb command: every subcommand as a function of its
// arguments and output streams, so the whole command is testable.
package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"csbench/internal/atomicfile"
	"csbench/internal/rundir"
	"csbench/internal/summary"
)

const usage = `Usage: csb COMMAND [ARGS]

Commands:
  summarize DIR...   read a run directory's raw files (run.env, cells.tsv, raw/,
                     monitors/, env/) and (re)write summary.json, summary.csv,
                     the phase's Report_*.md and its charts. Safe to re-run at
                     any time: nothing raw is touched, notes.md is included.

  report [-root DIR] [-out DIR]
                     build OUT/README.md (default report/) from the latest run
                     of each phase: one line of findings per phase, links to
                     the phase reports, cross-phase charts. Runs are read from
                     <phase>/results/ under the current directory, or from
                     DIR/<phase>/ with -root (a RESULTS_ROOT).
  compare [-metrics M,M|all] A B
                     set two run directories of the same phase side by side,
                     cell by cell: each metric in both, change and ratio, and
                     with repetitions whether the change is beyond the spread
                     (A is the baseline). Default metrics: the verdicts' ones.
  ipj route|holders IP|netns
                     read ip -j output on stdin and print the fields the
                     runners check: a route's device and source, the
                     interfaces carrying IP, the namespace names
  compare -roots [-out FILE] ROOT_A ROOT_B
                     the latest run of each HTTP phase (1, 2, 3) in two results
                     roots side by side (e.g. SERVER=csb and SERVER=nginx):
                     RPS, p99, server CPU per request, RSS per connection, each
                     with its ratio; columns named by the servers under test.
  check KIND FILE    exit 1 with the tool's own error when FILE (raw output of
                     KIND: iperf3) reports a failure, although the tool exited 0;
                     KIND json: exit 1 unless FILE is one well-formed JSON document
  c10k-plan FLAGS    plan one Phase 3 scenario from both hosts' facts; prints
                     KEY=VALUE lines, -out writes the plan document (-h: flags)
  clock -bound-ms N <SAMPLES
                     each host's clock offset from timed readings (stdin:
                     LABEL T0_US REMOTE_US T1_US), and the verdict (-h)
  start-at -due EPOCH_MS -out FILE -- CMD [ARGS...]
                     run CMD at a wall-clock instant (an N-client run's common
                     start), passing signals on; write when it ran to FILE
  cert -ip IP -dir DIR [-key-type ecdsa-p256|rsa-2048]
                     make one run's lab CA and server certificate (IP SAN)
                     and key (0600) in DIR, outside any git checkout;
                     -check -cert F -key F -ca F verifies a user's own (-h)
  tls-probe -target IP:PORT -ca FILE [-out FILE]
                     the TLS version, cipher, key type a client negotiates,
                     and whether a second connection resumes (JSON)
  conn-predict FLAGS predict one Phase 4 churn cell from both hosts' settings:
                     the port wall, when EADDRNOTAVAIL comes (-h: flags)
  constants [-sh]    the constants bash and Go share, KEY=VALUE (-sh: the
                     text of lib/constants.sh, which bash sources)

A run whose BASELINE_RUN setting names another run directory of the same
phase gets that comparison appended to its report.

Examples:
  csb report
  csb report -root /tmp/results -out /tmp/results/report
  csb compare 00-iperf3/results/2026-11-30_101500_iperf3-baseline /tmp/r/00-iperf3/2026-12-01_090000_iperf3-baseline
  csb compare -roots -out /tmp/vs.md /tmp/results-csb /tmp/results-nginx
  csb check iperf3 raw/c2s-1.json
  ip -j route get 198.18.0.1 | csb ipj route
  csb summarize 00-iperf3/results/2026-11-30_101500_iperf3-baseline
  csb summarize 0*/results/*/

Exit status: 0 ok, 1 a run directory could not be summarized (or a cell's
raw output could not be parsed: the run is then marked partial, in run.env
too, and its summary and report say which file and why), 2 bad usage.
`

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
	case "summarize":
		if len(args) < 2 {
			return fmt.Errorf("%w: summarize needs at least one run directory", errUsage)
		}
		var failed []string
		for _, dir := range args[1:] {
			if err := Summarize(dir, GeneratedBy); err != nil {
				fmt.Fprintf(stderr, "error: %s: %v\n", dir, err)
				failed = append(failed, dir)
				continue
			}
			fmt.Fprintf(stdout, "summarized %s\n", dir)
		}
		if len(failed) > 0 {
			return fmt.Errorf("%d of %d run directories failed: %s", len(failed), len(args)-1, strings.Join(failed, " "))
		}
		return nil
	case "report":
		return runReport(args[1:], stdout)
	case "compare":
		return runCompare(args[1:], stdout)
	case "c10k-plan":
		return runC10kPlan(args[1:], stdout)
	case "start-at":
		return runStartAt(args[1:], stdout, stderr)
	case "clock":
		return runClock(args[1:], stdout)
	case "conn-predict":
		return runConnPredict(args[1:], stdout)
	case "constants":
		return runConstants(args[1:], stdout)
	case "cert":
		return runCert(args[1:], stdout)
	case "tls-probe":
		return runTLSProbe(args[1:], stdout)
	case "ipj":
		return runIPJ(args[1:], stdout)
	case "check":
		if len(args) != 3 {
			return fmt.Errorf("%w: check needs KIND and FILE", errUsage)
		}
		check, ok := Checks[args[1]]
		if !ok {
			return fmt.Errorf("%w: check: unknown kind %q", errUsage, args[1])
		}
		f, err := os.Open(args[2])
		if err != nil {
			return err
		}
		defer f.Close()
		return check(f)
	default:
		return fmt.Errorf("%w: unknown command %q", errUsage, args[0])
	}
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
	unparsed, err := markUnparsed(r, s)
	if err != nil {
		return err
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
	return unparsed
}

// markUnparsed finds the cells the runner recorded as ok whose raw output
// could not be parsed. Such a run is not ok: its status becomes partial in
// the summary and in run.env (appended, as the runner does: the last value
// wins), with the reason, and the returned error names the first cell, its
// file and what was wrong, on one line. The run's other errors stay.
func markUnparsed(r *rundir.Run, s *summary.Summary) (unparsed, err error) {
	var bad []string
	for _, rc := range r.Cells {
		c := s.Cell(rc.Name)
		if rc.Status == "ok" && c != nil && c.Unparsed != "" && c.Error != nil {
			bad = append(bad, "cell "+rc.Name+": "+*c.Error)
		}
	}
	if len(bad) == 0 {
		return nil, nil
	}
	msg := fmt.Sprintf("%d cell(s) with raw output that could not be parsed; %s", len(bad), bad[0])
	if len(bad) > 1 {
		msg += fmt.Sprintf(" (and %d more: see summary.json)", len(bad)-1)
	}
	if s.Status == "ok" || s.Status == "" {
		s.Status = "partial"
	}
	// The runner's own error (run.env "error") stays as it recorded it;
	// this finding goes beside it (run.env "summarize_error"), so summarizing
	// again finds the same two parts and writes the same result.
	if s.Error == nil || *s.Error == "" {
		s.Error = &msg
	} else {
		e := *s.Error + "; " + msg
		s.Error = &e
	}
	if r.Get("status") != s.Status || r.Get("summarize_error") != msg {
		add := "status=" + s.Status + "\nsummarize_error=" + msg + "\n"
		if err := atomicfile.Append(filepath.Join(r.Dir, "run.env"), []byte(add)); err != nil {
			return nil, err
		}
	}
	return fmt.Errorf("run marked %s: %s", s.Status, msg), nil
}

// GeneratedBy is how a generated file names the command that made it.
const GeneratedBy = "bin/csb summarize <run directory>"
