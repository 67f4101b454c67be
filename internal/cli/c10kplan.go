package cli

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"csbench/internal/c10kplan"
	"csbench/internal/phase3"
)

const c10kPlanUsage = `Usage: csb c10k-plan -server-facts FILE -client-facts FILE -kind KIND -conns N [flags]

Plans one Phase 3 scenario from both hosts' facts (the KEY=VALUE lines of
lib/c10k.sh's facts script) and, with -sockets, the client's sockets toward
the server: server processes, client source addresses and their shares, the
addresses to add; or why it cannot work (a code, a sentence, the setting to
change). Prints KEY=VALUE lines for the runner (ok, code, refusal, sources,
add, share_conns, ...); -out also writes the plan document (JSON). A fact
that could not be read is "unreadable" and its check is skipped, never 0.

Flags:
  -kind idle|lowrate|active   -conns N   -rps N   -connect-rate N
  -streams S      the active scenario over HTTP/2: -conns requests in flight
                  as N / S connections of S streams (S must divide N); the
                  answer's connections= is that count
  -lab local|netns|ssh        -server-ip IP -server-port N -client-ip IP
  -client-nic NIC             -extra-ips IP,IP (LAB=ssh)
  -tw-threshold N             -tw-waited (TIME_WAIT was already waited for)
  -sockets FILE   ss -Htan dst SERVER:PORT output (without it: preflight only)
  -addrs FILE     ip -j -4 addr show dev CLIENT_NIC output
  -out FILE       write the plan document here (temp file and rename)
  -server-kind csb|nginx|cmd|url   the server under test: its estimate of
                  memory per connection before a step has been measured
  -after-step     a smaller step of the run comes first (preflight): this
                  one's memory is checked from that step's measured cost
                  before it starts; the estimate only warns here
  -cost-run DIR   the run so far: memory is predicted from the cost per
                  connection its largest earlier step measured (MemAvailable's
                  fall, TCP buffer pages), not from the estimates
  -client-host name=NAME,ip=IP,facts=FILE[,nic=NIC][,sockets=FILE][,addrs=FILE][,extra=IP+IP]
                  one client host (repeat for each; default: one host "local"
                  with -client-ip, -client-nic, -client-facts, -sockets,
                  -addrs): the scenario is split evenly across the hosts, each
                  planned on its own facts, each source names its host

Exit status: 0 planned (ok=1 or ok=0: a refusal is an answer), 2 bad usage,
1 a file could not be read. The answer's exit= is the runner's status for a
refusal before the run: 2 when only a smaller CONNS cures it (memory,
files), 6 for a limit or sysctl to raise.
`

