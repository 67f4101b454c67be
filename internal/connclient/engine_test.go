package connclient

import (
	"bufio"
	"context"
	"net"
	"net/netip"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"csbench/internal/connresult"
	"csbench/internal/enginebench"
	"csbench/internal/h1wire"
	"csbench/internal/responder"
)

// scriptServer serves HTTP/1.1 on 127.0.0.1: for request r (0: the first)
// on connection c (in accept order), answer(c, r) returns the bytes to
// write (nil: none, the request hangs) and then what to do: "reset"
// (close with RST), "close", or "" (read the next request). It records
// when each request head was complete.
type scriptServer struct {
	addr   string
	answer func(c, r int) (resp []byte, act string)

	mu       sync.Mutex
	arrivals []time.Time
}

func newScriptServer(t *testing.T, answer func(c, r int) ([]byte, string)) *scriptServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	s := &scriptServer{addr: ln.Addr().String(), answer: answer}
	go func() {
		for c := 0; ; c++ {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go s.serve(conn.(*net.TCPConn), c)
		}
	}()
	return s
}

func (s *scriptServer) serve(conn *net.TCPConn, c int) {
	defer conn.Close()
	br := bufio.NewReader(conn)
	for r := 0; ; r++ {
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				return
			}
			if line == "\r\n" {
				break
			}
		}
		s.mu.Lock()
		s.arrivals = append(s.arrivals, time.Now())
		s.mu.Unlock()
		resp, act := s.answer(c, r)
		if resp != nil {
			if _, err := conn.Write(resp); err != nil {
				return
			}
		}
		switch act {
		case "reset":
			conn.SetLinger(0)
			return
		case "close":
			return
		}
	}
}

// cannedOK is a whole response of 3 body bytes.
const cannedOK = "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Type: text/plain\r\n\r\nok\n"

// okResp answers everything with cannedOK.
func okResp(int, int) ([]byte, string) { return []byte(cannedOK), "" }

// dialFDs opens n connections to addr and hands their fds over as the
// connect phase does.
func dialFDs(t testing.TB, addr string, n int) []int {
	t.Helper()
	conns := make([]held, n)
	for i := range conns {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		tc := c.(*net.TCPConn)
		rc, err := tc.SyscallConn()
		if err != nil {
			t.Fatal(err)
		}
		conns[i] = held{c: tc, rc: rc, io: tc}
	}
	drops := map[string]uint64{}
	fds := handOver(conns, drops)
	if len(fds) != n || len(drops) != 0 {
		t.Fatalf("handOver: %d fds of %d, drops %v", len(fds), n, drops)
	}
	return fds
}

// engineTotals sums what the loops of e counted.
type engineTotals struct {
	sent, completed, failed, poolBusy int64
	lat, svc, lag, own                connresult.Histogram
	errors, drops                     map[string]uint64
	status                            map[int]uint64
	alive                             int
}

func totals(e *engine) engineTotals {
	t := engineTotals{errors: map[string]uint64{}, drops: map[string]uint64{}, status: map[int]uint64{}}
	for _, l := range e.loops {
		t.sent += l.sent.Load()
		t.completed += l.completed.Load()
		t.failed += l.failed.Load()
		t.poolBusy += l.poolBusy.Load()
		t.lat.Merge(&l.lat)
		t.svc.Merge(&l.svc)
		t.lag.Merge(&l.lag)
		t.own.Merge(&l.own)
		addCounts(t.errors, l.errors)
		addCounts(t.drops, l.drops)
		for k, v := range l.status {
			t.status[k] += v
		}
		t.status[200] += l.status200
		t.alive += l.alive
	}
	return t
}

// runSchedule runs n requests at rps over fds on nloops loops, request 0
// due 20 ms from now, and returns the engine and that start.
func runSchedule(t testing.TB, fds []int, nloops, rps int, n int64, timeout time.Duration) (*engine, time.Time) {
	t.Helper()
	spec := engineSpec{req: h1wire.BuildRequest("127.0.0.1", "/"), rps: rps, n: n, timeout: timeout}
	e, err := newEngine(spec, fds, nloops)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now().Add(20 * time.Millisecond)
	e.run(context.Background(), start)
	return e, start
}

