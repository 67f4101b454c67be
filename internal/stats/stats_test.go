package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

// bruteP is the two-sided p-value by enumerating every way to split the
// pooled samples into sides of n1 and n2, with U counted pair by pair (ties
// a half): a method apart from MannWhitney's rank-sum recurrence.
func bruteP(a, b []float64) float64 {
	pool := append(append([]float64(nil), a...), b...)
	n1, n := len(a), len(a)+len(b)
	uOf := func(mask int) float64 {
		var u float64
		for i := 0; i < n; i++ {
			if mask&(1<<i) == 0 {
				continue
			}
			for j := 0; j < n; j++ {
				if mask&(1<<j) != 0 {
					continue
				}
				switch {
				case pool[i] > pool[j]:
					u++
				case pool[i] == pool[j]:
					u += 0.5
				}
			}
		}
		return u
	}
	mean := float64(n1*(n-n1)) / 2
	seen := math.Abs(uOf(1<<n1-1) - mean)
	var far, total float64
	for mask := 0; mask < 1<<n; mask++ {
		if popcount(mask) != n1 {
			continue
		}
		total++
		if math.Abs(uOf(mask)-mean) >= seen-1e-9 {
			far++
		}
	}
	return far / total
}

func popcount(x int) int {
	c := 0
	for ; x != 0; x &= x - 1 {
		c++
	}
	return c
}

// The exact p-values match the enumeration for n = 3..8 a side, with and
// without ties.
func TestMannWhitneyMatchesEnumeration(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for n1 := 3; n1 <= 8; n1++ {
		for n2 := 3; n2 <= 8; n2++ {
			for trial := 0; trial < 3; trial++ {
				a, b := make([]float64, n1), make([]float64, n2)
				levels := []float64{4, 1000}[trial%2] // few levels: many ties
				for i := range a {
					a[i] = math.Floor(r.Float64() * levels)
				}
				for i := range b {
					b[i] = math.Floor(r.Float64()*levels + float64(trial))
				}
				_, p := MannWhitney(a, b)
				if want := bruteP(a, b); math.Abs(p-want) > 1e-12 {
					t.Fatalf("n1=%d n2=%d a=%v b=%v: p %v, enumeration %v", n1, n2, a, b, p, want)
				}
			}
		}
	}
}

// Known values: sides apart give 2/C(n1+n2, n1); R's wilcox.test example
// (x of 10, y of 5) gives W = 35 and a one-sided p of 0.1272, so 0.2544
// two-sided.
func TestMannWhitneyKnownValues(t *testing.T) {
	for _, tc := range []struct {
		a, b []float64
		u, p float64
	}{
		{[]float64{1, 2, 3}, []float64{4, 5, 6}, 0, 0.1},
		{[]float64{1, 2, 3, 4}, []float64{5, 6, 7, 8}, 0, 2.0 / 70},
		{[]float64{6, 7, 8, 9, 10}, []float64{1, 2, 3, 4, 5}, 25, 2.0 / 252},
		{[]float64{0.80, 0.83, 1.89, 1.04, 1.45, 1.38, 1.91, 1.64, 0.73, 1.46}, []float64{1.15, 0.88, 0.90, 0.74, 1.21}, 35, 0.2544},
		{[]float64{5, 5, 5}, []float64{5, 5, 5}, 4.5, 1},
	} {
		u, p := MannWhitney(tc.a, tc.b)
		if u != tc.u || math.Abs(p-tc.p) > 5e-4 {
			t.Errorf("%v vs %v: U %v p %v, want U %v p %v", tc.a, tc.b, u, p, tc.u, tc.p)
		}
	}
	if _, p := MannWhitney(nil, []float64{1}); !math.IsNaN(p) {
		t.Errorf("an empty side: p %v, want NaN", p)
	}
}

