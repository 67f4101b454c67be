package dist

import (
	"encoding/json"
	"math"
	"math/rand"
	"reflect"
	"sort"
	"testing"
)

// nearestRank is wrk's percentile over sorted samples, by brute force.
func nearestRank(sorted []uint64, p float64) uint64 {
	rank := wrkRank(p, uint64(len(sorted)))
	if rank < 1 {
		rank = 1
	}
	if rank > uint64(len(sorted)) {
		rank = uint64(len(sorted))
	}
	return sorted[rank-1]
}

// TestMergeRandomSplits is the property: however the samples of a run are
// split across clients, merging the clients' distributions gives exactly
// the distribution of all samples, and so the same percentiles.
func TestMergeRandomSplits(t *testing.T) {
	rng := rand.New(rand.NewSource(10))
	ps := []float64{0.1, 1, 25, 50, 75, 90, 95, 99, 99.9, 99.99, 100}
	for iter := 0; iter < 300; iter++ {
		n := 1 + rng.Intn(3000)
		spread := uint64(1 + rng.Intn(5000))
		all := make([]uint64, n)
		for i := range all {
			// A long tail, as latencies have.
			all[i] = 10 + uint64(rng.ExpFloat64()*float64(spread))
		}
		k := 1 + rng.Intn(6)
		parts := make([][]uint64, k)
		for _, v := range all {
			j := rng.Intn(k)
			parts[j] = append(parts[j], v)
		}
		ds := make([]Dist, k)
		for j := range parts {
			ds[j] = FromSamples(parts[j])
		}
		got := Merge(ds...)
		want := FromSamples(all)
		if !reflect.DeepEqual(got.Pairs(), want.Pairs()) || got.Count() != want.Count() {
			t.Fatalf("iter %d: merge of %d parts differs from the distribution of all %d samples", iter, k, n)
		}
		sorted := append([]uint64(nil), all...)
		sort.Slice(sorted, func(a, b int) bool { return sorted[a] < sorted[b] })
		for _, p := range ps {
			g, ok := got.Percentile(p)
			if w := nearestRank(sorted, p); !ok || g != w {
				t.Fatalf("iter %d: p%v = %d, %v; want %d", iter, p, g, ok, w)
			}
		}
		if mn, _ := got.Min(); mn != sorted[0] {
			t.Fatalf("min %d, want %d", mn, sorted[0])
		}
		if mx, _ := got.Max(); mx != sorted[n-1] {
			t.Fatalf("max %d, want %d", mx, sorted[n-1])
		}
		var sum float64
		for _, v := range all {
			sum += float64(v)
		}
		if m, _ := got.Mean(); math.Abs(m-sum/float64(n)) > 1e-9*sum/float64(n) {
			t.Fatalf("mean %v, want %v", m, sum/float64(n))
		}
	}
}

func TestWrkRank(t *testing.T) {
	// Ranks wrk computes (stats_percentile), worked out by hand: p/100*n is
	// integral, so +0.5 lands on .5 and round() goes up.
	for _, c := range []struct {
		p    float64
		n    uint64
		want uint64
	}{
		{50, 1000, 501}, {99, 100, 100}, {90, 10, 10}, {50, 1, 1}, {100, 7, 8}, {75, 3, 3},
	} {
		if got := wrkRank(c.p, c.n); got != c.want {
			t.Errorf("wrkRank(%v, %d) = %d, want %d", c.p, c.n, got, c.want)
		}
	}
}

func TestNewRefuses(t *testing.T) {
	for _, pairs := range [][]Pair{
		{{5, 1}, {5, 1}},
		{{5, 1}, {4, 1}},
		{{5, 0}},
		{{1, math.MaxUint64}, {2, 1}},
	} {
		if _, err := New(pairs); err == nil {
			t.Errorf("New(%v): no error", pairs)
		}
	}
}

func TestJSONRoundTrip(t *testing.T) {
	d := FromSamples([]uint64{3, 1, 3, 9})
	b, err := json.Marshal(d)
	if err != nil || string(b) != "[[1,1],[3,2],[9,1]]" {
		t.Fatalf("marshal: %s, %v", b, err)
	}
	var back Dist
	if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back, d) {
		t.Fatalf("unmarshal: %+v, %v", back, err)
	}
	for _, bad := range []string{`[[1,1,1]]`, `[[1]]`, `[[2,1],[1,1]]`, `[[1,-1]]`, `{}`} {
		if err := json.Unmarshal([]byte(bad), &back); err == nil {
			t.Errorf("unmarshal %s: no error", bad)
		}
	}
	var empty Dist
	if b, _ := json.Marshal(empty); string(b) != "[]" {
		t.Errorf("empty: %s", b)
	}
	if _, ok := empty.Percentile(50); ok {
		t.Error("empty percentile: ok")
	}
}
