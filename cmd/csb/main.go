// Command csb derives what a run's raw files say: summary.json, summary.csv
// and the phase's Report_*.md, regenerable at any time from the run directory.
//
//	csb summarize DIR...      regenerate a run directory's summary and report
//	csb -h                    usage
//
// Exit status 0 on success, 1 when a run directory cannot be read, 2 on bad
// usage.
package main

import (
	"os"

	"csbench/internal/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr))
}
