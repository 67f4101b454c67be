// Command csb computes what the lab needs and derives what a run's raw files
// say: the summary.json, summary.csv and Report_*.md of a run directory and
// the cross-phase report, regenerable at any time from the raw files; and,
// before a runner starts anything, its plans, checks and configuration.
//
// Its subcommands, one line each (csb -h gives their arguments; csb
// COMMAND -h, where it answers, the details):
//
//	csb summarize       regenerate each run directory's summary and report
//	csb report          build the cross-phase report from each phase's latest run
//	csb compare         set two runs, or two results roots, side by side
//	csb ipj             read ip -j output on stdin, print what runners check
//	csb check           fail when a tool's raw output reports an error
//	csb c10k-plan       plan one Phase 3 scenario from both hosts' facts
//	csb clock           each host's clock offset, and whether it is in bound
//	csb start-at        run a command at a wall-clock instant, record when
//	csb cert            make one run's lab CA, server certificate and key
//	csb tls-probe       what TLS a client negotiates with the server (JSON)
//	csb conn-predict    predict one Phase 4 churn cell from both hosts' settings
//	csb constants       the constants bash and Go share, KEY=VALUE
//	csb sizes           check a payload size list as the server reads it
//	csb load-plan       split one HTTP load cell across the client hosts
//	csb tls-warmup      size a loaded TLS cell's warm-up from a handshake probe
//	csb nginx-conf      print one run's nginx configuration and its sizing
//	csb lock            hold one run's locks for as long as the run lives
//	csb check-paths     check the server under test's paths before a run
//	csb check-settings  check a runner's settings before anything starts
//	csb hosts           the run's host table and CPU sets from its settings
//	csb capacity-next   Phase 5's search: the next step's rate, or the capacity
//	csb progress        a step's k/n and time left; how long earlier runs took
//	csb h2load-tally    keep what summarize reads of h2load logs, in their place
//	csb history         one cell's figure across runs, changes tested
//	csb lines-tally     keep a raw listing's count, in its place
//	csb -h              usage: every subcommand, its forms and what it does
//
// Exit status 0 on success, 1 when an input cannot be read or is refused
// (csb -h says which), 2 on bad usage; csb start-at exits with its
// command's status.
package main

import (
	"os"

	"csbench/internal/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr))
}