// TestEngineSchedule: 400 requests due at 2000/s over 6 connections and 2
// loops are all sent and answered, none before its due time: the k-th
// request to reach the server came no earlier than request k was due. The
// sender lag of every request is measured.
func TestEngineSchedule(t *testing.T) {
	for _, pwait2 := range []bool{true, false} {
		name := map[bool]string{true: "epoll_pwait2", false: "timerfd"}[pwait2]
		t.Run(name, func(t *testing.T) {
			defer func(v bool) { usePwait2 = v }(usePwait2)
			usePwait2 = pwait2
			s := newScriptServer(t, okResp)
			const n, rps = 400, 2000
			e, start := runSchedule(t, dialFDs(t, s.addr, 6), 2, rps, n, 5*time.Second)
			tot := totals(e)
			if tot.sent != n || tot.completed != n || tot.failed != 0 || len(tot.errors) != 0 {
				t.Fatalf("sent %d completed %d failed %d errors %v, want %d, %d, 0, none", tot.sent, tot.completed, tot.failed, tot.errors, n, n)
			}
			if tot.lag.Count() != n || tot.lat.Count() != n || tot.svc.Count() != n || tot.status[200] != n {
				t.Errorf("lag %d latency %d service %d samples, 200s %d, want %d each", tot.lag.Count(), tot.lat.Count(), tot.svc.Count(), tot.status[200], n)
			}
			if tot.alive != 6 {
				t.Errorf("alive %d, want 6", tot.alive)
			}
			if got := int64(tot.own.Count()) + tot.poolBusy; got != n {
				t.Errorf("engine lag %d samples + pool busy %d = %d, want %d: every request is in one or the other", tot.own.Count(), tot.poolBusy, got, n)
			}
			s.mu.Lock()
			arr := slices.Clone(s.arrivals)
			s.mu.Unlock()
			slices.SortFunc(arr, func(a, b time.Time) int { return a.Compare(b) })
			if len(arr) != n {
				t.Fatalf("server saw %d requests, want %d", len(arr), n)
			}
			for k, a := range arr {
				if due := start.Add(offset(int64(k), rps)); a.Before(due) {
					t.Fatalf("request %d reached the server %v before request %d was due: sent early", k, due.Sub(a), k)
				}
			}
			// Generous: a loaded machine delays wake-ups, never by seconds.
			if p50 := tot.lag.Quantile(0.5); p50 > 500_000 {
				t.Errorf("sender lag p50 %v µs", p50)
			}
			t.Logf("sender lag p50 %.0f µs p99 %.0f µs max %d µs; pool busy %d", tot.lag.Quantile(0.5), tot.lag.Quantile(0.99), tot.lag.Max(), tot.poolBusy)
		})
	}
}

// TestEnginePoolBusy: one connection, a responder that takes 30 ms, a
// request due every 5 ms: every request after the first finds the
// connection busy, is counted once, waits, and its latency counts from
// its due time (the last one waits for the six before it).
func TestEnginePoolBusy(t *testing.T) {
	s := newScriptServer(t, func(c, r int) ([]byte, string) {
		time.Sleep(30 * time.Millisecond)
		return []byte(cannedOK), ""
	})
	e, _ := runSchedule(t, dialFDs(t, s.addr, 1), 1, 200, 8, 5*time.Second)
	tot := totals(e)
	if tot.completed != 8 || tot.poolBusy != 7 || tot.own.Count() != 1 {
		t.Fatalf("completed %d, pool busy %d, engine lag samples %d, want 8, 7 and 1", tot.completed, tot.poolBusy, tot.own.Count())
	}
	// Request 7, due at 35 ms, is sent after 7 responses of >= 30 ms.
	if m := tot.lat.Max(); m < 180_000 {
		t.Errorf("latency max %d µs, want >= 180 ms: the wait counts from the due time", m)
	}
	if svc, lat := tot.svc.Quantile(0.5), tot.lat.Quantile(0.5); svc >= lat {
		t.Errorf("service p50 %.0f µs >= latency p50 %.0f µs", svc, lat)
	}
	if m := tot.lag.Max(); m < 150_000 {
		t.Errorf("sender lag max %d µs, want >= 150 ms", m)
	}
}

