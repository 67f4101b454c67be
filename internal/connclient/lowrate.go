package connclient

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"csbench/internal/clientsys"
	"csbench/internal/connresult"
	"csbench/internal/h1wire"
)

// lowrateRun is the request phase of lowrate: an open-model schedule,
// request i due at start + i/rps, run by one of two engines. Cleartext runs
// on the event loops of engine.go (runEngine). TLS runs on the goroutine
// engine (run): one goroutine per connection walks its share of the
// schedule, request i on connection i mod conns, so connection c sends
// requests c, c+conns, c+2*conns, ...; when the previous response on c is
// late, the next request is sent late and the wait counts in its latency.
type lowrateRun struct {
	cfg   *config
	req   []byte
	start time.Time
	n     int64 // requests scheduled

	sent, completed, failed atomic.Int64

	mu       sync.Mutex                // guards the fields below
	lat      connresult.Histogram      // done - scheduled (coordinated-omission corrected)
	tenths   connresult.TenthsRecorder // the 2xx answers by slice of the schedule
	svc      connresult.Histogram      // done - sent (service time)
	lag      connresult.Histogram      // sent - scheduled
	errors   map[string]uint64
	status   map[int]uint64
	lastDone time.Time
	alive    int

	rss        *float64 // sampled mid-schedule
	goroutines int

	// The epoll engine only.
	eng      *engine
	handed   int // connections handed over to it
	poolBusy int64
	own      connresult.Histogram // sender lag of the requests that found an idle connection
	drops    map[string]uint64

	startAt time.Time // -start-file: the agreed start (zero: as soon as ready)

	// How busy the process's CPUs were, from the schedule's start (a timer
	// set by setStart) to its end (cpuShare).
	cpu      clientsys.CPUWindow
	cpuTimer *time.Timer
	cpuBegun chan struct{}
	// What cpuShare found, once taken.
	share               float64
	shareOK, shareTaken bool
}

// cpuShare is the CPU window's busy share, ok false when it never began or
// could not be read. The first call ends the window; later ones return
// what it found (-close-late ends it when the loops end).
func (r *lowrateRun) cpuShare() (float64, bool) {
	if !r.shareTaken {
		r.share, r.shareOK = r.cpuWindowEnd()
		r.shareTaken = true
	}
	return r.share, r.shareOK
}

func (r *lowrateRun) cpuWindowEnd() (float64, bool) {
	if r.cpuTimer == nil || r.cpuTimer.Stop() {
		return 0, false // no schedule, or cut short before its start
	}
	<-r.cpuBegun
	return r.cpu.End()
}

// waitStart waits for path to hold a start time (Unix milliseconds), at
// most wait, polling every 10 ms.
func waitStart(ctx context.Context, path string, wait time.Duration) (time.Time, error) {
	return waitFileTime(ctx, path, wait, "-start-file", "start time", "-start-wait")
}

