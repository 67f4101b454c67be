package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// env is an environment holding only vars.
func env(vars map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
}

func TestSlotSettingsFromEnvironment(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		env     map[string]string
		service time.Duration
		slots   int
	}{
		{nil, nil, 0, 0},
		{nil, map[string]string{EnvServiceTime: "10ms", EnvSlots: "40"}, 10 * time.Millisecond, 40},
		// A flag wins over its variable; the other can come from the environment.
		{[]string{"-slots", "8"}, map[string]string{EnvServiceTime: "10ms", EnvSlots: "40"}, 10 * time.Millisecond, 8},
		{[]string{"-service-time", "20ms"}, map[string]string{EnvServiceTime: "junk", EnvSlots: "4"}, 20 * time.Millisecond, 4},
		{[]string{"-service-time", "20ms", "-slots", "4"}, map[string]string{EnvServiceTime: "junk", EnvSlots: "x"}, 20 * time.Millisecond, 4},
		// An empty variable is unset.
		{nil, map[string]string{EnvServiceTime: "", EnvSlots: ""}, 0, 0},
	} {
		cfg, err := parseArgs(append([]string{"-addr", "127.0.0.1"}, tc.args...), env(tc.env))
		if err != nil || cfg.ServiceTime != tc.service || cfg.Slots != tc.slots {
			t.Errorf("%q with %v: service %v, slots %d, %v; want %v, %d", tc.args, tc.env, cfg.ServiceTime, cfg.Slots, err, tc.service, tc.slots)
		}
	}
	for _, tc := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{nil, map[string]string{EnvServiceTime: "10"}, `CSB_SERVICE_TIME="10" (environment) is not a duration (want e.g. 10ms)`},
		{nil, map[string]string{EnvServiceTime: "10ms", EnvSlots: "4x"}, `CSB_SLOTS="4x" (environment) is not a whole number (want e.g. 40)`},
		{nil, map[string]string{EnvServiceTime: "10ms", EnvSlots: "+4"}, `CSB_SLOTS="+4" (environment) is not a whole number`},
		{nil, map[string]string{EnvServiceTime: "10ms", EnvSlots: "0"}, "CSB_SLOTS=0 (environment) is out of range (want 1 to 100000)"},
		{nil, map[string]string{EnvServiceTime: "5s", EnvSlots: "4"}, "CSB_SERVICE_TIME=5s (environment) is out of range (want 1ms to 1s"},
		{nil, map[string]string{EnvServiceTime: "10ms"}, "CSB_SERVICE_TIME=10ms (environment) needs -slots (or CSB_SLOTS) too"},
		{nil, map[string]string{EnvSlots: "40"}, "CSB_SLOTS=40 (environment) needs -service-time (or CSB_SERVICE_TIME) too"},
		{[]string{"-slots", "40"}, map[string]string{EnvSlots: "4"}, "-slots 40 needs -service-time (or CSB_SERVICE_TIME) too"},
	} {
		_, err := parseArgs(append([]string{"-addr", "127.0.0.1"}, tc.args...), env(tc.env))
		if ExitCode(err) != 2 || err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q with %v: %v (exit %d), want exit 2 with %q", tc.args, tc.env, err, ExitCode(err), tc.want)
		}
	}
}

// TestRunBadSlotsEnvironment: a bad variable stops Run before it listens,
// exit 2, the error on stderr's first line.
func TestRunBadSlotsEnvironment(t *testing.T) {
	t.Setenv(EnvServiceTime, "10ms")
	t.Setenv(EnvSlots, "many")
	var stdout, stderr bytes.Buffer
	err := Run(context.Background(), []string{"-addr", "127.0.0.1", "-port", "0"}, &stdout, &stderr)
	first, _, _ := strings.Cut(stderr.String(), "\n")
	if ExitCode(err) != 2 || first != `error: CSB_SLOTS="many" (environment) is not a whole number (want e.g. 40)` || stdout.Len() != 0 {
		t.Errorf("Run = %v (exit %d), stderr first line %q, stdout %q", err, ExitCode(err), first, stdout.String())
	}
}

