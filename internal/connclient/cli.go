package connclient

import (
	"context"
	"crypto/tls"
	"csbench/internal/usage"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"time"
)

// Usage is the help text printed by -h (stdout) and after a usage error
// (stderr).
const Usage = `usage: connclient idle    -target IP:PORT -conns N [-rate R] [-hold D] [-path P] [common flags]
       connclient lowrate -target IP:PORT -conns N -rps R [-duration D] [-path P] [-rate R] [common flags]
       connclient churn   -target IP:PORT -rate R [-duration D] [-close client|server|linger0] [-path P] [-source IP] [-workers N] [-timeout D]
                          [-tls-ca FILE [-tls-resume]]
       connclient burst   -target IP:PORT -conns N [-path P] [-source IP] [-timeout D]

connclient opens many keep-alive TCP connections to an HTTP/1.1 server and
prints one JSON result object on stdout; progress goes to stderr once a second,
each progress line of the connect phase followed by a JSON event line
{"event":"ramp",...}, and {"event":"holding",...} (idle) or
{"event":"running",...} (lowrate) once every connection is open: a runner
waits for these lines, never for words of the progress.

idle     opens -conns connections paced at -rate connects/s, sends one
         GET -path (default /healthz) on each and reads the response, then holds every
         connection for -hold without a goroutine per connection, and counts
         the connections still alive at the end.
lowrate  opens -conns connections (paced at -rate), each with one request on
         -path as in idle (so the server does not time it out unused), then
         sends -rps requests/s
         for -duration on an open-model schedule: request i is due at
         start + i/rps on connection i mod conns, waits if that connection is
         still busy, and its latency is measured from the due time
         (coordinated-omission corrected) and from the actual send.

churn    (Phase 4) opens -rate new connections per second for -duration
         (default 10s) on an open-model schedule (connection i due at
         start + i/rate, on a timerfd), each carrying one GET -path and then
         closed: by the client (-close client, the default: TIME_WAIT on the
         client), by the server (-close server: the request asks for
         Connection: close and the client waits for the server's FIN) or by
         the client with SO_LINGER=0 (-close linger0: RST, no TIME_WAIT).
         -workers (default 256) goroutines carry the due connections;
         latencies are measured from the due time. The result has the
         failures by cause and second, and mergeable histogram buckets.
         With -tls-ca (and -tls-resume) each connection does a TLS
         handshake after the connect, timed apart, full and resumed
         counted apart (tls_full, tls_resumed histograms).
burst    (Phase 4) calls connect() -conns times back to back on
         non-blocking sockets (one epoll set, one thread), sends one GET
         with Connection: close on each once connected and waits up to
         -timeout (default 10s) for every response: against a small listen
         backlog the response latency shows the SYN-ACK retransmission
         steps (1 s, 3 s). SO_LINGER=0 on every socket.

common flags:
  -target IP:PORT   server address; an IP literal, no host names (required)
  -conns N          number of connections (required)
  -rate R           connects per second (default 1000)
  -source IP        bind this local IP, with IP_BIND_ADDRESS_NO_PORT
  -linger0          SO_LINGER=0: close with RST, leave no TIME_WAIT on the client
  -timeout D        connect timeout, and the timeout of each response (default 5s)
  -workers N        connect worker goroutines (default min(conns, 256))
  -tls-ca FILE      speak TLS (HTTPS): trust only the CA in FILE (PEM), verify
                    the server certificate for the target's IP; the TCP
                    connect and the TLS handshake are timed apart
  -tls-resume       with -tls-ca: share one session cache, so handshakes after
                    the first that got a ticket resume (default: every
                    handshake full)
idle flags:
  -hold D           how long to hold the connections (default 60s)
  -path P           the path of the one request on each (default /healthz)
lowrate flags:
  -rps R            requests per second over all connections (required)
  -duration D       length of the request schedule (default 30s)
  -path P           request path (default /healthz)
  -start-file F     once every connection is open, print {"event":"ready"}
                    and wait for file F, which holds the schedule's start as
                    Unix milliseconds (written whole: temp file and rename):
                    several processes (and hosts) start one schedule at one
                    agreed moment
  -start-wait D     longest wait for F (default 10m; then the run fails)

Numbers are positive decimal integers; durations are Go durations (500ms, 60s,
2m). The soft RLIMIT_NOFILE is raised to the hard limit; if the hard limit is
below conns+64 connclient refuses to start (exit 2).

Exit status: 0 done, 1 interrupted (SIGINT/SIGTERM: the JSON result is still
printed, with "status":"partial") or failed, 2 bad usage.

examples:
  connclient idle -target 198.18.0.1:8080 -conns 10000 -rate 2000 -hold 60s
  connclient idle -target 198.18.0.1:8080 -conns 50000 -source 198.18.0.2 -linger0
  connclient lowrate -target 198.18.0.1:8080 -conns 10000 -rps 1000 -duration 60s
  connclient lowrate -target [fd00::1]:8080 -conns 500 -rps 5000 -path /static/1k
  connclient idle -target 198.18.0.1:8443 -conns 1000 -tls-ca ca.pem -tls-resume
  connclient churn -target 198.18.0.1:8080 -rate 2000 -duration 10s -close server
  connclient burst -target 198.18.0.1:8080 -conns 4000 -timeout 8s
`

