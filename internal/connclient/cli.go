package connclient

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"csbench/internal/clientsys"
	"csbench/internal/h2wire"
	"csbench/internal/responder"
	"csbench/internal/tlsdial"
	"csbench/internal/usage"
)

// Usage is the help text printed by -h (stdout) and after a usage error
// (stderr).
const Usage = `usage: connclient idle    -target IP:PORT -conns N [-rate R] [-hold D | -hold-file F [-hold-wait D]] [-path P] [-http 1.1|2] [common flags] [ramp flags]
       connclient lowrate -target IP:PORT -conns N -rps R [-duration D] [-path P] [-rate R] [-drain D] [-loops N] [common flags] [ramp flags]
       connclient churn   -target IP:PORT -rate R [-duration D] [-close client|server|linger0] [-path P] [-source IP] [-workers N] [-timeout D]
                          [-tls-ca FILE [-tls-resume]]
       connclient burst   -target IP:PORT -conns N [-path P] [-source IP] [-timeout D]
       connclient responder -listen IP:PORT [-size N] [-spin]
       connclient benchrate -wrk FILE | -result FILE [-scale F] | -next DIR
       connclient benchreport -dir DIR

connclient opens many keep-alive TCP connections to an HTTP/1.1 server (idle:
or HTTP/2) and prints one JSON result object on stdout; progress goes to stderr once a second,
each progress line of the connect phase followed by a JSON event line
{"event":"ramp",...}, and {"event":"holding",...} (idle) or
{"event":"running",...} (lowrate) once every connection is open: a runner
waits for these lines, never for words of the progress.

idle     opens -conns connections paced at -rate connects/s, sends one
         GET -path (default /healthz) on each and reads the response, then holds every
         connection for -hold without a goroutine per connection, and counts
         the connections still alive at the end. With -hold-file the hold
         ends at the time the file gives instead: processes on several
         hosts hold until one instant, after every one has opened its
         connections.
lowrate  opens -conns connections (paced at -rate), each with one request on
         -path as in idle (so the server does not time it out unused), then
         sends -rps requests/s
         for -duration on an open-model schedule: request i is due at
         start + i/rps, and its latency is measured from the due time
         (coordinated-omission corrected) and from the actual send.
         Cleartext runs on event loops (engine "epoll"): one per 5,000
         requests/s, at most one per CPU the process may use (-loops),
         each owning its share of the
         connections and of the schedule (non-blocking sockets in one epoll
         set, no goroutine per request). A due request takes the connection
         of its loop idle the longest; when every one is busy it waits,
         counted in requests_late_pool_busy (the pool was too small for the
         load), and its latency still counts from its due time. A connection
         that fails or is closed leaves the pool; only a loop with none left
         fails its requests (conn_closed). A response that is not 2xx is an
         error of cause "status". With -tls-ca the schedule runs on the
         goroutine engine instead (engine "goroutines": a goroutine per
         connection, request i on connection i mod conns, waiting for it
         when busy), which cannot keep high rates; the result's "engine"
         says which ran.

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

responder  (to measure the client) a trivial HTTP/1.1 server: one event
         loop (one CPU) answering every request head with one fixed 200
         response of -size body bytes (default 1024), whatever the path;
         with -spin it polls without ever sleeping (its CPU fully used), so
         that no request waits for it to be woken.
         Prints {"event":"listening","addr":...} on stdout, and
         {"event":"shutdown","requests":N} after SIGINT/SIGTERM.
benchrate, benchreport  compute from the raw files of
         scripts/engine-bench.sh: benchrate prints the rate of its next run,
         -scale (default 1) times wrk's achieved requests/s (-wrk, wrk's
         output with lib/wrk/report.lua) or a lowrate result's rps_achieved
         (-result); with -next DIR (a repetition directory), what the
         bench runs next: "sustain RATE" (the next fraction of the ceiling
         to try, while no sustain run kept its schedule: 99 % of its rate,
         sender lag p99 within 10 ms) or "lag RATE" (0.8 of the rate the
         one that kept it achieved); benchreport prints, as JSON,
         the figures of every repetition in -dir, their min/median/max and
         the verdicts: requests per client CPU-second at least 0.8 of wrk's
         (both keeping every connection busy), and sender lag p99 at most
         1 ms at 0.8 of the engine's open-loop ceiling (the highest rate it
         kept).

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
ramp flags (idle, lowrate):
  -pace aimd|fixed  how the connects are paced (default aimd). fixed: connect
                    k due at start + k/rate, whatever happens. aimd: the ramp
                    paces itself to what the server accepts, from -rate down:
                    every 100 ms, if an attempt (connect, TLS handshake, first
                    request) begun after the last cut timed out, or took
                    -connect-slow or longer with a retransmission on it
                    (TCP_INFO: a SYN or a handshake's last ACK was dropped
                    on a full queue), or has waited 3 x -connect-slow for
                    its connect (a connected attempt waiting for its answer
                    is not counted until it ends), the rate is halved, to no less than
                    max(1, rate/100); a slow attempt with nothing
                    retransmitted waited for a CPU and changes nothing;
                    while attempts complete within -connect-slow it grows by
                    rate/20 per second, up to -rate
  -connect-retries R  an attempt that timed out (the connect, or the TLS
                    handshake or first request, with no answer) is made
                    again, in the next paced slot, at most R times per
                    connection (default 3; 0: never); other failures are
                    not retried
  -connect-slow D   the attempt time that counts as a drop: a SYN is
                    retransmitted after 1 s (default 1s)
  -connect-timeout D  the bound of an attempt's connect, TLS handshake and
                    first response, each (default -timeout): a server
                    that takes connections in slowly while it opens many
                    (C1M) answers late, not never; -timeout stays the
                    bound of each low-rate request
  -ramp-max D       no attempt starts later than D after the first (default
                    3 x conns/rate + 30s); connections left are not
                    attempted, retries left not made, and the result says
                    "ramp": {"bound_reached": true}
idle flags:
  -hold D           how long to hold the connections (default 60s)
  -hold-file F      instead of -hold: once every connection is open, print
                    {"event":"holding"}, wait for file F, which holds the
                    hold's end as Unix milliseconds (written whole: temp file
                    and rename), hold until then, check the connections and
                    close; an end already past ends the hold at once
  -hold-wait D      longest wait for F (default 10m; then the connections are
                    checked, the result has errors {"hold_file": 1}, exit 1)
  -path P           the path of the one request on each (default /healthz)
  -http 1.1|2       the HTTP version (default 1.1). 2: HTTP/2, as a browser
                    holds it: with -tls-ca h2 by ALPN (only h2 offered; the
                    server must choose it, else alpn_not_h2), in cleartext
                    h2c with prior knowledge (a server answering in HTTP/1:
                    http1_answer). Each connection sends the preface,
                    SETTINGS (push off) and GET -path on stream 1, and reads
                    the response, answering the server's SETTINGS and PINGs;
                    a GOAWAY (goaway) or RST_STREAM (rst_stream) before it
                    fails the connection. During the hold, at each check
                    (once a second), it answers the server's SETTINGS and
                    PINGs and ignores WINDOW_UPDATE; a GOAWAY is a drop
                    (goaway). The result says "http": "1.1" or "2".
                    lowrate, churn and burst speak HTTP/1.1 only (-http 2
                    is refused there)
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
  -close-late       with -start-file: close the connections only once every
                    process's schedule may be over (its start, -duration,
                    -drain and -timeout), so that closing these does not
                    delay the requests the others still have under way
  -drain D          how long after -duration a request still waiting for a
                    connection may be sent; the rest are counted unsent
                    (default: no bound, every request is sent)
  -loops N          event loops (default one per 5,000 -rps, at most
                    GOMAXPROCS: one per CPU the process may use, as taskset
                    allows)
responder flags:
  -listen IP:PORT   address to listen on, an IP literal; port 0: any free port
  -size N           response body bytes, 0 to 1048576 (default 1024)
  -spin             poll without sleeping (uses its CPU fully)

Numbers are positive decimal integers (-connect-retries may be 0); durations
are Go durations (500ms, 60s, 2m). The soft RLIMIT_NOFILE is raised to the
hard limit; if the hard limit is below conns+64 connclient refuses to start
(exit 2).

Exit status: 0 done, 1 interrupted (SIGINT/SIGTERM: the JSON result is still
printed, with "status":"partial") or failed (idle: no end from -hold-file;
the result is printed), 2 bad usage.

examples:
  connclient idle -target 198.18.0.1:8080 -conns 10000 -rate 2000 -hold 60s
  connclient idle -target 198.18.0.1:8080 -conns 50000 -source 198.18.0.2 -linger0
  connclient idle -target 198.18.0.1:8080 -conns 50000 -rate 5000 -connect-retries 5
  connclient idle -target 198.18.0.1:8080 -conns 20000 -rate 8000 -connect-timeout 10s
  connclient idle -target 198.18.0.1:8080 -conns 50000 -hold-file raw/idle.hold -hold-wait 5m
  connclient lowrate -target 198.18.0.1:8080 -conns 10000 -rps 1000 -duration 60s
  connclient lowrate -target [fd00::1]:8080 -conns 500 -rps 5000 -path /static/1k
  connclient idle -target 198.18.0.1:8443 -conns 1000 -tls-ca ca.pem -tls-resume
  connclient idle -target 198.18.0.1:8443 -conns 10000 -http 2 -tls-ca ca.pem -hold 60s
  connclient churn -target 198.18.0.1:8080 -rate 2000 -duration 10s -close server
  connclient burst -target 198.18.0.1:8080 -conns 4000 -timeout 8s
  connclient responder -listen 127.0.0.1:0 -size 1024
  connclient lowrate -target 127.0.0.1:8080 -conns 64 -rps 200000 -duration 5s -drain 0s -path /payload/1k
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
	// drain (lowrate): how long after -duration a request still waiting
	// for a connection may be sent; < 0: no bound.
	drain time.Duration
	loops int // lowrate: event loops; 0: GOMAXPROCS
	// startFile (lowrate): wait for this file, which holds the schedule's
	// start as Unix milliseconds, once every connection is open.
	startFile string
	startWait time.Duration
	// closeLate (lowrate, with startFile): close the connections at the
	// agreed schedule's end plus drain and timeout, not at this one's.
	closeLate bool
	http      string         // -http: httpV11 or httpV2 (idle only)
	tlsCA     string         // -tls-ca: TLS on, this CA trusted
	tlsCfg    *tls.Config    // built from tlsCA (and -tls-resume) by parseArgs
	close     string         // churn: client, server or linger0
	listen    netip.AddrPort // responder
	size      int            // responder: body bytes
	spin      bool           // responder: poll without sleeping

	// holdFile (idle): once every connection is open, wait for this file,
	// which holds the hold's end as Unix milliseconds, and hold until then.
	holdFile string
	holdWait time.Duration
	// The ramp (idle, lowrate): how the attempts are paced (paceAIMD or
	// paceFixed), how many times one that timed out is made again, the
	// attempt time that counts as slow (a SYN retransmitted), and the
	// longest ramp.
	pace    string
	retries int
	slow    time.Duration
	rampMax time.Duration
	// connectTimeout (idle, lowrate): the bound of an attempt's connect,
	// TLS handshake and first response each (-connect-timeout; default
	// -timeout, which stays the bound of the low-rate requests).
	connectTimeout time.Duration

	progress time.Duration // progress interval; tests may shorten it
}

// Run runs the command with args (without the program name). It writes the
// JSON result to stdout and progress and errors to stderr, and returns nil, a
// *UsageError (already reported, with the usage, on stderr), ErrPartial, or
// another error (already reported on stderr). ctx cancellation plays the role
// of SIGINT/SIGTERM.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && (args[0] == "benchrate" || args[0] == "benchreport") {
		return runBench(ctx, args, stdout, stderr)
	}
	cfg, err := parseArgs(args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, Usage)
		return nil
	}
	if err != nil {
		fmt.Fprintf(stderr, "error: %v\n\n%s", err, Usage)
		return err
	}
	soft, hard, err := clientsys.RaiseNofile()
	if err != nil {
		fmt.Fprintf(stderr, "error: %v\n", err)
		return err
	}
	if err := clientsys.CheckNofile(cfg.conns, hard); err != nil {
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
	case "responder":
		return responder.Run(ctx, cfg.listen, cfg.size, cfg.spin, stdout, stderr)
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
	maxLoops = 1024
)

func parseArgs(args []string) (*config, error) {
	if len(args) == 0 {
		return nil, usageErrorf("missing subcommand (%s)", subcommandList)
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		return nil, flag.ErrHelp
	case "idle", "lowrate":
	case "churn", "burst":
		return parseConnArgs(args)
	case "responder":
		return parseResponderArgs(args)
	default:
		return nil, usageErrorf("unknown subcommand %q (want %s)", args[0], subcommandList)
	}
	cfg := &config{mode: args[0], argv: append([]string(nil), args...), progress: progressInterval}
	fs := flag.NewFlagSet("connclient "+cfg.mode, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var (
		target, source, path string
		conns, rate, workers posInt
		rps, loops           posInt
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
	fs.StringVar(&cfg.http, "http", httpV11, "")
	var tlsResume bool
	fs.StringVar(&cfg.tlsCA, "tls-ca", "", "")
	fs.BoolVar(&tlsResume, "tls-resume", false, "")
	rampFlags(fs, cfg)
	if cfg.mode == "idle" {
		fs.DurationVar(&cfg.hold, "hold", 60*time.Second, "")
		fs.StringVar(&cfg.holdFile, "hold-file", "", "")
		fs.DurationVar(&cfg.holdWait, "hold-wait", 10*time.Minute, "")
	} else {
		fs.Var(&rps, "rps", "")
		fs.DurationVar(&cfg.duration, "duration", 30*time.Second, "")
		fs.StringVar(&cfg.startFile, "start-file", "", "")
		fs.DurationVar(&cfg.startWait, "start-wait", 10*time.Minute, "")
		fs.BoolVar(&cfg.closeLate, "close-late", false, "")
		fs.DurationVar(&cfg.drain, "drain", 0, "")
		fs.Var(&loops, "loops", "")
	}
	if err := parseEnds(fs, args[1:], cfg, &target, &source); err != nil {
		return nil, err
	}
	if err := checkHTTP(cfg); err != nil {
		return nil, err
	}
	if !conns.set {
		return nil, usageErrorf("-conns is required")
	}
	if cfg.closeLate && cfg.startFile == "" {
		return nil, usageErrorf("-close-late needs -start-file")
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
	if err := checkRamp(fs, cfg); err != nil {
		return nil, err
	}
	if tlsResume && cfg.tlsCA == "" {
		return nil, usageErrorf("-tls-resume needs -tls-ca (TLS is on only with a CA to trust)")
	}
	if cfg.tlsCA != "" {
		tc, err := tlsdial.ClientConfig(cfg.tlsCA, cfg.target.Addr(), tlsResume)
		if err != nil {
			return nil, usageErrorf("%v", err)
		}
		if cfg.http == httpV2 {
			tc.NextProtos = []string{"h2"}
		}
		cfg.tlsCfg = tc
	}
	if cfg.mode == "idle" {
		if cfg.hold <= 0 {
			return nil, usageErrorf("-hold %v must be positive", cfg.hold)
		}
		if err := checkHoldFile(fs, cfg); err != nil {
			return nil, err
		}
		if !validPath(path) {
			return nil, usageErrorf("-path %q must start with / and hold only visible ASCII characters", path)
		}
		if cfg.http == httpV2 && len(path) > h2wire.MaxPath {
			return nil, usageErrorf("-path of %d bytes: with -http 2 at most %d", len(path), h2wire.MaxPath)
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
	if loops.v > maxLoops {
		return nil, usageErrorf("-loops %d is above %d", loops.v, maxLoops)
	}
	cfg.loops = loops.v
	if cfg.drain < 0 {
		return nil, usageErrorf("-drain %v must not be negative", cfg.drain)
	}
	if !isSet(fs, "drain") {
		cfg.drain = -1 // no bound: every request is sent
	}
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

// The HTTP versions of -http.
const (
	httpV11 = "1.1"
	httpV2  = "2"
)

// checkHTTP checks -http: 1.1 or 2, and 2 only in idle; the other modes
// speak HTTP/1.1 only.
func checkHTTP(cfg *config) error {
	switch {
	case cfg.http != httpV11 && cfg.http != httpV2:
		return usageErrorf("-http %q: want 1.1 or 2", cfg.http)
	case cfg.http == httpV2 && cfg.mode != "idle":
		return usageErrorf("-http 2: %s speaks HTTP/1.1 only (%s); use idle", cfg.mode, http1Only[cfg.mode])
	}
	return nil
}

// http1Only says why each mode but idle speaks HTTP/1.1 only.
var http1Only = map[string]string{
	"lowrate": "its open-model engine",
	"churn":   "a connection per request",
	"burst":   "a connection per request",
}

// subcommandList names every subcommand, for errors.
const subcommandList = "idle, lowrate, churn, burst, responder, benchrate or benchreport"

// parseResponderArgs parses connclient responder's flags.
func parseResponderArgs(args []string) (*config, error) {
	cfg := &config{mode: args[0], argv: append([]string(nil), args...)}
	fs := flag.NewFlagSet("connclient responder", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	listen := ""
	fs.StringVar(&listen, "listen", "", "")
	fs.IntVar(&cfg.size, "size", 1024, "")
	fs.BoolVar(&cfg.spin, "spin", false, "")
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, err
		}
		return nil, usageErrorf("%v", err)
	}
	if fs.NArg() > 0 {
		return nil, usageErrorf("unexpected argument %q", fs.Arg(0))
	}
	if listen == "" {
		return nil, usageErrorf("-listen is required (IP:PORT; port 0: any free port)")
	}
	ap, err := netip.ParseAddrPort(listen)
	if err != nil {
		return nil, usageErrorf("-listen %q is not IP:PORT with an IP literal", listen)
	}
	cfg.listen = netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
	if cfg.size < 0 || cfg.size > 1<<20 {
		return nil, usageErrorf("-size %d: want 0 to %d body bytes", cfg.size, 1<<20)
	}
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

// isSet reports whether the flag name was given on the command line.
func isSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
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
