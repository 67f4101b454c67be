package connclient

import (
	"bytes"
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"csbench/internal/connresult"
)

// lockedBuffer is a bytes.Buffer safe to read while a run writes it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// writeWhole writes v into path as the runner does: a temp file renamed
// into place.
func writeWhole(t *testing.T, path, v string) {
	t.Helper()
	if err := os.WriteFile(path+".tmp", []byte(v+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path+".tmp", path); err != nil {
		t.Fatal(err)
	}
}

func decodeIdle(t *testing.T, out []byte) *connresult.IdleResult {
	t.Helper()
	r, err := connresult.DecodeResult("stdout", out)
	if err != nil || r.Idle == nil {
		t.Fatalf("result: %v\n%s", err, out)
	}
	return r.Idle
}

// TestHoldFileSharedEnd: two idle processes whose ramps differ tenfold
// hold until the one end time a runner writes once both hold, and each
// result shows a hold over that instant.
func TestHoldFileSharedEnd(t *testing.T) {
	t.Parallel()
	s := okServer(t, nil)
	file := filepath.Join(t.TempDir(), "cell.hold")
	conns := []string{"20", "200"}
	var (
		wg     sync.WaitGroup
		stdout [2]bytes.Buffer
		stderr [2]lockedBuffer
		errs   [2]error
	)
	for i := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = Run(context.Background(), []string{"idle", "-target", hostPort(s), "-conns", conns[i],
				"-rate", "1000", "-hold-file", file, "-hold-wait", "10s"}, &stdout[i], &stderr[i])
		}()
	}
	// The runner: once every process holds, the end is 300 ms from now.
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(stderr[0].String(), connresult.EventPrefix+connresult.EventHolding) ||
		!strings.Contains(stderr[1].String(), connresult.EventPrefix+connresult.EventHolding) {
		if time.Now().After(deadline) {
			t.Fatalf("not both holding after 10 s:\n%s\n%s", stderr[0].String(), stderr[1].String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	written := time.Now().UnixMilli()
	end := written + 300
	writeWhole(t, file, itoa(end))
	wg.Wait()
	var began [2]int64
	for i := range conns {
		if errs[i] != nil {
			t.Fatalf("process %d: %v\n%s", i, errs[i], stderr[i].String())
		}
		r := decodeIdle(t, stdout[i].Bytes())
		n := int(r.ConnectionsTarget)
		if r.ConnectionsEstablished != int64(n) || r.ConnectionsAliveEnd == nil || *r.ConnectionsAliveEnd != n {
			t.Errorf("process %d: established %d alive_end %v, want %d", i, r.ConnectionsEstablished, r.ConnectionsAliveEnd, n)
		}
		if r.HoldBeganAtMs == nil || r.HoldEndedAtMs == nil || r.HoldEndAgreedAtMs == nil || *r.HoldEndAgreedAtMs != end {
			t.Fatalf("process %d: hold began %v ended %v agreed %v, want agreed %d", i, r.HoldBeganAtMs, r.HoldEndedAtMs, r.HoldEndAgreedAtMs, end)
		}
		began[i] = *r.HoldBeganAtMs
		// Every process held over the instant the runner handed out the
		// end, and until the end.
		if !(*r.HoldBeganAtMs <= written && *r.HoldEndedAtMs >= end) {
			t.Errorf("process %d held %d..%d, not over %d..%d", i, *r.HoldBeganAtMs, *r.HoldEndedAtMs, written, end)
		}
		want := float64(end-*r.HoldBeganAtMs) / 1000
		if r.HoldS == nil || math.Abs(*r.HoldS-want) > 0.0015 || r.HoldElapsedS == nil || *r.HoldElapsedS < *r.HoldS-0.002 {
			t.Errorf("process %d: hold_s %v hold_elapsed_s %v, want %v s and at least that", i, deref(r.HoldS), deref(r.HoldElapsedS), want)
		}
	}
	if began[0] > began[1] {
		t.Errorf("the short ramp began holding at %d, after the long one (%d)", began[0], began[1])
	}
}

// TestHoldFileErrors: a file that never comes, or that holds no time, ends
// the hold with the connections checked, errors {"hold_file": 1}, the
// result printed, and exit 1; an end already past ends the hold at once.
func TestHoldFileErrors(t *testing.T) {
	t.Parallel()
	s := okServer(t, nil)
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad")
	writeWhole(t, bad, "soon")
	past := filepath.Join(dir, "past")
	pastMs := time.Now().Add(-time.Second).UnixMilli()
	writeWhole(t, past, itoa(pastMs))
	for _, c := range []struct {
		file, wait, msg string
	}{
		{filepath.Join(dir, "never"), "100ms", "no end time after 100ms (-hold-wait)"},
		{bad, "1s", `"soon" is not the end time in Unix milliseconds`},
	} {
		var stdout, stderr bytes.Buffer
		err := Run(context.Background(), []string{"idle", "-target", hostPort(s), "-conns", "5",
			"-hold-file", c.file, "-hold-wait", c.wait}, &stdout, &stderr)
		if !errors.Is(err, errHoldFile) || ExitCode(err) != 1 {
			t.Errorf("%s: err %v, want errHoldFile (exit 1)", c.file, err)
		}
		if !strings.Contains(stderr.String(), "error: -hold-file "+c.file+": "+c.msg) {
			t.Errorf("%s: stderr lacks %q:\n%s", c.file, c.msg, stderr.String())
		}
		r := decodeIdle(t, stdout.Bytes())
		if r.Status != "complete" || r.Errors["hold_file"] != 1 || r.HoldS != nil || r.HoldEndAgreedAtMs != nil ||
			r.ConnectionsAliveEnd == nil || *r.ConnectionsAliveEnd != 5 || r.HoldEndedAtMs == nil {
			t.Errorf("%s: status %s errors %v hold_s %v agreed %v alive_end %v ended %v", c.file, r.Status, r.Errors,
				r.HoldS, r.HoldEndAgreedAtMs, r.ConnectionsAliveEnd, r.HoldEndedAtMs)
		}
	}
	var stdout, stderr bytes.Buffer
	t0 := time.Now()
	err := Run(context.Background(), []string{"idle", "-target", hostPort(s), "-conns", "5",
		"-hold-file", past}, &stdout, &stderr)
	if err != nil || time.Since(t0) > 5*time.Second {
		t.Fatalf("an end already past: %v after %v\n%s", err, time.Since(t0), stderr.String())
	}
	r := decodeIdle(t, stdout.Bytes())
	if r.HoldEndAgreedAtMs == nil || *r.HoldEndAgreedAtMs != pastMs || *r.HoldS >= 0 || *r.HoldEndedAtMs < pastMs || *r.ConnectionsAliveEnd != 5 {
		t.Errorf("an end already past: agreed %v hold_s %v ended %v alive %v", r.HoldEndAgreedAtMs, *r.HoldS, *r.HoldEndedAtMs, *r.ConnectionsAliveEnd)
	}
}

// Without -hold-file the hold is -hold from its start, and the result
// says when it began and ended.
func TestHoldTimes(t *testing.T) {
	t.Parallel()
	s := okServer(t, nil)
	t0 := time.Now().UnixMilli()
	res, stderr, err := runCmd(t, context.Background(), "idle", "-target", hostPort(s), "-conns", "5", "-hold", "200ms")
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, stderr)
	}
	b, e := num(t, res, "hold_began_at_ms"), num(t, res, "hold_ended_at_ms")
	if b < float64(t0) || e-b < 199 || num(t, res, "hold_s") != 0.2 || !isNull(res, "hold_end_agreed_at_ms") {
		t.Errorf("began %v ended %v hold_s %v agreed %v: want a 0.2 s hold after %d", b, e, res["hold_s"], res["hold_end_agreed_at_ms"], t0)
	}
}