// UsageError is a bad command line; the command exits 2.
type UsageError = usage.Error

var usageErrorf = usage.Errorf

// ErrPartial is returned when a run was interrupted; the partial result has
// been printed.
var ErrPartial = errors.New("interrupted: partial result")

// ExitCode maps an error returned by Run to the process exit status.
func ExitCode(err error) int {
	switch {
	case err == nil:
		return 0
	case usage.Is(err):
		return 2
	default:
		return 1
	}
}

// config is a validated command line.
type config struct {
	mode     string
	argv     []string
	target   netip.AddrPort
	source   netip.Addr
	conns    int
	rate     int
	workers  int
	timeout  time.Duration
	linger0  bool
	hold     time.Duration // idle
	rps      int           // lowrate
	duration time.Duration // lowrate
	path     string        // lowrate
	// startFile (lowrate): wait for this file, which holds the schedule's
	// start as Unix milliseconds, once every connection is open.
	startFile string
	startWait time.Duration
	tlsCA     string      // -tls-ca: TLS on, this CA trusted
	tlsCfg    *tls.Config // built from tlsCA (and -tls-resume) by parseArgs
	close     string      // churn: client, server or linger0

	progress time.Duration // progress interval; tests may shorten it
}

// Run runs the command with args (without the program name). It writes the
// JSON result to stdout and progress and errors to stderr, and returns nil, a
// *UsageError (already reported, with the usage, on stderr), ErrPartial, or
// another error (already reported on stderr). ctx cancellation plays the role
// of SIGINT/SIGTERM.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, err := parseArgs(args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, Usage)
		return nil
	}
	if err != nil {
		fmt.Fprintf(stderr, "error: %v\n\n%s", err, Usage)
		return err
	}
	soft, hard, err := raiseNofile()
	if err != nil {
		fmt.Fprintf(stderr, "error: %v\n", err)
		return err
	}
	if err := checkNofile(cfg.conns, hard); err != nil {
		fmt.Fprintf(stderr, "error: %v\n", err)
		return err
	}
	lim := [2]uint64{soft, hard}
	switch cfg.mode {
	case "idle":
		return runIdle(ctx, cfg, lim, stdout, stderr)
	case "churn":
		return runChurn(ctx, cfg, stdout, stderr)
	case "burst":
		return runBurst(ctx, cfg, stdout, stderr)
	default:
		return runLowrate(ctx, cfg, lim, stdout, stderr)
	}
}

// progressInterval is how often progress is printed; tests shorten it.
var progressInterval = time.Second

// posInt is a flag.Value holding a positive decimal integer.
type posInt struct {
	v   int
	set bool
}

func (p *posInt) String() string { return strconv.Itoa(p.v) }

func (p *posInt) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 || strings.TrimLeft(s, "0123456789") != "" {
		return errors.New("not a positive integer")
	}
	p.v, p.set = n, true
	return nil
}

// limits on values, to catch typos rather than to police the lab.
const (
	maxConns = 10_000_000
	maxRate  = 10_000_000
)

