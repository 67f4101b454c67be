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

	"csbench/internal/clientsys"
	"csbench/internal/connresult"
	"csbench/internal/h1wire"
	"csbench/internal/h2wire"
	"csbench/internal/tlsdial"
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
	// h2 is an HTTP/2 connection's state between the hold's checks; nil
	// over HTTP/1.1.
	h2 *h2wire.Conn
}

// connectPhase opens cfg.conns connections with a pool of cfg.workers
// goroutines. The attempts are paced at cfg.rate connects/s (-pace fixed:
// attempt k due at start + k/rate) or by the ramp's controller (-pace
// aimd, ramppace.go); an attempt that timed out is made again, at most
// cfg.retries times per connection, in the next paced slot; no attempt
// starts later than cfg.rampMax after the first. With prime set, each
// connection also carries one request/response before it counts as
// established: HTTP/1.1, or with -http 2 HTTP/2 (h2wire.RoundTrip).
type connectPhase struct {
	cfg    *config
	dialer *net.Dialer
	req    []byte
	prime  bool
	start  time.Time // when run began; read by the progress line

	attempted, established, failed atomic.Int64
	retries                        atomic.Int64 // attempts after the first of a connection

	// dialing[w] is 1 + the ramp time (ns) at which worker w's attempt
	// began, while its connect is unanswered; 0 otherwise: the controller
	// sees a connect left unanswered (a SYN dropped) before it ends.
	dialing []atomic.Int64
	wake    chan struct{} // an attempt ended (capacity 1)

	mu          sync.Mutex // guards the fields below
	conns       []held
	connectHist connresult.Histogram
	requestHist connresult.Histogram
	// TLS only: handshake times, full and resumed apart, and the first
	// connection's negotiated state.
	handshakeHist, resumedHist connresult.Histogram
	tlsFirst                   *connresult.TLSState
	errors                     map[string]uint64
	status                     map[int]uint64

	// The first attempts of the connections, and the retries.
	firstHist                                  connresult.Histogram // connect latency of first attempts that connected
	firstErrors                                map[string]uint64
	firstEstablished, firstTimeouts, firstSlow int64
	firstRespTimeouts                          int64 // connected, then no response within cfg.connectTimeout
	slow                                       int64 // attempts that connected after cfg.slow or more
	retried, afterRetry                        int64 // connections retried, established on a retry
	retryq                                     []connectJob
	inflight                                   int  // jobs handed out and not yet ended
	stopped                                    bool // the dispatcher is done: no retry is queued any more

	pace             rampPace // the controller (aimd); Rate is the fixed rate otherwise
	obs              rampObs  // what the attempts reported since the last control step
	paceMin, paceMax float64
	boundReached     bool // the ramp stopped at cfg.rampMax with work left

	complete bool // the phase ended by its own rules, not interrupted
	elapsed  time.Duration
}

// connectJob is one attempt to make: tries attempts were made before it
// for the same connection.
type connectJob struct{ tries int }

// inFlightSlow: an attempt under way for this many times -connect-slow
// counts as slow before it ends (see paceStep).
const inFlightSlow = 3

// rampSlack is how far a paced ramp's dispatcher may be behind its
// schedule and catch up; a dispatcher held up longer (every worker busy)
// starts again from now rather than bursting.
const rampSlack = 20 * time.Millisecond

