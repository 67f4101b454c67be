// Package server is the fixed-payload HTTP server of CS Benchmark: the
// measured end of the HTTP throughput, latency and C10K runs.
//
// It serves /healthz and /payload/<size> from bodies and header values built
// once at start, so a request costs the server no allocation of its own and
// the numbers measure the network stack and net/http rather than the handler.
// It speaks HTTP/1.1 and, with -http, HTTP/2 (h2 over TLS, h2c with prior
// knowledge in cleartext), both from net/http. It reports on stdout as JSON
// lines (one when listening, one at shutdown) and writes errors to stderr; it
// never logs per request.
//
// With -service-time and -slots it is also a queue of known capacity, the
// ground truth of a capacity search (slots.go).
package server

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/netip"
	"os"
	"runtime"
	"strconv"
	"time"

	"csbench/internal/sizes"
	"csbench/internal/usage"
)

// Defaults of the flags, and the fixed settings of the http.Server.
const (
	DefaultPort              = 8080
	DefaultIdleTimeout       = 10 * time.Minute // longer than a C10K idle hold of several minutes
	DefaultReadHeaderTimeout = 5 * time.Second

	// MaxHeaderBytes is small: load generators send a few short headers,
	// and a small limit keeps 10,000 connections' read buffers modest.
	MaxHeaderBytes = 8 << 10

	// WriteTimeout bounds the time from the end of a request's headers to
	// the end of its response. It is there so a client that stops reading
	// cannot hold a handler forever; it is far above the time any payload
	// (at most sizes.MaxSizeBytes) takes on a working link, so it never cuts a
	// measured response short. Idle keep-alive connections are governed by
	// IdleTimeout alone, so it does not affect C10K holds.
	WriteTimeout = 60 * time.Second

	// ShutdownTimeout bounds the graceful shutdown: in-flight requests get
	// this long to finish before the remaining connections are closed.
	ShutdownTimeout = 10 * time.Second
)

// Config is the resolved, validated command line.
type Config struct {
	Addr              netip.Addr
	Port              int // 0: the kernel picks a free port
	Sizes             []sizes.Size
	IdleTimeout       time.Duration
	ReadHeaderTimeout time.Duration
	ReusePort         bool
	GOMAXPROCS        int // 0: leave the runtime default
	// TLS: nil serves cleartext; else HTTPS (TLS 1.3 or 1.2) with this
	// certificate (tlsconf.go).
	TLS *TLSSettings
	// HTTP is which HTTP versions are offered (protocols.go); the zero
	// value is HTTP/1.1 only, -http's default.
	HTTP HTTPVersions
	// MaxConcurrentStreams is HTTP/2's per-connection stream limit; 0
	// leaves net/http's default (NetHTTPMaxConcurrentStreams).
	MaxConcurrentStreams int
	// ServiceTime and Slots are the ground-truth mode (slots.go): both
	// zero, or both set.
	ServiceTime time.Duration
	Slots       int
	// AcceptEvery paces accept (accept.go): at most one connection per
	// AcceptEvery; 0 accepts as fast as the host can.
	AcceptEvery time.Duration
}

// A UsageError is a bad command line; the command exits 2 for it.
type UsageError = usage.Error

var usageErrorf = usage.Errorf

// ExitCode maps an error returned by Run to the command's exit status:
// 0 for nil, 2 for bad usage, 1 for anything else.
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

// Run is the whole server command. args excludes the program name; the
// environment is read for CSB_SERVICE_TIME and CSB_SLOTS. It serves
// until ctx is canceled, then shuts down gracefully and returns nil.
// Run reports every error on stderr itself ("error: ..."; with the usage text
// for bad usage), so the caller only has to turn the error into an exit status
// with ExitCode. -h prints the usage text on stdout and returns nil.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, err := parseArgs(args, os.LookupEnv)
	if errors.Is(err, flag.ErrHelp) {
		writeUsage(stdout)
		return nil
	}
	if err != nil {
		fmt.Fprintf(stderr, "error: %v\n\n", err)
		writeUsage(stderr)
		return err
	}
	if err := Serve(ctx, cfg, stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "error: %v\n", err)
		return err
	}
	return nil
}

