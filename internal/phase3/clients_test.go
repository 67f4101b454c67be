package phase3

import (
	"math/rand"
	"strings"
	"testing"

	"csbench/internal/connresult"
	"csbench/internal/summary"
)

func fp(v float64) *float64 { return &v }
func ip(v int64) *int64     { return &v }
func sp(v string) *string   { return &v }

// histOf records n samples from rng into a histogram, and into all.
func histOf(rng *rand.Rand, n, spread int, all *connresult.Histogram) *connresult.HistDump {
	var h connresult.Histogram
	for i := 0; i < n; i++ {
		v := int64(100 + rng.Intn(spread))
		h.Record(v)
		all.Record(v)
	}
	return h.Dump()
}

// Three idle processes, two on host a and one on host b: the pieces of
// measureConnclients, each on its own.
func TestMeasureClientsPieces(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	var conn, req connresult.Histogram
	mk := func(est, failed int64, setup, rate, rss float64, src string) *Client {
		return &Client{Mode: "idle", Status: "complete", Source: sp(src), ConnectionsTarget: int(est + failed),
			ConnectionsEstablished: est, ConnectionsFailed: failed, SetupS: fp(setup), ConnectRateAchieved: fp(rate),
			ConnectRateTarget: fp(1000), ConnectLatencyP50Ms: fp(setup), ConnectLatencyP99Ms: fp(setup * 10), ConnectLatencyMaxMs: fp(setup * 20),
			ConnectionsAliveEnd: fp(float64(est)), ClientRSSMB: fp(rss), Errors: map[string]uint64{}, Drops: map[string]uint64{},
			RequestP99Ms: fp(setup * 3),
			Hists:        map[string]*connresult.HistDump{"connect": histOf(rng, int(est), 5000, &conn), "request": histOf(rng, int(est), 900, &req)}}
	}
	clients := []*Client{mk(1000, 0, 1.5, 900, 10, "198.18.0.2"), mk(990, 10, 2.5, 850, 11, "198.18.0.3"), mk(500, 0, 0.5, 450, 6, "198.18.1.2")}
	clients[1].Errors["etimedout"] = 10
	clients[2].Errors["econnrefused"] = 2
	clients[2].Drops["eof"] = 3
	hosts := []string{"a", "a", "b"}

	var f Figures
	m := map[string]*float64{}
	put := func() { summary.PutFigures(m, &f) }
	connectFigures(clients, &f.ConnectFigures)
	put()
	for k, want := range map[string]float64{"connections_established": 2490, "connections_failed": 10, "connections_alive_end": 2490,
		"setup_s": 2.5, "connect_rate_achieved_per_s": 2200, "connect_rate_target_per_s": 3000, "connect_latency_p99_ms": 25} {
		if m[k] == nil || *m[k] != want {
			t.Errorf("%s = %v, want %v", k, m[k], want)
		}
	}
	clients[2].ConnectionsAliveEnd = nil
	connectFigures(clients, &f.ConnectFigures)
	put()
	if m["connections_alive_end"] != nil {
		t.Error("a process without a count leaves the sum null")
	}

	errs, total := sumErrors(clients)
	if total != 12 || errs["etimedout"] != 10 || errs["econnrefused"] != 2 {
		t.Errorf("errors %v, total %v", errs, total)
	}

	details := map[string]any{}
	idleFigures(clients, &f.LoadFigures, details)
	put()
	if d := details["drops"].(map[string]float64); d["eof"] != 3 {
		t.Errorf("drops %v", d)
	}
	if m["request_latency_p99_ms"] == nil || *m["request_latency_p99_ms"] != 7.5 {
		t.Errorf("request p99 before the merge %v, want the largest, 7.5", m["request_latency_p99_ms"])
	}

	basis, merr := mergeLatencies(clients, "idle", &f)
	put()
	if basis != BasisMerged || merr != nil {
		t.Errorf("basis %q, %v", basis, merr)
	}
	if want := connresult.QuantileMs(&conn, 0.99); *m["connect_latency_p99_ms"] != *want {
		t.Errorf("merged connect p99 %v, want %v (all samples)", *m["connect_latency_p99_ms"], *want)
	}
	if want := connresult.QuantileMs(&req, 0.99); *m["request_latency_p99_ms"] != *want {
		t.Errorf("merged request p99 %v, want %v (all samples)", *m["request_latency_p99_ms"], *want)
	}
	if b, _ := mergeLatencies(clients[:1], "idle", &Figures{}); b != BasisOneProcess {
		t.Errorf("one process: basis %q", b)
	}
	delete(clients[1].Hists, "request")
	if b, _ := mergeLatencies(clients, "idle", &Figures{}); b != BasisLargest {
		t.Errorf("a process without its histogram: basis %q", b)
	}

	shares := hostShares(clients, hosts)
	if len(shares) != 2 || shares[0]["host"] != "a" || shares[0]["processes"] != 2 || shares[0]["connections_established"] != int64(1990) ||
		shares[0]["client_vmrss_mb"] != 21.0 || shares[1]["client_rss_per_conn_kb"] != round(6*1024/500.0, 1) {
		t.Errorf("host shares %v", shares)
	}
	if hostShares(clients, nil) != nil {
		t.Error("one client host: no shares")
	}

	rows := processRows(clients, hosts, "idle")
	if len(rows) != 3 || rows[2]["host"] != "b" || rows[2]["source"] != "198.18.1.2" || rows[1]["process"] != 2 {
		t.Errorf("rows %v", rows)
	}
	if _, ok := processRows(clients, nil, "idle")[0]["host"]; ok {
		t.Error("one client host: a row names a host")
	}
	if _, ok := rows[0]["connections_retried"]; ok {
		t.Error("a result without a ramp: its row has ramp fields")
	}
	if l := processLabel(clients, hosts, 2); l != "process 3 (b, 198.18.1.2)" {
		t.Errorf("label %q", l)
	}
	if partial(clients) != 0 {
		t.Error("partial")
	}
}

