package connresult

import (
	"encoding/json"
	"math"
	"math/rand"
	"sort"
	"testing"
)

func TestHistIndexContinuous(t *testing.T) {
	// Every bucket's range starts where the previous one ended, and every
	// value maps into the bucket whose range holds it.
	next := uint64(0)
	for i := 0; i < histBuckets; i++ {
		lo, w := histBucket(i)
		if lo != next {
			t.Fatalf("bucket %d starts at %d, want %d", i, lo, next)
		}
		for _, v := range []uint64{lo, lo + w/2, lo + w - 1} {
			if got := histIndex(v); got != i {
				t.Fatalf("histIndex(%d) = %d, want %d", v, got, i)
			}
		}
		if lo >= 256 && float64(w)/float64(lo) > 1.0/128 {
			t.Fatalf("bucket %d [%d,+%d) is wider than 1/128 of its start", i, lo, w)
		}
		next = lo + w
	}
	if next != histMaxMicros+1 {
		t.Fatalf("buckets end at %d, want %d", next, uint64(histMaxMicros)+1)
	}
}

// exactQuantile is the nearest-rank quantile of sorted.
func exactQuantile(sorted []int64, q float64) float64 {
	rank := int(math.Ceil(q * float64(len(sorted))))
	if rank < 1 {
		rank = 1
	}
	return float64(sorted[rank-1])
}

func TestHistogramQuantileAccuracy(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	cases := map[string]func() int64{
		// 1 µs to 10 s, uniform in log: every octave is exercised.
		"log-uniform": func() int64 { return int64(math.Exp(rng.Float64() * math.Log(1e7))) },
		// LAN-like latencies: ~100 µs with a long tail.
		"lognormal":  func() int64 { return int64(100 * math.Exp(rng.NormFloat64())) },
		"uniform-ms": func() int64 { return 1000 + rng.Int63n(9000) },
	}
	for name, gen := range cases {
		t.Run(name, func(t *testing.T) {
			var h Histogram
			vals := make([]int64, 200_000)
			for i := range vals {
				vals[i] = gen()
				h.Record(vals[i])
			}
			sort.Slice(vals, func(a, b int) bool { return vals[a] < vals[b] })
			if h.Count() != uint64(len(vals)) {
				t.Fatalf("count %d, want %d", h.Count(), len(vals))
			}
			for _, q := range []float64{0.001, 0.5, 0.9, 0.99, 0.999, 0.9999, 1} {
				want := exactQuantile(vals, q)
				got := h.Quantile(q)
				if diff := math.Abs(got - want); diff > 0.01*want && diff > 1 {
					t.Errorf("q%.4f = %.1f µs, exact %.1f µs (error %.2f%%)", q, got, want, 100*diff/want)
				}
			}
			if got, want := h.Quantile(1), float64(vals[len(vals)-1]); got != want {
				t.Errorf("max %v, want exact %v", got, want)
			}
		})
	}
}

func TestHistogramEdges(t *testing.T) {
	var h Histogram
	if !math.IsNaN(h.Quantile(0.5)) {
		t.Errorf("empty histogram quantile = %v, want NaN", h.Quantile(0.5))
	}
	if QuantileMs(&h, 0.5) != nil {
		t.Errorf("QuantileMs of an empty histogram is not nil")
	}
	h.Record(-5) // clock step: counted as 0
	h.Record(1234)
	h.Record(1 << 50) // above the range: clamped bucket, exact max
	if h.Quantile(1) != 1<<50 {
		t.Errorf("max = %v, want %v", h.Quantile(1), uint64(1)<<50)
	}
	if h.Quantile(0.01) != 0 {
		t.Errorf("min quantile = %v, want 0", h.Quantile(0.01))
	}
	if got := h.Quantile(0.5); math.Abs(got-1234) > 1234*0.005 {
		t.Errorf("median = %v, want ~1234", got)
	}

	var a, b Histogram
	for i := int64(1); i <= 1000; i++ {
		a.Record(i)
		b.Record(i + 1000)
	}
	a.Merge(&b)
	if a.Count() != 2000 || a.Max() != 2000 {
		t.Fatalf("merged count %d max %d", a.Count(), a.Max())
	}
	if got := a.Quantile(0.5); math.Abs(got-1000) > 10 {
		t.Errorf("merged median = %v, want ~1000", got)
	}
}

