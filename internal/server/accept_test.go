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
	var last time.Time
	for i := 0; i < n; i++ {
		c, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		c.Close()
		now := time.Now()
		if i > 0 && now.Sub(last) < every {
			t.Errorf("accept %d came %v after the one before, want at least %v", i, now.Sub(last), every)
		}
		last = now
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
