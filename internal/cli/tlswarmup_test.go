package cli

import (
	"bytes"
	"errors"
	"math"
	"os"
	"strings"
	"testing"

	"csbench/internal/parse"
)

func readProbe(t *testing.T, path string) *parse.H2loadText {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := parse.ParseH2loadText(f)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// A probe of the reference server over TLS on the netns lab: 400 clients,
// each one handshake and one request (testdata/h2load-h1-tls-probe.txt).
func TestTLSWarmupSized(t *testing.T) {
	p := readProbe(t, "testdata/h2load-h1-tls-probe.txt")
	w := planTLSWarmup(p, 10000, 300)
	if w.Code != WarmupOK || w.ProbeConns != 400 {
		t.Fatalf("got %+v, want ok from 400 connections", w)
	}
	rate := 400 / (p.FinishedInUs / 1e6)
	if math.Abs(w.HandshakesPerS-rate) > 1e-9 {
		t.Errorf("handshakes/s %v, want %v", w.HandshakesPerS, rate)
	}
	want := int(math.Ceil(WarmupFactor*10000/rate)) + 2
	if w.WarmupS != want || w.WarmupS < 2 {
		t.Errorf("warm-up %d s, want %d", w.WarmupS, want)
	}
	// The same rate, a bound below what 10k need: refused, naming both.
	w = planTLSWarmup(p, 10000, want-1)
	if w.Code != WarmupTooSlow || !strings.Contains(w.Refusal, "10000 TLS handshakes") || !strings.Contains(w.Refusal, "run fewer CONNS") {
		t.Errorf("got %+v, want too_slow naming the handshakes", w)
	}
}

// A probe that completed nothing (an HTTP/2 client against an HTTP/1.1
// server): no rate, no warm-up, the cell refused.
func TestTLSWarmupNoHandshakes(t *testing.T) {
	w := planTLSWarmup(readProbe(t, "../parse/testdata/h2load-h1-only-server.txt"), 10000, 300)
	if w.Code != WarmupNoHandshakes || w.WarmupS != 0 || !strings.Contains(w.Refusal, "completed no request") {
		t.Errorf("got %+v", w)
	}
}

func TestTLSWarmupCommand(t *testing.T) {
	var out bytes.Buffer
	if err := runTLSWarmup([]string{"-probe", "testdata/h2load-h1-tls-probe.txt", "-conns", "600"}, &out); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"ok=1\n", "code=ok\n", "probe_conns=400\n", "warmup_s="} {
		if !strings.Contains(out.String(), k) {
			t.Errorf("output lacks %q:\n%s", k, out.String())
		}
	}
	for _, args := range [][]string{{}, {"-probe", "x"}, {"-probe", "testdata/nothing", "-conns", "5"}, {"-probe", "tlswarmup.go", "-conns", "5"}} {
		if err := runTLSWarmup(args, &out); !errors.Is(err, errUsage) {
			t.Errorf("%v: got %v, want a usage error", args, err)
		}
	}
}
