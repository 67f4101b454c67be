// Package server is the fixed-payload HTTP server of CS Benchmark: the
// measured end of the HTTP throughput, latency and C10K runs.
//
// It serves /healthz and /payload/<size> from bodies and header values built
// once at start, so a request costs the server no allocation of its own and
// the numbers measure the network stack and net/http rather than the handler.
// It reports on stdout as JSON lines (one when listening, one at shutdown)
// and writes errors to stderr; it never logs per request.
package server

import (
	"context"
	"crypto/tls"
	"csbench/internal/usage"
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
	"time"
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
	// (at most MaxSizeBytes) takes on a working link, so it never cuts a
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
	Sizes             []Size
	IdleTimeout       time.Duration
	ReadHeaderTimeout time.Duration
	ReusePort         bool
	GOMAXPROCS        int // 0: leave the runtime default
	// TLS: nil serves cleartext HTTP/1.1; else HTTPS (HTTP/1.1 over TLS
	// 1.3 or 1.2) with this certificate (tlsconf.go).
	TLS *TLSSettings
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

// Run is the whole server command. args excludes the program name. It serves
// until ctx is canceled, then shuts down gracefully and returns nil.
// Run reports every error on stderr itself ("error: ..."; with the usage text
// for bad usage), so the caller only has to turn the error into an exit status
// with ExitCode. -h prints the usage text on stdout and returns nil.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, err := ParseArgs(args)
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
}

func newFlagSet(f *flags) *flag.FlagSet {
	fs := flag.NewFlagSet("server", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // Run prints errors and usage itself
	fs.StringVar(&f.addr, "addr", "", "`IP` literal of this host to bind (required; hostnames are refused)")
	fs.IntVar(&f.port, "port", DefaultPort, "TCP `port` to listen on (0: the kernel picks one; see \"addr\" in the listening line)")
	fs.StringVar(&f.sizes, "sizes", DefaultSizes, "comma-separated `list` of payload sizes: digits with an optional k (1024) or m (1048576)")
	fs.DurationVar(&f.idleTimeout, "idle-timeout", DefaultIdleTimeout, "close a keep-alive connection idle for this `duration`")
	fs.DurationVar(&f.readHeaderTimeout, "read-header-timeout", DefaultReadHeaderTimeout, "time `limit` for reading one request's headers")
	fs.BoolVar(&f.reusePort, "reuseport", false, "listen with SO_REUSEPORT, so several server processes can share the port")
	fs.IntVar(&f.gomaxprocs, "gomaxprocs", 0, "set GOMAXPROCS to `n` (0: leave the runtime default)")
	fs.StringVar(&f.tlsCert, "tls-cert", "", "serve HTTPS with the PEM certificate (chain) in `file` (with -tls-key)")
	fs.StringVar(&f.tlsKey, "tls-key", "", "the PEM private `file` of -tls-cert (ECDSA P-256 or RSA 2048)")
	fs.BoolVar(&f.tlsTickets, "tls-tickets", true, "with -tls-cert: issue session tickets, so clients can resume (false: every handshake is full)")
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

// ParseArgs parses and validates the command line. It returns flag.ErrHelp
// for -h and a *UsageError for anything wrong with the arguments.
func ParseArgs(args []string) (Config, error) {
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
	sizes, err := ParseSizes(f.sizes)
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
	tlsSettings, err := loadTLS(f.tlsCert, f.tlsKey, f.tlsTickets, fs)
	if err != nil {
		return Config{}, &UsageError{Err: err}
	}
	return Config{
		TLS:               tlsSettings,
		Addr:              addr,
		Port:              f.port,
		Sizes:             sizes,
		IdleTimeout:       f.idleTimeout,
		ReadHeaderTimeout: f.readHeaderTimeout,
		ReusePort:         f.reusePort,
		GOMAXPROCS:        f.gomaxprocs,
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
}

// sizeMap encodes as a JSON object of name to bytes in size order, the
// order a reader expects ({"1k":1024,...,"100k":102400}); a Go map would be
// encoded in key order ("100k" first).
type sizeMap []Size

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
	// ReadTimeout stays 0: requests carry no body, ReadHeaderTimeout bounds
	// reading the headers and IdleTimeout the wait for the next request.
	srv := &http.Server{
		Handler:           NewHandler(cfg.Sizes),
		ReadHeaderTimeout: cfg.ReadHeaderTimeout,
		WriteTimeout:      WriteTimeout,
		IdleTimeout:       cfg.IdleTimeout,
		MaxHeaderBytes:    MaxHeaderBytes,
		// net/http reports accept errors (such as running out of file
		// descriptors under C10K) and malformed requests here; timestamps
		// let them be matched with a run's timeline.
		ErrorLog: log.New(stderr, "server: ", log.LstdFlags|log.Lmicroseconds|log.LUTC),
	}

	if cfg.TLS != nil {
		// The handshake runs in each connection's own goroutine (net/http
		// starts it on the first read), bounded by ReadHeaderTimeout.
		ln = tls.NewListener(ln, cfg.TLS.serverConfig())
	}
	addr := ln.Addr().String()
	started := time.Now()
	if err := writeJSONLine(stdout, listeningEvent{
		Event:              "listening",
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
		TLS:                cfg.TLS.info(),
	}); err != nil {
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
	ev := shutdownEvent{
		Event:      "shutdown",
		Addr:       addr,
		PID:        os.Getpid(),
		Reason:     context.Cause(ctx).Error(),
		Graceful:   shutdownErr == nil,
		ShutdownMS: float64(time.Since(stopping).Microseconds()) / 1e3,
		UptimeS:    time.Since(started).Round(time.Millisecond).Seconds(),
	}
	if err := writeJSONLine(stdout, ev); err != nil && shutdownErr == nil {
		return fmt.Errorf("writing the shutdown line: %w", err)
	}
	if shutdownErr != nil {
		return fmt.Errorf("graceful shutdown did not finish within %v, remaining connections closed: %w", ShutdownTimeout, shutdownErr)
	}
	return nil
}
