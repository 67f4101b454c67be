// Package stats says whether a difference between two sets of repeated
// measurements is real: a two-sided Mann-Whitney U test with its exact
// p-value (ties included), and a distribution-free confidence interval of
// a median. It assumes nothing of the distributions, which on a shared
// machine are neither normal nor alike; it asks only that the runs of
// each side be independent (interleaved with the other side's, so that a
// machine's drift falls on both). benchstat's method, for whole runs.
package stats

import (
	"math"
	"sort"
)

// ExactMax is the most samples of both sides together for which the p-value
// is computed from the exact distribution of the rank sum; past it, the
// normal approximation with the ties' correction (which is good there).
const ExactMax = 100

// MannWhitney is the two-sided Mann-Whitney U test of a against b: U is
// a's statistic (the pairs (x in a, y in b) with x > y, ties counting a
// half) and P the probability, were both drawn from one distribution, of
// a rank sum at least as far from its mean as the one seen: from the exact
// permutation distribution of the midranks (ties handled exactly), or the
// normal approximation past ExactMax samples. P is NaN with an empty side.
func MannWhitney(a, b []float64) (u, p float64) { return mannWhitney(a, b, ExactMax) }

// mannWhitney is MannWhitney with the exact distribution up to exactMax
// samples in all.
func mannWhitney(a, b []float64, exactMax int) (u, p float64) {
	n1, n2 := len(a), len(b)
	if n1 == 0 || n2 == 0 {
		return math.NaN(), math.NaN()
	}
	n := n1 + n2
	type obs struct {
		v    float64
		inA  bool
		rank int // twice the midrank: an integer
	}
	all := make([]obs, 0, n)
	for _, v := range a {
		all = append(all, obs{v: v, inA: true})
	}
	for _, v := range b {
		all = append(all, obs{v: v})
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].v < all[j].v })
	var tieTerm float64 // Σ (t³ − t) over the groups of ties
	for i := 0; i < n; {
		j := i
		for j < n && all[j].v == all[i].v {
			j++
		}
		// Ranks i+1 .. j: twice their mean is i+1+j.
		for k := i; k < j; k++ {
			all[k].rank = i + 1 + j
		}
		t := float64(j - i)
		tieTerm += t*t*t - t
		i = j
	}
	w2 := 0 // twice a's rank sum
	ranks := make([]int, n)
	for i, o := range all {
		ranks[i] = o.rank
		if o.inA {
			w2 += o.rank
		}
	}
	u = float64(w2)/2 - float64(n1*(n1+1))/2
	mean2 := n1 * (n + 1) // twice the rank sum's mean
	dev := abs(w2 - mean2)
	if n > exactMax {
		nf, n1f, n2f := float64(n), float64(n1), float64(n2)
		sd := math.Sqrt(n1f * n2f / 12 * ((nf + 1) - tieTerm/(nf*(nf-1))))
		if sd == 0 {
			return u, 1
		}
		z := (float64(dev)/2 - 0.5) / sd // with the continuity correction
		return u, math.Min(1, math.Erfc(math.Max(z, 0)/math.Sqrt2))
	}
	// count[k][s]: the subsets of k of the observations whose doubled ranks
	// sum to s, over the observations seen so far.
	maxS := n * (n + 1)
	count := make([][]float64, n1+1)
	for k := range count {
		count[k] = make([]float64, maxS+1)
	}
	count[0][0] = 1
	for i, r := range ranks {
		for k := min(i+1, n1); k >= 1; k-- {
			row, prev := count[k], count[k-1]
			for s := maxS; s >= r; s-- {
				if prev[s-r] != 0 {
					row[s] += prev[s-r]
				}
			}
		}
	}
	var total, far float64
	for s, c := range count[n1] {
		if c == 0 {
			continue
		}
		total += c
		if abs(s-mean2) >= dev {
			far += c
		}
	}
	return u, math.Min(1, far/total)
}

// MinP is the smallest two-sided p-value the test can give with n1 and n2
// samples: both sides apart, 2 / C(n1+n2, n1). With fewer samples than
// make MinP(n1, n2) < α no difference can be called significant at α.
func MinP(n1, n2 int) float64 {
	if n1 == 0 || n2 == 0 {
		return 1
	}
	return math.Min(1, 2/binom(n1+n2, n1))
}

// RunsNeeded is the fewest samples a side (equal sides) for which the test
// can reach α.
func RunsNeeded(alpha float64) int {
	for n := 1; n < 1000; n++ {
		if MinP(n, n) < alpha {
			return n
		}
	}
	return 1000
}

// MedianCI is a distribution-free confidence interval of the median of v
// at the level conf (e.g. 0.95): the order statistics x(k) and x(n+1−k)
// with k the largest for which P(Binomial(n, ½) < k) ≤ (1 − conf)/2. ok is
// false when no such interval exists (fewer than 6 samples at 95 %).
func MedianCI(v []float64, conf float64) (lo, hi float64, ok bool) {
	n := len(v)
	if n == 0 {
		return math.NaN(), math.NaN(), false
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	tail := (1 - conf) / 2
	k, cum := 0, 0.0
	for j := 0; j < n; j++ {
		cum += binom(n, j) / math.Pow(2, float64(n))
		if cum > tail {
			break
		}
		k = j + 1 // P(B ≤ j) ≤ tail: x(j+1) may be the lower bound
	}
	if k == 0 {
		return math.NaN(), math.NaN(), false
	}
	return s[k-1], s[n-k], true
}

// binom is C(n, k) as a float64.
func binom(n, k int) float64 {
	if k < 0 || k > n {
		return 0
	}
	r := 1.0
	for i := 1; i <= k; i++ {
		r = r * float64(n-k+i) / float64(i)
	}
	return math.Round(r)
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
