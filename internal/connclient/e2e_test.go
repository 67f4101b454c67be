package connclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"csbench/internal/clientsys"
	"csbench/internal/connresult"
)

// okServer is a net/http server on 127.0.0.1 answering 200 "ok".
func okServer(t *testing.T, h http.HandlerFunc) *httptest.Server {
	t.Helper()
	if h == nil {
		h = func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok\n") }
	}
	s := httptest.NewServer(h)
	t.Cleanup(s.Close)
	return s
}

func hostPort(s *httptest.Server) string { return strings.TrimPrefix(s.URL, "http://") }

func isNull(res map[string]any, key string) bool {
	v, ok := res[key]
	return ok && v == nil
}

// TestIdleEndToEnd holds 200 connections to a net/http server running in a
// subprocess, so that the goroutine count in the result is the client's
// alone: holding must cost no goroutine per connection.
func TestIdleEndToEnd(t *testing.T) {
	addr := startHelperServer(t)
	const conns = 200
	res, stderr, err := runCmd(t, context.Background(), "idle", "-target", addr,
		"-conns", "200", "-rate", "2000", "-hold", "300ms")
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, stderr)
	}
	if res["status"] != "complete" || res["mode"] != "idle" {
		t.Errorf("status %v mode %v", res["status"], res["mode"])
	}
	for key, want := range map[string]float64{
		"connections_target": conns, "connections_attempted": conns, "connections_established": conns,
		"connections_failed": 0, "connections_alive_end": conns, "requests_completed": conns,
	} {
		if got := num(t, res, key); got != want {
			t.Errorf("%s = %v, want %v", key, got, want)
		}
	}
	if e := counts(t, res, "errors"); len(e) != 0 {
		t.Errorf("errors %v, want none", e)
	}
	if sc := counts(t, res, "status_codes"); sc["200"] != conns {
		t.Errorf("status_codes %v, want 200: %d", sc, conns)
	}
	// 200 connects at 2000/s take 0.1 s; allow a slow machine.
	if s := num(t, res, "setup_s"); s < 0.09 || s > 5 {
		t.Errorf("setup_s %v, want about 0.1", s)
	}
	p50, p90 := num(t, res, "connect_latency_p50_ms"), num(t, res, "connect_latency_p90_ms")
	p99, pmax := num(t, res, "connect_latency_p99_ms"), num(t, res, "connect_latency_max_ms")
	if !(0 < p50 && p50 <= p90 && p90 <= p99 && p99 <= pmax) {
		t.Errorf("connect latency p50 %v p90 %v p99 %v max %v not ordered", p50, p90, p99, pmax)
	}
	if g := num(t, res, "client_goroutines"); g >= 50 {
		t.Errorf("client_goroutines %v while holding %d connections: a goroutine per connection?", g, conns)
	}
	if num(t, res, "client_rss_mb") <= 0 {
		t.Errorf("client_rss_mb %v", res["client_rss_mb"])
	}
	if !isNull(res, "first_drop_s") || len(counts(t, res, "drops")) != 0 {
		t.Errorf("first_drop_s %v drops %v, want null and none", res["first_drop_s"], res["drops"])
	}
	for _, k := range []string{"started_at", "finished_at"} {
		if _, err := time.Parse(time.RFC3339Nano, res[k].(string)); err != nil {
			t.Errorf("%s: %v", k, err)
		}
	}
}

// TestIdleDetectsDrops: a server that closes idle connections after 200 ms
// leaves none alive at the end of the hold, and the drops say why.
func TestIdleDetectsDrops(t *testing.T) {
	defer func(d time.Duration) { progressInterval = d }(progressInterval)
	progressInterval = 100 * time.Millisecond
	s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "ok\n")
	}))
	s.Config.IdleTimeout = 200 * time.Millisecond
	s.Start()
	defer s.Close()
	res, stderr, err := runCmd(t, context.Background(), "idle", "-target", hostPort(s),
		"-conns", "20", "-rate", "1000", "-hold", "900ms")
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, stderr)
	}
	if num(t, res, "connections_established") != 20 || num(t, res, "connections_alive_end") != 0 {
		t.Errorf("established %v alive_end %v, want 20 and 0", res["connections_established"], res["connections_alive_end"])
	}
	if d := counts(t, res, "drops"); d[causeEOF] != 20 {
		t.Errorf("drops %v, want eof: 20", d)
	}
	if f := num(t, res, "first_drop_s"); f < 0.1 || f > 0.9 {
		t.Errorf("first_drop_s %v, want between 0.1 and 0.9", f)
	}
	if !strings.Contains(stderr, "hold elapsed=") || !strings.Contains(stderr, "alive=0/20") {
		t.Errorf("progress on stderr:\n%s", stderr)
	}
	if ev := events(t, stderr, connresult.EventHolding); len(ev) != 1 || ev[0].Established != 20 || ev[0].Target != 20 {
		t.Errorf("holding events %+v, want one with 20 of 20 established", ev)
	}
}

