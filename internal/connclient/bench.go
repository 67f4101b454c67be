package connclient

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"csbench/internal/enginebench"
)

// runBench runs benchrate or benchreport (args[0]).
func runBench(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("connclient "+args[0], flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var wrkOut, result, next, dir string
	scale := 1.0
	if args[0] == "benchrate" {
		fs.StringVar(&wrkOut, "wrk", "", "")
		fs.StringVar(&result, "result", "", "")
		fs.StringVar(&next, "next", "", "")
		fs.Float64Var(&scale, "scale", 1, "")
	} else {
		fs.StringVar(&dir, "dir", "", "")
	}
	err := fs.Parse(args[1:])
	switch {
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprint(stdout, Usage)
		return nil
	case err != nil:
		err = usageErrorf("%v", err)
	case fs.NArg() > 0:
		err = usageErrorf("unexpected argument %q", fs.Arg(0))
	case args[0] == "benchrate" && btoi(wrkOut != "")+btoi(result != "")+btoi(next != "") != 1:
		err = usageErrorf("benchrate needs one of -wrk FILE, -result FILE or -next DIR")
	case next != "" && scale != 1:
		err = usageErrorf("-next takes no -scale: the fractions are the bench's own")
	case !(scale > 0 && scale <= 100):
		err = usageErrorf("-scale %v: want a number above 0, at most 100", scale)
	case args[0] == "benchreport" && dir == "":
		err = usageErrorf("benchreport needs -dir DIR")
	}
	if err != nil {
		fmt.Fprintf(stderr, "error: %v\n\n%s", err, Usage)
		return err
	}
	if next != "" {
		what, rate, err := enginebench.BenchSustainNext(next)
		if err != nil {
			fmt.Fprintf(stderr, "error: %v\n", err)
			return err
		}
		fmt.Fprintln(stdout, what, rate)
		return nil
	}
	if args[0] == "benchrate" {
		rate, err := enginebench.BenchRate(wrkOut, result, scale)
		if err != nil {
			fmt.Fprintf(stderr, "error: %v\n", err)
			return err
		}
		fmt.Fprintln(stdout, rate)
		return nil
	}
	rep, err := enginebench.BenchReportOf(dir)
	if err != nil {
		fmt.Fprintf(stderr, "error: %v\n", err)
		return err
	}
	return writeResult(stdout, rep)
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
