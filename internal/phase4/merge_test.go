package phase4

import (
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"csbench/internal/connresult"
)

func fixtureResult(t *testing.T, path string) *connresult.Result {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	r, err := connresult.DecodeResult(path, b)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// The merge of one client host's result is that result: the cell's figures
// are the host's own, exactly (the committed one-client runs regenerate
// byte for byte).
func TestMergeOneHostIsIdentity(t *testing.T) {
	ch := fixtureResult(t, filepath.Join("testdata", "run", "raw", "churn-client-2000.json")).Churn
	got, mr := mergeChurn([]*connresult.ChurnResult{ch})
	if got != ch || len(mr.Upper) != 0 || len(mr.Problems) != 0 {
		t.Errorf("one churn result: merged %p (want %p), upper %v, problems %v", got, ch, mr.Upper, mr.Problems)
	}
	b := fixtureResult(t, filepath.Join("testdata", "run", "raw", "backlog-128.json")).Burst
	gotB, mr := mergeBurst([]*connresult.BurstResult{b})
	if gotB != b || len(mr.Upper) != 0 {
		t.Errorf("one burst result: merged %p (want %p), upper %v", gotB, b, mr.Upper)
	}
	p := &Prediction{Wall: WallPorts, CellRatePerS: 470.5, Ports: 500}
	if Combine([]string{"client"}, []*Prediction{p}, Facts{}) != p {
		t.Error("the combination of one prediction is not that prediction")
	}
}

// hostSamples records n latencies (µs) drawn from rng into h and all.
func hostSamples(rng *rand.Rand, n, spread int, hs ...*connresult.Histogram) {
	for i := 0; i < n; i++ {
		v := int64(300 + rng.Intn(spread))
		for _, h := range hs {
			h.Record(v)
		}
	}
}

func f(v float64) *float64 { return &v }

// Two hosts: counts and rates add up, the first EADDRNOTAVAIL is the
// earliest, per-second series add up by second, and every percentile is
// the one of the union of both hosts' samples (their histograms merged),
// not the larger host's.
func TestMergeTwoChurnHosts(t *testing.T) {
	rng := rand.New(rand.NewSource(4))
	var all, allConn connresult.Histogram
	var rs []*connresult.ChurnResult
	for k, spec := range []struct{ n, spread int }{{900, 2000}, {400, 90000}} {
		var lat, conn connresult.Histogram
		hostSamples(rng, spec.n, spec.spread, &lat, &all)
		hostSamples(rng, spec.n, spec.spread/3, &conn, &allConn)
		r := &connresult.ChurnResult{Close: "client", RateTargetPerS: 500 - k, DurationS: 2,
			ConnsScheduled: 1000 - int64(k), ConnsCompleted: int64(spec.n), ConnsFailed: 1000 - int64(k) - int64(spec.n),
			RateAchievedPerS: f(float64(spec.n) / 2), FirstAddrNotAvail: f(0.9 - 0.4*float64(k)),
			ScheduleLagP99Ms: f(float64(10 * (k + 1))),
			Errors:           map[string]uint64{"eaddrnotavail": uint64(1000 - k - spec.n)},
			LatencyP50Ms:     connresult.QuantileMs(&lat, 0.5), LatencyP99Ms: connresult.QuantileMs(&lat, 0.99),
			LatencyMaxMs:        connresult.QuantileMs(&lat, 1),
			ConnectLatencyP99Ms: connresult.QuantileMs(&conn, 0.99),
			PerSecond: []connresult.ChurnSecond{{Completed: 10, Failed: uint64(k), LatencyMaxMs: uint64(5 + k)},
				{Completed: 20, AddrNotAvail: 3}},
			Histograms: map[string]*connresult.Dump{"latency": lat.Dump(), "connect": conn.Dump()}}
		r.Status = "complete"
		rs = append(rs, r)
	}
	got, mr := mergeChurn(rs)
	if got.RateTargetPerS != 999 || got.ConnsScheduled != 1999 || got.ConnsCompleted != 1300 || got.ConnsFailed != 699 {
		t.Errorf("counts: target %d/s, scheduled %d, completed %d, failed %d", got.RateTargetPerS, got.ConnsScheduled, got.ConnsCompleted, got.ConnsFailed)
	}
	if *got.RateAchievedPerS != 650 || got.Errors["eaddrnotavail"] != 699 || *got.FirstAddrNotAvail != 0.5 {
		t.Errorf("achieved %v/s, eaddrnotavail %d, first at %v s", *got.RateAchievedPerS, got.Errors["eaddrnotavail"], *got.FirstAddrNotAvail)
	}
	wantSecs := []connresult.ChurnSecond{{T: 0, Completed: 20, Failed: 1, LatencyMaxMs: 6}, {T: 1, Completed: 40, AddrNotAvail: 6}}
	if !reflect.DeepEqual(got.PerSecond, wantSecs) {
		t.Errorf("per second %+v, want %+v", got.PerSecond, wantSecs)
	}
	for _, c := range []struct {
		name string
		got  *float64
		h    *connresult.Histogram
		q    float64
	}{{"latency p50", got.LatencyP50Ms, &all, 0.5}, {"latency p90", got.LatencyP90Ms, &all, 0.9}, {"latency p99", got.LatencyP99Ms, &all, 0.99},
		{"latency max", got.LatencyMaxMs, &all, 1}, {"connect p99", got.ConnectLatencyP99Ms, &allConn, 0.99}} {
		if want := connresult.QuantileMs(c.h, c.q); c.got == nil || *c.got != *want {
			t.Errorf("%s = %v, want %v (the union of both hosts' samples)", c.name, c.got, *want)
		}
	}
	// The larger host's p99 is not the union's: the merge is not a maximum.
	if *got.LatencyP99Ms == *largest([]*float64{rs[0].LatencyP99Ms, rs[1].LatencyP99Ms}) {
		t.Error("the samples do not tell a merge from the larger host's p99")
	}
	// The schedule lag has no histogram: the largest host's, an upper bound.
	if *got.ScheduleLagP99Ms != 20 || !reflect.DeepEqual(mr.Upper, []string{"schedule_lag_p50_ms", "schedule_lag_p99_ms"}) || !mr.exactLatency() {
		t.Errorf("schedule lag p99 %v, upper bounds %v", *got.ScheduleLagP99Ms, mr.Upper)
	}

	// A host without histograms (connclient older than its dumps): the
	// largest host's percentiles, named as upper bounds; the maximum stays
	// exact.
	rs[1].Histograms = nil
	got, mr = mergeChurn(rs)
	if *got.LatencyP99Ms != *largest([]*float64{rs[0].LatencyP99Ms, rs[1].LatencyP99Ms}) || *got.LatencyMaxMs != *connresult.QuantileMs(&all, 1) {
		t.Errorf("without histograms: p99 %v, max %v", *got.LatencyP99Ms, *got.LatencyMaxMs)
	}
	want := []string{"connect_latency_p50_ms", "connect_latency_p99_ms", "latency_p50_ms", "latency_p90_ms", "latency_p99_ms",
		"schedule_lag_p50_ms", "schedule_lag_p99_ms"}
	if !reflect.DeepEqual(mr.Upper, want) || mr.exactLatency() {
		t.Errorf("upper bounds %v, want %v", mr.Upper, want)
	}
}

// Two bursts, one instant: counts and latency steps add up, percentiles of
// the union.
func TestMergeTwoBurstHosts(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	var all connresult.Histogram
	var rs []*connresult.BurstResult
	for k := 0; k < 2; k++ {
		var lat, conn connresult.Histogram
		hostSamples(rng, 500+300*k, 1500000*(k+1), &lat, &all)
		hostSamples(rng, 500+300*k, 1000, &conn)
		rs = append(rs, &connresult.BurstResult{ConnsTarget: 1000, ConnsCompleted: int64(500 + 300*k), ConnsFailed: int64(500 - 300*k),
			ConnsNeverUp: int64(10 * k), Steps: connresult.Steps{Under1s: 400, From1s: uint64(100 + 300*k)},
			Errors: map[string]uint64{"econnreset": uint64(k)}, LatencyP99Ms: connresult.QuantileMs(&lat, 0.99),
			Histograms: map[string]*connresult.Dump{"latency": lat.Dump(), "connect": conn.Dump()}})
	}
	got, mr := mergeBurst(rs)
	if got.ConnsTarget != 2000 || got.ConnsCompleted != 1300 || got.ConnsFailed != 700 || got.ConnsNeverUp != 10 ||
		got.Steps.Under1s != 800 || got.Steps.From1s != 500 || got.Errors["econnreset"] != 1 {
		t.Errorf("burst counts %+v", got)
	}
	if want := connresult.QuantileMs(&all, 0.99); *got.LatencyP99Ms != *want || len(mr.Upper) != 0 {
		t.Errorf("p99 %v, want %v (union); upper %v", *got.LatencyP99Ms, *want, mr.Upper)
	}
}

// Two hosts' predictions: rates and counts add up, the wall comes at the
// earliest host's exhaust time, the server's TIME_WAIT is capped at its
// tcp_max_tw_buckets.
func TestCombinePredictions(t *testing.T) {
	a := &Prediction{Wall: WallPorts, SustainableRatePerS: f(8.3), CellRatePerS: 248, EAddrNotAvail: true, ExhaustS: f(0.496),
		Ports: 500, PortRange: "40000-40499", FreeAtStart: 496, PortHoldS: 60, ClientTimeWait: 496, ServerTimeWait: 300, Notes: []string{"x"}}
	b := &Prediction{Wall: WallPorts, SustainableRatePerS: f(16.7), CellRatePerS: 250, ExhaustS: nil,
		Ports: 1000, PortRange: "40000-40999", FreeAtStart: 1000, PortHoldS: 60, ClientTimeWait: 500, ServerTimeWait: 300, Notes: []string{}}
	got := Combine([]string{"client1", "client2"}, []*Prediction{a, b}, Facts{"net.ipv4.tcp_max_tw_buckets": "512"})
	want := &Prediction{Wall: WallPorts, SustainableRatePerS: f(25), CellRatePerS: 498, EAddrNotAvail: true, ExhaustS: f(0.496),
		Ports: 1500, PortRange: "client1 40000-40499, client2 40000-40999", FreeAtStart: 1496, PortHoldS: 60, ClientTimeWait: 996,
		ServerTimeWait: 512, Notes: []string{"client1: x"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("combined\n%+v\nwant\n%+v", got, want)
	}
}