type flags struct {
	addr              string
	port              int
	sizes             string
	idleTimeout       time.Duration
	readHeaderTimeout time.Duration
	reusePort         bool
	gomaxprocs        int
	tlsCert, tlsKey   string
	tlsTickets        bool
	http              string
	maxStreams        int
	serviceTime       time.Duration
	slots             int
	acceptEvery       time.Duration
}

func newFlagSet(f *flags) *flag.FlagSet {
	fs := flag.NewFlagSet("server", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // Run prints errors and usage itself
	fs.StringVar(&f.addr, "addr", "", "`IP` literal of this host to bind (required; hostnames are refused)")
	fs.IntVar(&f.port, "port", DefaultPort, "TCP `port` to listen on (0: the kernel picks one; see \"addr\" in the listening line)")
	fs.StringVar(&f.sizes, "sizes", sizes.DefaultSizes, "comma-separated `list` of payload sizes: digits with an optional k (1024) or m (1048576)")
	fs.DurationVar(&f.idleTimeout, "idle-timeout", DefaultIdleTimeout, "close a keep-alive connection idle for this `duration`")
	fs.DurationVar(&f.readHeaderTimeout, "read-header-timeout", DefaultReadHeaderTimeout, "time `limit` for reading one request's headers")
	fs.BoolVar(&f.reusePort, "reuseport", false, "listen with SO_REUSEPORT, so several server processes can share the port")
	fs.IntVar(&f.gomaxprocs, "gomaxprocs", 0, "set GOMAXPROCS to `n` (0: leave the runtime default)")
	fs.StringVar(&f.tlsCert, "tls-cert", "", "serve HTTPS with the PEM certificate (chain) in `file` (with -tls-key)")
	fs.StringVar(&f.tlsKey, "tls-key", "", "the PEM private `file` of -tls-cert (ECDSA P-256 or RSA 2048)")
	fs.BoolVar(&f.tlsTickets, "tls-tickets", true, "with -tls-cert: issue session tickets, so clients can resume (false: every handshake is full)")
	fs.StringVar(&f.http, "http", DefaultHTTP, "HTTP `versions` to offer: 1.1, 2 or 1.1,2 (2 is h2 over TLS via ALPN, h2c with prior knowledge in cleartext)")
	fs.IntVar(&f.maxStreams, "max-concurrent-streams", 0, "at most `n` HTTP/2 streams open at once on one connection (1 to "+strconv.Itoa(MaxConcurrentStreamsLimit)+"; without it net/http's "+strconv.Itoa(NetHTTPMaxConcurrentStreams)+"; needs -http with 2)")
	fs.DurationVar(&f.serviceTime, "service-time", 0, "ground truth: each /payload/ request holds a slot for this `duration` ("+MinServiceTime.String()+" to "+MaxServiceTime.String()+"; needs -slots; env "+EnvServiceTime+")")
	fs.IntVar(&f.slots, "slots", 0, "ground truth: `n` requests are served at once, the rest wait (1 to "+strconv.Itoa(MaxSlots)+"; needs -service-time; env "+EnvSlots+")")
	fs.DurationVar(&f.acceptEvery, "accept-every", 0, "ground truth: accept at most one connection per `duration` ("+MinAcceptEvery.String()+" to "+MaxAcceptEvery.String()+"; 0: as fast as the host can)")
	return fs
}

const usageHead = `Usage: server -addr IP [flags]

server is the fixed-payload HTTP server of CS Benchmark. It serves

  GET, HEAD  /healthz          "ok\n" (text/plain)
  GET, HEAD  /payload/<size>   <size> bytes of a fixed printable pattern
                               (application/octet-stream)

with Content-Length set and bodies built once at start. Other paths get 404,
other methods 405. It prints one JSON line on stdout when it is listening
({"event":"listening",...}) and one when it has shut down
({"event":"shutdown",...}); errors go to stderr. SIGINT or SIGTERM shuts it
down gracefully (in-flight requests get %v).

HTTP versions (-http): 1.1 (the default) serves HTTP/1.1 and 1.0, and over
TLS offers ALPN http/1.1 only. 2 serves HTTP/2 only: h2 over TLS (ALPN h2),
h2c with prior knowledge in cleartext (no Upgrade: h2c). 1.1,2 serves both:
ALPN offers h2 then http/1.1, and a cleartext connection that starts with
the HTTP/2 preface is h2c. The bodies and headers are the same in each.

Ground truth (-service-time D -slots N, or CSB_SERVICE_TIME and CSB_SLOTS in
the environment; a flag wins): every request under /payload/ holds one of N
slots for D, waiting first come first served when none is free, and is
answered after its slot is given back. Capacity is N/D requests/s and the
latency that of an M/D/c queue. The hold each request really got is measured
(time.Sleep overshoots): GET /stats returns the counts and sums as JSON
(requests, queued, abandoned, busy, waiting, hold_sum_ns, hold_mean_ms,
wait_mean_ms, capacity_rps = N / mean hold, ...; a window is the difference
of two reads) and the shutdown line carries the final figures as "service".
/healthz and /stats hold no slot. Without both settings /stats is a 404.

Paced accept (-accept-every D): the server takes at most one connection from
its listen queue per D, so whether a burst overflows the listen backlog is
known in advance: N connects issued in T s into a backlog B overflow when
N > B + T/D + 1, and never when N <= B.

Flags:
`

const usageTail = `
Sizes are canonical in URLs: 1024 and 1K are served as /payload/1k, 2048k as
/payload/2m, 1500 as /payload/1500.

Examples:
  # serve the default sizes on port 8080 of the lab's server address
  server -addr 198.18.0.1

  # add a 1 MiB payload, keep idle connections up to 15 minutes
  server -addr 198.18.0.1 -sizes 1k,4k,10k,100k,1m -idle-timeout 15m

  # one of several single-threaded processes sharing the port
  server -addr 198.18.0.1 -reuseport -gomaxprocs 1

  # local try-out on a free port, then: curl -sI http://127.0.0.1:PORT/payload/1k
  server -addr 127.0.0.1 -port 0

  # HTTPS with a lab certificate (csb cert -ip 198.18.0.1 -dir DIR), no tickets
  server -addr 198.18.0.1 -tls-cert DIR/cert.pem -tls-key DIR/key.pem -tls-tickets=false

  # HTTP/2 beside HTTP/1.1, 100 streams per connection; then, in cleartext:
  # h2load -c 4 -m 10 -D 3 http://198.18.0.1:8080/payload/1k (h2c)
  server -addr 198.18.0.1 -http 1.1,2 -max-concurrent-streams 100

  # a known capacity: 40 slots of 10 ms = 4,000 requests/s; read /stats
  server -addr 198.18.0.1 -service-time 10ms -slots 40
  CSB_SERVICE_TIME=10ms CSB_SLOTS=40 server -addr 198.18.0.1

  # a known accept rate: at most 1,000 connections/s leave the listen queue
  server -addr 198.18.0.1 -accept-every 1ms

Exit status: 0 after -h or a graceful shutdown, 1 on a runtime error (such as
an address that is not on this host or a port in use), 2 on bad usage.
`

func writeUsage(w io.Writer) {
	fmt.Fprintf(w, usageHead, ShutdownTimeout)
	fs := newFlagSet(new(flags))
	fs.SetOutput(w)
	fs.PrintDefaults()
	io.WriteString(w, usageTail)
}

// ParseArgs parses and validates the command line, with CSB_SERVICE_TIME
// and CSB_SLOTS from the environment. It returns flag.ErrHelp for -h and a
// *UsageError for anything wrong with the arguments.
func ParseArgs(args []string) (Config, error) { return parseArgs(args, os.LookupEnv) }

// parseArgs is ParseArgs with the environment read through lookupEnv.
func parseArgs(args []string, lookupEnv func(string) (string, bool)) (Config, error) {
	var f flags
	fs := newFlagSet(&f)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return Config{}, err
		}
		return Config{}, &UsageError{Err: err}
	}
	if fs.NArg() > 0 {
		return Config{}, usageErrorf("unexpected argument %q (all settings are flags)", fs.Arg(0))
	}

	addr, err := parseAddr(f.addr)
	if err != nil {
		return Config{}, &UsageError{Err: err}
	}
	if f.port < 0 || f.port > 65535 {
		return Config{}, usageErrorf("-port %d is out of range (want 0 to 65535)", f.port)
	}
	list, err := sizes.ParseSizes(f.sizes)
	if err != nil {
		return Config{}, usageErrorf("-sizes %q: %v", f.sizes, err)
	}
	if f.idleTimeout <= 0 {
		return Config{}, usageErrorf("-idle-timeout %v must be positive", f.idleTimeout)
	}
	if f.readHeaderTimeout <= 0 {
		return Config{}, usageErrorf("-read-header-timeout %v must be positive", f.readHeaderTimeout)
	}
	if f.gomaxprocs < 0 {
		return Config{}, usageErrorf("-gomaxprocs %d must be 0 (runtime default) or positive", f.gomaxprocs)
	}
	if f.reusePort && !ReusePortSupported {
		return Config{}, usageErrorf("-reuseport is not supported on %s", runtime.GOOS)
	}
	versions, err := ParseHTTPVersions(f.http)
	if err != nil {
		return Config{}, &UsageError{Err: err}
	}
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	if set["max-concurrent-streams"] {
		switch {
		case !versions.HTTP2:
			return Config{}, usageErrorf("-max-concurrent-streams applies to HTTP/2 only: add -http 2 or -http 1.1,2")
		case f.maxStreams < 1 || f.maxStreams > MaxConcurrentStreamsLimit:
			return Config{}, usageErrorf("-max-concurrent-streams %d is out of range (want 1 to %d; leave it out for net/http's %d)",
				f.maxStreams, MaxConcurrentStreamsLimit, NetHTTPMaxConcurrentStreams)
		}
	}
	serviceTime, slots, err := slotSettings(f.serviceTime, set["service-time"], f.slots, set["slots"], lookupEnv)
	if err != nil {
		return Config{}, &UsageError{Err: err}
	}
	if f.acceptEvery != 0 && (f.acceptEvery < MinAcceptEvery || f.acceptEvery > MaxAcceptEvery) {
		return Config{}, usageErrorf("-accept-every %v is out of range (want %v to %v, or 0 to accept as fast as the host can)",
			f.acceptEvery, MinAcceptEvery, MaxAcceptEvery)
	}
	tlsSettings, err := loadTLS(f.tlsCert, f.tlsKey, f.tlsTickets, fs)
	if err != nil {
		return Config{}, &UsageError{Err: err}
	}
	return Config{
		HTTP:                 versions,
		MaxConcurrentStreams: f.maxStreams,
		ServiceTime:          serviceTime,
		Slots:                slots,
		AcceptEvery:          f.acceptEvery,
		TLS:                  tlsSettings,
		Addr:                 addr,
		Port:                 f.port,
		Sizes:                list,
		IdleTimeout:          f.idleTimeout,
		ReadHeaderTimeout:    f.readHeaderTimeout,
		ReusePort:            f.reusePort,
		GOMAXPROCS:           f.gomaxprocs,
	}, nil
}

