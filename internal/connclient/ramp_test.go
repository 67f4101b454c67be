package connclient

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"csbench/internal/connresult"
)

// stalledServer listens on 127.0.0.1 with a listen backlog of backlog and
// accepts nothing for stall, then serves 200 "ok" on every connection. On
// Linux a listener whose accept queue is full (backlog + 1 connections)
// drops new SYNs: the client retransmits its SYN after 1 s, and a connect
// waits or times out, as against a server that cannot keep up.
func stalledServer(t *testing.T, backlog int, stall time.Duration) string {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		syscall.Close(fd)
		t.Fatal(err)
	}
	if err := syscall.Listen(fd, backlog); err != nil {
		syscall.Close(fd)
		t.Fatal(err)
	}
	f := os.NewFile(uintptr(fd), "listener")
	ln, err := net.FileListener(f) // a dup of fd: the same socket
	if err != nil {
		f.Close()
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "ok\n")
	})}
	timer := time.AfterFunc(stall, func() {
		// A larger backlog from now on (listen again), so that the burst
		// of retransmitted SYNs finds room: no handshake's last ACK is
		// dropped on a full queue while the server catches up.
		syscall.Listen(fd, 1024) // fd: f keeps it open until the cleanup
		srv.Serve(ln)
	})
	t.Cleanup(func() {
		timer.Stop()
		ln.Close()
		srv.Close()
		f.Close()
	})
	return ln.Addr().String()
}

// rampOf decodes the result's "ramp" object.
func rampOf(t *testing.T, res map[string]any) connresult.RampResult {
	t.Helper()
	b, err := json.Marshal(res["ramp"])
	if err != nil {
		t.Fatal(err)
	}
	var r connresult.RampResult
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		t.Fatalf("ramp %s: %v", b, err)
	}
	return r
}

// TestRampRetriesTimedOut: against a server that accepts nothing for
// 300 ms, the connects beyond its backlog time out (-timeout 400ms, before
// the SYN is retransmitted); they are tried again, the count is reached,
// the pace was cut, and the first attempts' figures say what they met.
func TestRampRetriesTimedOut(t *testing.T) {
	defer func(d time.Duration) { progressInterval = d }(progressInterval)
	progressInterval = 100 * time.Millisecond
	addr := stalledServer(t, 1, 300*time.Millisecond)
	res, stderr, err := runCmd(t, context.Background(), "idle", "-target", addr,
		"-conns", "100", "-rate", "1000", "-timeout", "400ms", "-hold", "10ms")
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, stderr)
	}
	r := rampOf(t, res)
	fa := r.FirstAttempt
	if est := num(t, res, "connections_established"); est != 100 || num(t, res, "connections_failed") != 0 {
		t.Errorf("established %v failed %v, want 100 and 0; errors %v", est, res["connections_failed"], res["errors"])
	}
	if num(t, res, "connections_attempted") != 100 || num(t, res, "connections_alive_end") != 100 {
		t.Errorf("attempted %v alive_end %v, want 100", res["connections_attempted"], res["connections_alive_end"])
	}
	// The accept queue holds 2 connections: at least 90 of the others time out.
	if fa.ConnectTimeouts < 90 || fa.Errors[causeTimeout] != uint64(fa.ConnectTimeouts) || fa.Failed != fa.ConnectTimeouts {
		t.Errorf("first attempts: %+v, want >= 90 connect timeouts, all of the failures", fa)
	}
	if fa.Established+fa.Failed != 100 || fa.Established+r.EstablishedAfterRetry != 100 {
		t.Errorf("first attempts established %d failed %d, after retry %d: do not add up to 100",
			fa.Established, fa.Failed, r.EstablishedAfterRetry)
	}
	if r.ConnectionsRetried != fa.ConnectTimeouts || r.Retries < r.ConnectionsRetried || r.Retries > 3*r.ConnectionsRetried {
		t.Errorf("retries %d over %d connections, want each first timeout retried (at most 3 times)", r.Retries, r.ConnectionsRetried)
	}
	if r.Pace != paceAIMD || r.PaceCuts < 1 || r.RatePacedMin > 500 || r.RatePacedMax != 1000 || r.ConnectRetriesMax != 3 || r.BoundReached {
		t.Errorf("pacing %+v, want aimd, cut at least once to 500/s or less, from 1000, bound not reached", r)
	}
	if fa.ConnectLatencyHist == nil || fa.ConnectLatencyHist.Count != uint64(fa.Established) {
		t.Errorf("first-attempt connect histogram %+v, want %d connects", fa.ConnectLatencyHist, fa.Established)
	}
	if !strings.Contains(stderr, "retries=") {
		t.Errorf("the progress line does not show the retries:\n%s", stderr)
	}
}

