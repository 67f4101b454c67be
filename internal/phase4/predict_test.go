package phase4

import (
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"csbench/internal/golden"
)

func facts(t *testing.T, name string) Facts {
	t.Helper()
	f, err := ReadFacts(filepath.Join("testdata", "facts", name))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// with returns a copy of f with key set to value (a setting the recorded
// hosts did not have).
func with(f Facts, kv ...string) Facts {
	g := Facts{}
	for k, v := range f {
		g[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		g[kv[i]] = kv[i+1]
	}
	return g
}

// TestPredictGolden: the predictions' arithmetic on settings recorded by
// run_connections.sh in the netns lab (testdata/facts, see README.md).
func TestPredictGolden(t *testing.T) {
	def := facts(t, "netns-default.client.env")
	small := facts(t, "netns-500ports.client.env")
	gone := facts(t, "netns-500ports-exhausted.client.env")
	srv := facts(t, "netns.server.env")
	cases := []struct {
		name string
		in   Input
	}{
		{"seed: default range, client closes, 500/s for 30 s", Input{Client: def, Server: srv, Close: "client", RatePerS: 500, DurationS: 30, Sources: 1, Lab: "netns"}},
		{"default range, client closes, 5000/s for 10 s", Input{Client: def, Server: srv, Close: "client", RatePerS: 5000, DurationS: 10, Sources: 1, Lab: "netns"}},
		{"default range, client closes, 400/s for 120 s (under the wall)", Input{Client: def, Server: srv, Close: "client", RatePerS: 400, DurationS: 120, Sources: 1, Lab: "netns"}},
		{"default range, 4 sources, client closes, 2000/s for 120 s", Input{Client: def, Server: srv, Close: "client", RatePerS: 2000, DurationS: 120, Sources: 4, Lab: "netns"}},
		{"500 ports, client closes, 500/s for 2 s", Input{Client: small, Server: srv, Close: "client", RatePerS: 500, DurationS: 2, Sources: 1, Lab: "netns"}},
		{"500 ports all in TIME_WAIT, client closes, 2000/s", Input{Client: gone, Server: srv, Close: "client", RatePerS: 2000, DurationS: 2, Sources: 1, Lab: "netns"}},
		{"500 ports, server closes, 2000/s for 2 s", Input{Client: small, Server: srv, Close: "server", RatePerS: 2000, DurationS: 2, Sources: 1, Lab: "netns"}},
		{"500 ports, SO_LINGER=0, 2000/s", Input{Client: small, Server: srv, Close: "linger0", RatePerS: 2000, DurationS: 2, Sources: 1, Lab: "netns"}},
		{"tcp_tw_reuse=1, client closes, 5000/s", Input{Client: with(def, "net.ipv4.tcp_tw_reuse", "1"), Server: srv, Close: "client", RatePerS: 5000, DurationS: 10, Sources: 1, Lab: "netns"}},
		{"tcp_tw_reuse=2 on loopback (LAB=local), 50000/s", Input{Client: def, Server: srv, Close: "client", RatePerS: 50000, DurationS: 10, Sources: 1, Lab: "local"}},
		{"reserved ports 40000-40099,50000, client closes, 500/s", Input{Client: with(def, "net.ipv4.ip_local_reserved_ports", "40000-40099,50000"), Server: srv, Close: "client", RatePerS: 500, DurationS: 30, Sources: 1, Lab: "netns"}},
		{"server closes, tcp_max_tw_buckets 1000", Input{Client: def, Server: with(srv, "net.ipv4.tcp_max_tw_buckets", "1000"), Close: "server", RatePerS: 2000, DurationS: 10, Sources: 1, Lab: "netns"}},
	}
	var b strings.Builder
	for _, c := range cases {
		p, err := Predict(c.in)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		j, _ := json.Marshal(p.Notes)
		fmt.Fprintf(&b, "# %s\n%s\nnotes=%s\n\n", c.name, p.Line(), j)
	}
	golden.Check(t, "predict.txt", b.String())
}

func TestPredictSeedFigure(t *testing.T) {
	p, err := Predict(Input{Client: facts(t, "netns-default.client.env"), Close: "client", RatePerS: 1000, DurationS: 60, Sources: 1})
	if err != nil {
		t.Fatal(err)
	}
	// 28,232 ports / 60 s ≈ 470 connections/s: the seed's wall.
	if p.Ports != 28232 || p.SustainableRatePerS == nil || *p.SustainableRatePerS != 470.5 {
		t.Errorf("ports %d, sustainable %v; want 28232 and 470.5", p.Ports, p.SustainableRatePerS)
	}
}

func TestPredictBadInput(t *testing.T) {
	if _, err := Predict(Input{Client: Facts{"net.ipv4.ip_local_port_range": "x"}, Close: "client", RatePerS: 1}); err == nil {
		t.Error("a port range that is not two numbers is accepted")
	}
	if _, err := Predict(Input{Client: Facts{"net.ipv4.ip_local_port_range": "1 2"}, Close: "later", RatePerS: 1}); err == nil {
		t.Error("close \"later\" is accepted")
	}
}

// A paced accept makes a burst's overflow known: certain past the queue
// and what the server took while the connects were issued, impossible
// within the queue, unknown in between.
func TestPredictOverflow(t *testing.T) {
	for _, tc := range []struct {
		n, backlog, issueS, everyMs float64
		want                        string
	}{
		{2000, 128, 0.09, 1, "1"},   // 128 + 90 + 1 < 2000
		{2000, 4096, 0.09, 1, "0"},  // the queue holds them all
		{2000, 2000, 5, 1, "0"},     // n == backlog: no overflow
		{300, 128, 0.2, 1, "nil"},   // 128 + 200 + 1 >= 300: may
		{330, 128, 0.2, 1, "1"},     // 330 > 329
		{2000, 128, 0.09, 0, "nil"}, // not paced
		{2000, 128, math.NaN(), 1, "nil"},
	} {
		got := "nil"
		if p := PredictOverflow(tc.n, tc.backlog, tc.issueS, tc.everyMs); p != nil {
			got = strconv.FormatFloat(*p, 'f', -1, 64)
		}
		if got != tc.want {
			t.Errorf("PredictOverflow(%v, %v, %v, %v) = %s, want %s", tc.n, tc.backlog, tc.issueS, tc.everyMs, got, tc.want)
		}
	}
}