func runC10kPlan(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("c10k-plan", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var in c10kplan.Input
	var srvFacts, cliFacts, sockets, addrs, out, extra string
	var hostSpecs []string
	fs.Func("client-host", "", func(v string) error { hostSpecs = append(hostSpecs, v); return nil })
	fs.StringVar(&srvFacts, "server-facts", "", "")
	fs.StringVar(&cliFacts, "client-facts", "", "")
	fs.StringVar(&in.Kind, "kind", "", "")
	fs.Int64Var(&in.Conns, "conns", 0, "")
	streams := fs.Int64("streams", 0, "")
	fs.Int64Var(&in.RPS, "rps", 0, "")
	fs.Int64Var(&in.ConnectRate, "connect-rate", 0, "")
	fs.StringVar(&in.Lab, "lab", "", "")
	fs.StringVar(&in.ServerIP, "server-ip", "", "")
	fs.IntVar(&in.ServerPort, "server-port", 0, "")
	fs.StringVar(&in.ClientIP, "client-ip", "", "")
	fs.StringVar(&in.ClientNIC, "client-nic", "", "")
	fs.StringVar(&extra, "extra-ips", "", "")
	fs.Int64Var(&in.TWThreshold, "tw-threshold", 0, "")
	fs.BoolVar(&in.TWWaited, "tw-waited", false, "")
	fs.StringVar(&sockets, "sockets", "", "")
	fs.StringVar(&addrs, "addrs", "", "")
	fs.StringVar(&out, "out", "", "")
	var costRun string
	fs.StringVar(&in.ServerKind, "server-kind", "", "")
	fs.BoolVar(&in.AfterStep, "after-step", false, "")
	fs.StringVar(&costRun, "cost-run", "", "")
	help := fs.Bool("h", false, "")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%w: c10k-plan: %v", errUsage, err)
	}
	if *help {
		fmt.Fprint(stdout, c10kPlanUsage)
		return nil
	}
	switch {
	case fs.NArg() > 0:
		return fmt.Errorf("%w: c10k-plan: unexpected argument %q", errUsage, fs.Arg(0))
	case srvFacts == "" || (cliFacts == "" && len(hostSpecs) == 0):
		return fmt.Errorf("%w: c10k-plan needs -server-facts and -client-facts (or -client-host)", errUsage)
	case in.Kind != "idle" && in.Kind != "lowrate" && in.Kind != "active":
		return fmt.Errorf("%w: c10k-plan: -kind %q: want idle, lowrate or active", errUsage, in.Kind)
	case in.Conns <= 0:
		return fmt.Errorf("%w: c10k-plan: -conns %d: want a positive count", errUsage, in.Conns)
	case in.ConnectRate <= 0:
		return fmt.Errorf("%w: c10k-plan: -connect-rate %d: want a positive rate", errUsage, in.ConnectRate)
	case *streams < 0:
		return fmt.Errorf("%w: c10k-plan: -streams %d: want a positive count", errUsage, *streams)
	case in.Lab != "local" && in.Lab != "netns" && in.Lab != "ssh":
		return fmt.Errorf("%w: c10k-plan: -lab %q: want local, netns or ssh", errUsage, in.Lab)
	case in.ServerIP == "" || (in.ClientIP == "" && len(hostSpecs) == 0):
		return fmt.Errorf("%w: c10k-plan needs -server-ip and -client-ip (or -client-host)", errUsage)
	}
	if err := in.SplitStreams(*streams); err != nil {
		return fmt.Errorf("%w: c10k-plan: -streams %d: %v", errUsage, *streams, err)
	}
	if extra != "" {
		in.ExtraIPs = strings.Split(extra, ",")
	}
	var err error
	if in.Server, err = c10kplan.ReadFacts(srvFacts); err != nil {
		return fmt.Errorf("server facts: %w", err)
	}
	var hosts []c10kplan.ClientHost
	if len(hostSpecs) > 0 {
		for _, spec := range hostSpecs {
			h, err := readClientHost(&in, spec)
			if err != nil {
				return err
			}
			hosts = append(hosts, h)
		}
	} else {
		h := c10kplan.ClientHost{Name: "local", IP: in.ClientIP, NIC: in.ClientNIC, ExtraIPs: in.ExtraIPs}
		if err := loadClientHost(&in, &h, cliFacts, sockets, addrs); err != nil {
			return err
		}
		hosts = append(hosts, h)
		in.Client = h.Facts
	}
	var costErr error
	if costRun != "" {
		in.Cost, costErr = phase3.StepCost(costRun, in.Kind, in.Conns)
	}
	p := c10kplan.ComputeHosts(in, hosts)
	if costErr != nil {
		p.Notes = append(p.Notes, "memory planned from the estimates: the cost the step before measured could not be read ("+costErr.Error()+")")
	}
	if out != "" {
		if err := c10kplan.Write(out, p); err != nil {
			return err
		}
	}
	return p.WriteKV(stdout)
}

// readClientHost reads one -client-host spec: its facts, and its sockets
// and addresses when given.
func readClientHost(in *c10kplan.Input, spec string) (c10kplan.ClientHost, error) {
	var h c10kplan.ClientHost
	var facts, sockets, addrs string
	for _, kv := range strings.Split(spec, ",") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return h, fmt.Errorf("%w: c10k-plan: -client-host %q: %q is not KEY=VALUE", errUsage, spec, kv)
		}
		switch k {
		case "name":
			h.Name = v
		case "ip":
			h.IP = v
		case "nic":
			h.NIC = v
		case "facts":
			facts = v
		case "sockets":
			sockets = v
		case "addrs":
			addrs = v
		case "extra":
			if v != "" {
				h.ExtraIPs = strings.Split(v, "+")
			}
		default:
			return h, fmt.Errorf("%w: c10k-plan: -client-host %q: unknown key %q (name, ip, nic, facts, sockets, addrs, extra)", errUsage, spec, k)
		}
	}
	if h.Name == "" || h.IP == "" || facts == "" {
		return h, fmt.Errorf("%w: c10k-plan: -client-host %q needs name=, ip= and facts=", errUsage, spec)
	}
	return h, loadClientHost(in, &h, facts, sockets, addrs)
}

// loadClientHost reads a client host's facts, and its sockets and
// addresses when given.
func loadClientHost(in *c10kplan.Input, h *c10kplan.ClientHost, facts, sockets, addrs string) error {
	var err error
	if h.Facts, err = c10kplan.ReadFacts(facts); err != nil {
		return fmt.Errorf("client host %s facts: %w", h.Name, err)
	}
	if sockets != "" {
		// TIME_WAIT reusability is a plan result; compute it once first.
		one := *in
		one.Client, one.ClientIP = h.Facts, h.IP
		reusable := c10kplan.Compute(one).TWReusable
		if h.Sockets, err = c10kplan.ReadSocketsFile(sockets, reusable); err != nil {
			return fmt.Errorf("client host %s sockets: %w", h.Name, err)
		}
	}
	if addrs != "" {
		f, err := os.Open(addrs)
		if err != nil {
			return fmt.Errorf("client host %s addresses: %w", h.Name, err)
		}
		h.Present, err = c10kplan.ReadAddrs(f)
		f.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", addrs, err)
		}
	}
	return nil
}