func BenchmarkHistogramRecord(b *testing.B) {
	var h Histogram
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		h.Record(int64(i & 0xfffff))
	}
}

// Merging the dumps of any split of the values (through JSON, as the
// processes' results carry them) gives exactly the histogram of all the
// values, and so exactly the percentiles one process would have printed.
func TestHistDumpMergeExact(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	for trial := 0; trial < 200; trial++ {
		n := rng.Intn(5000)
		parts := 1 + rng.Intn(8)
		var all Histogram
		split := make([]Histogram, parts)
		for i := 0; i < n; i++ {
			var v int64
			switch rng.Intn(3) {
			case 0:
				v = rng.Int63n(300)
			case 1:
				v = int64(math.Exp(rng.Float64() * math.Log(1e8)))
			default:
				v = int64(1) << 41 // clamped into the last bucket, max kept exact
			}
			all.Record(v)
			split[rng.Intn(parts)].Record(v)
		}
		var dumps []*HistDump
		for i := range split {
			b, err := json.Marshal(split[i].Dump())
			if err != nil {
				t.Fatal(err)
			}
			var d HistDump
			if err := json.Unmarshal(b, &d); err != nil {
				t.Fatal(err)
			}
			dumps = append(dumps, &d)
		}
		merged, err := MergeDumps(dumps)
		if err != nil {
			t.Fatalf("trial %d: %v", trial, err)
		}
		if !merged.Equal(&all) {
			t.Fatalf("trial %d: %d values in %d parts: the merge differs from the histogram of all values", trial, n, parts)
		}
		for _, q := range []float64{0.5, 0.9, 0.99, 0.999, 1} {
			a, b := QuantileMs(merged, q), QuantileMs(&all, q)
			if (a == nil) != (b == nil) || (a != nil && *a != *b) {
				t.Fatalf("trial %d: q%v merged %v, all %v", trial, q, a, b)
			}
		}
	}
}

func TestLoadHistRefuses(t *testing.T) {
	var h Histogram
	h.Record(10)
	h.Record(5000)
	good := h.Dump()
	for name, edit := range map[string]func(d *HistDump){
		"layout":       func(d *HistDump) { d.SubBits = 5 },
		"count":        func(d *HistDump) { d.Count++ },
		"out of range": func(d *HistDump) { d.Buckets[1][0] = histBuckets },
		"order":        func(d *HistDump) { d.Buckets[0], d.Buckets[1] = d.Buckets[1], d.Buckets[0] },
		"max":          func(d *HistDump) { d.MaxUs = 1 << 30 },
	} {
		d := *good
		d.Buckets = append([][2]uint64(nil), good.Buckets...)
		edit(&d)
		if _, err := LoadHist(&d); err == nil {
			t.Errorf("%s: loaded a bad dump", name)
		}
	}
	if _, err := LoadHist(good); err != nil {
		t.Fatal(err)
	}
}

// The quantiles of dumps merged are those of every sample in one
// histogram; a missing dump merges nothing; a broken one is an error.
func TestMergedQuantilesMs(t *testing.T) {
	rng := rand.New(rand.NewSource(9))
	var all Histogram
	var dumps []*HistDump
	for p := 0; p < 3; p++ {
		var h Histogram
		for i := 0; i < 700*(p+1); i++ {
			v := int64(100 + rng.Intn(5000*(p+1)*(p+1)))
			h.Record(v)
			all.Record(v)
		}
		dumps = append(dumps, h.Dump())
	}
	qs := []float64{0.5, 0.9, 0.99, 1}
	vals, ok, err := MergedQuantilesMs(dumps, qs...)
	if !ok || err != nil {
		t.Fatalf("ok %v, err %v", ok, err)
	}
	for i, q := range qs {
		if want := QuantileMs(&all, q); *vals[i] != *want {
			t.Errorf("q %v: %v, want %v", q, *vals[i], *want)
		}
	}
	if _, ok, err := MergedQuantilesMs(append(dumps, nil), 0.5); ok || err != nil {
		t.Errorf("a missing dump: ok %v, err %v", ok, err)
	}
	bad := *dumps[0]
	bad.Count++
	if _, ok, err := MergedQuantilesMs([]*HistDump{&bad}, 0.5); ok || err == nil {
		t.Errorf("a broken dump: ok %v, err %v", ok, err)
	}
}
