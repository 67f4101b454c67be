// Package localtest gives tests a server on 127.0.0.1: one accept loop for
// every package whose tests need a raw listener (connclient, h1wire, the
// TLS test server of tlscert/certtest).
package localtest

import (
	"net"
	"testing"
)

// Serve listens on 127.0.0.1 (any port), closed at the test's end, and
// runs handle on each connection accepted, in a goroutine of its own.
func Serve(tb testing.TB, handle func(c net.Conn)) net.Addr {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go handle(c)
		}
	}()
	return ln.Addr()
}