// TestRampEvents: while connections open, a ramp event each progress
// interval says how many are open and at what rate.
func TestRampEvents(t *testing.T) {
	defer func(d time.Duration) { progressInterval = d }(progressInterval)
	progressInterval = 100 * time.Millisecond
	s := okServer(t, nil)
	_, stderr, err := runCmd(t, context.Background(), "idle", "-target", hostPort(s),
		"-conns", "20", "-rate", "50", "-hold", "10ms")
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, stderr)
	}
	ev := events(t, stderr, connresult.EventRamp)
	if len(ev) < 2 || ev[0].RatePerS == nil || ev[0].Target != 20 || ev[len(ev)-1].Established < ev[0].Established {
		t.Errorf("ramp events %+v, want at least two, growing, with a rate", ev)
	}
	if !strings.Contains(stderr, "established=") {
		t.Errorf("the progress line for people is gone:\n%s", stderr)
	}
}

// events returns the event lines NAME of stderr, each parsed strictly.
func events(t *testing.T, stderr, name string) []connresult.Event {
	t.Helper()
	var out []connresult.Event
	for _, line := range strings.Split(stderr, "\n") {
		if !strings.HasPrefix(line, connresult.EventPrefix+name+`"`) {
			continue
		}
		var ev connresult.Event
		dec := json.NewDecoder(strings.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&ev); err != nil {
			t.Fatalf("event line %q: %v", line, err)
		}
		out = append(out, ev)
	}
	return out
}

// TestLinger0 checks what the server sees when connclient closes: a reset
// with -linger0 (no TIME_WAIT on the client), an orderly FIN without it.
func TestLinger0(t *testing.T) {
	for _, linger0 := range []bool{true, false} {
		seen := make(chan error, 4)
		addr := rawServer(t, func(c *net.TCPConn) {
			defer c.Close()
			c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"))
			c.SetReadDeadline(time.Now().Add(5 * time.Second))
			_, err := c.Read(make([]byte, 1))
			seen <- err
		})
		args := []string{"idle", "-target", addr, "-conns", "2", "-hold", "10ms"}
		if linger0 {
			args = append(args, "-linger0")
		}
		res, stderr, err := runCmd(t, context.Background(), args...)
		if err != nil {
			t.Fatalf("Run: %v\n%s", err, stderr)
		}
		if res["linger0"] != linger0 {
			t.Errorf("linger0 = %v in the result", res["linger0"])
		}
		for i := 0; i < 2; i++ {
			err := <-seen
			if linger0 && !errors.Is(err, syscall.ECONNRESET) {
				t.Errorf("-linger0: server read %v, want ECONNRESET", err)
			}
			if !linger0 && err != io.EOF {
				t.Errorf("no -linger0: server read %v, want EOF", err)
			}
		}
	}
}