// TestRampSlowConnects: against a server that accepts nothing for 500 ms,
// the SYNs beyond its backlog are dropped and retransmitted after 1 s, when
// the server accepts: the connects succeed after 1 s or more, slow, and the
// controller halves the rate while they are still in flight.
func TestRampSlowConnects(t *testing.T) {
	t.Parallel()
	addr := stalledServer(t, 1, 500*time.Millisecond)
	res, stderr, err := runCmd(t, context.Background(), "idle", "-target", addr,
		"-conns", "100", "-rate", "1000", "-timeout", "5s", "-hold", "10ms")
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, stderr)
	}
	r := rampOf(t, res)
	fa := r.FirstAttempt
	if num(t, res, "connections_established") != 100 || r.Retries != 0 {
		t.Errorf("established %v retries %d, want 100 and none; errors %v", res["connections_established"], r.Retries, res["errors"])
	}
	if fa.ConnectsSlow < 90 || r.ConnectsSlow != fa.ConnectsSlow || fa.Established != 100 {
		t.Errorf("first attempts %+v, connects_slow %d: want >= 90 slow of 100 established", fa, r.ConnectsSlow)
	}
	if p := fa.ConnectLatencyP50Ms; p == nil || *p < 1000 {
		t.Errorf("first-attempt connect p50 %v ms, want >= 1000 (a SYN retransmitted)", p)
	}
	if p50 := num(t, res, "connect_latency_p50_ms"); p50 != *fa.ConnectLatencyP50Ms {
		t.Errorf("connect p50 %v, first-attempt p50 %v: without retries they are one", p50, *fa.ConnectLatencyP50Ms)
	}
	if r.PaceCuts < 1 || r.RatePacedMin > 500 {
		t.Errorf("pacing %+v, want a cut to 500/s or less", r)
	}
}

// TestRampSlowAnswers: a server that takes every connection in at once
// and answers each first request 500 ms late, as nginx's workers do at
// C1M while they share both CPUs with the client processes: nothing is
// dropped, so the pace is never cut, neither while the attempts wait
// (past 3 × -connect-slow) nor when they end slow with nothing
// retransmitted; and -connect-timeout, not -timeout, bounds the wait.
func TestRampSlowAnswers(t *testing.T) {
	t.Parallel()
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(500 * time.Millisecond)
		io.WriteString(w, "ok\n")
	})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	res, stderr, err := runCmd(t, context.Background(), "idle", "-target", ln.Addr().String(),
		"-conns", "20", "-rate", "1000", "-timeout", "200ms", "-connect-timeout", "3s", "-connect-slow", "100ms", "-hold", "10ms")
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, stderr)
	}
	r := rampOf(t, res)
	if num(t, res, "connections_established") != 20 || r.Retries != 0 || r.FirstAttempt.ResponseTimeouts != 0 {
		t.Errorf("established %v, retries %d, response timeouts %d: want 20, 0, 0; errors %v",
			res["connections_established"], r.Retries, r.FirstAttempt.ResponseTimeouts, res["errors"])
	}
	if r.PaceCuts != 0 || r.RatePacedMin != 1000 {
		t.Errorf("pacing %+v, want no cut: nothing was dropped", r)
	}
	if num(t, res, "connect_timeout_s") != 3 || num(t, res, "timeout_s") != 0.2 {
		t.Errorf("connect_timeout_s %v timeout_s %v, want 3 and 0.2", res["connect_timeout_s"], res["timeout_s"])
	}
}

// TestRampRefused: a server that never accepts gets every connection
// tried -connect-retries more times, and no more (those whose connect
// timed out, and the one that connected into the accept queue and got no
// answer); then they fail, with the cause of their last attempt. With -connect-retries 0 and -pace fixed the
// ramp is the one before retries and pacing: first attempts are the outcome.
func TestRampRefused(t *testing.T) {
	t.Parallel()
	addr := stalledServer(t, 0, time.Hour)
	res, stderr, err := runCmd(t, context.Background(), "idle", "-target", addr,
		"-conns", "20", "-rate", "1000", "-timeout", "200ms", "-connect-retries", "2", "-hold", "10ms")
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, stderr)
	}
	r := rampOf(t, res)
	if num(t, res, "connections_established") != 0 || num(t, res, "connections_failed") != 20 {
		t.Errorf("established %v failed %v, want 0 and 20", res["connections_established"], res["connections_failed"])
	}
	if e := counts(t, res, "errors"); e[causeTimeout] != 20 {
		t.Errorf("errors %v, want etimedout: 20", e)
	}
	// The connection in the accept queue connects, and its request times
	// out; the others' connects time out: every one is retried twice.
	fa := r.FirstAttempt
	if r.Retries != 40 || r.ConnectionsRetried != 20 || fa.ConnectTimeouts+fa.ResponseTimeouts != 20 || fa.ResponseTimeouts < 1 || fa.Failed != 20 {
		t.Errorf("retries %d of %d connections, first attempts %+v: want 2 each of 20, connect and response timeouts", r.Retries, r.ConnectionsRetried, fa)
	}

	res, stderr, err = runCmd(t, context.Background(), "idle", "-target", addr,
		"-conns", "20", "-rate", "1000", "-timeout", "200ms", "-connect-retries", "0", "-pace", "fixed", "-hold", "10ms")
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, stderr)
	}
	r = rampOf(t, res)
	if r.Retries != 0 || r.Pace != paceFixed || r.PaceCuts != 0 || r.RatePacedMin != 1000 || r.RatePacedMax != 1000 {
		t.Errorf("fixed, no retries: %+v", r)
	}
	if num(t, res, "connections_failed") != float64(r.FirstAttempt.Failed) || !sameCounts(counts(t, res, "errors"), r.FirstAttempt.Errors) {
		t.Errorf("failed %v errors %v, first attempts %+v: want the same", res["connections_failed"], res["errors"], r.FirstAttempt)
	}
}

