package server

import (
	"context"
	"errors"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestListenReusePort(t *testing.T) {
	if !ReusePortSupported {
		t.Skip("SO_REUSEPORT is not supported here")
	}
	ctx := context.Background()
	first, err := Listen(ctx, "127.0.0.1:0", true)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	addr := first.Addr().String()

	second, err := Listen(ctx, addr, true)
	if err != nil {
		t.Fatalf("second listener with -reuseport on %s: %v", addr, err)
	}
	defer second.Close()
	if got := second.Addr().String(); got != addr {
		t.Fatalf("second listener is on %s, want %s", got, addr)
	}

	// The shared port takes connections; the kernel hands each to one of
	// the two listeners.
	accepted := make(chan net.Addr, 2)
	for _, ln := range []net.Listener{first, second} {
		go func(ln net.Listener) {
			if c, err := ln.Accept(); err == nil {
				accepted <- ln.Addr()
				c.Close()
			}
		}(ln)
	}
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	select {
	case <-accepted:
	case <-time.After(5 * time.Second):
		t.Fatal("no listener accepted the connection")
	}
}

func TestListenPortInUse(t *testing.T) {
	ctx := context.Background()
	holder, err := Listen(ctx, "127.0.0.1:0", false)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	addr := holder.Addr().String()

	for _, tc := range []struct {
		reusePort bool
		wantHint  string
	}{
		{false, "processes can share a port only if every one uses -reuseport"},
		{true, "held by a socket without SO_REUSEPORT"},
	} {
		if tc.reusePort && !ReusePortSupported {
			continue
		}
		ln, err := Listen(ctx, addr, tc.reusePort)
		if err == nil {
			ln.Close()
			t.Errorf("Listen(%s, reusePort=%v) succeeded while the port is held without SO_REUSEPORT", addr, tc.reusePort)
			continue
		}
		if !errors.Is(err, syscall.EADDRINUSE) || !strings.Contains(err.Error(), tc.wantHint) {
			t.Errorf("Listen(%s, reusePort=%v) error = %q, want EADDRINUSE with %q", addr, tc.reusePort, err, tc.wantHint)
		}
	}
}

// TestListenAddressNotOnHost binds (without sending anything) to 192.0.2.1,
// a documentation address (RFC 5737) that no lab host carries.
func TestListenAddressNotOnHost(t *testing.T) {
	ln, err := Listen(context.Background(), "192.0.2.1:0", false)
	if err == nil {
		ln.Close()
		t.Skip("this host allows binding 192.0.2.1 (net.ipv4.ip_nonlocal_bind?)")
	}
	if !errors.Is(err, syscall.EADDRNOTAVAIL) || !strings.Contains(err.Error(), "is 192.0.2.1 an address of this host?") {
		t.Fatalf("error = %q, want EADDRNOTAVAIL with a hint", err)
	}
}
