package connclient

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"csbench/internal/clientsys"
	"csbench/internal/connresult"
	"csbench/internal/h1wire"
	"csbench/internal/tlsdial"
)

// Churn mode (Phase 4): new connections on an open-model schedule, each
// carrying one request and then closed. Connection i is due at
// start + i/rate (the timerfd sleeper of lowrate keeps the clock); one
// dispatcher hands due connections to a pool of -workers goroutines, so no
// goroutine waits per pending connect beyond what the rate needs (rate x
// the time one connection takes). A connection that waits for a free
// worker is late, and its latencies, measured from its due time, say so.
//
// Who ends the connection is -close:
//
//	client   the client closes after the response (TIME_WAIT on the client)
//	server   the request asks for Connection: close; the client waits for
//	         the server's FIN before it closes (TIME_WAIT on the server)
//	linger0  the client closes with SO_LINGER=0: an RST, no TIME_WAIT
const (
	CloseClient  = "client"
	CloseServer  = "server"
	CloseLinger0 = "linger0"
)

func newHeader(cfg *config, started time.Time) connresult.Header {
	h := connresult.Header{Doc: newDoc(cfg, started), Target: cfg.target.String(), TimeoutS: cfg.timeout.Seconds(), Workers: cfg.workers}
	if cfg.source.IsValid() {
		h.Source = ptr(cfg.source.String())
	}
	return h
}

// buildCloseRequest is h1wire.BuildRequest asking the server to close after the
// response.
func buildCloseRequest(host, path string) []byte {
	return []byte("GET " + path + " HTTP/1.1\r\nHost: " + host +
		"\r\nUser-Agent: csbench-connclient\r\nAccept: */*\r\nConnection: close\r\n\r\n")
}

// churnRun is one churn schedule.
type churnRun struct {
	cfg    *config
	dialer *net.Dialer
	req    []byte
	start  time.Time
	n      int64

	dispatched, attempted, established, completed, failed atomic.Int64
	notSent                                               int64 // set by dispatch alone, read after it

	mu         sync.Mutex           // guards the fields below
	lag        connresult.Histogram // dispatch - due
	connect    connresult.Histogram // connected - due
	handshake  connresult.Histogram // connected - connect() called
	lat        connresult.Histogram // response read - due
	tlsFull    connresult.Histogram // TLS only: full handshakes, established - handshake done
	tlsResumed connresult.Histogram // TLS only: resumed handshakes
	tlsFirst   *connresult.TLSState
	errors     map[string]uint64
	status     map[int]uint64
	secs       []connresult.ChurnSecond
	lastDone   time.Time
	firstFail  time.Duration
	firstEAddr time.Duration
	goroutines int
}

func newChurnRun(cfg *config) *churnRun {
	req := h1wire.BuildRequest(cfg.target.String(), cfg.path)
	if cfg.close == CloseServer {
		req = buildCloseRequest(cfg.target.String(), cfg.path)
	}
	n := requestCount(cfg.duration, cfg.rate)
	secs := make([]connresult.ChurnSecond, int((n+int64(cfg.rate)-1)/int64(cfg.rate)))
	for i := range secs {
		secs[i].T = i
	}
	return &churnRun{cfg: cfg, dialer: clientsys.NewDialer(cfg.source, cfg.timeout), req: req, n: n,
		errors: map[string]uint64{}, status: map[int]uint64{}, firstFail: -1, firstEAddr: -1, secs: secs}
}

func runChurn(ctx context.Context, cfg *config, stdout, stderr io.Writer) error {
	started := time.Now()
	r := newChurnRun(cfg)
	r.run(ctx, stderr)
	res := r.result(ctx, newHeader(cfg, started))
	return finishDoc(ctx, &res.Header, res, stdout, stderr)
}

// run keeps the schedule: it returns once every due connection is done or
// ctx ended.
func (r *churnRun) run(ctx context.Context, stderr io.Writer) {
	jobs := make(chan int64, r.cfg.workers)
	var wg sync.WaitGroup
	for w := 0; w < r.cfg.workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			br := h1wire.NewReader()
			for i := range jobs {
				r.one(ctx, i, br)
			}
		}()
	}
	r.start = time.Now().Add(10 * time.Millisecond)
	connresult.WriteEvent(stderr, connresult.Event{Event: connresult.EventRunning, Target: r.cfg.rate})
	stop := startProgress(r.cfg.progress, stderr, r.progressLine)
	r.dispatch(ctx, jobs)
	close(jobs)
	wg.Wait()
	stop()
}