// The processes' ramps: counts summed, paced rates summed, the first
// attempts' connect percentiles those of all their samples; a result
// without a ramp among results with one is said, and leaves them out.
func TestRampFigures(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	var all connresult.Histogram
	ramp := func(est, failed, retried, after, retries int64, lo, hi float64, cuts int, bound bool) *connresult.RampResult {
		return &connresult.RampResult{Pace: "aimd", ConnectSlowMs: 1000, ConnectRetriesMax: 3, RampMaxS: 31.2, BoundReached: bound,
			RatePacedMin: lo, RatePacedMax: hi, PaceCuts: cuts, Retries: retries, ConnectionsRetried: retried, EstablishedAfterRetry: after,
			FirstAttempt: connresult.FirstAttempt{Established: est, Failed: failed, ConnectTimeouts: failed, Errors: map[string]uint64{"etimedout": uint64(failed)},
				ConnectLatencyP99Ms: fp(float64(est)), ConnectLatencyHist: histOf(rng, int(est), 3000, &all)}}
	}
	clients := []*Client{
		{ConnectionsAttempted: 1000, Ramp: ramp(700, 300, 300, 290, 420, 625, 2500, 2, false), Hists: map[string]*connresult.HistDump{}},
		{ConnectionsAttempted: 900, Ramp: ramp(900, 0, 0, 0, 0, 2500, 2500, 0, true), Hists: map[string]*connresult.HistDump{}},
	}
	for _, cl := range clients {
		cl.Hists["first_connect"] = cl.Ramp.FirstAttempt.ConnectLatencyHist
	}
	c := &summary.Cell{Metrics: map[string]*float64{}, Details: map[string]any{}}
	var notes []string
	note := func(f string, a ...any) { notes = append(notes, f) }
	summary.PutFigures(c.Metrics, &Figures{RampFigures: rampFigures(clients, c, note)})
	for k, want := range map[string]float64{"connections_attempted": 1900, "connections_first_attempt_established": 1600,
		"connections_first_attempt_failed": 300, "connections_first_attempt_connect_timeouts": 300, "connections_retried": 300,
		"connections_established_after_retry": 290, "connections_retry_attempts": 420,
		"connect_rate_paced_min_per_s": 3125, "connect_rate_paced_max_per_s": 5000} {
		if v := c.Metrics[k]; v == nil || *v != want {
			t.Errorf("%s = %v, want %v", k, v, want)
		}
	}
	if want := connresult.QuantileMs(&all, 0.99); *c.Metrics["connect_latency_first_attempt_p99_ms"] != *want {
		t.Errorf("first-attempt p99 %v, want %v (all samples)", *c.Metrics["connect_latency_first_attempt_p99_ms"], *want)
	}
	r := rampOf(c)
	if r == nil || r.PaceCuts != 2 || len(r.BoundReached) != 1 || r.BoundReached[0] != 2 || r.FirstAttemptErrors["etimedout"] != 300 ||
		r.FirstAttemptBasis != BasisMerged || r.Pace != "aimd" {
		t.Errorf("details %+v", r)
	}
	if len(notes) != 0 {
		t.Errorf("notes %q", notes)
	}

	clients[1].Ramp = nil
	c = &summary.Cell{Metrics: map[string]*float64{}, Details: map[string]any{}}
	if f := rampFigures(clients, c, note); f != nil {
		t.Errorf("one result without a ramp: figures %+v", f)
	}
	if len(c.Metrics) != 0 || rampOf(c) != nil || len(notes) != 1 || !strings.Contains(notes[0], "record their ramp") {
		t.Errorf("one result without a ramp: metrics %v, notes %q", c.Metrics, notes)
	}

	// Every cell of a run that has the figures has the keys; none of a
	// run without.
	figs := []*Figures{{RampFigures: &RampFigures{ConnectionsRetried: fp(1)}}, {}}
	fillRunFigures(figs)
	m := map[string]*float64{}
	summary.PutFigures(m, figs[1])
	if v, ok := m["connect_rate_paced_min_per_s"]; !ok || v != nil {
		t.Error("a cell of a run with ramps lacks a null ramp figure")
	}
	old := []*Figures{{}}
	fillRunFigures(old)
	if old[0].RampFigures != nil || old[0].HoldFigures != nil {
		t.Error("a run without ramps got ramp figures")
	}
}