// waitFileTime waits for path to hold a time in Unix milliseconds (the
// noun that flagName gives, for errors), at most wait (waitFlag), polling
// every 10 ms.
func waitFileTime(ctx context.Context, path string, wait time.Duration, flagName, noun, waitFlag string) (time.Time, error) {
	deadline := time.Now().Add(wait)
	for {
		// An empty file is one being written (the runner renames a whole
		// one into place; a hand-made one may be caught mid-write): wait.
		if b, err := os.ReadFile(path); err == nil && strings.TrimSpace(string(b)) != "" {
			ms, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
			if err != nil || ms <= 0 {
				return time.Time{}, fmt.Errorf("%s %s: %q is not the %s in Unix milliseconds", flagName, path, strings.TrimSpace(string(b)), noun)
			}
			return time.UnixMilli(ms), nil
		}
		if time.Now().After(deadline) {
			return time.Time{}, fmt.Errorf("%s %s: no %s after %v (%s)", flagName, path, noun, wait, waitFlag)
		}
		select {
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}

func runLowrate(ctx context.Context, cfg *config, lim [2]uint64, stdout, stderr io.Writer) error {
	started := time.Now()
	res := connresult.LowrateResult{
		CommonResult: newCommon(cfg, lim, started),
		Path:         cfg.path,
		RPSTarget:    cfg.rps,
		DurationS:    cfg.duration.Seconds(),
	}
	// Each connection carries one request when it is opened, as in idle
	// mode: a server starts its header timeout at accept (net/http's
	// ReadHeaderTimeout), so a connection whose first scheduled request is
	// due later than that (conns/rps seconds for the last one, plus the
	// connect phase) would be closed before it is used.
	p := newConnectPhase(cfg, true)
	p.run(ctx, stderr)
	fillConnect(&res.CommonResult, p)

	r := &lowrateRun{
		cfg:    cfg,
		req:    p.req,
		n:      requestCount(cfg.duration, cfg.rps),
		errors: map[string]uint64{},
		status: map[int]uint64{},
		tenths: connresult.NewTenthsRecorder(cfg.duration),
	}
	res.RequestsScheduled = r.n
	conns := p.conns
	res.Engine = connresult.EngineEpoll
	if cfg.tlsCfg != nil {
		res.Engine = connresult.EngineGoroutines
	}
	if p.complete && len(p.conns) > 0 && res.Engine == connresult.EngineEpoll {
		// The event loops take the connections over before the process
		// says it is ready: at C1M, 73 processes handing over 13,700
		// connections each kept both CPUs busy for 5 s, and done after
		// the agreed start, that made every schedule late from its first
		// request.
		r.prepareEngine(conns, stderr)
		conns = nil // the engine closes them
	}
	if p.complete && len(p.conns) > 0 && cfg.startFile != "" {
		connresult.WriteEvent(stderr, connresult.Event{Event: connresult.EventReady, Established: int64(len(p.conns)), Target: cfg.conns, Failed: p.failed.Load()})
		at, err := waitStart(ctx, cfg.startFile, cfg.startWait)
		if err != nil {
			fmt.Fprintf(stderr, "error: %v\n", err)
			res.Errors["start_file"]++
			p.complete = false
		}
		r.startAt = at
	}
	if cfg.drain >= 0 {
		res.DrainS = ptr(cfg.drain.Seconds())
	}
	if p.complete && len(p.conns) > 0 {
		if res.Engine == connresult.EngineGoroutines {
			r.run(ctx, p.conns, stderr)
		} else {
			r.runEngine(ctx, stderr)
			res.RequestsLatePoolBusy = ptr(r.poolBusy)
			res.ConnectionDrops = r.drops
			if r.eng != nil {
				res.EventLoops = ptr(len(r.eng.loops))
				var cpu time.Duration
				for _, l := range r.eng.loops {
					cpu += l.cpu
				}
				res.EventLoopsCPUS = ptr(round(cpu.Seconds(), 3))
			}
			res.EngineLagP50Ms = connresult.QuantileMs(&r.own, 0.50)
			res.EngineLagP99Ms = connresult.QuantileMs(&r.own, 0.99)
			res.EngineLagMaxMs = connresult.QuantileMs(&r.own, 1)
			res.EngineLagHist = r.own.Dump()
		}
		if share, ok := r.cpuShare(); ok {
			res.ClientCPUs = r.cpu.List()
			res.ClientCPUsBusyPct = ptr(round(100*share, 1))
			if own, ok := r.cpu.Own(); ok {
				res.ClientProcessCPUPct = ptr(round(100*own, 1))
			}
		}
		res.ScheduleStartedAt = ptr(stamp(r.start))
		r.mu.Lock()
		tenths := r.tenths.T
		r.mu.Unlock()
		res.ScheduleTenths = &tenths
		if elapsed := scheduleElapsed(ctx, r.start, r.lastDone, cfg.duration); elapsed > 0 {
			res.ElapsedS = ptr(round(elapsed.Seconds(), 6))
			res.RPSAchieved = ptr(round(float64(r.completed.Load())/elapsed.Seconds(), 2))
		}
		if ctx.Err() == nil {
			res.ConnectionsAliveEnd = ptr(r.alive)
		}
	} else if r.eng != nil {
		r.eng.close() // the schedule never ran: the loops' connections close unused
	}
	res.RequestsSent = r.sent.Load()
	res.RequestsCompleted = r.completed.Load()
	res.RequestsFailed = r.failed.Load()
	res.RequestsUnsent = r.n - res.RequestsCompleted - res.RequestsFailed
	addCounts(res.Errors, r.errors)
	addStatus(res.StatusCodes, r.status)
	res.LatencyP50Ms = connresult.QuantileMs(&r.lat, 0.50)
	res.LatencyP90Ms = connresult.QuantileMs(&r.lat, 0.90)
	res.LatencyP99Ms = connresult.QuantileMs(&r.lat, 0.99)
	res.LatencyP999Ms = connresult.QuantileMs(&r.lat, 0.999)
	res.LatencyMaxMs = connresult.QuantileMs(&r.lat, 1)
	res.ServiceLatencyP50Ms = connresult.QuantileMs(&r.svc, 0.50)
	res.ServiceLatencyP90Ms = connresult.QuantileMs(&r.svc, 0.90)
	res.ServiceLatencyP99Ms = connresult.QuantileMs(&r.svc, 0.99)
	res.ServiceLatencyP999Ms = connresult.QuantileMs(&r.svc, 0.999)
	res.ServiceLatencyMaxMs = connresult.QuantileMs(&r.svc, 1)
	res.SenderLagP50Ms = connresult.QuantileMs(&r.lag, 0.50)
	res.SenderLagP99Ms = connresult.QuantileMs(&r.lag, 0.99)
	res.SenderLagMaxMs = connresult.QuantileMs(&r.lag, 1)
	res.LatencyHist, res.ServiceLatencyHist, res.SenderLagHist = r.lat.Dump(), r.svc.Dump(), r.lag.Dump()

	r.mu.Lock()
	res.ClientRSSMB, res.ClientGoroutines = r.rss, r.goroutines
	r.mu.Unlock()
	if res.ClientRSSMB == nil { // the schedule did not get half way
		res.ClientRSSMB, res.ClientGoroutines = clientsys.RSSMB(), runtime.NumGoroutine()
	}
	return finish(ctx, &res.CommonResult, &res, conns, stdout, stderr)
}

// run drives the schedule over conns and returns when every connection has
// finished its share or ctx ended.
//
// One dispatcher goroutine keeps the clock: at the due time of request i it
// drops a token into the wake channel of connection i mod conns (capacity 1,
// never blocking). A connection goroutine that is idle waits for a token
// and then for its due time; one that is still busy with an earlier
// response finds its due time already past and sends at once. The due times
// never depend on when responses arrive, so the schedule is open-model.
func (r *lowrateRun) run(ctx context.Context, conns []held, stderr io.Writer) {
	// Closing the connections is what interrupts pending reads on ctx end.
	stopClose := context.AfterFunc(ctx, func() { closeAll(conns) })
	defer stopClose()
	wake := make([]chan struct{}, len(conns))
	for c := range wake {
		wake[c] = make(chan struct{}, 1)
	}
	r.setStart(len(conns))
	var wg sync.WaitGroup
	for c := range conns {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			r.connLoop(ctx, c, len(conns), conns[c], wake[c])
		}(c)
	}
	connresult.WriteEvent(stderr, connresult.Event{Event: connresult.EventRunning, Established: int64(len(conns)), Target: r.cfg.conns})
	stop := startProgress(r.cfg.progress, stderr, r.progressLine)
	sl := clientsys.NewSleeper(ctx)
	for i := int64(0); i < r.n; i++ {
		if !sl.Until(ctx, r.start.Add(offset(i, r.cfg.rps))) {
			break
		}
		select {
		case wake[i%int64(len(conns))] <- struct{}{}:
		default: // a token is already waiting; the connection will see its due time passed
		}
		if i == r.n/2 {
			// Mid-schedule: goroutines of connections with requests left still run.
			r.rss, r.goroutines = clientsys.RSSMB(), runtime.NumGoroutine()
		}
	}
	sl.Close()
	wg.Wait()
	stop()
}

// setStart sets when request 0 is due: soon enough to leave the goroutines
// or loops time to start, or the agreed moment of -start-file.
func (r *lowrateRun) setStart(conns int) {
	r.start = time.Now().Add(10*time.Millisecond + time.Duration(conns)*time.Microsecond)
	if r.startAt.After(r.start) {
		r.start = r.startAt // the agreed moment, shared with the other processes
	}
	began := make(chan struct{})
	r.cpuBegun = began
	r.cpuTimer = time.AfterFunc(time.Until(r.start), func() { r.cpu.Begin(); close(began) })
}

// prepareEngine hands conns over to the event loops (engine.go), which
// own them from here on (r.eng; nil when the loops could not be set up,
// the error counted).
func (r *lowrateRun) prepareEngine(conns []held, stderr io.Writer) {
	r.drops = map[string]uint64{}
	fds := handOver(conns, r.drops)
	spec := engineSpec{req: r.req, rps: r.cfg.rps, n: r.n, timeout: r.cfg.timeout, duration: r.cfg.duration}
	if r.cfg.drain >= 0 {
		spec.drainEnd = r.cfg.duration + r.cfg.drain
	}
	loops := r.cfg.loops
	if loops == 0 {
		loops = defaultLoops(r.cfg.rps)
	}
	e, err := newEngine(spec, fds, loops)
	if err != nil {
		fmt.Fprintf(stderr, "error: event loops: %v\n", err)
		r.mu.Lock()
		r.errors[Classify(err)]++
		r.mu.Unlock()
		return
	}
	r.eng = e
	r.handed = len(conns)
}

// runEngine drives the schedule on the event loops prepared by
// prepareEngine and merges what the loops counted.
func (r *lowrateRun) runEngine(ctx context.Context, stderr io.Writer) {
	e := r.eng
	if e == nil {
		r.start = time.Now()
		return
	}
	fds := 0
	for _, l := range e.loops {
		fds += len(l.conns)
	}
	r.setStart(fds)
	if r.cfg.closeLate {
		// Every process's last request is due by the agreed start plus
		// -duration (and -drain) and answered or failed -timeout later: at
		// C1M, 51 processes closing 19,600 connections each as they ended
		// delayed the last requests of the others by up to 3.9 s.
		e.closeAt = r.start.Add(r.cfg.duration + max(r.cfg.drain, 0) + r.cfg.timeout)
		// The client's CPU share is the schedule's, not the wait's.
		e.loopsDone = func() { r.cpuShare() }
	}
	connresult.WriteEvent(stderr, connresult.Event{Event: connresult.EventRunning, Established: int64(r.handed), Target: r.cfg.conns})
	stop := startProgress(r.cfg.progress, stderr, r.progressLine)
	half := time.AfterFunc(time.Until(r.start.Add(r.cfg.duration/2)), func() {
		rss, g := clientsys.RSSMB(), runtime.NumGoroutine()
		r.mu.Lock()
		r.rss, r.goroutines = rss, g
		r.mu.Unlock()
	})
	e.run(ctx, r.start)
	half.Stop()
	stop()
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, l := range e.loops {
		r.sent.Add(l.sent.Load())
		r.completed.Add(l.completed.Load())
		r.failed.Add(l.failed.Load())
		r.poolBusy += l.poolBusy.Load()
		r.lat.Merge(&l.lat)
		r.svc.Merge(&l.svc)
		r.lag.Merge(&l.lag)
		r.own.Merge(&l.own)
		r.tenths.T.Add(&l.tenths.T)
		addCounts(r.errors, l.errors)
		addCounts(r.drops, l.drops)
		for k, v := range l.status {
			r.status[k] += v
		}
		if l.status200 > 0 {
			r.status[200] += l.status200
		}
		if l.lastDone > 0 {
			if t := e.base.Add(time.Duration(l.lastDone)); t.After(r.lastDone) {
				r.lastDone = t
			}
		}
		r.alive += l.alive
	}
}

// defaultLoops is one event loop per loopRPS requests/s of the schedule,
// at most one per CPU the process may use: GOMAXPROCS, at most the CPUs of
// its affinity mask (a loop holds its P while it waits, so a P beyond the
// CPUs would only steal time from the others).
func defaultLoops(rps int) int {
	return max(1, min(runtime.GOMAXPROCS(0), runtime.NumCPU(), (rps+loopRPS-1)/loopRPS))
}

// loopRPS is the rate one event loop is given before another is added. A
// loop carries ~60,000 requests/s on a CPU of its own (the engine bench),
// but a loop that waits costs CPU whether it sends or not: the runtime's
// sysmon interrupts its raw wait every 10 ms to preempt it. At C1M, 73
// processes of 137 requests/s each ran two loops apiece; measured, two
// loops at 2 requests/s cost 6.5 ms of CPU a second against 3.5 for one.
const loopRPS = 5000

// counts returns the requests sent, completed, failed and found the pool
// busy (epoll engine; -1 with the goroutine engine) so far.
func (r *lowrateRun) counts() (sent, completed, failed, poolBusy int64) {
	if r.eng == nil {
		return r.sent.Load(), r.completed.Load(), r.failed.Load(), -1
	}
	for _, l := range r.eng.loops {
		sent += l.sent.Load()
		completed += l.completed.Load()
		failed += l.failed.Load()
		poolBusy += l.poolBusy.Load()
	}
	return sent, completed, failed, poolBusy
}

// readers lends response buffers: a connection needs one only while a
// response is in flight, so with many mostly idle connections the buffers in
// use track the requests in flight, not the connections.
var readers = sync.Pool{New: func() any { return h1wire.NewReader() }}

func (r *lowrateRun) connLoop(ctx context.Context, c, nconns int, h held, wake <-chan struct{}) {
	dead := false
	for i := int64(c); i < r.n; i += int64(nconns) {
		due := r.start.Add(offset(i, r.cfg.rps))
		for time.Now().Before(due) {
			select {
			case <-wake:
			case <-ctx.Done():
				return
			}
		}
		if ctx.Err() != nil {
			return
		}
		if r.cfg.drain >= 0 && time.Since(r.start) > r.cfg.duration+r.cfg.drain {
			return // too late to send: the rest is unsent
		}
		if dead {
			r.record(ctx, due, time.Time{}, time.Time{}, 0, errConnClosed)
			continue
		}
		sent := time.Now()
		r.sent.Add(1)
		br := readers.Get().(*bufio.Reader)
		status, keepAlive, err := h1wire.RoundTrip(h.io, br, r.req, r.cfg.timeout)
		done := time.Now()
		readers.Put(br)
		r.record(ctx, due, sent, done, status, err)
		if err != nil || !keepAlive {
			// The stream is unusable (or the server is closing it): later
			// requests on this connection fail as conn_closed.
			dead = true
			h.c.Close()
		}
	}
	if !dead && ctx.Err() == nil && peek(h) == "" {
		r.mu.Lock()
		r.alive++
		r.mu.Unlock()
	}
}

var errConnClosed = errors.New("connection already failed")

// record accounts one request. sent is zero for a request that could not be
// sent; err is nil for a complete response.
func (r *lowrateRun) record(ctx context.Context, due, sent, done time.Time, status int, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !sent.IsZero() {
		r.lag.Record(sent.Sub(due).Microseconds())
	}
	if err != nil {
		cause := causeConnClosed
		if err != errConnClosed {
			cause = Classify(err)
		}
		if ctx.Err() != nil {
			cause = causeCanceled
		}
		r.errors[cause]++
		r.failed.Add(1)
		return
	}
	r.status[status]++
	if status < 200 || status > 299 {
		// A whole response, but not a success.
		r.errors[causeStatus]++
		r.failed.Add(1)
		return
	}
	r.lat.Record(done.Sub(due).Microseconds())
	r.svc.Record(done.Sub(sent).Microseconds())
	r.tenths.Record(due.Sub(r.start), done.Sub(r.start))
	if done.After(r.lastDone) {
		r.lastDone = done
	}
	r.completed.Add(1)
}

func (r *lowrateRun) progressLine(interval time.Duration, last *int64) (string, *connresult.Event) {
	sent, done, failed, poolBusy := r.counts()
	rate := float64(done-*last) / interval.Seconds()
	*last = done
	errs := map[string]uint64{}
	r.mu.Lock()
	addCounts(errs, r.errors)
	r.mu.Unlock()
	if r.eng != nil {
		for _, l := range r.eng.loops {
			l.mu.Lock()
			addCounts(errs, l.errors)
			l.mu.Unlock()
		}
	}
	causes := formatCauses(errs)
	el := time.Since(r.start)
	if el < 0 {
		el = 0
	}
	line := fmt.Sprintf("run elapsed=%.0fs/%v sent=%d completed=%d rate=%.0f/s failures=%d",
		el.Seconds(), r.cfg.duration, sent, done, rate, failed)
	if poolBusy >= 0 {
		line += fmt.Sprintf(" pool_busy=%d", poolBusy)
	}
	if causes != "" {
		line += " (" + causes + ")"
	}
	return line, nil
}
