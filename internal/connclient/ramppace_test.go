package connclient

import (
	"testing"
	"time"
)

const ms = time.Millisecond

// The controller's rule, one step at a time.
func TestRampPaceStep(t *testing.T) {
	start := newRampPace(5000) // Min 50, Max 5000, Grow 250/s per s
	if start.Rate != 5000 || start.Min != 50 || start.Max != 5000 || start.Grow != 250 || start.LastCut >= 0 {
		t.Fatalf("newRampPace(5000) = %+v", start)
	}
	at := func(rate float64, lastCut time.Duration) rampPace {
		s := start
		s.Rate, s.LastCut = rate, lastCut
		return s
	}
	cases := []struct {
		name     string
		in       rampPace
		obs      rampObs
		wantRate float64
		wantCut  time.Duration // LastCut after the step
		cuts     int
	}{
		{"a timeout halves", at(5000, -1),
			rampObs{Now: 5000 * ms, Dt: 100 * ms, Fast: 40, Slow: true, SlowBegin: 0}, 2500, 5000 * ms, 1},
		{"a slow connect begun after the cut halves again", at(2500, 1000*ms),
			rampObs{Now: 2100 * ms, Dt: 100 * ms, Slow: true, SlowBegin: 1050 * ms}, 1250, 2100 * ms, 1},
		{"a slow connect begun before the cut holds", at(2500, 1000*ms),
			rampObs{Now: 1200 * ms, Dt: 100 * ms, Fast: 100, Slow: true, SlowBegin: 900 * ms}, 2500, 1000 * ms, 0},
		{"one begun at the cut's instant holds", at(2500, 1000*ms),
			rampObs{Now: 1200 * ms, Dt: 100 * ms, Slow: true, SlowBegin: 1000 * ms}, 2500, 1000 * ms, 0},
		{"fast connects grow by Grow per second", at(1000, 1000*ms),
			rampObs{Now: 3000 * ms, Dt: 100 * ms, Fast: 100}, 1025, 1000 * ms, 0},
		{"growth is in proportion to the step", at(1000, -1),
			rampObs{Now: 3000 * ms, Dt: 400 * ms, Fast: 1}, 1100, -1, 0},
		{"growth stops at Max", at(4990, 1000*ms),
			rampObs{Now: 9000 * ms, Dt: 100 * ms, Fast: 500}, 5000, 1000 * ms, 0},
		{"halving stops at Min", at(60, 1000*ms),
			rampObs{Now: 9000 * ms, Dt: 100 * ms, Slow: true, SlowBegin: 8000 * ms}, 50, 9000 * ms, 1},
		{"no connect completed: hold", at(800, 1000*ms),
			rampObs{Now: 9000 * ms, Dt: 100 * ms}, 800, 1000 * ms, 0},
	}
	for _, c := range cases {
		got := c.in.step(c.obs)
		if got.Rate != c.wantRate || got.LastCut != c.wantCut || got.Cuts != c.in.Cuts+c.cuts {
			t.Errorf("%s: %+v then %+v = rate %v last cut %v cuts %d, want %v %v %d",
				c.name, c.in, c.obs, got.Rate, got.LastCut, got.Cuts, c.wantRate, c.wantCut, c.in.Cuts+c.cuts)
		}
		if got.Min != c.in.Min || got.Max != c.in.Max || got.Grow != c.in.Grow {
			t.Errorf("%s: the bounds changed: %+v", c.name, got)
		}
	}
}

// The bounds of a small -rate: Min and Grow never below 1.
func TestRampPaceSmallRate(t *testing.T) {
	s := newRampPace(10)
	if s.Min != 1 || s.Grow != 1 || s.Max != 10 {
		t.Fatalf("newRampPace(10) = %+v", s)
	}
	for i := 0; i < 10; i++ {
		s = s.step(rampObs{Now: time.Duration(i+1) * time.Second, Dt: time.Second, Slow: true, SlowBegin: time.Duration(i)*time.Second + 1})
	}
	if s.Rate != 1 || s.Cuts != 10 {
		t.Errorf("after 10 fresh signals: %+v, want rate 1 (Min), 10 cuts", s)
	}
}

// A server that accepts 1000 connects/s behind a 1 s SYN retransmission
// delay: a simulated ramp at 5000/s settles about it and never at Min,
// cutting at most once a second.
func TestRampPaceConverges(t *testing.T) {
	const capacity, slowAfter = 1000.0, time.Second
	s := newRampPace(5000)
	type sent struct {
		at   time.Duration
		slow bool
	}
	var pending []sent // connects in flight, oldest first
	var rates []float64
	lastCut := time.Duration(-1)
	for now := rampTick; now <= 30*time.Second; now += rampTick {
		// This step's connects: beyond capacity they are dropped and slow.
		for i := 0; i < int(s.Rate*rampTick.Seconds()); i++ {
			pending = append(pending, sent{at: now, slow: float64(i) >= capacity*rampTick.Seconds()})
		}
		o := rampObs{Now: now, Dt: rampTick}
		kept := pending[:0]
		for _, c := range pending {
			switch {
			case !c.slow:
				o.Fast++
			case now-c.at >= slowAfter:
				o.Slow, o.SlowBegin = true, max(o.SlowBegin, c.at)
			default:
				kept = append(kept, c)
				continue
			}
		}
		pending = kept
		s = s.step(o)
		if s.LastCut != lastCut {
			if lastCut >= 0 && s.LastCut-lastCut < slowAfter {
				t.Fatalf("cut at %v, %v after the one before", s.LastCut, s.LastCut-lastCut)
			}
			lastCut = s.LastCut
		}
		if now > 10*time.Second {
			rates = append(rates, s.Rate)
		}
	}
	lo, hi, sum := rates[0], rates[0], 0.0
	for _, r := range rates {
		lo, hi, sum = min(lo, r), max(hi, r), sum+r
	}
	mean := sum / float64(len(rates))
	if lo <= s.Min || hi > 2.5*capacity || mean < 0.5*capacity || mean > 1.5*capacity {
		t.Errorf("after 10 s: rate %.0f..%.0f, mean %.0f; want about %v, never at Min %v", lo, hi, mean, capacity, s.Min)
	}
	t.Logf("rate after 10 s: %.0f..%.0f/s, mean %.0f/s, %d cuts in 30 s", lo, hi, mean, s.Cuts)
}
