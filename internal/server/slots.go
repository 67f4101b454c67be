package server

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The ground-truth mode: -service-time and -slots (or CSB_SERVICE_TIME and
// CSB_SLOTS) turn the server into a known queue. Every request to
// /payload/<size> holds one of Slots slots for ServiceTime before its reply
// is written; a request that finds every slot held waits, first come first
// served, for one to be freed. The server's capacity is then Slots /
// ServiceTime requests per second, and under Poisson arrivals its latency
// is that of an M/D/c queue (c = Slots, D = ServiceTime), which is what a
// capacity search and a latency curve are checked against.
//
// time.Sleep does not sleep exactly the time asked: on Linux it overshoots
// by a fraction of a millisecond, and by much more on a busy host (on the
// 2-CPU build VM, 10 ms sleeps overshot by 0.3 ms at the median and 1 ms in
// the mean). So the server measures how long each request really held its
// slot, and reports that (ServiceStats): the true capacity is Slots / the
// measured mean hold, not Slots / ServiceTime.

// Environment variables that set -service-time and -slots when the flag is
// not given (a flag on the command line wins; an empty value is unset).
const (
	EnvServiceTime = "CSB_SERVICE_TIME"
	EnvSlots       = "CSB_SLOTS"
)

// Bounds of the ground-truth settings.
const (
	// MinServiceTime: below a millisecond time.Sleep's overshoot (the
	// runtime's timer wake-up, ~1 ms for a 100 us sleep here) is larger
	// than the service time itself, and the queue is no longer D.
	MinServiceTime = time.Millisecond
	// MaxServiceTime keeps a queue of several service times per slot well
	// inside WriteTimeout and a graceful shutdown's ShutdownTimeout.
	MaxServiceTime = time.Second
	MaxSlots       = 100000
)

// StatsPath serves ServiceStats as JSON in the ground-truth mode (404
// otherwise, as before). It holds no slot, nor does /healthz.
const StatsPath = "/stats"

// slotSettings resolves -service-time and -slots: a flag given on the
// command line, else its environment variable, else off. Both or neither:
// a service time without slots (or slots without a service time) has no
// capacity to check against, so it is refused rather than guessed.
func slotSettings(serviceFlag time.Duration, serviceSet bool, slotsFlag int, slotsSet bool,
	lookupEnv func(string) (string, bool)) (time.Duration, int, error) {
	service, serviceFrom := serviceFlag, "-service-time "+serviceFlag.String()
	if !serviceSet {
		serviceFrom = ""
		if v, ok := lookupEnv(EnvServiceTime); ok && v != "" {
			d, err := time.ParseDuration(v)
			if err != nil {
				return 0, 0, fmt.Errorf("%s=%q (environment) is not a duration (want e.g. 10ms)", EnvServiceTime, v)
			}
			service, serviceFrom = d, fmt.Sprintf("%s=%s (environment)", EnvServiceTime, v)
		}
	}
	slots, slotsFrom := slotsFlag, "-slots "+strconv.Itoa(slotsFlag)
	if !slotsSet {
		slotsFrom = ""
		if v, ok := lookupEnv(EnvSlots); ok && v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || strings.TrimLeft(v, "0123456789") != "" {
				return 0, 0, fmt.Errorf("%s=%q (environment) is not a whole number (want e.g. 40)", EnvSlots, v)
			}
			slots, slotsFrom = n, fmt.Sprintf("%s=%s (environment)", EnvSlots, v)
		}
	}
	switch {
	case serviceFrom == "" && slotsFrom == "":
		return 0, 0, nil
	case serviceFrom != "" && (service < MinServiceTime || service > MaxServiceTime):
		return 0, 0, fmt.Errorf("%s is out of range (want %v to %v; time.Sleep is not precise below %v)", serviceFrom, MinServiceTime, MaxServiceTime, MinServiceTime)
	case slotsFrom != "" && (slots < 1 || slots > MaxSlots):
		return 0, 0, fmt.Errorf("%s is out of range (want 1 to %d)", slotsFrom, MaxSlots)
	case slotsFrom == "":
		return 0, 0, fmt.Errorf("%s needs -slots (or %s) too: how many requests are served at once", serviceFrom, EnvSlots)
	case serviceFrom == "":
		return 0, 0, fmt.Errorf("%s needs -service-time (or %s) too: how long each request holds its slot", slotsFrom, EnvServiceTime)
	}
	return service, slots, nil
}

