package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"csbench/internal/startat"
)

const startAtUsage = `Usage: csb start-at -due EPOCH_MS -out FILE [-pid-file FILE] -- CMD [ARGS...]

Waits until the wall-clock instant EPOCH_MS (Unix epoch milliseconds of this
host's clock), runs CMD with stdin, stdout and stderr passed through,
forwards SIGINT and SIGTERM to it, and writes FILE (temp file and rename):
  {"schema":"csb.timing/v1","due_ms":N,"start_ms":N,"end_ms":N,"exit":N}
start_ms is when CMD was started, end_ms when it exited. -pid-file gets
CMD's PID once it has started (for a monitor that follows it). An N-client run
hands every client the same due time; the hosts' clock offsets are recorded
apart (run.env), nothing is corrected here.

Exit status: CMD's (128+N when signal N ended it); 2 on bad usage or when
EPOCH_MS is more than 1 s past (nothing is started); 1 when CMD cannot be
started or FILE cannot be written. A signal before the due time starts
nothing, writes nothing and exits 128+N.

Example:
  csb start-at -due 1796104134546 -out raw/client2/1k.timing.json -- wrk -c 8 http://198.18.0.1:8080/payload/1k
`

// exitCodeError makes Main exit with a given status and print nothing.
type exitCodeError int

func (e exitCodeError) Error() string { return fmt.Sprintf("exit %d", int(e)) }

func runStartAt(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("start-at", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	due := fs.Int64("due", 0, "")
	out := fs.String("out", "", "")
	pidFile := fs.String("pid-file", "", "")
	help := fs.Bool("h", false, "")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%w: start-at: %v", errUsage, err)
	}
	if *help {
		fmt.Fprint(stdout, startAtUsage)
		return nil
	}
	switch {
	case *due <= 0:
		return fmt.Errorf("%w: start-at needs -due EPOCH_MS (a positive Unix time in milliseconds)", errUsage)
	case *out == "":
		return fmt.Errorf("%w: start-at needs -out FILE", errUsage)
	case fs.NArg() == 0:
		return fmt.Errorf("%w: start-at needs a command after --", errUsage)
	}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)
	code, err := startat.Run(startat.Job{DueMS: *due, Out: *out, PIDFile: *pidFile, Argv: fs.Args(),
		Stdin: os.Stdin, Stdout: stdout, Stderr: stderr, Signals: sigs})
	if errors.Is(err, startat.ErrLate) {
		fmt.Fprintf(stderr, "error: start-at: -due %d: %v; hand the clients a later due time\n", *due, err)
		return exitCodeError(2)
	}
	if err != nil {
		return fmt.Errorf("start-at: %v", err)
	}
	if code != 0 {
		return exitCodeError(code)
	}
	return nil
}
