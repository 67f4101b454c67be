package connclient

import (
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"csbench/internal/clientsys"
)

func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"-h"}, {"--help"}, {"help"}, {"idle", "-h"}, {"lowrate", "-target", "127.0.0.1:1", "-h"}} {
		var stdout, stderr strings.Builder
		err := Run(context.Background(), args, &stdout, &stderr)
		if err != nil || ExitCode(err) != 0 {
			t.Errorf("%q: err %v", args, err)
		}
		if !strings.HasPrefix(stdout.String(), "usage: connclient idle") || !strings.Contains(stdout.String(), "examples:") {
			t.Errorf("%q: stdout is not the usage:\n%s", args, stdout.String())
		}
		if stderr.Len() != 0 {
			t.Errorf("%q: stderr %q, want empty", args, stderr.String())
		}
	}
}

// TestUsageErrors: every bad command line gets "error: ..." and the usage
// on stderr, exit 2, nothing on stdout, and nothing sent. The target of the
// otherwise valid lines is a listener that must see no connection.
func TestUsageErrors(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	tgt := ln.Addr().String()
	cases := []struct {
		args []string
		msg  string
	}{
		{nil, "missing subcommand"},
		{[]string{"flood"}, `unknown subcommand "flood"`},
		{[]string{"idle", "-conns", "10"}, "-target is required"},
		{[]string{"idle", "-target", "localhost:8080", "-conns", "10"}, "not an IP address"},
		{[]string{"idle", "-target", "example.com:80", "-conns", "10"}, "host names are not accepted"},
		{[]string{"idle", "-target", "127.0.0.1", "-conns", "10"}, "is not IP:PORT"},
		{[]string{"idle", "-target", "127.0.0.1:0", "-conns", "10"}, "is not 1-65535"},
		{[]string{"idle", "-target", "127.0.0.1:70000", "-conns", "10"}, "is not 1-65535"},
		{[]string{"idle", "-target", "127.0.0.1:http", "-conns", "10"}, "is not 1-65535"},
		{[]string{"idle", "-target", "0.0.0.0:80", "-conns", "10"}, "unspecified address"},
		{[]string{"idle", "-target", "::1:80", "-conns", "10"}, "is not IP:PORT"},
		{[]string{"idle", "-target", tgt}, "-conns is required"},
		{[]string{"idle", "-target", tgt, "-conns", "0"}, "not a positive integer"},
		{[]string{"idle", "-target", tgt, "-conns", "-5"}, "not a positive integer"},
		{[]string{"idle", "-target", tgt, "-conns", "1e3"}, "not a positive integer"},
		{[]string{"idle", "-target", tgt, "-conns", "0x10"}, "not a positive integer"},
		{[]string{"idle", "-target", tgt, "-conns", "ten"}, "not a positive integer"},
		{[]string{"idle", "-target", tgt, "-conns", "99999999"}, "is above"},
		{[]string{"idle", "-target", tgt, "-conns", "10", "-rate", "0"}, "not a positive integer"},
		{[]string{"idle", "-target", tgt, "-conns", "10", "-hold", "60"}, "invalid value"},
		{[]string{"idle", "-target", tgt, "-conns", "10", "-hold", "0s"}, "-hold 0s must be positive"},
		{[]string{"idle", "-target", tgt, "-conns", "10", "-timeout", "-1s"}, "-timeout -1s must be positive"},
		{[]string{"idle", "-target", tgt, "-conns", "10", "-source", "eth0"}, "is not an IP address"},
		{[]string{"idle", "-target", tgt, "-conns", "10", "-source", "::1"}, "not the same IP family"},
		{[]string{"idle", "-target", tgt, "-conns", "10", "-source", "0.0.0.0"}, "unspecified address"},
		{[]string{"idle", "-target", tgt, "-conns", "10", "-rps", "5"}, "flag provided but not defined: -rps"},
		{[]string{"idle", "-target", tgt, "-conns", "10", "extra"}, `unexpected argument "extra"`},
		{[]string{"lowrate", "-target", tgt, "-conns", "10"}, "-rps is required"},
		{[]string{"lowrate", "-target", tgt, "-conns", "10", "-rps", "1.5"}, "not a positive integer"},
		{[]string{"lowrate", "-target", tgt, "-conns", "10", "-rps", "5", "-duration", "1x"}, "invalid value"},
		{[]string{"lowrate", "-target", tgt, "-conns", "10", "-rps", "1", "-duration", "-1s"}, "must be positive"},
		{[]string{"lowrate", "-target", tgt, "-conns", "10", "-rps", "5", "-path", "healthz"}, "must start with /"},
		{[]string{"lowrate", "-target", tgt, "-conns", "10", "-rps", "5", "-path", "/a b"}, "visible ASCII"},
		{[]string{"lowrate", "-target", tgt, "-conns", "10", "-rps", "5", "-path", "/a\r\nX: y"}, "visible ASCII"},
		{[]string{"lowrate", "-target", tgt, "-conns", "10", "-rps", "5", "-hold", "1s"}, "flag provided but not defined: -hold"},
	}
	for _, c := range cases {
		var stdout, stderr strings.Builder
		err := Run(context.Background(), c.args, &stdout, &stderr)
		if ExitCode(err) != 2 {
			t.Errorf("%q: exit %d (err %v), want 2", c.args, ExitCode(err), err)
			continue
		}
		es := stderr.String()
		if !strings.HasPrefix(es, "error: ") || !strings.Contains(es, c.msg) || !strings.Contains(es, "\nusage: connclient") {
			t.Errorf("%q: stderr\n%s\nwant error: ...%s... and the usage", c.args, es, c.msg)
		}
		if stdout.Len() != 0 {
			t.Errorf("%q: stdout %q, want empty", c.args, stdout.String())
		}
	}
	assertNoConnection(t, ln)
}