// lateCutoff is how long after the schedule's end a connection may still
// be handed to a worker: half the duration, at least 2 s. A client that
// falls that far behind (connects slowed by a port range full of
// TIME_WAIT) sends no more; what it did not send is counted, and the cell
// takes at most 1.5 times its length, not ten.
func lateCutoff(d time.Duration) time.Duration { return max(d/2, 2*time.Second) }

// dispatch hands connection i to a worker at its due time. A full pool
// blocks the dispatcher; the due times do not move, so what waits is late
// and measured so, until lateCutoff after the schedule's end.
func (r *churnRun) dispatch(ctx context.Context, jobs chan<- int64) {
	sl := clientsys.NewSleeper(ctx)
	defer sl.Close()
	cut := time.NewTimer(time.Until(r.start.Add(r.cfg.duration + lateCutoff(r.cfg.duration))))
	defer cut.Stop()
	for i := int64(0); i < r.n; i++ {
		due := r.start.Add(offset(i, r.cfg.rate))
		if !sl.Until(ctx, due) {
			return
		}
		select {
		case jobs <- i:
		case <-ctx.Done():
			return
		case <-cut.C:
			r.notSent = r.n - i
			return
		}
		late := time.Since(due)
		r.dispatched.Add(1)
		r.mu.Lock()
		r.lag.Record(late.Microseconds())
		if i == r.n/2 {
			r.goroutines = runtime.NumGoroutine()
		}
		r.mu.Unlock()
	}
}

// dial opens one TCP connection.
func (r *churnRun) dial(ctx context.Context) (net.Conn, error) {
	return r.dialer.DialContext(ctx, "tcp", r.cfg.target.String())
}

// tlsHandshake runs the TLS handshake on c (with -tls-ca) and records its time,
// full or resumed. On failure c is closed.
func (r *churnRun) tlsHandshake(ctx context.Context, c net.Conn) (net.Conn, error) {
	sc, hs, err := tlsdial.Handshake(ctx, c, r.cfg.tlsCfg, r.cfg.timeout)
	if err != nil {
		return nil, err
	}
	st := sc.ConnectionState()
	r.mu.Lock()
	if st.DidResume {
		r.tlsResumed.Record(hs.Microseconds())
	} else {
		r.tlsFull.Record(hs.Microseconds())
	}
	if r.tlsFirst == nil {
		first := tlsdial.StateOf(st)
		r.tlsFirst = &first
	}
	r.mu.Unlock()
	return sc, nil
}

// one runs connection i: connect, one request, the close asked for.
func (r *churnRun) one(ctx context.Context, i int64, br *bufio.Reader) {
	due := r.start.Add(offset(i, r.cfg.rate))
	r.attempted.Add(1)
	t0 := time.Now()
	c, err := r.dial(ctx)
	connected := time.Now()
	if err != nil {
		r.record(ctx, i, due, time.Time{}, time.Time{}, time.Time{}, 0, err)
		return
	}
	r.established.Add(1)
	if r.cfg.close == CloseLinger0 {
		if tc, ok := c.(*net.TCPConn); ok {
			if err := tc.SetLinger(0); err != nil {
				c.Close()
				r.record(ctx, i, due, t0, connected, time.Time{}, 0, err)
				return
			}
		}
	}
	if r.cfg.tlsCfg != nil {
		sc, err := r.tlsHandshake(ctx, c)
		if err != nil {
			r.record(ctx, i, due, t0, connected, time.Time{}, 0, err)
			return
		}
		c = sc
	}
	stopClose := context.AfterFunc(ctx, func() { c.Close() })
	status, keepAlive, err := h1wire.RoundTrip(c, br, r.req, r.cfg.timeout)
	done := time.Now()
	if err == nil && r.cfg.close == CloseServer {
		if keepAlive {
			err = fmt.Errorf("%w: the server kept the connection open after Connection: close", h1wire.ErrBadResponse)
		} else {
			err = waitEOF(c, r.cfg.timeout)
		}
	}
	stopClose()
	c.Close()
	r.record(ctx, i, due, t0, connected, done, status, err)
}