// TestSourceBind: -source binds the local IP with IP_BIND_ADDRESS_NO_PORT.
func TestSourceBind(t *testing.T) {
	s := okServer(t, nil)
	d := clientsys.NewDialer(netip.MustParseAddr("127.0.0.1"), time.Second)
	c, err := d.Dial("tcp", hostPort(s))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if ip := c.LocalAddr().(*net.TCPAddr).IP.String(); ip != "127.0.0.1" {
		t.Errorf("local IP %s, want 127.0.0.1", ip)
	}
	rc, _ := c.(*net.TCPConn).SyscallConn()
	var v int
	var gerr error
	rc.Control(func(fd uintptr) {
		v, gerr = syscall.GetsockoptInt(int(fd), syscall.IPPROTO_IP, clientsys.IPBindAddressNoPort)
	})
	if gerr != nil || v != 1 {
		t.Errorf("IP_BIND_ADDRESS_NO_PORT = %d (%v), want 1", v, gerr)
	}

	res, stderr, err := runCmd(t, context.Background(), "idle", "-target", hostPort(s),
		"-conns", "50", "-rate", "5000", "-hold", "10ms", "-source", "127.0.0.1", "-linger0")
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, stderr)
	}
	if num(t, res, "connections_established") != 50 || res["source"] != "127.0.0.1" {
		t.Errorf("established %v source %v", res["connections_established"], res["source"])
	}
}

// TestLowrateAchievedRate: 500 requests/s for 2 s over 50 connections; the
// open-model schedule must deliver the rate within 2 %.
func TestLowrateAchievedRate(t *testing.T) {
	s := okServer(t, nil)
	res, stderr, err := runCmd(t, context.Background(), "lowrate", "-target", hostPort(s),
		"-conns", "50", "-rps", "500", "-duration", "2s")
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, stderr)
	}
	for key, want := range map[string]float64{
		"connections_established": 50, "rps_target": 500, "requests_scheduled": 1000,
		"requests_sent": 1000, "requests_completed": 1000, "requests_failed": 0,
		"requests_unsent": 0, "connections_alive_end": 50,
	} {
		if got := num(t, res, key); got != want {
			t.Errorf("%s = %v, want %v", key, got, want)
		}
	}
	if got := num(t, res, "rps_achieved"); math.Abs(got-500)/500 > 0.02 {
		t.Errorf("rps_achieved %v, want 500 within 2%%", got)
	}
	// 1000 scheduled responses and the one that opened each connection.
	if sc := counts(t, res, "status_codes"); sc["200"] != 1050 {
		t.Errorf("status_codes %v, want 200: 1050", sc)
	}
	// Each request's latency from its due time is at least its latency from
	// its send, so every percentile is too.
	for _, p := range []string{"p50", "p90", "p99", "p999", "max"} {
		co, svc := num(t, res, "latency_"+p+"_ms"), num(t, res, "service_latency_"+p+"_ms")
		if co < svc || svc <= 0 {
			t.Errorf("latency_%s_ms %v < service_latency_%s_ms %v", p, co, p, svc)
		}
	}
	for _, k := range []string{"sender_lag_p50_ms", "sender_lag_p99_ms", "sender_lag_max_ms"} {
		num(t, res, k)
	}
	if !strings.Contains(stderr, "run elapsed=") {
		t.Errorf("no run progress on stderr:\n%s", stderr)
	}
	if ev := events(t, stderr, connresult.EventRunning); len(ev) != 1 || ev[0].Established != 50 {
		t.Errorf("running events %+v, want one with 50 established", ev)
	}
}

// TestLowrateCoordinatedOmission: on one connection at 50 requests/s, the
// server stalls one request for 400 ms. The ~20 requests due during the
// stall wait for the connection: their latency from the due time is large
// while their service time stays small. A closed-loop client would report
// a single slow request.
func TestLowrateCoordinatedOmission(t *testing.T) {
	var n atomic.Int64
	s := okServer(t, func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 5 {
			time.Sleep(400 * time.Millisecond)
		}
		io.WriteString(w, "ok\n")
	})
	res, stderr, err := runCmd(t, context.Background(), "lowrate", "-target", hostPort(s),
		"-conns", "1", "-rps", "50", "-duration", "1s")
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, stderr)
	}
	if got := num(t, res, "requests_completed"); got != 50 {
		t.Fatalf("requests_completed %v, want 50", got)
	}
	co90, svc90 := num(t, res, "latency_p90_ms"), num(t, res, "service_latency_p90_ms")
	if co90 < 150 {
		t.Errorf("latency_p90_ms %v, want > 150 (requests queued behind the stall)", co90)
	}
	if svc90 > 100 {
		t.Errorf("service_latency_p90_ms %v, want < 100 (only one request was slow to serve)", svc90)
	}
	if m := num(t, res, "service_latency_max_ms"); m < 390 {
		t.Errorf("service_latency_max_ms %v, want >= 390 (the stalled request)", m)
	}
	if m := num(t, res, "latency_max_ms"); m < 390 {
		t.Errorf("latency_max_ms %v, want >= 390", m)
	}
	if lag := num(t, res, "sender_lag_max_ms"); lag < 300 {
		t.Errorf("sender_lag_max_ms %v, want >= 300 (the send waited for the stalled response)", lag)
	}
	if p50 := num(t, res, "latency_p50_ms"); p50 > 100 {
		t.Errorf("latency_p50_ms %v, want small: most requests were not delayed", p50)
	}
}