func getStats(t *testing.T, client *http.Client, base string) ServiceStats {
	t.Helper()
	res, err := client.Get(base + StatsPath)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("GET /stats: %d %q", res.StatusCode, res.Header.Get("Content-Type"))
	}
	var s ServiceStats
	dec := json.NewDecoder(res.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestRunSlotsQueue is the ground truth checked against itself: 4 slots of
// 20 ms serve 40 requests sent at once in 10 rounds, so in no less than
// 200 ms (a firm bound: no slot serves two requests in less than 40 ms),
// and not much more; the last to be served waited 9 rounds. /stats and the
// shutdown line report what the slots really held. Over HTTP/1.1 (40
// connections) and h2c (40 streams on one connection).
func TestRunSlotsQueue(t *testing.T) {
	const slots, service, n = 4, 20 * time.Millisecond, 40
	for _, proto := range []string{"HTTP/1.1", "HTTP/2.0"} {
		t.Run(proto[:6], func(t *testing.T) {
			r := startRun(t, "-addr", "127.0.0.1", "-port", "0", "-sizes", "1k", "-http", "1.1,2", "-service-time", "20ms", "-slots", "4")
			if r.listening["service_time_ms"] != 20.0 || r.listening["slots"] != 4.0 {
				t.Errorf("listening: service_time_ms %v, slots %v", r.listening["service_time_ms"], r.listening["slots"])
			}
			client := h1Client(nil)
			if proto == "HTTP/2.0" {
				client = h2Client(nil)
			}
			base := "http://" + r.addr
			// /healthz answers at once, and opens the h2 connection.
			if res, err := client.Get(base + "/healthz"); err != nil {
				t.Fatal(err)
			} else {
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
			}

			latencies := make([]time.Duration, n)
			var wg sync.WaitGroup
			begin := time.Now()
			for i := range latencies {
				wg.Add(1)
				go func() {
					defer wg.Done()
					t0 := time.Now()
					res, err := client.Get(base + "/payload/1k")
					if err != nil {
						t.Error(err)
						return
					}
					b, _ := io.ReadAll(res.Body)
					res.Body.Close()
					if res.StatusCode != 200 || len(b) != 1024 || res.Proto != proto {
						t.Errorf("%s %d, %d bytes; want %s 200, 1024", res.Proto, res.StatusCode, len(b), proto)
					}
					latencies[i] = time.Since(t0)
				}()
			}
			wg.Wait()
			elapsed := time.Since(begin)
			var slowest time.Duration
			for _, l := range latencies {
				slowest = max(slowest, l)
			}
			t.Logf("%d requests in %v (ideal %v), slowest %v", n, elapsed, n/slots*service, slowest)
			if elapsed < n/slots*service || elapsed > 3*time.Second {
				t.Errorf("%d requests on %d slots of %v took %v, want about %v", n, slots, service, elapsed, n/slots*service)
			}
			if slowest < n/slots*service-service {
				t.Errorf("the slowest request took %v, want at least 9 service times (%v)", slowest, n/slots*service-service)
			}

			st := getStats(t, client, base)
			if st.Requests != n || st.Slots != slots || st.ServiceTimeMs != 20 || st.Busy != 0 || st.Waiting != 0 || st.Abandoned != 0 {
				t.Errorf("/stats %+v", st)
			}
			if st.Queued == 0 || st.WaitMeanMs == nil || *st.WaitMeanMs <= 0 {
				t.Errorf("/stats: queued %d, wait mean %v; want requests that waited", st.Queued, st.WaitMeanMs)
			}
			if st.HoldMeanMs == nil || *st.HoldMeanMs < 20 || *st.HoldMeanMs > 40 || *st.HoldMinMs < 20 || *st.HoldMaxMs < *st.HoldMeanMs {
				t.Fatalf("/stats hold: mean %v, min %v, max %v ms; want 20 ms and a little more", st.HoldMeanMs, st.HoldMinMs, st.HoldMaxMs)
			}
			if *st.CapacityRPS > 200 || *st.CapacityRPS < 4/0.040 || st.CapacityNominalRPS != 200 {
				t.Errorf("/stats capacity %v (nominal %v), want a little under 4 / 20 ms = 200", *st.CapacityRPS, st.CapacityNominalRPS)
			}
			t.Logf("hold mean %.3f ms (sd %.3f, min %.3f, max %.3f), overshoot %.3f ms, wait mean %.3f ms, capacity %.1f/s",
				*st.HoldMeanMs, *st.HoldStdevMs, *st.HoldMinMs, *st.HoldMaxMs, *st.OvershootMeanMs, *st.WaitMeanMs, *st.CapacityRPS)
			client.CloseIdleConnections()

			err, ev := r.shutdown(t, errors.New("done"))
			if err != nil {
				t.Fatal(err)
			}
			b, _ := json.Marshal(ev["service"])
			var final ServiceStats
			if err := json.Unmarshal(b, &final); err != nil || final.Requests != n || final.HoldSumNs != st.HoldSumNs || *final.HoldMeanMs != *st.HoldMeanMs {
				t.Errorf("shutdown line service = %s (%v), want the figures /stats gave: %+v", b, err, st)
			}
		})
	}
}

// TestRunSlotsAbandoned: a request waiting for a slot whose client goes
// away leaves the queue and is counted apart; /healthz never waits.
func TestRunSlotsAbandoned(t *testing.T) {
	r := startRun(t, "-addr", "127.0.0.1", "-port", "0", "-sizes", "1k", "-service-time", "300ms", "-slots", "1")
	base := "http://" + r.addr
	client := h1Client(nil)
	waitFor := func(what string, ok func(ServiceStats) bool) {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(2 * time.Millisecond) {
			if ok(getStats(t, client, base)) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("no %s after 5 s", what)
			}
		}
	}
	holder := make(chan error, 1)
	go func() {
		res, err := client.Get(base + "/payload/1k")
		if err == nil {
			io.Copy(io.Discard, res.Body)
			res.Body.Close()
		}
		holder <- err
	}()
	waitFor("busy slot", func(s ServiceStats) bool { return s.Busy == 1 })

	t0 := time.Now()
	res, err := client.Get(base + "/healthz")
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("/healthz with every slot busy: %v", err)
	}
	res.Body.Close()
	if d := time.Since(t0); d > 200*time.Millisecond {
		t.Errorf("/healthz took %v with every slot busy, want no wait", d)
	}

	ctx, cancel := context.WithCancel(context.Background())
	gone := make(chan error, 1)
	go func() {
		req, _ := http.NewRequestWithContext(ctx, "GET", base+"/payload/1k", nil)
		res, err := client.Do(req)
		if err == nil {
			res.Body.Close()
		}
		gone <- err
	}()
	waitFor("waiting request", func(s ServiceStats) bool { return s.Waiting == 1 })
	cancel()
	if err := <-gone; !errors.Is(err, context.Canceled) {
		t.Errorf("canceled request: %v", err)
	}
	waitFor("abandoned request", func(s ServiceStats) bool { return s.Abandoned == 1 && s.Waiting == 0 })
	if err := <-holder; err != nil {
		t.Fatal(err)
	}
	if st := getStats(t, client, base); st.Requests != 1 || st.Queued != 0 {
		t.Errorf("/stats %+v, want 1 request served, none queued", st)
	}
	client.CloseIdleConnections()
}

