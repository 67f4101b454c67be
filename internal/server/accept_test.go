package server

import (
	"net"
	"testing"
	"time"
)

// Accepts from a paced listener are at least its interval apart, however
// many connections wait in the queue; Close ends a wait at once.
func TestPacedListener(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	const every, n = 20 * time.Millisecond, 5
	ln := newPacedListener(inner, every)
	defer ln.Close()
	for i := 0; i < n; i++ { // all of them in the queue before the first accept
		c, err := net.Dial("tcp", inner.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
	}
	// The pacer notes when each accept returned (next is that plus every);
	// the next accept returns no earlier. Times taken here, after Accept
	// returned, would lag by however long this goroutine waited to run.
	for i := 0; i < n; i++ {
		due := ln.next
		before := time.Now()
		c, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		c.Close()
		now := time.Now()
		if i > 0 && now.Before(due) {
			t.Errorf("accept %d came %v before its due time", i, due.Sub(now))
		}
		if i > 0 && ln.next.Sub(due) < every {
			t.Errorf("accept %d returned %v after the one before, want at least %v", i, ln.next.Sub(due), every)
		}
		if ln.next.Before(before.Add(every)) {
			t.Errorf("accept %d: the next is due %v, before every after this one", i, ln.next)
		}
	}
	slow := newPacedListener(inner, time.Second)
	slow.next = time.Now().Add(time.Second)
	go func() { time.Sleep(20 * time.Millisecond); slow.Close() }()
	start := time.Now()
	if _, err := slow.Accept(); err == nil {
		t.Error("Accept after Close returned no error")
	}
	if d := time.Since(start); d > 500*time.Millisecond {
		t.Errorf("Close ended the wait after %v, want at once", d)
	}
}
