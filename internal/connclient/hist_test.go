package connclient

import (
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
	if quantileMs(&h, 0.5) != nil {
		t.Errorf("quantileMs of an empty histogram is not nil")
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
