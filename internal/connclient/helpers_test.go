package connclient

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"csbench/internal/clientsys"
	"csbench/internal/localtest"
)

// Subprocess helpers: the test binary re-runs itself with
// CONNCLIENT_TEST_HELPER set, for what must not share this process (a
// server whose goroutines would be counted as the client's, a lowered
// RLIMIT_NOFILE).
const helperEnv = "CONNCLIENT_TEST_HELPER"

func TestMain(m *testing.M) {
	switch os.Getenv(helperEnv) {
	case "":
		// The epoll engine's loops hold a P each while they wait (one per
		// CPU by default): leave as many again to the in-process servers
		// the tests run against, which would otherwise get a P only when
		// the runtime preempts a loop (every 10 ms).
		runtime.GOMAXPROCS(2 * max(2, runtime.NumCPU()))
		os.Exit(m.Run())
	case "server":
		helperServer()
	case "emfile":
		helperEMFILE()
	default:
		fmt.Fprintln(os.Stderr, "unknown helper")
		os.Exit(3)
	}
	os.Exit(0)
}

// helperServer serves GET /healthz on 127.0.0.1 (any free port), prints
// its address, and serves until killed.
func helperServer() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	fmt.Println(ln.Addr())
	srv := &http.Server{
		ReadHeaderTimeout: 5 * time.Second,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "3")
			w.Write([]byte("ok\n"))
		}),
	}
	srv.Serve(ln)
}

// helperEMFILE lowers RLIMIT_NOFILE to a few descriptors above what is open,
// dials 127.0.0.1 until a dial fails, and prints the failure's cause.
func helperEMFILE() {
	ln, err := net.Listen("tcp", "127.0.0.1:0") // never accepts: the backlog completes handshakes
	if err != nil {
		fmt.Println("listen:", err)
		return
	}
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		fmt.Println("readdir:", err)
		return
	}
	lim := uint64(len(fds) + 4)
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &syscall.Rlimit{Cur: lim, Max: lim}); err != nil {
		fmt.Println("setrlimit:", err)
		return
	}
	d := clientsys.NewDialer(netip.Addr{}, time.Second)
	var conns []net.Conn
	for i := 0; i < 50; i++ {
		c, err := d.Dial("tcp", ln.Addr().String())
		if err != nil {
			fmt.Printf("cause=%s after=%d err=%v\n", Classify(err), len(conns), err)
			return
		}
		conns = append(conns, c)
	}
	fmt.Println("no failure")
}

// startHelperServer runs helperServer in a subprocess, killed (by its PID)
// at the end of the test, and returns its address.
func startHelperServer(t *testing.T) string {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), helperEnv+"=server")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(out).ReadString('\n')
		line <- strings.TrimSpace(s)
	}()
	select {
	case addr := <-line:
		if addr == "" {
			t.Fatal("helper server printed no address")
		}
		return addr
	case <-time.After(10 * time.Second):
		t.Fatal("helper server did not start within 10s")
	}
	return ""
}

// runCmd runs the command in-process and returns the decoded JSON result
// (nil if stdout is empty), stderr and the returned error.
func runCmd(t *testing.T, ctx context.Context, args ...string) (map[string]any, string, error) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	err := Run(ctx, args, &stdout, &stderr)
	if stdout.Len() == 0 {
		return nil, stderr.String(), err
	}
	var res map[string]any
	dec := json.NewDecoder(&stdout)
	if derr := dec.Decode(&res); derr != nil {
		t.Fatalf("stdout is not one JSON object: %v\n%s", derr, stdout.String())
	}
	if dec.More() {
		t.Fatalf("stdout holds more than one JSON value")
	}
	return res, stderr.String(), err
}

// num returns res[key] as a float64, failing the test if it is not a number.
func num(t *testing.T, res map[string]any, key string) float64 {
	t.Helper()
	v, ok := res[key].(float64)
	if !ok {
		t.Fatalf("%s = %v (%T), want a number", key, res[key], res[key])
	}
	return v
}

// counts returns the object res[key] as map[string]int.
func counts(t *testing.T, res map[string]any, key string) map[string]int {
	t.Helper()
	m, ok := res[key].(map[string]any)
	if !ok {
		t.Fatalf("%s = %v, want an object", key, res[key])
	}
	out := map[string]int{}
	for k, v := range m {
		out[k] = int(v.(float64))
	}
	return out
}

// rawServer accepts on 127.0.0.1 and hands each connection, after reading
// the request head, to serve.
func rawServer(t *testing.T, serve func(c *net.TCPConn)) string {
	t.Helper()
	return localtest.Serve(t, func(c net.Conn) {
		br := bufio.NewReader(c)
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				c.Close()
				return
			}
			if line == "\r\n" {
				break
			}
		}
		serve(c.(*net.TCPConn))
	}).String()
}