// TestLowrateHeaderTimeout: the server closes a connection that sends no
// request within 150 ms of accept (net/http's ReadHeaderTimeout). At 10
// requests/s over 4 connections the last one's first scheduled request is
// due 300 ms after the schedule starts; the request that opened it keeps it
// from being closed unused, so no request fails.
func TestLowrateHeaderTimeout(t *testing.T) {
	s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "ok\n")
	}))
	s.Config.ReadHeaderTimeout = 150 * time.Millisecond
	s.Start()
	t.Cleanup(s.Close)
	res, stderr, err := runCmd(t, context.Background(), "lowrate", "-target", hostPort(s),
		"-conns", "4", "-rps", "10", "-duration", "800ms")
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, stderr)
	}
	if c, f := num(t, res, "requests_completed"), num(t, res, "requests_failed"); c != 8 || f != 0 {
		t.Errorf("completed %v failed %v, want 8 and 0; errors %v", c, f, res["errors"])
	}
}

// TestLowrateRoundRobin: request i goes on connection i mod conns, so each
// of 4 connections carries exactly a quarter of the 40 requests, after the
// one request that opened it. (Arrival
// order at the server is not checked: on a loaded machine two requests due
// 20 ms apart on different connections may arrive swapped.) At 50 req/s
// one event loop runs the schedule: its idle connections are a FIFO, which
// is round robin while each response is back within the 20 ms.
func TestLowrateRoundRobin(t *testing.T) {
	var mu sync.Mutex
	perPeer := map[string]int{}
	s := okServer(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		perPeer[r.RemoteAddr]++
		mu.Unlock()
		io.WriteString(w, "ok\n")
	})
	_, stderr, err := runCmd(t, context.Background(), "lowrate", "-target", hostPort(s),
		"-conns", "4", "-rps", "50", "-duration", "800ms")
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, stderr)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(perPeer) != 4 {
		t.Fatalf("requests came on %d connections, want 4: %v", len(perPeer), perPeer)
	}
	for p, n := range perPeer {
		if n != 1+10 {
			t.Errorf("connection %s carried %d requests, want 1+10: %v", p, n, perPeer)
		}
	}
}

// TestLowrateConnectionClosed: when the server closes a connection, the
// requests later assigned to it fail as conn_closed and the connection is
// not counted alive.
func TestLowrateConnectionClosed(t *testing.T) {
	var n atomic.Int64
	s := okServer(t, func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 1+3 { // the opening request, then the third scheduled
			w.Header().Set("Connection", "close")
		}
		io.WriteString(w, "ok\n")
	})
	res, stderr, err := runCmd(t, context.Background(), "lowrate", "-target", hostPort(s),
		"-conns", "1", "-rps", "100", "-duration", "200ms")
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, stderr)
	}
	if c, f := num(t, res, "requests_completed"), num(t, res, "requests_failed"); c != 3 || f != 17 {
		t.Errorf("completed %v failed %v, want 3 and 17", c, f)
	}
	if e := counts(t, res, "errors"); e[causeConnClosed] != 17 {
		t.Errorf("errors %v, want conn_closed: 17", e)
	}
	if a := num(t, res, "connections_alive_end"); a != 0 {
		t.Errorf("connections_alive_end %v, want 0", a)
	}
}

