package connclient

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// -start-file: the start time appears in the file later; bad content and a
// file that never comes are errors that say which.
func TestWaitStart(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "start")
	want := time.Now().Add(time.Second).UnixMilli()
	go func() {
		time.Sleep(50 * time.Millisecond)
		os.WriteFile(path+".tmp", []byte("  "+itoa(want)+"\n"), 0o644)
		os.Rename(path+".tmp", path)
	}()
	at, err := waitStart(context.Background(), path, 5*time.Second)
	if err != nil || at.UnixMilli() != want {
		t.Fatalf("got %v %v, want %d", at, err, want)
	}
	bad := filepath.Join(dir, "bad")
	os.WriteFile(bad, []byte("soon\n"), 0o644)
	if _, err := waitStart(context.Background(), bad, time.Second); err == nil || !strings.Contains(err.Error(), "Unix milliseconds") {
		t.Errorf("bad content: %v", err)
	}
	if _, err := waitStart(context.Background(), filepath.Join(dir, "never"), 30*time.Millisecond); err == nil || !strings.Contains(err.Error(), "-start-wait") {
		t.Errorf("no file: %v", err)
	}
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

// -close-late: a process whose schedule is over keeps its connections open
// until the agreed start plus -duration and -timeout, when every other
// process's last request is answered or failed; the server sees them
// close only then. Without -start-file it is a usage error.
func TestLowrateCloseLate(t *testing.T) {
	var closed atomic.Int64
	s := okServer(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok\n") })
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateClosed {
			closed.CompareAndSwap(0, time.Now().UnixNano())
		}
	}
	path := filepath.Join(t.TempDir(), "start")
	start := time.Now().Add(300 * time.Millisecond)
	os.WriteFile(path, []byte(itoa(start.UnixMilli())), 0o644)
	res, stderr, err := runCmd(t, context.Background(), "lowrate", "-target", hostPort(s), "-conns", "2", "-rps", "20",
		"-duration", "200ms", "-timeout", "700ms", "-start-file", path, "-close-late")
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, stderr)
	}
	if res["requests_completed"].(float64) != 4 {
		t.Errorf("completed %v, want 4", res["requests_completed"])
	}
	deadline := time.Now().Add(2 * time.Second)
	for closed.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	// The schedule ended ~200 ms after the start; the close waits for
	// start + 200 ms + 700 ms.
	if at := time.Unix(0, closed.Load()); at.Before(start.Add(850 * time.Millisecond)) {
		t.Errorf("first connection closed %v after the start, want >= 900ms", at.Sub(start))
	}
	if _, _, err := runCmd(t, context.Background(), "lowrate", "-target", hostPort(s), "-conns", "1", "-rps", "1",
		"-close-late"); err == nil || !strings.Contains(err.Error(), "-close-late needs -start-file") {
		t.Errorf("without -start-file: %v", err)
	}
}
