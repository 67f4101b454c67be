package connclient

import (
	"errors"
	"flag"
	"strconv"
	"strings"
	"time"
)

// The ramp's connect-rate controller (-pace aimd, the default): the ramp
// paces itself to what the server accepts instead of offering -rate
// whatever happens. A server whose accept queue is full drops new SYNs, and
// the last ACK of handshakes under way (tcp_abort_on_overflow=0); the
// client's SYN is then retransmitted after the initial RTO of 1 s, so an
// attempt (connect, TLS handshake, first request) that takes 1 s or more
// (-connect-slow) with a retransmission on it has met a full queue, and
// one that times out has met several (the attempts feed the controller:
// connect.go, paceStep). Offering more connects then only adds to the drops. The rule,
// applied every rampTick:
//
//   - cut: when an attempt that began after the last cut timed out, or
//     took -connect-slow or longer (connect.go: with a retransmission on
//     it), or still waits for its connect after 3 × -connect-slow, the
//     rate is halved, down to Min;
//   - hold: when such an attempt began before the last cut (it was offered
//     at the old rate: the cut already answered it), or none completed,
//     the rate stays;
//   - grow: otherwise, when attempts completed within -connect-slow, the
//     rate grows by Grow × the step's length, up to Max.
//
// Only an attempt begun after the last cut can cut again, so the rate is
// halved at most once per -connect-slow while the drops go on (the time an
// attempt offered at the new rate needs to show it is slow), never once
// per late report of an attempt offered before. The ramp starts at Max,
// the -rate asked: a server that keeps up never sees a cut, and the ramp
// is the fixed schedule.

// rampTick is how often the controller looks at the connects.
const rampTick = 100 * time.Millisecond

// rampPace is the controller's state: what it paces at and its bounds.
type rampPace struct {
	Rate float64 // connects/s offered now
	Min  float64 // the lowest rate, connects/s: max(1, Max/100)
	Max  float64 // the highest rate, connects/s: the -rate asked
	Grow float64 // the additive increase, connects/s per second: max(1, Max/20)
	// LastCut is the ramp time of the last cut; negative: no cut yet.
	LastCut time.Duration
	Cuts    int // cuts made
}

// rampObs is what the ramp saw over one control step.
type rampObs struct {
	Now time.Duration // ramp time of this step
	Dt  time.Duration // length of the step
	// Fast is the attempts that completed within -connect-slow.
	Fast int
	// Slow tells that an attempt timed out, or completed after
	// -connect-slow or more, or has been under way that long; SlowBegin is
	// the ramp time at which the latest such attempt began.
	Slow      bool
	SlowBegin time.Duration
}

// newRampPace is the state a ramp of at most rate connects/s starts in.
func newRampPace(rate int) rampPace {
	m := float64(rate)
	return rampPace{Rate: m, Min: max(1, m/100), Max: m, Grow: max(1, m/20), LastCut: -1}
}

// step applies the rule to one control step.
func (s rampPace) step(o rampObs) rampPace {
	switch {
	case o.Slow && o.SlowBegin > s.LastCut:
		s.Rate = max(s.Rate/2, s.Min)
		s.LastCut = o.Now
		s.Cuts++
	case o.Slow:
		// Offered before the last cut: answered already.
	case o.Fast > 0:
		s.Rate = min(s.Rate+s.Grow*o.Dt.Seconds(), s.Max)
	}
	return s
}

// The ramp's pacing (-pace).
const (
	paceAIMD  = "aimd"  // the controller of ramppace.go
	paceFixed = "fixed" // -rate connects/s whatever happens
)

// maxRetries bounds -connect-retries, to catch typos.
const maxRetries = 100

// rampFlags defines the ramp's flags on fs (idle, lowrate).
func rampFlags(fs *flag.FlagSet, cfg *config) {
	fs.StringVar(&cfg.pace, "pace", paceAIMD, "")
	cfg.retries = 3
	fs.Func("connect-retries", "", func(s string) error {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 || strings.TrimLeft(s, "0123456789") != "" {
			return errors.New("not a non-negative integer")
		}
		cfg.retries = n
		return nil
	})
	fs.DurationVar(&cfg.slow, "connect-slow", time.Second, "")
	fs.DurationVar(&cfg.rampMax, "ramp-max", 0, "")
	fs.DurationVar(&cfg.connectTimeout, "connect-timeout", 0, "")
}

// checkRamp checks the ramp's flags and sets the default -ramp-max:
// three times the ramp at -rate, and 30 s more.
func checkRamp(fs *flag.FlagSet, cfg *config) error {
	if cfg.pace != paceAIMD && cfg.pace != paceFixed {
		return usageErrorf("-pace %q: want aimd or fixed", cfg.pace)
	}
	if cfg.retries > maxRetries {
		return usageErrorf("-connect-retries %d is above %d", cfg.retries, maxRetries)
	}
	if cfg.slow <= 0 {
		return usageErrorf("-connect-slow %v must be positive", cfg.slow)
	}
	if !isSet(fs, "connect-timeout") {
		cfg.connectTimeout = cfg.timeout
	} else if cfg.connectTimeout <= 0 {
		return usageErrorf("-connect-timeout %v must be positive", cfg.connectTimeout)
	}
	if !isSet(fs, "ramp-max") {
		cfg.rampMax = time.Duration(3*cfg.conns)*time.Second/time.Duration(cfg.rate) + 30*time.Second
	} else if cfg.rampMax <= 0 {
		return usageErrorf("-ramp-max %v must be positive", cfg.rampMax)
	}
	return nil
}
