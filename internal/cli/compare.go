package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"csbench/internal/atomicfile"
	"csbench/internal/compare"
	"csbench/internal/summary"
)

func loadRun(dir string) (*summary.Summary, error) {
	s, err := summary.LoadDir(dir)
	var ve *summary.VersionError
	if errors.As(err, &ve) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("%s has no readable summary.json (is it a run directory? bin/csb summarize %s regenerates it): %w", dir, dir, err)
	}
	return s, nil
}

func runCompare(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	metrics := fs.String("metrics", "", "comma-separated metric names, or all")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%w: compare: %v", errUsage, err)
	}
	if fs.NArg() != 2 {
		return fmt.Errorf("%w: compare needs two run directories, A (baseline) and B", errUsage)
	}
	a, err := loadRun(fs.Arg(0))
	if err != nil {
		return err
	}
	b, err := loadRun(fs.Arg(1))
	if err != nil {
		return err
	}
	var names []string
	if *metrics != "" {
		names = strings.Split(*metrics, ",")
	}
	res, err := compare.Runs(a, b, names)
	if err != nil {
		return err
	}
	_, err = io.WriteString(stdout, res.Markdown())
	return err
}

// appendBaseline adds the comparison with the BASELINE_RUN to the report.
func appendBaseline(dir, base string, s *summary.Summary) error {
	reports, _ := filepath.Glob(filepath.Join(dir, "Report_*.md"))
	if len(reports) != 1 {
		return fmt.Errorf("%s: want one Report_*.md to append the baseline comparison to, found %d", dir, len(reports))
	}
	text := "\n## Compared with the baseline run\n\n"
	a, err := loadRun(base)
	if err == nil {
		var res *compare.Result
		if res, err = compare.Runs(a, s, nil); err == nil {
			text += "BASELINE_RUN=`" + base + "`.\n\n" + res.Markdown()
		}
	}
	if err != nil {
		text += fmt.Sprintf("_The baseline run could not be compared: %v._\n", err)
	}
	return atomicfile.Append(reports[0], []byte(text))
}
