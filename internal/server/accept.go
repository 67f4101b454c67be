package server

import (
	"net"
	"sync"
	"time"
)

// The paced accept: -accept-every D makes the server take at most one
// connection from its listen queue per D. It is a ground truth of the
// listen backlog, as the slots are of capacity: a burst of N connects
// issued in T seconds into a backlog B overflows for certain when N > B +
// T/D + 1, and never when N <= B, whatever the speed of the host. Without
// it, whether a burst overflows depends on how fast this host's accept
// loop is against the client's connects: the same burst overflows on one
// machine and not on the next.

// Bounds of -accept-every: below a millisecond time.Sleep's overshoot is
// as long as the interval itself (see slots.go), above a second a burst's
// wait outlasts any timeout worth setting.
const (
	MinAcceptEvery = time.Millisecond
	MaxAcceptEvery = time.Second
)

// pacedListener is a net.Listener whose Accept returns at most one
// connection per every: it waits until every has passed since the last
// one was returned (time.Sleep only overshoots, so the rate is at most
// 1/every, never more). Close ends a wait at once.
type pacedListener struct {
	net.Listener
	every time.Duration
	next  time.Time // accessed by the one goroutine that calls Accept
	done  chan struct{}
	once  sync.Once
}

func newPacedListener(ln net.Listener, every time.Duration) *pacedListener {
	return &pacedListener{Listener: ln, every: every, done: make(chan struct{})}
}

func (l *pacedListener) Accept() (net.Conn, error) {
	if wait := time.Until(l.next); wait > 0 {
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-l.done:
			t.Stop()
		}
	}
	c, err := l.Listener.Accept()
	l.next = time.Now().Add(l.every)
	return c, err
}

func (l *pacedListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return l.Listener.Close()
}