// TestDueCount: dueCount agrees with counting offsets one by one.
func TestDueCount(t *testing.T) {
	for _, rate := range []int{1, 3, 7, 1000, 999_983, 10_000_000} {
		for _, tt := range []time.Duration{-1, 0, 1, 99, 100, 101, 333_333, 333_333_333, 333_333_334, time.Second - 1, time.Second, 3*time.Second + 7} {
			if float64(tt)*float64(rate)/1e9 > 1e6 {
				continue // too many to count one by one
			}
			want := int64(0)
			for offset(want, rate) <= tt {
				want++
			}
			if got := dueCount(tt, rate); got != want {
				t.Errorf("dueCount(%v, %d) = %d, want %d", tt, rate, got, want)
			}
		}
	}
}

// TestEngineIdleFIFO: with every connection idle when a request is due,
// requests go round robin over the connections of a loop.
func TestEngineIdleFIFO(t *testing.T) {
	l := &evloop{idle: make([]int32, 4)}
	for c := int32(0); c < 4; c++ {
		l.pushIdle(c)
	}
	var got []int32
	for i := 0; i < 8; i++ {
		c := l.popIdle()
		got = append(got, c)
		l.pushIdle(c)
	}
	if !slices.Equal(got, []int32{0, 1, 2, 3, 0, 1, 2, 3}) {
		t.Errorf("order %v", got)
	}
	l.removeIdle(2)
	got = got[:0]
	for l.idleN > 0 {
		got = append(got, l.popIdle())
	}
	if !slices.Equal(got, []int32{0, 1, 3}) {
		t.Errorf("after removing 2: %v", got)
	}
}

// lowrateJSON runs connclient lowrate against addr with the arguments
// after the common ones.
func lowrateJSON(t *testing.T, addr string, args ...string) map[string]any {
	t.Helper()
	res, stderr, err := runCmd(t, context.Background(), append([]string{"lowrate", "-target", addr}, args...)...)
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, stderr)
	}
	return res
}

