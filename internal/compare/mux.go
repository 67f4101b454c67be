package compare

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"csbench/internal/mdtext"
	"csbench/internal/summary"
)

// MuxPair is an HTTP/1.1 cell and an HTTP/2 cell of the same payload (in
// Phase 3 the same scenario, count and payload or rate) with the same
// requests in flight: the HTTP/1.1 cell's connections, the HTTP/2 cell's
// connections × streams per connection.
type MuxPair struct {
	H1, H2 string // the cells' names without their repetition suffix
	// Conns and Streams are the HTTP/2 cell's connections and streams per
	// connection as its name gives them. Conns is 0 where the name does
	// not say (Phase 1's <size>-h2: the HTTP/1.1 cell's connections).
	Conns, Streams int
}

var (
	// <h1>-h2 and <h1>-h2-m<S>: Phase 1 (<size>-h2) and Phase 3
	// (idle-<n>-h2, active-<n>-<size>-h2-m<S>): the HTTP/1.1 name and
	// -h2, with the same requests in flight (Phase 3: n streams over n/S
	// connections).
	h2Suffix = regexp.MustCompile(`^(.+)-h2(?:-m([0-9]+))?$`)
	// <size>-c<C>-m<S>: Phase 2, whose HTTP/1.1 cell is <size>-c<C×S>.
	h2Matrix = regexp.MustCompile(`^(.+)-c([0-9]+)-m([0-9]+)$`)
	// Phase 3's names start with the scenario and the connection count:
	// idle-10k, active-1m-1k (the k and m of the CONNS setting).
	c10kCount = regexp.MustCompile(`^[a-z]+-([0-9]+)([km]?)(?:-|$)`)
)

// h2Key reads an HTTP/2 cell's name: the name of the HTTP/1.1 cell it
// pairs with, and its connections (0: the name does not say) and streams
// per connection. ok is false for a name that is not an HTTP/2 cell's.
func h2Key(name string) (h1 string, conns, streams int, ok bool) {
	if m := h2Suffix.FindStringSubmatch(name); m != nil {
		streams = 1
		if m[2] != "" {
			if streams, ok = posInt(m[2]); !ok {
				return "", 0, 0, false
			}
		}
		if n, ok := c10kConns(m[1]); ok && n%streams == 0 {
			conns = n / streams
		}
		return m[1], conns, streams, true
	}
	if m := h2Matrix.FindStringSubmatch(name); m != nil {
		c, okc := posInt(m[2])
		s, oks := posInt(m[3])
		if !okc || !oks {
			return "", 0, 0, false
		}
		return m[1] + "-c" + strconv.Itoa(c*s), c, s, true
	}
	return "", 0, 0, false
}

// c10kConns is the connection count a Phase 3 cell's name starts with.
func c10kConns(name string) (int, bool) {
	m := c10kCount.FindStringSubmatch(name)
	if m == nil {
		return 0, false
	}
	n, ok := posInt(m[1])
	switch m[2] {
	case "k":
		n *= 1000
	case "m":
		n *= 1000000
	}
	return n, ok
}

func posInt(s string) (int, bool) {
	n, err := strconv.Atoi(s)
	return n, err == nil && n > 0 && n <= 1e9
}

// PairMux pairs HTTP/1.1 cells with HTTP/2 cells (base names, BaseName):
// each name of h1 that is not an HTTP/2 cell's with every name of h2 that
// is one and pairs with it (h2Key), in h1's order, then h2's. One cell
// with several HTTP/2 partners (1k-c64 with 1k-c16-m4 and 1k-c64-m1) is
// in several pairs. h1 and h2 may be the same list (a run that loaded
// over both versions).
func PairMux(h1, h2 []string) []MuxPair {
	var out []MuxPair
	for _, a := range h1 {
		if _, _, _, isH2 := h2Key(a); isH2 {
			continue
		}
		for _, b := range h2 {
			if key, c, s, ok := h2Key(b); ok && key == a {
				out = append(out, MuxPair{H1: a, H2: b, Conns: c, Streams: s})
			}
		}
	}
	return out
}

// MuxMoved is the threshold of MuxRow.Moved: a side whose CPU per request
// changed by at most this fraction of its HTTP/1.1 figure did not move.
const MuxMoved = 0.10

// What MuxRow.Moved says.
const (
	MovedServer  = "server"
	MovedClient  = "client"
	MovedNeither = "neither"
)

