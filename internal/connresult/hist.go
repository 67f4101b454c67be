package connresult

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

// HistDump is a Histogram as it crosses a process boundary: the layout, the
// exact count, minimum and maximum, and every non-empty bucket as [index,
// count]. Loading dumps and merging them gives exactly the histogram of all
// their values together (the buckets are the same for every process), so the
// percentiles of a run split across client processes come from the merged
// distribution, never from the processes' percentiles.
type HistDump struct {
	Unit    string      `json:"unit"`     // "us"
	SubBits int         `json:"sub_bits"` // buckets per power of two: 2^sub_bits
	MaxBits int         `json:"max_bits"` // values clamped below 2^max_bits
	Count   uint64      `json:"count"`
	MinUs   uint64      `json:"min_us"`
	MaxUs   uint64      `json:"max_us"`
	Buckets [][2]uint64 `json:"buckets"` // [index, count], index ascending
}

// Dump returns h's dump (an empty histogram has no buckets).
func (h *Histogram) Dump() *HistDump {
	d := &HistDump{Unit: "us", SubBits: histSubBits, MaxBits: histMaxBits, Count: h.n, MinUs: h.min, MaxUs: h.max,
		Buckets: [][2]uint64{}}
	for i, c := range h.counts {
		if c > 0 {
			d.Buckets = append(d.Buckets, [2]uint64{uint64(i), c})
		}
	}
	return d
}

// LoadHist rebuilds a Histogram from its dump. It refuses a dump of another
// layout, a bucket out of range or twice, and counts that do not add up.
func LoadHist(d *HistDump) (*Histogram, error) {
	if d.Unit != "us" || d.SubBits != histSubBits || d.MaxBits != histMaxBits {
		return nil, fmt.Errorf("histogram layout unit=%q sub_bits=%d max_bits=%d: this reader knows unit=us sub_bits=%d max_bits=%d",
			d.Unit, d.SubBits, d.MaxBits, histSubBits, histMaxBits)
	}
	h := &Histogram{n: d.Count, min: d.MinUs, max: d.MaxUs}
	var sum uint64
	prev := -1
	for _, b := range d.Buckets {
		i := int(b[0])
		if b[0] >= histBuckets || i <= prev {
			return nil, fmt.Errorf("histogram bucket %d: out of range or out of order", b[0])
		}
		prev = i
		h.counts[i] = b[1]
		sum += b[1]
	}
	if sum != d.Count {
		return nil, fmt.Errorf("histogram buckets hold %d values, count says %d", sum, d.Count)
	}
	if d.Count > 0 && (d.MinUs > d.MaxUs || histIndex(min(d.MinUs, histMaxMicros)) != firstBucket(h) ||
		histIndex(min(d.MaxUs, histMaxMicros)) != lastBucket(h)) {
		return nil, fmt.Errorf("histogram min %d / max %d µs disagree with its buckets", d.MinUs, d.MaxUs)
	}
	return h, nil
}

func firstBucket(h *Histogram) int {
	for i, c := range h.counts {
		if c > 0 {
			return i
		}
	}
	return -1
}

func lastBucket(h *Histogram) int {
	for i := len(h.counts) - 1; i >= 0; i-- {
		if h.counts[i] > 0 {
			return i
		}
	}
	return -1
}

// Equal reports whether h and o hold the same distribution (counts per
// bucket, count, minimum and maximum).
func (h *Histogram) Equal(o *Histogram) bool { return *h == *o }

// MergeDumps loads every dump and merges them into one histogram.
func MergeDumps(ds []*HistDump) (*Histogram, error) {
	out := &Histogram{}
	for _, d := range ds {
		h, err := LoadHist(d)
		if err != nil {
			return nil, err
		}
		out.Merge(h)
	}
	return out, nil
}

// MergedQuantilesMs merges one histogram dump per process and returns, for
// each q, its q-quantile in milliseconds as QuantileMs gives it: what one
// process holding every sample would have printed. ok is false when a dump
// is nil (a result written before connclient dumped that histogram):
// nothing can then be merged exactly, and the caller says what it gives
// instead. Readers of every phase that splits connclient across processes
// or client hosts (Phases 3 and 4) merge through it.
func MergedQuantilesMs(dumps []*HistDump, qs ...float64) (vals []*float64, ok bool, err error) {
	for _, d := range dumps {
		if d == nil {
			return nil, false, nil
		}
	}
	h, err := MergeDumps(dumps)
	if err != nil {
		return nil, false, err
	}
	vals = make([]*float64, len(qs))
	for i, q := range qs {
		vals[i] = QuantileMs(h, q)
	}
	return vals, true, nil
}

// Dump is the name churn and burst (Phase 4) use for a HistDump.
type Dump = HistDump

// LoadDump rebuilds a Histogram from d: nil is an empty histogram, and a
// dump without max_bits (written before it was recorded) has this layout's.
func LoadDump(d *Dump) (*Histogram, error) {
	if d == nil {
		return &Histogram{}, nil
	}
	if d.MaxBits == 0 {
		c := *d
		c.MaxBits = histMaxBits
		d = &c
	}
	return LoadHist(d)
}