// waitEOF waits for the server's FIN, so the server is the one that closed.
func waitEOF(c net.Conn, timeout time.Duration) error {
	if err := c.SetReadDeadline(time.Now().Add(timeout)); err != nil {
		return err
	}
	var b [1]byte
	n, err := c.Read(b[:])
	if n > 0 {
		return fmt.Errorf("%w: data after a Connection: close response", h1wire.ErrBadResponse)
	}
	if errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// record accounts connection i. connected is zero when the connect failed,
// done when no response came; err nil means completed.
func (r *churnRun) record(ctx context.Context, i int64, due, t0, connected, done time.Time, status int, err error) {
	sec := int(i / int64(r.cfg.rate))
	r.mu.Lock()
	defer r.mu.Unlock()
	s := &r.secs[sec]
	if !connected.IsZero() {
		r.connect.Record(connected.Sub(due).Microseconds())
		r.handshake.Record(connected.Sub(t0).Microseconds())
		if connected.Sub(due) >= time.Second {
			s.ConnectedLate++
		}
	}
	if status != 0 {
		r.status[status]++
	}
	if err != nil {
		cause := Classify(err)
		if ctx.Err() != nil {
			cause = causeCanceled
		}
		r.errors[cause]++
		r.failed.Add(1)
		s.Failed++
		at := due.Sub(r.start)
		if r.firstFail < 0 || at < r.firstFail {
			r.firstFail = at
		}
		if cause == causeAddrNotAvail {
			s.AddrNotAvail++
			if r.firstEAddr < 0 || at < r.firstEAddr {
				r.firstEAddr = at
			}
		}
		return
	}
	l := done.Sub(due)
	r.lat.Record(l.Microseconds())
	if ms := uint64(l.Milliseconds()); ms > s.LatencyMaxMs {
		s.LatencyMaxMs = ms
	}
	s.Completed++
	if done.After(r.lastDone) {
		r.lastDone = done
	}
	r.completed.Add(1)
}

func (r *churnRun) result(ctx context.Context, h connresult.Header) *connresult.ChurnResult {
	cfg := r.cfg
	res := &connresult.ChurnResult{Header: h, Close: cfg.close, Path: cfg.path, RateTargetPerS: cfg.rate,
		DurationS: cfg.duration.Seconds(), ConnsScheduled: r.n, ConnsDispatched: r.dispatched.Load(), ConnsNotSent: r.notSent,
		ConnsAttempted: r.attempted.Load(), ConnsEstablished: r.established.Load(),
		ConnsCompleted: r.completed.Load(), ConnsFailed: r.failed.Load(),
		Errors: map[string]uint64{}, StatusCodes: map[string]uint64{}, PerSecond: r.secs,
		Goroutines: r.goroutines}
	if elapsed := scheduleElapsed(ctx, r.start, r.lastDone, cfg.duration); elapsed > 0 {
		res.ElapsedS = ptr(round(elapsed.Seconds(), 6))
		res.RateAchievedPerS = ptr(round(float64(res.ConnsCompleted)/elapsed.Seconds(), 1))
	}
	if r.firstFail >= 0 {
		res.FirstFailureS = ptr(round(r.firstFail.Seconds(), 3))
	}
	if r.firstEAddr >= 0 {
		res.FirstAddrNotAvail = ptr(round(r.firstEAddr.Seconds(), 3))
	}
	res.ScheduleLagP50Ms = connresult.QuantileMs(&r.lag, 0.50)
	res.ScheduleLagP99Ms = connresult.QuantileMs(&r.lag, 0.99)
	res.ScheduleLagMaxMs = connresult.QuantileMs(&r.lag, 1)
	res.ConnectLatencyP50Ms = connresult.QuantileMs(&r.connect, 0.50)
	res.ConnectLatencyP99Ms = connresult.QuantileMs(&r.connect, 0.99)
	res.ConnectLatencyMaxMs = connresult.QuantileMs(&r.connect, 1)
	res.LatencyP50Ms = connresult.QuantileMs(&r.lat, 0.50)
	res.LatencyP90Ms = connresult.QuantileMs(&r.lat, 0.90)
	res.LatencyP99Ms = connresult.QuantileMs(&r.lat, 0.99)
	res.LatencyMaxMs = connresult.QuantileMs(&r.lat, 1)
	res.HandshakeP50Ms = connresult.QuantileMs(&r.handshake, 0.50)
	res.HandshakeP99Ms = connresult.QuantileMs(&r.handshake, 0.99)
	addCounts(res.Errors, r.errors)
	addStatus(res.StatusCodes, r.status)
	res.Histograms = map[string]*connresult.Dump{"connect": r.connect.Dump(), "latency": r.lat.Dump()}
	if cfg.tlsCfg != nil {
		res.Histograms["tls_full"] = r.tlsFull.Dump()
		res.Histograms["tls_resumed"] = r.tlsResumed.Dump()
		res.TLS = &connresult.TLSResult{
			First:              r.tlsFirst,
			Resume:             cfg.tlsCfg.ClientSessionCache != nil,
			HandshakesFull:     r.tlsFull.Count(),
			HandshakesResumed:  r.tlsResumed.Count(),
			HandshakeFullP50Ms: connresult.QuantileMs(&r.tlsFull, 0.50),
			HandshakeFullP99Ms: connresult.QuantileMs(&r.tlsFull, 0.99),
			HandshakeFullMaxMs: connresult.QuantileMs(&r.tlsFull, 1),
			HandshakeResumeP50: connresult.QuantileMs(&r.tlsResumed, 0.50),
			HandshakeResumeP99: connresult.QuantileMs(&r.tlsResumed, 0.99),
			HandshakeResumeMax: connresult.QuantileMs(&r.tlsResumed, 1),
		}
	}
	res.ClientRSSMB = clientsys.RSSMB()
	return res
}

func (r *churnRun) progressLine(interval time.Duration, last *int64) (string, *connresult.Event) {
	done := r.completed.Load()
	rate := float64(done-*last) / interval.Seconds()
	*last = done
	r.mu.Lock()
	causes := formatCauses(r.errors)
	r.mu.Unlock()
	line := fmt.Sprintf("churn dispatched=%d/%d completed=%d rate=%.0f/s failures=%d",
		r.dispatched.Load(), r.n, done, rate, r.failed.Load())
	if causes != "" {
		line += " (" + causes + ")"
	}
	return line, nil
}

// finishDoc prints a Phase 4 result document (churn, burst) and marks an
// interrupted run partial.
func finishDoc(ctx context.Context, h *connresult.Header, doc any, stdout, stderr io.Writer) error {
	return writeDoc(ctx, &h.Status, &h.FinishedAt, doc, stdout, stderr)
}

// parseConnArgs parses the command line of churn and burst.
func parseConnArgs(args []string) (*config, error) {
	cfg := &config{mode: args[0], argv: append([]string(nil), args...), progress: progressInterval}
	fs := flag.NewFlagSet("connclient "+cfg.mode, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var (
		target, source string
		conns, rate    posInt
		workers        posInt
	)
	fs.StringVar(&target, "target", "", "")
	fs.StringVar(&source, "source", "", "")
	fs.StringVar(&cfg.path, "path", "/healthz", "")
	fs.StringVar(&cfg.http, "http", httpV11, "")
	timeout := 5 * time.Second
	if cfg.mode == "burst" {
		timeout = 10 * time.Second
		fs.Var(&conns, "conns", "")
	} else {
		fs.Var(&rate, "rate", "")
		fs.Var(&workers, "workers", "")
		fs.DurationVar(&cfg.duration, "duration", 10*time.Second, "")
		fs.StringVar(&cfg.close, "close", CloseClient, "")
	}
	fs.DurationVar(&cfg.timeout, "timeout", timeout, "")
	var tlsResume bool
	if cfg.mode == "churn" {
		fs.StringVar(&cfg.tlsCA, "tls-ca", "", "")
		fs.BoolVar(&tlsResume, "tls-resume", false, "")
	}
	if err := parseEnds(fs, args[1:], cfg, &target, &source); err != nil {
		return nil, err
	}
	if !validPath(cfg.path) {
		return nil, usageErrorf("-path %q must start with / and hold only visible ASCII characters", cfg.path)
	}
	if err := checkHTTP(cfg); err != nil {
		return nil, err
	}
	if cfg.timeout <= 0 {
		return nil, usageErrorf("-timeout %v must be positive", cfg.timeout)
	}
	if cfg.mode == "burst" {
		if !conns.set || conns.v > maxConns {
			return nil, usageErrorf("-conns is required, at most %d", maxConns)
		}
		cfg.conns = conns.v
		return cfg, nil
	}
	switch cfg.close {
	case CloseClient, CloseServer, CloseLinger0:
	default:
		return nil, usageErrorf("-close %q: want client, server or linger0", cfg.close)
	}
	if !rate.set || rate.v > maxRate {
		return nil, usageErrorf("-rate is required (new connections per second), at most %d", maxRate)
	}
	cfg.rate = rate.v
	if tlsResume && cfg.tlsCA == "" {
		return nil, usageErrorf("-tls-resume needs -tls-ca (TLS is on only with a CA to trust)")
	}
	if cfg.tlsCA != "" {
		tc, err := tlsdial.ClientConfig(cfg.tlsCA, cfg.target.Addr(), tlsResume)
		if err != nil {
			return nil, usageErrorf("%v", err)
		}
		cfg.tlsCfg = tc
	}
	if cfg.duration <= 0 || requestCount(cfg.duration, cfg.rate) < 1 {
		return nil, usageErrorf("-duration %v at -rate %d schedules no connection", cfg.duration, cfg.rate)
	}
	cfg.workers = 256
	if workers.set {
		cfg.workers = workers.v
	}
	cfg.conns = cfg.workers // one descriptor per worker at most
	return cfg, nil
}