func assertNoConnection(t *testing.T, ln net.Listener) {
	t.Helper()
	ln.(*net.TCPListener).SetDeadline(time.Now().Add(50 * time.Millisecond))
	if c, err := ln.Accept(); err == nil {
		c.Close()
		t.Errorf("a connection reached the target")
	}
}

// TestNofileRefusal: when the hard RLIMIT_NOFILE cannot hold conns+64
// descriptors, connclient refuses before connecting, exit 2, with a message
// naming the limit and the fix.
func TestNofileRefusal(t *testing.T) {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		t.Fatal(err)
	}
	conns := rl.Max - clientsys.FDReserve + 1
	if conns > maxConns {
		t.Skipf("hard RLIMIT_NOFILE %d is too high to exceed with -conns", rl.Max)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var stdout, stderr strings.Builder
	err = Run(context.Background(), []string{"idle", "-target", ln.Addr().String(),
		"-conns", strconv.FormatUint(conns, 10)}, &stdout, &stderr)
	var ue *UsageError
	if ExitCode(err) != 2 || !errors.As(err, &ue) {
		t.Fatalf("err %v, want a usage error (exit 2)", err)
	}
	es := stderr.String()
	for _, want := range []string{"error: ", "RLIMIT_NOFILE is " + strconv.FormatUint(rl.Max, 10), "ulimit -Hn", "LimitNOFILE", "lower -conns"} {
		if !strings.Contains(es, want) {
			t.Errorf("stderr %q lacks %q", es, want)
		}
	}
	if stdout.Len() != 0 {
		t.Errorf("stdout %q, want empty", stdout.String())
	}
	assertNoConnection(t, ln)

	if err := clientsys.CheckNofile(1000, 1064); err != nil {
		t.Errorf("clientsys.CheckNofile(1000, 1064) = %v, want nil", err)
	}
	if err := clientsys.CheckNofile(1000, 1063); err == nil {
		t.Errorf("clientsys.CheckNofile(1000, 1063) = nil, want an error")
	}
}

func TestRaiseNofile(t *testing.T) {
	soft, hard, err := clientsys.RaiseNofile()
	if err != nil {
		t.Fatal(err)
	}
	if soft != hard {
		t.Errorf("soft %d, hard %d: soft not raised", soft, hard)
	}
}

func TestExitCode(t *testing.T) {
	if ExitCode(nil) != 0 || ExitCode(ErrPartial) != 1 || ExitCode(errors.New("x")) != 1 ||
		ExitCode(usageErrorf("bad")) != 2 {
		t.Error("exit codes are not 0 / 1 / 1 / 2")
	}
}
