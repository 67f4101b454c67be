package server

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// buildServer builds the real command (csbench/server) into a temp dir.
func buildServer(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary; skipped with -short")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool on PATH to build the binary")
	}
	bin := filepath.Join(t.TempDir(), "server")
	out, err := exec.Command(goTool, "build", "-o", bin, "csbench/server").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func exitCode(t *testing.T, err error) int {
	t.Helper()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.ExitCode()
	}
	t.Fatal(err)
	return -1
}

// TestBinary drives the built command: exit statuses, where its output goes,
// and a graceful shutdown on SIGTERM and SIGINT.
func TestBinary(t *testing.T) {
	bin := buildServer(t)

	holder, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	_, busyPort, _ := net.SplitHostPort(holder.Addr().String())

	for _, tc := range []struct {
		args                     []string
		code                     int
		wantStdout, wantStderr   string
		emptyStdout, emptyStderr bool
	}{
		{[]string{"-h"}, 0, "Usage: server -addr IP", "", false, true},
		{nil, 2, "", "error: -addr is required", true, false},
		{[]string{"-addr", "198.18.0.1;touch /tmp/x"}, 2, "", `error: -addr "198.18.0.1;touch /tmp/x" is not an IP literal`, true, false},
		{[]string{"-addr", "127.0.0.1", "-sizes", "1g"}, 2, "", `error: -sizes "1g"`, true, false},
		{[]string{"-addr", "127.0.0.1", "-slots", "4"}, 2, "", "error: -slots 4 needs -service-time (or CSB_SERVICE_TIME) too: how long each request holds its slot\n\nUsage:", true, false},
		{[]string{"-addr", "127.0.0.1", "-port", busyPort}, 1, "", "error: listen tcp 127.0.0.1:" + busyPort + ": bind: address already in use (", true, false},
	} {
		cmd := exec.Command(bin, tc.args...)
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		code := exitCode(t, cmd.Run())
		if code != tc.code {
			t.Errorf("server %q: exit %d, want %d; stderr: %s", tc.args, code, tc.code, stderr.String())
		}
		if !strings.Contains(stdout.String(), tc.wantStdout) || (tc.emptyStdout && stdout.Len() != 0) {
			t.Errorf("server %q: stdout %q, want %q", tc.args, stdout.String(), tc.wantStdout)
		}
		if !strings.HasPrefix(stderr.String(), tc.wantStderr) || (tc.emptyStderr && stderr.Len() != 0) {
			t.Errorf("server %q: stderr %q, want it to start %q", tc.args, stderr.String(), tc.wantStderr)
		}
	}

	for i, sig := range []os.Signal{syscall.SIGTERM, os.Interrupt} {
		gomaxprocs := i + 1 // -gomaxprocs reaches the runtime
		cmd := exec.Command(bin, "-addr", "127.0.0.1", "-port", "0", "-gomaxprocs", strconv.Itoa(gomaxprocs))
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		lines := bufio.NewScanner(stdout)
		if !lines.Scan() {
			cmd.Process.Kill()
			t.Fatalf("no listening line; stderr: %s", stderr.String())
		}
		var listening struct {
			Event, Addr string
			GOMAXPROCS  int
		}
		if err := json.Unmarshal(lines.Bytes(), &listening); err != nil || listening.Event != "listening" || listening.GOMAXPROCS != gomaxprocs {
			cmd.Process.Kill()
			t.Fatalf("listening line %q: %v; want gomaxprocs %d", lines.Text(), err, gomaxprocs)
		}

		client := &http.Client{Timeout: 10 * time.Second}
		res, err := client.Get("http://" + listening.Addr + "/healthz")
		if err == nil {
			body, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if string(body) != "ok\n" {
				t.Errorf("/healthz body %q", body)
			}
		} else {
			t.Errorf("GET /healthz: %v", err)
		}
		client.CloseIdleConnections()

		if err := cmd.Process.Signal(sig); err != nil {
			t.Fatal(err)
		}
		var rest []string
		for lines.Scan() {
			rest = append(rest, lines.Text())
		}
		if code := exitCode(t, cmd.Wait()); code != 0 {
			t.Errorf("%v: exit %d, want 0; stderr: %s", sig, code, stderr.String())
		}
		var ev struct {
			Event, Reason string
			Graceful      bool
		}
		if len(rest) != 1 || json.Unmarshal([]byte(rest[0]), &ev) != nil ||
			ev.Event != "shutdown" || !ev.Graceful || ev.Reason != "signal: "+sig.String() {
			t.Errorf("%v: lines after listening = %q, want one graceful shutdown line with reason %q", sig, rest, "signal: "+sig.String())
		}
		if stderr.Len() != 0 {
			t.Errorf("%v: stderr %q, want nothing", sig, stderr.String())
		}
	}
}
