// Package dist holds exactly mergeable distributions: sorted (value, count)
// pairs, such as every latency value wrk recorded with its count, or the
// buckets of a histogram. Merging the distributions of several clients gives
// exactly the distribution of all their samples, so a percentile of the
// merge is the percentile of the run, never an average of percentiles.
package dist

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"sort"
)

// Pair is one value and how many samples had it (a histogram bucket: its
// value and its count).
type Pair struct {
	Value uint64
	Count uint64
}

// Dist is a distribution: pairs in strictly increasing order of value, every
// count above zero. The zero Dist is the empty distribution.
type Dist struct {
	pairs []Pair
	n     uint64
}

// New checks pairs (strictly increasing values, counts above zero, a total
// that fits in 64 bits) and returns them as a Dist. It keeps pairs.
func New(pairs []Pair) (Dist, error) {
	var n uint64
	for i, p := range pairs {
		if p.Count == 0 {
			return Dist{}, fmt.Errorf("dist: value %d has count 0", p.Value)
		}
		if i > 0 && p.Value <= pairs[i-1].Value {
			return Dist{}, fmt.Errorf("dist: value %d after %d: values must increase", p.Value, pairs[i-1].Value)
		}
		if n+p.Count < n {
			return Dist{}, errors.New("dist: total count overflows 64 bits")
		}
		n += p.Count
	}
	return Dist{pairs: pairs, n: n}, nil
}

// FromSamples is the distribution of samples (in any order).
func FromSamples(samples []uint64) Dist {
	s := append([]uint64(nil), samples...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	var pairs []Pair
	for _, v := range s {
		if k := len(pairs); k > 0 && pairs[k-1].Value == v {
			pairs[k-1].Count++
		} else {
			pairs = append(pairs, Pair{v, 1})
		}
	}
	return Dist{pairs: pairs, n: uint64(len(s))}
}

// Merge is the distribution of every sample of ds together: the counts of
// equal values add up.
func Merge(ds ...Dist) Dist {
	var all []Pair
	for _, d := range ds {
		all = append(all, d.pairs...)
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].Value < all[j].Value })
	var out []Pair
	var n uint64
	for _, p := range all {
		n += p.Count
		if k := len(out); k > 0 && out[k-1].Value == p.Value {
			out[k-1].Count += p.Count
		} else {
			out = append(out, p)
		}
	}
	return Dist{pairs: out, n: n}
}

// Pairs returns the pairs (shared, do not modify).
func (d Dist) Pairs() []Pair { return d.pairs }

// Count is the number of samples.
func (d Dist) Count() uint64 { return d.n }

// Min is the smallest value; false when d is empty.
func (d Dist) Min() (uint64, bool) {
	if d.n == 0 {
		return 0, false
	}
	return d.pairs[0].Value, true
}

// Max is the largest value; false when d is empty.
func (d Dist) Max() (uint64, bool) {
	if d.n == 0 {
		return 0, false
	}
	return d.pairs[len(d.pairs)-1].Value, true
}

// Mean is the mean of the samples; false when d is empty.
func (d Dist) Mean() (float64, bool) {
	if d.n == 0 {
		return 0, false
	}
	var sum big.Int
	var x big.Int
	for _, p := range d.pairs {
		x.SetUint64(p.Value)
		sum.Add(&sum, x.Mul(&x, new(big.Int).SetUint64(p.Count)))
	}
	m, _ := new(big.Rat).SetFrac(&sum, new(big.Int).SetUint64(d.n)).Float64()
	return m, true
}

// Stdev is the sample standard deviation (n-1 in the denominator, as wrk
// computes it); false with fewer than two samples.
func (d Dist) Stdev() (float64, bool) {
	if d.n < 2 {
		return 0, false
	}
	mean, _ := d.Mean()
	var sum float64
	for _, p := range d.pairs {
		dv := float64(p.Value) - mean
		sum += dv * dv * float64(p.Count)
	}
	return math.Sqrt(sum / float64(d.n-1)), true
}

// Percentile is the p-th percentile (0 < p <= 100) by wrk's rule
// (src/stats.c stats_percentile): the smallest value whose cumulative count
// reaches rank = round(p/100*count + 0.5), computed as wrk computes it, in
// x86-64 long double (64-bit mantissa), then rounded to double. A rank past
// the last sample (p = 100, where wrk answers 0) gives the maximum. False
// when d is empty or p is out of range.
func (d Dist) Percentile(p float64) (uint64, bool) {
	if d.n == 0 || !(p > 0 && p <= 100) {
		return 0, false
	}
	rank := wrkRank(p, d.n)
	if rank < 1 {
		rank = 1
	}
	var total uint64
	for _, q := range d.pairs {
		total += q.Count
		if total >= rank {
			return q.Value, true
		}
	}
	return d.pairs[len(d.pairs)-1].Value, true
}

// wrkRank is round((p / 100.0) * count + 0.5) with p a long double, each
// step rounded to a 64-bit mantissa as on x87, the sum converted to double
// for round() (math.h, no tgmath).
func wrkRank(p float64, count uint64) uint64 {
	const prec = 64
	f := func() *big.Float { return new(big.Float).SetPrec(prec).SetMode(big.ToNearestEven) }
	x := f().Quo(f().SetFloat64(p), f().SetFloat64(100))
	x = f().Mul(x, f().SetUint64(count))
	x = f().Add(x, f().SetFloat64(0.5))
	d, _ := x.Float64()
	return uint64(math.Round(d))
}

// MarshalJSON writes d as [[value,count],...] ([] when empty).
func (d Dist) MarshalJSON() ([]byte, error) {
	out := make([][2]uint64, len(d.pairs))
	for i, p := range d.pairs {
		out[i] = [2]uint64{p.Value, p.Count}
	}
	return json.Marshal(out)
}

// UnmarshalJSON reads [[value,count],...] and checks it as New does.
func (d *Dist) UnmarshalJSON(b []byte) error {
	var in [][]uint64
	if err := json.Unmarshal(b, &in); err != nil {
		return fmt.Errorf("dist: want [[value,count],...]: %w", err)
	}
	pairs := make([]Pair, len(in))
	for i, p := range in {
		if len(p) != 2 {
			return fmt.Errorf("dist: pair %d has %d numbers, want [value,count]", i+1, len(p))
		}
		pairs[i] = Pair{p[0], p[1]}
	}
	nd, err := New(pairs)
	if err != nil {
		return err
	}
	*d = nd
	return nil
}
