package connclient

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// offset returns when event i of a schedule at rate per second is due,
// relative to the start: i/rate seconds, exact in integer nanoseconds.
func offset(i int64, rate int) time.Duration {
	r := int64(rate)
	return time.Duration((i/r)*int64(time.Second) + (i%r)*int64(time.Second)/r)
}

// requestCount returns how many events a schedule at rate per second holds
// in d: those due in [0, d).
func requestCount(d time.Duration, rate int) int64 {
	r := int64(rate)
	s := int64(d / time.Second)
	ns := int64(d % time.Second)
	n := s*r + (ns*r)/int64(time.Second)
	if (ns*r)%int64(time.Second) != 0 {
		n++ // the last event is due strictly before d
	}
	return n
}

// held is an established connection kept without a goroutine.
type held struct {
	c  *net.TCPConn    // the socket: options, peeks, close
	rc syscall.RawConn // its fd, for non-blocking peeks
	io net.Conn        // what requests go through: c, or the TLS connection on it
}

// connectPhase opens cfg.conns connections paced at cfg.rate connects/s with
// a pool of cfg.workers goroutines. With prime set, each connection also
// carries one request/response before it counts as established.
type connectPhase struct {
	cfg    *config
	dialer *net.Dialer
	req    []byte
	prime  bool
	start  time.Time // when run began; read by the progress line

	attempted, established, failed atomic.Int64

	mu          sync.Mutex // guards the fields below
	conns       []held
	connectHist Histogram
	requestHist Histogram
	// TLS only: handshake times, full and resumed apart, and the first
	// connection's negotiated state.
	handshakeHist, resumedHist Histogram
	tlsFirst                   *TLSState
	errors                     map[string]uint64
	status                     map[int]uint64

	complete bool // every connection was attempted and finished
	elapsed  time.Duration
}

func newConnectPhase(cfg *config, prime bool) *connectPhase {
	return &connectPhase{
		cfg:    cfg,
		dialer: newDialer(cfg.source, cfg.timeout),
		req:    buildRequest(cfg.target.String(), cfg.path),
		prime:  prime,
		conns:  make([]held, 0, cfg.conns),
		errors: map[string]uint64{},
		status: map[int]uint64{},
	}
}

// run opens the connections; it returns when all are done or ctx ends.
func (p *connectPhase) run(ctx context.Context, stderr io.Writer) {
	start := time.Now()
	p.start = start
	jobs := make(chan struct{})
	var wg sync.WaitGroup
	for w := 0; w < p.cfg.workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			br := newReader()
			for range jobs {
				p.connectOne(ctx, br)
			}
		}()
	}
	stop := startProgress(p.cfg.progress, stderr, p.progressLine)
	sl := newSleeper(ctx)
	defer sl.close()
	for i := 0; i < p.cfg.conns; i++ {
		if !sl.until(ctx, start.Add(offset(int64(i), p.cfg.rate))) {
			break
		}
		select {
		case jobs <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
	}
	close(jobs)
	wg.Wait()
	p.elapsed = time.Since(start)
	p.complete = ctx.Err() == nil
	stop()
}

func (p *connectPhase) connectOne(ctx context.Context, br *bufio.Reader) {
	p.attempted.Add(1)
	t0 := time.Now()
	c, err := p.dialer.DialContext(ctx, "tcp", p.cfg.target.String())
	connectLat := time.Since(t0)
	if err != nil {
		p.fail(ctx, err)
		return
	}
	tc := c.(*net.TCPConn)
	p.mu.Lock()
	p.connectHist.Record(connectLat.Microseconds())
	p.mu.Unlock()
	var rw net.Conn = tc
	if p.cfg.tlsCfg != nil {
		sc, hs, err := HandshakeTLS(ctx, tc, p.cfg.tlsCfg, p.cfg.timeout)
		if err != nil {
			p.fail(ctx, err)
			return
		}
		st := sc.ConnectionState()
		p.mu.Lock()
		if st.DidResume {
			p.resumedHist.Record(hs.Microseconds())
		} else {
			p.handshakeHist.Record(hs.Microseconds())
		}
		if p.tlsFirst == nil {
			first := StateOf(st)
			p.tlsFirst = &first
		}
		p.mu.Unlock()
		rw = sc
	}
	if p.cfg.linger0 {
		if err := tc.SetLinger(0); err != nil {
			tc.Close()
			p.fail(ctx, err)
			return
		}
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		tc.Close()
		p.fail(ctx, err)
		return
	}
	status, reqLat := 0, time.Duration(0)
	if p.prime {
		// Closing the connection is what interrupts a pending read.
		stop := context.AfterFunc(ctx, func() { tc.Close() })
		t1 := time.Now()
		var keepAlive bool
		status, keepAlive, err = roundTrip(rw, br, p.req, p.cfg.timeout)
		reqLat = time.Since(t1)
		if !stop() {
			err = context.Canceled
		} else if err == nil && !keepAlive {
			err = errServerClose
		}
		if err != nil {
			tc.Close()
			if status != 0 {
				p.mu.Lock()
				p.status[status]++
				p.mu.Unlock()
			}
			p.fail(ctx, err)
			return
		}
	}
	p.mu.Lock()
	if p.prime {
		p.requestHist.Record(reqLat.Microseconds())
		p.status[status]++
	}
	p.conns = append(p.conns, held{c: tc, rc: rc, io: rw})
	p.mu.Unlock()
	p.established.Add(1)
}

func (p *connectPhase) fail(ctx context.Context, err error) {
	cause := Classify(err)
	if ctx.Err() != nil {
		cause = causeCanceled
	}
	p.mu.Lock()
	p.errors[cause]++
	p.mu.Unlock()
	p.failed.Add(1)
}

func (p *connectPhase) progressLine(interval time.Duration, last *int64) (string, *Event) {
	est := p.established.Load()
	rate := float64(est-*last) / interval.Seconds()
	ev := &Event{Event: EventRamp, Established: est, Target: p.cfg.conns, Failed: p.failed.Load(),
		RatePerS: ptr(round(rate, 1)), ElapsedS: round(time.Since(p.start).Seconds(), 3)}
	*last = est
	p.mu.Lock()
	causes := formatCauses(p.errors)
	p.mu.Unlock()
	line := fmt.Sprintf("established=%d/%d rate=%.0f/s failures=%d", est, p.cfg.conns, rate, p.failed.Load())
	if causes != "" {
		line += " (" + causes + ")"
	}
	return line, ev
}

// closeAll closes every held connection (with RST when -linger0 was set).
func closeAll(conns []held) {
	for _, h := range conns {
		h.c.Close()
	}
}

// startProgress prints line() on w every interval, the progress line for
// people and then, if there is one, its event line, until the returned stop
// function is called; stop waits for the printer to finish.
func startProgress(interval time.Duration, w io.Writer, line func(time.Duration, *int64) (string, *Event)) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(interval)
		defer t.Stop()
		var last int64
		for {
			select {
			case <-done:
				return
			case <-t.C:
				text, ev := line(interval, &last)
				fmt.Fprintln(w, text)
				if ev != nil {
					writeEvent(w, *ev)
				}
			}
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}