// TestEngineErrorsByKind: what a server does wrong is counted by kind, on
// the requests it was done to; requests go on over the connections left.
func TestEngineErrorsByKind(t *testing.T) {
	const status500 = "HTTP/1.1 500 Internal Server Error\r\nContent-Length: 5\r\n\r\nerror"
	cases := []struct {
		name   string
		answer func(c, r int) ([]byte, string)
		args   []string
		want   map[string]float64
		errors map[string]int
		drops  map[string]int
	}{
		{"reset", func(c, r int) ([]byte, string) {
			if r == 0 { // the request that opened the connection
				return []byte(cannedOK), ""
			}
			return nil, "reset"
		}, []string{"-conns", "2", "-rps", "100", "-duration", "60ms"},
			map[string]float64{"requests_completed": 0, "requests_failed": 6, "connections_alive_end": 0},
			map[string]int{causeReset: 2, causeConnClosed: 4}, nil},
		{"status 500", func(c, r int) ([]byte, string) {
			if r == 0 {
				return []byte(cannedOK), ""
			}
			return []byte(status500), ""
		}, []string{"-conns", "2", "-rps", "200", "-duration", "50ms"},
			map[string]float64{"requests_completed": 0, "requests_failed": 10, "connections_alive_end": 2},
			map[string]int{causeStatus: 10}, nil},
		{"bad response", func(c, r int) ([]byte, string) {
			if r == 0 {
				return []byte(cannedOK), ""
			}
			return []byte("SSH-2.0-OpenSSH_9.6\r\n"), ""
		}, []string{"-conns", "1", "-rps", "100", "-duration", "30ms"},
			map[string]float64{"requests_completed": 0, "requests_failed": 3},
			map[string]int{causeBadResponse: 1, causeConnClosed: 2}, nil},
		{"timeout", func(c, r int) ([]byte, string) {
			if r == 0 {
				return []byte(cannedOK), ""
			}
			return nil, ""
		}, []string{"-conns", "1", "-rps", "100", "-duration", "30ms", "-timeout", "200ms"},
			map[string]float64{"requests_completed": 0, "requests_failed": 3, "requests_late_pool_busy": 2},
			map[string]int{causeTimeout: 1, causeConnClosed: 2}, nil},
		{"idle close", func(c, r int) ([]byte, string) {
			if c == 0 { // the first connection: closed once it is open
				return []byte(cannedOK), "close"
			}
			return []byte(cannedOK), ""
		}, []string{"-conns", "2", "-rps", "100", "-duration", "100ms", "-loops", "1"}, // one pool: a loop's own
			map[string]float64{"requests_completed": 10, "requests_failed": 0, "connections_alive_end": 1},
			map[string]int{}, map[string]int{causeEOF: 1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newScriptServer(t, c.answer)
			res := lowrateJSON(t, s.addr, c.args...)
			if res["engine"] != connresult.EngineEpoll {
				t.Errorf("engine %v, want epoll", res["engine"])
			}
			for k, want := range c.want {
				if got := num(t, res, k); got != want {
					t.Errorf("%s = %v, want %v", k, got, want)
				}
			}
			if got := counts(t, res, "errors"); !mapsEqual(got, c.errors) {
				t.Errorf("errors %v, want %v", got, c.errors)
			}
			if c.drops != nil {
				if got := counts(t, res, "connection_drops"); !mapsEqual(got, c.drops) {
					t.Errorf("connection_drops %v, want %v", got, c.drops)
				}
			}
			if c.name == "status 500" {
				if sc := counts(t, res, "status_codes"); sc["500"] != 10 || sc["200"] != 2 {
					t.Errorf("status_codes %v, want 500: 10 and the two opening 200s", sc)
				}
				if !isNull(res, "latency_p50_ms") {
					t.Errorf("latency_p50_ms %v: a 500 is not a success, its latency is not one", res["latency_p50_ms"])
				}
			}
		})
	}
}