func newConnectPhase(cfg *config, prime bool) *connectPhase {
	p := &connectPhase{
		cfg:         cfg,
		dialer:      clientsys.NewDialer(cfg.source, cfg.connectTimeout),
		req:         h1wire.BuildRequest(cfg.target.String(), cfg.path),
		prime:       prime,
		dialing:     make([]atomic.Int64, cfg.workers),
		wake:        make(chan struct{}, 1),
		conns:       make([]held, 0, cfg.conns),
		errors:      map[string]uint64{},
		status:      map[int]uint64{},
		firstErrors: map[string]uint64{},
		pace:        rampPace{Rate: float64(cfg.rate), Min: float64(cfg.rate), Max: float64(cfg.rate), LastCut: -1},
	}
	if cfg.http == httpV2 {
		scheme := "http"
		if cfg.tlsCfg != nil {
			scheme = "https"
		}
		p.req = h2wire.BuildRequest(scheme, cfg.target.String(), cfg.path)
	}
	if cfg.pace == paceAIMD {
		p.pace = newRampPace(cfg.rate)
	}
	p.paceMin, p.paceMax = p.pace.Rate, p.pace.Rate
	return p
}

// run opens the connections; it returns when all are done, the ramp bound
// passed or ctx ended.
func (p *connectPhase) run(ctx context.Context, stderr io.Writer) {
	start := time.Now()
	p.start = start
	jobs := make(chan connectJob)
	var wg sync.WaitGroup
	for w := 0; w < p.cfg.workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			wb := &workerBufs{br: h1wire.NewReader()}
			for j := range jobs {
				p.attempt(ctx, wb, w, j)
			}
		}(w)
	}
	stop := startProgress(p.cfg.progress, stderr, p.progressLine)
	stopPace := func() {}
	if p.cfg.pace == paceAIMD {
		stopPace = p.startPacer()
	}
	byBound := p.dispatch(ctx, jobs, start)
	p.mu.Lock()
	p.stopped = true
	p.mu.Unlock()
	close(jobs)
	wg.Wait()
	stopPace()
	// The bound stopped the ramp if it left work undone: connections not
	// attempted, or retries not made.
	p.boundReached = byBound && (len(p.retryq) > 0 || p.attempted.Load() < int64(p.cfg.conns))
	// Retries still queued: the bound or an interruption came first; the
	// connection's last attempt timed out.
	cause := causeTimeout
	if ctx.Err() != nil {
		cause = causeCanceled
	}
	for range p.retryq {
		p.failCause(cause)
	}
	p.retryq = nil
	p.elapsed = time.Since(start)
	p.complete = ctx.Err() == nil
	stop()
}

// dispatch hands the attempts to the workers on the ramp's schedule: a
// queued retry first, else the next connection. It returns when every
// connection was attempted and no attempt is left that could be retried,
// when the ramp bound passed (then true), or when ctx ended.
func (p *connectPhase) dispatch(ctx context.Context, jobs chan<- connectJob, start time.Time) (byBound bool) {
	bound := time.NewTimer(p.cfg.rampMax)
	defer bound.Stop()
	deadline := start.Add(p.cfg.rampMax)
	clock := rampClock{fixed: p.cfg.pace != paceAIMD, rate: p.cfg.rate, base: start}
	sl := clientsys.NewSleeper(ctx)
	defer sl.Close()
	next := 0 // connections handed out
	for ctx.Err() == nil {
		p.mu.Lock()
		idle := len(p.retryq) == 0 && next == p.cfg.conns
		inflight, rate := p.inflight, p.pace.Rate
		p.mu.Unlock()
		if idle {
			if inflight == 0 {
				return false
			}
			// Only a retry can come: wait for an attempt to end.
			select {
			case <-p.wake:
				clock.rebase(time.Now(), rate)
				continue
			case <-bound.C:
				return true
			case <-ctx.Done():
				return false
			}
		}
		due := clock.next(time.Now(), rate)
		if due.After(deadline) {
			return true
		}
		if !sl.Until(ctx, due) {
			return false
		}
		var j connectJob
		p.mu.Lock()
		retry := len(p.retryq) > 0
		if retry {
			j, p.retryq = p.retryq[0], p.retryq[1:]
		}
		p.inflight++
		p.mu.Unlock()
		select {
		case jobs <- j:
			if !retry {
				next++
			}
			continue
		case <-bound.C:
		case <-ctx.Done():
		}
		// Not handed out: back where it came from.
		p.mu.Lock()
		p.inflight--
		if retry {
			p.retryq = append([]connectJob{j}, p.retryq...)
		}
		p.mu.Unlock()
		return ctx.Err() == nil
	}
	return false
}

