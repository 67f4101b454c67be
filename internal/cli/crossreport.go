package cli

import (
	"flag"
	"fmt"
	"io"
	"path/filepath"

	"csbench/internal/crossreport"
)

// runReport writes the cross-phase report. A run whose summary.json cannot
// be read is skipped, named on stderr and in the report; the status is 0
// when any run was reported, 1 when none could be.
func runReport(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	root := fs.String("root", "", "a results root (RESULTS_ROOT) holding <phase>/<run>/")
	out := fs.String("out", "report", "where README.md and the charts go")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%w: report: %v", errUsage, err)
	}
	if fs.NArg() != 0 {
		return fmt.Errorf("%w: report takes no arguments, got %q", errUsage, fs.Arg(0))
	}
	dir, repo := *root, false
	if dir == "" {
		dir, repo = ".", true
	}
	in, err := crossreport.Find(dir, repo)
	if err != nil {
		return err
	}
	in.Warn(stderr, "report")
	gen := "bin/csb report"
	if *root != "" {
		gen += " -root <results root>"
	}
	if err := crossreport.Write(in, *out, gen); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "report: %s\n", filepath.Join(*out, "README.md"))
	return nil
}
