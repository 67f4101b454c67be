package clientsys

import (
	"context"
	"sort"
	"testing"
	"time"
)

// TestSleeper checks both Sleeper implementations: never early, and
// interrupted at once when the context ends. Lateness is logged, not
// asserted, since a noisy machine can delay any wake-up.
func TestSleeper(t *testing.T) {
	for _, fine := range []bool{true, false} {
		name := map[bool]string{true: "timerfd", false: "time.Timer"}[fine]
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			s := NewSleeper(ctx)
			if !fine && s.fine != nil {
				s.Close()
				s = &Sleeper{timer: newStoppedTimerForTest()}
			}
			if fine && s.fine == nil {
				t.Skip("timerfd not available")
			}
			defer s.Close()
			var late []time.Duration
			start := time.Now()
			for i := 1; i <= 40; i++ {
				due := start.Add(time.Duration(i) * 1300 * time.Microsecond)
				if !s.Until(ctx, due) {
					t.Fatal("until returned false without cancellation")
				}
				now := time.Now()
				if now.Before(due) {
					t.Fatalf("woke %v early", due.Sub(now))
				}
				late = append(late, now.Sub(due))
			}
			sort.Slice(late, func(a, b int) bool { return late[a] < late[b] })
			t.Logf("lateness p50 %v max %v", late[len(late)/2], late[len(late)-1])

			// A due time in the past returns at once.
			if !s.Until(ctx, time.Now().Add(-time.Second)) {
				t.Fatal("until(past) = false")
			}
			// Cancellation interrupts a long wait.
			go func() { time.Sleep(50 * time.Millisecond); cancel() }()
			t0 := time.Now()
			if s.Until(ctx, time.Now().Add(time.Minute)) {
				t.Fatal("until returned true after cancellation")
			}
			if d := time.Since(t0); d > 5*time.Second {
				t.Fatalf("cancellation took %v", d)
			}
			if s.Until(ctx, time.Now().Add(time.Minute)) {
				t.Fatal("until after cancellation returned true")
			}
		})
	}
}

func newStoppedTimerForTest() *time.Timer {
	tm := time.NewTimer(time.Hour)
	if !tm.Stop() {
		<-tm.C
	}
	return tm
}
