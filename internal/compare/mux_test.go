package compare

import (
	"bytes"
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"csbench/internal/golden"
	"csbench/internal/summary"
)

func TestPairMux(t *testing.T) {
	for _, tc := range []struct {
		name   string
		h1, h2 []string
		want   []MuxPair
	}{
		{"phase 1, one run over both", []string{"1k", "1k-h2", "10k", "10k-h2", "1m"}, []string{"1k", "1k-h2", "10k", "10k-h2", "1m"},
			[]MuxPair{{"1k", "1k-h2", 0, 1}, {"10k", "10k-h2", 0, 1}}},
		{"phase 2, c×m = c", []string{"1k-c16", "1k-c64", "10k-c64"}, []string{"1k-c16-m1", "1k-c16-m4", "1k-c64-m1", "1k-c4-m4", "10k-c1-m64", "100k-c64-m1"},
			[]MuxPair{{"1k-c16", "1k-c16-m1", 16, 1}, {"1k-c16", "1k-c4-m4", 4, 4}, {"1k-c64", "1k-c16-m4", 16, 4}, {"1k-c64", "1k-c64-m1", 64, 1}, {"10k-c64", "10k-c1-m64", 1, 64}}},
		{"phase 2, no c×m matches", []string{"1k-c10"}, []string{"1k-c3-m3", "1k-c10-m10"}, nil},
		{"phase 3", []string{"idle-10k", "active-10k-1k", "active-1m-10k", "lowrate-10k-1000rps"},
			[]string{"idle-10k-h2", "active-10k-1k-h2-m100", "active-10k-1k-h2", "active-1m-10k-h2-m10", "lowrate-10k-1000rps-h2", "idle-20k-h2"},
			[]MuxPair{{"idle-10k", "idle-10k-h2", 10000, 1}, {"active-10k-1k", "active-10k-1k-h2-m100", 100, 100}, {"active-10k-1k", "active-10k-1k-h2", 10000, 1},
				{"active-1m-10k", "active-1m-10k-h2-m10", 100000, 10}, {"lowrate-10k-1000rps", "lowrate-10k-1000rps-h2", 10000, 1}}},
		// n/S not whole: the pair stands, its connections are not named.
		{"phase 3, streams do not divide", []string{"active-10k-1k"}, []string{"active-10k-1k-h2-m3"}, []MuxPair{{"active-10k-1k", "active-10k-1k-h2-m3", 0, 3}}},
		{"an HTTP/2 name is never an HTTP/1.1 partner", []string{"1k-h2", "1k-c4-m4"}, []string{"1k-h2", "1k-c4-m4"}, nil},
		{"zero streams or connections is no HTTP/2 cell", []string{"1k-c0", "1k"}, []string{"1k-c0-m4", "1k-c4-m0", "1k-h2-m0"}, nil},
		{"nothing over HTTP/2", []string{"1k", "10k"}, []string{"1k", "10k"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := PairMux(tc.h1, tc.h2); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("PairMux(%q, %q)\n got %v\nwant %v", tc.h1, tc.h2, got, tc.want)
			}
		})
	}
}

// muxCell is a cell of an HTTP run: rps, p99, both sides' CPU (% of one
// core) and, where given, memory per connection.
func muxCell(name, rep string, conns int, rps, p99, srv, cli float64, mem ...float64) summary.Cell {
	p := map[string]string{"connections": strconv.Itoa(conns)}
	if rep != "" {
		p["rep"] = rep
	}
	m := map[string]*float64{"server_proc_cpu_pct": summary.F(srv), "client_proc_cpu_pct": summary.F(cli)}
	if rps > 0 { // an idle hold has neither
		m["rps"], m["latency_p99_ms"] = summary.F(rps), summary.F(p99)
	}
	for i, k := range []string{"server_rss_per_conn_kb", "client_rss_per_conn_kb", "kernel_kb_per_conn"} {
		if i < len(mem) {
			m[k] = summary.F(mem[i])
		}
	}
	return summary.Cell{Name: name, Status: "ok", Params: p, Metrics: m}
}