// parseAddr accepts an IPv4 or IPv6 literal and nothing else: no hostname
// (which would need a resolver and could name several addresses), no port,
// no IPv6 zone.
func parseAddr(s string) (netip.Addr, error) {
	if s == "" {
		return netip.Addr{}, errors.New("-addr is required: the IP address of this host to listen on, e.g. 198.18.0.1")
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Addr{}, fmt.Errorf("-addr %q is not an IP literal (want e.g. 198.18.0.1 or 2001:db8::1; hostnames are not resolved, the port goes in -port)", s)
	}
	if a.Zone() != "" {
		return netip.Addr{}, fmt.Errorf("-addr %q has an IPv6 zone; zones are not accepted, use a global or unique-local address", s)
	}
	return a.Unmap(), nil
}

// listeningEvent is the line printed once the socket is bound. Units are in
// the field names.
type listeningEvent struct {
	Event              string   `json:"event"`
	Addr               string   `json:"addr"`
	PID                int      `json:"pid"`
	Sizes              sizeMap  `json:"sizes"`
	GoVersion          string   `json:"go_version"`
	GOMAXPROCS         int      `json:"gomaxprocs"`
	ReusePort          bool     `json:"reuseport"`
	IdleTimeoutS       float64  `json:"idle_timeout_s"`
	ReadHeaderTimeoutS float64  `json:"read_header_timeout_s"`
	WriteTimeoutS      float64  `json:"write_timeout_s"`
	MaxHeaderBytes     int      `json:"max_header_bytes"`
	TLS                *TLSInfo `json:"tls"` // null: cleartext
	// HTTPVersions is what -http offers: ["1.1"], ["2"] or ["1.1","2"]
	// (2 in cleartext is h2c with prior knowledge).
	HTTPVersions []string `json:"http_versions"`
	// H2MaxConcurrentStreams is what the server announces in its
	// SETTINGS frame; null without HTTP/2.
	H2MaxConcurrentStreams *int `json:"h2_max_concurrent_streams"`
	// ServiceTimeMs and Slots are the ground-truth mode; null when off.
	ServiceTimeMs *float64 `json:"service_time_ms"`
	Slots         *int     `json:"slots"`
	// AcceptEveryMs is -accept-every; null when accept is not paced.
	AcceptEveryMs *float64 `json:"accept_every_ms"`
}

