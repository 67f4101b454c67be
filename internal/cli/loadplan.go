package cli

import (
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"

	"csbench/internal/loadplan"
)

const loadPlanUsage = `Usage: csb load-plan -conns N [-threads N] -host LABEL:CPUS:FD_HARD...

Splits one HTTP load cell of N connections across the client hosts (one
-host each, in order: its label, the CPUs its processes may use and its hard
fd limit; 0 for unknown): each host's connections (the first N % hosts one
more) and its load generator's threads (-threads, default 0: one per CPU of
the host; never more than its connections), and whether each host's fd
limit holds its share (+64 spare). Prints KEY=VALUE lines for the runner:
  ok=1|0  code=split|fd_limit  refusal=<sentence>
  <label>.connections=N  <label>.threads=N   (per host)

Example:
  csb load-plan -conns 64 -threads 2 -host client1:1:20000 -host client2:1:20000
`

func runLoadPlan(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("load-plan", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	conns := fs.Int64("conns", 0, "")
	threads := fs.Int("threads", 0, "")
	var hosts []loadplan.Host
	fs.Func("host", "", func(v string) error {
		f := strings.Split(v, ":")
		if len(f) != 3 || f[0] == "" {
			return fmt.Errorf("-host %q: want LABEL:CPUS:FD_HARD", v)
		}
		cpus, err1 := strconv.Atoi(f[1])
		fd, err2 := strconv.ParseInt(f[2], 10, 64)
		if err1 != nil || err2 != nil || cpus < 0 || fd < 0 {
			return fmt.Errorf("-host %q: CPUS and FD_HARD are counts (0: unknown)", v)
		}
		hosts = append(hosts, loadplan.Host{Label: f[0], CPUs: cpus, FDHard: fd})
		return nil
	})
	help := fs.Bool("h", false, "")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%w: load-plan: %v", errUsage, err)
	}
	switch {
	case *help:
		fmt.Fprint(stdout, loadPlanUsage)
		return nil
	case fs.NArg() > 0:
		return fmt.Errorf("%w: load-plan: unexpected argument %q", errUsage, fs.Arg(0))
	case *conns <= 0 || *threads < 0:
		return fmt.Errorf("%w: load-plan needs -conns N > 0 (and -threads N >= 0)", errUsage)
	case len(hosts) == 0:
		return fmt.Errorf("%w: load-plan needs one -host per client host", errUsage)
	}
	var b strings.Builder
	for _, kv := range loadplan.Compute(*conns, *threads, hosts).KV() {
		fmt.Fprintf(&b, "%s=%s\n", kv[0], kv[1])
	}
	_, err := io.WriteString(stdout, b.String())
	return err
}