// TestHoldUsageErrors: -hold-file and -hold-wait are checked like every
// other flag, before anything is sent; lowrate has neither.
func TestHoldUsageErrors(t *testing.T) {
	t.Parallel()
	checkUsageErrors(t, []string{"idle", "-conns", "10"}, []usageCase{
		{[]string{"-hold-file", "f", "-hold", "5s"}, "-hold and -hold-file exclude each other"},
		{[]string{"-hold-wait", "5s"}, "-hold-wait needs -hold-file"},
		{[]string{"-hold-file", "f", "-hold-wait", "0s"}, "-hold-wait 0s must be positive"},
	})
	checkUsageErrors(t, []string{"lowrate", "-conns", "10", "-rps", "5"}, []usageCase{
		{[]string{"-hold-file", "f"}, "flag provided but not defined: -hold-file"},
	})
}

// The result of a run before the ramp and hold fields still reads: they
// are null. testdata/idle-before-ramp.json is a committed reference run's
// (03-c10k/results/2026-12-01_041509_c10k/raw/idle-10k.client-1.json).
func TestDecodeResultBeforeRamp(t *testing.T) {
	b, err := os.ReadFile("testdata/idle-before-ramp.json")
	if err != nil {
		t.Fatal(err)
	}
	r := decodeIdle(t, b)
	if r.Ramp != nil || r.HoldBeganAtMs != nil || r.HoldS == nil || *r.HoldS != 15 || r.ConnectionsEstablished != 10000 {
		t.Errorf("old result: ramp %v hold began %v hold_s %v established %d", r.Ramp, r.HoldBeganAtMs, r.HoldS, r.ConnectionsEstablished)
	}
}

func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}