// shutdownEvent is the line printed when the server has stopped.
type shutdownEvent struct {
	Event      string  `json:"event"`
	Addr       string  `json:"addr"`
	PID        int     `json:"pid"`
	Reason     string  `json:"reason"`
	Graceful   bool    `json:"graceful"`
	ShutdownMS float64 `json:"shutdown_ms"`
	UptimeS    float64 `json:"uptime_s"`
	// Service is what the ground-truth mode measured over the whole run
	// (as /stats serves it); null when the mode is off.
	Service *ServiceStats `json:"service"`
}

// sizeMap encodes as a JSON object of name to bytes in size order, the
// order a reader expects ({"1k":1024,...,"100k":102400}); a Go map would be
// encoded in key order ("100k" first).
type sizeMap []sizes.Size

func (m sizeMap) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	for i, s := range m {
		if i > 0 {
			b = append(b, ',')
		}
		name, err := json.Marshal(s.Name)
		if err != nil {
			return nil, err
		}
		b = append(b, name...)
		b = append(b, ':')
		b = append(b, fmt.Sprint(s.Bytes)...)
	}
	return append(b, '}'), nil
}

func writeJSONLine(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// Serve runs the server for cfg until ctx is canceled, then shuts it down
// gracefully. It returns nil after a graceful shutdown.
func Serve(ctx context.Context, cfg Config, stdout, stderr io.Writer) error {
	if cfg.GOMAXPROCS > 0 {
		runtime.GOMAXPROCS(cfg.GOMAXPROCS)
	}
	ln, err := Listen(ctx, netip.AddrPortFrom(cfg.Addr, uint16(cfg.Port)).String(), cfg.ReusePort)
	if err != nil {
		return err
	}
	if cfg.AcceptEvery > 0 {
		ln = newPacedListener(ln, cfg.AcceptEvery)
	}
	if cfg.HTTP == (HTTPVersions{}) {
		cfg.HTTP.HTTP1 = true // a Config made in code: -http's default
	}
	var handler http.Handler = NewHandler(cfg.Sizes)
	var slots *slotHandler
	if cfg.Slots > 0 {
		slots = newSlotHandler(handler, cfg.ServiceTime, cfg.Slots)
		handler = slots
	}
	// ReadTimeout stays 0: requests carry no body, ReadHeaderTimeout bounds
	// reading the headers and IdleTimeout the wait for the next request.
	// HTTP/2 takes IdleTimeout, WriteTimeout (per stream) and
	// MaxHeaderBytes (its header list limit) from the same fields.
	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: cfg.ReadHeaderTimeout,
		WriteTimeout:      WriteTimeout,
		IdleTimeout:       cfg.IdleTimeout,
		MaxHeaderBytes:    MaxHeaderBytes,
		// net/http reports accept errors (such as running out of file
		// descriptors under C10K) and malformed requests here; timestamps
		// let them be matched with a run's timeline.
		ErrorLog:  log.New(stderr, "server: ", log.LstdFlags|log.Lmicroseconds|log.LUTC),
		Protocols: cfg.HTTP.protocols(),
	}
	if cfg.HTTP.HTTP2 {
		srv.HTTP2 = &http.HTTP2Config{MaxConcurrentStreams: cfg.MaxConcurrentStreams}
	}

	if cfg.TLS != nil {
		// The handshake runs in each connection's own goroutine (net/http
		// starts it on the first read), bounded by ReadHeaderTimeout.
		// srv.TLSConfig stays nil, so Serve sets up HTTP/2 for a
		// connection whose ALPN chose h2.
		ln = tls.NewListener(ln, cfg.TLS.serverConfig(cfg.HTTP.alpn()))
	}
	addr := ln.Addr().String()
	ev := listeningEvent{
		Event:              EventListening,
		Addr:               addr,
		PID:                os.Getpid(),
		Sizes:              sizeMap(cfg.Sizes),
		GoVersion:          runtime.Version(),
		GOMAXPROCS:         runtime.GOMAXPROCS(0),
		ReusePort:          cfg.ReusePort,
		IdleTimeoutS:       cfg.IdleTimeout.Seconds(),
		ReadHeaderTimeoutS: cfg.ReadHeaderTimeout.Seconds(),
		WriteTimeoutS:      WriteTimeout.Seconds(),
		MaxHeaderBytes:     MaxHeaderBytes,
		TLS:                cfg.TLS.info(cfg.HTTP.alpn()),
		HTTPVersions:       cfg.HTTP.List(),
	}
	if cfg.HTTP.HTTP2 {
		n := cfg.MaxConcurrentStreams
		if n == 0 {
			n = NetHTTPMaxConcurrentStreams
		}
		ev.H2MaxConcurrentStreams = &n
	}
	if slots != nil {
		ms, n := float64(cfg.ServiceTime)/1e6, cfg.Slots
		ev.ServiceTimeMs, ev.Slots = &ms, &n
	}
	if cfg.AcceptEvery > 0 {
		ms := float64(cfg.AcceptEvery) / 1e6
		ev.AcceptEveryMs = &ms
	}
	started := time.Now()
	if err := writeJSONLine(stdout, ev); err != nil {
		ln.Close()
		return fmt.Errorf("writing the listening line: %w", err)
	}

	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		// Serve returns only after Shutdown or Close, or on a listener
		// failure, so this is always an error.
		return fmt.Errorf("serving on %s: %w", addr, err)
	case <-ctx.Done():
	}

	stopping := time.Now()
	sctx, cancel := context.WithTimeout(context.Background(), ShutdownTimeout)
	defer cancel()
	shutdownErr := srv.Shutdown(sctx)
	if shutdownErr != nil {
		srv.Close()
	}
	<-served // http.ErrServerClosed, returned as soon as Shutdown starts
	if slots != nil && !slots.drain(sctx) && shutdownErr == nil {
		shutdownErr = fmt.Errorf("requests still held slots: %w", sctx.Err())
	}
	down := shutdownEvent{
		Event:      "shutdown",
		Addr:       addr,
		PID:        os.Getpid(),
		Reason:     context.Cause(ctx).Error(),
		Graceful:   shutdownErr == nil,
		ShutdownMS: float64(time.Since(stopping).Microseconds()) / 1e3,
		UptimeS:    time.Since(started).Round(time.Millisecond).Seconds(),
	}
	if slots != nil {
		st := slots.Stats()
		down.Service = &st
	}
	if err := writeJSONLine(stdout, down); err != nil && shutdownErr == nil {
		return fmt.Errorf("writing the shutdown line: %w", err)
	}
	if shutdownErr != nil {
		return fmt.Errorf("graceful shutdown did not finish within %v, remaining connections closed: %w", ShutdownTimeout, shutdownErr)
	}
	return nil
}
