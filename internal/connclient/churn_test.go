package connclient

import (
	"context"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"csbench/internal/connresult"
	"csbench/internal/tlscert"
	"csbench/internal/tlscert/certtest"
)

// okClose answers one request and closes when asked (Connection: close),
// like net/http does; otherwise it waits for the client's close.
func okClose(closeAsked bool) func(c *net.TCPConn) {
	return func(c *net.TCPConn) {
		if closeAsked {
			c.Write([]byte("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 3\r\n\r\nok\n"))
		} else {
			c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nok\n"))
			io.Copy(io.Discard, c)
		}
		c.Close()
	}
}

// TestChurnSchedule5000: the churn scheduler keeps 5,000 new connections a
// second within 1 %. What is measured is the schedule's own accuracy,
// connections handed out against connections due, not the rate a loaded
// 2-core machine completes (TestChurnVariants drives real loopback
// connections; BenchmarkChurnDispatch gives the dispatcher's ceiling): the
// workers take each connection as it comes, and by the time the last one is
// due plus 1 % of the schedule (20 ms), at least 99 % of them must have
// been handed out, every one by the end.
func TestChurnSchedule5000(t *testing.T) {
	cfg, err := parseArgs([]string{"churn", "-target", "127.0.0.1:9", "-rate", "5000", "-duration", "2s", "-close", "linger0"})
	if err != nil {
		t.Fatal(err)
	}
	r := newChurnRun(cfg)
	at := make([]time.Time, r.n)
	jobs := make(chan int64, cfg.workers)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range jobs {
			at[i] = time.Now()
		}
	}()
	r.start = time.Now().Add(10 * time.Millisecond)
	r.dispatch(context.Background(), jobs)
	close(jobs)
	<-done
	if got := r.dispatched.Load(); got != r.n || r.n != 10000 {
		t.Fatalf("dispatched %d of %d due (want 10000)", got, r.n)
	}
	deadline := r.start.Add(offset(r.n-1, 5000) + 20*time.Millisecond)
	var onTime int64
	for _, a := range at {
		if !a.After(deadline) {
			onTime++
		}
	}
	span := at[r.n-1].Sub(r.start).Seconds()
	t.Logf("handed out by the last due time + 20 ms: %d of %d; rate %.1f/s over %.4f s; lag p50 %.3f ms p99 %.3f ms max %.3f ms",
		onTime, r.n, float64(r.n-1)/span, span, r.lag.Quantile(0.5)/1000, r.lag.Quantile(0.99)/1000, float64(r.lag.Max())/1000)
	if onTime < r.n*99/100 {
		t.Errorf("%d of %d connections handed out by the last due time + 1 %% of the schedule, want 99 %%", onTime, r.n)
	}
}

func TestChurnVariants(t *testing.T) {
	for _, v := range []string{CloseClient, CloseServer, CloseLinger0} {
		t.Run(v, func(t *testing.T) {
			t.Parallel()
			addr := rawServer(t, okClose(v == CloseServer))
			res, stderr, err := runCmd(t, context.Background(), "churn", "-target", addr, "-rate", "200", "-duration", "250ms", "-close", v)
			if err != nil {
				t.Fatalf("%v\n%s", err, stderr)
			}
			if num(t, res, "connections_completed") != 50 || num(t, res, "connections_failed") != 0 {
				t.Fatalf("completed %v failed %v errors %v", res["connections_completed"], res["connections_failed"], res["errors"])
			}
			if res["close"] != v || !strings.Contains(stderr, `{"event":"running"`) {
				t.Errorf("close %v, stderr %q", res["close"], stderr)
			}
		})
	}
}

// A server that closes without answering fails every connection as eof.
func TestChurnServerAcceptsAndCloses(t *testing.T) {
	addr := rawServer(t, func(c *net.TCPConn) { c.Close() })
	res, _, err := runCmd(t, context.Background(), "churn", "-target", addr, "-rate", "100", "-duration", "200ms")
	if err != nil {
		t.Fatal(err)
	}
	if e := counts(t, res, "errors"); e["eof"] != 20 {
		t.Errorf("errors %v, want eof=20", e)
	}
}

func TestBurst(t *testing.T) {
	t.Parallel()
	addr := rawServer(t, okClose(true))
	res, stderr, err := runCmd(t, context.Background(), "burst", "-target", addr, "-conns", "300", "-timeout", "3s")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if num(t, res, "connections_completed") != 300 || num(t, res, "connections_never_up") != 0 {
		t.Fatalf("completed %v never up %v errors %v", res["connections_completed"], res["connections_never_up"], res["errors"])
	}
}

