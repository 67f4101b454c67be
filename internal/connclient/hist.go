package connclient

import (
	"fmt"
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

// Dump is a Histogram as a result document carries it: the non-empty
// buckets as [index, count] pairs, so histograms of several processes (or
// cells) merge exactly by summing counts per index (Load, then Merge).
type Dump struct {
	Unit    string      `json:"unit"`     // always "us"
	SubBits int         `json:"sub_bits"` // buckets per power of two = 2^sub_bits
	Count   uint64      `json:"count"`
	MinUs   uint64      `json:"min_us"`
	MaxUs   uint64      `json:"max_us"`
	Buckets [][2]uint64 `json:"buckets"`
}

// Dump returns h's non-empty buckets.
func (h *Histogram) Dump() *Dump {
	d := &Dump{Unit: "us", SubBits: histSubBits, Count: h.n, MinUs: h.min, MaxUs: h.max, Buckets: [][2]uint64{}}
	for i, c := range h.counts {
		if c != 0 {
			d.Buckets = append(d.Buckets, [2]uint64{uint64(i), c})
		}
	}
	return d
}

// LoadDump rebuilds a Histogram from d; it refuses another layout.
func LoadDump(d *Dump) (*Histogram, error) {
	h := &Histogram{}
	if d == nil {
		return h, nil
	}
	if d.Unit != "us" || d.SubBits != histSubBits {
		return nil, fmt.Errorf("histogram dump in %q with %d sub-bucket bits: this reader knows \"us\" and %d", d.Unit, d.SubBits, histSubBits)
	}
	var n uint64
	for _, b := range d.Buckets {
		if b[0] >= histBuckets {
			return nil, fmt.Errorf("histogram dump: bucket %d out of range", b[0])
		}
		h.counts[b[0]] += b[1]
		n += b[1]
	}
	if n != d.Count {
		return nil, fmt.Errorf("histogram dump: buckets hold %d values, count says %d", n, d.Count)
	}
	h.n, h.min, h.max = d.Count, d.MinUs, d.MaxUs
	return h, nil
}