func mapsEqual(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestEngineLoopsMerge: with 3 loops the result holds every request once,
// and its histograms are those of the loops merged: the count of each is
// what was completed (or sent), and a dump loads back.
func TestEngineLoopsMerge(t *testing.T) {
	s := newScriptServer(t, okResp)
	res := lowrateJSON(t, s.addr, "-conns", "7", "-rps", "1000", "-duration", "300ms", "-loops", "3")
	if num(t, res, "event_loops") != 3 || num(t, res, "requests_completed") != 300 || num(t, res, "requests_late_pool_busy") < 0 {
		t.Fatalf("event_loops %v completed %v pool busy %v", res["event_loops"], res["requests_completed"], res["requests_late_pool_busy"])
	}
	for name, want := range map[string]float64{"latency_histogram": 300, "service_latency_histogram": 300, "sender_lag_histogram": 300} {
		d := dumpOf(t, res, name)
		h, err := connresult.LoadHist(d)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if float64(h.Count()) != want {
			t.Errorf("%s count %d, want %v", name, h.Count(), want)
		}
	}
	if num(t, res, "connections_alive_end") != 7 {
		t.Errorf("connections_alive_end %v, want 7", res["connections_alive_end"])
	}
}

// TestEngineDrain: with -drain 0s the requests still waiting at the end of
// -duration are not sent, and are counted unsent.
func TestEngineDrain(t *testing.T) {
	s := newScriptServer(t, func(c, r int) ([]byte, string) {
		if r > 0 {
			time.Sleep(50 * time.Millisecond)
		}
		return []byte(cannedOK), ""
	})
	res := lowrateJSON(t, s.addr, "-conns", "1", "-rps", "100", "-duration", "200ms", "-drain", "0s")
	sent, done, unsent := num(t, res, "requests_sent"), num(t, res, "requests_completed"), num(t, res, "requests_unsent")
	if sent >= 20 || unsent < 10 || done+unsent != 20 || num(t, res, "drain_s") != 0 {
		t.Errorf("sent %v completed %v unsent %v drain_s %v: want about 5 sent, the rest unsent", sent, done, unsent, res["drain_s"])
	}
}

// TestEngineAllocs: the requests of a schedule allocate nothing (what is
// allocated is set up once per run).
func TestEngineAllocs(t *testing.T) {
	r, err := responder.New(netip.MustParseAddrPort("127.0.0.1:0"), 1024)
	if err != nil {
		t.Fatal(err)
	}
	go r.Serve(false)
	defer r.Stop()
	fds := dialFDs(t, r.Addr().String(), 8)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	const n = 20000
	e, _ := runSchedule(t, fds, 1, 10_000_000, n, 5*time.Second)
	runtime.ReadMemStats(&after)
	if c := totals(e).completed; c != n {
		t.Fatalf("completed %d, want %d", c, n)
	}
	if per := float64(after.Mallocs-before.Mallocs) / n; per > 0.05 {
		t.Errorf("%.3f allocations per request (%d in all), want none per request", per, after.Mallocs-before.Mallocs)
	}
}

// dumpOf decodes res[name] as a histogram dump.
func dumpOf(t *testing.T, res map[string]any, name string) *connresult.HistDump {
	t.Helper()
	m, ok := res[name].(map[string]any)
	if !ok {
		t.Fatalf("%s = %v, want a histogram", name, res[name])
	}
	d := &connresult.HistDump{Unit: m["unit"].(string), SubBits: int(m["sub_bits"].(float64)), MaxBits: int(m["max_bits"].(float64)),
		Count: uint64(m["count"].(float64)), MinUs: uint64(m["min_us"].(float64)), MaxUs: uint64(m["max_us"].(float64))}
	for _, b := range m["buckets"].([]any) {
		p := b.([]any)
		d.Buckets = append(d.Buckets, [2]uint64{uint64(p[0].(float64)), uint64(p[1].(float64))})
	}
	return d
}

// BenchmarkEngine drives b.N requests through one event loop over 64
// connections against the in-process responder (1 KiB bodies), as fast as
// they go (the schedule is far above what they can do, so every
// connection is always busy, as in wrk's closed loop). It reports the
// requests per second of the pair (the engine's ceiling on this machine,
// sharing it with the responder), the loop thread's CPU per request, and
// the requests per CPU-second of the loop alone.
func BenchmarkEngine(b *testing.B) {
	for _, conns := range []int{64} {
		b.Run("conns="+strconv.Itoa(conns), func(b *testing.B) {
			r, err := responder.New(netip.MustParseAddrPort("127.0.0.1:0"), 1024)
			if err != nil {
				b.Fatal(err)
			}
			go r.Serve(false)
			defer r.Stop()
			fds := dialFDs(b, r.Addr().String(), conns)
			b.ReportAllocs()
			b.ResetTimer()
			t0 := time.Now()
			e, _ := runSchedule(b, fds, 1, 10_000_000, int64(b.N), 5*time.Second)
			el := time.Since(t0)
			b.StopTimer()
			tot := totals(e)
			if tot.completed != int64(b.N) {
				b.Fatalf("completed %d of %d: %v", tot.completed, b.N, tot.errors)
			}
			cpu := e.loops[0].cpu
			b.ReportMetric(float64(b.N)/el.Seconds(), "req/s")
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "loop-cpu-ns/req")
			if cpu > 0 {
				b.ReportMetric(float64(b.N)/cpu.Seconds(), "req/loop-cpu-s")
			}
		})
	}
}