func parseArgs(args []string) (*config, error) {
	if len(args) == 0 {
		return nil, usageErrorf("missing subcommand (idle or lowrate)")
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		return nil, flag.ErrHelp
	case "idle", "lowrate":
	case "churn", "burst":
		return parseConnArgs(args)
	default:
		return nil, usageErrorf("unknown subcommand %q (want idle, lowrate, churn or burst)", args[0])
	}
	cfg := &config{mode: args[0], argv: append([]string(nil), args...), progress: progressInterval}
	fs := flag.NewFlagSet("connclient "+cfg.mode, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var (
		target, source, path string
		conns, rate, workers posInt
		rps                  posInt
	)
	rate.v = 1000
	fs.StringVar(&target, "target", "", "")
	fs.Var(&conns, "conns", "")
	fs.Var(&rate, "rate", "")
	fs.StringVar(&source, "source", "", "")
	fs.BoolVar(&cfg.linger0, "linger0", false, "")
	fs.DurationVar(&cfg.timeout, "timeout", 5*time.Second, "")
	fs.Var(&workers, "workers", "")
	fs.StringVar(&path, "path", "/healthz", "")
	var tlsResume bool
	fs.StringVar(&cfg.tlsCA, "tls-ca", "", "")
	fs.BoolVar(&tlsResume, "tls-resume", false, "")
	if cfg.mode == "idle" {
		fs.DurationVar(&cfg.hold, "hold", 60*time.Second, "")
	} else {
		fs.Var(&rps, "rps", "")
		fs.DurationVar(&cfg.duration, "duration", 30*time.Second, "")
		fs.StringVar(&cfg.startFile, "start-file", "", "")
		fs.DurationVar(&cfg.startWait, "start-wait", 10*time.Minute, "")
	}
	if err := parseEnds(fs, args[1:], cfg, &target, &source); err != nil {
		return nil, err
	}
	if !conns.set {
		return nil, usageErrorf("-conns is required")
	}
	if conns.v > maxConns {
		return nil, usageErrorf("-conns %d is above %d", conns.v, maxConns)
	}
	if rate.v > maxRate {
		return nil, usageErrorf("-rate %d is above %d", rate.v, maxRate)
	}
	cfg.conns, cfg.rate = conns.v, rate.v
	cfg.workers = min(cfg.conns, 256)
	if workers.set {
		cfg.workers = min(workers.v, cfg.conns)
	}
	if cfg.timeout <= 0 {
		return nil, usageErrorf("-timeout %v must be positive", cfg.timeout)
	}
	if tlsResume && cfg.tlsCA == "" {
		return nil, usageErrorf("-tls-resume needs -tls-ca (TLS is on only with a CA to trust)")
	}
	if cfg.tlsCA != "" {
		tc, err := TLSClientConfig(cfg.tlsCA, cfg.target.Addr(), tlsResume)
		if err != nil {
			return nil, usageErrorf("%v", err)
		}
		cfg.tlsCfg = tc
	}
	if cfg.mode == "idle" {
		if cfg.hold <= 0 {
			return nil, usageErrorf("-hold %v must be positive", cfg.hold)
		}
		if !validPath(path) {
			return nil, usageErrorf("-path %q must start with / and hold only visible ASCII characters", path)
		}
		cfg.path = path
		return cfg, nil
	}
	if !rps.set {
		return nil, usageErrorf("-rps is required")
	}
	if rps.v > maxRate {
		return nil, usageErrorf("-rps %d is above %d", rps.v, maxRate)
	}
	cfg.rps = rps.v
	if cfg.duration <= 0 {
		return nil, usageErrorf("-duration %v must be positive", cfg.duration)
	}
	if requestCount(cfg.duration, cfg.rps) < 1 {
		return nil, usageErrorf("-rps %d for -duration %v schedules no request", cfg.rps, cfg.duration)
	}
	if !validPath(path) {
		return nil, usageErrorf("-path %q must start with / and hold only visible ASCII characters", path)
	}
	cfg.path = path
	return cfg, nil
}

// parseTarget accepts IP:PORT (IPv6 as [IP]:PORT) with an IP literal and a
// port 1-65535.
func parseTarget(s string) (netip.AddrPort, error) {
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		return netip.AddrPort{}, usageErrorf("-target %q is not IP:PORT", s)
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return netip.AddrPort{}, usageErrorf("-target %q: %q is not an IP address (host names are not accepted)", s, host)
	}
	p, err := strconv.ParseUint(port, 10, 16)
	if err != nil || p == 0 || strings.TrimLeft(port, "0123456789") != "" {
		return netip.AddrPort{}, usageErrorf("-target %q: port %q is not 1-65535", s, port)
	}
	if ip.IsUnspecified() {
		return netip.AddrPort{}, usageErrorf("-target %q: the unspecified address is not a target", s)
	}
	return netip.AddrPortFrom(ip.Unmap(), uint16(p)), nil
}

// parseEnds parses args with fs (whose -target and -source write target
// and source) and sets cfg's target and source from them.
func parseEnds(fs *flag.FlagSet, args []string, cfg *config, target, source *string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageErrorf("%v", err)
	}
	if fs.NArg() > 0 {
		return usageErrorf("unexpected argument %q", fs.Arg(0))
	}
	if *target == "" {
		return usageErrorf("-target is required (IP:PORT)")
	}
	ap, err := parseTarget(*target)
	if err != nil {
		return err
	}
	cfg.target = ap
	cfg.source, err = parseSource(*source, *target, ap)
	return err
}

// parseSource accepts "" (no source) or an IP literal of target's family.
func parseSource(source, target string, ap netip.AddrPort) (netip.Addr, error) {
	if source == "" {
		return netip.Addr{}, nil
	}
	ip, err := netip.ParseAddr(source)
	if err != nil {
		return netip.Addr{}, usageErrorf("-source %q is not an IP address", source)
	}
	if ip.Unmap().Is4() != ap.Addr().Is4() {
		return netip.Addr{}, usageErrorf("-source %s and -target %s are not the same IP family", source, target)
	}
	if ip.IsUnspecified() {
		return netip.Addr{}, usageErrorf("-source %s is the unspecified address; omit -source instead", source)
	}
	return ip.Unmap(), nil
}

func validPath(p string) bool {
	if !strings.HasPrefix(p, "/") {
		return false
	}
	for i := 0; i < len(p); i++ {
		if p[i] <= ' ' || p[i] >= 0x7f {
			return false
		}
	}
	return true
}
