package connclient

import (
	"testing"
	"time"
)

func TestOffset(t *testing.T) {
	cases := []struct {
		i    int64
		rate int
		want time.Duration
	}{
		{0, 500, 0},
		{1, 500, 2 * time.Millisecond},
		{499, 500, 998 * time.Millisecond},
		{500, 500, time.Second},
		{1, 3, 333333333},
		{2, 3, 666666666},
		{3, 3, time.Second},
		{4, 3, time.Second + 333333333},
		{7, 1, 7 * time.Second},
		// Large schedules stay exact: no float rounding, no overflow.
		{3_600_000_000, 1_000_000, time.Hour},
		{3_600_000_001, 1_000_000, time.Hour + time.Microsecond},
	}
	for _, c := range cases {
		if got := offset(c.i, c.rate); got != c.want {
			t.Errorf("offset(%d, %d) = %v, want %v", c.i, c.rate, got, c.want)
		}
	}
}

func TestOffsetMonotonicEvenlySpaced(t *testing.T) {
	for _, rate := range []int{1, 3, 7, 500, 999, 100_000} {
		prev := time.Duration(-1)
		for i := int64(0); i < 5000; i++ {
			o := offset(i, rate)
			if o <= prev {
				t.Fatalf("rate %d: offset(%d) = %v not after %v", rate, i, o, prev)
			}
			// Within 1 ns of the ideal i/rate.
			ideal := float64(i) * 1e9 / float64(rate)
			if d := float64(o) - ideal; d > 1 || d < -1 {
				t.Fatalf("rate %d: offset(%d) = %v, ideal %.1f ns", rate, i, o, ideal)
			}
			prev = o
		}
	}
}

func TestRequestCount(t *testing.T) {
	cases := []struct {
		d    time.Duration
		rate int
		want int64
	}{
		{2 * time.Second, 500, 1000},
		{time.Second, 3, 3},
		{1500 * time.Millisecond, 3, 5}, // due at 0, .33, .67, 1, 1.33
		{1500 * time.Millisecond, 2, 3}, // 0, .5, 1 (1.5 is not before the end)
		{10 * time.Millisecond, 1, 1},   // request 0 at t=0
		{time.Hour, 1_000_000, 3_600_000_000},
	}
	for _, c := range cases {
		got := requestCount(c.d, c.rate)
		if got != c.want {
			t.Errorf("requestCount(%v, %d) = %d, want %d", c.d, c.rate, got, c.want)
		}
		// Every counted request is due before the end, the next one is not.
		if got > 0 && offset(got-1, c.rate) >= c.d {
			t.Errorf("requestCount(%v, %d): request %d is due at %v", c.d, c.rate, got-1, offset(got-1, c.rate))
		}
		if offset(got, c.rate) < c.d {
			t.Errorf("requestCount(%v, %d): request %d, due at %v, is missing", c.d, c.rate, got, offset(got, c.rate))
		}
	}
}

// TestRoundRobinPartition checks that the per-connection walk used by
// connLoop (c, c+N, c+2N, ...) covers every request exactly once.
func TestRoundRobinPartition(t *testing.T) {
	for _, tc := range []struct{ n, conns int64 }{{1000, 50}, {7, 3}, {3, 10}, {1, 1}} {
		seen := make([]int, tc.n)
		for c := int64(0); c < tc.conns; c++ {
			for i := c; i < tc.n; i += tc.conns {
				seen[i]++
			}
		}
		for i, s := range seen {
			if s != 1 {
				t.Fatalf("n=%d conns=%d: request %d assigned %d times", tc.n, tc.conns, i, s)
			}
		}
	}
}