// ServiceStats is what the ground-truth mode measured, cumulative since the
// server started: /stats serves it at any time, the shutdown line carries
// the final one. Sums are exact integers, so a window's figures are the
// difference of two reads (Sub). Every derived field is null (nil) while
// no request has been served.
type ServiceStats struct {
	Slots         int     `json:"slots"`
	ServiceTimeMs float64 `json:"service_time_ms"` // as set
	// CapacityNominalRPS is Slots / ServiceTimeMs; CapacityRPS is Slots
	// / HoldMeanMs, the capacity the server really had.
	CapacityNominalRPS float64  `json:"capacity_nominal_rps"`
	CapacityRPS        *float64 `json:"capacity_rps"`

	Requests uint64 `json:"requests"` // served: held a slot and released it
	Queued   uint64 `json:"queued"`   // of Requests, those that found no free slot and waited
	// Abandoned left the queue before a slot was free: the client went
	// away (closed the connection, reset the stream). Not in Requests.
	Abandoned uint64 `json:"abandoned"`
	Busy      int64  `json:"busy"`    // slots held at the time of the (later) read
	Waiting   int64  `json:"waiting"` // requests waiting for a slot at the time of the (later) read

	// The hold: from taking a slot to giving it back, measured per
	// request with the monotonic clock.
	HoldSumNs       uint64   `json:"hold_sum_ns"`
	HoldSqSumUs2    uint64   `json:"hold_sq_sum_us2"` // sum of squares, in whole microseconds
	HoldMeanMs      *float64 `json:"hold_mean_ms"`
	HoldStdevMs     *float64 `json:"hold_stdev_ms"` // sample standard deviation, from the whole-us squares
	HoldMinMs       *float64 `json:"hold_min_ms"`   // nil in a Sub window
	HoldMaxMs       *float64 `json:"hold_max_ms"`   // nil in a Sub window
	WaitSumNs       uint64   `json:"wait_sum_ns"`   // time waiting for a slot, over Requests
	WaitMeanMs      *float64 `json:"wait_mean_ms"`
	OvershootMeanMs *float64 `json:"overshoot_mean_ms"` // HoldMeanMs - ServiceTimeMs
}

// Sub is the window between an earlier read prev and s: counts and sums
// subtracted, derived figures recomputed, min and max unknown (nil).
func (s ServiceStats) Sub(prev ServiceStats) ServiceStats {
	w := s
	w.Requests -= prev.Requests
	w.Queued -= prev.Queued
	w.Abandoned -= prev.Abandoned
	w.HoldSumNs -= prev.HoldSumNs
	w.HoldSqSumUs2 -= prev.HoldSqSumUs2
	w.WaitSumNs -= prev.WaitSumNs
	w.derive()
	w.HoldMinMs, w.HoldMaxMs = nil, nil
	return w
}

func (s *ServiceStats) derive() {
	s.CapacityNominalRPS = float64(s.Slots) / (s.ServiceTimeMs / 1e3)
	s.CapacityRPS, s.HoldMeanMs, s.HoldStdevMs, s.WaitMeanMs, s.OvershootMeanMs = nil, nil, nil, nil, nil
	if s.Requests == 0 {
		return
	}
	n := float64(s.Requests)
	mean := float64(s.HoldSumNs) / n / 1e6
	wait := float64(s.WaitSumNs) / n / 1e6
	over := mean - s.ServiceTimeMs
	capacity := float64(s.Slots) / (mean / 1e3)
	s.HoldMeanMs, s.WaitMeanMs, s.OvershootMeanMs, s.CapacityRPS = &mean, &wait, &over, &capacity
	if s.Requests > 1 {
		meanUs := mean * 1e3
		v := (float64(s.HoldSqSumUs2) - n*meanUs*meanUs) / (n - 1)
		sd := math.Sqrt(math.Max(v, 0)) / 1e3
		s.HoldStdevMs = &sd
	}
}