// TestRunSlotsDrain: an HTTP/2 client that closes its connection with one
// request holding the only slot and one waiting (as h2load does at the end
// of -D) ends the connection at once, and net/http's Shutdown does not wait
// for the handler still holding; the server does, so its shutdown line
// counts that request served and the other abandoned, none busy.
func TestRunSlotsDrain(t *testing.T) {
	r := startRun(t, "-addr", "127.0.0.1", "-port", "0", "-sizes", "1k", "-http", "1.1,2", "-service-time", "200ms", "-slots", "1")
	c, err := net.DialTimeout("tcp", r.addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(10 * time.Second))
	h, err := newH2Raw(c, "GET", "http", "/payload/1k")
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Send(); err != nil {
		t.Fatal(err)
	}
	if err := h.Send(); err != nil {
		t.Fatal(err)
	}
	client := h1Client(nil)
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(2 * time.Millisecond) {
		if st := getStats(t, client, "http://"+r.addr); st.Busy == 1 && st.Waiting == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the two requests never held and waited")
		}
	}
	client.CloseIdleConnections()
	c.Close()
	err, ev := r.shutdown(t, errors.New("done"))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(ev["service"])
	var st ServiceStats
	if err := json.Unmarshal(b, &st); err != nil || st.Requests != 1 || st.Abandoned != 1 || st.Busy != 0 || st.Waiting != 0 || ev["graceful"] != true {
		t.Errorf("shutdown line %v; service %s, want 1 request served, 1 abandoned, none busy", ev, b)
	}
}

