package cli

import (
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"csbench/internal/parse"
)

// A loaded cell over TLS opens all of its connections with full
// handshakes, each a signature and a key exchange on the server's CPU
// (Go's crypto/tls: ~1,600 ECDSA P-256 handshakes/s on one core here):
// 10,000 connections are seconds of handshakes, longer than a smoke
// profile's 5 s cell. Measured over that window the cell measures the
// handshakes, and two load generators sharing a CPU (two client hosts of
// the netns lab) completed no request at all. So such a cell is measured
// after a warm-up that opens the connections (h2load --warm-up-time),
// sized from a probe of the handshakes made just before it against the
// same server: h2load --h1 -n N -c N, each of its N clients one handshake
// and one request.

// TLSWarmup is a cell's warm-up, or its refusal, from the probe.
type TLSWarmup struct {
	Code           string  // ok, no_handshakes, too_slow
	ProbeConns     uint64  // the probe's connections that completed a request
	ProbeS         float64 // the probe's time (h2load's "finished in")
	HandshakesPerS float64 // ProbeConns / ProbeS
	ConnectS       float64 // the cell's connections at that rate
	WarmupS        int     // ceil(WarmupFactor x ConnectS) + 2
	Refusal        string  // why not, when Code is not ok
}

// WarmupFactor: the handshakes of the warm-up run slower than the probe's,
// because the connections already open load the server with requests
// (h2load runs its closed loop through the warm-up). On the netns lab,
// reference server on one core, 10,000 connections from two client hosts,
// a probe of 1,305 handshakes/s (7.7 s for 10,000): a 14 s warm-up (1.5x)
// had all 10,000 up at the snapshot 16.5 s after the start, so they took
// at most 2.2x the probe's time; 3x leaves a margin.
const WarmupFactor = 3

// Warm-up codes.
const (
	WarmupOK           = "ok"
	WarmupNoHandshakes = "no_handshakes"
	WarmupTooSlow      = "too_slow"
)

// planTLSWarmup sizes the warm-up of a cell of conns connections from
// the probe's text.
func planTLSWarmup(t *parse.H2loadText, conns int64, maxS int) TLSWarmup {
	w := TLSWarmup{ProbeConns: t.Succeeded, ProbeS: t.FinishedInUs / 1e6}
	if w.ProbeConns == 0 || w.ProbeS <= 0 {
		w.Code = WarmupNoHandshakes
		w.Refusal = fmt.Sprintf("the TLS probe before the cell (%d connections, one request each) completed no request: %d errored, %d failed",
			t.Total, t.Errored, t.Failed)
		if len(t.Notes) > 0 {
			w.Refusal += " (" + t.Notes[0] + ")"
		}
		return w
	}
	w.HandshakesPerS = float64(w.ProbeConns) / w.ProbeS
	w.ConnectS = float64(conns) / w.HandshakesPerS
	w.WarmupS = int(math.Ceil(WarmupFactor*w.ConnectS)) + 2
	if w.WarmupS > maxS {
		w.Code = WarmupTooSlow
		w.Refusal = fmt.Sprintf("%d TLS handshakes at the %.0f per second the server made in a probe (%d in %.2f s) take %.0f s: the warm-up would be %d s, over the longest, %d s; run fewer CONNS over https, or in cleartext",
			conns, w.HandshakesPerS, w.ProbeConns, w.ProbeS, w.ConnectS, w.WarmupS, maxS)
		return w
	}
	w.Code = WarmupOK
	return w
}

// KV is the warm-up as KEY=VALUE lines for a runner: figures unrounded.
func (w TLSWarmup) KV() [][2]string {
	ok := "0"
	if w.Code == WarmupOK {
		ok = "1"
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	return [][2]string{{"ok", ok}, {"code", w.Code}, {"probe_conns", strconv.FormatUint(w.ProbeConns, 10)},
		{"probe_s", f(w.ProbeS)}, {"handshakes_per_s", f(w.HandshakesPerS)}, {"connect_s", f(w.ConnectS)},
		{"warmup_s", strconv.Itoa(w.WarmupS)}, {"refusal", w.Refusal}}
}

const tlsWarmupUsage = `Usage: csb tls-warmup -probe FILE -conns N [-max-s S]

The warm-up of a loaded cell over TLS (Phase 3's active scenario), from a
probe of the server's handshakes made just before it: FILE is the text of
h2load --h1 -n P -c P against the same server (each client one handshake
and one request). Prints KEY=VALUE lines: ok (1 or 0), code (ok,
no_handshakes: the probe completed no request; too_slow: the warm-up would
be over S s), probe_conns, probe_s, handshakes_per_s (probe_conns /
probe_s), connect_s (N at that rate), warmup_s (ceil(3 x connect_s) + 2: the warm-up's own requests slow the handshakes)
and refusal (why not, in words, when ok is 0). -max-s: the longest warm-up
(default 300). Exit 2 on bad usage or a FILE that is not h2load's text.
`

func runTLSWarmup(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("tls-warmup", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	probe := fs.String("probe", "", "")
	conns := fs.Int64("conns", 0, "")
	maxS := fs.Int("max-s", 300, "")
	help := fs.Bool("h", false, "")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%w: tls-warmup: %v", errUsage, err)
	}
	switch {
	case *help:
		_, err := io.WriteString(stdout, tlsWarmupUsage)
		return err
	case fs.NArg() > 0:
		return fmt.Errorf("%w: tls-warmup: unexpected argument %q", errUsage, fs.Arg(0))
	case *probe == "" || *conns <= 0 || *maxS <= 0:
		return fmt.Errorf("%w: tls-warmup needs -probe FILE and -conns N > 0 (and -max-s S > 0)", errUsage)
	}
	f, err := os.Open(*probe)
	if err != nil {
		return fmt.Errorf("%w: tls-warmup: %v", errUsage, err)
	}
	defer f.Close()
	t, err := parse.ParseH2loadText(f)
	if err != nil {
		return fmt.Errorf("%w: tls-warmup: %s is not h2load's text: %v", errUsage, *probe, err)
	}
	var b strings.Builder
	for _, kv := range planTLSWarmup(t, *conns, *maxS).KV() {
		fmt.Fprintf(&b, "%s=%s\n", kv[0], kv[1])
	}
	_, err = io.WriteString(stdout, b.String())
	return err
}
