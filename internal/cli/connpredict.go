package cli

import (
	"flag"
	"fmt"
	"io"

	"csbench/internal/phase4"
)

const connPredictUsage = `Usage: csb conn-predict -client FILE -server FILE -close client|server|linger0 -rate N [flags]

Predicts one Phase 4 churn cell from both hosts' settings (the KEY=VALUE
facts run_connections.sh reads before the cell): the sustainable rate the
client's ephemeral ports and TIME_WAIT allow, whether and when the cell
should see EADDRNOTAVAIL, the TIME_WAIT each host should hold. Prints one
line of KEY=VALUE for the runner's log; csb summarize computes the same from
the same files.

Flags:
  -client FILE  -server FILE   facts files (raw/<cell>.facts.{client,server}.env)
  -close V      client, server or linger0 (who ends each connection)
  -rate N       new connections per second
  -duration S   the cell's length in seconds (default 10)
  -sources N    client source addresses (default 1)
  -lab L        local | netns | ssh (local: tcp_tw_reuse=2 applies to loopback)

Exit status: 0 predicted, 1 a file could not be read, 2 bad usage.
`

func runConnPredict(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("conn-predict", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var cli, srv string
	var in phase4.Input
	fs.StringVar(&cli, "client", "", "")
	fs.StringVar(&srv, "server", "", "")
	fs.StringVar(&in.Close, "close", "", "")
	fs.Float64Var(&in.RatePerS, "rate", 0, "")
	fs.Float64Var(&in.DurationS, "duration", 10, "")
	fs.IntVar(&in.Sources, "sources", 1, "")
	fs.StringVar(&in.Lab, "lab", "", "")
	help := fs.Bool("h", false, "")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%w: conn-predict: %v", errUsage, err)
	}
	if *help {
		fmt.Fprint(stdout, connPredictUsage)
		return nil
	}
	switch {
	case fs.NArg() > 0:
		return fmt.Errorf("%w: conn-predict: unexpected argument %q", errUsage, fs.Arg(0))
	case cli == "" || srv == "":
		return fmt.Errorf("%w: conn-predict needs -client and -server", errUsage)
	case in.Close != "client" && in.Close != "server" && in.Close != "linger0":
		return fmt.Errorf("%w: conn-predict: -close %q: want client, server or linger0", errUsage, in.Close)
	case in.RatePerS <= 0 || in.DurationS <= 0 || in.Sources < 1:
		return fmt.Errorf("%w: conn-predict: -rate, -duration and -sources must be positive", errUsage)
	}
	var err error
	if in.Client, err = phase4.ReadFacts(cli); err != nil {
		return err
	}
	if in.Server, err = phase4.ReadFacts(srv); err != nil {
		return err
	}
	p, err := phase4.Predict(in)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, p.Line())
	return nil
}