// slotHandler is the ground-truth mode around the fixed-payload handler.
type slotHandler struct {
	next    http.Handler
	slots   slotPool
	service time.Duration

	requests, queued, abandoned atomic.Uint64
	busy, waiting               atomic.Int64
	inflight                    atomic.Int64 // in ServeHTTP under /payload/
	holdSumNs, holdSqSumUs2     atomic.Uint64
	waitSumNs                   atomic.Uint64
	holdMinNs, holdMaxNs        atomic.Int64
}

// sleepTimers are stopped, drained timers for the hold: with Go >= 1.23
// semantics a Reset timer delivers only its new expiry on C.
var sleepTimers = sync.Pool{New: func() any {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return t
}}

// slotPool is the slots, first come first served. A slot given back while
// requests wait is handed to the first of them there and then, with the
// time of the handoff: its hold starts at that moment, not when its
// goroutine next runs, so the time a busy host takes to schedule the
// waiter is in the hold. The sum of the holds is then all the time slots
// were taken, and Slots / the mean hold the capacity the server really had.
type slotPool struct {
	mu      sync.Mutex
	n, free int
	waiters []chan time.Time // each buffered (1): the handoff never blocks
}

// take is a free slot at once (queued false), else the first free one,
// waiting for it; ok false when ctx ended first (the slot not taken).
// start is when the slot became the request's. Only a request that waits
// calls ctx.Done (its first call allocates).
func (p *slotPool) take(ctx context.Context, onWait func()) (start time.Time, queued, ok bool) {
	p.mu.Lock()
	if p.free > 0 {
		p.free--
		p.mu.Unlock()
		return time.Now(), false, true
	}
	ch := make(chan time.Time, 1)
	p.waiters = append(p.waiters, ch)
	p.mu.Unlock()
	onWait()
	select {
	case t := <-ch:
		return t, true, true
	case <-ctx.Done():
	}
	p.mu.Lock()
	for i, w := range p.waiters {
		if w == ch {
			p.waiters = append(p.waiters[:i], p.waiters[i+1:]...)
			p.mu.Unlock()
			return time.Time{}, true, false
		}
	}
	p.mu.Unlock()
	// Handed a slot as it left: give it on.
	<-ch
	p.give()
	return time.Time{}, true, false
}

// give hands the slot to the first waiter, or frees it.
func (p *slotPool) give() {
	p.mu.Lock()
	if len(p.waiters) == 0 {
		p.free++
		p.mu.Unlock()
		return
	}
	ch := p.waiters[0]
	p.waiters[0] = nil
	p.waiters = p.waiters[1:]
	p.mu.Unlock()
	ch <- time.Now()
}

func newSlotHandler(next http.Handler, service time.Duration, slots int) *slotHandler {
	h := &slotHandler{next: next, slots: slotPool{n: slots, free: slots}, service: service}
	h.holdMinNs.Store(math.MaxInt64)
	return h
}