func TestConnUsage(t *testing.T) {
	for _, args := range [][]string{
		{"churn", "-target", "127.0.0.1:1"},
		{"churn", "-target", "127.0.0.1:1", "-rate", "10", "-close", "later"},
		{"burst", "-target", "127.0.0.1:1"},
		{"churn", "-target", "localhost:1", "-rate", "10"},
	} {
		if _, err := parseArgs(args); err == nil || ExitCode(err) != 2 {
			t.Errorf("%v: err %v, want a usage error", args, err)
		}
	}
}

func TestDumpRoundTrip(t *testing.T) {
	var h connresult.Histogram
	for _, v := range []int64{1, 300, 300, 70000, 1 << 30} {
		h.Record(v)
	}
	g, err := connresult.LoadDump(h.Dump())
	if err != nil {
		t.Fatal(err)
	}
	g.Merge(&h)
	if g.Count() != 10 || g.Max() != 1<<30 || g.Quantile(0.5) != h.Quantile(0.5) {
		t.Errorf("count %d max %d p50 %v vs %v", g.Count(), g.Max(), g.Quantile(0.5), h.Quantile(0.5))
	}
}

// BenchmarkChurnDispatch gives the scheduler's own ceiling: connections
// handed out per second when nothing else limits it (b.N due at once).
func BenchmarkChurnDispatch(b *testing.B) {
	cfg := &config{mode: "churn", rate: 1_000_000_000, duration: time.Second, workers: 1}
	r := &churnRun{cfg: cfg, n: int64(b.N), errors: map[string]uint64{}}
	jobs := make(chan int64, 1024)
	go func() {
		for range jobs {
		}
	}()
	r.start = time.Now()
	b.ResetTimer()
	r.dispatch(context.Background(), jobs)
	close(jobs)
}

// TestChurnTLS: with -tls-ca every connection does a verified TLS handshake
// against a net/http server, timed apart from the connect; with -tls-resume
// the handshakes after the first tickets resume, counted apart.
func TestChurnTLS(t *testing.T) {
	addr, ca := certtest.HTTPServer(t, tlscert.ECDSAP256)
	for _, tc := range []struct {
		close  string
		resume bool
	}{{CloseLinger0, false}, {CloseServer, true}, {CloseClient, true}} {
		args := []string{"churn", "-target", addr, "-rate", "100", "-duration", "300ms", "-close", tc.close, "-tls-ca", ca, "-workers", "1"}
		if tc.resume {
			args = append(args, "-tls-resume")
		}
		res, stderr, err := runCmd(t, context.Background(), args...)
		if err != nil {
			t.Fatalf("%v: %v\n%s", args, err, stderr)
		}
		if num(t, res, "connections_completed") != 30 || num(t, res, "connections_failed") != 0 {
			t.Fatalf("%v: completed %v errors %v", args, res["connections_completed"], res["errors"])
		}
		tr := res["tls"].(map[string]any)
		full, resumed := num(t, tr, "handshakes_full"), num(t, tr, "handshakes_resumed")
		if want := map[bool][2]float64{false: {30, 0}, true: {1, 29}}[tc.resume]; full != want[0] || resumed != want[1] {
			t.Errorf("%v: %v full, %v resumed, want %v", args, full, resumed, want)
		}
		h := res["histograms"].(map[string]any)
		if h["tls_full"] == nil || h["tls_resumed"] == nil {
			t.Errorf("histograms %v", h)
		}
	}
	if _, _, err := runCmd(t, context.Background(), "churn", "-target", "127.0.0.1:9", "-rate", "1", "-tls-resume"); err == nil {
		t.Error("-tls-resume without -tls-ca was accepted")
	}
}

// A client that falls behind (one worker, a server that answers after
// 400 ms) stops handing out connections lateCutoff (2 s) after its 1 s
// schedule: the run ends then, what it never sent counted, not after the
// 40 s the 100 connections would take one after another.
func TestChurnCutOffWhenFarBehind(t *testing.T) {
	addr := rawServer(t, func(c *net.TCPConn) {
		time.Sleep(400 * time.Millisecond)
		okClose(false)(c)
	})
	t0 := time.Now()
	res, stderr, err := runCmd(t, context.Background(), "churn", "-target", addr, "-rate", "100", "-duration", "1s", "-workers", "1")
	took := time.Since(t0)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	sent, notSent := num(t, res, "connections_dispatched"), num(t, res, "connections_not_sent")
	if took > 6*time.Second || sent+notSent != 100 || notSent < 80 || sent < 5 {
		t.Fatalf("took %v, dispatched %v, not sent %v: want about 3 s, 7 or 8 sent and the rest not", took, sent, notSent)
	}
}
