package parse

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"csbench/internal/server"
)

// TestH2loadLive runs the installed h2load against the reference server
// in ground-truth mode (4 slots of 5 ms, h2c) and reads what it printed:
// the parsers must take this h2load's output as they take the fixtures',
// the log and the text must agree, and the figures must be the server's.
func TestH2loadLive(t *testing.T) {
	h2load, err := exec.LookPath("h2load")
	if err != nil {
		t.Skip("h2load is not installed (Debian nghttp2-client; scripts/setup.sh installs it)")
	}
	ctx, stop := context.WithCancelCause(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := server.Run(ctx, []string{"-addr", "127.0.0.1", "-port", "0", "-sizes", "1k", "-http", "2",
			"-service-time", "5ms", "-slots", "4"}, pw, io.Discard)
		pw.Close()
		done <- err
	}()
	defer func() {
		stop(errors.New("test done"))
		<-done
	}()
	lines := make(chan []byte, 2)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			lines <- append([]byte(nil), sc.Bytes()...)
		}
		close(lines)
	}()
	var listening struct{ Addr string }
	if l := <-lines; json.Unmarshal(l, &listening) != nil || listening.Addr == "" {
		t.Fatalf("no listening line: %q", l)
	}

	logFile := filepath.Join(t.TempDir(), "h2load.log")
	cctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(cctx, h2load, "-n", "200", "-c", "2", "-m", "10", "-t", "1",
		"--log-file="+logFile, "http://"+listening.Addr+"/payload/1k").CombinedOutput()
	if err != nil {
		t.Fatalf("h2load: %v\n%s", err, out)
	}
	txt, err := ParseH2loadText(bytes.NewReader(out))
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	f, err := os.Open(logFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	log, err := ParseH2loadLog(f)
	if err != nil {
		t.Fatal(err)
	}
	if err := CrossCheckH2load(txt, log.Tally()); err != nil {
		t.Errorf("cross-check: %v\n%s", err, out)
	}
	if txt.Protocol != "h2c" || txt.Succeeded != 200 || len(log.Requests) != 200 {
		t.Errorf("protocol %q, %d succeeded, %d logged; want h2c, 200, 200", txt.Protocol, txt.Succeeded, len(log.Requests))
	}

	// Against the server's own account: 20 in flight on 4 slots.
	stop(errors.New("test done"))
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	done <- nil
	var shutdown struct {
		Service struct {
			Requests    uint64  `json:"requests"`
			CapacityRPS float64 `json:"capacity_rps"`
			HoldMeanMs  float64 `json:"hold_mean_ms"`
		}
	}
	if l := <-lines; json.Unmarshal(l, &shutdown) != nil {
		t.Fatalf("no shutdown line: %q", l)
	}
	s := shutdown.Service
	mean, _ := log.Latency().Mean()
	rate := 200 / (txt.FinishedInUs / 1e6)
	t.Logf("h2load %.0f req/s, mean %.2f ms; server capacity %.0f/s, hold %.3f ms", rate, mean/1e3, s.CapacityRPS, s.HoldMeanMs)
	if s.Requests != 200 {
		t.Errorf("server served %d, want 200", s.Requests)
	}
	// 20 waiting for 4 slots: each request takes about 5 holds. Loose: the
	// first and last rounds are not full, and this host is shared.
	if want := 5 * s.HoldMeanMs * 1e3; math.Abs(mean-want)/want > 0.25 {
		t.Errorf("mean latency %.0f us, want about 5 holds = %.0f us", mean, want)
	}
	if r := rate / s.CapacityRPS; r < 0.7 || r > 1.02 {
		t.Errorf("h2load's rate %.0f/s is %.2f of the server's capacity %.0f/s", rate, r, s.CapacityRPS)
	}
}