// ServeHTTP: /stats and /healthz are answered at once; every other request
// (a payload, or a 404 or 405 under /payload/) takes a slot, waiting for
// one if none is free, holds it for the service time, gives it back, and
// only then is answered, so the reply's write (which a slow reader can
// stretch) is not part of the hold.
//
// A request that takes a free slot allocates nothing here (the hold's
// timer comes from a pool). One that waits (a channel for its handoff)
// watches its context too
// (net/http cancels it when the client closes the connection or resets the
// stream), and leaves the queue then: that first call of Done allocates the
// context's channel, one allocation per queued request, negligible beside a
// wait of milliseconds.
func (h *slotHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case StatsPath:
		h.serveStats(w, r)
		return
	case "/healthz":
		h.next.ServeHTTP(w, r)
		return
	}
	if !strings.HasPrefix(r.URL.Path, "/payload/") {
		h.next.ServeHTTP(w, r)
		return
	}
	h.inflight.Add(1)
	defer h.inflight.Add(-1)
	arrived := time.Now()
	start, queued, ok := h.slots.take(r.Context(), func() { h.waiting.Add(1) })
	if queued {
		h.waiting.Add(-1)
	}
	if !ok {
		h.abandoned.Add(1)
		return
	}
	if queued {
		h.queued.Add(1)
	}
	h.busy.Add(1)
	// time.Sleep would do, but it allocates a timer for each goroutine
	// that first calls it, and HTTP/2 runs every request on a new one.
	// The service time from the hold's start (a handed slot's hold began
	// at the handoff).
	tm := sleepTimers.Get().(*time.Timer)
	tm.Reset(h.service - time.Since(start))
	<-tm.C
	sleepTimers.Put(tm)
	held := time.Since(start)
	h.busy.Add(-1)
	h.slots.give()
	h.record(held, start.Sub(arrived))
	h.next.ServeHTTP(w, r)
}

func (h *slotHandler) record(held, waited time.Duration) {
	h.requests.Add(1)
	h.holdSumNs.Add(uint64(held))
	us := uint64(held / time.Microsecond)
	h.holdSqSumUs2.Add(us * us)
	h.waitSumNs.Add(uint64(waited))
	for ns := int64(held); ; {
		cur := h.holdMinNs.Load()
		if ns >= cur || h.holdMinNs.CompareAndSwap(cur, ns) {
			break
		}
	}
	for ns := int64(held); ; {
		cur := h.holdMaxNs.Load()
		if ns <= cur || h.holdMaxNs.CompareAndSwap(cur, ns) {
			break
		}
	}
}

// drain waits, at most until ctx is done, for the requests still in the
// handler. net/http's Shutdown does not wait for them all: an HTTP/2
// connection that the client closes ends at once, with its streams'
// handlers still running (a client that stops mid-run, as h2load does at
// the end of -D, leaves requests holding slots). False if ctx ended first.
func (h *slotHandler) drain(ctx context.Context) bool {
	for h.inflight.Load() > 0 {
		select {
		case <-ctx.Done():
			return false
		case <-time.After(time.Millisecond):
		}
	}
	return true
}

// Stats reads the counters. Under load the fields are read one after the
// other, not as one snapshot; after a shutdown (every handler returned)
// they are exact.
func (h *slotHandler) Stats() ServiceStats {
	s := ServiceStats{
		Slots:         h.slots.n,
		ServiceTimeMs: float64(h.service) / 1e6,
		Requests:      h.requests.Load(),
		Queued:        h.queued.Load(),
		Abandoned:     h.abandoned.Load(),
		Busy:          h.busy.Load(),
		Waiting:       h.waiting.Load(),
		HoldSumNs:     h.holdSumNs.Load(),
		HoldSqSumUs2:  h.holdSqSumUs2.Load(),
		WaitSumNs:     h.waitSumNs.Load(),
	}
	s.derive()
	if s.Requests > 0 {
		mn, mx := float64(h.holdMinNs.Load())/1e6, float64(h.holdMaxNs.Load())/1e6
		s.HoldMinMs, s.HoldMaxMs = &mn, &mx
	}
	return s
}

func (h *slotHandler) serveStats(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header()["Allow"] = []string{"GET, HEAD"}
		http.Error(w, "405 method not allowed", http.StatusMethodNotAllowed)
		return
	}
	b, err := json.Marshal(h.Stats())
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	b = append(b, '\n')
	hdr := w.Header()
	hdr["Content-Type"] = []string{"application/json"}
	hdr["Content-Length"] = []string{strconv.Itoa(len(b))}
	hdr["Cache-Control"] = []string{"no-store"}
	if r.Method != http.MethodHead {
		_, _ = w.Write(b)
	}
}