func sameCounts(a map[string]int, b map[string]uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != uint64(v) {
			return false
		}
	}
	return true
}

// TestRampBound: no connect starts after -ramp-max; the connections left
// are not attempted, and the result says the bound was reached.
func TestRampBound(t *testing.T) {
	t.Parallel()
	s := okServer(t, nil)
	res, stderr, err := runCmd(t, context.Background(), "idle", "-target", hostPort(s),
		"-conns", "50", "-rate", "100", "-ramp-max", "200ms", "-hold", "10ms")
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, stderr)
	}
	r := rampOf(t, res)
	att := num(t, res, "connections_attempted")
	if !r.BoundReached || r.RampMaxS != 0.2 || att < 1 || att > 25 {
		t.Errorf("bound_reached %v ramp_max_s %v attempted %v, want true, 0.2, about 20", r.BoundReached, r.RampMaxS, att)
	}
	if num(t, res, "connections_established") != att || num(t, res, "connections_alive_end") != att {
		t.Errorf("established %v alive_end %v, want the %v attempted", res["connections_established"], res["connections_alive_end"], att)
	}
	// The default bound: three times conns/rate, and 30 s.
	res, _, err = runCmd(t, context.Background(), "idle", "-target", hostPort(s), "-conns", "5", "-rate", "100", "-hold", "10ms")
	if err != nil || rampOf(t, res).RampMaxS != 30.15 || rampOf(t, res).BoundReached {
		t.Errorf("default ramp bound: %v, err %v; want 30.15 s, not reached", res["ramp"], err)
	}
}

// TestRampUsageErrors: the ramp's flags are checked like every other,
// before anything is sent.
func TestRampUsageErrors(t *testing.T) {
	t.Parallel()
	for _, mode := range [][]string{{"idle", "-conns", "10"}, {"lowrate", "-conns", "10", "-rps", "5"}} {
		checkUsageErrors(t, mode, []usageCase{
			{[]string{"-pace", "slow"}, `-pace "slow": want aimd or fixed`},
			{[]string{"-connect-retries", "-1"}, "not a non-negative integer"},
			{[]string{"-connect-retries", "two"}, "not a non-negative integer"},
			{[]string{"-connect-retries", "101"}, "-connect-retries 101 is above 100"},
			{[]string{"-connect-slow", "0s"}, "-connect-slow 0s must be positive"},
			{[]string{"-connect-timeout", "0s"}, "-connect-timeout 0s must be positive"},
			{[]string{"-connect-timeout", "10"}, "invalid value"},
			{[]string{"-ramp-max", "0s"}, "-ramp-max 0s must be positive"},
			{[]string{"-ramp-max", "10"}, "invalid value"},
		})
	}
}

type usageCase struct {
	args []string
	msg  string
}

// checkUsageErrors runs base (a mode and its flags) with each case's
// arguments against a listener that must see no connection: exit 2,
// "error: ..." with msg and the usage on stderr, nothing on stdout.
func checkUsageErrors(t *testing.T, base []string, cases []usageCase) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	for _, c := range cases {
		var stdout, stderr strings.Builder
		args := append(append(append([]string(nil), base...), "-target", ln.Addr().String()), c.args...)
		err := Run(context.Background(), args, &stdout, &stderr)
		es := stderr.String()
		if ExitCode(err) != 2 || !strings.HasPrefix(es, "error: ") || !strings.Contains(es, c.msg) ||
			!strings.Contains(es, "\nusage: connclient") || stdout.Len() != 0 {
			t.Errorf("%q: exit %d, stderr\n%s\nwant exit 2, error: ...%s... and the usage", args, ExitCode(err), es, c.msg)
		}
	}
	assertNoConnection(t, ln)
}