// TestStatsOnlyInGroundTruth: without the mode /stats is a 404 as before.
func TestStatsOnlyInGroundTruth(t *testing.T) {
	r := startRun(t, "-addr", "127.0.0.1", "-port", "0", "-sizes", "1k")
	res, err := h1Client(nil).Get("http://" + r.addr + StatsPath)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 404 {
		t.Errorf("/stats without -slots: %d, want 404", res.StatusCode)
	}
	_, ev := r.shutdown(t, errors.New("done"))
	if v, ok := ev["service"]; !ok || v != nil {
		t.Errorf("shutdown line service = %v (present %v), want null", v, ok)
	}
}

// TestServiceStatsSub: a window between two reads.
func TestServiceStatsSub(t *testing.T) {
	h := newSlotHandler(NewHandler(defaultSizes(t)), 10*time.Millisecond, 2)
	h.record(10*time.Millisecond+100*time.Microsecond, 0)
	first := h.Stats()
	h.record(10*time.Millisecond+300*time.Microsecond, 5*time.Millisecond)
	h.record(10*time.Millisecond+500*time.Microsecond, 7*time.Millisecond)
	all := h.Stats()
	w := all.Sub(first)
	if w.Requests != 2 || *w.HoldMeanMs != 10.4 || *w.WaitMeanMs != 6 || w.HoldMinMs != nil || w.HoldMaxMs != nil {
		t.Errorf("window %+v", w)
	}
	if *w.HoldStdevMs < 0.1414 || *w.HoldStdevMs > 0.1415 { // sd of 10.3 and 10.5 ms
		t.Errorf("window sd %v ms, want 0.1414", *w.HoldStdevMs)
	}
	if *all.HoldMinMs != 10.1 || *all.HoldMaxMs != 10.5 || *all.OvershootMeanMs < 0.2999 || *all.OvershootMeanMs > 0.3001 {
		t.Errorf("all %+v", all)
	}
	if c := *w.CapacityRPS; c < 192.30 || c > 192.31 { // 2 / 10.4 ms
		t.Errorf("capacity %v, want 192.31", c)
	}
	var empty ServiceStats
	empty = h.Stats().Sub(h.Stats())
	if empty.HoldMeanMs != nil || empty.CapacityRPS != nil || empty.CapacityNominalRPS != 200 {
		t.Errorf("empty window %+v", empty)
	}
}

// TestSlotHandlerAllocs: a request that finds a free slot costs the mode no
// allocation, on whichever goroutine it runs (the hold's timer is pooled);
// /healthz passes through untouched.
func TestSlotHandlerAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	h := newSlotHandler(NewHandler(defaultSizes(t)), time.Millisecond, 4)
	for _, target := range []string{"/payload/1k", "/healthz"} {
		req := httptest.NewRequest("GET", target, nil)
		w := newFakeWriter()
		h.ServeHTTP(w, req) // the pool's timer, made once
		if allocs := testing.AllocsPerRun(20, func() {
			w.reset()
			done := make(chan struct{})
			go func() { h.ServeHTTP(w, req); close(done) }() // a new goroutine, as HTTP/2 runs each request
			<-done
		}); allocs > 2 { // the goroutine's closure and done, none of the handler's
			t.Errorf("GET %s: %v allocations per request, want 0", target, allocs)
		}
		if allocs := testing.AllocsPerRun(20, func() { w.reset(); h.ServeHTTP(w, req) }); allocs != 0 {
			t.Errorf("GET %s: %v allocations per request, want 0", target, allocs)
		}
		if w.status != 200 {
			t.Errorf("GET %s: status %d", target, w.status)
		}
	}
	if got := h.Stats().Requests; got != 43 { // the payload's: 1 + 2 x (AllocsPerRun's warm-up + 20); /healthz holds none
		t.Errorf("requests %d, want 43", got)
	}
}
