package clientsys

import (
	"context"
	"time"
)

// Sleeper waits until points in time for one goroutine. The Go runtime
// parks timers in epoll_wait with a millisecond timeout, so a time.Timer
// fires up to 1 ms late (0.5 ms on average), which would dominate the
// coordinated-omission corrected latency on a LAN. On Linux the Sleeper
// waits on a timerfd through the runtime poller instead, which wakes within
// tens of microseconds; elsewhere, or if the timerfd cannot be made, it
// falls back to a time.Timer. A Sleeper is not safe for concurrent use.
type Sleeper struct {
	fine  *fineTimer // nil: use timer
	timer *time.Timer
	stop  func() bool
}

func NewSleeper(ctx context.Context) *Sleeper {
	s := &Sleeper{}
	if ft, err := newFineTimer(); err == nil {
		s.fine = ft
		// A deadline in the past interrupts a pending wait when ctx ends.
		s.stop = context.AfterFunc(ctx, ft.interrupt)
		return s
	}
	s.useTimer()
	return s
}

func (s *Sleeper) useTimer() {
	s.timer = time.NewTimer(time.Hour)
	if !s.timer.Stop() {
		<-s.timer.C
	}
}

// until waits until t and reports false if ctx ended first. It returns at
// once when t has passed.
func (s *Sleeper) Until(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	if s.fine != nil {
		err := s.fine.sleep(d)
		if ctx.Err() != nil {
			return false
		}
		if err == nil {
			return true
		}
		// The timerfd failed for another reason: go on with a time.Timer.
		s.stop()
		s.fine.close()
		s.fine = nil
		s.useTimer()
		return s.Until(ctx, t)
	}
	s.timer.Reset(d)
	select {
	case <-s.timer.C:
		return true
	case <-ctx.Done():
		if !s.timer.Stop() {
			<-s.timer.C
		}
		return false
	}
}

func (s *Sleeper) Close() {
	if s.fine != nil {
		s.stop()
		s.fine.close()
		return
	}
	s.timer.Stop()
}