// MuxRow is one MuxPair's figures: medians over each cell's repetitions,
// [0] the HTTP/1.1 cell's and [1] the HTTP/2 cell's, NaN where a cell did
// not measure it.
type MuxRow struct {
	MuxPair
	H1Run, H2Run string // "A" or "B": the run each cell is from
	// InFlight is the requests in flight, Conns × Streams (Conns, where
	// the name does not say, the HTTP/1.1 cell's connections parameter);
	// 0 when unknown.
	InFlight int
	RPSRatio float64 // HTTP/2's rps over HTTP/1.1's (rps_achieved where a cell has no rps)
	P99Ms    [2]float64
	// ServerCPU and ClientCPU are CPU per request, in µs
	// (ServerCPUPerRequest, ClientCPUPerRequest); their changes are
	// HTTP/2's over HTTP/1.1's, less 1.
	ServerCPU, ClientCPU             [2]float64
	ServerCPUChange, ClientCPUChange float64
	// Memory per held connection, kB: the server's RSS, the client's RSS,
	// the kernel's TCP memory (Phase 3); only where both cells hold the
	// same connections (one stream each), else NaN.
	ServerRSS, ClientRSS, KernelKB [2]float64
	// Moved is the side whose CPU per request changed more, relative to
	// its HTTP/1.1 figure: MovedServer, MovedClient, or MovedNeither when
	// neither changed by more than MuxMoved; "" when a side's is missing.
	Moved string
}

// muxMetrics are what a MuxRow reads of each cell.
var muxMetrics = []string{"rps", "rps_achieved", "latency_p99_ms", ServerCPUPerRequest, ClientCPUPerRequest,
	"server_rss_per_conn_kb", "client_rss_per_conn_kb", "kernel_kb_per_conn"}

// httpVersions: whether a run loaded over HTTP/1.1 and over HTTP/2 (its
// HTTP setting; a summary without it loaded over HTTP/1.1 only).
func httpVersions(s *summary.Summary) (h1, h2 bool) {
	if s.HTTP == nil {
		return true, false
	}
	for _, v := range strings.Split(s.HTTP.Versions, ",") {
		switch strings.TrimSpace(v) {
		case "1.1":
			h1 = true
		case "2":
			h2 = true
		}
	}
	return h1, h2
}

// muxRows pairs the cells of a and b over HTTP/1.1 and HTTP/2 (PairMux):
// a run that loaded over both is paired with itself (the same run, the
// same conditions); when neither did and one loaded over HTTP/1.1 only
// and the other over HTTP/2, the first's cells with the second's. Runs of
// one HTTP version have no pairs. A side of several runs pairs its latest.
func muxRows(a, b *summary.Summary) []MuxRow {
	a1, a2 := httpVersions(a)
	b1, b2 := httpVersions(b)
	type side struct {
		label string
		s     *summary.Summary
	}
	var pairs [][2]side
	switch {
	case a1 && a2 || b1 && b2:
		if a1 && a2 {
			pairs = append(pairs, [2]side{{"A", a}, {"A", a}})
		}
		if b1 && b2 {
			pairs = append(pairs, [2]side{{"B", b}, {"B", b}})
		}
	case a1 && b2 && !a2 && !b1:
		pairs = append(pairs, [2]side{{"A", a}, {"B", b}})
	case b1 && a2 && !b2 && !a1:
		pairs = append(pairs, [2]side{{"B", b}, {"A", a}})
	}
	var rows []MuxRow
	for _, p := range pairs {
		c1, order1, _ := collect([]*summary.Summary{p[0].s}, muxMetrics)
		c2, order2, _ := collect([]*summary.Summary{p[1].s}, muxMetrics)
		for _, mp := range PairMux(order1, order2) {
			rows = append(rows, muxRow(mp, p[0].label, p[1].label, c1[mp.H1], c2[mp.H2], cellParams(p[0].s, mp.H1)))
		}
	}
	return rows
}

// cellParams are the parameters of the first repetition of a cell.
func cellParams(s *summary.Summary, base string) map[string]string {
	for _, c := range s.Cells {
		if c.Status == "ok" && BaseName(c) == base {
			return c.Params
		}
	}
	return nil
}

func muxRow(p MuxPair, run1, run2 string, m1, m2 map[string]Values, params1 map[string]string) MuxRow {
	r := MuxRow{MuxPair: p, H1Run: run1, H2Run: run2}
	if r.Conns == 0 {
		// Phase 1: the HTTP/2 cell has the HTTP/1.1 cell's connections.
		if n, ok := posInt(params1["connections"]); ok {
			r.Conns = n
		}
	}
	r.InFlight = r.Conns * r.Streams
	both := func(name string) [2]float64 { return [2]float64{m1[name].Median(), m2[name].Median()} }
	rps := both("rps")
	if math.IsNaN(rps[0]) || math.IsNaN(rps[1]) {
		rps = both("rps_achieved")
	}
	r.RPSRatio = math.NaN()
	if rps[0] > 0 {
		r.RPSRatio = rps[1] / rps[0]
	}
	r.P99Ms = both("latency_p99_ms")
	r.ServerCPU, r.ClientCPU = both(ServerCPUPerRequest), both(ClientCPUPerRequest)
	r.ServerCPUChange, r.ClientCPUChange = relChange(r.ServerCPU), relChange(r.ClientCPU)
	nan := [2]float64{math.NaN(), math.NaN()}
	r.ServerRSS, r.ClientRSS, r.KernelKB = nan, nan, nan
	if r.Streams == 1 {
		r.ServerRSS, r.ClientRSS, r.KernelKB = both("server_rss_per_conn_kb"), both("client_rss_per_conn_kb"), both("kernel_kb_per_conn")
	}
	r.Moved = moved(r.ServerCPUChange, r.ClientCPUChange)
	return r
}

