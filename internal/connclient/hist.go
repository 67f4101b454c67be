package connclient

import (
	"math"
	"math/bits"
)

// Histogram is a fixed-memory log-linear histogram of durations in
// microseconds. Values below 256 µs are counted exactly; above that every
// power of two is split into 128 equal buckets, so a bucket is at most 1/128
// of its lower bound wide and the midpoint reported for it is within 0.4 % of
// any value it holds. Values above histMaxMicros are clamped into the last
// bucket (the exact maximum is kept separately). The zero value is ready to
// use; a Histogram is not safe for concurrent use.
type Histogram struct {
	counts [histBuckets]uint64
	n      uint64
	min    uint64
	max    uint64
}

const (
	histSubBits = 7
	histSub     = 1 << histSubBits // buckets per power of two
	// histMaxBits bounds the values held: 2^40 µs is about 12.7 days.
	histMaxBits   = 40
	histMaxMicros = 1<<histMaxBits - 1
	histBuckets   = (histMaxBits - histSubBits + 1) * histSub
)

func histIndex(v uint64) int {
	l := bits.Len64(v)
	if l <= histSubBits+1 {
		return int(v)
	}
	shift := l - (histSubBits + 1)
	return shift*histSub + int(v>>uint(shift))
}

// histBucket returns the lowest value and the width of bucket i.
func histBucket(i int) (lo, width uint64) {
	if i < 2*histSub {
		return uint64(i), 1
	}
	shift := i/histSub - 1
	m := uint64(i - shift*histSub)
	return m << uint(shift), 1 << uint(shift)
}

// Record adds one value in microseconds; negative values count as 0.
func (h *Histogram) Record(micros int64) {
	var v uint64
	if micros > 0 {
		v = uint64(micros)
	}
	if h.n == 0 || v < h.min {
		h.min = v
	}
	if v > h.max {
		h.max = v
	}
	h.n++
	if v > histMaxMicros {
		v = histMaxMicros
	}
	h.counts[histIndex(v)]++
}

// Count returns the number of values recorded.
func (h *Histogram) Count() uint64 { return h.n }

// Max returns the exact largest value recorded, in microseconds.
func (h *Histogram) Max() uint64 { return h.max }

// Merge adds every value of o to h.
func (h *Histogram) Merge(o *Histogram) {
	if o.n == 0 {
		return
	}
	if h.n == 0 || o.min < h.min {
		h.min = o.min
	}
	if o.max > h.max {
		h.max = o.max
	}
	h.n += o.n
	for i, c := range o.counts {
		h.counts[i] += c
	}
}

// Quantile returns the q-quantile (0 < q <= 1) in microseconds by the
// nearest-rank definition, as the midpoint of the bucket holding that rank,
// clamped to the exact minimum and maximum. It returns NaN when the histogram
// is empty.
func (h *Histogram) Quantile(q float64) float64 {
	if h.n == 0 {
		return math.NaN()
	}
	if q >= 1 {
		return float64(h.max)
	}
	rank := uint64(math.Ceil(q * float64(h.n)))
	if rank < 1 {
		rank = 1
	}
	var seen uint64
	for i, c := range h.counts {
		if c == 0 {
			continue
		}
		seen += c
		if seen >= rank {
			lo, w := histBucket(i)
			v := float64(lo) + float64(w-1)/2
			return math.Min(math.Max(v, float64(h.min)), float64(h.max))
		}
	}
	return float64(h.max)
}
