package responder

import (
	"bufio"
	"net"
	"net/netip"
	"testing"
	"time"

	"csbench/internal/h1wire"
)

// TestResponder: requests split across writes, and several in one write,
// each get one whole response, waiting for events or spinning.
func TestResponder(t *testing.T) {
	for _, spin := range []bool{false, true} {
		r, err := New(netip.MustParseAddrPort("127.0.0.1:0"), 100)
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- r.Serve(spin) }()
		c, err := net.Dial("tcp", r.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		req := string(h1wire.BuildRequest(r.Addr().String(), "/"))
		for _, w := range []string{req[:7], req[7:] + req + req[:len(req)-1], req[len(req)-1:]} {
			if _, err := c.Write([]byte(w)); err != nil {
				t.Fatal(err)
			}
			time.Sleep(5 * time.Millisecond)
		}
		br := bufio.NewReader(c)
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		for i := 0; i < 3; i++ {
			status, keep, err := h1wire.ReadResponse(br)
			if err != nil || status != 200 || !keep {
				t.Fatalf("spin %v: response %d: %d %v %v", spin, i, status, keep, err)
			}
		}
		c.Close()
		r.Stop()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if got := r.Served(); got != 3 {
			t.Errorf("spin %v: served %d, want 3", spin, got)
		}
	}
}