// Past ExactMax the normal approximation agrees with the exact value: on
// the same 50 + 50 samples, within 5 % of it.
func TestMannWhitneyNormal(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	a, b := make([]float64, 50), make([]float64, 50)
	for i := range a {
		a[i], b[i] = r.NormFloat64(), r.NormFloat64()+0.4
	}
	for i := range a[:10] {
		b[i] = a[i] // some ties
	}
	_, exact := mannWhitney(a, b, 1000)
	_, approx := mannWhitney(a, b, 0)
	if math.Abs(exact-approx) > 0.05*exact || exact > 0.2 {
		t.Errorf("50 a side, shift 0.4 sd: exact p %v, normal %v", exact, approx)
	}
}

// The same distribution on both sides: the share of p < α stays at or
// under α (the exact test is conservative), here 5 runs a side.
func TestFalsePositiveRate(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	const trials = 4000
	hits := 0
	for i := 0; i < trials; i++ {
		a, b := make([]float64, 5), make([]float64, 5)
		for j := range a {
			a[j], b[j] = 40000+4000*r.NormFloat64(), 40000+4000*r.NormFloat64()
		}
		if _, p := MannWhitney(a, b); p < 0.05 {
			hits++
		}
	}
	if rate := float64(hits) / trials; rate > 0.06 {
		t.Errorf("A vs A: %.3f of the p-values under 0.05, want at most about 0.05", rate)
	}
}

func TestMinPAndRunsNeeded(t *testing.T) {
	if p := MinP(3, 3); math.Abs(p-0.1) > 1e-12 {
		t.Errorf("MinP(3,3) = %v, want 0.1", p)
	}
	if n := RunsNeeded(0.05); n != 4 {
		t.Errorf("RunsNeeded(0.05) = %d, want 4", n)
	}
	if n := RunsNeeded(0.01); n != 5 {
		t.Errorf("RunsNeeded(0.01) = %d, want 5", n)
	}
}

func TestMedianCI(t *testing.T) {
	if _, _, ok := MedianCI([]float64{1, 2, 3, 4, 5}, 0.95); ok {
		t.Error("5 samples: a 95 % interval cannot exist")
	}
	if lo, hi, ok := MedianCI([]float64{6, 1, 5, 2, 4, 3}, 0.95); !ok || lo != 1 || hi != 6 {
		t.Errorf("6 samples: [%v, %v] %v, want [1, 6]", lo, hi, ok)
	}
	// n = 10: P(B ≤ 1) = 11/1024 ≤ 0.025 < P(B ≤ 2): x(2) and x(9).
	if lo, hi, ok := MedianCI([]float64{10, 9, 8, 7, 6, 5, 4, 3, 2, 1}, 0.95); !ok || lo != 2 || hi != 9 {
		t.Errorf("10 samples: [%v, %v] %v, want [2, 9]", lo, hi, ok)
	}
}

// The model behind docs/reading-a-report.md's runs-a-side figures: normal
// noise between runs (sd 4 % of the mean), a 5 % change, the share of
// comparisons the test calls significant at α = 0.05 (2,000 draws each;
// measured: 0.30 at 5 runs a side, 0.72 at 10, 0.95 at 20).
func TestPowerModel(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	power := func(sd, shift float64, n int) float64 {
		hits := 0
		for i := 0; i < 2000; i++ {
			a, b := make([]float64, n), make([]float64, n)
			for j := range a {
				a[j], b[j] = 1+sd*r.NormFloat64(), 1+shift+sd*r.NormFloat64()
			}
			if _, p := MannWhitney(a, b); p < 0.05 {
				hits++
			}
		}
		return float64(hits) / 2000
	}
	p5, p10, p20 := power(0.04, 0.05, 5), power(0.04, 0.05, 10), power(0.04, 0.05, 20)
	t.Logf("sd 4 %%, change 5 %%: power %.2f / %.2f / %.2f at 5 / 10 / 20 runs a side", p5, p10, p20)
	if !(p5 < 0.4 && p10 > 0.6 && p10 < 0.8 && p20 > 0.9) {
		t.Errorf("power %.2f / %.2f / %.2f, want about 0.30 / 0.72 / 0.95", p5, p10, p20)
	}
}
