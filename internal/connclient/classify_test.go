package connclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"csbench/internal/clientsys"
	"csbench/internal/h1wire"
)

func TestClassifyInjected(t *testing.T) {
	op := func(op string, err error) error {
		return &net.OpError{Op: op, Net: "tcp", Err: err}
	}
	cases := []struct {
		err  error
		want string
	}{
		{op("dial", os.NewSyscallError("connect", syscall.EADDRNOTAVAIL)), causeAddrNotAvail},
		{op("dial", os.NewSyscallError("bind", syscall.EADDRINUSE)), causeAddrInUse},
		{op("dial", os.NewSyscallError("socket", syscall.EMFILE)), causeMFile},
		{op("dial", os.NewSyscallError("socket", syscall.ENFILE)), causeNFile},
		{op("dial", os.NewSyscallError("connect", syscall.ECONNREFUSED)), causeRefused},
		{op("read", os.NewSyscallError("read", syscall.ECONNRESET)), causeReset},
		{op("write", os.NewSyscallError("write", syscall.EPIPE)), causePipe},
		{op("dial", os.NewSyscallError("connect", syscall.ETIMEDOUT)), causeTimeout},
		{op("dial", os.ErrDeadlineExceeded), causeTimeout},
		{op("dial", context.DeadlineExceeded), causeTimeout},
		{op("dial", context.Canceled), causeCanceled},
		{op("read", net.ErrClosed), causeCanceled},
		{io.EOF, causeEOF},
		{io.ErrUnexpectedEOF, causeEOF},
		{fmt.Errorf("%w: junk", h1wire.ErrBadResponse), causeBadResponse},
		{h1wire.ErrServerClose, causeServerClose},
		{op("dial", os.NewSyscallError("connect", syscall.EHOSTUNREACH)), causeOther},
		{errors.New("something else"), causeOther},
		{nil, ""},
	}
	for _, c := range cases {
		if got := Classify(c.err); got != c.want {
			t.Errorf("Classify(%v) = %q, want %q", c.err, got, c.want)
		}
	}
}

// closedPort returns a 127.0.0.1 port nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

func TestClassifyRefusedReal(t *testing.T) {
	_, err := clientsys.NewDialer(netip.Addr{}, time.Second).Dial("tcp", closedPort(t))
	if got := Classify(err); got != causeRefused {
		t.Fatalf("dial to a closed port: %v classified %q, want %q", err, got, causeRefused)
	}
}

// TestClassifyEMFILEReal lowers RLIMIT_NOFILE in a subprocess and dials
// until socket() fails.
func TestClassifyEMFILEReal(t *testing.T) {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), helperEnv+"=emfile")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("helper: %v\n%s", err, out)
	}
	if !strings.HasPrefix(string(out), "cause=emfile ") {
		t.Fatalf("helper output %q, want cause=emfile", out)
	}
	t.Logf("%s", strings.TrimSpace(string(out)))
}

// TestIdleFailureCauses drives idle end to end against servers that fail
// in each way a real server can, and checks the cause counted.
func TestIdleFailureCauses(t *testing.T) {
	cases := []struct {
		name  string
		serve func(c *net.TCPConn) // after the request head was read
		want  string
	}{
		{"silent", func(c *net.TCPConn) { time.Sleep(2 * time.Second); c.Close() }, causeTimeout},
		{"close", func(c *net.TCPConn) { c.Close() }, causeEOF},
		{"reset", func(c *net.TCPConn) { c.SetLinger(0); c.Close() }, causeReset},
		{"garbage", func(c *net.TCPConn) { c.Write([]byte("SSH-2.0-x\r\n")); time.Sleep(time.Second); c.Close() }, causeBadResponse},
		{"connection-close", func(c *net.TCPConn) {
			c.Write([]byte("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"))
			c.Close()
		}, causeServerClose},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			addr := rawServer(t, c.serve)
			res, stderr, err := runCmd(t, context.Background(), "idle", "-target", addr,
				"-conns", "3", "-rate", "1000", "-hold", "10ms", "-timeout", "300ms")
			if err != nil {
				t.Fatalf("Run: %v\n%s", err, stderr)
			}
			if got := counts(t, res, "errors"); len(got) != 1 || got[c.want] != 3 {
				t.Errorf("errors %v, want {%s: 3}", got, c.want)
			}
			if num(t, res, "connections_established") != 0 || num(t, res, "connections_failed") != 3 {
				t.Errorf("established %v failed %v, want 0 and 3", res["connections_established"], res["connections_failed"])
			}
		})
	}
	t.Run("refused", func(t *testing.T) {
		res, stderr, err := runCmd(t, context.Background(), "idle", "-target", closedPort(t),
			"-conns", "5", "-rate", "1000", "-hold", "10ms")
		if err != nil {
			t.Fatalf("Run: %v\n%s", err, stderr)
		}
		if got := counts(t, res, "errors"); got[causeRefused] != 5 {
			t.Errorf("errors %v, want {econnrefused: 5}", got)
		}
		// Nothing was established: percentiles are not measured, so null.
		for _, k := range []string{"connect_latency_p99_ms", "request_latency_p99_ms"} {
			if v, ok := res[k]; !ok || v != nil {
				t.Errorf("%s = %v, want null", k, v)
			}
		}
	})
}
