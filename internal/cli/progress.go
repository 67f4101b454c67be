package cli

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"csbench/internal/connresult"
	"csbench/internal/progress"
)

// thousands is n with a comma every three digits.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := n < 0
	if neg {
		s = s[1:]
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		s = "-" + s
	}
	return s
}

const progressUsage = `Usage: csb progress [-what WORD] [-name TEXT] -k K -in S -first S PLAN_S...
       csb progress -took -lab LAB -profile PROFILE [-repeat N] -dir DIR... RUNNER...
       csb progress -ramp -in S FILE...

The first form prints the line a runner logs before its step K (1-based)
of a plan of len(PLAN_S) steps, each PLAN_S its planned seconds (-1:
unknown: the line then says "at least", and how many have no plan); -in
is the seconds since the work began, -first the seconds in when step 1
began:
  cell 3/7 TEXT; 1m05s in, about 2m10s left
The steps left take their plan times how far the steps already run took
longer than theirs (never less than their plan); the setup before step 1
is not counted as an overrun. -what names a step (default "cell"), -name
the step itself.

The second form prints, for each RUNNER (as run.env records it:
03-c10k/run_c10k.sh), one line "SECONDS FROM LAB DIR": how long its newest
finished ok run with that lab and profile took, among the run directories
in the DIRs (else the newest with that profile on another LAB), or
"-1 0 - -" when there is none. With -repeat N, a run made
with another REPEAT (FROM) counts its cells' span times N/FROM (FROM is 0
when nothing was scaled). make demo plans its phases so.

The third form prints the line a runner logs while connclient processes
open their connections, from each one's stderr (FILE: its last event line;
a missing file counts as a process not yet started), -in seconds in:
  ramp: 523,114 of 1,000,000 connections open (51 processes, 3 done), 4,950 connects/s, 0 failed; 1m46s in

Exit status: 0, 2 bad usage.
`

func runProgress(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("progress", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	what := fs.String("what", "cell", "")
	name := fs.String("name", "", "")
	k := fs.Int("k", 0, "")
	in := fs.Float64("in", -1, "")
	help := fs.Bool("h", false, "")
	first := fs.Float64("first", -1, "")
	took := fs.Bool("took", false, "")
	lab := fs.String("lab", "", "")
	profile := fs.String("profile", "", "")
	repeat := fs.Int("repeat", 0, "")
	ramp := fs.Bool("ramp", false, "")
	var dirs []string
	fs.Func("dir", "", func(v string) error { dirs = append(dirs, v); return nil })
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%w: progress: %v", errUsage, err)
	}
	if *help {
		fmt.Fprint(stdout, progressUsage)
		return nil
	}
	if *ramp {
		var rs []io.Reader
		for _, f := range fs.Args() {
			b, err := os.ReadFile(f)
			if err != nil {
				b = nil
			}
			rs = append(rs, bytes.NewReader(b))
		}
		st := connresult.ReadRamp(rs...)
		fmt.Fprintf(stdout, "ramp: %s of %s connections open (%d processes, %d done), %s connects/s, %d failed; %s in\n",
			thousands(st.Established), thousands(st.Target), st.Procs, st.Done, thousands(int64(st.RatePerS+0.5)), st.Failed,
			progress.Dur(time.Duration(max(*in, 0)*float64(time.Second))))
		return nil
	}
	if *took {
		if *lab == "" || *profile == "" || len(dirs) == 0 || fs.NArg() == 0 {
			return fmt.Errorf("%w: progress -took needs -lab, -profile, at least one -dir and a RUNNER", errUsage)
		}
		for _, r := range fs.Args() {
			d, dir, runLab, from, ok := progress.Took(dirs, r, *lab, *profile, *repeat)
			if !ok {
				fmt.Fprintln(stdout, "-1 0 - -")
				continue
			}
			fmt.Fprintf(stdout, "%d %d %s %s\n", int64(d.Seconds()), from, runLab, dir)
		}
		return nil
	}
	if *k < 1 || *in < 0 || *first < 0 || *first > *in || fs.NArg() == 0 {
		return fmt.Errorf("%w: progress needs -k K >= 1, -in S >= -first S >= 0 and the plan's seconds", errUsage)
	}
	plan := make([]float64, fs.NArg())
	for i, a := range fs.Args() {
		v, err := strconv.ParseFloat(a, 64)
		if err != nil {
			return fmt.Errorf("%w: progress: plan step %q is not a number of seconds", errUsage, a)
		}
		plan[i] = v
	}
	fmt.Fprintln(stdout, progress.At(*k, *in, *first, plan).Line(*what, *name))
	return nil
}