// rampClock hands out the due times of the ramp's attempts. At a fixed
// rate attempt k is due at base + k/rate exactly; at a paced rate each is
// due 1/rate after the previous one (at the rate of the moment), and at
// most rampSlack behind now.
type rampClock struct {
	fixed bool
	rate  int // fixed
	base  time.Time
	k     int64     // fixed: attempts due since base
	last  time.Time // paced: the previous due time; zero: none since base
}

func (c *rampClock) next(now time.Time, rate float64) time.Time {
	if c.fixed {
		t := c.base.Add(offset(c.k, c.rate))
		c.k++
		return t
	}
	t := c.base
	if !c.last.IsZero() {
		t = c.last.Add(time.Duration(float64(time.Second) / rate))
	}
	if lim := now.Add(-rampSlack); t.Before(lim) {
		t = lim
	}
	c.last = t
	return t
}

// rebase starts the schedule again at now, or at the next due time if
// that is later (an attempt is never due sooner than the rate allows).
func (c *rampClock) rebase(now time.Time, rate float64) {
	var t time.Time
	if c.fixed {
		t = c.base.Add(offset(c.k, c.rate))
	} else if !c.last.IsZero() {
		t = c.last.Add(time.Duration(float64(time.Second) / rate))
	}
	c.base, c.k, c.last = now, 0, time.Time{}
	if t.After(now) {
		c.base = t
	}
}