// TestEngineYields: a loop waiting a long time in its raw epoll wait (the
// next request due in a second) does not hold up the rest of the process:
// a garbage collection, which must stop every goroutine, ends long before
// the loop's next wake-up. (With one P its concurrent phase gets the P only
// when the runtime preempts the loop, every 10 ms, so it takes a few
// hundred ms on a busy machine; a loop that did not yield would stall it
// for the whole wait.)
func TestEngineYields(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1)) // the loop holds the only P
	s := newScriptServer(t, okResp)
	fds := dialFDs(t, s.addr, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		runSchedule(t, fds, 1, 1, 2, 5*time.Second) // due at 0 and 1 s
	}()
	time.Sleep(50 * time.Millisecond) // the loop is waiting for request 1
	t0 := time.Now()
	runtime.GC()
	if d := time.Since(t0); d > 800*time.Millisecond {
		t.Errorf("a GC took %v while the loop waited: the loop did not yield its P", d)
	}
	<-done
}

// BenchmarkEngineLag80 measures the engine's closed-loop ceiling as
// BenchmarkEngine does (50000 requests, one loop) but against the spinning
// responder (which never waits to be woken) over 1024 connections; then its
// open-loop ceiling as scripts/engine-bench.sh does, the first of
// enginebench.BenchSustainFractions of it that keeps its schedule for half
// a second (99 % of the rate, sender lag p99 within
// enginebench.BenchKeptLagMs); then runs b.N requests at
// enginebench.BenchLagFraction of that over 1024 connections again and
// reports the sender lag p99 (all requests), the engine lag p99 (those that
// found an idle connection), in µs, and the requests that waited for a
// connection. The responder spins on one CPU: run it where the loop has the
// other to itself.
func BenchmarkEngineLag80(b *testing.B) {
	const conns = 1024
	r, err := responder.New(netip.MustParseAddrPort("127.0.0.1:0"), 1024)
	if err != nil {
		b.Fatal(err)
	}
	go r.Serve(true)
	defer r.Stop()
	t0 := time.Now()
	const probe = 50000
	e, _ := runSchedule(b, dialFDs(b, r.Addr().String(), conns), 1, 10_000_000, probe, 5*time.Second)
	ceiling := float64(probe) / time.Since(t0).Seconds()
	if alive := totals(e).alive; alive != conns {
		b.Fatalf("%d connections alive after the probe, want %d", alive, conns)
	}
	sustained := 0.0
	for _, f := range enginebench.BenchSustainFractions {
		rate := int(f * ceiling)
		n := int64(rate / 2)
		e, _ := runSchedule(b, dialFDs(b, r.Addr().String(), conns), 1, rate, n, 5*time.Second)
		// Up to the last response (closing the 1024 sockets after it takes
		// milliseconds, not the schedule's).
		achieved := float64(n) / (time.Duration(e.loops[0].lastDone - e.startNs)).Seconds()
		if tot := totals(e); enginebench.KeptRate(achieved, float64(rate), tot.lag.Quantile(0.99)/1000) {
			sustained = achieved
			break
		}
	}
	if sustained == 0 {
		b.Fatalf("no open-loop rate down to %v of the ceiling %.0f req/s kept its schedule", enginebench.BenchSustainFractions[len(enginebench.BenchSustainFractions)-1], ceiling)
	}
	rate := int(enginebench.BenchLagFraction * sustained)
	fds := dialFDs(b, r.Addr().String(), conns)
	b.ReportAllocs()
	b.ResetTimer()
	e, _ = runSchedule(b, fds, 1, rate, int64(b.N), 5*time.Second)
	b.StopTimer()
	tot := totals(e)
	b.ReportMetric(ceiling, "ceiling-req/s")
	b.ReportMetric(sustained, "open-ceiling-req/s")
	b.ReportMetric(float64(rate), "rate-req/s")
	b.ReportMetric(tot.lag.Quantile(0.99), "lag-p99-us")
	b.ReportMetric(tot.own.Quantile(0.99), "engine-lag-p99-us")
	b.ReportMetric(float64(tot.poolBusy), "pool-busy")
}