func TestMuxSection(t *testing.T) {
	h2 := &summary.HTTP{Versions: "2", HTTP2: "h2c"}
	for _, tc := range []struct {
		name string
		a, b *summary.Summary
	}{
		// Phase 2: HTTP/1.1 (A, repeated) against HTTP/2 (B): 1k-c64 has
		// two partners; 1k-c16-m1 is one row; 10k-c64 has none.
		{"mux-phase2", &summary.Summary{Phase: "02-http-matrix", RunID: "h1", Cells: []summary.Cell{
			muxCell("1k-c64-r1", "1", 64, 40000, 4, 100, 100), muxCell("1k-c64-r2", "2", 64, 42000, 5, 100, 100),
			muxCell("1k-c16-r1", "1", 16, 30000, 1, 90, 60), muxCell("1k-c16-r2", "2", 16, 30000, 1, 90, 60),
			muxCell("10k-c64-r1", "1", 64, 9000, 9, 50, 50), muxCell("10k-c64-r2", "2", 64, 9000, 9, 50, 50),
		}}, &summary.Summary{Phase: "02-http-matrix", RunID: "h2", HTTP: h2, Cells: []summary.Cell{
			// server 2.439 → 2 µs/req (−18 %), client 2.439 → 5 (+105 %): the client.
			muxCell("1k-c16-m4", "", 16, 50000, 3, 100, 250),
			// server +29 %, client +5 %: the server.
			muxCell("1k-c64-m1", "", 64, 31000, 6, 97.5, 76),
			// within ±10 % on both sides: neither.
			muxCell("1k-c16-m1", "", 16, 30000, 1.2, 95, 63),
			// no client CPU: not said.
			{Name: "10k-c8-m8", Status: "ok", Metrics: map[string]*float64{"rps": summary.F(10000), "server_proc_cpu_pct": summary.F(50)}},
		}}},
		// Phase 1, one run over both versions against an HTTP/1.1 run:
		// B's own cells are paired; the connections come from 1k's.
		{"mux-phase1", &summary.Summary{Phase: "01-http-baseline", RunID: "h1", Cells: []summary.Cell{
			muxCell("1k", "", 64, 40000, 4, 100, 100),
		}}, &summary.Summary{Phase: "01-http-baseline", RunID: "both", HTTP: &summary.HTTP{Versions: "1.1,2", HTTP2: "h2c"}, Cells: []summary.Cell{
			muxCell("1k", "", 64, 40000, 4, 100, 100), muxCell("1k-h2", "", 64, 36000, 5, 108, 180),
		}}},
		// Phase 3: idle holds (memory, no rate) and an active scenario
		// over 100 streams a connection (no memory per connection: the
		// connections differ). B over HTTP/2, A over HTTP/1.1.
		{"mux-phase3", &summary.Summary{Phase: "03-c10k", RunID: "h2", HTTP: h2, Cells: []summary.Cell{
			muxCell("idle-10k-h2", "", 10000, 0, 0, 3, 5, 38.5, 20.1, 4.3),
			muxCell("active-10k-1k-h2-m100", "", 100, 30000, 40, 90, 120, 10, 10, 10),
		}}, &summary.Summary{Phase: "03-c10k", RunID: "h1", Cells: []summary.Cell{
			muxCell("idle-10k", "", 10000, 0, 0, 2, 4, 12.5, 8.2, 4.1),
			muxCell("active-10k-1k", "", 10000, 20000, 90, 100, 100, 30, 20, 10),
		}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Runs(tc.a, tc.b, nil)
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, tc.name, muxMarkdown(r))
			if !strings.Contains(r.Markdown(), muxMarkdown(r)) {
				t.Error("the comparison's Markdown lacks the section")
			}
			var buf bytes.Buffer
			if err := r.WriteJSON(&buf); err != nil {
				t.Fatal(err)
			}
			golden.Check(t, tc.name+"-json", buf.String())
		})
	}
}

// Runs of one HTTP version have no pairs and no section, even where a
// name reads as an HTTP/2 cell's.
func TestMuxNone(t *testing.T) {
	a := &summary.Summary{Phase: "01-http-baseline", RunID: "a", Cells: []summary.Cell{muxCell("1k", "", 64, 1, 1, 1, 1), muxCell("1k-h2", "", 64, 1, 1, 1, 1)}}
	h2 := &summary.Summary{Phase: "01-http-baseline", RunID: "b", HTTP: &summary.HTTP{Versions: "2"}, Cells: a.Cells}
	for _, ab := range [][2]*summary.Summary{{a, a}, {h2, h2}} {
		r, err := Runs(ab[0], ab[1], nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Mux) != 0 || strings.Contains(r.Markdown(), "multiplexing") {
			t.Errorf("%s against %s: %+v", ab[0].RunID, ab[1].RunID, r.Mux)
		}
		var buf bytes.Buffer
		if err := r.WriteJSON(&buf); err != nil || strings.Contains(buf.String(), "multiplexing") {
			t.Errorf("JSON (%v):\n%s", err, buf.String())
		}
	}
}

func TestMoved(t *testing.T) {
	nan := math.NaN()
	for _, tc := range []struct {
		server, client float64
		want           string
	}{
		{0.10, -0.10, MovedNeither}, {0.11, 0.05, MovedServer}, {-0.5, 0.3, MovedServer},
		{0.05, -0.2, MovedClient}, {0.2, 0.2, MovedServer}, {nan, 0.5, ""}, {0.5, nan, ""},
	} {
		if got := moved(tc.server, tc.client); got != tc.want {
			t.Errorf("moved(%v, %v) = %q, want %q", tc.server, tc.client, got, tc.want)
		}
	}
}