// TestInterrupt: cancellation (SIGINT/SIGTERM in the command) stops a run
// promptly, closes the connections, prints the result with status
// "partial" and returns ErrPartial (exit 1).
func TestInterrupt(t *testing.T) {
	s := okServer(t, nil)
	cases := map[string][]string{
		"idle hold":       {"idle", "-target", hostPort(s), "-conns", "20", "-rate", "1000", "-hold", "1m"},
		"idle connect":    {"idle", "-target", hostPort(s), "-conns", "1000", "-rate", "10", "-hold", "1m"},
		"lowrate running": {"lowrate", "-target", hostPort(s), "-conns", "5", "-rps", "100", "-duration", "1m"},
	}
	for name, args := range cases {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(300*time.Millisecond, cancel)
			t0 := time.Now()
			res, stderr, err := runCmd(t, ctx, args...)
			if d := time.Since(t0); d > 5*time.Second {
				t.Errorf("stopped after %v", d)
			}
			if !errors.Is(err, ErrPartial) || ExitCode(err) != 1 {
				t.Fatalf("err %v, want ErrPartial (exit 1)\n%s", err, stderr)
			}
			if res == nil || res["status"] != "partial" {
				t.Fatalf("result %v, want status partial", res)
			}
			if !strings.Contains(stderr, "interrupted") {
				t.Errorf("stderr %q does not say interrupted", stderr)
			}
			switch name {
			case "idle connect":
				if !isNull(res, "setup_s") || !isNull(res, "connections_alive_end") {
					t.Errorf("setup_s %v alive_end %v, want null after an interrupted connect phase",
						res["setup_s"], res["connections_alive_end"])
				}
				if e := num(t, res, "connections_established"); e < 1 || e > 100 {
					t.Errorf("connections_established %v, want a few", e)
				}
			case "lowrate running":
				if num(t, res, "requests_unsent") < 1000 || num(t, res, "requests_completed") < 1 {
					t.Errorf("unsent %v completed %v", res["requests_unsent"], res["requests_completed"])
				}
			}
		})
	}
}

// TestLowrateTenths: on both engines (cleartext: epoll; TLS: goroutines),
// the schedule's tenths hold every 2xx answer once by the slice its request
// was due in (500 req/s over 2 s: 100 a slice) and once by the slice it
// arrived in or after the schedule, so they add up to requests_completed
// and merge across processes by adding.
func TestLowrateTenths(t *testing.T) {
	var h2reqs atomic.Int64
	addr, ca := h2TLSServer(t, false, &h2reqs)
	for name, args := range map[string][]string{
		"epoll":      {"-target", hostPort(okServer(t, nil))},
		"goroutines": {"-target", addr, "-tls-ca", ca},
	} {
		t.Run(name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := Run(context.Background(), append([]string{"lowrate", "-conns", "20", "-rps", "500", "-duration", "2s"}, args...), &stdout, &stderr)
			if err != nil {
				t.Fatalf("Run: %v\n%s", err, stderr.String())
			}
			var res connresult.LowrateResult
			if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
				t.Fatal(err)
			}
			if res.Engine != name || res.ScheduleTenths == nil {
				t.Fatalf("engine %q, schedule_tenths %v: want %s and tenths", res.Engine, res.ScheduleTenths, name)
			}
			tt := res.ScheduleTenths
			var done int64
			for k := range tt.DueOK {
				if tt.DueOK[k] != 100 {
					t.Errorf("due_ok[%d] = %d, want 100 (500 req/s over 0.2 s)", k, tt.DueOK[k])
				}
				if tt.DueLatencySumUs[k] <= 0 {
					t.Errorf("due_latency_sum_us[%d] = %d, want > 0", k, tt.DueLatencySumUs[k])
				}
				done += tt.DoneOK[k]
			}
			if got := tt.Completed(); got != res.RequestsCompleted || got != 1000 {
				t.Errorf("tenths hold %d answers by due slice, requests_completed %d: want both 1000", got, res.RequestsCompleted)
			}
			if done+tt.DoneOKAfter != res.RequestsCompleted {
				t.Errorf("done_ok %d + done_ok_after %d != requests_completed %d", done, tt.DoneOKAfter, res.RequestsCompleted)
			}
			// A server that keeps up answers each slice's requests within it,
			// but for the last few of each slice: most arrive where they were due.
			if tt.DoneOK[5] < 80 || tt.DoneOK[5] > 120 {
				t.Errorf("done_ok[5] = %d, want about 100", tt.DoneOK[5])
			}
		})
	}
}