// startPacer runs the controller every rampTick until stop is called, and
// once more then, so that what the last attempts met is counted too.
func (p *connectPhase) startPacer() (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(rampTick)
		defer t.Stop()
		var last time.Duration
		for {
			stop := false
			select {
			case <-done:
				stop = true
			case <-t.C:
			}
			now := time.Since(p.start)
			p.paceStep(now, now-last)
			last = now
			if stop {
				return
			}
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}

// paceStep is one control step at ramp time now: what the attempts
// reported since the last step, and the dials in flight for inFlightSlow
// times cfg.slow or longer, go into the controller.
//
// An attempt that ended slow cuts the pace only when the kernel
// retransmitted something on it (a SYN, or the request after a handshake
// whose last ACK was dropped): a full queue. One that was slow without a
// retransmission waited for a CPU, its own or the server's: it neither
// cuts nor grows the pace. At C1M (51 processes, both CPUs busy) such
// attempts cut the pace 1,138 times with no SYN retransmitted at all.
// One still under way cuts once its connect has waited past a second SYN
// retransmission (1 s + 2 s). A connected attempt still waiting for its
// TLS handshake or its first response is not counted until it ends: at
// C1M nginx's 56 workers, sharing both CPUs with 51 client processes,
// left connections in their accept queues for seconds with nothing
// dropped (connect p99 under 1 ms, no SYN retransmitted), and counting
// those waits cut each process's pace about 25 times; the processes it
// slowed to a few connects/s made the ramp's tail.
func (p *connectPhase) paceStep(now, dt time.Duration) {
	p.mu.Lock()
	o := p.obs
	p.obs = rampObs{}
	p.mu.Unlock()
	for w := range p.dialing {
		if v := p.dialing[w].Load(); v != 0 {
			if begin := time.Duration(v - 1); now-begin >= inFlightSlow*p.cfg.slow {
				o.Slow, o.SlowBegin = true, max(o.SlowBegin, begin)
			}
		}
	}
	o.Now, o.Dt = now, dt
	p.mu.Lock()
	p.pace = p.pace.step(o)
	p.paceMin, p.paceMax = min(p.paceMin, p.pace.Rate), max(p.paceMax, p.pace.Rate)
	p.mu.Unlock()
}

// noteSlow reports to the controller a connect begun at ramp time begin
// that timed out or was slow. p.mu is held.
func (p *connectPhase) noteSlow(begin time.Duration) {
	if !p.obs.Slow || begin > p.obs.SlowBegin {
		p.obs.SlowBegin = begin
	}
	p.obs.Slow = true
}

// workerBufs is what a connect worker reads responses with.
type workerBufs struct {
	br *bufio.Reader
	h2 h2wire.Buf // -http 2
}

// attempt makes one attempt of job j on worker w: connect, TLS handshake
// with -tls-ca, and the priming request.
func (p *connectPhase) attempt(ctx context.Context, wb *workerBufs, w int, j connectJob) {
	defer func() {
		p.mu.Lock()
		p.inflight--
		p.mu.Unlock()
		select {
		case p.wake <- struct{}{}:
		default:
		}
	}()
	first := j.tries == 0
	if first {
		p.attempted.Add(1)
	} else {
		p.retries.Add(1)
	}
	t0 := time.Now()
	begin := t0.Sub(p.start)
	p.dialing[w].Store(int64(begin) + 1)
	defer p.dialing[w].Store(0)
	c, err := p.dialer.DialContext(ctx, "tcp", p.cfg.target.String())
	connectLat := time.Since(t0)
	// Connected: what follows waits for the server's CPU, not for a
	// queue with room in it; it is judged once it ends.
	p.dialing[w].Store(0)
	if err != nil {
		p.noAnswer(ctx, j, begin, err, true)
		return
	}
	tc := c.(*net.TCPConn)
	p.mu.Lock()
	p.connectHist.Record(connectLat.Microseconds())
	if first {
		p.firstHist.Record(connectLat.Microseconds())
	}
	if connectLat >= p.cfg.slow {
		p.slow++
		if first {
			p.firstSlow++
		}
	}
	p.mu.Unlock()
	var rw net.Conn = tc
	if p.cfg.tlsCfg != nil {
		sc, hs, err := tlsdial.Handshake(ctx, tc, p.cfg.tlsCfg, p.cfg.connectTimeout)
		if err != nil {
			if p.cfg.http == httpV2 && h2wire.NoALPN(err) {
				err = fmt.Errorf("%w: %w", h2wire.ErrALPNNotH2, err)
			}
			p.noAnswer(ctx, j, begin, err, false)
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
			first := tlsdial.StateOf(st)
			p.tlsFirst = &first
		}
		p.mu.Unlock()
		if p.cfg.http == httpV2 && st.NegotiatedProtocol != "h2" {
			sc.Close()
			p.fail(ctx, fmt.Errorf("%w (it chose %q)", h2wire.ErrALPNNotH2, st.NegotiatedProtocol), first)
			return
		}
		rw = sc
	}
	if p.cfg.linger0 {
		if err := tc.SetLinger(0); err != nil {
			tc.Close()
			p.fail(ctx, err, first)
			return
		}
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		tc.Close()
		p.fail(ctx, err, first)
		return
	}
	status, reqLat := 0, time.Duration(0)
	if p.prime {
		// Closing the connection is what interrupts a pending read.
		stop := context.AfterFunc(ctx, func() { tc.Close() })
		t1 := time.Now()
		keepAlive := true
		if p.cfg.http == httpV2 {
			status, err = h2wire.RoundTrip(rw, wb.br, &wb.h2, p.req, p.cfg.connectTimeout)
		} else {
			status, keepAlive, err = h1wire.RoundTrip(rw, wb.br, p.req, p.cfg.connectTimeout)
		}
		reqLat = time.Since(t1)
		if !stop() {
			err = context.Canceled
		} else if err == nil && !keepAlive {
			err = h1wire.ErrServerClose
		}
		if err != nil {
			tc.Close()
			if status == 0 {
				p.noAnswer(ctx, j, begin, err, false)
				return
			}
			p.mu.Lock()
			p.status[status]++
			p.mu.Unlock()
			p.fail(ctx, err, first)
			return
		}
	}
	setup := time.Since(t0)
	resent := setup >= p.cfg.slow && clientsys.Retransmitted(rc)
	p.mu.Lock()
	switch {
	case resent:
		p.noteSlow(begin)
	case setup < p.cfg.slow:
		p.obs.Fast++
	}
	if p.prime {
		p.requestHist.Record(reqLat.Microseconds())
		p.status[status]++
	}
	h := held{c: tc, rc: rc, io: rw}
	if p.cfg.http == httpV2 {
		h.h2 = &h2wire.Conn{}
	}
	p.conns = append(p.conns, h)
	if first {
		p.firstEstablished++
	} else {
		p.afterRetry++
	}
	p.mu.Unlock()
	p.established.Add(1)
}

// noAnswer accounts an attempt that got no answer: the connect failed
// (connect set) or, connected, the TLS handshake or the priming request
// got no response. A timeout (the server never took the connection in:
// its SYN, or its handshake's last ACK, was dropped on a full queue) goes
// back in the queue for a retry while the connection has retries left and
// the dispatcher runs; anything else, or a timeout without a retry left,
// is the connection's outcome.
func (p *connectPhase) noAnswer(ctx context.Context, j connectJob, begin time.Duration, err error, connect bool) {
	cause := Classify(err)
	if ctx.Err() != nil {
		cause = causeCanceled
	}
	timedOut := cause == causeTimeout
	p.mu.Lock()
	if j.tries == 0 {
		p.firstErrors[cause]++
		switch {
		case timedOut && connect:
			p.firstTimeouts++
		case timedOut:
			p.firstRespTimeouts++
		}
	}
	if timedOut {
		p.noteSlow(begin)
	}
	retry := timedOut && j.tries < p.cfg.retries && !p.stopped
	if retry {
		p.retryq = append(p.retryq, connectJob{tries: j.tries + 1})
		if j.tries == 0 {
			p.retried++
		}
	}
	p.mu.Unlock()
	if !retry {
		p.failCause(cause)
	}
}

// fail accounts a connection that failed after its connect (not for want
// of an answer): the outcome of the connection, and of its first attempt
// when first.
func (p *connectPhase) fail(ctx context.Context, err error, first bool) {
	cause := Classify(err)
	if ctx.Err() != nil {
		cause = causeCanceled
	}
	if first {
		p.mu.Lock()
		p.firstErrors[cause]++
		p.mu.Unlock()
	}
	p.failCause(cause)
}

// failCause accounts a connection that failed for cause.
func (p *connectPhase) failCause(cause string) {
	p.mu.Lock()
	p.errors[cause]++
	p.mu.Unlock()
	p.failed.Add(1)
}

func (p *connectPhase) progressLine(interval time.Duration, last *int64) (string, *connresult.Event) {
	est := p.established.Load()
	rate := float64(est-*last) / interval.Seconds()
	ev := &connresult.Event{Event: connresult.EventRamp, Established: est, Target: p.cfg.conns, Failed: p.failed.Load(),
		RatePerS: ptr(round(rate, 1)), ElapsedS: round(time.Since(p.start).Seconds(), 3)}
	*last = est
	p.mu.Lock()
	causes := formatCauses(p.errors)
	p.mu.Unlock()
	p.mu.Lock()
	paced := p.pace.Rate
	p.mu.Unlock()
	line := fmt.Sprintf("established=%d/%d rate=%.0f/s paced=%.0f/s retries=%d failures=%d",
		est, p.cfg.conns, rate, paced, p.retries.Load(), p.failed.Load())
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
func startProgress(interval time.Duration, w io.Writer, line func(time.Duration, *int64) (string, *connresult.Event)) (stop func()) {
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
					connresult.WriteEvent(w, *ev)
				}
			}
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}