// relChange is v[1] over v[0], less 1; NaN unless v[0] > 0.
func relChange(v [2]float64) float64 {
	if !(v[0] > 0) || math.IsNaN(v[1]) {
		return math.NaN()
	}
	return v[1]/v[0] - 1
}

// moved names the side whose CPU per request changed more, in relative
// terms (MuxRow.Moved).
func moved(server, client float64) string {
	switch {
	case math.IsNaN(server) || math.IsNaN(client):
		return ""
	case math.Abs(server) <= MuxMoved && math.Abs(client) <= MuxMoved:
		return MovedNeither
	case math.Abs(server) >= math.Abs(client):
		return MovedServer
	default:
		return MovedClient
	}
}

// versionsLabel: the HTTP versions a run loaded over, for a sentence.
func versionsLabel(s *summary.Summary) string {
	switch h1, h2 := httpVersions(s); {
	case h1 && h2:
		return "HTTP/1.1 and HTTP/2"
	case h2:
		return "HTTP/2"
	default:
		return "HTTP/1.1"
	}
}

// muxMarkdown is the section "What multiplexing changed": one row per
// MuxRow; "" when there is none.
func muxMarkdown(r *Result) string {
	if len(r.Mux) == 0 {
		return ""
	}
	mem := false
	for _, x := range r.Mux {
		for _, v := range [][2]float64{x.ServerRSS, x.ClientRSS, x.KernelKB} {
			mem = mem || !math.IsNaN(v[0]) && !math.IsNaN(v[1])
		}
	}
	var b strings.Builder
	b.WriteString("\n### What multiplexing changed\n\n")
	fmt.Fprintf(&b, "A (%s) loaded over %s, B (%s) over %s. ", mdtext.Code(r.A.RunID), versionsLabel(r.A), mdtext.Code(r.B.RunID), versionsLabel(r.B))
	b.WriteString("Each HTTP/1.1 cell beside each HTTP/2 cell of the same payload (Phase 3: scenario, connections and payload or rate) with the same requests in flight: " +
		"the HTTP/1.1 cell's connections, the HTTP/2 cell's connections × streams per connection (c × m); a run that loaded over both is paired with itself. " +
		"Medians over the repetitions. RPS as HTTP/2 over HTTP/1.1; p99 in ms and CPU per request in µs (pidstat over the rate: the server processes, the load generator), HTTP/1.1 → HTTP/2; — where a cell did not measure it. ")
	fmt.Fprintf(&b, "CPU moved on: the side whose CPU per request changed more relative to its HTTP/1.1 figure (that change in brackets); neither when both changed by at most %.0f %%.", MuxMoved*100)
	if mem {
		b.WriteString(" Memory per held connection in kB (server RSS, client RSS, kernel TCP memory), HTTP/1.1 → HTTP/2, only where both cells hold the same connections (one stream each).")
	}
	b.WriteString("\n\n| HTTP/1.1 | HTTP/2 | in flight (c × m) | RPS h2/h1 | p99 ms | server µs/req | client µs/req | CPU moved on |")
	if mem {
		b.WriteString(" server kB/conn | client kB/conn | kernel kB/conn |")
	}
	b.WriteString("\n|---|---|---|---|---|---|---|---|")
	if mem {
		b.WriteString("---|---|---|")
	}
	b.WriteString("\n")
	arrow := func(v [2]float64) string {
		if math.IsNaN(v[0]) && math.IsNaN(v[1]) {
			return "—"
		}
		return num(v[0]) + " → " + num(v[1])
	}
	for _, x := range r.Mux {
		flight := "—"
		if x.InFlight > 0 {
			flight = fmt.Sprintf("%d × %d = %d", x.Conns, x.Streams, x.InFlight)
		}
		ratio := "—"
		if !math.IsNaN(x.RPSRatio) {
			ratio = strconv.FormatFloat(x.RPSRatio, 'f', 3, 64)
		}
		side := "—"
		switch x.Moved {
		case MovedServer:
			side = fmt.Sprintf("server (%+.0f %%)", x.ServerCPUChange*100)
		case MovedClient:
			side = fmt.Sprintf("client (%+.0f %%)", x.ClientCPUChange*100)
		case MovedNeither:
			side = "neither"
		}
		fmt.Fprintf(&b, "| `%s` (%s) | `%s` (%s) | %s | %s | %s | %s | %s | %s |", x.H1, x.H1Run, x.H2, x.H2Run, flight, ratio,
			arrow(x.P99Ms), arrow(x.ServerCPU), arrow(x.ClientCPU), side)
		if mem {
			fmt.Fprintf(&b, " %s | %s | %s |", arrow(x.ServerRSS), arrow(x.ClientRSS), arrow(x.KernelKB))
		}
		b.WriteString("\n")
	}
	return b.String()
}
